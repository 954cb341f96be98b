import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { ActivityStore } from '../activity/store.js'
import { MethodNotAllowed } from '../http/errors.js'
import { activityPage } from '../insights/activity.js'
import { ActivityPage } from '../insights/schemas.js'
import type { UserStore } from '../users/store.js'
import {
  BulkDeleteBody,
  BulkDeleteResult,
  CohortsQuery,
  DeletePropertyBody,
  Person,
  PersonDeleteQuery,
  PersonDeletion,
  type PersonListQuery,
  PersonListQuery as PersonListQuerySchema,
  PersonPage,
  PersonParams,
  PersonsParams,
  PersonUpdateBody,
  PropertyValue,
  SplitBody,
  Success,
  UpdatePropertyBody,
  ValuesQuery,
} from './schemas.js'
import { type PersonActor, type PersonService, type PersonTeam, toCsv } from './service.js'

const PREFIXES = ['/api/projects/:projectId', '/api/environments/:projectId']
const Accepted = Type.Null({ description: 'Accepted, no body: applied by ingestion (or in the background) shortly' })
const CohortList = Type.Object({ results: Type.Array(Type.Record(Type.String(), Type.Unknown())) })

export function personRoutes(deps: {
  persons: PersonService
  cohorts: { get(teamId: number, id: number): Promise<unknown> }
  activity: Pick<ActivityStore, 'list'>
  users: Pick<UserStore, 'get'>
  siteUrl: string
}) {
  return async (app: FastifyInstance) => {
    const teamOf = (req: FastifyRequest): PersonTeam => ({
      id: req.project.id,
      timezone: req.project.timezone,
      organizationId: req.project.organization_id,
      apiToken: req.project.api_token,
    })
    const actorOf = (req: FastifyRequest): PersonActor => ({ userId: req.auth.user.id })
    const idOf = (req: FastifyRequest) => (req.params as { id: string }).id
    const tags = ['persons']
    const read = { scope: 'person:read' }
    const write = { scope: 'person:write' }

    async function list(req: FastifyRequest, csv: boolean) {
      const query = req.query as PersonListQuery
      const page = await deps.persons.list(teamOf(req), query, csv)
      if (csv) return { csv: toCsv(page.results) }
      const link = (offset: number) => {
        const url = new URL(req.url, deps.siteUrl)
        url.searchParams.set('limit', String(page.limit))
        url.searchParams.set('offset', String(offset))
        return url.toString()
      }
      return {
        page: {
          next: page.hasMore ? link(page.offset + page.limit) : null,
          previous: page.offset > 0 ? link(Math.max(0, page.offset - page.limit)) : null,
          results: page.results,
        },
      }
    }

    for (const prefix of PREFIXES) {
      const persons = `${prefix}/persons`
      app.get(
        `${persons}/`,
        {
          schema: {
            summary: 'List persons',
            description:
              'Newest first, 100 a page (`limit` up to 1000, `offset`), filtered by `search`, `properties`, ' +
              '`distinct_id`, `email`, `cohort`. `format=csv` exports up to 10,000 as CSV.',
            tags,
            params: PersonsParams,
            querystring: PersonListQuerySchema,
            response: { 200: PersonPage },
          },
          config: read,
        },
        async (req, reply) => {
          const csv = (req.query as PersonListQuery).format === 'csv'
          const out = await list(req, csv)
          if (out.csv !== undefined) {
            return reply
              .type('text/csv; charset=utf-8')
              .header('content-disposition', 'attachment; filename="persons.csv"')
              .serializer((p: string) => p)
              .send(out.csv)
          }
          return out.page
        },
      )
      app.get(
        `${prefix}/persons.csv`,
        {
          schema: {
            summary: 'Export persons as CSV',
            description: 'The filtered person list (same filters as the list), up to 10,000 rows.',
            tags,
            params: PersonsParams,
            querystring: PersonListQuerySchema,
            response: { 200: Type.String({ description: 'CSV, one person a row' }) },
          },
          config: read,
        },
        async (req, reply) => {
          const out = await list(req, true)
          return reply
            .type('text/csv; charset=utf-8')
            .header('content-disposition', 'attachment; filename="persons.csv"')
            .send(out.csv)
        },
      )
      app.post(
        `${persons}/`,
        {
          schema: { summary: 'Not allowed: persons are created by capture', tags, params: PersonsParams, hide: true },
          config: write,
        },
        async () => {
          throw new MethodNotAllowed('POST')
        },
      )
      app.get(
        `${persons}/activity/`,
        {
          schema: {
            summary: 'Activity on all persons',
            description:
              'The latest 500 changes made to persons through the API (property updates, splits, deletions), ' +
              'newest first, with who made them.',
            tags,
            params: PersonsParams,
            response: { 200: ActivityPage },
          },
          config: { scope: 'activity_log:read' },
        },
        async (req) => activityPage(deps, req.project.id, 'Person'),
      )
      app.get(
        `${persons}/cohorts/`,
        {
          schema: {
            summary: "A person's cohorts",
            description: 'The cohorts the person (`person_id`, its UUID) belongs to now.',
            tags,
            params: PersonsParams,
            querystring: CohortsQuery,
            response: { 200: CohortList },
          },
          config: read,
        },
        async (req) => {
          const ids = await deps.persons.cohorts(teamOf(req), (req.query as { person_id?: string }).person_id)
          const results = []
          for (const id of ids) results.push((await deps.cohorts.get(req.project.id, id)) as Record<string, unknown>)
          return { results }
        },
      )
      app.get(
        `${persons}/values/`,
        {
          schema: {
            summary: "A person property's values",
            description: 'The most common values of person property `key` (containing `value`, if given).',
            tags,
            params: PersonsParams,
            querystring: ValuesQuery,
            response: { 200: Type.Array(PropertyValue) },
          },
          config: read,
        },
        async (req) => {
          const q = req.query as { key?: string; value?: string }
          return deps.persons.values(teamOf(req), q.key, q.value)
        },
      )
      app.post(
        `${persons}/bulk_delete/`,
        {
          schema: {
            summary: 'Delete persons by ids or distinct ids',
            description:
              'Up to 1000 `ids` (person UUIDs) or `distinct_ids` (for a GDPR request; a distinct id without a ' +
              'person still has its events deleted). `delete_events` deletes their events in the background.',
            tags,
            params: PersonsParams,
            body: BulkDeleteBody,
            response: { 202: BulkDeleteResult },
          },
          config: write,
        },
        async (req, reply) =>
          reply
            .code(202)
            .send({ deletions: await deps.persons.bulkDelete(teamOf(req), actorOf(req), req.body as BulkDeleteBody) }),
      )
      app.get(
        `${persons}/deletions/:id/`,
        {
          schema: {
            summary: 'A person deletion',
            description: 'Whether the background part of a deletion (events, event-store rows) has completed.',
            tags,
            params: PersonParams,
            response: { 200: PersonDeletion },
          },
          config: read,
        },
        async (req) => deps.persons.deletion(req.project.id, idOf(req)),
      )
      app.get(
        `${persons}/:id/`,
        {
          schema: {
            summary: 'Retrieve a person',
            description: 'By the person UUID.',
            tags,
            params: PersonParams,
            response: { 200: Person },
          },
          config: read,
        },
        async (req) => deps.persons.get(req.project.id, idOf(req)),
      )
      for (const method of ['patch', 'put'] as const) {
        app[method](
          `${persons}/:id/`,
          {
            schema: {
              summary: 'Set person properties',
              description: 'Sets the given `properties` (others stay) with a `$set` event, as PostHog does.',
              tags,
              params: PersonParams,
              body: PersonUpdateBody,
              response: { 202: Accepted },
            },
            config: write,
          },
          async (req, reply) => {
            await deps.persons.setProperties(
              teamOf(req),
              actorOf(req),
              idOf(req),
              (req.body as { properties?: unknown }).properties,
            )
            return reply.code(202).send()
          },
        )
      }
      app.delete(
        `${persons}/:id/`,
        {
          schema: {
            summary: 'Delete a person',
            description:
              'Removes the person and its distinct ids at once; with `delete_events=true` every event of theirs ' +
              'is deleted in the background (see `persons/deletions/{id}/`).',
            tags,
            params: PersonParams,
            querystring: PersonDeleteQuery,
            response: { 202: Accepted },
          },
          config: write,
        },
        async (req, reply) => {
          const deleteEvents = (req.query as { delete_events?: boolean }).delete_events === true
          const deletionId = await deps.persons.delete(teamOf(req), actorOf(req), idOf(req), deleteEvents)
          if (deletionId) reply.header('x-person-deletion', deletionId)
          return reply.code(202).send()
        },
      )
      app.post(
        `${persons}/:id/update_property/`,
        {
          schema: {
            summary: 'Set one person property',
            description: 'Sets property `key` to `value` (both required) with a `$set` event, as PostHog does.',
            tags,
            params: PersonParams,
            body: UpdatePropertyBody,
            response: { 202: Accepted },
          },
          config: write,
        },
        async (req, reply) => {
          await deps.persons.updateProperty(teamOf(req), actorOf(req), idOf(req), req.body as { key?: string })
          return reply.code(202).send()
        },
      )
      app.post(
        `${persons}/:id/delete_property/`,
        {
          schema: {
            summary: 'Remove one person property',
            description: 'Removes the property named by `$unset`.',
            tags,
            params: PersonParams,
            body: DeletePropertyBody,
            response: { 201: Success },
          },
          config: write,
        },
        async (req, reply) => {
          await deps.persons.deleteProperty(
            teamOf(req),
            actorOf(req),
            idOf(req),
            (req.body as { $unset?: string }).$unset,
          )
          return reply.code(201).send({ success: true })
        },
      )
      app.post(
        `${persons}/:id/split/`,
        {
          schema: {
            summary: 'Split a person',
            description: 'Every distinct id but `main_distinct_id` (default: the first) gets a person of its own.',
            tags,
            params: PersonParams,
            body: SplitBody,
            response: { 201: Success },
          },
          config: write,
        },
        async (req, reply) => {
          const body = (req.body ?? {}) as { main_distinct_id?: string | null }
          await deps.persons.split(teamOf(req), actorOf(req), idOf(req), body.main_distinct_id)
          return reply.code(201).send({ success: true })
        },
      )
      app.get(
        `${persons}/:id/activity/`,
        {
          schema: {
            summary: "A person's activity",
            description:
              'The latest 500 changes made to this person through the API, newest first, with who made them.',
            tags,
            params: PersonParams,
            response: { 200: ActivityPage },
          },
          config: { scope: 'activity_log:read' },
        },
        async (req) => {
          const person = await deps.persons.get(req.project.id, idOf(req))
          return activityPage(deps, req.project.id, 'Person', person.id)
        },
      )
    }
  }
}
