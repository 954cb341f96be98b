import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createChdbEventStore } from '../../src/storage/events/chdb.js'
import {
  deprioritizeEngineThreads,
  deprioritizePoolThreads,
  poolThreadIds,
} from '../../src/storage/events/thread-priority.js'

const threads = () =>
  fs.readdirSync('/proc/self/task').map((tid) => ({
    tid: Number(tid),
    name: fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim(),
  }))

const niceOf = (tid: number) => {
  try {
    return os.getPriority(tid)
  } catch {
    return undefined // the thread ended
  }
}

describe.runIf(process.platform === 'linux')('engine thread priority', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-nice-'))
  const store = createChdbEventStore(dir, 1, { engineThreadNice: 7 })
  afterAll(async () => {
    await store.close()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it("lowers the engine's threads and the thread pool's, and leaves Node's other threads (the request thread first) alone", async () => {
    await store.query('SELECT count() FROM numbers(100000)')
    deprioritizeEngineThreads(7)
    await deprioritizePoolThreads(7)
    // The pool's threads, found as the lowering finds them (an fs call reads the id of the thread it runs on).
    const pool = await poolThreadIds()
    expect(pool.size).toBe(Number(process.env.UV_THREADPOOL_SIZE) || 4)
    expect(pool.has(process.pid)).toBe(false)
    const all = threads()
    const engine = all.filter((t) => t.name !== 'node')
    expect(engine.length).toBeGreaterThan(0)
    for (const t of engine) expect([7, undefined]).toContain(niceOf(t.tid))
    expect(os.getPriority(process.pid)).toBe(0)
    for (const tid of pool) expect([7, undefined]).toContain(niceOf(tid))
    for (const t of all.filter((x) => x.name === 'node' && !pool.has(x.tid))) {
      expect([0, undefined]).toContain(niceOf(t.tid))
    }
  })

  it("runs a query's threads at the query's own nicer priority, and the periodic lowering keeps it", async () => {
    // The query runs until it is killed (bounded by max_execution_time); samples are read right after each lowering
    // until a query thread at 19 has been seen several times, so a loaded machine only makes the wait longer.
    const stop = new AbortController()
    const running = store.query('SELECT sum(number) FROM numbers(100000000000)', {
      settings: { os_thread_priority: 19, max_execution_time: 30 },
      queryId: 'thread-priority-test',
      signal: stop.signal,
    })
    running.catch(() => undefined)
    let atNineteen = 0
    const deadline = Date.now() + 20_000
    while (atNineteen < 3 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50))
      deprioritizeEngineThreads(7)
      const nices = threads()
        .filter((x) => x.name !== 'node')
        .map((t) => niceOf(t.tid))
      if (nices.includes(19)) atNineteen++
    }
    stop.abort()
    await running.catch(() => undefined)
    expect(atNineteen).toBe(3)
    expect(os.getPriority(process.pid)).toBe(0)
  }, 40_000)
})
