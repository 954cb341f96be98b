/**
 * Tenant isolation with the engine free to push the query's conditions down (issues #12 and #26). Every physical
 * table is read through a subquery whose explicit PREWHERE is the team filter; the query's own conditions may
 * move to just above the read (filter push-down and merging on). These tests try to get a user expression
 * evaluated on another team's row anyway.
 *
 * The layout makes that as likely as it can be: the real event-store DDL with 4-row granules, three teams whose
 * rows are interleaved in every insert (several data parts), and the caller's team (2) between the two victims (1
 * and 3) in the sort key, so that granules at both ends of its range hold other teams' rows. Every attack applies
 * a function that throws on a victim's data and is harmless on the caller's (`_toInt64` of `'0'` on a caller's row,
 * of the victim's text otherwise, whose error message would carry it), in every clause and through every read path.
 * The caller's query must answer, with the caller's rows only; the victim running it fails; and the same query
 * with the team condition as a plain WHERE and the engine's PREWHERE moves on fails, so the layout does catch a
 * leak.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Session } from 'chdb'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CompiledQuery, compileHogQL } from '../../src/hogql/index.js'
import { eventStoreDdl } from '../../src/storage/events/schema.js'

const VICTIM_A = 1
const HOME = 2
const VICTIM_B = 3
const BATCHES = 4
/** events per team and batch: the caller's 9, each victim's 10, so granule boundaries fall inside other rows */
const HOME_EVENTS = 9
const VICTIM_EVENTS = 10
const PERSONS = 3
const BASE = '2024-01-02 00:00:00'

let dir: string
let session: Session

const isHome = (team: number) => team === HOME
const tag = (team: number) => (isHome(team) ? 'homerow' : `victim${team}`)
const personId = (team: number, k: number) => `0000000${team}-0000-4000-8000-00000000000${k}`

async function exec(sql: string) {
  await session.queryAsync(sql)
}

function compile(query: string, team = HOME): CompiledQuery {
  return compileHogQL(query, { teamId: team, timezone: 'UTC' })
}

/** rows as JSONCompact arrays, 64-bit integers (which may come quoted) as numbers */
async function runSql(c: CompiledQuery, sql = c.sql): Promise<unknown[][]> {
  const result = await session.queryBindAsync(sql, c.params, { format: 'JSONCompact' })
  const rows = result.json<{ data: unknown[][] }>().data
  return rows.map((r) => r.map((v) => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v)))
}

const run = (query: string, team = HOME) => runSql(compile(query, team))

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'burrow-isolation-'))
  session = new Session(dir)
  for (const ddl of eventStoreDdl()) await exec(`${ddl} SETTINGS index_granularity = 4, index_granularity_bytes = 0`)
  const teams = [VICTIM_A, HOME, VICTIM_B]
  for (let batch = 0; batch < BATCHES; batch++) {
    const events: string[] = []
    for (let i = 0; i < VICTIM_EVENTS; i++) {
      for (const team of teams) {
        if (isHome(team) && i >= HOME_EVENTS) continue
        const t = tag(team)
        events.push(
          JSON.stringify({
            uuid: `${team}${batch}${String(i).padStart(2, '0')}0000-0000-4000-8000-000000000000`,
            team_id: team,
            // the caller's event names are numbers ('0'…'3'), the victims' are not: the sort key's `event` column
            event: isHome(team) ? String(i % 4) : `${t}-event-${i}`,
            distinct_id: `${t}-user-${i % PERSONS}`,
            person_id: personId(team, i % PERSONS),
            properties: JSON.stringify({ secret: `${t}-secret-${batch}-${i}`, $browser: `${t}-browser` }),
            // the same minutes for every team, so that date bounds do not separate them
            timestamp: `2024-01-02 00:${String(i).padStart(2, '0')}:0${batch}`,
            created_at: BASE,
            elements_chain: '',
            $session_id: `${t}-session-${i % 2}`,
            $window_id: '',
            $group_0: `${t}-org`,
            $group_1: '',
            $group_2: '',
            $group_3: '',
            $group_4: '',
          }),
        )
      }
    }
    await exec(`INSERT INTO events FORMAT JSONEachRow ${events.join('\n')}`)
  }
  for (let batch = 0; batch < 2; batch++) {
    const persons: string[] = []
    const distinctIds: string[] = []
    const groups: string[] = []
    for (let k = 0; k < PERSONS; k++) {
      for (const team of teams) {
        const t = tag(team)
        persons.push(
          JSON.stringify({
            team_id: team,
            id: personId(team, k),
            properties: JSON.stringify({ email: `${t}-person-${k}@example.com` }),
            created_at: BASE,
            is_identified: 1,
            is_deleted: 0,
            version: batch,
          }),
        )
        distinctIds.push(
          JSON.stringify({
            team_id: team,
            distinct_id: `${t}-user-${k}`,
            person_id: personId(team, k),
            is_deleted: 0,
            version: batch,
          }),
        )
        if (k === 0)
          groups.push(
            JSON.stringify({
              team_id: team,
              group_type_index: 0,
              group_key: `${t}-org`,
              group_properties: JSON.stringify({ name: `${t}-org-name` }),
              created_at: BASE,
              version: batch,
            }),
          )
      }
    }
    await exec(`INSERT INTO persons FORMAT JSONEachRow ${persons.join('\n')}`)
    await exec(`INSERT INTO person_distinct_ids FORMAT JSONEachRow ${distinctIds.join('\n')}`)
    await exec(`INSERT INTO groups FORMAT JSONEachRow ${groups.join('\n')}`)
  }
}, 60_000)

afterAll(() => {
  session?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** `_toInt64` of '0' on the caller's data, of the data itself (a victim's text, which fails to parse) otherwise */
const bad = (data: string) => `_toInt64(if(ilike(${data}, '%homerow%'), '0', ${data}))`

const H = BATCHES * HOME_EVENTS // the caller's events: 36

describe('the layout', () => {
  it('puts the caller’s rows in granules shared with other teams’ rows, in every table and several parts', async () => {
    for (const table of ['events', 'persons', 'person_distinct_ids', 'groups']) {
      const [[mixed, parts]] = await runSql(
        compile('SELECT 1'),
        `SELECT countIf(has(teams, ${HOME}) AND length(teams) > 1), uniqExact(_part) FROM ` +
          `(SELECT _part, intDiv(_part_offset, 4) AS g, groupUniqArray(team_id) AS teams FROM ${table} GROUP BY _part, g)`,
      )
      expect(Number(mixed), table).toBeGreaterThanOrEqual(2)
      expect(Number(parts), table).toBeGreaterThanOrEqual(2)
    }
  })
})

/** [name, HogQL query, the caller's answer worked out from the layout] */
const ATTACKS: [string, string, unknown[][]][] = [
  ['WHERE', `SELECT count() FROM events WHERE ${bad('properties')} = 0`, [[H]]],
  [
    'WHERE beside a sort-key condition',
    `SELECT count() FROM events WHERE event != '' AND ${bad('properties')} = 0`,
    [[H]],
  ],
  // event '1' is i = 1 and 5 of each batch
  ['WHERE beside an event hint', `SELECT count() FROM events WHERE event = '1' AND ${bad('properties')} = 0`, [[8]]],
  [
    'WHERE beside a date hint',
    `SELECT count() FROM events WHERE timestamp >= toDateTime('2024-01-01 00:00:00') AND ${bad('properties')} = 0`,
    [[H]],
  ],
  ['WHERE in a disjunction', `SELECT count() FROM events WHERE event = 'x' OR ${bad('properties')} = 0`, [[H]]],
  ['PREWHERE', `SELECT count() FROM events PREWHERE ${bad('properties')} = 0`, [[H]]],
  ['FINAL', `SELECT count() FROM events FINAL WHERE ${bad('properties')} = 0`, [[H]]],
  ['SELECT', `SELECT sum(${bad('properties')}) FROM events`, [[0]]],
  ['GROUP BY', `SELECT ${bad('distinct_id')} AS g, count() FROM events GROUP BY g`, [[0, H]]],
  [
    'ORDER BY … LIMIT (lazy reading, top-K)',
    `SELECT ${bad('properties')} AS v FROM events ORDER BY timestamp, v LIMIT 2`,
    [[0], [0]],
  ],
  [
    'WHERE with ORDER BY … LIMIT',
    `SELECT properties.secret FROM events WHERE ${bad('properties')} = 0 ORDER BY timestamp DESC LIMIT 1`,
    [['homerow-secret-3-8']],
  ],
  [
    'HAVING',
    `SELECT max(properties) AS m FROM events GROUP BY distinct_id HAVING ${bad('m')} = 0 ORDER BY m LIMIT 1`,
    [['{"secret":"homerow-secret-3-6","$browser":"homerow-browser"}']],
  ],
  ['subquery', `SELECT count() FROM (SELECT properties AS p FROM events) WHERE ${bad('p')} = 0`, [[H]]],
  ['CTE', `WITH c AS (SELECT properties AS p FROM events) SELECT count() FROM c WHERE ${bad('p')} = 0`, [[H]]],
  [
    'UNION ALL',
    `SELECT count() FROM (SELECT properties AS p FROM events UNION ALL SELECT properties AS p FROM persons) WHERE ${bad('p')} = 0`,
    [[H + PERSONS]],
  ],
  [
    'IN subquery',
    `SELECT count() FROM events WHERE distinct_id IN (SELECT distinct_id FROM events WHERE ${bad('properties')} = 0)`,
    [[H]],
  ],
  ['ARRAY JOIN', `SELECT count() FROM events ARRAY JOIN [properties] AS x WHERE ${bad('x')} = 0`, [[H]]],
  ['window', `SELECT max(${bad('properties')}) OVER (PARTITION BY distinct_id) AS w FROM events LIMIT 1`, [[0]]],
  [
    'self join, WHERE on the right side',
    `SELECT count() FROM events a JOIN events b ON a.uuid = b.uuid WHERE ${bad('b.properties')} = 0`,
    [[H]],
  ],
  [
    'LEFT JOIN ON, right side',
    `SELECT count() FROM events a LEFT JOIN events b ON a.uuid = b.uuid AND ${bad('b.properties')} = 0`,
    [[H]],
  ],
  [
    'join keys that throw (join runtime filters)',
    `SELECT count() FROM events a JOIN events b ON ${bad('a.properties')} = ${bad('b.properties')}`,
    [[H * H]],
  ],
  [
    'events JOIN persons',
    `SELECT count() FROM events e JOIN persons p ON e.person_id = p.id WHERE ${bad('p.properties')} = 0`,
    [[H]],
  ],
  ['events.person (lazy join)', `SELECT count() FROM events WHERE ${bad('person.properties')} = 0`, [[H]]],
  ['events.pdi (lazy join)', `SELECT count() FROM events WHERE ${bad('pdi.distinct_id')} = 0`, [[H]]],
  ['events.session (lazy join)', `SELECT count() FROM events WHERE ${bad('session.session_id')} = 0`, [[H]]],
  ['events.group_0 (lazy join)', `SELECT count() FROM events WHERE ${bad('group_0.properties')} = 0`, [[H]]],
  ['persons', `SELECT count() FROM persons WHERE ${bad('properties')} = 0`, [[PERSONS]]],
  // a condition on the grouping key is pushed below the aggregation, to just above the read
  [
    'person_distinct_ids (grouping key)',
    `SELECT count() FROM person_distinct_ids WHERE ${bad('distinct_id')} = 0`,
    [[PERSONS]],
  ],
  ['groups (grouping key)', `SELECT count() FROM groups WHERE ${bad('key')} = 0`, [[1]]],
  ['sessions (grouping key)', `SELECT count() FROM sessions WHERE ${bad('session_id')} = 0`, [[2]]],
  ['raw_persons', `SELECT count() FROM raw_persons WHERE ${bad('properties')} = 0`, [[2 * PERSONS]]],
  [
    'raw_person_distinct_ids',
    `SELECT count() FROM raw_person_distinct_ids WHERE ${bad('distinct_id')} = 0`,
    [[2 * PERSONS]],
  ],
  ['raw_groups', `SELECT count() FROM raw_groups WHERE ${bad('group_key')} = 0`, [[2]]],
  // the primary key's `event` column: index analysis applies conditions on it to the index's values
  ['a cast of the sort key’s event column', 'SELECT count() FROM events WHERE _toInt64(event) >= 0', [[H]]],
  ['a cast of the sort key’s event column, equal', 'SELECT count() FROM events WHERE _toInt64(event) = 3', [[8]]],
  ['a cast of the sort key’s event column, range', 'SELECT count() FROM events WHERE _toUInt64(event) < 2', [[20]]],
]

describe('a condition that throws on other teams’ rows runs on the caller’s only', () => {
  it.each(ATTACKS)('%s', async (_name, query, expected) => {
    const rows = await run(query)
    expect(JSON.stringify(rows)).not.toContain('victim')
    expect(rows).toEqual(expected)
  })

  it('the same queries fail for a victim, on its own rows', async () => {
    for (const [name, query] of ATTACKS) {
      // the victims have no event named '1': nothing is left to evaluate the condition on
      if (!query.includes('homerow') || name.includes('event hint')) continue
      await expect(run(query, VICTIM_A), name).rejects.toThrow(/victim1/)
    }
  })

  it('the same query leaks on this layout when the team filter is a WHERE and the engine may move conditions', async () => {
    const c = compile(`SELECT count() FROM events WHERE ${bad('properties')} = 0`)
    const unsafe = c.sql
      .replace('PREWHERE equals(events.team_id', 'WHERE equals(events.team_id')
      .replace('optimize_move_to_prewhere=0', 'optimize_move_to_prewhere=1')
    expect(unsafe).not.toBe(c.sql)
    await expect(runSql(c, unsafe)).rejects.toThrow(/victim/)
  })
})

describe('the read', () => {
  it('keeps the query’s own conditions out of the PREWHERE, and pushes them to just above it', async () => {
    const c = compile(`SELECT count() FROM events WHERE event != 'x' AND ${bad('properties')} = 0`)
    const explain = await session.queryBindAsync(`EXPLAIN actions = 1 ${c.sql}`, c.params, { format: 'TSVRaw' })
    const text = explain.text()
    const prewhere = text.split('\n').filter((l) => l.includes('Prewhere filter column'))
    expect(prewhere).toHaveLength(1)
    expect(prewhere[0]).toMatch(/team_id = 2/)
    expect(prewhere[0]).not.toMatch(/properties|event/)
    // the user's filter is the step right above the read
    expect(text).toMatch(/Filter column: .*homerow[^\n]*\n\s*└──ReadFromMergeTree/)
  })

  it('counts the caller’s rows only, whatever shortcut the engine takes for count, min and max', async () => {
    expect(await run('SELECT count() FROM events')).toEqual([[H]])
    expect(await run('SELECT count() FROM events FINAL')).toEqual([[H]])
    // the caller's last event is i = 8 of batch 3; the victims' go up to i = 9
    expect(await run('SELECT count(), min(timestamp), max(timestamp) FROM events')).toEqual([
      [H, '2024-01-02 00:00:00.000000', '2024-01-02 00:08:03.000000'],
    ])
    expect(await run('SELECT count() FROM raw_persons')).toEqual([[2 * PERSONS]])
  })

  it('does not let one team’s cached condition results skip another team’s granules', async () => {
    // the engine caches, per condition, the granules where it matched nothing: the team filter is part of the key
    for (let round = 0; round < 2; round++) {
      expect(await run("SELECT count() FROM events WHERE ilike(properties, '%victim1%')")).toEqual([[0]])
      expect(await run("SELECT count() FROM events WHERE ilike(properties, '%victim1%')", VICTIM_A)).toEqual([
        [BATCHES * VICTIM_EVENTS],
      ])
      expect(await run("SELECT count() FROM events WHERE ilike(properties, '%homerow%')", VICTIM_B)).toEqual([[0]])
      expect(await run("SELECT count() FROM events WHERE ilike(properties, '%homerow%')")).toEqual([[H]])
    }
  })
})
