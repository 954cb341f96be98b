// Wires the experiment pieces from the app's stores and services, polls for timeseries and metrics recalculations
// that no process is running (a request made on another process, or one whose owner died) and starts the nightly
// timeseries schedule: each is claimed under a job lease, so exactly one process computes it.
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import type { ActivityStore } from '../activity/store.js'
import type { CohortService } from '../cohorts/service.js'
import type { FlagService } from '../flags/service.js'
import type { FlagStore } from '../flags/store.js'
import type { JobLeases } from '../jobs/leases.js'
import type { LlmPromptService } from '../llm-prompts/service.js'
import type { ProjectStore } from '../projects/store.js'
import { literal } from '../queries/filters.js'
import type { HogQLExecutor } from '../queries/runner.js'
import type { UserStore } from '../users/store.js'
import { createExperimentCopies } from './copy.js'
import { createPromptExperiments } from './create-from-prompt.js'
import { createMetricsRecalculation } from './metrics-recalculation.js'
import { createNightlyTimeseries } from './nightly.js'
import { createExperimentResources } from './resources.js'
import { experimentRoutes } from './routes.js'
import { createExperimentService } from './service.js'
import { createExperimentStore } from './store.js'
import { createTimeseries, type ExperimentJobDeps } from './timeseries.js'

export const RECALCULATION_POLL_MS = 10_000
/** Property sets sampled per event by `requires_flag_implementation` (PostHog's default `limit`). */
const SAMPLE_LIMIT = 20
/** At most this many exposed distinct ids go into an exposure cohort (the cohort API's limit). */
const EXPOSURE_COHORT_LIMIT = 100_000

export function createExperimentModule(deps: {
  db: Kysely<any>
  flags: Pick<FlagService, 'create' | 'update' | 'toApi'>
  flagRows: Pick<FlagStore, 'get' | 'getLiveByKey' | 'allForTeam'>
  cohorts: Pick<CohortService, 'create' | 'get'>
  users: Pick<UserStore, 'get'>
  activity: Pick<ActivityStore, 'log'>
  projects: Pick<ProjectStore, 'get'>
  /** Stored LLM prompts, whose versions `create_from_prompt/` compares. */
  prompts: Pick<LlmPromptService, 'missingVersions'>
  execute: HogQLExecutor
  settings: (teamId: number) => Promise<{ testAccountFilters: unknown[] }>
  leases: JobLeases
  siteUrl: string
  clock: () => Date
  onError?: (err: unknown, what: string) => void
}) {
  const store = createExperimentStore(deps.db)
  const timezone = async (teamId: number) => (await deps.projects.get(teamId))?.timezone ?? 'UTC'
  const service = createExperimentService({
    store,
    flags: deps.flags,
    flagRows: deps.flagRows,
    cohorts: deps.cohorts,
    users: deps.users,
    activity: deps.activity,
    projectTimezone: timezone,
    exposedDistinctIds: (teamId, flagKey, from, to) => exposedDistinctIds(teamId, flagKey, from, to),
    clock: deps.clock,
  })
  const copies = createExperimentCopies({
    experiments: service,
    store,
    flagRows: deps.flagRows,
    projects: deps.projects,
  })
  const promptExperiments = createPromptExperiments({
    experiments: service,
    prompts: deps.prompts,
    flagRows: deps.flagRows,
  })
  const resources = createExperimentResources({
    store,
    flags: deps.flags,
    flagRows: deps.flagRows,
    users: deps.users,
    clock: deps.clock,
  })
  /** What the three background jobs are built from. */
  const jobDeps: ExperimentJobDeps = {
    subject: service.subject,
    timezone,
    testAccountFilters: async (teamId) => (await deps.settings(teamId)).testAccountFilters,
    execute: deps.execute,
    leases: deps.leases,
    clock: deps.clock,
    onError: deps.onError,
  }
  const load = (teamId: number, id: number) => service.load(teamId, id)
  const timeseries = createTimeseries({ ...jobDeps, store, load })
  const metricsRecalculation = createMetricsRecalculation({ ...jobDeps, store, load })
  const nightly = createNightlyTimeseries({ ...jobDeps, store })

  const contextOf = async (teamId: number, what: string) => ({
    team: { id: teamId, timezone: await timezone(teamId) },
    engineId: `experiment-${what}-${randomUUID()}`,
    signal: new AbortController().signal,
    stats: { rowsRead: 0, bytesRead: 0, resultRows: 0 },
  })
  const utc = (iso: string) =>
    `toDateTime64(${literal(new Date(iso).toISOString().replace('T', ' ').replace('Z', ''))}, 6, 'UTC')`

  async function exposedDistinctIds(teamId: number, flagKey: string, from: string, to: string | null) {
    const result = await deps.execute(
      `SELECT DISTINCT distinct_id FROM events WHERE event = '$feature_flag_called' AND properties.$feature_flag = ${literal(flagKey)} ` +
        `AND timestamp >= ${utc(from)}${to ? ` AND timestamp < ${utc(to)}` : ''} LIMIT ${EXPOSURE_COHORT_LIMIT}`,
      await contextOf(teamId, 'exposure-cohort'),
    )
    return result.rows.map((r) => String(r[0]))
  }

  async function requiresFlagImplementation(teamId: number, query: Record<string, string>): Promise<boolean> {
    let events: unknown[] = []
    try {
      const parsed = JSON.parse(query.events ?? '[]')
      if (Array.isArray(parsed)) events = parsed
    } catch {}
    const limit =
      Number.isInteger(Number(query.limit)) && Number(query.limit) > 0
        ? Math.min(Number(query.limit), 100)
        : SAMPLE_LIMIT
    const names = events
      .map((e) => (e && typeof e === 'object' ? (e as { id?: unknown }).id : undefined))
      .filter((id): id is string => typeof id === 'string')
    if (names.length === 0) return true
    const ctx = await contextOf(teamId, 'flag-check')
    for (const name of names) {
      const sample = await deps.execute(
        `SELECT properties FROM events WHERE event = ${literal(name)} AND timestamp > now() - toIntervalDay(7) LIMIT ${limit}`,
        ctx,
      )
      for (const [properties] of sample.rows) {
        const object = typeof properties === 'string' ? (JSON.parse(properties) as object) : (properties as object)
        if (object && Object.keys(object).some((k) => k.includes('$feature/'))) return false
      }
    }
    return true
  }

  return {
    store,
    service,
    resources,
    timeseries,
    metricsRecalculation,
    nightly,
    subject: service.subject,
    plugin: async (app: FastifyInstance) => {
      await app.register(
        experimentRoutes({
          experiments: service,
          copies,
          promptExperiments,
          metricsRecalculation,
          resources,
          timeseries,
          requiresFlagImplementation,
          siteUrl: deps.siteUrl,
        }),
      )
      const timer = setInterval(() => {
        timeseries.process().catch((err) => deps.onError?.(err, 'experiment timeseries recalculation'))
        metricsRecalculation.process().catch((err) => deps.onError?.(err, 'experiment metrics recalculation'))
      }, RECALCULATION_POLL_MS)
      timer.unref()
      nightly.start()
      app.addHook('onClose', async () => {
        clearInterval(timer)
        await nightly.close()
        await timeseries.idle()
        await metricsRecalculation.idle()
      })
    },
  }
}
export type ExperimentModule = ReturnType<typeof createExperimentModule>
