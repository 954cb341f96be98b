import { describe, expect, it } from 'vitest'
import {
  type CompileContext,
  compileHogQL,
  HogQLValidationError,
  parseExpr,
  trustedExpr,
} from '../../src/hogql/index.js'

const base: CompileContext = { teamId: 42, timezone: 'UTC' }
const body = (q: string, ctx: Partial<CompileContext> = {}) =>
  compileHogQL(q, { ...base, ...ctx }).sql.replace(/ SETTINGS .*$/, '')

describe('limits and pagination', () => {
  it('adds the default limit and reports pagination', () => {
    const c = compileHogQL('SELECT event FROM events', base)
    expect(c.sql).toContain(' LIMIT 100 ')
    expect(c.pagination).toEqual({ limit: 100, offset: 0 })
    expect(c.hogql).toBe('SELECT event FROM events LIMIT 100')
  })

  it('asks one row more with limitPlusOne, keeping the normalised text at the limit', () => {
    const c = compileHogQL('SELECT event FROM events OFFSET 20', { ...base, limit: 50, limitPlusOne: true })
    expect(c.sql).toContain(' LIMIT 51 OFFSET 20')
    expect(c.pagination).toEqual({ limit: 50, offset: 20 })
    expect(c.hogql).toBe('SELECT event FROM events LIMIT 50 OFFSET 20')
  })

  it('leaves user limits alone but clamps them to 50000', () => {
    const c = compileHogQL('SELECT event FROM events LIMIT 7', { ...base, limitPlusOne: true })
    expect(c.sql).toContain(' LIMIT 7 ')
    expect(c.pagination).toBeUndefined()
    expect(body('SELECT event FROM events LIMIT 1000000')).toMatch(/LIMIT 50000$/)
    expect(body('SELECT 1', { limit: 10_000_000 })).toMatch(/LIMIT 50000$/)
  })

  it('gives no default limit to subqueries', () => {
    expect(body('SELECT * FROM (SELECT event FROM events)')).toMatch(
      /^SELECT event FROM \(SELECT events.event AS event FROM \(SELECT \* FROM events PREWHERE [^)]*\)\) AS events\) LIMIT 100$/,
    )
  })
})

describe('placeholders', () => {
  it('binds values of every JSON type', () => {
    const c = compileHogQL('SELECT {s}, {n}, {f}, {b}, {z}, {a}, {nested.key}', {
      ...base,
      placeholders: { s: "x'y", n: 3, f: 1.5, b: true, z: null, a: ['p', 2], nested: { key: 'deep' } },
    })
    expect(body('SELECT 1')).toBe('SELECT 1 LIMIT 100')
    expect(c.sql).toMatch(
      /^SELECT \{hogql_val_0:String\}, 3, 1.5, true, NULL, \[\{hogql_val_1:String\}, 2\], \{hogql_val_2:String\}/,
    )
    expect(c.params).toMatchObject({ hogql_val_0: "x'y", hogql_val_1: 'p', hogql_val_2: 'deep' })
  })

  it('accepts HogQL expressions as placeholder values', () => {
    const sql = body('SELECT event FROM events WHERE {filters}', {
      placeholders: { filters: trustedExpr(parseExpr("event = 'a'")) },
    })
    expect(sql).toContain(
      'FROM (SELECT * FROM events PREWHERE and(equals(events.team_id, {hogql_team_id:Int64}), equals(events.event, {hogql_val_0:String}))) AS events WHERE equals(events.event, {hogql_val_0:String})',
    )
  })

  it('names the missing placeholder and the available ones', () => {
    expect(() => compileHogQL('SELECT {x}', base)).toThrow('Unresolved placeholder: {x}')
    expect(() => compileHogQL('SELECT {x}', { ...base, placeholders: { y: 1, z: 2 } })).toThrow(
      'Placeholder {x} is not available in this context. You can use the following: y, z',
    )
  })
})

describe('property types', () => {
  const propertyTypes = { event: { price: 'Numeric', at: 'DateTime', ok: 'Boolean' }, person: { age: 'Numeric' } }
  it('casts declared property types like PostHog', () => {
    const sql = body(
      'SELECT properties.price, properties.at, properties.ok, person.properties.age, properties.other FROM events',
      {
        propertyTypes,
      },
    )
    expect(sql).toContain(
      "accurateCastOrNull(replaceRegexpAll(nullIf(nullIf(JSONExtractRaw(events.properties, {hogql_val_0:String}), ''), 'null'), '^\"|\"$', ''), 'Float64') AS price",
    )
    expect(sql).toContain(
      "parseDateTime64BestEffortOrNull(replaceRegexpAll(nullIf(nullIf(JSONExtractRaw(events.properties, {hogql_val_1:String}), ''), 'null'), '^\"|\"$', ''), 6, 'UTC') AS at",
    )
    expect(sql).toContain('toBool(transform(toString(replaceRegexpAll(')
    expect(sql).toContain("'Float64') AS age")
    expect(sql).toMatch(
      /JSONExtractRaw\(events.properties, \{hogql_val_4:String\}\), ''\), 'null'\), '\^"\|"\$', ''\) AS other/,
    )
  })

  it('does not cast inside the OrZero conversions', () => {
    expect(body('SELECT toFloatOrZero(properties.price) FROM events', { propertyTypes })).toMatch(
      /^SELECT toFloat64OrZero\(replaceRegexpAll/,
    )
  })
})

describe('names, columns and timezones', () => {
  it('reports column names', () => {
    const c = compileHogQL('SELECT event, count(), properties.$browser, e2 FROM events ARRAY JOIN [1] AS e2', base)
    expect(c.columns).toEqual(['event', 'count()', '$browser', 'e2'])
  })

  it('wraps every DateTime column in the team timezone', () => {
    const sql = body('SELECT timestamp, created_at, person.created_at FROM events WHERE timestamp > now()', {
      timezone: 'America/New_York',
    })
    expect(sql).toContain("toTimeZone(events.timestamp, 'America/New_York') AS timestamp")
    expect(sql).toContain("toTimeZone(events.created_at, 'America/New_York') AS created_at")
    expect(sql).toContain("toTimeZone(events__pdi__person.created_at, 'America/New_York')")
    expect(sql).toContain("greater(toTimeZone(events.timestamp, 'America/New_York'), now64(6, 'America/New_York'))")
  })

  it('parses strings to datetimes in the team timezone', () => {
    expect(
      body("SELECT toDateTime('2024-01-01'), toDateTime(event), toDate(timestamp), toDate(event) FROM events"),
    ).toContain(
      "SELECT parseDateTime64BestEffort({hogql_val_0:String}, 6, 'UTC'), parseDateTime64BestEffortOrNull(events.event, 6, 'UTC'), toDate(toTimeZone(events.timestamp, 'UTC')), toDateOrNull(events.event)",
    )
  })

  it('prints lag/lead with a full frame and casts', () => {
    expect(body('SELECT lag(event) OVER (ORDER BY timestamp) FROM events')).toContain(
      "lagInFrame(toNullable(events.event)) OVER (ORDER BY toTimeZone(events.timestamp, 'UTC') ASC ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)",
    )
  })

  it('prints conversions as null-returning casts', () => {
    expect(body("SELECT toInt('1'), toFloat('1.5'), toUUID('x'), '1'::int, toDecimal('1.5', 2)")).toBe(
      "SELECT accurateCastOrNull({hogql_val_0:String}, 'Int64'), accurateCastOrNull({hogql_val_1:String}, 'Float64'), accurateCastOrNull({hogql_val_2:String}, 'UUID'), accurateCastOrNull({hogql_val_0:String}, 'Int64'), accurateCastOrNull({hogql_val_1:String}, 'Decimal64(2)') LIMIT 100",
    )
  })

  it('accepts aggregate combinators and rejects unknown functions', () => {
    expect(body('SELECT sumIf(1, 1), countOrNullIf(1), avgArrayIf([1], 1), maxArgMax(1, 2) FROM events')).toContain(
      'sumIf(1, 1), countOrNullIf(1), avgArrayIf([1], 1), maxArgMax(1, 2)',
    )
    expect(() => compileHogQL('SELECT hamburger(1)', base)).toThrow("Unsupported function call 'hamburger(...)'")
    expect(() => compileHogQL('SELECT sumIfIf(1, 1, 1)', base)).toThrow(HogQLValidationError)
  })

  it('lets an alias shadow a column outside its own definition', () => {
    expect(body('SELECT toDate(timestamp) AS timestamp FROM events ORDER BY timestamp')).toContain(
      "SELECT toDate(toTimeZone(events.timestamp, 'UTC')) AS timestamp FROM (SELECT * FROM events PREWHERE equals(events.team_id, {hogql_team_id:Int64})) AS events ORDER BY timestamp ASC",
    )
  })
})

describe('materialized property columns', () => {
  const materialized = { materializedEventProperties: { $browser: 'mat_$browser', price: 'mat_price' } }

  it('reads a materialized event property from its column', () => {
    expect(body("SELECT properties.$browser, properties['$browser'] AS b FROM events", materialized)).toContain(
      'SELECT events.`mat_$browser` AS `$browser`, events.`mat_$browser` AS b FROM (SELECT * FROM events PREWHERE',
    )
  })

  it('keeps declared property types over the column', () => {
    const sql = body('SELECT properties.price AS price FROM events', {
      ...materialized,
      propertyTypes: { event: { price: 'Numeric' } },
    })
    expect(sql).toContain("accurateCastOrNull(events.mat_price, 'Float64') AS price")
  })

  it('reads other properties, nested paths and other scopes from the JSON', () => {
    const sql = body(
      'SELECT properties.$os, properties.$browser.version, person.properties.$browser FROM events',
      materialized,
    )
    expect(sql).toContain('JSONExtractRaw(events.properties, {hogql_val_0:String})')
    expect(sql).toContain('JSONExtractRaw(events.properties, {hogql_val_1:String}, {hogql_val_2:String})')
    expect(sql).toContain('JSONExtractRaw(events__pdi__person.properties, {hogql_val_1:String})')
    expect(sql).not.toContain('mat_')
  })

  it('reads the JSON where the events table is wrapped in a subquery (its columns come from events.*)', () => {
    const sql = body(
      'SELECT e.properties.$browser FROM persons p JOIN events e ON e.distinct_id = toString(p.id)',
      materialized,
    )
    expect(sql).toContain('(SELECT * FROM events AS e PREWHERE equals(e.team_id, {hogql_team_id:Int64})) AS e')
    expect(sql).toContain('JSONExtractRaw(e.properties, {hogql_val_0:String})')
    expect(sql).not.toContain('mat_')
  })

  it('reads the JSON without a materialization context (the conformance texts)', () => {
    expect(body('SELECT properties.$browser FROM events')).toContain(
      "replaceRegexpAll(nullIf(nullIf(JSONExtractRaw(events.properties, {hogql_val_0:String}), ''), 'null'), '^\"|\"$', '')",
    )
  })
})

describe('time conditions the sort key can use', () => {
  const ny = { timezone: 'America/New_York' }

  it('adds the implied condition on the bare timestamp column to the WHERE', () => {
    const sql = body("SELECT count() FROM events WHERE timestamp >= now() - INTERVAL 7 DAY AND event = 'x'", ny)
    expect(sql).toContain(
      "greaterOrEquals(toTimeZone(events.timestamp, 'America/New_York'), minus(now64(6, 'America/New_York'), toIntervalDay(7)))",
    )
    expect(sql).toContain(
      "greaterOrEquals(events.timestamp, minus(toDateTime64(minus(now64(6, 'America/New_York'), toIntervalDay(7)), 6, 'America/New_York'), toIntervalMicrosecond(1)))",
    )
  })

  it('flips the comparison when the timestamp is on the right, and bounds from above', () => {
    const sql = body('SELECT count() FROM events WHERE now() > timestamp AND timestamp <= today()')
    expect(sql).toContain(
      "lessOrEquals(events.timestamp, plus(toDateTime64(now64(6, 'UTC'), 6, 'UTC'), toIntervalMicrosecond(1)))",
    )
    expect(sql).toContain(
      "lessOrEquals(events.timestamp, plus(toDateTime64(toDate(now64(6, 'UTC')), 6, 'UTC'), toIntervalMicrosecond(1)))",
    )
  })

  it('adds nothing for strings, nullable values, disjunctions or a wrapped events table', () => {
    for (const where of [
      "timestamp >= '2024-01-01'",
      'timestamp >= toDateTime(event)',
      "timestamp >= now() OR event = 'x'",
      'NOT timestamp >= now()',
      'timestamp >= toStartOfDay(timestamp)',
      'timestamp >= created_at',
    ]) {
      expect(body(`SELECT count() FROM events WHERE ${where}`)).not.toMatch(/Equals\(events\.timestamp,/)
    }
    expect(
      body('SELECT count() FROM persons p JOIN events e ON e.distinct_id = toString(p.id) WHERE e.timestamp > now()'),
    ).not.toMatch(/Equals\(e\.timestamp,/)
  })
})

describe('event names the sort key can use', () => {
  const TEAM_ONLY = 'equals(events.team_id, {hogql_team_id:Int64})'
  it('repeats event = constant, IN constants and disjunctions of them inside the team subquery', () => {
    expect(body("SELECT count() FROM events WHERE event = 'a' AND distinct_id = 'x'")).toContain(
      `(SELECT * FROM events PREWHERE and(${TEAM_ONLY}, equals(events.event, {hogql_val_0:String}))) AS events`,
    )
    expect(body("SELECT count() FROM events WHERE event IN ('a', 'b')")).toContain(
      `and(${TEAM_ONLY}, in(events.event, tuple({hogql_val_0:String}, {hogql_val_1:String}))))`,
    )
    expect(body("SELECT count() FROM events WHERE event = 'a' OR (event = 'b' AND distinct_id = 'x')")).toContain(
      `and(${TEAM_ONLY}, or(equals(events.event, {hogql_val_0:String}), equals(events.event, {hogql_val_1:String}))))`,
    )
  })

  it('adds nothing for negations, other disjuncts, empty names, expressions or a joined events table', () => {
    for (const where of [
      "NOT event = 'a'",
      "event != 'a'",
      "event = 'a' OR distinct_id = 'x'",
      "event = ''",
      'event = distinct_id',
      "lower(event) = 'a'",
    ]) {
      expect(body(`SELECT count() FROM events WHERE ${where}`)).toContain(
        `(SELECT * FROM events PREWHERE ${TEAM_ONLY})`,
      )
    }
    expect(
      body("SELECT count() FROM persons p JOIN events e ON e.distinct_id = toString(p.id) WHERE e.event = 'a'"),
    ).not.toMatch(/team_id, \{hogql_team_id:Int64\}\), equals\(e\.event/)
  })
})
