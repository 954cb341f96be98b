/**
 * Saved endpoints on generated events (issue #14), all measured in the same run over HTTP, p50 of BENCH_RUNS runs
 * (default 20) after one warm-up run:
 *   - a materialized endpoint answering a run with a variable, beside the same HogQL run live through the query
 *     API (`refresh: force_blocking`): the goal is a ratio of at most 0.1;
 *   - a non-materialized endpoint run with `refresh: force`, beside the plain query API with the same HogQL: the
 *     endpoint's own overhead, goal at most 1.1.
 *
 *   npx tsx bench/endpoints.ts                                   # 10M events over 30 days (BENCH_EVENTS to change)
 *   BENCH_EVENTS=1000000 BENCH_RUNS=5 npx tsx bench/endpoints.ts  # a quick run
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { buildApp } from '../src/app.js'
import { ensureDemoAccount } from '../src/bootstrap.js'
import { loadConfig } from '../src/config.js'
import { percentile, printTable } from './lib.js'

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 20)
const USERS = Math.max(1000, Math.round(EVENTS / 100))

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-endpoints-bench-'))
const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0' })
const burrow = await buildApp(config, { logger: false })
const { credentials } = await ensureDemoAccount(burrow)
const team = credentials.project_id

const user = `(cityHash64(number, 7) % ${USERS})`
const ts = `(now64(6) - toIntervalSecond(cityHash64(number, 1) % 2592000))`
let started = performance.now()
await burrow.events.exec(`
  INSERT INTO events (uuid, team_id, event, distinct_id, person_id, properties, timestamp, created_at,
                      elements_chain, \`$session_id\`, \`$window_id\`, \`$group_0\`, \`$group_1\`, \`$group_2\`,
                      \`$group_3\`, \`$group_4\`)
  SELECT generateUUIDv4(number), ${team},
    ['$pageview', '$pageview', '$pageview', '$pageview', '$pageview', '$autocapture', '$autocapture', 'signup',
     'purchase', '$pageleave'][(cityHash64(number, 2) % 10) + 1],
    concat('user-', toString(${user})),
    toUUID(concat('00000000-0000-4000-8000-', leftPad(lower(hex(${user})), 12, '0'))),
    concat('{"$browser":"', ['Chrome', 'Firefox', 'Safari', 'Edge', 'Opera'][(cityHash64(${user}) % 5) + 1],
           '","$os":"', ['Mac OS X', 'Windows', 'Linux', 'iOS', 'Android'][(number % 5) + 1], '"}'),
    ${ts}, now64(6), '', '', '', '', '', '', '', ''
  FROM numbers(${EVENTS})`)
await burrow.events.exec('OPTIMIZE TABLE events FINAL')
const generateSeconds = (performance.now() - started) / 1000

const url = await burrow.app.listen({ port: 0, host: '127.0.0.1' })
const headers = { authorization: `Bearer ${credentials.personal_api_key}`, 'content-type': 'application/json' }

async function post(pathname: string, body: unknown, expected = 200): Promise<{ ms: number; body: any }> {
  const t0 = performance.now()
  const res = await fetch(`${url}/api/projects/${team}/${pathname}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  })
  const json = await res.json()
  if (res.status !== expected) throw new Error(`${pathname}: ${res.status} ${JSON.stringify(json)}`)
  return { ms: performance.now() - t0, body: json }
}

async function p50(run: () => Promise<{ ms: number }>): Promise<number> {
  await run()
  const times: number[] = []
  for (let i = 0; i < RUNS; i++) times.push((await run()).ms)
  return percentile(
    times.sort((a, b) => a - b),
    50,
  )
}

const byBrowser =
  'SELECT properties.$browser AS browser, count() AS n, uniq(distinct_id) AS users FROM events ' +
  'WHERE event = {variables.event_name} GROUP BY browser ORDER BY browser'
const variables = { 'var-1': { variableId: 'var-1', code_name: 'event_name', value: '$pageview' } }
const liveQuery = { kind: 'HogQLQuery', query: byBrowser, variables }

await post('endpoints/', { name: 'by-browser', query: liveQuery, is_materialized: true, sync_frequency: '1hour' }, 201)
await post('endpoints/', { name: 'by-browser-live', query: liveQuery }, 201)
started = performance.now()
for (;;) {
  const res = await fetch(`${url}/api/projects/${team}/endpoints/by-browser/materialization_status/`, { headers })
  const status = (await res.json()) as { status: string; error: string }
  if (status.status === 'Completed') break
  if (status.status === 'Failed') throw new Error(`materialization failed: ${status.error}`)
  await new Promise((r) => setTimeout(r, 100))
}
const materializeSeconds = (performance.now() - started) / 1000

const check = await post('endpoints/by-browser/run/', { variables: { event_name: 'signup' } })
if (check.body.endpoint_materialized !== true) throw new Error('the materialized run did not read its table')
const live = await post('query/', {
  query: { ...liveQuery, variables: { 'var-1': { ...variables['var-1'], value: 'signup' } } },
  refresh: 'force_blocking',
})
const sameRows =
  JSON.stringify(check.body.results.map((r: unknown[]) => r.slice(0, 3))) === JSON.stringify(live.body.results)

const events = ['$pageview', 'signup', 'purchase', '$autocapture']
let i = 0
const materialized = await p50(() =>
  post('endpoints/by-browser/run/', { variables: { event_name: events[i++ % events.length] } }),
)
i = 0
const liveMs = await p50(() =>
  post('query/', {
    query: { ...liveQuery, variables: { 'var-1': { ...variables['var-1'], value: events[i++ % events.length] } } },
    refresh: 'force_blocking',
  }),
)
i = 0
const endpointLive = await p50(() =>
  post('endpoints/by-browser-live/run/', { variables: { event_name: events[i++ % events.length] }, refresh: 'force' }),
)

await burrow.close()
fs.rmSync(dataDir, { recursive: true, force: true })

const ms = (x: number) => `${x.toFixed(1)} ms`
printTable(`Saved endpoints over ${EVENTS.toLocaleString('en')} events (p50 of ${RUNS}, ${os.cpus().length} cores)`, [
  ['events generated + optimized', `${generateSeconds.toFixed(1)} s`],
  ['first materialization (schedule tick + CREATE TABLE AS SELECT)', `${materializeSeconds.toFixed(1)} s`],
  ['materialized run with a variable', ms(materialized)],
  ['same HogQL live through the query API (baseline)', ms(liveMs)],
  ['ratio materialized / live (goal ≤ 0.1)', (materialized / liveMs).toFixed(3)],
  ['non-materialized endpoint run, refresh force', ms(endpointLive)],
  ['ratio endpoint / query API (goal ≤ 1.1)', (endpointLive / liveMs).toFixed(3)],
  ['materialized rows equal the live rows', String(sameRows)],
])
