/**
 * The embedded engine started on a worker thread. Starting it takes two slow steps on whichever thread does them:
 * the dynamic linker loads and relocates the engine's library (~560 MB), and the first session starts the
 * engine's server inside the process. Together ~100 ms on an idle machine and several hundred under load; on the
 * event loop, at the first capture or query of a process, they stalled every request in flight. A worker thread
 * does both; the main thread then finds the library loaded and its sessions attach to the running server
 * (under a millisecond each).
 *
 * The worker keeps its session open until released: the engine's server belongs to the session that started it,
 * so the worker closes last, after the event store's own sessions (opened on the main thread once it is ready). A worker that cannot start (no
 * worker threads, an addon that refuses them) is not an error: the main thread then starts the engine as before,
 * and reports the engine's own errors if it fails too.
 */
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

export interface EngineOnWorker {
  /** Whether the worker started the engine (false: the main thread will). */
  readonly started: boolean
  /** Closes the worker's session and lets the worker end; call after the main thread's sessions have closed. */
  release(): Promise<void>
}

// CommonJS run by the worker (eval): start the engine with the same arguments as every session, report, then
// hold the session until told to close it.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
let session
try {
  const { Session } = require(workerData.chdb)
  session = new Session(workerData.dir, { connectionArgs: workerData.connectionArgs })
  parentPort.postMessage({ ready: true })
} catch (error) {
  parentPort.postMessage({ error: String((error && error.message) || error) })
}
parentPort.once('message', () => {
  try {
    if (session) session.close()
  } finally {
    parentPort.postMessage({ closed: true })
    parentPort.close()
  }
})
`

const notStarted: EngineOnWorker = { started: false, release: async () => {} }

/**
 * One worker per engine directory in a process, however many event stores open it (tests run two apps on one
 * directory): the engine's server belongs to the session that started it, and a worker that closed its session
 * while another store still used the engine took the engine down under it. The worker lets go when the last
 * store has released it.
 */
const shared = new Map<string, { started: Promise<EngineOnWorker>; holders: number }>()

export async function startEngineOnWorker(dir: string, connectionArgs: string[]): Promise<EngineOnWorker> {
  let entry = shared.get(dir)
  if (!entry) {
    entry = { started: startWorker(dir, connectionArgs), holders: 0 }
    shared.set(dir, entry)
  }
  entry.holders++
  const mine = entry
  const onWorker = await mine.started
  let released: Promise<void> | undefined
  return {
    started: onWorker.started,
    release() {
      released ??= (async () => {
        if (--mine.holders > 0) return
        if (shared.get(dir) === mine) shared.delete(dir)
        await onWorker.release()
      })()
      return released
    },
  }
}

async function startWorker(dir: string, connectionArgs: string[]): Promise<EngineOnWorker> {
  let worker: Worker
  try {
    const chdb = createRequire(import.meta.url).resolve('chdb')
    worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { chdb, dir, connectionArgs } })
  } catch {
    return notStarted
  }
  // Held while the engine starts (someone awaits it: a command with nothing else running must not end meanwhile),
  // then never what keeps the process alive: a process that exits without closing its event store ends the engine
  // as a killed one would (its parts are on disk as each insert wrote them).
  const outcome = await new Promise<{ ready?: true; error?: string }>((resolve) => {
    worker.once('message', resolve)
    worker.once('error', (error) => resolve({ error: error.message }))
    worker.once('exit', () => resolve({ error: 'the engine worker ended before the engine started' }))
  })
  worker.unref()
  if (!outcome.ready) {
    await worker.terminate().catch(() => undefined)
    return notStarted
  }
  const ended = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
  let released: Promise<void> | undefined
  return {
    started: true,
    release() {
      released ??= (async () => {
        // Held again until it has closed its session: the caller waits for it.
        worker.ref()
        worker.postMessage('close')
        await ended
      })()
      return released
    },
  }
}
