// The embedded engine's own threads (merges, insert and query pools, schedulers) run in this process beside the
// one thread that serves requests. Under load they can keep that thread off the CPU for tens of milliseconds,
// which is request latency; lowering their priority (a larger nice value, which needs no privilege) lets the
// request thread run first whenever both want a core, and costs nothing when the machine is idle.
import fs from 'node:fs'
import os from 'node:os'

/** Node's own threads (main, libuv pool, V8 platform workers) are all named `node`; the engine names its own. */
const NODE_THREAD = 'node'

/** Sets the nice value of every engine thread now running; returns how many were changed. Linux only. */
export function deprioritizeEngineThreads(nice: number): number {
  let changed = 0
  let tasks: string[]
  try {
    tasks = fs.readdirSync('/proc/self/task')
  } catch {
    return 0
  }
  for (const tid of tasks) {
    try {
      const name = fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim()
      if (name === NODE_THREAD) continue
      // Never lower a larger value: query threads run at the query's own `os_thread_priority` (nicer still).
      if (os.getPriority(Number(tid)) >= nice) continue
      os.setPriority(Number(tid), nice)
      changed++
    } catch {
      // The thread ended meanwhile, or the system refuses: best effort.
    }
  }
  return changed
}

/** Keeps engine threads (pools start threads as they need them) at the given nice value; returns a stop. */
export function keepEngineThreadsDeprioritized(nice: number, everyMs = 2_000): () => void {
  if (nice <= 0 || process.platform !== 'linux') return () => undefined
  deprioritizeEngineThreads(nice)
  const timer = setInterval(() => deprioritizeEngineThreads(nice), everyMs)
  timer.unref()
  return () => clearInterval(timer)
}
