/**
 * Memory given back once the process has been idle for a while (#18). A busy spell leaves a grown JavaScript heap
 * (nothing collects garbage while no code runs), the capture log's spare write buffers, freed C heap that the
 * allocator keeps, and the embedded engine's code pages mapped in; an idle service holds all of it until the next
 * busy spell. When no request has come for `idleMs` after at least one did, the trims run once, in order; the next
 * request arms them again. A trim that throws is reported and the others still run.
 *
 * Nothing here changes what the process answers: a trimmed page or buffer is simply made again on its next use.
 */

export interface IdleTrimmer {
  /** Marks activity (every request). Cheap: one store. */
  touch(): void
  /** Runs the trims now if the process has been idle long enough; called on a timer. Returns whether it ran. */
  check(): boolean
  close(): void
  readonly runs: number
}

export function createIdleTrimmer(options: {
  idleMs: number
  trims: readonly { name: string; run: () => unknown }[]
  onTrimmed?: (report: { name: string; ms: number; error?: unknown }[]) => void
  now?: () => number
  /** How often to look (default: a fifth of idleMs, at least 1 s); 0 leaves checking to the caller. */
  everyMs?: number
}): IdleTrimmer {
  const now = options.now ?? Date.now
  let lastActivity = now()
  // Nothing to give back before the first request: the start's own garbage is small and a fresh process trims
  // nothing the first spell would not make again.
  let armed = false
  let runs = 0
  const check = () => {
    if (!armed || now() - lastActivity < options.idleMs) return false
    armed = false
    runs++
    // Each trim in turn; one that returns a promise (a C call made on a worker thread) is not waited for.
    const steps = options.trims.map(async (trim) => {
      const started = performance.now()
      try {
        await trim.run()
        return { name: trim.name, ms: performance.now() - started }
      } catch (error) {
        return { name: trim.name, ms: performance.now() - started, error }
      }
    })
    void Promise.all(steps).then((report) => options.onTrimmed?.(report))
    return true
  }
  const everyMs = options.everyMs ?? Math.max(1_000, Math.floor(options.idleMs / 5))
  const timer = everyMs > 0 && options.idleMs > 0 ? setInterval(check, everyMs) : undefined
  timer?.unref()
  return {
    touch() {
      lastActivity = now()
      armed = true
    },
    check,
    close() {
      if (timer) clearInterval(timer)
    },
    get runs() {
      return runs
    },
  }
}
