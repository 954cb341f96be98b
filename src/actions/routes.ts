import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { PaginationQuery, pageParams, paginate } from '../http/pagination.js'
import { ProjectParams } from '../projects/schemas.js'
import { Action, ActionInput, ActionParams } from './schemas.js'
import type { ActionService } from './service.js'

const PREFIXES = ['/api/projects/:projectId/actions', '/api/environments/:projectId/actions']

const ActionPage = Type.Object({
  count: Type.Integer(),
  next: Type.Union([Type.String(), Type.Null()]),
  previous: Type.Union([Type.String(), Type.Null()]),
  results: Type.Array(Action),
})

/** Actions (PostHog's `/actions/`): list, create, read, change; deleted through PATCH `deleted: true`. */
export function actionRoutes(deps: { actions: ActionService; siteUrl: string }) {
  return async (app: FastifyInstance) => {
    const tags = ['actions']
    for (const prefix of PREFIXES) {
      app.get(
        `${prefix}/`,
        {
          schema: {
            summary: 'List actions',
            description: 'The project’s actions (named sets of event matchers), paged with `limit`/`offset`.',
            tags,
            params: ProjectParams,
            querystring: PaginationQuery,
            response: { 200: ActionPage },
          },
          config: { scope: 'action:read' },
        },
        async (req) => {
          const { limit, offset } = pageParams(req.query as { limit?: number; offset?: number }, 100)
          const all = await deps.actions.list(req.project.id)
          return paginate(req.url, deps.siteUrl, all.length, all.slice(offset, offset + limit), limit, offset)
        },
      )
      app.post(
        `${prefix}/`,
        {
          schema: {
            summary: 'Create an action',
            description:
              'An action from steps (event, URL, selector, text, properties), usable in queries, insights and cohorts.',
            tags,
            params: ProjectParams,
            body: ActionInput,
            response: { 201: Action },
          },
          config: { scope: 'action:write' },
        },
        async (req, reply) =>
          reply.code(201).send(await deps.actions.create(req.project.id, req.auth.user.id, req.body as ActionInput)),
      )
      app.get(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Retrieve an action',
            description: 'One action by id.',
            tags,
            params: ActionParams,
            response: { 200: Action },
          },
          config: { scope: 'action:read' },
        },
        async (req) => deps.actions.get(req.project.id, (req.params as { id: number }).id),
      )
      app.patch(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Update an action',
            description: 'Changes name, description or steps; `deleted: true` deletes it.',
            tags,
            params: ActionParams,
            body: ActionInput,
            response: { 200: Action },
          },
          config: { scope: 'action:write' },
        },
        async (req) => deps.actions.update(req.project.id, (req.params as { id: number }).id, req.body as ActionInput),
      )
    }
  }
}
