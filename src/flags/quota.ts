// The monthly /flags request quota per organization. Counting writes to the metadata store would cost one
// write per request on the hottest path, so requests are counted in memory and added to the shared counter
// (flag_request_usage) about once a second; the counter read back then includes other processes' requests.
import type { FlagStore } from './store.js'

interface OrgUsage {
  month: string
  /** The shared total when last read or written. */
  base: number
  /** Requests admitted here and not yet added to the shared total. */
  pending: number
  ready: Promise<void>
}

export const monthOf = (date: Date) => date.toISOString().slice(0, 7)

export function createFlagQuota(deps: {
  usage: Pick<FlagStore, 'usage' | 'addUsage'>
  clock: () => Date
  flushIntervalMs?: number
}) {
  const orgs = new Map<string, OrgUsage>()
  let timer: NodeJS.Timeout | undefined
  let flushing: Promise<void> | undefined

  function stateFor(organizationId: string): OrgUsage {
    const month = monthOf(deps.clock())
    let state = orgs.get(organizationId)
    if (!state || state.month !== month) {
      const fresh: OrgUsage = { month, base: 0, pending: 0, ready: Promise.resolve() }
      fresh.ready = deps.usage.usage(organizationId, month).then(
        (total) => {
          fresh.base = total
        },
        () => {
          // Without the shared count this process still counts its own requests.
        },
      )
      orgs.set(organizationId, fresh)
      state = fresh
    }
    return state
  }

  async function flushOnce(): Promise<void> {
    for (const [organizationId, state] of orgs) {
      const n = state.pending
      if (n === 0) continue
      state.pending -= n
      try {
        state.base = await deps.usage.addUsage(organizationId, state.month, n)
      } catch {
        state.pending += n
      }
    }
  }

  return {
    /**
     * Counts one request for the organization and says whether it may be served: false once the month's
     * count has reached the quota (limited requests are not counted). A null quota never limits.
     */
    async admit(organizationId: string, quota: number | null): Promise<boolean> {
      const state = stateFor(organizationId)
      await state.ready
      if (quota !== null && state.base + state.pending >= quota) return false
      state.pending += 1
      if (!timer) {
        timer = setInterval(() => void this.flush(), deps.flushIntervalMs ?? 1_000)
        timer.unref()
      }
      return true
    },
    /** Adds the pending counts to the shared counters. */
    flush(): Promise<void> {
      flushing ??= flushOnce().finally(() => {
        flushing = undefined
      })
      return flushing
    },
    async close(): Promise<void> {
      if (timer) clearInterval(timer)
      timer = undefined
      await flushing
      await flushOnce()
    },
  }
}
export type FlagQuota = ReturnType<typeof createFlagQuota>
