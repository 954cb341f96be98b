/**
 * What the cross-process machinery costs `/flags` (#23): every process on one PostgreSQL database, each with its
 * own data dir, the same 50 flags and 2,000 stored persons as `bench/flags.ts`. Measured in the same run, in
 * alternating rounds, each at 2,000 req/s by the open-loop generator (bench/paced.ts):
 * - **off**: one process with `CHANGE_NOTIFICATIONS=off` (no LISTEN connection, no revision poll): the baseline;
 * - **on**: one process with the machinery on (the default), taking the same load alone;
 * - **on ×2**: two processes with it on, 1,000 req/s each (a load balancer's round robin);
 * - **on ×2, changing**: the same while a flag of the project is edited through the first process once a second,
 *   so every second both drop the project's definitions and the second hears of it through a notification.
 * A Fastify hello-world at the same load is the floor. Goal: p50 of the machinery on ≤ 1.1× off.
 *
 * Run: `npx tsx bench/flags-cross.ts` (BENCH_PG_ADMIN: a PostgreSQL URL to create the database through, default
 * postgres://postgres@127.0.0.1:5432/postgres; BENCH_ROUNDS, default 3; BENCH_DURATION seconds, default 10;
 * BENCH_RATE requests a second, default 2,000).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PERSONS, setup } from './flags-setup.js'
import { freshDatabase, machineLine, printTable, type Server, startHelloWorld, startServer } from './lib.js'
import { type PacedResult, pacedLoad } from './paced.js'

const ADMIN = process.env.BENCH_PG_ADMIN ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10)
const RATE = Number(process.env.BENCH_RATE ?? 2000)
const HEADERS = { 'content-type': 'application/json', 'user-agent': 'posthog-node/5.70.0' }

/** A process on the shared database; the first one bootstraps it, the others read its credentials. */
async function processOn(databaseUrl: string, env: Record<string, string>, credentialsFrom?: Server) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-bench-cross-'))
  if (credentialsFrom) {
    fs.copyFileSync(path.join(credentialsFrom.dataDir, 'credentials.json'), path.join(dataDir, 'credentials.json'))
  }
  return startServer({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir, ...env })
}

const db = await freshDatabase(ADMIN)
const first = await processOn(db.url, {})
const creds = first.credentials
await setup(first.url, creds)
const api = (server: Server, method: string, route: string, body?: unknown) =>
  fetch(`${server.url}/api/projects/${creds.project_id}${route}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${creds.personal_api_key}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (r) => {
    if (r.status >= 300) throw new Error(`${method} ${route}: ${r.status} ${await r.text()}`)
    return r.json() as Promise<{ id: number }>
  })
const toggled = await api(first, 'POST', '/feature_flags/', {
  key: 'bench-edited-every-second',
  filters: { groups: [{ properties: [], rollout_percentage: 50 }] },
})
const second = await processOn(db.url, {}, first)
const off = await processOn(db.url, { CHANGE_NOTIFICATIONS: 'off' }, first)
const hello = await startHelloWorld()

const bodies = Array.from({ length: PERSONS }, (_, i) =>
  JSON.stringify({ token: creds.project_api_key, distinct_id: `person-${i}`, groups: {}, geoip_disable: true }),
)
const flagsUrl = (s: Server) => `${s.url}/flags/?v=2`
const load = (url: string, rate: number) => pacedLoad({ url, rate, durationS: DURATION_S, headers: HEADERS, bodies })
// Both halves of a split load, as one figure: their p50s and p99s weigh equally (each half is the same rate).
const merged = (a: PacedResult, b: PacedResult): PacedResult => ({
  rps: a.rps + b.rps,
  p50: (a.p50 + b.p50) / 2,
  p99: Math.max(a.p99, b.p99),
  max: Math.max(a.max, b.max),
  errors: a.errors + b.errors,
})

for (const s of [first, second, off]) {
  await pacedLoad({ url: flagsUrl(s), rate: 1000, durationS: 2, headers: HEADERS, bodies })
}
await pacedLoad({ url: hello.url, rate: 1000, durationS: 1, headers: HEADERS, bodies: ['{}'] })

const results: Record<string, PacedResult[]> = {
  'hello-world': [],
  off: [],
  on: [],
  'on ×2': [],
  'on ×2, changing': [],
}
let edits = 0
for (let round = 0; round < ROUNDS; round++) {
  results['hello-world'].push(await load(hello.url, RATE))
  results.off.push(await load(flagsUrl(off), RATE))
  results.on.push(await load(flagsUrl(first), RATE))
  const [a, b] = await Promise.all([load(flagsUrl(first), RATE / 2), load(flagsUrl(second), RATE / 2)])
  results['on ×2'].push(merged(a, b))
  let stop = false
  const editing = (async () => {
    while (!stop) {
      edits++
      await api(first, 'PATCH', `/feature_flags/${toggled.id}/`, {
        filters: { groups: [{ properties: [], rollout_percentage: 40 + (edits % 20) }] },
      })
      await new Promise((r) => setTimeout(r, 1000))
    }
  })()
  const [c, d] = await Promise.all([load(flagsUrl(first), RATE / 2), load(flagsUrl(second), RATE / 2)])
  stop = true
  await editing
  results['on ×2, changing'].push(merged(c, d))
  console.log(`round ${round + 1} of ${ROUNDS} done (${os.loadavg()[0].toFixed(1)} load)`)
}

hello.stop()
for (const s of [first, second, off]) await s.stop()
await db.drop()

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]
const ms = (n: number) => n.toFixed(2)
const p50Off = median(results.off.map((r) => r.p50))
const rows: [string, string][] = [machineLine()]
for (const [name, runs] of Object.entries(results)) {
  const p50 = median(runs.map((r) => r.p50))
  const p99 = median(runs.map((r) => r.p99))
  const errors = runs.reduce((n, r) => n + r.errors, 0)
  const ratio = name === 'hello-world' ? '' : `, p50 ${(p50 / p50Off).toFixed(2)}× off`
  rows.push([
    `${name}: p50 / p99 (ms), median of ${runs.length}`,
    `${ms(p50)} / ${ms(p99)} (runs ${runs.map((r) => ms(r.p50)).join(', ')}; ${errors} failed${ratio})`,
  ])
}
rows.push(['flag edits during the "changing" rounds', String(edits)])
rows.push([
  'load average at the end',
  os
    .loadavg()
    .map((n) => n.toFixed(1))
    .join(' '),
])
printTable(`/flags across processes on PostgreSQL, ${RATE} req/s, ${DURATION_S} s a round`, rows)
