/**
 * Insight latency on generated events (issue #12): each insight node through the HTTP query API with
 * `refresh: force_blocking`, beside the same question written by hand in ClickHouse SQL on the same engine in the
 * same run. p50 of BENCH_RUNS runs (default 20) after one warm-up run, the two taking turns; also their CPU time.
 *
 *   npx tsx bench/insights.ts                       # 10M events over 30 days (BENCH_EVENTS to change)
 *   BENCH_EVENTS=1000000 BENCH_RUNS=5 npx tsx bench/insights.ts      # a quick run
 *   BENCH_SQL=1 BENCH_ONLY=funnel …                 # also prints the generated ClickHouse SQL of each case
 *   BENCH_DATA_DIR=/tmp/x BENCH_ONLY=funnel …       # keeps the data directory; a later run with the same
 *                                                   # BENCH_DATA_DIR and BENCH_EVENTS reuses its events
 *
 * The hand-written SQL reads persons the way Burrow's answers must (the current person of each distinct id, from
 * person_distinct_ids at its latest version), and the materialized `$browser` / `$current_url` columns.
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
const ONLY = process.env.BENCH_ONLY?.split(',')

// An opt-in data directory is kept after the run, and its events are reused by the next run with the same count
// (generating 10M events takes a minute or more; the events are spread over the 30 days before generation, so a
// reuse within the same day measures the same question).
const keptDir = process.env.BENCH_DATA_DIR
if (keptDir) fs.mkdirSync(keptDir, { recursive: true })
const dataDir = keptDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-insights-bench-'))
const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0' })
const burrow = await buildApp(config, { logger: false })
const { credentials } = await ensureDemoAccount(burrow)
const team = credentials.project_id

/** The person of user n: a fixed UUID, so events, distinct ids and persons agree without a lookup. */
const personUuid = (n: string) => `toUUID(concat('00000000-0000-4000-8000-', leftPad(lower(hex(${n})), 12, '0')))`
const user = `(cityHash64(number, 7) % ${USERS})`
const ts = `(now64(6) - toIntervalSecond(cityHash64(number, 1) % 2592000))`

const marker = path.join(dataDir, 'bench-insights-events.json')
const reused =
  keptDir !== undefined && fs.existsSync(marker) && JSON.parse(fs.readFileSync(marker, 'utf8')).events === EVENTS
let started = performance.now()
if (!reused) await generate()
const generateSeconds = (performance.now() - started) / 1000
// Background merges would otherwise compete with the measured queries; a long-running service has them done.
started = performance.now()
if (!reused) await burrow.events.exec('OPTIMIZE TABLE events FINAL')
const optimizeSeconds = (performance.now() - started) / 1000
if (keptDir !== undefined && !reused) fs.writeFileSync(marker, JSON.stringify({ events: EVENTS, team }))

async function generate() {
  if (keptDir !== undefined) {
    // a kept directory with another count (or an interrupted generation): start its events again
    for (const table of ['events', 'persons', 'person_distinct_ids']) {
      await burrow.events.exec(`TRUNCATE TABLE ${table}`)
    }
  }
  await burrow.events.exec(`
  INSERT INTO persons (team_id, id, properties, created_at, is_identified, is_deleted, version)
  SELECT ${team}, ${personUuid('number')}, '{}', now64(6) - toIntervalSecond(cityHash64(number, 3) % 2592000), 0, 0, 1
  FROM numbers(${USERS})`)
  await burrow.events.exec(`
  INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, is_deleted, version)
  SELECT ${team}, concat('user-', toString(number)), ${personUuid('number')}, 0, 1 FROM numbers(${USERS})`)
  await burrow.events.exec(`
  INSERT INTO events (uuid, team_id, event, distinct_id, person_id, properties, timestamp, created_at,
                      elements_chain, \`$session_id\`, \`$window_id\`, \`$group_0\`, \`$group_1\`, \`$group_2\`,
                      \`$group_3\`, \`$group_4\`)
  SELECT generateUUIDv4(number), ${team},
    ['$pageview', '$pageview', '$pageview', '$pageview', '$pageview', '$autocapture', '$autocapture', 'signup',
     'purchase', '$pageleave'][(cityHash64(number, 2) % 10) + 1],
    concat('user-', toString(${user})),
    ${personUuid(user)},
    concat('{"$browser":"', ['Chrome', 'Firefox', 'Safari', 'Edge', 'Opera'][(cityHash64(${user}) % 5) + 1],
           '","$os":"', ['Mac OS X', 'Windows', 'Linux', 'iOS', 'Android'][(number % 5) + 1],
           '","$current_url":"https://shop.example.com/p/', toString(cityHash64(number, 4) % 20),
           '","$pathname":"/p/', toString(cityHash64(number, 4) % 20), '"}'),
    ${ts}, now64(6), '', concat(toString(${user}), '-', toString(toDate(${ts}))), '', '', '', '', '', ''
  FROM numbers(${EVENTS})`)
}

const url = await burrow.app.listen({ port: 0, host: '127.0.0.1' })
const auth = { authorization: `Bearer ${credentials.personal_api_key}`, 'content-type': 'application/json' }

const printed = new Set<Record<string, unknown>>()
async function viaApi(query: Record<string, unknown>): Promise<{ ms: number; body: Record<string, unknown> }> {
  const t0 = performance.now()
  const res = await fetch(`${url}/api/projects/${team}/query/`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ query, refresh: 'force_blocking', name: 'bench' }),
  })
  const body = (await res.json()) as Record<string, unknown>
  if (res.status !== 200) throw new Error(`${query.kind} failed: ${res.status} ${JSON.stringify(body).slice(0, 4000)}`)
  if (process.env.BENCH_SQL === '1' && !printed.has(query)) {
    printed.add(query)
    // insight nodes answer their last HogQL: the same text as a HogQLQuery answers its ClickHouse SQL
    const compiled = await fetch(`${url}/api/projects/${team}/query/`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ query: { kind: 'HogQLQuery', query: body.hogql }, refresh: 'force_blocking' }),
    })
    const sql = ((await compiled.json()) as { clickhouse?: string }).clickhouse
    process.stdout.write(`\n-- ${query.kind}: HogQL\n${body.hogql}\n-- generated ClickHouse SQL\n${sql}\n`)
  }
  return { ms: performance.now() - t0, body }
}

async function direct(sql: string): Promise<{ ms: number; rows: unknown[][] }> {
  const t0 = performance.now()
  // The API runs every query's threads at nice 19; the hand-written SQL gets the same priority.
  const result = await burrow.events.query<unknown[]>(sql, { params: { team }, settings: { os_thread_priority: 19 } })
  return { ms: performance.now() - t0, rows: result.rows }
}

/** A query whose warm-up run takes longer than this is measured SLOW_RUNS times only (the table says so). */
const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 20_000)
const SLOW_RUNS = Number(process.env.BENCH_SLOW_RUNS ?? 3)

interface Measured {
  /** p50 wall time and p50 CPU time of this process (the engine runs in it), in ms */
  ms: number
  cpuMs: number
  runs: number
}

/**
 * The API and the hand-written SQL, each warmed once, then run in turns (API, SQL, API, SQL…) so that both sides
 * of a ratio see the same load on a shared machine; CPU time of the process beside the wall time (the engine runs
 * in this process, so it counts the query's work and not the time spent waiting for a core).
 */
async function paired(
  api: () => Promise<{ ms: number }>,
  hand: () => Promise<{ ms: number }>,
): Promise<{ api: Measured; hand: Measured }> {
  const warm = Math.max((await api()).ms, (await hand()).ms) // warm caches once
  const runs = warm > SLOW_MS ? Math.min(RUNS, SLOW_RUNS) : RUNS
  const sides = [api, hand].map((run) => ({ run, ms: [] as number[], cpu: [] as number[] }))
  for (let i = 0; i < runs; i++) {
    for (const side of sides) {
      const cpu = process.cpuUsage()
      side.ms.push((await side.run()).ms)
      const used = process.cpuUsage(cpu)
      side.cpu.push((used.user + used.system) / 1000)
    }
  }
  const p50 = (xs: number[]) =>
    percentile(
      xs.sort((a, b) => a - b),
      50,
    )
  const [a, h] = sides.map((side) => ({ ms: p50(side.ms), cpuMs: p50(side.cpu), runs }))
  return { api: a, hand: h }
}

/** The current person of every distinct id of the project (what Burrow's `person_id` means). */
const PDI = `(SELECT distinct_id, argMax(person_id, version) AS person_id FROM person_distinct_ids
  WHERE team_id = {team:Int64} GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0)`
const since30 = 'toStartOfDay(now() - INTERVAL 30 DAY)'
/** The first day the lifecycle reads: the day before its range. */
const lifecycleStart = `toDate(${since30} - INTERVAL 1 DAY)`

const cases: {
  name: string
  query: Record<string, unknown>
  sql: string
  check?: (api: unknown, rows: unknown[][]) => string
}[] = [
  {
    name: '30-day daily dau trend, $browser breakdown',
    query: {
      kind: 'TrendsQuery',
      series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }],
      dateRange: { date_from: '-30d' },
      interval: 'day',
      breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' },
    },
    sql: `SELECT toStartOfDay(e.timestamp) AS day, e.\`mat_$browser\` AS browser, uniqExact(p.person_id) AS dau
      FROM events AS e INNER JOIN ${PDI} AS p ON e.distinct_id = p.distinct_id
      WHERE e.team_id = {team:Int64} AND e.event = '$pageview' AND e.timestamp >= ${since30}
      GROUP BY day, browser`,
    check: (api, rows) => {
      const results = (api as { results: { data: number[] }[] }).results
      const apiTotal = results.reduce((s, r) => s + r.data.reduce((a, b) => a + b, 0), 0)
      const sqlTotal = rows.reduce((s, r) => s + Number(r[2]), 0)
      return `sum of daily dau: API ${apiTotal}, SQL ${sqlTotal}`
    },
  },
  {
    name: '3-step funnel, 30 days',
    query: {
      kind: 'FunnelsQuery',
      series: [
        { kind: 'EventsNode', event: '$pageview' },
        { kind: 'EventsNode', event: 'signup' },
        { kind: 'EventsNode', event: 'purchase' },
      ],
      dateRange: { date_from: '-30d' },
      funnelsFilter: { funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day' },
    },
    sql: `SELECT countIf(level >= 1), countIf(level >= 2), countIf(level >= 3) FROM (
        SELECT p.person_id, windowFunnel(1209600)(toDateTime(e.timestamp), e.event = '$pageview', e.event = 'signup',
          e.event = 'purchase') AS level
        FROM events AS e INNER JOIN ${PDI} AS p ON e.distinct_id = p.distinct_id
        WHERE e.team_id = {team:Int64} AND e.event IN ('$pageview', 'signup', 'purchase') AND e.timestamp >= ${since30}
        GROUP BY p.person_id)`,
    check: (api, rows) => {
      const steps = (api as { results: { count: number }[] }).results.map((s) => s.count)
      return `steps: API ${steps.join('/')}, SQL ${(rows[0] ?? []).join('/')}`
    },
  },
  {
    name: '8-interval weekly retention',
    query: {
      kind: 'RetentionQuery',
      retentionFilter: {
        period: 'Week',
        totalIntervals: 8,
        retentionType: 'retention_first_time',
        targetEntity: { id: '$pageview', type: 'events' },
        returningEntity: { id: '$pageview', type: 'events' },
      },
    },
    sql: `SELECT start_week, dateDiff('week', start_week, week) AS k, count() FROM (
        SELECT person_id, min(week) AS start_week, groupUniqArray(week) AS weeks FROM (
          SELECT p.person_id AS person_id, toStartOfWeek(e.timestamp) AS week
          FROM events AS e INNER JOIN ${PDI} AS p ON e.distinct_id = p.distinct_id
          WHERE e.team_id = {team:Int64} AND e.event = '$pageview'
            AND e.timestamp >= toStartOfWeek(now() - INTERVAL 7 WEEK))
        GROUP BY person_id) ARRAY JOIN weeks AS week
      GROUP BY start_week, k`,
  },
  {
    name: 'lifecycle, 30 days daily',
    query: {
      kind: 'LifecycleQuery',
      series: [{ kind: 'EventsNode', event: '$pageview' }],
      dateRange: { date_from: '-30d' },
      interval: 'day',
    },
    // The fastest correct form found (docs/benchmarks.md, "Insights"): each distinct id's active days as a bit mask
    // (bit i = day i of the 32 read, from the day before the range), then the distinct ids joined to their current
    // person and the persons to their created_at, 100,000 rows each instead of every event; events sent without a
    // person profile left out through the materialized column. Statuses as PostHog gives them: `new` only for a
    // first active day that is the creation day, `returning` after an active day, else `resurrecting`.
    sql: `SELECT toString(${lifecycleStart} + d) AS day, s, count() FROM (
        SELECT arrayFilter(i -> bitTest(mask, i), range(64)) AS days, toDate(c.created_at) - ${lifecycleStart} AS created,
          arrayJoin(arrayConcat(
            arrayMap((x, i) -> (x, if(i = 1, if(x = created, 'new', 'resurrecting'),
              if(days[i - 1] = x - 1, 'returning', 'resurrecting'))), days, arrayEnumerate(days)),
            arrayMap(x -> (x + 1, 'dormant'),
              arrayFilter((x, i) -> i = length(days) OR days[i + 1] != x + 1, days, arrayEnumerate(days))))) AS t,
          t.1 AS d, t.2 AS s
        FROM (
          SELECT p.person_id AS person_id, groupBitOr(g.mask) AS mask
          FROM (
            SELECT e.distinct_id AS distinct_id,
              groupBitOr(bitShiftLeft(toUInt64(1), toDate(e.timestamp) - ${lifecycleStart})) AS mask
            FROM events AS e
            WHERE e.team_id = {team:Int64} AND e.event = '$pageview' AND e.timestamp >= ${since30} - INTERVAL 1 DAY
              AND e.timestamp < toStartOfDay(now()) + INTERVAL 1 DAY
              AND ifNull(e.\`mat_$process_person_profile\`, '') != 'false'
            GROUP BY e.distinct_id) AS g
          INNER JOIN ${PDI} AS p ON g.distinct_id = p.distinct_id
          GROUP BY p.person_id) AS a
        INNER JOIN (SELECT id, argMax(created_at, version) AS created_at FROM persons WHERE team_id = {team:Int64}
          GROUP BY id HAVING argMax(is_deleted, version) = 0) AS c ON c.id = a.person_id)
      WHERE d >= 1 AND d <= 31 GROUP BY day, s`,
    check: (api, rows) => {
      const results = (api as { results: { status: string; days: string[]; data: number[] }[] }).results
      const hand = new Map(rows.map((r) => [`${r[0]} ${r[1]}`, Number(r[2])]))
      let differ = 0
      let total = 0
      for (const r of results) {
        r.days.forEach((day, i) => {
          total += Math.abs(r.data[i])
          if (Math.abs(r.data[i]) !== (hand.get(`${day} ${r.status}`) ?? 0)) differ++
        })
      }
      const handTotal = rows.reduce((s, r) => s + Number(r[2]), 0)
      return `actor-days by status: API ${total}, SQL ${handTotal}; ${differ} of ${results.reduce((n, r) => n + r.days.length, 0)} cells differ`
    },
  },
  {
    name: '5-step paths, 30 days',
    query: {
      kind: 'PathsQuery',
      pathsFilter: { includeEventTypes: ['$pageview'], stepLimit: 5 },
      dateRange: { date_from: '-30d' },
    },
    sql: `SELECT concat(toString(i), '_', a) AS source, concat(toString(i + 1), '_', b) AS target, count() AS value
      FROM (
        SELECT arrayJoin(arrayMap(n -> (n, path[n], path[n + 1]), range(1, length(path)))) AS edge,
          edge.1 AS i, edge.2 AS a, edge.3 AS b
        FROM (
          SELECT arraySlice(arrayFilter((u, n) -> n = 1 OR u != session[n - 1], session, arrayEnumerate(session)),
              1, 5) AS path
          FROM (
            SELECT arrayJoin(arrayMap(part -> arrayMap(x -> x.2, part),
                arraySplit((x, prev) -> x.1 - prev.1 > 1800, evs, arrayPushFront(arrayPopBack(evs), evs[1]))))
                AS session
            FROM (
              SELECT arraySort(x -> x.1, groupArray((toUnixTimestamp(e.timestamp), e.\`mat_$current_url\`))) AS evs
              FROM events AS e INNER JOIN ${PDI} AS p ON e.distinct_id = p.distinct_id
              WHERE e.team_id = {team:Int64} AND e.event = '$pageview' AND e.timestamp >= ${since30}
              GROUP BY p.person_id)))
        WHERE length(path) > 1)
      GROUP BY i, a, b ORDER BY value DESC, source, target LIMIT 50`,
  },
]

const rows: [string, string][] = [
  ['generate events and persons (s)', reused ? `reused from ${dataDir}` : generateSeconds.toFixed(1)],
  ['merge parts, OPTIMIZE FINAL (s)', reused ? '—' : optimizeSeconds.toFixed(1)],
]
for (const c of cases) {
  if (ONLY && !ONLY.some((o) => c.name.includes(o))) continue
  let api: Measured
  let hand: Measured
  try {
    ;({ api, hand } = await paired(
      () => viaApi(c.query),
      () => direct(c.sql),
    ))
  } catch (error) {
    // e.g. the query API's 60 s execution limit on a loaded machine: recorded, and the other cases still run
    rows.push([
      `${c.name} via API`,
      `failed: ${error instanceof Error ? error.message.slice(0, process.env.BENCH_SQL === '1' ? 4000 : 120) : error}`,
    ])
    process.stdout.write(`${rows[rows.length - 1].join('  ')}\n`)
    continue
  }
  const runs = (n: number) => (n === RUNS ? '' : ` (p50 of ${n} runs)`)
  rows.push([`${c.name} via API (ms)`, `${api.ms.toFixed(0)}${runs(api.runs)}`])
  rows.push(['  hand-written SQL (ms)', `${hand.ms.toFixed(0)}${runs(hand.runs)}`])
  rows.push(['  ratio', (api.ms / hand.ms).toFixed(2)])
  rows.push([
    '  CPU ms: API / SQL (ratio)',
    `${api.cpuMs.toFixed(0)} / ${hand.cpuMs.toFixed(0)} (${(api.cpuMs / hand.cpuMs).toFixed(2)})`,
  ])
  if (c.check) rows.push(['  check', c.check((await viaApi(c.query)).body, (await direct(c.sql)).rows)])
  // progress as each case ends (a long run shows what it has so far)
  process.stdout.write(`${c.name}: API ${api.ms.toFixed(0)} ms, SQL ${hand.ms.toFixed(0)} ms\n`)
}

await burrow.close()
if (!keptDir) fs.rmSync(dataDir, { recursive: true, force: true })

printTable(
  `Insights benchmark (${(EVENTS / 1e6).toFixed(1)}M events, ${USERS} persons over 30 days, p50 of ${RUNS} runs)`,
  rows,
)
