/**
 * Single-event capture of two builds, runs alternating (A B A B …), so that a busy machine weighs on both alike:
 *
 *   BENCH_BASE_ROOT=/path/to/checkout-before npx tsx bench/capture-ab.ts
 *
 * Each run starts a fresh server of one build (SQLite, or PostgreSQL with BENCH_DATABASE_URL set: a fresh database
 * per run), sends 2,000 req/s for 10 s straight after the start (5,000 users, each new on its first event), then
 * 2,000 req/s from those known persons, then 2,000 req/s where every event comes from a new person. Beside the p99
 * of each phase it reports the server's CPU time per request in the last two (all threads), steadier than
 * latency when others load the machine.
 */
import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import {
  cpuSeconds,
  freshDatabase,
  machineLine,
  printTable,
  realisticEvent,
  root,
  startServer,
  threadCpu,
} from './lib.js'
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
  const headers = { 'content-type': 'application/json' }
  const total = RATE * PHASE_S
  const known = Array.from({ length: 2 * total }, (_, i) =>
    JSON.stringify({ api_key: token, ...realisticEvent(i, token) }),
  )
  const strangers = Array.from({ length: total }, (_, i) => {
    const event = realisticEvent(i, token)
    ;(event.properties as Record<string, unknown>).distinct_id = `stranger-${i}`
    return JSON.stringify({ api_key: token, ...event })
  })
  const pid = child.pid as number
  if (BATCH_RATE > 0) return batchRun(port, token, pid, child, dataDir, db)
  const phase = async (bodies: string[]): Promise<PacedResult & { cpuMicros: number }> => {
    const before = cpuSeconds(pid)
    const result = await pacedLoad({ url, rate: RATE, durationS: PHASE_S, headers, bodies })
    return { ...result, cpuMicros: ((cpuSeconds(pid) - before) * 1e6) / total }
  }
  const afterStart = await phase(known.slice(0, total))
  const steady = await phase(known.slice(total))
  const fresh = await phase(strangers)
  child.kill('SIGTERM')
  await new Promise((r) => child.once('exit', r))
  fs.rmSync(dataDir, { recursive: true, force: true })
  await db?.drop()
  return { afterStart, steady, fresh }
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
  const result = await pacedLoad({ url, rate, durationS: PHASE_S, headers, bodies: list })
  const after = threadCpu(pid)
  child.kill('SIGTERM')
  await new Promise((r) => child.once('exit', r))
  fs.rmSync(dataDir, { recursive: true, force: true })
  await db?.drop()
  const events = rate * PHASE_S * 50
  const per = (k: 'main' | 'node' | 'engine') => ((after[k] - before[k]) * 1e6) / events
  return { batch: { ...result, main: per('main'), node: per('node'), engine: per('engine') } }
}

const BATCH_RATE = Number(process.env.BENCH_BATCH_RATE ?? 0)
const rows: [string, string][] = [machineLine(), ['metadata store', pgUrl ? 'PostgreSQL' : 'SQLite']]
type SingleRun = Exclude<Awaited<ReturnType<typeof run>>, { batch: unknown }>
const figures = new Map<string, SingleRun[]>()
const batchFigures = new Map<string, (PacedResult & { main: number; node: number; engine: number })[]>()
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
          `${b.main.toFixed(1)}, node threads ${b.node.toFixed(1)}, engine threads ${b.engine.toFixed(1)}`,
      ])
      continue
    }
    figures.set(name, [...(figures.get(name) ?? []), r])
    rows.push([
      `round ${round}, ${name} (${load})`,
      `p99 after start ${r.afterStart.p99.toFixed(1)}, known ${r.steady.p99.toFixed(1)}, new ${r.fresh.p99.toFixed(1)} ms ` +
        `(new/known ${(r.fresh.p99 / r.steady.p99).toFixed(2)}); CPU µs/request known ${r.steady.cpuMicros.toFixed(0)}, ` +
        `new ${r.fresh.cpuMicros.toFixed(0)}`,
    ])
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
for (const [name, list] of figures) {
  rows.push([
    `${name}: medians`,
    `p99 after start ${median(list.map((r) => r.afterStart.p99)).toFixed(1)}, known ${median(list.map((r) => r.steady.p99)).toFixed(1)}, ` +
      `new ${median(list.map((r) => r.fresh.p99)).toFixed(1)} ms; new/known ${median(list.map((r) => r.fresh.p99 / r.steady.p99)).toFixed(2)}; ` +
      `CPU µs/request known ${median(list.map((r) => r.steady.cpuMicros)).toFixed(0)}, new ${median(list.map((r) => r.fresh.cpuMicros)).toFixed(0)}`,
  ])
}
for (const [name, list] of batchFigures) {
  rows.push([
    `${name}: medians`,
    `batches p50 ${median(list.map((b) => b.p50)).toFixed(1)} / p99 ${median(list.map((b) => b.p99)).toFixed(1)} ms; ` +
      `CPU µs/event request thread ${median(list.map((b) => b.main)).toFixed(1)}, node threads ` +
      `${median(list.map((b) => b.node)).toFixed(1)}, engine threads ${median(list.map((b) => b.engine)).toFixed(1)}`,
  ])
}
rows.push(['machine after', machineLine()[1]])
printTable('Single-event capture, two builds alternating', rows)
