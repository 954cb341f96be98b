/**
 * Behavioural cohort latency (issue #26): "performed `purchase` at least 3 times in the last 30 days" over generated
 * events, through the HTTP query API with `refresh: force_blocking`, beside the same question written by hand in
 * ClickHouse SQL on the same engine in the same run; p50 of BENCH_RUNS runs (default 10) after one warm-up,
 * alternating API and SQL. Two questions:
 * 1. the cohort's size — the HogQL the background calculation runs (`SELECT count() FROM persons WHERE id IN
 *    COHORT n`);
 * 2. a trends insight filtered by the cohort — daily purchases over 30 days by the cohort's persons.
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
import { buildApp } from '../src/app.js'
import { ensureDemoAccount } from '../src/bootstrap.js'
import { loadConfig } from '../src/config.js'
import { againstHandWritten, machineLine, printTable } from './lib.js'

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 10)
const USERS = Math.max(1000, Math.round(EVENTS / 100))

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-cohorts-bench-'))
const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0' })
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

const cases: {
  name: string
  query: Record<string, unknown>
  answer: (body: Record<string, unknown>) => string
  sql: string
}[] = [
  {
    name: 'cohort size (the calculation)',
    query: { kind: 'HogQLQuery', query: `SELECT count() FROM persons WHERE id IN COHORT ${cohortId}` },
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
for (const c of cases) {
  results.push(
    ...(await againstHandWritten(
      c.name,
      () => viaApi(c.query, c.answer),
      () => direct(c.sql),
      RUNS,
    )),
  )
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
