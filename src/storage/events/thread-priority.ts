// The embedded engine's own threads (merges, insert and query pools, schedulers) run in this process beside the
// one thread that serves requests, and so do libuv's pool threads, on which chDB runs each insert and query call.
// Under load they can keep that thread off the CPU for tens of milliseconds, which is request latency; lowering
// their priority (a larger nice value, which needs no privilege) lets the request thread run first whenever both
// want a core, and costs nothing when the machine is idle.
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

/** How many threads libuv's pool has (its default, unless the environment says otherwise). */
const POOL_SIZE = Math.max(1, Number(process.env.UV_THREADPOOL_SIZE) || 4)

/**
 * The thread ids of libuv's thread pool, where the engine's inserts and queries run (chDB's async calls are pool
 * work). The pool's threads are named `node` like the request thread, so they are found by running small
 * file-system calls on the pool: each reads `/proc/thread-self`, which names the thread that runs it. One thread
 * may take several calls, so rounds go on until every thread of the pool has answered (a thread busy with a long
 * insert answers only once it is done: at most `rounds` rounds).
 */
export async function poolThreadIds(rounds = 20): Promise<Set<number>> {
  const tids = new Set<number>()
  for (let round = 0; round < rounds && tids.size < POOL_SIZE; round++) {
    const links = await Promise.allSettled(
      Array.from({ length: 2 * POOL_SIZE }, () => fs.promises.readlink('/proc/thread-self')),
    )
    for (const link of links) {
      if (link.status !== 'fulfilled') continue
      const tid = Number(link.value.slice(link.value.lastIndexOf('/') + 1))
      // Never the request thread (a pool call cannot run there, but the id is checked all the same).
      if (Number.isInteger(tid) && tid !== process.pid) tids.add(tid)
    }
  }
  return tids
}

/**
 * Sets the nice value of libuv's thread-pool threads: an insert of a second's events parses and writes them on a
 * pool thread for tens to hundreds of milliseconds, at the request thread's own priority otherwise. Resolves to
 * how many were changed and how many pool threads were found.
 */
export async function deprioritizePoolThreads(nice: number): Promise<{ changed: number; found: number }> {
  const tids = await poolThreadIds()
  let changed = 0
  for (const tid of tids) {
    try {
      if (os.getPriority(tid) >= nice) continue
      os.setPriority(tid, nice)
      changed++
    } catch {
      // The thread ended, or the system refuses: best effort.
    }
  }
  return { changed, found: tids.size }
}

/**
 * Keeps engine threads (pools start threads as they need them) at the given nice value, and lowers libuv's pool
 * threads (started once, all together) until every one of them was found; returns a stop.
 */
export function keepEngineThreadsDeprioritized(nice: number, everyMs = 2_000): () => void {
  if (nice <= 0 || process.platform !== 'linux') return () => undefined
  let poolLowered = false
  const lower = () => {
    deprioritizeEngineThreads(nice)
    if (poolLowered) return
    deprioritizePoolThreads(nice).then(
      ({ found }) => {
        poolLowered = found >= POOL_SIZE
      },
      () => undefined,
    )
  }
  lower()
  const timer = setInterval(lower, everyMs)
  timer.unref()
  return () => clearInterval(timer)
}
