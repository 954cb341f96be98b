/**
 * Behavioural cohort latency (issue #26): "performed `purchase` at least 3 times in the last 30 days" over generated
 * events, through the HTTP query API with `refresh: force_blocking`, beside the same question written by hand in
 * ClickHouse SQL on the same engine in the same run; p50 of BENCH_RUNS runs (default 10) after one warm-up,
 * alternating API and SQL. Two questions:
 * 1. the cohort's size — the HogQL the background calculation runs (`memberCountHogQL`: for a cohort of one
 *    behavioural filter, the count of its member list, as PostHog's cohort query joins persons only for
 *    person-property filters; `SELECT count() FROM persons WHERE id IN COHORT n`, the live persons in it, is also
 *    timed for comparison);
 * 2. a trends insight filtered by the cohort — daily purchases over 30 days by the cohort's persons.
 * For the size, the SQL the API compiles is also run directly (same settings), in the same alternation: API /
 * compiled is the query API's own cost, compiled / hand-written the cost of the generated SQL's shape. And the API's
 * fixed cost per request: a `SELECT 1` HogQLQuery through it, beside a Fastify hello-world answering a POST of the
 * same body and chDB answering `SELECT 1` (p50 of BENCH_FIXED_RUNS, default 200).
 *
 *   npx tsx bench/cohorts.ts                                    # 10M events, 100k persons
 *   BENCH_EVENTS=1000000 BENCH_RUNS=5 npx tsx bench/cohorts.ts  # a quick run
 *   BENCH_SQL=1 BENCH_RUNS=0 …                                  # also prints the generated ClickHouse SQL
 *
 * The hand-written SQL resolves persons as Burrow's answers must (the current person of each distinct id, from
 * person_distinct_ids). Both sides' answers are printed. Goal: each ratio API / SQL ≤ 1.3.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Fastify from 'fastify'
import { buildApp } from '../src/app.js'
import { ensureDemoAccount } from '../src/bootstrap.js'
import { createCohortResolver } from '../src/cohorts/resolver.js'
import { loadConfig } from '../src/config.js'
import { compileHogQL, DEFAULT_RETURNED_ROWS, memberCountHogQL } from '../src/hogql/index.js'
import { engineQueryOf } from '../src/queries/runner.js'
import { MATERIALIZED_EVENT_PROPERTIES } from '../src/storage/events/schema.js'
import { againstHandWritten, machineLine, percentile, printTable } from './lib.js'

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 10)
const FIXED_RUNS = Number(process.env.BENCH_FIXED_RUNS ?? 200)
const USERS = Math.max(1000, Math.round(EVENTS / 100))

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-cohorts-bench-'))
// the fixed-cost runs send a few hundred queries a minute: above the default per-key rate limits
const config = loadConfig({
  DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  PORT: '0',
  RATE_LIMIT_QUERIES_PER_MINUTE: '100000',
  RATE_LIMIT_QUERIES_PER_HOUR: '1000000',
})
const burrow = await buildApp(config, { logger: false })
const { credentials } = await ensureDemoAccount(burrow)
const team = credentials.project_id
const url = await burrow.app.listen({ port: 0, host: '127.0.0.1' })
const auth = { authorization: `Bearer ${credentials.personal_api_key}`, 'content-type': 'application/json' }

/** The person of user n: a fixed UUID, so events, distinct ids and persons agree without a lookup. */
const personUuid = (n: string) => `toUUID(concat('00000000-0000-4000-8000-', leftPad(lower(hex(${n})), 12, '0')))`
const user = `(cityHash64(number, 7) % ${USERS})`

let started = performance.now()
await burrow.events.exec(`
  INSERT INTO persons (team_id, id, properties, created_at, is_identified, is_deleted, version)
  SELECT ${team}, ${personUuid('number')}, '{}', now64(6) - toIntervalDay(60), 0, 0, 1 FROM numbers(${USERS})`)
await burrow.events.exec(`
  INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, is_deleted, version)
  SELECT ${team}, concat('user-', toString(number)), ${personUuid('number')}, 0, 1 FROM numbers(${USERS})`)
// 60 days of events, 3% of them purchases: a person makes ~3 purchases in 30 days on average, so about half are in.
await burrow.events.exec(`
  INSERT INTO events (uuid, team_id, event, distinct_id, person_id, properties, timestamp, created_at)
  SELECT generateUUIDv4(number), ${team},
    if(cityHash64(number, 2) % 100 < 3, 'purchase', ['$pageview', '$pageview', '$pageview', 'signup'][(cityHash64(number, 3) % 4) + 1]),
    concat('user-', toString(${user})), ${personUuid(user)}, '{}',
    now64(6) - toIntervalSecond(cityHash64(number, 1) % 5184000), now64(6)
  FROM numbers(${EVENTS})`)
const generateSeconds = (performance.now() - started) / 1000
started = performance.now()
await burrow.events.exec('OPTIMIZE TABLE events FINAL')
const optimizeSeconds = (performance.now() - started) / 1000

const created = await fetch(`${url}/api/projects/${team}/cohorts/`, {
  method: 'POST',
  headers: auth,
  body: JSON.stringify({
    name: 'Repeat buyers',
    filters: {
      properties: {
        type: 'AND',
        values: [
          {
            type: 'behavioral',
            event_type: 'events',
            key: 'purchase',
            value: 'performed_event_multiple',
            operator: 'gte',
            operator_value: 3,
            time_value: 30,
            time_interval: 'day',
          },
        ],
      },
    },
  }),
})
if (created.status !== 201) throw new Error(`cohort: ${created.status} ${await created.text()}`)
const cohortId = ((await created.json()) as { id: number }).id

const printed = new Set<unknown>()
async function viaApi(query: Record<string, unknown>, answer: (body: Record<string, unknown>) => string) {
  const t0 = performance.now()
  const res = await fetch(`${url}/api/projects/${team}/query/`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ query, refresh: 'force_blocking' }),
  })
  const body = (await res.json()) as Record<string, unknown>
  if (res.status !== 200) throw new Error(`${query.kind}: ${res.status} ${JSON.stringify(body)}`)
  if (process.env.BENCH_SQL === '1' && !printed.has(query)) {
    printed.add(query)
    process.stdout.write(`\n-- generated ClickHouse SQL\n${body.clickhouse ?? Object.keys(body).join(', ')}\n`)
  }
  return { ms: performance.now() - t0, answer: answer(body) }
}

async function direct(sql: string) {
  const t0 = performance.now()
  // The API runs every query's threads at nice 19; the hand-written SQL gets the same priority.
  const result = await burrow.events.query<unknown[]>(sql, { params: { team }, settings: { os_thread_priority: 19 } })
  return { ms: performance.now() - t0, answer: String(result.rows.reduce((s, r) => s + Number(r[r.length - 1]), 0)) }
}

/** The current person of every distinct id of the project (what Burrow's `person_id` means). */
const PDI = `(SELECT distinct_id, argMax(person_id, version) AS person_id FROM person_distinct_ids
  WHERE team_id = {team:Int64} GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0)`
/** The cohort by hand: persons with at least 3 purchases in the last 30 days. */
const MEMBERS = `SELECT p.person_id FROM events AS e INNER JOIN ${PDI} AS p ON e.distinct_id = p.distinct_id
  WHERE e.team_id = {team:Int64} AND e.event = 'purchase' AND e.timestamp >= now() - INTERVAL 30 DAY
  GROUP BY p.person_id HAVING count() >= 3`
const since30 = 'toStartOfDay(now() - INTERVAL 30 DAY)'
const resolver = createCohortResolver(burrow.stores.cohorts, (teamId) => burrow.services.actions.hogql(teamId))
/** The live persons in the cohort: what the calculation asked before it counted a lone filter's member list. */
const PERSONS_FORM = `SELECT count() FROM persons WHERE id IN COHORT ${cohortId}`

const cases: {
  name: string
  query: Record<string, unknown>
  answer: (body: Record<string, unknown>) => string
  sql: string
}[] = [
  {
    name: 'cohort size (the calculation)',
    query: { kind: 'HogQLQuery', query: memberCountHogQL(cohortId, await resolver(team)) },
    answer: (body) => String((body.results as unknown[][])[0][0]),
    sql: `SELECT count() FROM (${MEMBERS})`,
  },
  {
    name: 'daily purchases of the cohort, 30 days',
    query: {
      kind: 'TrendsQuery',
      series: [{ kind: 'EventsNode', event: 'purchase', math: 'total' }],
      dateRange: { date_from: '-30d' },
      interval: 'day',
      properties: [{ type: 'cohort', key: 'id', value: cohortId }],
    },
    answer: (body) => String((body.results as { data: number[] }[])[0].data.reduce((a, b) => a + b, 0)),
    sql: `SELECT toStartOfDay(e.timestamp) AS day, count()
      FROM events AS e INNER JOIN ${PDI} AS p ON e.distinct_id = p.distinct_id
      WHERE e.team_id = {team:Int64} AND e.event = 'purchase' AND e.timestamp >= ${since30}
        AND p.person_id IN (${MEMBERS})
      GROUP BY day`,
  },
]

const results: [string, string][] = []
const p50 = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  )

// The size four ways, alternating: the API, the SQL it compiles run directly, the hand-written SQL, and the API
// asked for the live persons in the cohort (the calculation's question before it counted the member list).
{
  const [size] = cases
  const compiled = compileHogQL(size.query.query as string, {
    teamId: team,
    timezone: 'UTC',
    cohorts: await resolver(team),
    limit: DEFAULT_RETURNED_ROWS,
    limitPlusOne: true,
    materializedEventProperties: MATERIALIZED_EVENT_PROPERTIES,
  })
  const engine = engineQueryOf(compiled.sql, config.queryLimits)
  const runCompiled = async () => {
    const t0 = performance.now()
    const result = await burrow.events.query<unknown[]>(engine.sql, {
      params: compiled.params,
      settings: engine.settings,
    })
    return { ms: performance.now() - t0, answer: String(result.rows[0][0]) }
  }
  const personsForm = { kind: 'HogQLQuery', query: PERSONS_FORM }
  const first = [
    await viaApi(size.query, size.answer),
    await runCompiled(),
    await direct(size.sql),
    await viaApi(personsForm, size.answer),
  ]
  const times: number[][] = [[], [], [], []]
  for (let i = 0; i < RUNS; i++) {
    times[0].push((await viaApi(size.query, size.answer)).ms)
    times[1].push((await runCompiled()).ms)
    times[2].push((await direct(size.sql)).ms)
    times[3].push((await viaApi(personsForm, size.answer)).ms)
  }
  const [api, compiledMs, hand, persons] = times.map(p50)
  results.push(
    [`${size.name}: API p50`, `${api.toFixed(0)} ms`],
    [`${size.name}: compiled SQL p50`, `${compiledMs.toFixed(0)} ms`],
    [`${size.name}: hand-written SQL p50`, `${hand.toFixed(0)} ms`],
    [`${size.name}: ratio (goal ≤ 1.3)`, (api / hand).toFixed(2)],
    [
      `${size.name}: API / compiled, compiled / hand`,
      `${(api / compiledMs).toFixed(2)}, ${(compiledMs / hand).toFixed(2)}`,
    ],
    [`${size.name}: the live persons in it, API p50`, `${persons.toFixed(0)} ms (${(persons / hand).toFixed(2)})`],
    [
      `${size.name}: answers`,
      `API ${first[0].answer}; compiled ${first[1].answer}; SQL ${first[2].answer}; live persons ${first[3].answer}`,
    ],
  )
}
for (const c of cases.slice(1)) {
  results.push(
    ...(await againstHandWritten(
      c.name,
      () => viaApi(c.query, c.answer),
      () => direct(c.sql),
      RUNS,
    )),
  )
}

// The API's fixed cost per request: SELECT 1 through it, a Fastify hello-world, chDB alone; alternating.
{
  const hello = Fastify({ logger: false })
  hello.post('/hello', async () => ({ results: [[1]] }))
  const helloUrl = await hello.listen({ port: 0, host: '127.0.0.1' })
  const body = JSON.stringify({ query: { kind: 'HogQLQuery', query: 'SELECT 1' }, refresh: 'force_blocking' })
  const timed = async (work: () => Promise<unknown>) => {
    const t0 = performance.now()
    await work()
    return performance.now() - t0
  }
  const ways: [string, () => Promise<unknown>][] = [
    ['SELECT 1 through the API', () => viaApi({ kind: 'HogQLQuery', query: 'SELECT 1' }, () => '')],
    [
      'Fastify hello-world',
      async () =>
        (
          await fetch(`${helloUrl}/hello`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        ).json(),
    ],
    ['chDB SELECT 1', () => burrow.events.query('SELECT 1', { settings: { os_thread_priority: 19 } })],
  ]
  const times: number[][] = ways.map(() => [])
  for (let i = 0; i < 10; i++) for (const [, work] of ways) await work()
  for (let i = 0; i < FIXED_RUNS; i++) for (let w = 0; w < ways.length; w++) times[w].push(await timed(ways[w][1]))
  for (const [w, [name]] of ways.entries()) results.push([`fixed cost: ${name} p50`, `${p50(times[w]).toFixed(2)} ms`])
  await hello.close()
}

printTable('Behavioural cohort benchmark', [
  machineLine(),
  ['events / persons', `${EVENTS} / ${USERS}`],
  ['generated / optimized in', `${generateSeconds.toFixed(1)} s / ${optimizeSeconds.toFixed(1)} s`],
  ['runs per figure', String(RUNS)],
  ...results,
])
await burrow.close()
fs.rmSync(dataDir, { recursive: true, force: true })
