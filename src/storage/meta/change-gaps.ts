/**
 * Finds notifications this process never heard. Every process numbers what it publishes (1, 2, 3…) and writes its
 * latest number (its head) to the metadata store now and then; every process reads the others' heads on the same
 * beat. A change is missed when a number was skipped in what arrived, or when a head read at one beat is still
 * ahead of what arrived by the next one (a notification gets a whole beat to arrive, so one merely late is not
 * taken for lost). A miss means some cache may hold what changed: the caller drops everything.
 *
 * Pure: no clock, no I/O. The caller feeds it what arrived and what it read, one beat at a time.
 */

/** Numbers skipped and still unheard, per origin, at most this many (more is simply a miss). */
const MAX_MISSING = 1_000

interface OriginState {
  /** The highest number heard from that origin. */
  heard: number
  /** Numbers below `heard` not heard yet, with the beat at which they were found missing. */
  missing: Map<number, number>
  /** The head read at the last beat. */
  head: number
}

export interface GapTracker {
  /** A notification numbered `seq` arrived from `origin`. */
  heard(origin: string, seq: number): void
  /**
   * One beat: the heads just read (other origins only). True when a change was missed since the last beat.
   * The first beat only learns where everyone stands (a process that just started has nothing cached).
   */
  beat(heads: ReadonlyMap<string, number>): boolean
}

export function createGapTracker(): GapTracker {
  const origins = new Map<string, OriginState>()
  let beats = 0
  let overflow = false
  const stateOf = (origin: string): OriginState => {
    let state = origins.get(origin)
    if (!state) {
      state = { heard: 0, missing: new Map(), head: 0 }
      origins.set(origin, state)
    }
    return state
  }
  return {
    heard(origin, seq) {
      if (!Number.isSafeInteger(seq) || seq < 1) return
      const state = stateOf(origin)
      if (seq <= state.heard) {
        state.missing.delete(seq)
        return
      }
      // Numbers skipped by this one may still come (notifications sent on different connections can cross).
      // Only once this origin is known: a process that starts late hears others mid-count.
      if (state.heard > 0 || beats > 0) {
        for (let n = state.heard + 1; n < seq; n++) {
          if (state.missing.size >= MAX_MISSING) {
            overflow = true
            break
          }
          state.missing.set(n, beats)
        }
      }
      state.heard = seq
    },
    beat(heads) {
      const first = beats === 0
      beats++
      let missed = overflow
      overflow = false
      for (const [origin, head] of heads) {
        const state = stateOf(origin)
        if (first) {
          // Where everyone stands now; nothing before it can be stale in this process.
          state.heard = Math.max(state.heard, head)
          state.missing.clear()
        } else if (state.head > state.heard) {
          // Last beat's head has still not arrived: lost.
          missed = true
          state.heard = state.head
        }
        state.head = head
      }
      for (const state of origins.values()) {
        for (const [n, since] of state.missing) {
          if (since < beats - 1) {
            missed = true
            state.missing.delete(n)
          }
        }
      }
      // Everything is dropped: whatever else is still missing is covered too.
      if (missed) for (const state of origins.values()) state.missing.clear()
      return missed
    },
  }
}
