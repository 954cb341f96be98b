/**
 * Query latency on generated events: a 30-day daily trend and a property breakdown through the HTTP query API,
 * each against the same hand-written ClickHouse SQL on the same engine in the same run; and compile time.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { buildApp } from '../src/app.js'
import { ensureDemoAccount } from '../src/bootstrap.js'
import { loadConfig } from '../src/config.js'
import { compileHogQL } from '../src/hogql/index.js'
import { percentile, printTable } from './lib.js'

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 30)

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-query-bench-'))
const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0' })
const burrow = await buildApp(config, { logger: false })
const { credentials } = await ensureDemoAccount(burrow)
const team = credentials.project_id

let started = performance.now()
await burrow.events.exec(`
  INSERT INTO events (uuid, team_id, event, distinct_id, person_id, properties, timestamp, created_at,
                      elements_chain, \`$session_id\`, \`$window_id\`, \`$group_0\`, \`$group_1\`, \`$group_2\`,
                      \`$group_3\`, \`$group_4\`)
  SELECT generateUUIDv4(number), ${team},
    ['$pageview', '$pageview', '$pageview', 'signup', 'purchase', '$autocapture'][(number % 6) + 1],
    concat('user-', toString(number % 100000)),
    toUUID('00000000-0000-0000-0000-000000000000'),
    concat('{"$browser":"', ['Chrome', 'Firefox', 'Safari', 'Edge'][(cityHash64(number) % 4) + 1],
           '","$os":"', ['Mac OS X', 'Windows', 'Linux', 'iOS', 'Android'][(number % 5) + 1],
           '","$current_url":"https://shop.example.com/p/', toString(number % 500),
           '","plan":"', ['free', 'pro'][(number % 2) + 1], '","cart_value":', toString(number % 1000), '}'),
    now64(6) - toIntervalSecond(cityHash64(number, 1) % 2592000),
    now64(6), '', concat('s', toString(intDiv(number, 20))), '', '', '', '', '', ''
  FROM numbers(${EVENTS})`)
const generateSeconds = (performance.now() - started) / 1000
// Background merges would otherwise compete with the measured queries; a long-running service has them done.
started = performance.now()
await burrow.events.exec('OPTIMIZE TABLE events FINAL')
const optimizeSeconds = (performance.now() - started) / 1000

const url = await burrow.app.listen({ port: 0, host: '127.0.0.1' })
const auth = { authorization: `Bearer ${credentials.personal_api_key}`, 'content-type': 'application/json' }

async function viaApi(query: string): Promise<number> {
  const t0 = performance.now()
  const res = await fetch(`${url}/api/projects/${team}/query/`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ query: { kind: 'HogQLQuery', query }, refresh: 'force_blocking', name: 'bench' }),
  })
  const body = (await res.json()) as { results?: unknown[] }
  if (res.status !== 200 || !Array.isArray(body.results))
    throw new Error(`query failed: ${res.status} ${JSON.stringify(body)}`)
  return performance.now() - t0
}

async function direct(sql: string): Promise<number> {
  const t0 = performance.now()
  // The API runs every query's threads at nice 19 (requests and inserts first); the hand-written SQL gets the same
  // priority, so that the ratio measures the compiler and the API, not the priority (they differ on a busy machine).
  await burrow.events.query(sql, { params: { team }, settings: { os_thread_priority: 19 } })
  return performance.now() - t0
}

async function measure(run: () => Promise<number>): Promise<number> {
  await run() // warm caches once
  const times: number[] = []
  for (let i = 0; i < RUNS; i++) times.push(await run())
  return percentile(
    times.sort((a, b) => a - b),
    50,
  )
}

const trendHogQL = `SELECT toStartOfDay(timestamp) AS day, count() AS c FROM events
  WHERE event = '$pageview' AND timestamp >= now() - INTERVAL 30 DAY GROUP BY day ORDER BY day`
const trendSql = `SELECT toStartOfDay(timestamp) AS day, count() AS c FROM events
  WHERE team_id = {team:Int64} AND event = '$pageview' AND timestamp >= now() - INTERVAL 30 DAY
  GROUP BY day ORDER BY day`
const breakdownHogQL = `SELECT properties.$browser AS browser, count() AS c FROM events
  WHERE timestamp >= now() - INTERVAL 30 DAY GROUP BY browser ORDER BY c DESC`
// $browser has a materialized column: a developer who knows the table reads it; one who does not parses the JSON.
const breakdownSql = `SELECT \`mat_$browser\` AS browser, count() AS c FROM events
  WHERE team_id = {team:Int64} AND timestamp >= now() - INTERVAL 30 DAY GROUP BY browser ORDER BY c DESC LIMIT 100`
const breakdownJsonSql = `SELECT JSONExtractString(properties, '$browser') AS browser, count() AS c FROM events
  WHERE team_id = {team:Int64} AND timestamp >= now() - INTERVAL 30 DAY GROUP BY browser ORDER BY c DESC LIMIT 100`

const trendApi = await measure(() => viaApi(trendHogQL))
const trendDirect = await measure(() => direct(trendSql))
const breakdownApi = await measure(() => viaApi(breakdownHogQL))
const breakdownDirect = await measure(() => direct(breakdownSql))
const breakdownJson = await measure(() => direct(breakdownJsonSql))

const ctx = { teamId: team, timezone: 'UTC' }
for (let i = 0; i < 2000; i++) compileHogQL(breakdownHogQL, ctx)
started = performance.now()
const COMPILES = 20_000
for (let i = 0; i < COMPILES; i++) compileHogQL(i % 2 ? trendHogQL : breakdownHogQL, ctx)
const compileMs = (performance.now() - started) / COMPILES

await burrow.close()
fs.rmSync(dataDir, { recursive: true, force: true })

printTable(`Query benchmark (${(EVENTS / 1e6).toFixed(0)}M events over 30 days, p50 of ${RUNS} runs)`, [
  ['generate events (s)', generateSeconds.toFixed(1)],
  ['merge parts, OPTIMIZE FINAL (s)', optimizeSeconds.toFixed(1)],
  ['30-day daily trend via API (ms)', trendApi.toFixed(1)],
  ['  same hand-written SQL (ms)', trendDirect.toFixed(1)],
  ['  ratio', (trendApi / trendDirect).toFixed(2)],
  ['$browser breakdown via API (ms)', breakdownApi.toFixed(1)],
  ['  same hand-written SQL, materialized column (ms)', breakdownDirect.toFixed(1)],
  ['  ratio', (breakdownApi / breakdownDirect).toFixed(2)],
  ['  hand-written SQL with JSONExtractString (ms)', breakdownJson.toFixed(1)],
  ['  ratio', (breakdownApi / breakdownJson).toFixed(2)],
  ['HogQL compile time, typical query (ms)', compileMs.toFixed(3)],
])
