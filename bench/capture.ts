/**
 * Capture throughput and latency, each figure against a baseline measured in the same run.
 * 1. Throughput, BENCH_ROUNDS (3) alternating rounds, medians reported: in each round
 *    a. capture: ~1 KB posthog-js events in batches of 50 from 32 connections (wrk); afterwards every
 *       acknowledged event must be counted in the store;
 *    b. the engine alone (`bench/capture-engine.ts`, a process of its own): the same rows, encoded as capture
 *       encodes them before the clock starts, inserted as TabSeparated into the real events schema;
 *    c. a Fastify route that only parses the same `/batch/` JSON (`bench/capture-parse-only.ts`), same load.
 * 2. Batch latency at 80 % of the median maximum (paced, open loop): p99 against p50.
 * 3. Single-event capture at 2,000 req/s (paced): the first 10 s after a start (every user new at first), then
 *    phases of known persons and of every event from a new person alternating, known first and last
 *    (`bench/capture-single.ts`, which says why the goal's figure pools them); on SQLite, and on PostgreSQL when
 *    BENCH_DATABASE_URL is reachable (default postgres://postgres@127.0.0.1:5432/test; BENCH_PG=0 skips it).
 *
 * BENCH_PARTS (default `throughput,batch,single`) picks parts; BENCH_PROFILE=<dir> writes a CPU profile of the
 * server of each throughput round (summarise it with `bench/capture-profile.ts`).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { migrateEventStore, openEventStore } from '../src/storage/events/index.js'
import type { EngineFigure } from './capture-engine.js'
import { type Phase, singleEventPhases } from './capture-single.js'
import {
  freshDatabase,
  machineLine,
  percentile,
  printTable,
  realisticEvent,
  root,
  startServer,
  threadCpu,
} from './lib.js'
import { pacedLoad } from './paced.js'
import { FRESH_UUID, maxLoad } from './wrk.js'

const DURATION_S = Number(process.env.BENCH_DURATION ?? 20)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const BATCH = 50
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const ENGINE_ROWS_PER_INSERT = Number(process.env.BENCH_ENGINE_ROWS ?? 10_000)
const ENGINE_TOTAL_ROWS = Number(process.env.BENCH_ENGINE_TOTAL ?? 200_000)
const PARTS = new Set((process.env.BENCH_PARTS ?? 'throughput,batch,single').split(','))
const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

const load = () => machineLine()[1]
const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  )

async function countEvents(dataDir: string): Promise<number> {
  const store = openEventStore(`chdb:${path.join(dataDir, 'chdb')}`)
  await migrateEventStore(store)
  const result = await store.query<[number]>('SELECT count() FROM events')
  await store.close()
  return result.rows[0][0]
}

/** `/batch/` bodies of 50 events with a fresh-uuid marker in each (wrk writes a new uuid there per request). */
function batchBodies(token: string, count: number, markUuids: boolean): string[] {
  let n = 0
  return Array.from({ length: count }, () =>
    JSON.stringify({
      api_key: token,
      batch: Array.from({ length: BATCH }, () => {
        const event = realisticEvent(n++, token)
        return markUuids ? { ...event, uuid: FRESH_UUID } : event
      }),
    }),
  )
}

async function captureThroughput(round: number) {
  const profileDir = process.env.BENCH_PROFILE ? path.join(process.env.BENCH_PROFILE, `round-${round}`) : undefined
  const server = await startServer({}, [
    ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    ...(process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []),
  ])
  const token = server.credentials.project_api_key
  const bodies = batchBodies(token, 200, true)
  const pid = server.child.pid as number
  const cpuBefore = threadCpu(pid)
  const result = await maxLoad({
    url: `${server.url}/batch/`,
    durationS: DURATION_S,
    connections: CONNECTIONS,
    headers: { 'content-type': 'application/json' },
    bodies,
  })
  const cpuAfter = threadCpu(pid)
  await server.stop()
  const acknowledged = (result.requests - result.non2xx) * BATCH
  const stored = await countEvents(server.dataDir)
  fs.rmSync(server.dataDir, { recursive: true, force: true })
  return {
    eventsPerSecond: acknowledged / DURATION_S,
    acknowledged,
    stored,
    errors: result.errors,
    p50: result.p50,
    p99: result.p99,
    profileDir,
    /** CPU µs per acknowledged event: the request thread, Node's other threads, the engine's threads. */
    cpuMicros: {
      main: ((cpuAfter.main - cpuBefore.main) * 1e6) / acknowledged,
      node: ((cpuAfter.node - cpuBefore.node) * 1e6) / acknowledged,
      engine: ((cpuAfter.engine - cpuBefore.engine) * 1e6) / acknowledged,
    },
  }
}

function engineCeiling(): EngineFigure {
  const out = execFileSync(
    process.execPath,
    [
      '--import',
      'tsx',
      'bench/capture-engine.ts',
      String(ENGINE_ROWS_PER_INSERT),
      String(ENGINE_TOTAL_ROWS),
      ...(process.env.BENCH_ENGINE_VARIANTS ?? 'tsv').split(' '),
    ],
    { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  )
  const figures = out
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as EngineFigure)
  // The first variant is what capture sends; others are printed for comparison.
  for (const f of figures.slice(1)) {
    process.stderr.write(
      `  engine variant ${f.variant}: ${f.rowsPerSecond.toFixed(0)} rows/s, ${f.cpuMicrosPerRow} µs\n`,
    )
  }
  return figures[0]
}

async function parseOnly(): Promise<number> {
  const port = 20_000 + Math.floor(Math.random() * 5000)
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'bench/capture-parse-only.ts'], {
    cwd: root,
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d) => String(d).includes('listening') && resolve())
    child.once('exit', (code) => reject(new Error(`parse-only server exited (${code})`)))
  })
  const result = await maxLoad({
    url: `http://127.0.0.1:${port}/batch/`,
    durationS: Math.min(DURATION_S, 10),
    connections: CONNECTIONS,
    headers: { 'content-type': 'application/json' },
    bodies: batchBodies('phc_parse_only', 200, true),
  })
  child.kill('SIGTERM')
  await new Promise((r) => child.once('exit', r))
  return ((result.requests - result.non2xx) * BATCH) / Math.min(DURATION_S, 10)
}

/** Batches of 50 at a fixed rate (paced, open loop) after every user was seen once: p50 and p99. */
async function batchLatency(eventsPerSecond: number, durationS = 10) {
  const server = await startServer()
  const token = server.credentials.project_api_key
  const url = `${server.url}/batch/`
  const headers = { 'content-type': 'application/json' }
  // Warm-up: each of the 5,000 users once.
  await pacedLoad({ url, rate: 50, durationS: 2, headers, bodies: batchBodies(token, 100, false) })
  const rate = Math.round(eventsPerSecond / BATCH)
  const result = await pacedLoad({ url, rate, durationS, headers, bodies: batchBodies(token, rate * durationS, false) })
  await server.stop()
  fs.rmSync(server.dataDir, { recursive: true, force: true })
  return { rate, ...result }
}

async function singleEventLatency(env: Record<string, string>) {
  const server = await startServer(env)
  const figures = await singleEventPhases({
    url: `${server.url}/i/v0/e/`,
    token: server.credentials.project_api_key,
    pid: server.child.pid as number,
  })
  await server.stop()
  fs.rmSync(server.dataDir, { recursive: true, force: true })
  return figures
}

const latencies = (r: { p50: number; p99: number; max: number }) =>
  `${r.p50.toFixed(2)} / ${r.p99.toFixed(2)} / ${r.max.toFixed(1)} ms`
const rows: [string, string][] = [machineLine()]
let maxEventsPerSecond = Number(process.env.BENCH_MAX_EVENTS ?? 0)

if (PARTS.has('throughput')) {
  const rounds: { capture: Awaited<ReturnType<typeof captureThroughput>>; engine: EngineFigure; parse: number }[] = []
  for (let round = 1; round <= ROUNDS; round++) {
    const before = load()
    const capture = await captureThroughput(round)
    const engine = engineCeiling()
    const parse = await parseOnly()
    rounds.push({ capture, engine, parse })
    rows.push([
      `round ${round} (load before: ${before})`,
      `capture ${capture.eventsPerSecond.toFixed(0)} ev/s (${capture.acknowledged} acknowledged, ` +
        `${capture.stored} counted, p50/p99 ${capture.p50}/${capture.p99} ms, CPU µs/event request thread ` +
        `${capture.cpuMicros.main.toFixed(1)}, node threads ${capture.cpuMicros.node.toFixed(1)}, engine threads ` +
        `${capture.cpuMicros.engine.toFixed(1)}); engine ` +
        `${engine.rowsPerSecond.toFixed(0)} rows/s (${engine.cpuMicrosPerRow.toFixed(1)} µs CPU/row); ` +
        `parse-only ${parse.toFixed(0)} ev/s; capture/engine ${(capture.eventsPerSecond / engine.rowsPerSecond).toFixed(2)}`,
    ])
  }
  const captureRate = median(rounds.map((r) => r.capture.eventsPerSecond))
  const engineRate = median(rounds.map((r) => r.engine.rowsPerSecond))
  const parseRate = median(rounds.map((r) => r.parse))
  maxEventsPerSecond = captureRate
  rows.push(
    ['capture, acknowledged events/s (median)', captureRate.toFixed(0)],
    [`engine alone, ${ENGINE_ROWS_PER_INSERT}-row TabSeparated inserts, rows/s (median)`, engineRate.toFixed(0)],
    ['parse-only route, events/s (median)', parseRate.toFixed(0)],
    [
      'capture / engine, per round (goal ≥ 0.7)',
      rounds.map((r) => (r.capture.eventsPerSecond / r.engine.rowsPerSecond).toFixed(2)).join(' / '),
    ],
    ['capture / engine, medians', (captureRate / engineRate).toFixed(2)],
    ['capture / parse-only, medians', (captureRate / parseRate).toFixed(3)],
    [
      'every acknowledged event counted',
      rounds.every((r) => r.capture.stored >= r.capture.acknowledged) ? 'yes' : 'NO',
    ],
    ['failed requests', rounds.map((r) => r.capture.errors).join(' / ')],
  )
}

if (PARTS.has('batch')) {
  if (!maxEventsPerSecond) throw new Error('BENCH_MAX_EVENTS: the maximum events/s (or run the throughput part)')
  const before = load()
  const b = await batchLatency(0.8 * maxEventsPerSecond)
  rows.push(
    [
      `batches at 80% of max: ${b.rate} req/s × 50 (load before: ${before})`,
      `achieved ${(b.rps * 50).toFixed(0)} ev/s`,
    ],
    ['  p50 / p99 / max', latencies(b)],
    ['  p99 / p50 (goal ≤ 4)', (b.p99 / b.p50).toFixed(2)],
    ['  failed requests', String(b.errors)],
  )
}

if (PARTS.has('single')) {
  const stores: [string, Record<string, string>, (() => Promise<void>) | undefined][] = [['SQLite', {}, undefined]]
  if (process.env.BENCH_PG !== '0') {
    const db = await freshDatabase(PG_URL).catch(() => undefined)
    if (db) stores.push(['PostgreSQL', { DATABASE_URL: db.url }, db.drop])
    else rows.push(['PostgreSQL', `not reachable at ${PG_URL}: skipped`])
  }
  for (const [name, env, drop] of stores) {
    const before = load()
    const s = await singleEventLatency(env)
    await drop?.()
    const phaseLine = (p: Phase) =>
      `${p.kind} ${p.p99.toFixed(1)} (${p.cpuMicros.toFixed(0)} µs CPU/request, ${p.waitedMsPerS.toFixed(0)} ms/s waiting)`
    rows.push(
      [`${name}: single events at 2,000 req/s (load before: ${before})`, 'p50 / p99 / max'],
      ['  first 10 s after the start (goal p99 ≤ 100 ms)', latencies(s.afterStart)],
      ['  known persons, three phases pooled', latencies(s.known)],
      ['  every event a new person, two phases pooled', latencies(s.fresh)],
      ['  new / known p99, pooled (goal ≤ 3)', s.ratio.toFixed(2)],
      [
        '  new / known p99, each new phase against the known one before / after',
        s.ratioBefore.map((r, i) => `${r.toFixed(2)} / ${s.ratioAfter[i].toFixed(2)}`).join('; '),
      ],
      [
        '  p99 ms of each phase in order (server CPU per request, request thread waiting for a core)',
        s.phases.slice(1).map(phaseLine).join('; '),
      ],
      ['  failed requests', String(s.errors)],
    )
  }
}

rows.push(['machine after', load()])
printTable('Capture benchmark', rows)
