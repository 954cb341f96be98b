import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import {
  Group,
  GroupFindQuery,
  GroupListQuery,
  GroupPage,
  GroupsParams,
  GroupType,
  GroupTypeUpdate,
  GroupValuesQuery,
  NameCount,
} from './schemas.js'
import type { GroupService } from './service.js'

const PREFIXES = ['/api/projects/:projectId', '/api/environments/:projectId']

export function groupRoutes(deps: { groups: GroupService; siteUrl: string }) {
  return async (app: FastifyInstance) => {
    const tags = ['groups']
    const read = { scope: 'group:read' }
    const write = { scope: 'group:write' }
    const link = (req: FastifyRequest, cursor: string | null) => {
      if (cursor === null) return null
      const url = new URL(req.url, deps.siteUrl)
      url.searchParams.set('cursor', cursor)
      return url.toString()
    }
    for (const prefix of PREFIXES) {
      app.get(
        `${prefix}/groups/`,
        {
          schema: {
            summary: 'List groups of a type',
            description: 'Groups of `group_type_index`, newest first, 100 a page; `search` matches key or properties.',
            tags,
            params: GroupsParams,
            querystring: GroupListQuery,
            response: { 200: GroupPage },
          },
          config: read,
        },
        async (req) => {
          const page = await deps.groups.list(req.project.id, req.query as GroupListQuery)
          return { next: link(req, page.next), previous: link(req, page.previous), results: page.results }
        },
      )
      app.get(
        `${prefix}/groups/find/`,
        {
          schema: {
            summary: 'Find a group',
            description: 'The group of `group_type_index` with key `group_key`.',
            tags,
            params: GroupsParams,
            querystring: GroupFindQuery,
            response: { 200: Group },
          },
          config: read,
        },
        async (req) => {
          const q = req.query as { group_type_index?: number; group_key?: string }
          return deps.groups.find(req.project.id, q.group_type_index, q.group_key)
        },
      )
      app.get(
        `${prefix}/groups/property_definitions/`,
        {
          schema: {
            summary: 'Group property names',
            description: 'Per group type index, the property names of its groups and how many groups have each.',
            tags,
            params: GroupsParams,
            response: { 200: Type.Record(Type.String(), Type.Array(NameCount)) },
          },
          config: read,
        },
        async (req) => deps.groups.propertyDefinitions(req.project.id, req.project.timezone),
      )
      app.get(
        `${prefix}/groups/property_values/`,
        {
          schema: {
            summary: 'Group property values',
            description: 'The most common values of property `key` among groups of `group_type_index`.',
            tags,
            params: GroupsParams,
            querystring: GroupValuesQuery,
            response: { 200: Type.Array(NameCount) },
          },
          config: read,
        },
        async (req) => {
          const q = req.query as { group_type_index?: number; key?: string }
          return deps.groups.propertyValues(req.project.id, req.project.timezone, q.group_type_index, q.key)
        },
      )
      app.get(
        `${prefix}/groups_types/`,
        {
          schema: {
            summary: 'List group types',
            description: 'The project group types by index, with their display names.',
            tags,
            params: GroupsParams,
            response: { 200: Type.Array(GroupType) },
          },
          config: read,
        },
        async (req) => deps.groups.types(req.project.id),
      )
      app.patch(
        `${prefix}/groups_types/update_metadata/`,
        {
          schema: {
            summary: 'Name group types',
            description: 'Sets `name_singular` / `name_plural` of the listed group types; answers every type.',
            tags,
            params: GroupsParams,
            body: GroupTypeUpdate,
            response: { 200: Type.Array(GroupType) },
          },
          config: write,
        },
        async (req) => deps.groups.updateTypes(req.project.id, req.body as GroupTypeUpdate),
      )
    }
  }
}
