/**
 * Tenant isolation: every physical table the printer emits is filtered by the caller's team, whatever route the
 * query takes to it (joins, lazy joins, subqueries, CTEs, unions, IN-subqueries), and nothing outside the virtual
 * schema is reachable.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  compileHogQL,
  HogQLSyntaxError,
  HogQLValidationError,
  parseSelect,
  trustedExpr,
} from '../../src/hogql/index.js'
import { createTestDb, type TestDb } from './chdb-fixture.js'

const MINE = 1
const OTHER = 2

let db: TestDb

beforeAll(async () => {
  db = await createTestDb()
  for (const team of [MINE, OTHER]) {
    const id = randomUUID()
    const secret = team === MINE ? 'mine' : 'secret-of-other-team'
    await db.insertPersons([
      {
        team_id: team,
        id,
        properties: { email: `${secret}@x` },
        created_at: '2024-01-01 00:00:00',
        distinct_ids: ['shared'],
      },
    ])
    await db.insertGroups([
      { team_id: team, index: 0, key: 'org', properties: { name: secret }, created_at: '2024-01-01 00:00:00' },
    ])
    await db.insertEvents([
      {
        team_id: team,
        event: 'pageview',
        distinct_id: 'shared',
        timestamp: '2024-01-02 00:00:00',
        person_id: id,
        $session_id: 'sess',
        $group_0: 'org',
        properties: { secret, $current_url: `https://${secret}` },
      },
    ])
  }
})
afterAll(() => db?.close())

const run = (q: string) => db.hogql(q, { teamId: MINE, timezone: 'UTC' })
const flat = (rows: unknown[][]) => JSON.stringify(rows)

describe('another team’s rows are unreachable', () => {
  const queries: [string, string][] = [
    ['plain select', 'SELECT properties.secret FROM events'],
    [
      'self join',
      'SELECT a.properties.secret, b.properties.secret FROM events a JOIN events b ON a.distinct_id = b.distinct_id',
    ],
    [
      'left join',
      'SELECT a.event, b.properties.secret FROM events a LEFT JOIN events b ON a.distinct_id = b.distinct_id',
    ],
    [
      'right join',
      'SELECT a.properties.secret, b.properties.secret FROM events a RIGHT JOIN events b ON a.distinct_id = b.distinct_id',
    ],
    [
      'full join',
      'SELECT a.properties.secret, b.properties.secret FROM events a FULL OUTER JOIN events b ON a.distinct_id = b.distinct_id',
    ],
    ['cross join', 'SELECT a.properties.secret, b.properties.secret FROM events a, events b'],
    ['subquery', 'SELECT s FROM (SELECT properties.secret AS s FROM events)'],
    ['cte', 'WITH x AS (SELECT properties.secret AS s FROM events) SELECT s FROM x'],
    ['union', 'SELECT properties.secret FROM events UNION ALL SELECT properties.email FROM persons'],
    [
      'in subquery',
      "SELECT count() FROM events WHERE distinct_id IN (SELECT distinct_id FROM events WHERE properties.secret != 'mine')",
    ],
    ['scalar subquery', "SELECT (SELECT count() FROM events WHERE properties.secret != 'mine')"],
    ['lazy person join', 'SELECT person.properties.email, person_id FROM events'],
    ['persons table', 'SELECT properties.email FROM persons'],
    ['raw persons', 'SELECT properties FROM raw_persons'],
    ['distinct ids', 'SELECT distinct_id, person.properties.email FROM person_distinct_ids'],
    ['raw distinct ids', 'SELECT distinct_id, person_id FROM raw_person_distinct_ids'],
    ['groups', 'SELECT properties.name FROM groups'],
    ['raw groups', 'SELECT group_properties FROM raw_groups'],
    ['group lazy join', 'SELECT group_0.properties.name FROM events'],
    ['sessions', 'SELECT $entry_current_url FROM sessions'],
    ['session lazy join', 'SELECT session.$entry_current_url FROM events'],
    [
      'joined persons with lazy join',
      'SELECT p.properties.email, e.person.properties.email FROM persons p JOIN events e ON p.id = e.person_id',
    ],
    ['array join', "SELECT x FROM events ARRAY JOIN [properties.secret, 'y'] AS x"],
  ]

  it.each(queries)('%s', async (_name, query) => {
    const rows = await run(query)
    expect(rows.length).toBeGreaterThan(0)
    expect(flat(rows)).not.toContain('secret-of-other-team')
  })

  it('counts only the caller’s rows', async () => {
    const [[n]] = await run('SELECT count() FROM events')
    expect(Number(n)).toBe(1)
    const [[m]] = await run('SELECT count() FROM events e1 JOIN events e2 ON e1.distinct_id = e2.distinct_id')
    expect(Number(m)).toBe(1)
  })
})

describe('the printed SQL filters every physical table by team', () => {
  const physical = /\b(?:FROM|JOIN) (events|persons|person_distinct_ids|groups)(?: AS (\w+))?/g
  const cases = [
    'SELECT person.properties.email, session.$session_duration, group_0.properties.name FROM events',
    'SELECT * FROM events a JOIN raw_persons p ON a.person_id = p.id LEFT JOIN raw_groups g ON g.key = a.$group_0',
    'WITH c AS (SELECT distinct_id FROM raw_person_distinct_ids) SELECT * FROM c UNION ALL SELECT distinct_id FROM events',
    'SELECT e.event FROM events e FULL JOIN persons p ON p.id = e.person_id',
  ]
  it.each(cases)('%s', (query) => {
    const { sql } = compileHogQL(query, { teamId: MINE, timezone: 'UTC' })
    const matches = [...sql.matchAll(physical)]
    expect(matches.length).toBeGreaterThan(0)
    for (const m of matches) {
      const alias = m[2] ?? m[1]
      expect(sql).toContain(`equals(${alias}.team_id, {hogql_team_id:Int64})`)
    }
    expect(compileHogQL(query, { teamId: MINE, timezone: 'UTC' }).params.hogql_team_id).toBe(MINE)
  })
})

describe('only the virtual schema is reachable', () => {
  const rejected = [
    "SELECT * FROM url('http://example.com', CSV)",
    "SELECT * FROM file('/etc/passwd', 'LineAsString')",
    "SELECT * FROM remote('localhost', system.one)",
    "SELECT * FROM s3('https://bucket/x.csv')",
    'SELECT * FROM system.one',
    'SELECT * FROM system.tables',
    'SELECT * FROM `system.one`',
    'SELECT * FROM numbers_mt(10)',
    'SELECT * FROM generateRandom()',
    "SELECT * FROM merge('default', '.*')",
    'SELECT * FROM events_local',
    'SELECT * FROM default.events',
    'SELECT count() FROM events WHERE uuid IN (SELECT uuid FROM system.parts)',
    'WITH x AS (SELECT 1 FROM system.one) SELECT * FROM x',
    "SELECT * FROM events('x')",
  ]
  it.each(rejected)('%s', (query) => {
    expect(() => compileHogQL(query, { teamId: MINE, timezone: 'UTC' })).toThrow(HogQLValidationError)
  })

  it('cannot alias anything as team_id', () => {
    expect(() => compileHogQL('SELECT 2 AS team_id FROM events', { teamId: MINE, timezone: 'UTC' })).toThrow(
      HogQLSyntaxError,
    )
    expect(() => compileHogQL('SELECT 1 FROM events AS team_id', { teamId: MINE, timezone: 'UTC' })).toThrow(
      '"team_id" cannot be an alias or identifier',
    )
  })

  it('cannot smuggle SQL through strings or placeholders', async () => {
    const evil = "') OR 1=1 --"
    const compiled = compileHogQL(
      `SELECT count() FROM events WHERE event = '${evil.replace(/'/g, "\\'")}' OR event = {x}`,
      {
        teamId: MINE,
        timezone: 'UTC',
        placeholders: { x: evil },
      },
    )
    expect(compiled.sql).not.toContain('OR 1=1')
    const [[n]] = await db.hogql(`SELECT count() FROM events WHERE event = {x}`, {
      teamId: MINE,
      timezone: 'UTC',
      placeholders: { x: evil },
    })
    expect(Number(n)).toBe(0)
  })

  it('runs read-only', () => {
    expect(compileHogQL('SELECT 1', { teamId: MINE, timezone: 'UTC' }).sql).toContain('SETTINGS readonly=2')
  })
})

describe('placeholder values from requests', () => {
  it('refuses syntax trees as placeholder values: only trees Burrow builds itself may stand in', () => {
    const smuggled = {
      kind: 'Select',
      select: [{ kind: 'Constant', value: 1 }],
      from: { kind: 'JoinExpr', table: { kind: 'Field', chain: ['events'] } },
      arrayJoinOp: 'ARRAY JOIN [1] AS z) UNION ALL SELECT toString(team_id) FROM events --',
      arrayJoinList: [{ kind: 'Alias', alias: 'q', expr: { kind: 'Array', exprs: [] } }],
    }
    expect(() => compileHogQL('SELECT {x}', { teamId: MINE, timezone: 'UTC', placeholders: { x: smuggled } })).toThrow(
      HogQLValidationError,
    )
    expect(() =>
      compileHogQL('SELECT {x}', {
        teamId: MINE,
        timezone: 'UTC',
        placeholders: { x: { kind: 'Constant', value: 1 } },
      }),
    ).toThrow(/unsupported type/)
  })
})

describe('keywords printed as they are', () => {
  it('checks join keywords of any tree, even a trusted one, against what the parser produces', () => {
    const sub = parseSelect('SELECT count() FROM events e JOIN persons p ON p.id = e.person_id') as any
    expect(sub.from.next.joinType).toMatch(/JOIN$/)
    const ok = compileHogQL('SELECT {sub}', { teamId: MINE, timezone: 'UTC', placeholders: { sub: trustedExpr(sub) } })
    expect(ok.sql).toContain('JOIN')
    sub.from.next.joinType = 'CROSS JOIN system.tables CROSS JOIN'
    expect(() =>
      compileHogQL('SELECT {sub}', { teamId: MINE, timezone: 'UTC', placeholders: { sub: trustedExpr(sub) } }),
    ).toThrow(/Invalid JOIN keyword/)
  })
})
