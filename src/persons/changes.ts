import type { ChangeBus } from '../storage/meta/change-bus.js'

/**
 * Person changes told across processes: what this process committed (ingestion, the persons API) is sent on the
 * change bus, gathered per project for a few milliseconds so that a busy capture sends one notification per
 * burst, not one per batch; what another process committed makes this one's person caches forget it.
 */
export function createPersonChangeRelay(deps: {
  bus: Pick<ChangeBus, 'publish' | 'subscribe'>
  /** Forgets these distinct ids of a project in every local person cache; `null`: all of the project. */
  forget: (teamId: number, distinctIds: string[] | null) => void
  /** Forgets every person cached (the bus may have missed notifications). */
  forgetAll: () => void
  /** Forgets a project's group types (another process may have created one). */
  forgetGroupTypes: (teamId: number) => void
  delayMs?: number
}) {
  const delayMs = deps.delayMs ?? 10
  /** Per project, the distinct ids to tell. */
  const pending = new Map<number, Set<string>>()
  let timer: NodeJS.Timeout | undefined

  const flush = () => {
    timer = undefined
    for (const [teamId, ids] of pending) deps.bus.publish({ kind: 'persons', teamId, distinctIds: [...ids] })
    pending.clear()
  }

  deps.bus.subscribe((change) => {
    if (change.kind === 'persons') deps.forget(change.teamId, change.distinctIds ?? null)
    else if (change.kind === 'flags') deps.forgetGroupTypes(change.teamId)
    else if (change.kind === 'all') deps.forgetAll()
  })

  return {
    /** Tells the other processes that these distinct ids of a project changed (committed). */
    changed(teamId: number, distinctIds: Iterable<string>) {
      let ids = pending.get(teamId)
      if (!ids) {
        ids = new Set()
        pending.set(teamId, ids)
      }
      for (const id of distinctIds) ids.add(id)
      if (!timer) {
        timer = setTimeout(flush, delayMs)
        timer.unref()
      }
    },
    /** Sends what is gathered now (before the bus closes). */
    flush() {
      clearTimeout(timer)
      flush()
    },
  }
}

export type PersonChangeRelay = ReturnType<typeof createPersonChangeRelay>
