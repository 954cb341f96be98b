// PostHog's hourly read budget for queries made with a personal API key: every query debits the bytes the engine
// read, the budget refills continuously, and an exhausted one answers 429 `api_queries_budget_exceeded` with
// Retry-After (cached results are still served). Kept in the shared rate-limit counters, so every process debits
// the same budget: two hourly windows, the previous one counting for the part of the hour still ahead (a sliding
// window), in KiB so an hour's total fits the counter column.
import type { RateLimitStore } from '../http/rate-limit-store.js'

const HOUR_MS = 3_600_000
const KIB = 1024

export interface ReadBudget {
  /** false when the operator set no budget (QUERY_READ_BUDGET_MB_PER_HOUR=0) */
  enabled: boolean
  /** Bytes the project may still read now. */
  remaining(teamId: number): Promise<number>
  /** Debits what a query read; answers the bytes left. */
  debit(teamId: number, bytes: number): Promise<number>
  /** Seconds until an exhausted budget has room again (at least 1). */
  retryAfterSeconds(teamId: number): Promise<number>
}

export function createReadBudget(deps: {
  store: Pick<RateLimitStore, 'add' | 'hits'>
  bytesPerHour: number
  clock: () => Date
}): ReadBudget {
  const capKib = Math.floor(deps.bytesPerHour / KIB)
  const keyOf = (teamId: number, window: number) => `query-read-kib:${teamId}:${window}`

  async function usage(teamId: number) {
    const now = deps.clock().getTime()
    const window = Math.floor(now / HOUR_MS)
    const elapsed = (now - window * HOUR_MS) / HOUR_MS
    const [current, previous] = await Promise.all([
      deps.store.hits(keyOf(teamId, window)),
      deps.store.hits(keyOf(teamId, window - 1)),
    ])
    return { now, window, elapsed, current, previous }
  }
  const leftKib = (u: { elapsed: number; current: number; previous: number }) =>
    Math.max(0, Math.floor(capKib - u.current - u.previous * (1 - u.elapsed)))

  return {
    enabled: capKib > 0,
    async remaining(teamId) {
      return leftKib(await usage(teamId)) * KIB
    },
    async debit(teamId, bytes) {
      const kib = Math.ceil(Math.max(0, bytes) / KIB)
      if (kib > 0) {
        const window = Math.floor(deps.clock().getTime() / HOUR_MS)
        await deps.store.add(keyOf(teamId, window), kib, (window + 2) * HOUR_MS)
      }
      return leftKib(await usage(teamId)) * KIB
    },
    async retryAfterSeconds(teamId) {
      const u = await usage(teamId)
      const toNextWindow = (u.window + 1) * HOUR_MS - u.now
      let waitMs: number
      if (u.current < capKib) {
        // within this window, room comes back as the previous window's share fades
        const fadedAt = u.previous > 0 ? 1 - (capKib - u.current) / u.previous : 0
        waitMs = Math.max(0, (fadedAt - u.elapsed) * HOUR_MS)
      } else {
        // this window alone spent it: next window, as this one's share fades
        waitMs = toNextWindow + Math.max(0, 1 - capKib / u.current) * HOUR_MS
      }
      return Math.max(1, Math.ceil(waitMs / 1000))
    },
  }
}
