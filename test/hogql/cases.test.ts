/**
 * Parse, translation and error cases of reference/hogql_cases.json (ids are the case indexes in that file).
 * Translation cases compare the SQL with bound parameters written back inline and the team parameter as <team>.
 */
import { describe, expect, it } from 'vitest'
import {
  type CompileContext,
  compileHogQL,
  HogQLSyntaxError,
  HogQLValidationError,
  parseExpr,
  parseSelect,
  type SelectNode,
  type SelectUnionNode,
} from '../../src/hogql/index.js'

const base: CompileContext = { teamId: 1, timezone: 'UTC' }

/** the SQL with parameters written inline (for comparing with the reference texts), without SETTINGS */
function inlineSql(query: string, ctx: Partial<CompileContext> = {}): string {
  const { sql, params } = compileHogQL(query, { ...base, ...ctx })
  return sql
    .replace(/\{(\w+):\w+\}/g, (_, n: string) => (n === 'hogql_team_id' ? '<team>' : `'${String(params[n])}'`))
    .replace(/ SETTINGS .*$/, '')
}
const exprSql = (expr: string, ctx: Partial<CompileContext> = {}) =>
  inlineSql(`SELECT ${expr} FROM events`, ctx).replace(/^SELECT (.*) FROM \(SELECT \* FROM events PREWHERE .*$/, '$1')

describe('translation cases', () => {
  const exprCases: [number, string, string][] = [
    [41, '1 + 2', 'plus(1, 2)'],
    [42, '1.0 % 2.66', 'modulo(1.0, 2.66)'],
    [44, '[1,2,3]?.[1]', '[1, 2, 3][1]'],
    [45, 'arrayMap((x, y) -> x*y, [1,2,3])', 'arrayMap((x, y) -> multiply(x, y), [1, 2, 3])'],
    [46, '1 != null', '1'],
    [
      47,
      'properties.bla',
      `replaceRegexpAll(nullIf(nullIf(JSONExtractRaw(events.properties, 'bla'), ''), 'null'), '^"|"$', '') AS bla`,
    ],
    [
      48,
      "properties['$browser']",
      `replaceRegexpAll(nullIf(nullIf(JSONExtractRaw(events.properties, '$browser'), ''), 'null'), '^"|"$', '')`,
    ],
    [50, 'count(distinct event)', 'count(DISTINCT events.event)'],
    [51, 'countIf(distinct event, 1 == 2)', 'countIf(DISTINCT events.event, 0)'],
    [52, 'quantile(0.95)( event )', 'quantile(0.95)(events.event)'],
    [53, 'groupArraySample(5, 123456)(event)', 'groupArraySample(5, 123456)(events.event)'],
    [62, "team_id=1 AND (0=1 AND event='name')", '0'],
    [63, "team_id=1 OR (1=1 OR event='name')", '1'],
    [64, "event ~* 'E'", "match(events.event, concat('(?i)', 'E'))"],
    [65, "event !~ 'E'", "not(match(events.event, 'E'))"],
    [66, "event in 'E'", "in(events.event, 'E')"],
    [67, 'case when 1 then 2 when 3 then 4 else 5 end', 'multiIf(1, 2, 3, 4, 5)'],
    [85, "concat(null, 'a', 3, toString(4), toString(NULL))", "concat('', 'a', toString(3), toString(4), '')"],
    [86, 'toStartOfWeek(timestamp)', "toStartOfWeek(toTimeZone(events.timestamp, 'UTC'), 0)"],
    [
      87,
      "tumble(timestamp, toIntervalDay('1'))",
      "tumble(toDateTime(toTimeZone(events.timestamp, 'UTC'), 'UTC'), toIntervalDay('1'))",
    ],
  ]
  it.each(exprCases)('case %i: %s', (_id, hogql, expected) => {
    expect(exprSql(hogql)).toBe(expected)
  })

  it('case 43: string constants are bound parameters, never inlined', () => {
    const { sql, params } = compileHogQL("SELECT 'string', 'it''s \\' here'", base)
    expect(sql).toContain('SELECT {hogql_val_0:String}, {hogql_val_1:String}')
    expect(params).toMatchObject({ hogql_val_0: 'string', hogql_val_1: "it's ' here" })
    expect(sql).not.toContain("'string'")
  })

  it('case 49: person properties come from the lazily joined persons subquery', () => {
    const sql = exprSql('person.properties.bla')
    expect(sql).toContain(`JSONExtractRaw(events__pdi__person.properties, 'bla')`)
    expect(inlineSql('SELECT person.properties.bla FROM events')).toContain(
      'INNER JOIN (SELECT raw_persons.id AS id, argMax(raw_persons.properties, raw_persons.version) AS properties FROM persons AS raw_persons PREWHERE equals(raw_persons.team_id, <team>) GROUP BY raw_persons.id HAVING equals(argMax(raw_persons.is_deleted, raw_persons.version), 0)) AS events__pdi__person ON equals(events__pdi.person_id, events__pdi__person.id)',
    )
  })

  const events = '(SELECT * FROM events PREWHERE equals(events.team_id, <team>)) AS events'
  const selectCases: [number, string, string][] = [
    [68, 'select 1 + 2, 3 + 4 from events', `SELECT plus(1, 2), plus(3, 4) FROM ${events} LIMIT 100`],
    [
      70,
      "select 1 from events prewhere 1 == 2 where event='name'",
      // PREWHERE is a WHERE condition here (it would run before the team filter): 0 AND … is 0
      `SELECT 1 FROM ${events} WHERE 0 LIMIT 100`,
    ],
    [
      71,
      'select event from events order by event desc, timestamp',
      `SELECT events.event AS event FROM ${events} ORDER BY events.event DESC, toTimeZone(events.timestamp, 'UTC') ASC LIMIT 100`,
    ],
    [72, 'select event from events limit (select 100000000)', `${events} LIMIT min2(50000, (SELECT 100000000))`],
    [73, 'select event from events offset 10', `${events} LIMIT 100 OFFSET 10`],
    [
      74,
      'select event from events group by event, timestamp',
      `GROUP BY events.event, toTimeZone(events.timestamp, 'UTC') LIMIT 100`,
    ],
    [
      75,
      'SELECT event from (select distinct event from events group by event, timestamp) e',
      `SELECT e.event AS event FROM (SELECT DISTINCT events.event AS event FROM ${events} GROUP BY events.event, toTimeZone(events.timestamp, 'UTC')) AS e LIMIT 100`,
    ],
    [76, 'SELECT events.event FROM events SAMPLE 1', `SELECT events.event AS event FROM ${events} LIMIT 100`],
    [
      77,
      'SELECT events.event FROM events SAMPLE 0.1 OFFSET 1/10',
      'FROM (SELECT * FROM events SAMPLE 0.1 OFFSET 1/10 PREWHERE equals(events.team_id, <team>)) AS events',
    ],
    [
      84,
      'SELECT distinct_id, min(timestamp) over win1 as timestamp FROM events WINDOW win1 as (PARTITION by distinct_id ORDER BY timestamp DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)',
      `min(toTimeZone(events.timestamp, 'UTC')) OVER win1 AS timestamp FROM ${events} WINDOW win1 AS (PARTITION BY events.distinct_id ORDER BY timestamp DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)`,
    ],
    [
      88,
      'select 1 as id union all select 2 as id intersect select 3 as id',
      'SELECT 1 AS id LIMIT 100 UNION ALL (SELECT 2 AS id LIMIT 100 INTERSECT SELECT 3 AS id LIMIT 100)',
    ],
  ]
  it.each(selectCases)('case %i: %s', (_id, hogql, fragment) => {
    expect(inlineSql(hogql)).toContain(fragment)
  })

  it('case 78: comma join is a CROSS JOIN and raw_groups reads the groups table, team-filtered on both sides', () => {
    const sql = inlineSql('select 1 from events, raw_groups')
    expect(sql).toBe(
      'SELECT 1 FROM (SELECT * FROM events PREWHERE equals(events.team_id, <team>)) AS events CROSS JOIN (SELECT * FROM groups AS raw_groups PREWHERE equals(raw_groups.team_id, <team>)) AS raw_groups LIMIT 100',
    )
  })

  it('cases 80/81: comparisons with nullable operands are null-safe', () => {
    // nullable_field / click_count are test-only columns in PostHog; session entry URLs are nullable here
    const sql = inlineSql(
      "select $entry_current_url != 'a', $entry_current_url != $entry_pathname, $entry_current_url like 'a', $entry_current_url like null, 'a' like null, $entry_current_url not like 'a' from sessions",
    )
    const url = 'sessions.`$entry_current_url`'
    const path = 'sessions.`$entry_pathname`'
    expect(sql).toContain(`SELECT ifNull(notEquals(${url}, 'a'), 1), `)
    expect(sql).toContain(`ifNull(notEquals(${url}, ${path}), or(isNotNull(${url}), isNotNull(${path}))), `)
    expect(sql).toContain(`ifNull(like(${url}, 'a'), 0), isNull(${url}), 0, ifNull(notLike(${url}, 'a'), 1) FROM`)
  })

  it('case 82: the team timezone goes on now() and toDateTime()', () => {
    expect(exprSql('now(), toDateTime(timestamp)', { timezone: 'Europe/Brussels' })).toBe(
      "now64(6, 'Europe/Brussels'), toDateTime(toTimeZone(events.timestamp, 'Europe/Brussels'), 'Europe/Brussels')",
    )
  })

  it('case 86: Monday week start uses mode 3', () => {
    expect(exprSql('toStartOfWeek(timestamp)', { weekStartDay: 1 })).toBe(
      "toStartOfWeek(toTimeZone(events.timestamp, 'UTC'), 3)",
    )
  })
})

describe('error cases', () => {
  const validation: [number, string, string][] = [
    [24, 'SELECT properties.something.0 FROM events', 'SQL indexes start from one, not from zero. E.g: array.1'],
    [31, 'SELECT number from numbers', "Table function 'numbers' requires arguments"],
    [32, 'SELECT number from numbers(1,2,3)', "Table function 'numbers' requires at most 2 arguments"],
    [54, 'SELECT quantile(event) FROM events', "Aggregation 'quantile' requires parameters in addition to arguments"],
    [55, 'SELECT quantile(0.5, 2)(event) FROM events', "Aggregation 'quantile' expects 1 parameter, found 2"],
    [
      56,
      'SELECT tostring(event) FROM events',
      "Unsupported function call 'tostring(...)'. Perhaps you meant 'toString(...)'?",
    ],
    [57, 'SELECT chipotle FROM events', 'Unable to resolve field: chipotle'],
    [
      58,
      'SELECT avg(avg(properties.bla)) FROM events',
      "Aggregation 'avg' cannot be nested inside another aggregation 'avg'.",
    ],
    [
      59,
      'SELECT event as `as%d` FROM events',
      'The HogQL identifier "as%d" is not permitted as it contains the "%" character',
    ],
    [61, 'SELECT b.a(bla) FROM events', 'You can only call simple functions in HogQL, not expressions'],
    [69, 'select 1 from other', 'Unknown table `other`.'],
    [
      79,
      'select row_number() OVER () as rn from events qualify rn = 1',
      "QUALIFY is not supported in the 'clickhouse' dialect",
    ],
    [89, 'select 1 as id intersect all select 2 as id', 'INTERSECT ALL is not supported'],
  ]
  it.each(validation)('case %i: %s', (_id, hogql, message) => {
    expect(() => compileHogQL(hogql, base)).toThrow(HogQLValidationError)
    expect(() => compileHogQL(hogql, base)).toThrow(message)
  })

  it('case 24 variant: index 0 in brackets names the bracket form', () => {
    expect(() => compileHogQL('SELECT properties.a[0] FROM events', base)).toThrow('E.g: array[1]')
    expect(() => compileHogQL('SELECT [1,2][0]', base)).toThrow('E.g: array[1]')
  })

  it('case 83: an unknown team timezone is rejected', () => {
    expect(() => compileHogQL('SELECT now() FROM events', { ...base, timezone: 'Europe/PostHogLandia' })).toThrow(
      "Unknown timezone: 'Europe/PostHogLandia'",
    )
  })

  it('case 60: "(" is a syntax error at the end of input', () => {
    try {
      parseExpr('(')
      expect.unreachable()
    } catch (e) {
      expect(e).toBeInstanceOf(HogQLSyntaxError)
      expect((e as HogQLSyntaxError).position).toBe(1)
      expect((e as Error).message).toContain('expected an expression, found end of input')
    }
  })

  it('case 97: SETTINGS is not allowed', () => {
    expect(() => parseSelect('select event from events limit 1 settings max_threads=1')).toThrow(
      'Unsupported: SelectStmt.settingsClause()',
    )
  })

  it('case 98: a missing table after FROM names the position and what was expected', () => {
    try {
      parseSelect('select 1 from')
      expect.unreachable()
    } catch (e) {
      expect(e).toBeInstanceOf(HogQLSyntaxError)
      expect((e as HogQLSyntaxError).position).toBe(13)
      expect((e as Error).message).toBe(
        'Syntax error at line 1, column 14: expected a table name, subquery or table function, found end of input',
      )
    }
  })

  it('validation errors carry the position of the offending node', () => {
    try {
      compileHogQL('SELECT event, nope FROM events', base)
      expect.unreachable()
    } catch (e) {
      expect((e as HogQLValidationError).position).toBe(14)
    }
  })

  it('rejects wrong argument counts', () => {
    expect(() => compileHogQL('SELECT toString() FROM events', base)).toThrow(
      "Function 'toString' expects at least 1 arguments, found 0",
    )
    expect(() => compileHogQL('SELECT if(1, 2) FROM events', base)).toThrow(
      "Function 'if' expects 3 arguments, found 2",
    )
    expect(() => compileHogQL('SELECT dateDiff(1) FROM events', base)).toThrow(
      "Function 'dateDiff' expects 3 arguments, found 1",
    )
  })
})

describe('parse cases', () => {
  const sel = (q: string) => parseSelect(q) as SelectNode

  it('case 90: LIMIT BY before LIMIT/OFFSET', () => {
    const q = sel('select 1 from events LIMIT 1 BY event LIMIT 2 OFFSET 3')
    expect(q.limitBy).toMatchObject({ n: { value: 1 }, exprs: [{ kind: 'Field', chain: ['event'] }] })
    expect(q.limitBy?.offset).toBeUndefined()
    expect(q.limit).toMatchObject({ value: 2 })
    expect(q.offset).toMatchObject({ value: 3 })
  })

  it('case 91: in LIMIT a, b BY, a is the offset', () => {
    const q = sel('select 1 from events LIMIT 4, 1 BY event LIMIT 2')
    expect(q.limitBy).toMatchObject({ n: { value: 1 }, offset: { value: 4 } })
    expect(q.limit).toMatchObject({ value: 2 })
  })

  it('case 92: subquery and column CTEs', () => {
    const q = sel("with happy as (select 'yes' from events), ':(' as sad select sad from happy")
    expect(q.ctes?.map((c) => [c.name, c.cteType])).toEqual([
      ['happy', 'subquery'],
      ['sad', 'column'],
    ])
    expect(q.ctes?.[1].expr).toMatchObject({ kind: 'Constant', value: ':(' })
    const { params } = compileHogQL("with happy as (select 'yes' from events), ':(' as sad select sad from happy", base)
    expect(Object.values(params)).toEqual(['yes', ':(', 1])
  })

  it('case 93: SAMPLE with ratio and offset', () => {
    const q = sel('select 1 from events sample 1/10 offset 999')
    expect(q.from?.sample).toMatchObject({ sample: { left: 1, right: 10 }, offset: { left: 999 } })
  })

  it('case 94: INTERSECT/EXCEPT inside UNION ALL with parentheses', () => {
    const q = parseSelect('(select 1 intersect select 2) union all (select 3 except select 4)') as SelectUnionNode
    expect(q.kind).toBe('SelectUnion')
    expect(q.initial).toMatchObject({ kind: 'SelectUnion', subsequent: [{ op: 'INTERSECT' }] })
    expect(q.subsequent).toMatchObject([
      { op: 'UNION ALL', query: { kind: 'SelectUnion', subsequent: [{ op: 'EXCEPT' }] } },
    ])
  })

  it('case 95: CASE lowers to if / multiIf / transform', () => {
    expect(parseExpr('case when 1 then 2 else 3 end')).toMatchObject({ kind: 'Call', name: 'if' })
    expect(parseExpr('case when a then b when c then d else e end')).toMatchObject({ kind: 'Call', name: 'multiIf' })
    const t = parseExpr("case x when 1 then 'a' when 2 then 'b' else 'c' end")
    expect(t).toMatchObject({
      kind: 'Call',
      name: 'transform',
      args: [{ chain: ['x'] }, { kind: 'Array' }, { kind: 'Array' }, { value: 'c' }],
    })
  })

  it('case 96: LIMIT a, b is limit a, offset b', () => {
    const q = sel('select x from t limit 2, 3')
    expect(q.limit).toMatchObject({ value: 2 })
    expect(q.offset).toMatchObject({ value: 3 })
  })

  it('case 99: * EXCLUDE', () => {
    expect(sel('select * exclude (x) from t').select[0]).toMatchObject({ kind: 'ColumnsExpr', exclude: ['x'] })
  })
})
