// `metrics_recalculation/`: PostHog's batch recalculation of every metric of an experiment (inline primary and
// secondary, then saved metrics). A run is a row in the metadata store — at most one pending or running per
// experiment, by a partial unique index — that any process may pick up under a job lease. The run pins one data-window
// end (`query_to`, now or the end date) when it starts, so every metric covers the same window and a takeover after
// a crash recomputes into the same rows. Each metric's result is stored in `experiment_metric_results` under the
// run's fingerprint: sha256(config fingerprint + "recalculation"), kept apart from the daily timeseries rows.
import crypto, { randomUUID } from 'node:crypto'
import { NotFound, ValidationError } from '../http/errors.js'
import { runClaimed } from '../jobs/leases.js'
import { type ExperimentActor, fingerprinted } from './context.js'
import type { ExperimentRow, ExperimentStore, MetricResultRow, MetricsRecalculationRow } from './store.js'
import { computeMetric, type ExperimentJobDeps } from './timeseries.js'
import { isObject, type Json, parse } from './validation.js'

/** PostHog's run triggers a client may name (`manual` by default). */
export const TRIGGERS = ['manual', 'experiment_launch', 'experiment_stop', 'experiment_update', 'agent_mcp']
/** An active run older than this (since creation when pending, since its start when running) no longer blocks a new one. */
export const STALE_RUN_MS = 30 * 60_000
/** A daily timeseries point younger than this stands in for a run before the first one finishes. */
export const FALLBACK_MAX_AGE_MS = 24 * 3_600_000
const LEASE_MS = 60_000
const MAX_ERROR_LENGTH = 2000
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The fingerprint a run stamps on its result rows, derived from the metric's config fingerprint. */
export function recalculationFingerprint(configFingerprint: string): string {
  return crypto.createHash('sha256').update(`${configFingerprint}recalculation`).digest('hex')
}

interface DiscoveredMetric {
  uuid: string
  definition: Json
}

/** Results as the API shows them: `step_sessions` left out. */
function withoutStepSessions(result: unknown): unknown {
  if (!isObject(result)) return result
  const strip = (v: unknown) => {
    if (!isObject(v)) return v
    const { step_sessions: _s, ...rest } = v
    return rest
  }
  return {
    ...result,
    baseline: strip(result.baseline),
    variant_results: Array.isArray(result.variant_results) ? result.variant_results.map(strip) : result.variant_results,
  }
}

export function createMetricsRecalculation(
  deps: ExperimentJobDeps & {
    store: ExperimentStore
    load: (teamId: number, id: number) => Promise<ExperimentRow>
  },
) {
  const { store } = deps
  const runs = store.metricsRecalculations

  /** Every metric of the experiment, in PostHog's order: primary, secondary, then saved metrics. */
  async function discover(row: ExperimentRow): Promise<DiscoveredMetric[]> {
    const out: DiscoveredMetric[] = []
    for (const m of [...parse<Json[]>(row.metrics, []), ...parse<Json[]>(row.metrics_secondary, [])]) {
      if (typeof m.uuid === 'string' && m.uuid !== '') out.push({ uuid: m.uuid, definition: m })
    }
    for (const link of await store.savedMetrics.links(row.id)) {
      const saved = await store.savedMetrics.get(row.team_id, link.saved_metric_id)
      const query = saved ? parse<Json>(saved.query, {}) : {}
      if (typeof query.uuid === 'string' && query.uuid !== '') out.push({ uuid: query.uuid, definition: query })
    }
    return out
  }

  /** metric uuid → the run fingerprint, under the experiment's current settings. */
  async function runFingerprints(row: ExperimentRow, uuids: string[]): Promise<Map<string, string>> {
    const definitions = new Map((await discover(row)).map((m) => [m.uuid, m.definition]))
    const out = new Map<string, string>()
    for (const uuid of uuids) {
      const definition = definitions.get(uuid)
      if (!definition) continue
      const [withPrint] = fingerprinted(row, [definition])
      out.set(uuid, recalculationFingerprint(withPrint.fingerprint))
    }
    return out
  }

  async function runResults(row: ExperimentRow, run: MetricsRecalculationRow) {
    if (run.query_to === null) return []
    const prints = await runFingerprints(row, parse<string[]>(run.metric_uuids, []))
    const rows = await store.results.at(row.id, [...new Set(prints.values())], run.query_to)
    return rows
      .filter((r) => prints.get(r.metric_uuid) === r.fingerprint)
      .map((r: MetricResultRow) => ({
        metric_uuid: r.metric_uuid,
        status: r.status,
        result: r.result === null ? null : withoutStepSessions(JSON.parse(r.result)),
        error_message: r.error_message,
      }))
  }

  async function payload(
    row: ExperimentRow,
    run: MetricsRecalculationRow,
    options: { isExisting?: boolean; withResults?: boolean } = {},
  ) {
    const results = await runResults(row, run)
    const errors = parse<Json>(run.metric_errors, {})
    const withRow = new Set(results.map((r) => r.metric_uuid))
    const body: Json = {
      id: run.id,
      experiment_id: run.experiment_id,
      status: run.status,
      total_metrics: run.total_metrics,
      completed_metrics: results.filter((r) => r.status === 'completed').length,
      failed_metrics:
        results.filter((r) => r.status === 'failed').length + Object.keys(errors).filter((u) => !withRow.has(u)).length,
      metric_errors: errors,
      trigger: run.trigger,
      created_at: run.created_at,
      started_at: run.started_at,
      completed_at: run.completed_at,
      query_to: run.query_to,
      result_source: 'recalculation',
    }
    if (options.isExisting !== undefined) body.is_existing = options.isExisting
    if (options.withResults) body.results = results
    return body
  }

  const isFresh = (run: MetricsRecalculationRow, now: number) => {
    const anchor = run.status === 'in_progress' ? (run.started_at ?? run.created_at) : run.created_at
    return Date.parse(anchor) >= now - STALE_RUN_MS
  }

  /** POST: the active run (200, `is_existing`), or a new pending one (201). */
  async function request(teamId: number, actor: ExperimentActor, id: number, body: Json) {
    const row = await deps.load(teamId, id)
    const trigger = body.trigger ?? 'manual'
    if (typeof trigger !== 'string' || !TRIGGERS.includes(trigger)) {
      throw new ValidationError(`"${String(trigger)}" is not a valid choice.`, 'trigger', 'invalid_choice')
    }
    if (row.start_date === null)
      throw new ValidationError("Cannot recalculate metrics for experiment that hasn't started")
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = deps.clock()
      const active = await runs.active(row.id)
      const fresh = active.find((r) => isFresh(r, now.getTime()))
      if (fresh) return { created: false, body: await payload(row, fresh, { isExisting: true }) }
      // Stale runs (their process never started or died long ago) give way to the new one.
      await runs.supersede(active.map((r) => r.id))
      const metrics = await discover(row)
      const inserted = await runs.insert({
        id: randomUUID(),
        team_id: teamId,
        experiment_id: row.id,
        status: 'pending',
        trigger,
        total_metrics: metrics.length,
        metric_uuids: JSON.stringify(metrics.map((m) => m.uuid)),
        metric_errors: '{}',
        query_to: null,
        created_by: actor.userId,
        created_at: now.toISOString(),
        started_at: null,
        completed_at: null,
      })
      if (inserted) {
        void process().catch((err) => deps.onError?.(err, 'experiment metrics recalculation'))
        return { created: true, body: await payload(row, inserted, { isExisting: false }) }
      }
      // another request (perhaps on another process) created one first: answer it on the next pass
    }
    throw new ValidationError('A recalculation for this experiment has just started: try again.')
  }

  /** GET latest: the newest finished run with its results, else the cold-start fallback from timeseries points. */
  async function latest(teamId: number, id: number) {
    const row = await deps.load(teamId, id)
    const run = await runs.latestFinished(row.id)
    if (run) return payload(row, run, { withResults: true })
    const fallback = await timeseriesFallback(row)
    if (fallback) return fallback
    throw new NotFound('No completed recalculation found')
  }

  async function byId(teamId: number, id: number, recalculationId: string) {
    const row = await deps.load(teamId, id)
    const run = UUID.test(recalculationId) ? await runs.get(row.id, recalculationId.toLowerCase()) : undefined
    if (!run) throw new NotFound('Recalculation not found')
    return payload(row, run, { withResults: true })
  }

  /** Each metric's newest completed daily point of the last 24 hours, shown as a finished run. */
  async function timeseriesFallback(row: ExperimentRow) {
    const metrics = await discover(row)
    const now = deps.clock()
    const from = new Date(now.getTime() - FALLBACK_MAX_AGE_MS).toISOString()
    const results = []
    let latestTo: string | null = null
    for (const metric of metrics) {
      const [withPrint] = fingerprinted(row, [metric.definition])
      const point = await store.results.latestCompleted(
        row.id,
        metric.uuid,
        withPrint.fingerprint,
        from,
        now.toISOString(),
      )
      if (!point) continue
      results.push({
        metric_uuid: point.metric_uuid,
        status: point.status,
        result: point.result === null ? null : withoutStepSessions(JSON.parse(point.result)),
        error_message: null,
      })
      if (latestTo === null || point.query_to > latestTo) latestTo = point.query_to
    }
    if (results.length === 0) return undefined
    return {
      id: 'timeseries-fallback',
      experiment_id: row.id,
      status: 'completed',
      total_metrics: metrics.length,
      completed_metrics: results.length,
      failed_metrics: 0,
      metric_errors: {},
      trigger: 'manual',
      created_at: latestTo,
      started_at: latestTo,
      completed_at: latestTo,
      query_to: latestTo,
      result_source: 'timeseries_fallback',
      results,
    }
  }

  /** Runs one recalculation; safe to run again from the start after a takeover (same window, upserted rows). */
  async function compute(pending: MetricsRecalculationRow, signal: AbortSignal) {
    const row = await store.get(pending.team_id, pending.experiment_id)
    const subject = await deps.subject(pending.team_id, pending.experiment_id)
    const finish = (status: 'completed' | 'failed') => runs.finish(pending.id, status, deps.clock().toISOString())
    if (!row || row.deleted === 1 || !subject || subject.startDate === null) {
      await runs.setErrors(pending.id, {
        experiment: {
          step: 'discovery',
          message: 'Experiment not found or not started',
          timestamp: deps.clock().toISOString(),
        },
      })
      return finish('failed')
    }
    const metrics = await discover(row)
    const now = deps.clock()
    const end = row.end_date && Date.parse(row.end_date) < now.getTime() ? row.end_date : now.toISOString()
    const run = await runs.start(
      pending.id,
      end,
      now.toISOString(),
      metrics.map((m) => m.uuid),
    )
    if (run.status !== 'in_progress' || run.query_to === null) return // superseded by a newer run
    const queryTo = run.query_to
    const uuids = parse<string[]>(run.metric_uuids, [])
    const errors = parse<Json>(run.metric_errors, {})
    const timezone = await deps.timezone(pending.team_id)
    const filters = await deps.testAccountFilters(pending.team_id)
    let failed = 0
    for (const uuid of uuids) {
      if (signal.aborted) return
      const stamp = deps.clock().toISOString()
      const metric = metrics.find((m) => m.uuid === uuid)
      if (!metric) {
        errors[uuid] = {
          step: 'discovery',
          message: `Metric ${uuid} not found in experiment ${row.id}`,
          timestamp: stamp,
        }
        failed++
        continue
      }
      const [withPrint] = fingerprinted(row, [metric.definition])
      const base = {
        experiment_id: row.id,
        metric_uuid: uuid,
        fingerprint: recalculationFingerprint(withPrint.fingerprint),
        query_from: subject.startDate,
        query_to: queryTo,
        query_id: `experiment_metric_recalc_${pending.id}_${uuid}`,
        created_at: stamp,
        updated_at: stamp,
      }
      try {
        const job = { teamId: pending.team_id, timezone, engineId: `experiment-recalc-${randomUUID()}`, signal }
        const stored = await computeMetric(
          deps.execute,
          job,
          subject,
          metric.definition,
          queryTo,
          filters,
          deps.clock(),
        )
        await store.results.put({
          ...base,
          status: 'completed',
          result: JSON.stringify(stored),
          completed_at: deps.clock().toISOString(),
          error_message: null,
        })
        delete errors[uuid]
      } catch (error) {
        if (signal.aborted) return
        const message = (error instanceof Error ? error.message : String(error)).slice(0, MAX_ERROR_LENGTH)
        await store.results.put({ ...base, status: 'failed', result: null, completed_at: null, error_message: message })
        errors[uuid] = { step: 'calculation', message, timestamp: deps.clock().toISOString() }
        failed++
      }
    }
    await runs.setErrors(pending.id, errors)
    // Any failed metric marks the run failed (PostHog's rule); the counts carry how many.
    await finish(failed > 0 ? 'failed' : 'completed')
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
          for (const pending of await runs.runnable()) {
            await runClaimed(deps.leases, `experiment-metrics-recalculation:${pending.id}`, LEASE_MS, (signal) =>
              compute(pending, signal),
            )
          }
        } while (again)
      } finally {
        running = null
      }
    })()
    return running
  }

  return { request, latest, byId, process, idle: () => running ?? Promise.resolve() }
}
export type MetricsRecalculation = ReturnType<typeof createMetricsRecalculation>
