/**
 * Single-event capture of two builds, runs alternating (A B A B …), so that a busy machine weighs on both alike:
 *
 *   BENCH_BASE_ROOT=/path/to/checkout-before npx tsx bench/capture-ab.ts
 *
 * Each run starts a fresh server of one build (SQLite, or PostgreSQL with BENCH_DATABASE_URL set: a fresh database
 * per run), sends 2,000 req/s for 10 s straight after the start (5,000 users, each new on its first event), then
 * phases of known persons and of every event from a new person alternating, known first and last
 * (`bench/capture-single.ts`). Beside the p99s it reports the server's CPU time per request in each kind of phase
 * (all threads), steadier than latency when others load the machine.
 */
import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import { runQueueMs, type SingleEventFigures, singleEventPhases } from './capture-single.js'
import { freshDatabase, machineLine, printTable, realisticEvent, root, startServer, threadCpu } from './lib.js'
import { type PacedResult, pacedLoad } from './paced.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const PHASE_S = Number(process.env.BENCH_DURATION ?? 10)
const RATE = 2000
const pgUrl = process.env.BENCH_DATABASE_URL
const builds: [string, string][] = [
  ['before', process.env.BENCH_BASE_ROOT ?? ''],
  ['after', process.env.BENCH_NEW_ROOT ?? root],
]
if (!builds[0][1]) throw new Error('BENCH_BASE_ROOT: a checkout of the build to compare with')

async function run(cwd: string) {
  const db = pgUrl ? await freshDatabase(pgUrl) : undefined
  const server = await startServer(db ? { DATABASE_URL: db.url } : {}, [], cwd)
  const { child, dataDir } = server
  const port = Number(new URL(server.url).port)
  const token = server.credentials.project_api_key
  const url = `http://127.0.0.1:${port}/i/v0/e/`
  const pid = child.pid as number
  if (BATCH_RATE > 0) return batchRun(port, token, pid, child, dataDir, db)
  const figures = await singleEventPhases({ url, token, pid, rate: RATE, phaseS: PHASE_S })
  child.kill('SIGTERM')
  await new Promise((r) => child.once('exit', r))
  fs.rmSync(dataDir, { recursive: true, force: true })
  await db?.drop()
  return figures
}

/**
 * BENCH_BATCH_RATE=<events/s>: batches of 50 at that fixed rate (paced) for BENCH_DURATION seconds after a short
 * warm-up; the same work for both builds, so their CPU time per event compares (and the batch p50 / p99).
 */
async function batchRun(
  port: number,
  token: string,
  pid: number,
  child: ChildProcess,
  dataDir: string,
  db: { drop: () => Promise<void> } | undefined,
) {
  const url = `http://127.0.0.1:${port}/batch/`
  const headers = { 'content-type': 'application/json' }
  const rate = Math.round(BATCH_RATE / 50)
  let n = 0
  const bodies = (count: number) =>
    Array.from({ length: count }, () =>
      JSON.stringify({ api_key: token, batch: Array.from({ length: 50 }, () => realisticEvent(n++, token)) }),
    )
  await pacedLoad({ url, rate: 50, durationS: 2, headers, bodies: bodies(100) })
  const list = bodies(rate * PHASE_S)
  const before = threadCpu(pid)
  const waited = runQueueMs(pid)
  const started = performance.now()
  const result = await pacedLoad({ url, rate, durationS: PHASE_S, headers, bodies: list })
  const waitedMsPerS = (runQueueMs(pid) - waited) / ((performance.now() - started) / 1000)
  const after = threadCpu(pid)
  child.kill('SIGTERM')
  await new Promise((r) => child.once('exit', r))
  fs.rmSync(dataDir, { recursive: true, force: true })
  await db?.drop()
  const events = rate * PHASE_S * 50
  const per = (k: 'main' | 'node' | 'engine') => ((after[k] - before[k]) * 1e6) / events
  return { batch: { ...result, main: per('main'), node: per('node'), engine: per('engine'), waitedMsPerS } }
}

const BATCH_RATE = Number(process.env.BENCH_BATCH_RATE ?? 0)
const rows: [string, string][] = [machineLine(), ['metadata store', pgUrl ? 'PostgreSQL' : 'SQLite']]
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
type SingleRun = SingleEventFigures
const figures = new Map<string, SingleRun[]>()
const batchFigures = new Map<
  string,
  (PacedResult & { main: number; node: number; engine: number; waitedMsPerS: number })[]
>()
for (let round = 1; round <= ROUNDS; round++) {
  for (const [name, cwd] of round % 2 === 1 ? builds : [...builds].reverse()) {
    const load = machineLine()[1]
    const r = await run(cwd)
    if ('batch' in r) {
      const b = r.batch
      batchFigures.set(name, [...(batchFigures.get(name) ?? []), b])
      rows.push([
        `round ${round}, ${name} (${load})`,
        `batches p50 ${b.p50.toFixed(1)} / p99 ${b.p99.toFixed(1)} ms; CPU µs/event request thread ` +
          `${b.main.toFixed(1)}, node threads ${b.node.toFixed(1)}, engine threads ${b.engine.toFixed(1)}; ` +
          `request thread waiting for a core ${b.waitedMsPerS.toFixed(0)} ms/s`,
      ])
      continue
    }
    figures.set(name, [...(figures.get(name) ?? []), r])
    const cpu = (kind: string) => median(r.phases.filter((p) => p.kind === kind).map((p) => p.cpuMicros)).toFixed(0)
    rows.push([
      `round ${round}, ${name} (${load})`,
      `p99 after start ${r.afterStart.p99.toFixed(1)}, known ${r.known.p99.toFixed(1)}, new ${r.fresh.p99.toFixed(1)} ms ` +
        `(new/known ${r.ratio.toFixed(2)}; phases ${r.phases
          .slice(1)
          .map((p) => `${p.kind} ${p.p99.toFixed(1)}`)
          .join(', ')}); CPU µs/request known ${cpu('known')}, new ${cpu('new')}`,
    ])
  }
}
for (const [name, list] of figures) {
  const cpu = (kind: string) =>
    median(list.flatMap((r) => r.phases.filter((p) => p.kind === kind).map((p) => p.cpuMicros)))
  rows.push([
    `${name}: medians`,
    `p99 after start ${median(list.map((r) => r.afterStart.p99)).toFixed(1)}, known ${median(list.map((r) => r.known.p99)).toFixed(1)}, ` +
      `new ${median(list.map((r) => r.fresh.p99)).toFixed(1)} ms; new/known ${median(list.map((r) => r.ratio)).toFixed(2)}; ` +
      `CPU µs/request known ${cpu('known').toFixed(0)}, new ${cpu('new').toFixed(0)}`,
  ])
}
for (const [name, list] of batchFigures) {
  rows.push([
    `${name}: medians`,
    `batches p50 ${median(list.map((b) => b.p50)).toFixed(1)} / p99 ${median(list.map((b) => b.p99)).toFixed(1)} ms; ` +
      `CPU µs/event request thread ${median(list.map((b) => b.main)).toFixed(1)}, node threads ` +
      `${median(list.map((b) => b.node)).toFixed(1)}, engine threads ${median(list.map((b) => b.engine)).toFixed(1)}; ` +
      `request thread waiting for a core ${median(list.map((b) => b.waitedMsPerS)).toFixed(0)} ms/s`,
  ])
}
rows.push(['machine after', machineLine()[1]])
printTable('Single-event capture, two builds alternating', rows)
