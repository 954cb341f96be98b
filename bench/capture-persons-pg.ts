import fs from 'node:fs'
import { cpuSeconds, freshDatabase, percentile, printTable, realisticEvent, root, startServer } from './lib.js'
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

/** `npm start` of the checkout at `cwd`, on a fresh data directory and PostgreSQL database. */
async function start(cwd: string, databaseUrl: string | undefined) {
  const server = await startServer(databaseUrl ? { DATABASE_URL: databaseUrl } : {}, [], cwd)
  return {
    url: server.url,
    pid: server.child.pid as number,
    token: server.credentials.project_api_key,
    stop: async () => {
      await server.stop()
      fs.rmSync(server.dataDir, { recursive: true, force: true })
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

interface RunResult {
  eventsPerSecond: number
  /** Server CPU per 1,000 acknowledged events: steadier than events/s on a machine others share. */
  cpuMsPerThousand: number
  non2xx: number
  errors: number
  p99: number
}

async function run(cwd: string): Promise<RunResult> {
  const db = onSqlite ? undefined : await freshDatabase(BASE_URL)
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
