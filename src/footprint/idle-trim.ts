/**
 * Memory given back once the process has been idle for a while (#18). A busy spell leaves a grown JavaScript heap
 * (nothing collects garbage while no code runs), the capture log's spare write buffers, freed C heap that the
 * allocator keeps, and the embedded engine's code pages mapped in; an idle service holds all of it until the next
 * busy spell. When no request has come for `idleMs` after at least one did, the trims run once, in order; the next
 * request arms them again. A trim that throws is reported and the others still run.
 *
 * Nothing here changes what the process answers: a trimmed page or buffer is simply made again on its next use.
 */

/** What a trim is given: whether the process is still idle, and a wait that holds no process open. */
export interface TrimContext {
  /** False once a request has come since the trims began. */
  stillIdle(): boolean
  wait(ms: number): Promise<void>
}

export interface IdleTrim {
  name: string
  run: (context: TrimContext) => unknown
}

export interface IdleTrimmer {
  /** Marks activity (every request). Cheap: one store. */
  touch(): void
  /** Starts the trims now if the process has been idle long enough; called on a timer. Returns whether it did. */
  check(): boolean
  close(): void
  readonly runs: number
}

export function createIdleTrimmer(options: {
  idleMs: number
  trims: readonly IdleTrim[]
  onTrimmed?: (report: { name: string; ms: number; error?: unknown; skipped?: boolean }[]) => void
  now?: () => number
  /** How often to look (default: a fifth of idleMs, at least 1 s); 0 leaves checking to the caller. */
  everyMs?: number
}): IdleTrimmer {
  const now = options.now ?? Date.now
  let lastActivity = now()
  // Nothing to give back before the first request: the start's own garbage is small and a fresh process trims
  // nothing the first spell would not make again. A request arms the trims again.
  let armed = false
  let runs = 0
  const context: TrimContext = {
    stillIdle: () => !armed,
    wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()),
  }
  // The trims one after the other, each awaited (a C call runs on a worker thread, a trim may wait); the caller
  // is never held up. Once a request has come, the trims left are skipped: the process is busy again.
  const runTrims = async () => {
    const report: { name: string; ms: number; error?: unknown; skipped?: boolean }[] = []
    for (const trim of options.trims) {
      if (!context.stillIdle()) {
        report.push({ name: trim.name, ms: 0, skipped: true })
        continue
      }
      const started = performance.now()
      try {
        await trim.run(context)
        report.push({ name: trim.name, ms: performance.now() - started })
      } catch (error) {
        report.push({ name: trim.name, ms: performance.now() - started, error })
      }
    }
    options.onTrimmed?.(report)
  }
  const check = () => {
    if (!armed || now() - lastActivity < options.idleMs) return false
    armed = false
    runs++
    void runTrims()
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

/** Requests that do not make the process busy: health checks and metrics scrapes (with or without a query). */
export function isProbe(url: string): boolean {
  return /^\/_(health|metrics)(\?|$)/.test(url)
}
