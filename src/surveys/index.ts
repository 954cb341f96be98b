// Wires the survey pieces from the app's stores and services, and runs the periodic round: every minute, running
// surveys that reached `responses_limit` are stopped and recurring surveys move to their current iteration. One
// process claims each round (a job lease); each change is a conditional update (end_date still null, iteration
// still the old one), so it happens and is logged once even if a round is taken over half-way.
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import type { ActionStore } from '../actions/store.js'
import type { ActivityStore } from '../activity/store.js'
import type { DefinitionsCache } from '../flags/cache.js'
import type { FlagService } from '../flags/service.js'
import type { FlagStore } from '../flags/store.js'
import type { InsightStore } from '../insights/store.js'
import { createJobLeases, runClaimed } from '../jobs/leases.js'
import type { OrganizationStore } from '../organizations/store.js'
import type { ProjectStore } from '../projects/store.js'
import type { EventStore } from '../storage/events/types.js'
import type { MetaDatabase } from '../storage/meta/schema.js'
import type { UserStore } from '../users/store.js'
import { createSurveyDuplicator } from './duplicate.js'
import { createSurveyResponses } from './responses.js'
import { createSurveyResults } from './results.js'
import { surveyRoutes } from './routes.js'
import { createSurveyService } from './service.js'
import { createSurveyStore } from './store.js'

export const RESPONSE_LIMIT_CHECK_MS = 60_000
const RESPONSE_LIMIT_LEASE_MS = 55_000
/** At most this many surveys go to the SDK (PostHog sends all; a project has a handful). */
export const MAX_PUBLIC_SURVEYS = 200
/**
 * Every page view of every customer's site asks for the survey list, so it is kept briefly per project: dropped
 * at once on a change in this process, within this time after a change made by another process.
 */
const PUBLIC_TTL_MS = 5_000
const PUBLIC_CACHE_ENTRIES = 10_000

export function createSurveyModule(deps: {
  db: Kysely<MetaDatabase>
  events: Pick<EventStore, 'query'>
  flags: Pick<FlagService, 'create' | 'update'>
  flagRows: Pick<FlagStore, 'get'>
  flagCache: Pick<DefinitionsCache, 'invalidate' | 'projectByToken' | 'definitions'>
  projects: Pick<ProjectStore, 'get'>
  organizations: Pick<OrganizationStore, 'get'>
  users: Pick<UserStore, 'get'>
  actions: Pick<ActionStore, 'get'>
  insights: Pick<InsightStore, 'get'>
  activity: Pick<ActivityStore, 'log' | 'list'>
  siteUrl: string
  clock: () => Date
  onError?: (err: unknown, what: string) => void
}) {
  const store = createSurveyStore(deps.db)
  const publicCache = new Map<number, { expiresAt: number; value: Promise<unknown[]> }>()
  const changed = (teamId: number) => {
    publicCache.delete(teamId)
    // The remote config reports surveys from the flags; the flag writes invalidate it already.
    deps.flagCache.invalidate(teamId)
  }
  const responses = createSurveyResponses(deps.events)
  const organizationOf = async (teamId: number) => (await deps.projects.get(teamId))?.organization_id ?? ''
  const service = createSurveyService({
    surveys: store,
    flags: { flags: deps.flags, flagRows: deps.flagRows },
    users: deps.users,
    activity: deps.activity,
    insightExists: async (teamId, id) => {
      const insight = await deps.insights.get(teamId, id)
      return insight !== undefined && insight.deleted === 0
    },
    actions: async (teamId, ids) => {
      const rows = await Promise.all(ids.map((id) => deps.actions.get(teamId, id)))
      return rows
        .filter((r) => r !== undefined && r.deleted === 0)
        .map((r) => ({ id: r!.id, name: r!.name, steps: JSON.parse(r!.steps) as unknown }))
    },
    canWhiteLabel: async (organizationId) => (await deps.organizations.get(organizationId))?.plan === 'paid',
    organizationOf,
    onChange: changed,
    clock: deps.clock,
  })
  const results = createSurveyResults({ surveys: store, service, responses, clock: deps.clock })
  const duplicate = createSurveyDuplicator({
    surveys: store,
    service,
    projectsIn: async (organizationId, ids) => {
      const found = await Promise.all([...new Set(ids)].map((id) => deps.projects.get(id)))
      return found.filter((p) => p !== undefined && p.organization_id === organizationId).map((p) => p!.id)
    },
    activity: deps.activity,
    onChange: changed,
    clock: deps.clock,
  })

  /** Live flags' keys by id, from the in-memory flag definitions /flags uses. */
  const flagKeys = async (teamId: number) =>
    new Map((await deps.flagCache.definitions(teamId)).flags.filter((f) => !f.deleted).map((f) => [f.id, f.key]))
  function publicSurveys(teamId: number): Promise<unknown[]> {
    const now = Date.now()
    const hit = publicCache.get(teamId)
    if (hit && hit.expiresAt > now) return hit.value
    const value = service.publicSurveys(teamId, MAX_PUBLIC_SURVEYS, flagKeys)
    const entry = { expiresAt: now + PUBLIC_TTL_MS, value }
    publicCache.set(teamId, entry)
    if (publicCache.size > PUBLIC_CACHE_ENTRIES) publicCache.delete(publicCache.keys().next().value as number)
    value.catch(() => {
      if (publicCache.get(teamId) === entry) publicCache.delete(teamId)
    })
    return value
  }

  const leases = createJobLeases(deps.db)
  const enforceResponseLimits = () => service.enforceResponseLimits((teamId, ids) => results.countsFor(teamId, ids))

  return {
    store,
    service,
    results,
    enforceResponseLimits,
    plugin: async (app: FastifyInstance) => {
      await app.register(
        surveyRoutes({
          surveys: service,
          results,
          duplicate,
          activity: deps.activity,
          users: deps.users,
          projectByToken: deps.flagCache.projectByToken,
          publicSurveys,
          siteUrl: deps.siteUrl,
        }),
      )
      let running = false
      const timer = setInterval(() => {
        if (running) return
        running = true
        runClaimed(leases, 'survey-response-limits', RESPONSE_LIMIT_LEASE_MS, async () => {
          await enforceResponseLimits()
          await service.advanceIterations()
        })
          .catch((err) => deps.onError?.(err, 'survey response limits'))
          .finally(() => {
            running = false
          })
      }, RESPONSE_LIMIT_CHECK_MS)
      timer.unref()
      app.addHook('onClose', async () => clearInterval(timer))
    },
  }
}
export type SurveyModule = ReturnType<typeof createSurveyModule>
