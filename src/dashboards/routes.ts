import type { FastifyInstance } from 'fastify'
import type { ActivityStore } from '../activity/store.js'
import { MethodNotAllowed } from '../http/errors.js'
import { pageParams, paginate } from '../http/pagination.js'
import { activityPage } from '../insights/activity.js'
import { parseJsonObject, type ResultContext } from '../insights/results.js'
import { actorOf, teamOf } from '../insights/routes.js'
import { ActivityPage } from '../insights/schemas.js'
import type { UserStore } from '../users/store.js'
import {
  Dashboard,
  DashboardInput,
  DashboardListQuery,
  DashboardPage,
  DashboardParams,
  DashboardReadQuery,
  ProjectParams,
} from './schemas.js'
import type { DashboardService } from './service.js'

const PREFIXES = ['/api/projects/:projectId/dashboards', '/api/environments/:projectId/dashboards']

/** `?refresh=` with `filters_override` / `variables_override` (JSON) of a read. */
const contextOf = (query: DashboardReadQuery): ResultContext => ({
  refresh: query.refresh,
  filtersOverride: parseJsonObject(query.filters_override, 'filters_override'),
  variablesOverride: parseJsonObject(query.variables_override, 'variables_override'),
})

/** Dashboards (PostHog's `/dashboards/`): list, create, read with tile results, change; deleted through PATCH. */
export function dashboardRoutes(deps: {
  dashboards: DashboardService
  activity: Pick<ActivityStore, 'list'>
  users: Pick<UserStore, 'get'>
  siteUrl: string
}) {
  const { dashboards } = deps
  return async (app: FastifyInstance) => {
    const tags = ['dashboards']
    for (const prefix of PREFIXES) {
      app.get(
        `${prefix}/`,
        {
          schema: { tags, params: ProjectParams, querystring: DashboardListQuery, response: { 200: DashboardPage } },
          config: { scope: 'dashboard:read' },
        },
        async (req) => {
          const query = req.query as DashboardListQuery
          const { limit, offset } = pageParams(query, 100)
          const all = await dashboards.list(req.project.id, query)
          return paginate(req.url, deps.siteUrl, all.length, all.slice(offset, offset + limit), limit, offset)
        },
      )
      app.post(
        `${prefix}/`,
        {
          schema: { tags, params: ProjectParams, body: DashboardInput, response: { 201: Dashboard } },
          config: { scope: 'dashboard:write' },
        },
        async (req, reply) =>
          reply.code(201).send(await dashboards.create(teamOf(req), actorOf(req), req.body as DashboardInput)),
      )
      app.get(
        `${prefix}/activity/`,
        {
          schema: { tags, params: ProjectParams, response: { 200: ActivityPage } },
          config: { scope: 'dashboard:read' },
        },
        async (req) => activityPage(deps, req.project.id, 'Dashboard'),
      )
      app.get(
        `${prefix}/:id/`,
        {
          schema: { tags, params: DashboardParams, querystring: DashboardReadQuery, response: { 200: Dashboard } },
          config: { scope: 'dashboard:read' },
        },
        async (req) =>
          dashboards.get(teamOf(req), (req.params as { id: number }).id, contextOf(req.query as DashboardReadQuery)),
      )
      app.patch(
        `${prefix}/:id/`,
        {
          schema: {
            tags,
            params: DashboardParams,
            querystring: DashboardReadQuery,
            body: DashboardInput,
            response: { 200: Dashboard },
          },
          config: { scope: 'dashboard:write' },
        },
        async (req) =>
          dashboards.update(
            teamOf(req),
            actorOf(req),
            (req.params as { id: number }).id,
            req.body as DashboardInput,
            contextOf(req.query as DashboardReadQuery),
          ),
      )
      app.get(
        `${prefix}/:id/activity/`,
        {
          schema: { tags, params: DashboardParams, response: { 200: ActivityPage } },
          config: { scope: 'dashboard:read' },
        },
        async (req) => {
          const id = (req.params as { id: number }).id
          await dashboards.exists(req.project.id, id)
          return activityPage(deps, req.project.id, 'Dashboard', String(id))
        },
      )
      // PostHog forbids hard deletes of dashboards: PATCH `deleted: true` instead.
      app.delete(
        `${prefix}/:id/`,
        { schema: { tags, params: DashboardParams }, config: { scope: 'dashboard:write' } },
        async () => {
          throw new MethodNotAllowed('DELETE')
        },
      )
    }
  }
}
