/**
 * What the cross-process person machinery costs capture, with persons on PostgreSQL: events/s of two builds of
 * Burrow, each a single process on a fresh PostgreSQL database, runs alternating (A B A B …) so that a busy machine
 * weighs on both alike.
 *
 *   BENCH_BASE_ROOT=/path/to/checkout-before BENCH_NEW_ROOT=/path/to/checkout-after npx tsx bench/capture-persons-pg.ts
 *
 * BENCH_NEW_ROOT defaults to this checkout; BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test)
 * names the server and a database to connect to while creating the per-run ones. The load: batches of 50 ~1 KB
 * posthog-js events from 32 connections; half the batches come from returning persons only (a pool of 2,000
 * distinct ids, a batch of cached persons with nothing to write), the other half have 40 returning persons and
 * 10 persons never seen before (a fresh distinct id per request: a transaction that creates persons).
 * BENCH_META=sqlite runs the same comparison on the embedded metadata store instead.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { percentile, printTable, realisticEvent, root } from './lib.js'
import { FRESH_UUID, maxLoad } from './wrk.js'

const DURATION_S = Number(process.env.BENCH_DURATION ?? 15)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)
const BATCH = 50
const RETURNING = 2_000
const BASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
/** `sqlite`: the same comparison with the embedded metadata store (one process by design). */
const onSqlite = process.env.BENCH_META === 'sqlite'
const baseRoot = process.env.BENCH_BASE_ROOT
const newRoot = process.env.BENCH_NEW_ROOT ?? root
if (!baseRoot) throw new Error('BENCH_BASE_ROOT: a checkout of the build to compare with')

async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `burrow_bench_${crypto.randomBytes(5).toString('hex')}`
  const admin = new pg.Client({ connectionString: BASE_URL })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(BASE_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: BASE_URL })
      await c.connect()
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await c.end()
    },
  }
}

/** `npm start` of the checkout at `cwd`, on a fresh data directory and PostgreSQL database. */
async function start(cwd: string, databaseUrl: string | undefined) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-bench-pg-'))
  const port = 20_000 + Math.floor(Math.random() * 5000)
  const child: ChildProcess = spawn(
    process.execPath,
    ['--max-semi-space-size=64', '--import', 'tsx', 'src/main.ts', 'start'],
    {
      cwd,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        PORT: String(port),
        LOG_LEVEL: 'error',
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  await new Promise<void>((resolve, reject) => {
    let out = ''
    child.stdout?.on('data', (d) => {
      out += d
      if (out.includes('try: curl')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`server exited (${code})`)))
  })
  const credentials = JSON.parse(fs.readFileSync(path.join(dataDir, 'credentials.json'), 'utf8'))
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid as number,
    token: credentials.project_api_key as string,
    stop: async () => {
      child.kill('SIGTERM')
      await new Promise((r) => child.once('exit', r))
      fs.rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

function bodies(token: string): string[] {
  let n = 0
  return Array.from({ length: 200 }, (_, b) =>
    JSON.stringify({
      api_key: token,
      batch: Array.from({ length: BATCH }, (_, i) => {
        const event = realisticEvent(n++, token)
        const isNew = b % 2 === 1 && i % 5 === 0
        const distinctId = isNew ? `new-${FRESH_UUID}` : `user-${(b * BATCH + i) % RETURNING}`
        return { ...event, uuid: FRESH_UUID, properties: { ...(event.properties as object), distinct_id: distinctId } }
      }),
    }),
  )
}

/** CPU seconds (user + system) a process has used so far (Linux). */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  // utime and stime are fields 14 and 15 of the whole line, in clock ticks (100 a second).
  return (Number(fields[11]) + Number(fields[12])) / 100
}

interface RunResult {
  eventsPerSecond: number
  /** Server CPU per 1,000 acknowledged events: steadier than events/s on a machine others share. */
  cpuMsPerThousand: number
  non2xx: number
  errors: number
  p99: number
}

async function run(cwd: string): Promise<RunResult> {
  const db = onSqlite ? undefined : await freshDatabase()
  const server = await start(cwd, db?.url)
  try {
    const load = bodies(server.token)
    // Every returning person exists and is cached before the measured run.
    await maxLoad({
      url: `${server.url}/batch/`,
      durationS: 3,
      connections: CONNECTIONS,
      headers: { 'content-type': 'application/json' },
      bodies: load,
    })
    const cpuBefore = cpuSeconds(server.pid)
    const result = await maxLoad({
      url: `${server.url}/batch/`,
      durationS: DURATION_S,
      connections: CONNECTIONS,
      headers: { 'content-type': 'application/json' },
      bodies: load,
    })
    const cpu = cpuSeconds(server.pid) - cpuBefore
    const events = (result.requests - result.non2xx) * BATCH
    return {
      eventsPerSecond: events / DURATION_S,
      cpuMsPerThousand: (cpu * 1000 * 1000) / Math.max(1, events),
      non2xx: result.non2xx,
      errors: result.errors,
      p99: result.p99,
    }
  } finally {
    await server.stop()
    await db?.drop()
  }
}

const base: number[] = []
const next: number[] = []
const baseCpu: number[] = []
const nextCpu: number[] = []
const rows: [string, string][] = []
for (let round = 1; round <= ROUNDS; round++) {
  for (const [label, cwd, into, intoCpu] of [
    ['before', baseRoot, base, baseCpu],
    ['after', newRoot, next, nextCpu],
  ] as const) {
    const r = await run(cwd)
    into.push(r.eventsPerSecond)
    intoCpu.push(r.cpuMsPerThousand)
    rows.push([
      `round ${round} ${label}`,
      `${Math.round(r.eventsPerSecond)} events/s, ${r.cpuMsPerThousand.toFixed(0)} CPU ms/1k events, p99 ${r.p99.toFixed(0)} ms, non-2xx ${r.non2xx}, errors ${r.errors}`,
    ])
  }
}
const median = (xs: number[]) =>
  percentile(
    [...xs].sort((x, y) => x - y),
    50,
  )
rows.push(['median before (baseline)', `${Math.round(median(base))} events/s`])
rows.push(['median after', `${Math.round(median(next))} events/s`])
rows.push(['ratio after / before', (median(next) / median(base)).toFixed(3)])
rows.push(['server CPU ms/1k events before / after', `${median(baseCpu).toFixed(0)} / ${median(nextCpu).toFixed(0)}`])
rows.push(['events per CPU second, after / before', (median(baseCpu) / median(nextCpu)).toFixed(3)])
printTable(
  `Capture with persons on ${onSqlite ? 'SQLite' : 'PostgreSQL'}, ${CONNECTIONS} connections, ${DURATION_S} s per run`,
  rows,
)
