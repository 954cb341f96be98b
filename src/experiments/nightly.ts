// The scheduled timeseries run (PostHog's daily experiment-metrics workflow): once a day per project, from 02:00 in
// the project's timezone (PostHog's default recalculation hour), every metric of every running experiment started in
// the last 60 days — inline and saved — is computed from the start to now, as PostHog's run does, and stored under
// the metric's fingerprint; the row is that local day's point of the timeseries.
//
// Several processes: a croner tick in every process looks for due slots; each slot (project, local day) runs under
// a job lease, so one process computes it and another takes over when that one dies. A metric that already has a
// row for that day (this run's, or a recalculation's) is skipped, so a takeover finishes what the dead owner left,
// and a slot already done costs one read per metric.
import { randomUUID } from 'node:crypto'
import { Cron } from 'croner'
import { runClaimed } from '../jobs/leases.js'
import { fingerprinted } from './context.js'
import { localMidnight } from './local-time.js'
import type { ExperimentRow, ExperimentStore } from './store.js'
import { computeMetric, type ExperimentJobDeps, localDay } from './timeseries.js'
import { type Json, parse } from './validation.js'

/** Every process looks for due slots this often (croner pattern, seconds first). */
export const NIGHTLY_TICK_PATTERN = '0 */5 * * * *'
/** The local hour from which a project's day is due (PostHog's default recalculation time, 02:00). */
export const NIGHTLY_HOUR = 2
/** Experiments started longer ago than this are left out (PostHog's EXPERIMENT_RECALCULATION_MAX_AGE_DAYS). */
export const MAX_AGE_DAYS = 60
const DAY = 86_400_000
const LEASE_MS = 60_000

/** One slot: a project's local day, the instants it runs between, and the window end of the rows it writes. */
export interface NightlySlot {
  teamId: number
  day: string
  /** local midnight that starts the day, and the next one */
  from: string
  to: string
}

export function createNightlyTimeseries(
  deps: ExperimentJobDeps & { store: Pick<ExperimentStore, 'running' | 'savedMetrics' | 'results'> },
) {
  const { store } = deps
  let cron: Cron | undefined
  let closed = false
  let ticking: Promise<unknown> = Promise.resolve()

  /** The metrics of an experiment with their config fingerprints: inline primary and secondary, then saved. */
  async function metricsOf(row: ExperimentRow): Promise<Json[]> {
    const inline = [...parse<Json[]>(row.metrics, []), ...parse<Json[]>(row.metrics_secondary, [])]
    const saved: Json[] = []
    for (const link of await store.savedMetrics.links(row.id)) {
      const metric = await store.savedMetrics.get(row.team_id, link.saved_metric_id)
      if (metric) saved.push(parse<Json>(metric.query, {}))
    }
    return fingerprinted(row, [...inline, ...saved]).filter((m) => typeof m.uuid === 'string' && m.uuid !== '')
  }

  /** Computes the slot's missing rows; answers how many metrics it computed. */
  async function runSlot(slot: NightlySlot, experiments: ExperimentRow[], signal: AbortSignal): Promise<number> {
    const timezone = await deps.timezone(slot.teamId)
    const filters = await deps.testAccountFilters(slot.teamId)
    // one window end for the whole run: the data as of now
    const queryTo = deps.clock().toISOString()
    let computed = 0
    for (const row of experiments) {
      const subject = await deps.subject(row.team_id, row.id)
      if (!subject || subject.startDate === null) continue
      for (const metric of await metricsOf(row)) {
        if (signal.aborted) return computed
        if (await store.results.existsWithin(row.id, metric.uuid, metric.fingerprint, slot.from, slot.to)) continue
        const stamp = deps.clock().toISOString()
        const base = {
          experiment_id: row.id,
          metric_uuid: metric.uuid as string,
          fingerprint: metric.fingerprint as string,
          query_from: subject.startDate,
          query_to: queryTo,
          query_id: null,
          created_at: stamp,
          updated_at: stamp,
        }
        try {
          const job = { teamId: slot.teamId, timezone, engineId: `experiment-nightly-${randomUUID()}`, signal }
          const stored = await computeMetric(deps.execute, job, subject, metric, queryTo, filters, deps.clock())
          await store.results.put({
            ...base,
            status: 'completed',
            result: JSON.stringify(stored),
            completed_at: deps.clock().toISOString(),
            error_message: null,
          })
        } catch (error) {
          if (signal.aborted) return computed
          const message = error instanceof Error ? error.message : String(error)
          await store.results.put({
            ...base,
            status: 'failed',
            result: null,
            completed_at: null,
            error_message: message,
          })
        }
        computed++
      }
    }
    return computed
  }

  /** The slots due now, with their experiments: per project, its local day once 02:00 has passed there. */
  async function dueSlots(): Promise<{ slot: NightlySlot; experiments: ExperimentRow[] }[]> {
    const now = deps.clock()
    const running = await store.running(new Date(now.getTime() - MAX_AGE_DAYS * DAY).toISOString())
    const byTeam = new Map<number, ExperimentRow[]>()
    for (const row of running) byTeam.set(row.team_id, [...(byTeam.get(row.team_id) ?? []), row])
    const due = []
    for (const [teamId, rows] of byTeam) {
      const timezone = await deps.timezone(teamId)
      const midnight = localMidnight(now, timezone)
      if (now.getTime() < midnight.getTime() + NIGHTLY_HOUR * 3_600_000) continue
      // the next local midnight: a day later, corrected across DST changes
      const next = localMidnight(new Date(midnight.getTime() + DAY + 3 * 3_600_000), timezone)
      const experiments = rows.filter((r) => r.start_date !== null && Date.parse(r.start_date) < now.getTime())
      const slot = { teamId, day: localDay(now, timezone), from: midnight.toISOString(), to: next.toISOString() }
      if (experiments.length > 0) due.push({ slot, experiments })
    }
    return due
  }

  /** One tick: every due slot this process can claim. Answers the slots it ran and the metrics it computed. */
  async function tick(): Promise<{ slots: NightlySlot[]; computed: number }> {
    const ran: NightlySlot[] = []
    let computed = 0
    if (closed) return { slots: ran, computed }
    for (const { slot, experiments } of await dueSlots()) {
      if (closed) break
      await runClaimed(deps.leases, `experiment-nightly:${slot.teamId}:${slot.day}`, LEASE_MS, async (signal) => {
        computed += await runSlot(slot, experiments, signal)
        ran.push(slot)
      })
    }
    return { slots: ran, computed }
  }

  function runDue(): Promise<{ slots: NightlySlot[]; computed: number }> {
    const next = ticking.then(tick)
    ticking = next.catch((err) => deps.onError?.(err, 'experiment nightly timeseries'))
    return next
  }

  return {
    /** Runs the slots due now (the schedule's tick). */
    runDue,
    start() {
      cron ??= new Cron(NIGHTLY_TICK_PATTERN, { protect: true, unref: true }, () => {
        runDue().catch(() => {})
      })
    },
    async close() {
      closed = true
      cron?.stop()
      await ticking
    },
  }
}
export type NightlyTimeseries = ReturnType<typeof createNightlyTimeseries>
