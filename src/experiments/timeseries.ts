// Daily cumulative results of one metric over an experiment's life (products.md §1.8). A recalculation request
// is a row in the metadata store (at most one pending or running per experiment and fingerprint, by a partial
// unique index); any process may pick it up, under a job lease, and writes one result row per day: the metric
// computed from the start of the experiment to the end of that day (project timezone), the same object an
// ExperimentQuery returns.
import { randomUUID } from 'node:crypto'
import { ValidationError } from '../http/errors.js'
import { type JobLeases, runClaimed } from '../jobs/leases.js'
import { runExperimentMetric } from '../queries/nodes/experiment.js'
import type { HogQLExecutor } from '../queries/runner.js'
import { localMidnight } from './local-time.js'
import type { ExperimentRow, ExperimentStore, RecalculationRow } from './store.js'
import type { ExperimentSubject } from './subject.js'

type Json = Record<string, any>
const DAY = 86_400_000
const LEASE_MS = 60_000
/** At most this many days are computed per recalculation (PostHog's experiments run for weeks). */
const MAX_DAYS = 366

/** What the background experiment jobs (timeseries, the nightly run, recalculations) are built from. */
export interface ExperimentJobDeps {
  subject: (teamId: number, id: number) => Promise<ExperimentSubject | undefined>
  timezone: (teamId: number) => Promise<string>
  testAccountFilters: (teamId: number) => Promise<unknown[]>
  execute: HogQLExecutor
  leases: JobLeases
  clock: () => Date
  onError?: (err: unknown, what: string) => void
}

/**
 * One metric of an experiment computed in the background (no request) with its data window ending at `to`: the
 * result as stored (without the query texts).
 */
export async function computeMetric(
  execute: HogQLExecutor,
  job: { teamId: number; timezone: string; engineId: string; signal: AbortSignal },
  subject: ExperimentSubject,
  metric: unknown,
  to: string,
  filters: unknown[],
  now: Date,
) {
  const ctx = {
    team: { id: job.teamId, timezone: job.timezone },
    engineId: job.engineId,
    signal: job.signal,
    stats: { rowsRead: 0, bytesRead: 0, resultRows: 0 },
  }
  const {
    hogql: _h,
    clickhouse_sql: _c,
    ...stored
  } = await runExperimentMetric({ ...subject, endDate: to }, metric, ctx, execute, filters, now)
  return stored
}

/** `YYYY-MM-DD` of an instant in a timezone. */
export function localDay(instant: Date, timezone: string): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: timezone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(instant)
}

/** The local days from the start to the end (or now), each with its exclusive end instant. */
export function experimentDays(
  start: string,
  end: string | null,
  now: Date,
  timezone: string,
): { day: string; to: Date }[] {
  const last = end ? new Date(end) : now
  const days: { day: string; to: Date }[] = []
  let midnight = localMidnight(new Date(start), timezone)
  while (midnight.getTime() <= last.getTime() && days.length < MAX_DAYS) {
    // the next local midnight: a day later, corrected across DST changes
    const next = localMidnight(new Date(midnight.getTime() + DAY + 3 * 3_600_000), timezone)
    days.push({ day: localDay(midnight, timezone), to: next.getTime() > last.getTime() ? last : next })
    midnight = next
  }
  return days
}

export function createTimeseries(
  deps: ExperimentJobDeps & {
    store: ExperimentStore
    load: (teamId: number, id: number) => Promise<ExperimentRow>
  },
) {
  const { store } = deps

  async function results(teamId: number, id: number, query: { metric_uuid?: string; fingerprint?: string }) {
    const row = await deps.load(teamId, id)
    if (!query.metric_uuid) throw new ValidationError('metric_uuid query parameter is required', 'metric_uuid')
    if (!query.fingerprint) throw new ValidationError('fingerprint query parameter is required', 'fingerprint')
    if (row.start_date === null) throw new ValidationError('Experiment has not been started yet')
    const timezone = await deps.timezone(teamId)
    const timeseries: Record<string, unknown> = {}
    for (const { day } of experimentDays(row.start_date, row.end_date, deps.clock(), timezone)) timeseries[day] = null
    const rows = await store.results.forMetric(row.id, query.metric_uuid, query.fingerprint)
    const errors: Record<string, string> = {}
    let completed = 0
    let failed = 0
    for (const r of rows) {
      const day = localDay(new Date(new Date(r.query_to).getTime() - 1), timezone)
      if (r.status === 'completed') {
        timeseries[day] = r.result === null ? null : JSON.parse(r.result)
        completed++
      } else if (r.status === 'failed') {
        errors[day] = r.error_message ?? 'failed'
        failed++
      }
    }
    const dayCount = Object.keys(timeseries).length
    const status =
      rows.length === 0
        ? 'pending'
        : completed === 0 && failed > 0
          ? 'failed'
          : completed >= dayCount && Object.values(timeseries).every((v) => v !== null)
            ? 'completed'
            : 'partial'
    const completedAt = rows
      .map((r) => r.completed_at)
      .filter((d): d is string => d !== null)
      .sort()
      .at(-1)
    const active = await store.recalculations.active(row.id, query.fingerprint)
    return {
      experiment_id: row.id,
      metric_uuid: query.metric_uuid,
      status,
      timeseries,
      errors: Object.keys(errors).length > 0 ? errors : null,
      computed_at: completedAt ?? null,
      created_at: rows[0]?.created_at ?? row.created_at,
      updated_at: rows.at(-1)?.updated_at ?? row.updated_at,
      recalculation_status: active?.status ?? null,
      recalculation_created_at: active?.created_at ?? null,
    }
  }

  const shape = (r: RecalculationRow) => ({
    id: r.id,
    experiment_id: r.experiment_id,
    metric_uuid: (JSON.parse(r.metric) as Json).uuid ?? null,
    fingerprint: r.fingerprint,
    status: r.status,
    created_at: r.created_at,
  })

  async function recalculate(
    teamId: number,
    id: number,
    body: Json,
  ): Promise<{ created: boolean; body: ReturnType<typeof shape> }> {
    const row = await deps.load(teamId, id)
    const metric = body?.metric
    const fingerprint = body?.fingerprint
    if (!metric || typeof metric !== 'object' || Array.isArray(metric))
      throw new ValidationError('metric is required', 'metric')
    if (typeof fingerprint !== 'string' || fingerprint === '')
      throw new ValidationError('fingerprint is required', 'fingerprint')
    if (row.start_date === null)
      throw new ValidationError("Cannot recalculate timeseries for experiment that hasn't started")
    const existing = await store.recalculations.active(row.id, fingerprint)
    if (existing) return { created: false, body: shape(existing) }
    const candidate: RecalculationRow = {
      id: randomUUID(),
      team_id: teamId,
      experiment_id: row.id,
      metric: JSON.stringify(metric),
      fingerprint,
      status: 'pending',
      last_successful_date: null,
      error_message: null,
      created_at: deps.clock().toISOString(),
    }
    const inserted = await store.recalculations.insert(candidate)
    if (!inserted) {
      // another request (perhaps on another process) won the race
      const winner = await store.recalculations.active(row.id, fingerprint)
      if (winner) return { created: false, body: shape(winner) }
      throw new ValidationError('A recalculation for this metric has just finished: try again.')
    }
    if (typeof metric.uuid === 'string') await store.results.clear(row.id, metric.uuid, fingerprint)
    void process().catch((err) => deps.onError?.(err, 'experiment timeseries recalculation'))
    return { created: true, body: shape(inserted) }
  }

  /** Computes one recalculation, day by day; safe to run again from the start after a takeover. */
  async function compute(request: RecalculationRow, signal: AbortSignal) {
    await store.recalculations.setStatus(request.id, { status: 'in_progress' })
    const subject = await deps.subject(request.team_id, request.experiment_id)
    if (!subject || subject.startDate === null) {
      await store.recalculations.setStatus(request.id, {
        status: 'failed',
        error_message: 'Experiment not found or not started',
      })
      return
    }
    const metric = JSON.parse(request.metric) as Json
    const uuid = String(metric.uuid ?? '')
    const timezone = await deps.timezone(request.team_id)
    const filters = await deps.testAccountFilters(request.team_id)
    const now = deps.clock()
    for (const { day, to } of experimentDays(subject.startDate, subject.endDate, now, timezone)) {
      if (signal.aborted) return
      const stamp = deps.clock().toISOString()
      const base = {
        experiment_id: request.experiment_id,
        metric_uuid: uuid,
        fingerprint: request.fingerprint,
        query_from: subject.startDate,
        query_to: to.toISOString(),
        query_id: null,
        created_at: stamp,
        updated_at: stamp,
      }
      try {
        const job = { teamId: request.team_id, timezone, engineId: `experiment-${request.id}-${day}`, signal }
        const stored = await computeMetric(deps.execute, job, subject, metric, to.toISOString(), filters, now)
        await store.results.put({
          ...base,
          status: 'completed',
          result: JSON.stringify(stored),
          completed_at: stamp,
          error_message: null,
        })
        await store.recalculations.setStatus(request.id, { last_successful_date: day })
      } catch (error) {
        if (signal.aborted) return
        const message = error instanceof Error ? error.message : String(error)
        await store.results.put({ ...base, status: 'failed', result: null, completed_at: null, error_message: message })
      }
    }
    await store.recalculations.setStatus(request.id, { status: 'completed' })
  }

  let running: Promise<void> | null = null
  let again = false
  /** Runs every pending or orphaned recalculation this process can claim (again when asked while running). */
  function process(): Promise<void> {
    if (running) {
      again = true
      return running
    }
    running = (async () => {
      try {
        do {
          again = false
          for (const request of await store.recalculations.pending()) {
            await runClaimed(deps.leases, `experiment-recalculation:${request.id}`, LEASE_MS, (signal) =>
              compute(request, signal),
            )
          }
        } while (again)
      } finally {
        running = null
      }
    })()
    return running
  }

  return { results, recalculate, process, idle: () => running ?? Promise.resolve() }
}
export type Timeseries = ReturnType<typeof createTimeseries>
