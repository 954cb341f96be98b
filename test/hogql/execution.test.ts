/**
 * Execution cases of reference/hogql_cases.json, run on a real chDB with the fixtures the cases describe.
 * Every fixture is also copied into an intruder team (99), so any isolation leak changes the results.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compileHogQL, parseExpr, trustedExpr } from '../../src/hogql/index.js'
import { createTestDb, type EventRow, type PersonRow, type TestDb } from './chdb-fixture.js'

const R = randomUUID()
const INTRUDER = 99
const ctx = (teamId: number, extra: object = {}) => ({ teamId, timezone: 'UTC', ...extra })

const T_RANDOM = 1
const T_WINDOW = 2
const T_SELF_JOIN = 3
const T_PERSON_JOIN = 4
const T_BIG = 5
const T_SESSIONS = 6

const personRandom = randomUUID()
const S1 = '0190757f-6c00-7000-8000-000000000001'
const S2 = '0190757f-6c00-7000-8000-000000000002'

function fixtures(team: number): { persons: PersonRow[]; events: EventRow[] } {
  const persons: PersonRow[] = []
  const events: EventRow[] = []
  const at = '2020-01-10 00:00:00'
  if (team === T_RANDOM || team === INTRUDER) {
    const id = team === T_RANDOM ? personRandom : randomUUID()
    persons.push({
      team_id: team,
      id,
      properties: { sneaky_mail: 'tim@posthog.com', random_uuid: R },
      created_at: at,
      distinct_ids: ['bla'],
    })
    for (const index of [0, 1]) {
      events.push({
        team_id: team,
        event: 'random event',
        distinct_id: 'bla',
        timestamp: at,
        person_id: id,
        properties: { random_prop: "don't include", random_uuid: R, index },
      })
    }
  }
  if (team === T_WINDOW || team === INTRUDER) {
    for (let i = 0; i < 5; i++) {
      const id = randomUUID()
      const distinct = `person_${i}_${R}`
      persons.push({ team_id: team, id, properties: {}, created_at: at, distinct_ids: [distinct] })
      const times = ['00:00', '00:10', '00:20']
      ;['random event', 'random bla', 'random boo'].forEach((event, k) => {
        events.push({
          team_id: team,
          event,
          distinct_id: distinct,
          timestamp: `2020-01-10 ${times[k]}:00`,
          properties: { character: 'Luigi' },
        })
      })
    }
  }
  if (team === T_SELF_JOIN || team === INTRUDER) {
    const id = randomUUID()
    persons.push({ team_id: team, id, properties: {}, created_at: at, distinct_ids: ['p1'] })
    events.push({
      team_id: team,
      event: 'pageview',
      distinct_id: 'p1',
      timestamp: at,
      properties: { $browser: 'Chrome' },
    })
    events.push({
      team_id: team,
      event: 'click',
      distinct_id: 'p1',
      timestamp: at,
      properties: { $browser: 'Firefox' },
    })
  }
  if (team === T_PERSON_JOIN || team === INTRUDER) {
    const id = randomUUID()
    persons.push({ team_id: team, id, properties: {}, created_at: at, distinct_ids: ['solo'] })
    events.push({ team_id: team, event: 'pageview', distinct_id: 'solo', timestamp: '2020-01-09 00:00:00' })
  }
  if (team === T_BIG || team === INTRUDER) {
    events.push({
      team_id: team,
      event: 'big event',
      distinct_id: 'big',
      timestamp: at,
      properties: {
        string: R,
        array_str: [R],
        obj_array: { id: [R] },
        array_array_str: [[R]],
        array_obj: [{ id: R }],
        array_obj_array: [{ id: [R] }],
        array_obj_array_obj: [{ id: [{ id: R }] }],
      },
    })
  }
  if (team === T_SESSIONS || team === INTRUDER) {
    events.push({
      team_id: team,
      event: '$pageview',
      distinct_id: 's',
      timestamp: '2024-07-03 00:00:00',
      $session_id: S1,
      properties: { $current_url: 'https://example.com/1' },
    })
    events.push({
      team_id: team,
      event: '$pageview',
      distinct_id: 's',
      timestamp: '2024-07-05 00:00:00',
      $session_id: S2,
      properties: { $current_url: 'https://example.com/2' },
    })
  }
  return { persons, events }
}

let db: TestDb

beforeAll(async () => {
  db = await createTestDb()
  for (const team of [T_RANDOM, T_WINDOW, T_SELF_JOIN, T_PERSON_JOIN, T_BIG, T_SESSIONS, INTRUDER]) {
    const { persons, events } = fixtures(team)
    if (persons.length) await db.insertPersons(persons)
    if (events.length) await db.insertEvents(events)
  }
})
afterAll(() => db?.close())

const run = (q: string, team = T_RANDOM, extra: object = {}) => db.hogql(q, ctx(team, extra))

describe('hogql execution cases (reference/hogql_cases.json)', () => {
  it('case 0: properties filter with a bound placeholder', async () => {
    const rows = await run(
      'select count(), event from events where properties.random_uuid = {random_uuid} group by event',
      T_RANDOM,
      { placeholders: { random_uuid: R } },
    )
    expect(rows).toEqual([['2', 'random event']].map(([c, e]) => [Number(c), e]))
  })

  it('case 1: subquery without alias', async () => {
    const rows = await run(
      'select cnt, event from (select count() as cnt, event from events where properties.random_uuid = {random_uuid} group by event) group by cnt, event',
      T_RANDOM,
      { placeholders: { random_uuid: R } },
    )
    expect(rows).toEqual([[2, 'random event']])
  })

  it('case 2: persons table with person properties', async () => {
    const rows = await run(
      'select distinct properties.sneaky_mail from persons where properties.random_uuid = {random_uuid}',
      T_RANDOM,
      {
        placeholders: { random_uuid: R },
      },
    )
    expect(rows).toEqual([['tim@posthog.com']])
  })

  it('case 3: person_distinct_ids table', async () => {
    expect(await run('select distinct person_id, distinct_id from person_distinct_ids')).toEqual([
      [personRandom, 'bla'],
    ])
  })

  it('case 4: raw_person_distinct_ids with the argMax pattern', async () => {
    const rows = await run(
      'SELECT event, timestamp, pdi.person_id from events e INNER JOIN (SELECT distinct_id, argMax(person_id, version) as person_id FROM raw_person_distinct_ids GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0) AS pdi ON e.distinct_id = pdi.distinct_id',
    )
    expect(rows).toHaveLength(2)
    expect(rows[0]).toEqual(['random event', '2020-01-10 00:00:00.000000', personRandom])
  })

  it('case 5: lazy join events.pdi', async () => {
    const rows = await run('SELECT event, timestamp, pdi.distinct_id, pdi.person_id FROM events LIMIT 10')
    expect(rows[0]).toEqual(['random event', '2020-01-10 00:00:00.000000', 'bla', personRandom])
  })

  it('case 6: nested lazy join pdi.person', async () => {
    const rows = await run('SELECT pdi.distinct_id, pdi.person.created_at FROM person_distinct_ids pdi LIMIT 10')
    expect(rows).toEqual([['bla', '2020-01-10 00:00:00.000000']])
  })

  it('case 7: person properties through pdi.person', async () => {
    const rows = await run(
      'SELECT pdi.distinct_id, pdi.person.properties.sneaky_mail FROM person_distinct_ids pdi LIMIT 10',
    )
    expect(rows).toEqual([['bla', 'tim@posthog.com']])
  })

  it('case 8: self join where both sides need the person_id lazy join', async () => {
    const rows = await run(
      "SELECT e1.event, e2.event FROM events e1 JOIN events e2 ON e1.person_id = e2.person_id WHERE e1.event = 'pageview' AND e2.event = 'click'",
      T_SELF_JOIN,
    )
    expect(rows).toEqual([['pageview', 'click']])
  })

  it('case 9: persons joined to events on person_id', async () => {
    const rows = await run(
      'SELECT persons.id, events.event FROM persons JOIN events ON persons.id = events.person_id LIMIT 10',
      T_PERSON_JOIN,
    )
    expect(rows).toHaveLength(1)
    expect(rows[0][1]).toBe('pageview')
  })

  it('case 10: events → pdi → person properties', async () => {
    const rows = await run(
      'SELECT event, timestamp, pdi.distinct_id, pdi.person.properties.sneaky_mail FROM events LIMIT 10',
    )
    expect(rows[0][3]).toBe('tim@posthog.com')
  })

  it('case 11: aliased events table with a nested lazy join', async () => {
    const rows = await run('SELECT event, e.timestamp, e.pdi.person.properties.sneaky_mail FROM events e LIMIT 10')
    expect(rows[0][2]).toBe('tim@posthog.com')
  })

  it('case 12: poe.properties', async () => {
    const rows = await run(
      'SELECT poe.properties.sneaky_mail, count() FROM events s GROUP BY poe.properties.sneaky_mail LIMIT 10',
    )
    expect(rows).toEqual([['tim@posthog.com', 2]])
  })

  it('case 13: person.id and person.properties on events', async () => {
    const rows = await run('SELECT event, timestamp, person.id, person.properties.sneaky_mail FROM events LIMIT 10')
    expect(rows[0][2]).toBe(personRandom)
    expect(rows[0][3]).toBe('tim@posthog.com')
  })

  it('case 16: an alias named like a column shadows it in GROUP BY', async () => {
    const rows = await run(
      'select toDate(timestamp) as timestamp, count() as cnt from events where timestamp >= addDays(today(), -10) group by timestamp having cnt > 10 limit 1',
    )
    expect(rows).toEqual([])
  })

  it('case 17: select alias used in WHERE', async () => {
    const rows = await run(
      "select toDate(timestamp) as timestamp, JSONExtractInt(properties, 'field') as json_int from events where timestamp >= addDays(today(), -10) and json_int = 17 limit 1",
    )
    expect(rows).toEqual([])
  })

  it('case 18: array indexes start at 1', async () => {
    expect(await run('SELECT [1, 2, 3], [10,11,12][1]')).toEqual([[[1, 2, 3], 10]])
  })

  it('case 19: tuple access and inline alias', async () => {
    const rows = await run(
      'select col_a, arrayZip( (sumMap( g.1, g.2 ) as x).1, x.2) as r from (select col_a, groupArray( (col_b, col_c) ) as g from (SELECT properties.index as col_a, event as col_b, count() as col_c FROM events GROUP BY properties.index, event) group by col_a) group by col_a ORDER BY col_a',
    )
    expect(rows).toEqual([
      ['0', [['random event', 1]]],
      ['1', [['random event', 1]]],
    ])
  })

  const windowExpect = [
    ['random event', [], ['random bla', 'random boo']],
    ['random bla', ['random event'], ['random boo']],
    ['random boo', ['random event', 'random bla'], []],
  ]

  it('case 20: window frames with PRECEDING / FOLLOWING', async () => {
    const rows = await run(
      `select distinct_id, timestamp, event, groupArray(event) OVER (PARTITION BY distinct_id ORDER BY timestamp ASC ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING) AS two_before, groupArray(event) OVER (PARTITION BY distinct_id ORDER BY timestamp ASC ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING) AS two_after from events where timestamp > toDateTime('2020-01-09 00:00:00') and distinct_id like '%_${R}' order by distinct_id, timestamp`,
      T_WINDOW,
    )
    expect(rows).toHaveLength(15)
    expect(rows.map((row) => row.slice(2))).toEqual(rows.map((_, k) => windowExpect[k % 3]))
  })

  it('case 21: named windows', async () => {
    const rows = await run(
      `select distinct_id, timestamp, event, groupArray(event) OVER w1 AS two_before, groupArray(event) OVER w2 AS two_after, row_number() OVER w1 AS rn_1, row_number() OVER w2 AS rn_2, first_value(event) OVER w1 AS first_value_1, last_value(event) OVER w1 AS last_value_1, first_value(event) OVER w2 AS first_value_2, last_value(event) OVER w2 AS last_value_2, rank() OVER w1 AS rank_1, dense_rank() OVER w2 AS rank_2 from events where timestamp > toDateTime('2020-01-09 00:00:00') and distinct_id like '%_${R}' window w1 as (PARTITION BY distinct_id ORDER BY timestamp ASC ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING), w2 as (PARTITION BY distinct_id ORDER BY timestamp ASC ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING) order by distinct_id, timestamp`,
      T_WINDOW,
    )
    const expected = [
      [[], ['random bla', 'random boo'], 1, 1, '', '', 'random bla', 'random boo', 1, 1],
      [['random event'], ['random boo'], 2, 2, 'random event', 'random event', 'random boo', 'random boo', 2, 2],
      [['random event', 'random bla'], [], 3, 3, 'random event', 'random bla', '', '', 3, 3],
    ]
    expect(rows).toHaveLength(15)
    expect(rows.map((row) => row.slice(3))).toEqual(rows.map((_, k) => expected[k % 3]))
  })

  it('case 22: CTEs referencing earlier CTEs, SELECT * over a CTE', async () => {
    const rows = await run(
      'WITH PIVOT_TABLE_COL_ABC AS (SELECT properties.index as col_a, event as col_b, count() as col_c FROM events GROUP BY properties.index, event), PIVOT_FUNCTION_1 AS (select col_a, groupArray( (col_b, col_c) ) as g from PIVOT_TABLE_COL_ABC group by col_a), PIVOT_FUNCTION_2 AS (select col_a, arrayZip( (sumMap( g.1, g.2 ) as x).1, x.2) as r from PIVOT_FUNCTION_1 group by col_a) SELECT * FROM PIVOT_FUNCTION_2 ORDER BY col_a',
    )
    expect(rows).toEqual([
      ['0', [['random event', 1]]],
      ['1', [['random event', 1]]],
    ])
  })

  it('case 23: nested JSON property access, 1-based', async () => {
    const rows = await run(
      `SELECT properties.string, properties.array_str.1, properties.array_str[1], properties.obj_array.id.1, properties.obj_array.id[1], properties.array_array_str.1.1, properties.array_array_str[1][1], properties.array_obj_array.1.id.1, properties.array_obj_array[1]['id'][1], properties.array_obj_array_obj.1.id.1.id, properties.array_obj_array_obj[1].id[1].id, properties.array_obj_array_obj[1]['id'][1]['id'], properties.array_obj.1.id, properties.array_obj[1].id FROM events WHERE properties.string = '${R}'`,
      T_BIG,
    )
    expect(rows).toEqual([Array(14).fill(R)])
  })

  it('case 25: tumble/hop window functions on DateTime64', async () => {
    const rows = await run(
      "SELECT tumble(toDateTime('2020-01-01'), toIntervalDay('1')), tumbleStart(toDateTime('2020-01-01'), toIntervalDay('1')), tumbleEnd(toDateTime('2020-01-01'), toIntervalDay('1')), hop(toDateTime('2020-01-01'), toIntervalDay('1'), toIntervalDay('2')), hopStart(toDateTime('2020-01-01'), toIntervalDay('1'), toIntervalDay('2')), hopEnd(toDateTime('2020-01-01'), toIntervalDay('1'), toIntervalDay('2'))",
    )
    const d = (day: string) => `${day} 00:00:00`
    expect(rows).toEqual([
      [
        [d('2020-01-01'), d('2020-01-02')],
        d('2020-01-01'),
        d('2020-01-02'),
        [d('2019-12-31'), d('2020-01-02')],
        d('2019-12-31'),
        d('2020-01-02'),
      ],
    ])
  })

  it('case 26: null-safe LIKE / regex comparisons, direct and through a subquery', async () => {
    const pairs: [string, number][] = [
      ["null like '2'", 0],
      ["'2' like null", 0],
      ["'3' like '3'", 1],
      ['null like null', 1],
      ["null not like '2'", 1],
      ["'2' not like null", 1],
      ["'3' not like '3'", 0],
      ['null not like null', 0],
      ['null ilike null', 1],
      ['null not ilike null', 0],
      ["null =~ '2'", 0],
      ["'3' =~ '3'", 1],
      ['null =~ null', 1],
      ["null !~ '2'", 1],
      ['null !~ null', 0],
      ["null =~* '2'", 0],
      ["'3' =~* '3'", 1],
      ['null =~* null', 1],
      ["null !~* '2'", 1],
      ['null !~* null', 0],
    ]
    const all = await run(`select ${pairs.map(([p]) => p).join(', ')}`)
    expect(all[0].map(Number)).toEqual(pairs.map(([, v]) => v))
    for (const [pair, value] of pairs) {
      const m = /^(null|'\d') (.+) (null|'\d')$/.exec(pair)!
      const rows = await run(`select a ${m[2]} b from (select ${m[1]} as a, ${m[3]} as b)`)
      expect([pair, Number(rows[0][0])]).toEqual([pair, value])
    }
  })

  it('case 27: regex operators', async () => {
    const rows = await run(
      "SELECT 'kala' ~ '.*', 'kala' =~ '.*', 'kala' !~ '.*', 'kala' =~ 'a', 'kala' !~ 'a', 'kala' =~ 'A', 'kala' !~ 'A', 'kala' ~* 'A', 'kala' =~* 'A', 'kala' !~* 'A'",
    )
    expect(rows[0].map(Boolean)).toEqual([true, true, false, true, false, false, true, true, true, false])
  })

  it('cases 28-30, 33: numbers() table function', async () => {
    const nums = async (q: string) => (await run(q)).map((r) => Number(r[0]))
    expect(await nums('SELECT number from numbers(1, 4)')).toEqual([1, 2, 3, 4])
    expect(await nums('SELECT * from numbers(1, 4)')).toEqual([1, 2, 3, 4])
    expect(await nums('SELECT number + number + 1 from numbers(2 + 2)')).toEqual([1, 3, 5, 7])
    const days = await nums(
      "SELECT number from numbers(assumeNotNull(dateDiff('day', toStartOfDay(toDateTime('2011-12-31 00:00:00')), toDateTime('2012-01-14 23:59:59'))))",
    )
    expect(days).toEqual(Array.from({ length: 14 }, (_, k) => k))
  })

  it('case 35 (emulated): {filters} supplied as an expression placeholder', async () => {
    const q = 'SELECT event, distinct_id from events WHERE distinct_id={distinct_id} and {filters}'
    const withFilter = (expr: string) =>
      run(q, T_RANDOM, { placeholders: { distinct_id: 'bla', filters: trustedExpr(parseExpr(expr)) } })
    expect(await withFilter("properties.index = '1'")).toHaveLength(1)
    expect(
      await withFilter("properties.index = '1' and timestamp >= '2020-01-01' and timestamp < '2020-01-02'"),
    ).toHaveLength(0)
    expect(
      await withFilter("properties.index = '1' and timestamp >= '2020-01-01' and timestamp < '2020-02-02'"),
    ).toHaveLength(1)
  })

  it('case 37 (emulated): filters on an aliased events table', async () => {
    const rows = await run('SELECT event, distinct_id from events e WHERE {filters}', T_RANDOM, {
      placeholders: { filters: trustedExpr(parseExpr(`equals(properties.random_uuid, '${R}')`)) },
    })
    expect(rows).toHaveLength(2)
  })

  it('cases 38-39 (emulated): sessions derived from events', async () => {
    const byUrl = await run(
      "SELECT session_id, $entry_current_url from sessions WHERE $entry_current_url = 'https://example.com/1'",
      T_SESSIONS,
    )
    expect(byUrl).toEqual([[S1, 'https://example.com/1']])
    const byDate = await run(
      "SELECT session_id, $entry_current_url from sessions WHERE $start_timestamp >= '2024-07-04' and $start_timestamp < '2024-07-06'",
      T_SESSIONS,
    )
    expect(byDate).toEqual([[S2, 'https://example.com/2']])
  })

  it('case 40: SELECT 1 needs no FROM', async () => {
    expect(await run('SELECT 1')).toEqual([[1]])
  })
})

describe('derived tables and lazy joins', () => {
  it('reads session duration and pageviews through events.session', async () => {
    const rows = await run(
      'SELECT event, session.$session_duration, session.$pageview_count, session.$is_bounce FROM events ORDER BY timestamp',
      T_SESSIONS,
    )
    expect(rows.map((r) => [r[0], Number(r[1]), Number(r[2]), Number(r[3])])).toEqual([
      ['$pageview', 0, 1, 1],
      ['$pageview', 0, 1, 1],
    ])
  })

  it('reads group properties through events.group_0', async () => {
    await db.insertGroups([
      {
        team_id: 7,
        index: 0,
        key: 'acme',
        properties: { name: 'Acme v1' },
        created_at: '2020-01-01 00:00:00',
        version: 1,
      },
      {
        team_id: 7,
        index: 0,
        key: 'acme',
        properties: { name: 'Acme v2' },
        created_at: '2020-01-01 00:00:00',
        version: 2,
      },
      {
        team_id: INTRUDER,
        index: 0,
        key: 'acme',
        properties: { name: 'Intruder' },
        created_at: '2020-01-01 00:00:00',
        version: 9,
      },
    ])
    await db.insertEvents([
      { team_id: 7, event: 'e', distinct_id: 'd', timestamp: '2020-01-01 00:00:00', $group_0: 'acme' },
    ])
    expect(await run('SELECT group_0.properties.name FROM events', 7)).toEqual([['Acme v2']])
    expect(await run('SELECT key, properties.name FROM groups', 7)).toEqual([['acme', 'Acme v2']])
  })

  it('follows merges: person properties come from the current person of the distinct id', async () => {
    const old = randomUUID()
    const merged = randomUUID()
    await db.insertPersons([
      {
        team_id: 8,
        id: old,
        properties: { email: 'old@x' },
        created_at: '2020-01-01 00:00:00',
        distinct_ids: ['anon'],
      },
      {
        team_id: 8,
        id: merged,
        properties: { email: 'new@x' },
        created_at: '2020-01-01 00:00:00',
        distinct_ids: ['anon'],
        version: 1,
      },
    ])
    await db.insertEvents([
      { team_id: 8, event: 'e', distinct_id: 'anon', timestamp: '2020-01-01 00:00:00', person_id: old },
    ])
    expect(await run('SELECT person_id, person.properties.email FROM events', 8)).toEqual([[merged, 'new@x']])
  })
})

describe('time conditions the sort key can use', () => {
  // one part per event, so that the engine's index analysis decides for each event whether to read it
  const instants = [
    '2024-01-01 00:00:00',
    '2024-01-01 14:30:00', // Tokyo 23:30 on the 1st
    '2024-01-01 15:30:00', // Tokyo 00:30 on the 2nd
    '2024-01-02 04:30:00', // New York 23:30 on the 1st
    '2024-01-02 05:30:00', // New York 00:30 on the 2nd
    '2024-01-03 00:00:00',
  ]
  const TEAM = 9
  beforeAll(async () => {
    for (const timestamp of instants)
      await db.insertEvents([{ team_id: TEAM, event: 'e', distinct_id: 'd', timestamp }])
  })

  const conditions = [
    "timestamp >= toStartOfDay(toDateTime('2024-01-02 00:00:00'))",
    "timestamp > toDateTime('2024-01-01 23:59:59')",
    "timestamp >= toDate(toDateTime('2024-01-02 12:00:00'))",
    "timestamp < toDateTime('2024-01-02 00:00:00')",
    "toDateTime('2024-01-02 00:00:00') <= timestamp",
    "timestamp <= toStartOfDay(toDateTime('2024-01-02 10:00:00'))",
  ]
  const cases = ['UTC', 'Asia/Tokyo', 'America/New_York'].flatMap((tz) => conditions.map((c) => [tz, c] as const))

  it.each(cases)('in %s, %s selects the same events as without the implied condition', async (timezone, cond) => {
    const hinted = `SELECT count() FROM events WHERE ${cond}`
    expect(compileHogQL(hinted, { teamId: TEAM, timezone }).sql).toMatch(/Equals\(events\.timestamp, /)
    // inside OR the printer adds nothing: the engine evaluates the comparison alone
    const plain = `SELECT count() FROM events WHERE ${cond} OR event = 'never'`
    expect(compileHogQL(plain, { teamId: TEAM, timezone }).sql).not.toMatch(/Equals\(events\.timestamp, /)
    const [[expected]] = await run(plain, TEAM, { timezone })
    expect(await run(hinted, TEAM, { timezone })).toEqual([[expected]])
  })

  it('lets the engine select granules by date', async () => {
    const [[all]] = await run('SELECT count() FROM events', TEAM)
    const compiled = compileHogQL("SELECT count() FROM events WHERE timestamp >= toDateTime('2024-01-02 12:00:00')", {
      teamId: TEAM,
      timezone: 'UTC',
    })
    const explained = await db.explain(compiled.sql, compiled.params)
    expect(all).toBe(instants.length)
    const primaryKey = explained.slice(explained.indexOf('PrimaryKey'))
    // (small parts merge in the background, so which ones are read is not stable; the condition is)
    expect(primaryKey).toMatch(/Condition: .*toDate\(timestamp\) in \[19724, \+Inf\)/)
  })
})
