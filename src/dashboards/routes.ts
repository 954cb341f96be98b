import type { FastifyInstance } from 'fastify'
import type { ActivityStore } from '../activity/store.js'
import { MethodNotAllowed } from '../http/errors.js'
import { errorAnswer } from '../http/openapi.js'
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
          schema: {
            summary: 'List dashboards',
            description:
              'The project’s dashboards (not deleted), with `search` and `pinned` filters, paged with `limit`/`offset`.',
            tags,
            params: ProjectParams,
            querystring: DashboardListQuery,
            response: { 200: DashboardPage },
          },
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
          schema: {
            summary: 'Create a dashboard',
            description:
              'A dashboard with a name, description, tags and filters; `use_dashboard` copies the tiles of another dashboard.',
            tags,
            params: ProjectParams,
            body: DashboardInput,
            response: { 201: Dashboard },
          },
          config: { scope: 'dashboard:write' },
        },
        async (req, reply) =>
          reply.code(201).send(await dashboards.create(teamOf(req), actorOf(req), req.body as DashboardInput)),
      )
      app.get(
        `${prefix}/activity/`,
        {
          schema: {
            summary: 'Dashboard activity',
            description: 'The activity log of every dashboard in the project, newest first.',
            tags,
            params: ProjectParams,
            response: { 200: ActivityPage },
          },
          config: { scope: 'dashboard:read' },
        },
        async (req) => activityPage(deps, req.project.id, 'Dashboard'),
      )
      app.get(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Retrieve a dashboard',
            description:
              'One dashboard with its tiles and their insights’ results (per `refresh`), with the dashboard’s filters applied.',
            tags,
            params: DashboardParams,
            querystring: DashboardReadQuery,
            response: { 200: Dashboard },
          },
          config: { scope: 'dashboard:read' },
        },
        async (req) =>
          dashboards.get(teamOf(req), (req.params as { id: number }).id, contextOf(req.query as DashboardReadQuery)),
      )
      app.patch(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Update a dashboard',
            description: 'Changes name, description, filters, pinning or tile layouts; `deleted: true` deletes it.',
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
          schema: {
            summary: 'A dashboard’s activity',
            description: 'The activity log of one dashboard, newest first.',
            tags,
            params: DashboardParams,
            response: { 200: ActivityPage },
          },
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
        {
          schema: {
            summary: 'Delete a dashboard (refused)',
            description: 'Always 405, as in PostHog: delete with PATCH `deleted: true`.',
            response: {
              405: errorAnswer('Hard deletes are not allowed: PATCH `deleted: true` instead, as in PostHog.'),
            },
            tags,
            params: DashboardParams,
          },
          config: { scope: 'dashboard:write' },
        },
        async () => {
          throw new MethodNotAllowed('DELETE')
        },
      )
    }
  }
}
