// The embedded engine starts on a worker thread (src/storage/events/engine-thread.ts): the library is loaded and
// the engine's server started there, not on the event loop; the event store's sessions then attach to it and work
// as before, and closing the store ends the worker. (How long the event loop stalls is in docs/benchmarks.md:
// timing it here would only measure the machine's load.)
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { chdbConnectionArgs } from '../../src/storage/events/chdb-args.js'
import { startEngineOnWorker } from '../../src/storage/events/engine-thread.js'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-engine-thread-'))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const libraryMapped = () => fs.readFileSync('/proc/self/maps', 'utf8').includes('/libchdb.so')
const threads = () => fs.readdirSync('/proc/self/task').length

it.skipIf(process.platform !== 'linux')(
  'starts the engine on a worker; the main thread then opens its sessions on it, and closing ends the worker',
  async () => {
    const require = createRequire(import.meta.url)
    const chdbEntry = require.resolve('chdb')
    // This file's process has not loaded the engine yet (vitest runs each file in its own process).
    expect(libraryMapped()).toBe(false)
    const onWorker = await startEngineOnWorker(dir, chdbConnectionArgs({}))
    expect(onWorker.started).toBe(true)
    // The library is in the process, loaded by the worker: this thread has not required chdb.
    expect(libraryMapped()).toBe(true)
    expect(require.cache[chdbEntry]).toBeUndefined()

    const { createChdbEventStore } = await import('../../src/storage/events/chdb.js')
    const store = createChdbEventStore(dir, 1, { afterClose: onWorker.release })
    await store.query('CREATE TABLE t (n UInt32) ENGINE = MergeTree ORDER BY n')
    await store.query('INSERT INTO t SELECT number FROM numbers(10)')
    // 0 + 1 + … + 9
    expect((await store.query<[number]>('SELECT sum(n) FROM t')).rows).toEqual([[45]])
    const withWorker = threads()
    await store.close()
    // The worker's thread is gone once the store has closed (and the engine's with the last session).
    expect(threads()).toBeLessThan(withWorker)
    // Reopened on the main thread alone, the data written through the worker-started engine is there.
    const again = createChdbEventStore(dir, 1)
    expect((await again.query<[number]>('SELECT count(), sum(n) FROM t')).rows).toEqual([[10, 45]])
    await again.close()
  },
  120_000,
)

it('is not an error when the worker cannot start the engine: the main thread then reports the engine itself', async () => {
  // A data directory that is a file: the engine cannot start there, on the worker or anywhere.
  const file = path.join(dir, 'not-a-directory')
  fs.writeFileSync(file, 'x')
  const onWorker = await startEngineOnWorker(file, chdbConnectionArgs({}))
  expect(onWorker.started).toBe(false)
  await onWorker.release()
})

it('lets a script with nothing else running wait for the engine to start and to close (exit 0, not 13)', async () => {
  // The worker is unreferenced once the engine runs; while it starts and while it closes, whoever awaits it must
  // keep the process alive (an unreferenced worker there ended such a script with exit code 13, "unsettled
  // top-level await", before the store had opened, and again while it closed).
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-engine-thread-cli-'))
  const engineDir = path.join(dataDir, 'engine')
  try {
    const entry = path.resolve(import.meta.dirname, '../../src/storage/events/index.ts')
    const script = `
      const { openEventStore } = await import(${JSON.stringify(entry)})
      const store = openEventStore('chdb:' + ${JSON.stringify(engineDir)}, { migrate: true })
      await store.open()
      const { rows } = await store.query('SELECT 40 + 2')
      console.log('answer', rows[0][0])
      await store.close()
      console.log('closed')
    `
    const file = path.join(dataDir, 'open-and-close.mjs')
    fs.writeFileSync(file, script)
    const { spawnSync } = await import('node:child_process')
    const run = spawnSync(process.execPath, ['--import', 'tsx', file], {
      encoding: 'utf8',
      timeout: 120_000,
    })
    expect(run.stdout).toContain('answer 42')
    expect(run.stdout).toContain('closed')
    expect(run.status).toBe(0)
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}, 180_000)

it('keeps the engine for a second event store on the same directory when the first one closes', async () => {
  // Two apps in one process on one engine directory (as tests run two "processes"): the store that started the
  // engine closing first must not take the engine away from the other.
  const shared = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-engine-thread-two-'))
  const { openEventStore } = await import('../../src/storage/events/index.js')
  const first = openEventStore(`chdb:${shared}`, { migrate: true })
  await first.open()
  const second = openEventStore(`chdb:${shared}`)
  await second.open()
  await first.close()
  const answer = await Promise.race([
    second.query<[number]>('SELECT 6 * 7'),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the engine stopped answering')), 30_000)),
  ])
  expect(answer.rows).toEqual([[42]])
  await second.close()
  fs.rmSync(shared, { recursive: true, force: true })
}, 120_000)
