// Wires saved endpoints from the app's stores and services, and starts the materialization schedule (a croner
// tick in every process; each due sync is claimed with a job lease, so one process runs it).
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import type { ActivityStore } from '../activity/store.js'
import { type ActionResolver, type CohortResolver, compileHogQL, MAX_SELECT_RETURNED_ROWS } from '../hogql/index.js'
import { createJobLeases } from '../jobs/leases.js'
import type { ProjectStore } from '../projects/store.js'
import type { PropertyTypes } from '../queries/runner.js'
import type { QueryService } from '../queries/service.js'
import { MATERIALIZED_EVENT_PROPERTIES } from '../storage/events/schema.js'
import type { EventStore } from '../storage/events/types.js'
import type { MetaDatabase } from '../storage/meta/schema.js'
import type { UserStore } from '../users/store.js'
import { materializability } from './materialize.js'
import { endpointRoutes } from './routes.js'
import { createEndpointRunner } from './run.js'
import { createEndpointService } from './service.js'
import { createEndpointStore } from './store.js'
import { createEndpointSync } from './sync.js'

export function createEndpointModule(deps: {
  db: Kysely<MetaDatabase>
  events: Pick<EventStore, 'exec' | 'query' | 'insertJsonEachRow'>
  /** Makes captured events visible to the event store before a sync reads them. */
  flushPending: () => Promise<unknown>
  queries: QueryService
  projects: Pick<ProjectStore, 'get'>
  users: Pick<UserStore, 'get'>
  activity: Pick<ActivityStore, 'log'>
  propertyTypes: (teamId: number) => Promise<PropertyTypes | undefined>
  cohorts: (teamId: number) => Promise<CohortResolver>
  actions: (teamId: number) => Promise<ActionResolver>
  siteUrl: string
  clock: () => Date
  onError?: (err: unknown, what: string) => void
}) {
  const store = createEndpointStore(deps.db)
  const sync = createEndpointSync({
    store,
    events: deps.events,
    leases: createJobLeases(deps.db),
    async compile(team, hogql) {
      await deps.flushPending()
      const [propertyTypes, cohorts, actions] = await Promise.all([
        deps.propertyTypes(team.id),
        /cohort/i.test(hogql) ? deps.cohorts(team.id) : undefined,
        /matchesaction/i.test(hogql) ? deps.actions(team.id) : undefined,
      ])
      return compileHogQL(hogql, {
        teamId: team.id,
        timezone: team.timezone,
        propertyTypes,
        cohorts,
        actions,
        limit: MAX_SELECT_RETURNED_ROWS,
        materializedEventProperties: MATERIALIZED_EVENT_PROPERTIES,
      })
    },
    async runInsight(team, node, name) {
      const answer = await deps.queries.query(team, { query: node, refresh: 'force_blocking', name })
      return answer.body
    },
    async teamOf(teamId) {
      const project = await deps.projects.get(teamId)
      return project ? { id: project.id, timezone: project.timezone || 'UTC' } : undefined
    },
    async versionOf(versionId) {
      const version = await deps.db
        .withTables<{ endpoint_versions: { id: string; endpoint_id: string; query: string } }>()
        .withTables<{ endpoints: { id: string; name: string } }>()
        .selectFrom('endpoint_versions')
        .innerJoin('endpoints', 'endpoints.id', 'endpoint_versions.endpoint_id')
        .select(['endpoint_versions.query', 'endpoints.name'])
        .where('endpoint_versions.id', '=', versionId)
        .executeTakeFirst()
      return version
    },
    planOf: materializability,
    clock: deps.clock,
    onError: deps.onError,
  })
  const service = createEndpointService({
    endpoints: store,
    sync,
    users: deps.users,
    activity: deps.activity,
    upgrade: deps.queries.upgrade,
    siteUrl: deps.siteUrl,
    clock: deps.clock,
  })
  const runner = createEndpointRunner({ endpoints: store, service, queries: deps.queries, sync, clock: deps.clock })

  return {
    store,
    service,
    runner,
    sync,
    plugin: async (app: FastifyInstance) => {
      await app.register(endpointRoutes({ endpoints: service, runner, siteUrl: deps.siteUrl }))
      sync.start()
      app.addHook('onClose', () => sync.close())
    },
  }
}

export type EndpointModule = ReturnType<typeof createEndpointModule>
