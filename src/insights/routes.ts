import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { ActivityStore } from '../activity/store.js'
import { MethodNotAllowed } from '../http/errors.js'
import { errorAnswer } from '../http/openapi.js'
import { pageParams, paginate } from '../http/pagination.js'
import type { UserStore } from '../users/store.js'
import { type Actor, activityPage } from './activity.js'
import type { ResultContext } from './results.js'
import {
  ActivityPage,
  Insight,
  InsightInput,
  InsightListQuery,
  InsightPage,
  InsightParams,
  InsightReadQuery,
  ProjectParams,
} from './schemas.js'
import type { InsightService } from './service.js'

const PREFIXES = ['/api/projects/:projectId/insights', '/api/environments/:projectId/insights']

export const actorOf = (req: FastifyRequest): Actor => ({
  userId: req.auth.user.id,
  organizationId: req.project.organization_id,
})

export const teamOf = (req: FastifyRequest) => ({ id: req.project.id, timezone: req.project.timezone || 'UTC' })

/** `?refresh=` with `filters_override` / `variables_override` (JSON) of a read. */
function contextOf(insights: InsightService, query: InsightReadQuery): ResultContext {
  return { refresh: query.refresh, ...insights.parseOverrides(query) }
}

/** Saved insights (PostHog's `/insights/`): list, create, read with results, change; deleted through PATCH. */
export function insightRoutes(deps: {
  insights: InsightService
  activity: Pick<ActivityStore, 'list'>
  users: Pick<UserStore, 'get'>
  siteUrl: string
}) {
  const { insights } = deps
  return async (app: FastifyInstance) => {
    const tags = ['insights']
    for (const prefix of PREFIXES) {
      app.get(
        `${prefix}/`,
        {
          schema: {
            summary: 'List insights',
            description:
              'Saved insights, filtered by `saved`, `favorited`, `user`, `search`, `short_id` and more, as in PostHog; `refresh` controls whether results are computed.',
            tags,
            params: ProjectParams,
            querystring: InsightListQuery,
            response: { 200: InsightPage },
          },
          config: { scope: 'insight:read' },
        },
        async (req) => {
          const query = req.query as InsightListQuery
          const { limit, offset } = pageParams(query, 100)
          const team = teamOf(req)
          const context = contextOf(insights, query)
          const rows = await insights.list(team, req.auth.user.id, query)
          const slice = rows.slice(offset, offset + limit)
          const results =
            query.basic === 'true' ? await insights.basic(team.id, slice) : await insights.present(team, slice, context)
          return paginate(req.url, deps.siteUrl, rows.length, results, limit, offset)
        },
      )
      app.post(
        `${prefix}/`,
        {
          schema: {
            summary: 'Create an insight',
            description:
              'Saves a query (any query node kind) with a name, description, tags and dashboards; legacy `filters` are upgraded to a query.',
            tags,
            params: ProjectParams,
            body: InsightInput,
            response: { 201: Insight },
          },
          config: { scope: 'insight:write' },
        },
        async (req, reply) =>
          reply.code(201).send(await insights.create(teamOf(req), actorOf(req), req.body as InsightInput)),
      )
      app.get(
        `${prefix}/activity/`,
        {
          schema: {
            summary: 'Insight activity',
            description: 'The activity log of every insight in the project, newest first.',
            tags,
            params: ProjectParams,
            response: { 200: ActivityPage },
          },
          config: { scope: 'insight:read' },
        },
        async (req) => activityPage(deps, req.project.id, 'Insight'),
      )
      app.get(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Retrieve an insight',
            description:
              'One insight with its results: cached ones, or computed per `refresh` (`blocking`, `force_blocking`, `async`…); `from_dashboard` applies that dashboard’s filters.',
            tags,
            params: InsightParams,
            querystring: InsightReadQuery,
            response: { 200: Insight },
          },
          config: { scope: 'insight:read' },
        },
        async (req) => {
          const query = req.query as InsightReadQuery
          return insights.get(teamOf(req), (req.params as { id: number }).id, {
            ...contextOf(insights, query),
            fromDashboard: query.from_dashboard,
          })
        },
      )
      app.patch(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Update an insight',
            description: 'Changes the query, name, description, tags or dashboards; `deleted: true` deletes it.',
            tags,
            params: InsightParams,
            querystring: InsightReadQuery,
            body: InsightInput,
            response: { 200: Insight },
          },
          config: { scope: 'insight:write' },
        },
        async (req) =>
          insights.update(
            teamOf(req),
            actorOf(req),
            (req.params as { id: number }).id,
            req.body as InsightInput,
            contextOf(insights, req.query as InsightReadQuery),
          ),
      )
      app.get(
        `${prefix}/:id/activity/`,
        {
          schema: {
            summary: 'An insight’s activity',
            description: 'The activity log of one insight, newest first.',
            tags,
            params: InsightParams,
            response: { 200: ActivityPage },
          },
          config: { scope: 'insight:read' },
        },
        async (req) => {
          const id = (req.params as { id: number }).id
          await insights.get(teamOf(req), id, {})
          return activityPage(deps, req.project.id, 'Insight', String(id))
        },
      )
      // PostHog forbids hard deletes of insights: PATCH `deleted: true` instead.
      app.delete(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Delete an insight (refused)',
            description: 'Always 405, as in PostHog: delete with PATCH `deleted: true`.',
            response: {
              405: errorAnswer('Hard deletes are not allowed: PATCH `deleted: true` instead, as in PostHog.'),
            },
            tags,
            params: InsightParams,
          },
          config: { scope: 'insight:write' },
        },
        async () => {
          throw new MethodNotAllowed('DELETE')
        },
      )
    }
  }
}
