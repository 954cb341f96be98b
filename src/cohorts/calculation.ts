// Background calculation of dynamic cohorts: how many persons each holds, whether one is being calculated, when
// it last was and how often it failed — state on the cohort row, so every process answers the same. A croner tick
// in every process looks for due cohorts (definition changed, or last calculated longer ago than the schedule's
// period, since behavioural windows move with time); each calculation runs under a job lease on its cohort, so
// exactly one process computes it and another takes over when that one dies.
import { randomUUID } from 'node:crypto'
import { Cron } from 'croner'
import { type CohortResolver, memberCountHogQL } from '../hogql/index.js'
import { type JobLeases, runClaimed } from '../jobs/leases.js'
import type { HogQLExecutor } from '../queries/runner.js'
import type { CohortStore } from './store.js'

/** Every process looks for due cohorts this often (croner pattern, seconds first). */
export const CALCULATION_TICK_PATTERN = '*/5 * * * * *'
/** A cohort is calculated again when its last calculation is older than this. */
export const RECALCULATION_PERIOD_MS = 60 * 60 * 1000
const LEASE_MS = 60_000
const BATCH = 20

export function createCohortCalculator(deps: {
  cohorts: Pick<CohortStore, 'due' | 'startCalculation' | 'finishCalculation'>
  execute: HogQLExecutor
  /** The project's cohorts as the compiler takes them (to choose how a cohort's members are counted). */
  resolve: (teamId: number) => Promise<CohortResolver>
  timezone: (teamId: number) => Promise<string>
  leases: JobLeases
  clock: () => Date
  onError?: (err: unknown, what: string) => void
}) {
  let cron: Cron | undefined
  let closed = false
  let ticking: Promise<void> = Promise.resolve()

  async function calculate(id: number, teamId: number, signal: AbortSignal): Promise<void> {
    await deps.cohorts.startCalculation(id, deps.clock().toISOString())
    try {
      const result = await deps.execute(memberCountHogQL(id, await deps.resolve(teamId)), {
        team: { id: teamId, timezone: await deps.timezone(teamId) },
        engineId: `c${teamId}x${randomUUID().replace(/-/g, '')}`,
        signal,
        stats: { rowsRead: 0, bytesRead: 0, resultRows: 0 },
      })
      const count = Number(result.rows[0]?.[0] ?? 0)
      await deps.cohorts.finishCalculation(id, { count, at: deps.clock().toISOString() })
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      await deps.cohorts.finishCalculation(id, { error: message, at: deps.clock().toISOString() })
    }
  }

  async function tick(): Promise<void> {
    if (closed) return
    const now = deps.clock().getTime()
    const staleBefore = new Date(now - RECALCULATION_PERIOD_MS).toISOString()
    // a calculation still marked running after two lease lengths lost its process (a live one renews its lease)
    const stuckBefore = new Date(now - 2 * LEASE_MS).toISOString()
    for (const row of await deps.cohorts.due(staleBefore, stuckBefore, BATCH)) {
      if (closed) return
      await runClaimed(deps.leases, `cohort-calculation:${row.id}`, LEASE_MS, (signal) =>
        calculate(row.id, row.team_id, signal),
      )
    }
  }

  function runDue(): Promise<void> {
    ticking = ticking.then(tick).catch((err) => deps.onError?.(err, 'cohort calculation tick'))
    return ticking
  }

  return {
    /** Calculates the cohorts that are due now (the schedule's tick; also right after a definition changes). */
    runDue,
    start() {
      cron ??= new Cron(CALCULATION_TICK_PATTERN, { protect: true, unref: true }, () => runDue())
    },
    async close() {
      closed = true
      cron?.stop()
      await ticking
    },
  }
}
export type CohortCalculator = ReturnType<typeof createCohortCalculator>
