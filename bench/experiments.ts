/**
 * ExperimentQuery latency (issue #15): a mean metric (sum of purchase amounts) and an ordered funnel metric
 * (signup → purchase) of a two-variant experiment through the HTTP query API with `refresh: force_blocking`, beside
 * the same computation written by hand in ClickHouse SQL on the same engine in the same run; p50 of BENCH_RUNS runs
 * (default 10) after one warm-up, alternating API and SQL.
 *
 *   npx tsx bench/experiments.ts                                   # 10M events, 1M exposed persons
 *   BENCH_EVENTS=1000000 BENCH_RUNS=5 npx tsx bench/experiments.ts # a quick run
 *   BENCH_SQL=1 BENCH_RUNS=0 …                                     # also prints the generated ClickHouse SQL
 *
 * Data: one `$feature_flag_called` exposure per person (variant by hash; every 100th person also sees the other
 * variant, so lands in `$multiple` and is left out), then the rest of the events spread over the persons and the
 * experiment's 30 days: page views, signups and purchases with an `amount`. The hand-written SQL resolves persons
 * the way Burrow's answers must (the current person of each distinct id, from person_distinct_ids), reads the
 * exposures once, and counts a person's metric events from their first exposure on, as PostHog's experiment
 * queries do. Goal: each ratio API / SQL ≤ 1.3.
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
const USERS = Math.max(1000, Math.round(EVENTS / 10))
const FLAG = 'bench-exp'

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-experiments-bench-'))
const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0' })
const burrow = await buildApp(config, { logger: false })
const { credentials } = await ensureDemoAccount(burrow)
const team = credentials.project_id
const url = await burrow.app.listen({ port: 0, host: '127.0.0.1' })
const auth = { authorization: `Bearer ${credentials.personal_api_key}`, 'content-type': 'application/json' }

const DAY = 86_400_000
const start = new Date(Math.floor((Date.now() - 31 * DAY) / DAY) * DAY)
const created = await fetch(`${url}/api/projects/${team}/experiments/`, {
  method: 'POST',
  headers: auth,
  body: JSON.stringify({
    name: 'Bench checkout',
    feature_flag_key: FLAG,
    start_date: start.toISOString(),
    exposure_criteria: { filterTestAccounts: false },
  }),
})
if (created.status !== 201) throw new Error(`experiment: ${created.status} ${await created.text()}`)
const experimentId = ((await created.json()) as { id: number }).id

/** The person of user n: a fixed UUID, so events, distinct ids and persons agree without a lookup. */
const personUuid = (n: string) => `toUUID(concat('00000000-0000-4000-8000-', leftPad(lower(hex(${n})), 12, '0')))`
const startSql = `toDateTime64('${start.toISOString().replace('T', ' ').replace('Z', '')}', 6, 'UTC')`
const variantOf = (n: string) => `if(cityHash64(${n}, 2) % 2 = 0, 'control', 'test')`

let started = performance.now()
await burrow.events.exec(`
  INSERT INTO persons (team_id, id, properties, created_at, is_identified, is_deleted, version)
  SELECT ${team}, ${personUuid('number')}, '{}', ${startSql}, 0, 0, 1 FROM numbers(${USERS})`)
await burrow.events.exec(`
  INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, is_deleted, version)
  SELECT ${team}, concat('user-', toString(number)), ${personUuid('number')}, 0, 1 FROM numbers(${USERS})`)
// Exposures: one per person in the first 20 days; every 100th person a second one with the other variant.
const exposure = (variant: string, offset: string) => `
  SELECT generateUUIDv4(number), ${team}, '$feature_flag_called', concat('user-', toString(number)),
    ${personUuid('number')},
    concat('{"$feature_flag":"${FLAG}","$feature_flag_response":"', ${variant}, '"}'),
    ${startSql} + toIntervalSecond(cityHash64(number, 1) % 1728000 + ${offset}), now64(6)`
await burrow.events.exec(`
  INSERT INTO events (uuid, team_id, event, distinct_id, person_id, properties, timestamp, created_at)
  ${exposure(variantOf('number'), '0')} FROM numbers(${USERS})`)
await burrow.events.exec(`
  INSERT INTO events (uuid, team_id, event, distinct_id, person_id, properties, timestamp, created_at)
  ${exposure(`if(${variantOf('number')} = 'control', 'test', 'control')`, '3600')}
  FROM numbers(${USERS}) WHERE number % 100 = 0`)
// The rest: page views, signups, purchases with an amount, over the 30 days (some before a person's exposure).
const user = `(cityHash64(number, 7) % ${USERS})`
const rest = EVENTS - USERS - Math.ceil(USERS / 100)
await burrow.events.exec(`
  INSERT INTO events (uuid, team_id, event, distinct_id, person_id, properties, timestamp, created_at)
  SELECT generateUUIDv4(number), ${team},
    ['$pageview', '$pageview', '$pageview', '$pageview', '$pageview', '$pageview', 'signup', 'signup',
     'purchase', 'purchase'][(cityHash64(number, 3) % 10) + 1] AS event,
    concat('user-', toString(${user})), ${personUuid(user)},
    if(event = 'purchase', concat('{"amount":', toString(cityHash64(number, 5) % 100), '}'), '{}'),
    ${startSql} + toIntervalSecond(cityHash64(number, 4) % 2592000), now64(6)
  FROM numbers(${rest})`)
const generateSeconds = (performance.now() - started) / 1000
started = performance.now()
await burrow.events.exec('OPTIMIZE TABLE events FINAL')
const optimizeSeconds = (performance.now() - started) / 1000

interface VariantRow {
  key: string
  number_of_samples: number
  sum: number
}

const printed = new Set<string>()
async function viaApi(metric: Record<string, unknown>) {
  const t0 = performance.now()
  const res = await fetch(`${url}/api/projects/${team}/query/`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({
      query: { kind: 'ExperimentQuery', experiment_id: experimentId, metric },
      refresh: 'force_blocking',
    }),
  })
  const body = (await res.json()) as { baseline: VariantRow; variant_results: VariantRow[]; clickhouse_sql?: string }
  if (res.status !== 200) throw new Error(`ExperimentQuery: ${res.status} ${JSON.stringify(body)}`)
  if (process.env.BENCH_SQL === '1' && !printed.has(JSON.stringify(metric))) {
    printed.add(JSON.stringify(metric))
    process.stdout.write(`\n-- generated ClickHouse SQL\n${body.clickhouse_sql}\n`)
  }
  const rows = [body.baseline, ...body.variant_results].map((v) => `${v.key} ${v.number_of_samples}/${v.sum}`)
  return { ms: performance.now() - t0, answer: rows.sort().join(', ') }
}

async function direct(sql: string) {
  const t0 = performance.now()
  // The API runs every query's threads at nice 19; the hand-written SQL gets the same priority.
  const result = await burrow.events.query<[string, string, string]>(sql, {
    params: { team },
    settings: { os_thread_priority: 19 },
  })
  const rows = result.rows.map(([variant, n, sum]) => `${variant} ${n}/${Number(sum)}`)
  return { ms: performance.now() - t0, answer: rows.sort().join(', ') }
}

/** The current person of every distinct id of the project (what Burrow's `person_id` means). */
const PDI = `(SELECT distinct_id, argMax(person_id, version) AS person_id FROM person_distinct_ids
  WHERE team_id = {team:Int64} GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0)`
const inLife = `e.timestamp >= ${startSql} AND e.timestamp < now64(6)`
/** Per person: the variant (or $multiple), the first exposure, and the metric events' times and values. */
const perPerson = (metricEvents: string, valueExpr: string) => `
  SELECT p.person_id AS person_id,
    if(uniqExactIf(JSONExtractString(e.properties, '$feature_flag_response'), e.event = '$feature_flag_called') > 1,
       '$multiple', anyIf(JSONExtractString(e.properties, '$feature_flag_response'), e.event = '$feature_flag_called'))
      AS variant,
    minIf(e.timestamp, e.event = '$feature_flag_called') AS first_exposure,
    groupArrayIf((e.timestamp, e.event, ${valueExpr}), e.event IN (${metricEvents})) AS evs
  FROM events AS e INNER JOIN ${PDI} AS p ON e.distinct_id = p.distinct_id
  WHERE e.team_id = {team:Int64} AND ${inLife}
    AND (e.event IN (${metricEvents})
      OR (e.event = '$feature_flag_called' AND JSONExtractString(e.properties, '$feature_flag') = '${FLAG}'
          AND JSONExtractString(e.properties, '$feature_flag_response') IN ('control', 'test')))
  GROUP BY person_id
  HAVING countIf(e.event = '$feature_flag_called') > 0`

const cases: { name: string; metric: Record<string, unknown>; sql: string }[] = [
  {
    name: 'mean: sum of purchase amount',
    metric: {
      kind: 'ExperimentMetric',
      metric_type: 'mean',
      source: { kind: 'EventsNode', event: 'purchase', math: 'sum', math_property: 'amount' },
    },
    sql: `SELECT variant, count(), sum(value) FROM (
        SELECT variant, arraySum(x -> if(x.1 >= first_exposure, x.3, 0), evs) AS value
        FROM (${perPerson("'purchase'", "JSONExtractFloat(e.properties, 'amount')")}))
      WHERE variant != '$multiple' GROUP BY variant`,
  },
  {
    name: 'funnel: signup → purchase',
    metric: {
      kind: 'ExperimentMetric',
      metric_type: 'funnel',
      series: [
        { kind: 'EventsNode', event: 'signup' },
        { kind: 'EventsNode', event: 'purchase' },
      ],
    },
    // Ordered, no conversion window: the greedy walk over the person's events from the first exposure on.
    sql: `SELECT variant, count(), countIf(level = 2) FROM (
        SELECT variant, arrayFold((acc, x) -> if(acc = 0 AND x.2 = 'signup', 1, if(acc = 1 AND x.2 = 'purchase', 2, acc)),
          arraySort(x -> x.1, arrayFilter(x -> x.1 >= first_exposure, evs)), toUInt8(0)) AS level
        FROM (${perPerson("'signup', 'purchase'", '0')}))
      WHERE variant != '$multiple' GROUP BY variant`,
  },
]

const results: [string, string][] = []
for (const c of cases) {
  results.push(
    ...(await againstHandWritten(
      c.name,
      () => viaApi(c.metric),
      () => direct(c.sql),
      RUNS,
    )),
  )
}

printTable('ExperimentQuery benchmark', [
  machineLine(),
  ['events / exposed persons', `${EVENTS} / ${USERS}`],
  ['generated / optimized in', `${generateSeconds.toFixed(1)} s / ${optimizeSeconds.toFixed(1)} s`],
  ['runs per figure', String(RUNS)],
  ...results,
])
await burrow.close()
fs.rmSync(dataDir, { recursive: true, force: true })
