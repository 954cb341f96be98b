/**
 * Cross-tenant exfiltration attempts, generated as throwing function × clause × table. Each query makes a function
 * that throws on bad input take its argument from the row it reads: `F(if(<my row>, <harmless value>, <row data>))`.
 * On the caller's own rows the argument is harmless; were the expression ever evaluated on another project's row,
 * the function would throw with (or on) that row's data, which is what engine error messages used to carry out.
 *
 * No query text contains any of the victim's strings: answers echo the query (`hogql`, `clickhouse`), so a marker
 * in the text would look like a leak.
 */
import { HOME_TOKEN } from './tenant-fixture.js'

/** A table (or a lazy join of one) as the corpus reads it. */
export interface Source {
  name: string
  /** HogQL table name */
  table: string
  /** String expression over the row's data, every field prefixed by `p` (`''` or `a.`) */
  data: (p: string) => string
  /** a column for joins, grouping and IN subqueries */
  key: string
  /** Whether a string of this row's data is one of the caller's rows; default: it contains `homerow`. */
  own?: (d: string) => string
  /** a physical table: PREWHERE applies */
  physical?: boolean
  /** the field holding a person id, for IN COHORT */
  personId?: string
}

const homerow = (d: string) => `ilike(${d}, '%${HOME_TOKEN}%')`
/** distinct ids: the caller's all contain `homerow`, except the ones both projects use */
const ownDistinctId = (d: string) => `multiSearchAnyCaseInsensitive(${d}, ['${HOME_TOKEN}', 'shared-'])`

export const SOURCES: Source[] = [
  {
    name: 'events',
    table: 'events',
    data: (p) =>
      `concat(toString(${p}uuid), '|', ${p}event, '|', ${p}distinct_id, '|', ${p}properties, '|', ${p}elements_chain, '|', ${p}$session_id, '|', ${p}$group_0)`,
    key: 'distinct_id',
    physical: true,
    personId: 'person_id',
  },
  {
    name: 'events (JSON extraction)',
    table: 'events',
    data: (p) => `JSONExtractString(${p}properties, 'secret')`,
    key: 'distinct_id',
    physical: true,
    personId: 'person_id',
  },
  {
    name: 'events (property access)',
    table: 'events',
    data: (p) => `coalesce(toString(${p}properties.secret), '')`,
    key: 'distinct_id',
    physical: true,
  },
  {
    name: 'events.person.properties',
    table: 'events',
    data: (p) => `concat(toString(${p}person_id), '|', ${p}person.properties)`,
    key: 'distinct_id',
    personId: 'person_id',
  },
  {
    name: 'events.pdi.distinct_id',
    table: 'events',
    data: (p) => `concat(${p}pdi.distinct_id, '|', toString(${p}pdi.person_id))`,
    key: 'distinct_id',
    own: ownDistinctId,
  },
  {
    name: 'events.session.*',
    table: 'events',
    data: (p) => `concat(${p}session.session_id, '|', ifNull(${p}session.$entry_current_url, ''))`,
    key: 'distinct_id',
  },
  {
    name: 'events.group_0.properties',
    table: 'events',
    data: (p) => `concat(${p}$group_0, '|', ${p}group_0.properties)`,
    key: 'distinct_id',
  },
  {
    name: 'persons',
    table: 'persons',
    data: (p) => `concat(toString(${p}id), '|', ${p}properties)`,
    key: 'id',
    personId: 'id',
  },
  {
    name: 'person_distinct_ids',
    table: 'person_distinct_ids',
    data: (p) => `concat(${p}distinct_id, '|', toString(${p}person_id))`,
    key: 'distinct_id',
    own: ownDistinctId,
    personId: 'person_id',
  },
  {
    name: 'person_distinct_ids.person.properties',
    table: 'person_distinct_ids',
    data: (p) => `concat(${p}distinct_id, '|', ${p}person.properties)`,
    key: 'distinct_id',
  },
  {
    name: 'groups',
    table: 'groups',
    data: (p) => `concat(${p}key, '|', ${p}properties)`,
    key: 'key',
  },
  {
    name: 'sessions',
    table: 'sessions',
    data: (p) =>
      `concat(${p}session_id, '|', ${p}distinct_id, '|', ifNull(${p}$entry_current_url, ''), '|', ifNull(${p}$end_current_url, ''))`,
    key: 'session_id',
  },
  {
    name: 'raw_persons',
    table: 'raw_persons',
    data: (p) => `concat(toString(${p}id), '|', ${p}properties)`,
    key: 'id',
    physical: true,
    personId: 'id',
  },
  {
    name: 'raw_person_distinct_ids',
    table: 'raw_person_distinct_ids',
    data: (p) => `concat(${p}distinct_id, '|', toString(${p}person_id))`,
    key: 'distinct_id',
    own: ownDistinctId,
    physical: true,
    personId: 'person_id',
  },
  {
    name: 'raw_groups',
    table: 'raw_groups',
    data: (p) => `concat(${p}group_key, '|', ${p}group_properties)`,
    key: 'group_key',
    physical: true,
  },
]

/** A function that fails on bad input, with an input it accepts. */
export interface Thrower {
  name: string
  apply: (x: string) => string
  /** HogQL literal the function accepts */
  safe: string
  /** turns the row's data into an input that fails (default: the data itself) */
  bad?: (d: string) => string
  /** false for catalogue functions HogQL maps onto their OrNull forms: they cannot throw, but must not leak either */
  throws: boolean
  /** a near copy of another entry (same error class): tried on every table, not in every clause */
  variant?: boolean
}

/** A branch that is 1 on the caller's input and 0 on the row's data: a one-bit oracle on that data. */
const isSafe = (x: string) => `if(equals(${x}, '1'), 1, 0)`

export const THROWERS: Thrower[] = [
  { name: '_toInt64', apply: (x) => `_toInt64(${x})`, safe: "'0'", throws: true },
  { name: '_toInt32', apply: (x) => `_toInt32(${x})`, safe: "'0'", throws: true, variant: true },
  { name: '_toInt8', apply: (x) => `_toInt8(${x})`, safe: "'0'", throws: true, variant: true },
  { name: '_toUInt64', apply: (x) => `_toUInt64(${x})`, safe: "'0'", throws: true, variant: true },
  { name: 'toBool', apply: (x) => `toBool(${x})`, safe: "'true'", throws: true },
  { name: '_toDate', apply: (x) => `_toDate(${x})`, safe: "'2024-01-01'", throws: true },
  { name: 'toDateTime64', apply: (x) => `toDateTime64(${x})`, safe: "'2024-01-01 00:00:00'", throws: true },
  { name: 'toIntervalSecond', apply: (x) => `toIntervalSecond(${x})`, safe: "'1'", throws: true, variant: true },
  { name: 'base64Decode', apply: (x) => `base64Decode(${x})`, safe: "'aGk='", throws: true },
  { name: 'base58Decode', apply: (x) => `base58Decode(${x})`, safe: "'Cn8eVZg'", throws: true, variant: true },
  {
    name: 'match (regex)',
    apply: (x) => `match('a', ${x})`,
    safe: "'a'",
    bad: (d) => `concat('(', ${d})`,
    throws: true,
  },
  {
    name: 'like (escape)',
    apply: (x) => `like('a', ${x})`,
    safe: "'a'",
    bad: (d) => `concat(${d}, '\\\\')`,
    throws: true,
  },
  {
    name: 'splitByString + _toInt64',
    apply: (x) => `_toInt64(arrayElement(splitByString('|', ${x}), 1))`,
    safe: "'0|0'",
    throws: true,
  },
  {
    name: 'arrayZip (sizes)',
    apply: (x) => `arrayZip([1], splitByString('|', ${x}))`,
    safe: "'a'",
    bad: (d) => `concat(${d}, '|')`,
    throws: true,
  },
  { name: 'intDiv by zero', apply: (x) => `intDiv(1, ${isSafe(x)})`, safe: "'1'", throws: true },
  { name: 'modulo by zero', apply: (x) => `modulo(1, ${isSafe(x)})`, safe: "'1'", throws: true, variant: true },
  {
    name: 'range (bounds)',
    apply: (x) => `length(range(if(equals(${x}, '1'), 1, 1000000000)))`,
    safe: "'1'",
    throws: true,
  },
  {
    name: 'repeat (size)',
    apply: (x) => `length(repeat('a', if(equals(${x}, '1'), 1, 1000000000000)))`,
    safe: "'1'",
    throws: true,
  },
  // HogQL maps these onto accurateCastOrNull / …OrNull: they give NULL instead of throwing
  { name: 'toInt', apply: (x) => `toInt(${x})`, safe: "'0'", throws: false },
  { name: 'toFloat', apply: (x) => `toFloat(${x})`, safe: "'0'", throws: false },
  { name: 'toDecimal', apply: (x) => `toDecimal(${x}, 2)`, safe: "'1'", throws: false },
  { name: 'toUUID', apply: (x) => `toUUID(${x})`, safe: `'00000000-0000-0000-0000-000000000000'`, throws: false },
  { name: 'toDate', apply: (x) => `toDate(${x})`, safe: "'2024-01-01'", throws: false },
  { name: 'toDateTime', apply: (x) => `toDateTime(${x})`, safe: "'2024-01-01 00:00:00'", throws: false },
  { name: 'parseDateTime', apply: (x) => `parseDateTime(${x}, '%Y')`, safe: "'2024'", throws: false },
  { name: 'assumeNotNull', apply: (x) => `assumeNotNull(nullIf(${x}, ''))`, safe: "'a'", throws: false },
  { name: 'JSONExtractInt', apply: (x) => `JSONExtractInt(${x}, 'a')`, safe: `'{"a":1}'`, throws: false },
  { name: 'CAST AS Int64', apply: (x) => `CAST(${x} AS Int64)`, safe: "'0'", throws: false },
  { name: '::UUID', apply: (x) => `(${x})::UUID`, safe: `'00000000-0000-0000-0000-000000000000'`, throws: false },
  {
    name: 'toDecimal overflow',
    apply: (x) => `toDecimal(multiply(length(${x}), 1e30), 9)`,
    safe: "''",
    throws: false,
  },
  {
    name: 'arrayElement out of bounds',
    apply: (x) => `arrayElement(splitByString('|', ${x}), 100)`,
    safe: "'a'",
    throws: false,
  },
  {
    name: 'arrayElement on empty',
    apply: (x) => `arrayElement(arrayFilter(y -> y != y, [${x}]), 1)`,
    safe: "'a'",
    throws: false,
  },
]

/** The throwing expression over a data expression `d`. */
export function attack(source: Source, f: Thrower, d: string): string {
  const own = (source.own ?? homerow)(d)
  return f.apply(`if(${own}, ${f.safe}, ${f.bad ? f.bad(d) : d})`)
}

const cond = (e: string) => `notEmpty(toString(${e}))`

/** A clause the throwing expression can sit in: the query built around it. */
export interface Clause {
  name: string
  /** null when the clause does not apply to the source */
  build: (s: Source, f: Thrower) => string | null
}

export const CLAUSES: Clause[] = [
  { name: 'SELECT', build: (s, f) => `SELECT ${attack(s, f, s.data(''))} FROM ${s.table}` },
  { name: 'WHERE', build: (s, f) => `SELECT count() FROM ${s.table} WHERE ${cond(attack(s, f, s.data('')))}` },
  {
    name: 'PREWHERE',
    build: (s, f) => (s.physical ? `SELECT count() FROM ${s.table} PREWHERE ${cond(attack(s, f, s.data('')))}` : null),
  },
  {
    name: 'PREWHERE and WHERE',
    build: (s, f) =>
      s.physical
        ? `SELECT count() FROM ${s.table} PREWHERE ${cond(attack(s, f, s.data('')))} WHERE notEmpty(toString(${s.key}))`
        : null,
  },
  {
    name: 'FINAL',
    build: (s, f) =>
      s.physical ? `SELECT count() FROM ${s.table} FINAL WHERE ${cond(attack(s, f, s.data('')))}` : null,
  },
  {
    name: 'ORDER BY column LIMIT (top-K)',
    build: (s, f) => `SELECT toString(${attack(s, f, s.data(''))}) AS v FROM ${s.table} ORDER BY ${s.key}, v LIMIT 3`,
  },
  {
    name: 'JOIN keys (runtime filters)',
    build: (s, f) =>
      `SELECT count() FROM ${s.table} a JOIN ${s.table} b ON a.${s.key} = b.${s.key} AND ${attack(s, f, s.data('a.'))} = ${attack(s, f, s.data('b.'))}`,
  },
  {
    name: 'JOIN ON (left side)',
    build: (s, f) =>
      `SELECT count() FROM ${s.table} a JOIN ${s.table} b ON a.${s.key} = b.${s.key} AND ${cond(attack(s, f, s.data('a.')))}`,
  },
  {
    name: 'LEFT JOIN ON (right side)',
    build: (s, f) =>
      `SELECT count() FROM ${s.table} a LEFT JOIN ${s.table} b ON a.${s.key} = b.${s.key} AND ${cond(attack(s, f, s.data('b.')))}`,
  },
  {
    name: 'WHERE over a join',
    build: (s, f) =>
      `SELECT count() FROM ${s.table} a JOIN ${s.table} b ON a.${s.key} = b.${s.key} WHERE ${cond(attack(s, f, s.data('b.')))}`,
  },
  {
    name: 'GROUP BY',
    build: (s, f) => `SELECT toString(${attack(s, f, s.data(''))}) AS g, count() FROM ${s.table} GROUP BY g`,
  },
  {
    name: 'ORDER BY',
    build: (s, f) => `SELECT 1 FROM ${s.table} ORDER BY toString(${attack(s, f, s.data(''))}) LIMIT 1`,
  },
  {
    name: 'HAVING',
    build: (s, f) =>
      `SELECT max(${s.data('')}) AS m FROM ${s.table} GROUP BY ${s.key} HAVING ${cond(attack(s, f, 'm'))}`,
  },
  {
    name: 'LIMIT BY',
    build: (s, f) => `SELECT 1 FROM ${s.table} LIMIT 1 BY toString(${attack(s, f, s.data(''))})`,
  },
  {
    name: 'subquery',
    build: (s, f) => `SELECT max(toString(v)) FROM (SELECT ${attack(s, f, s.data(''))} AS v FROM ${s.table})`,
  },
  {
    name: 'outer query over a subquery',
    build: (s, f) => `SELECT max(toString(${attack(s, f, 'd')})) FROM (SELECT ${s.data('')} AS d FROM ${s.table})`,
  },
  {
    name: 'CTE',
    build: (s, f) =>
      `WITH c AS (SELECT ${attack(s, f, s.data(''))} AS v FROM ${s.table}) SELECT max(toString(v)) FROM c`,
  },
  {
    name: 'outer query over a CTE',
    build: (s, f) =>
      `WITH c AS (SELECT ${s.data('')} AS d FROM ${s.table}) SELECT count() FROM c WHERE ${cond(attack(s, f, 'd'))}`,
  },
  {
    name: 'arrayMap over groupArray',
    build: (s, f) =>
      `SELECT arrayDistinct(arrayMap(x -> toString(${attack(s, f, 'x')}), groupArray(${s.data('')}))) FROM ${s.table}`,
  },
  {
    name: 'arrayFilter over groupArray',
    build: (s, f) =>
      `SELECT length(arrayFilter(x -> ${cond(attack(s, f, 'x'))}, groupArray(${s.data('')}))) FROM ${s.table}`,
  },
  {
    name: 'arrayJoin',
    build: (s, f) => `SELECT count() FROM ${s.table} WHERE ${cond(attack(s, f, `arrayJoin([${s.data('')}])`))}`,
  },
  {
    name: 'ARRAY JOIN',
    build: (s, f) => `SELECT toString(${attack(s, f, 'x')}) FROM ${s.table} ARRAY JOIN [${s.data('')}] AS x`,
  },
  {
    name: 'window PARTITION BY',
    build: (s, f) => `SELECT row_number() OVER (PARTITION BY toString(${attack(s, f, s.data(''))})) FROM ${s.table}`,
  },
  {
    name: 'window function argument',
    build: (s, f) =>
      `SELECT first_value(toString(${attack(s, f, s.data(''))})) OVER (ORDER BY ${s.key}) FROM ${s.table}`,
  },
  {
    name: 'IN subquery',
    build: (s, f) =>
      `SELECT count() FROM ${s.table} WHERE ${s.key} IN (SELECT ${s.key} FROM ${s.table} WHERE ${cond(attack(s, f, s.data('')))})`,
  },
  {
    name: 'IN subquery selecting it',
    build: (s, f) =>
      `SELECT count() FROM ${s.table} WHERE toString(${s.key}) IN (SELECT toString(${attack(s, f, s.data(''))}) FROM ${s.table})`,
  },
  {
    name: 'UNION ALL',
    build: (s, f) => `SELECT toString(${attack(s, f, s.data(''))}) FROM ${s.table} UNION ALL SELECT 'x'`,
  },
  {
    name: 'UNION DISTINCT second',
    build: (s, f) => `SELECT 'x' UNION DISTINCT SELECT toString(${attack(s, f, s.data(''))}) FROM ${s.table}`,
  },
  {
    name: 'scalar subquery',
    build: (s, f) => `SELECT (SELECT max(toString(${attack(s, f, s.data(''))})) FROM ${s.table})`,
  },
]

export interface Attempt {
  name: string
  query: string
  /** the function throws on the victim's data: the victim itself running the query gets an error */
  throws: boolean
}

/** IN COHORT attempts over the caller's own cohorts (HogQL cohort references: ids or quoted names). */
export function cohortAttempts(cohorts: string[], f: Thrower): Attempt[] {
  const out: Attempt[] = []
  for (const cohort of cohorts) {
    for (const s of SOURCES) {
      if (!s.personId) continue
      out.push({
        name: `${s.name} × IN COHORT ${cohort} × ${f.name}`,
        query: `SELECT count() FROM ${s.table} WHERE ${s.personId} IN COHORT ${cohort} AND ${cond(attack(s, f, s.data('')))}`,
        throws: f.throws,
      })
    }
  }
  return out
}

/** Attempts across different tables joined explicitly. */
export function crossTableAttempts(f: Thrower): Attempt[] {
  const byName = Object.fromEntries(SOURCES.map((s) => [s.name, s]))
  const persons = byName.persons
  const groups = byName.groups
  const rawPdi = byName.raw_person_distinct_ids
  const sessions = byName.sessions
  return [
    {
      name: `events JOIN persons × WHERE × ${f.name}`,
      query: `SELECT count() FROM events e JOIN persons p ON e.person_id = p.id WHERE ${cond(attack(persons, f, persons.data('p.')))}`,
      throws: f.throws,
    },
    {
      name: `events LEFT JOIN groups × ON × ${f.name}`,
      query: `SELECT count() FROM events e LEFT JOIN groups g ON e.$group_0 = g.key AND ${cond(attack(groups, f, groups.data('g.')))}`,
      throws: f.throws,
    },
    {
      name: `persons JOIN raw_person_distinct_ids × SELECT × ${f.name}`,
      query: `SELECT ${attack(rawPdi, f, rawPdi.data('d.'))} FROM persons p JOIN raw_person_distinct_ids d ON p.id = d.person_id`,
      throws: f.throws,
    },
    {
      name: `events JOIN sessions × GROUP BY × ${f.name}`,
      query: `SELECT toString(${attack(sessions, f, sessions.data('s.'))}) AS g, count() FROM events e JOIN sessions s ON e.$session_id = s.session_id GROUP BY g`,
      throws: f.throws,
    },
  ]
}

/**
 * The corpus: every clause × every table with `_toInt64`; every function × every table in WHERE; every throwing
 * function × every clause on events and in explicit joins across tables; IN COHORT over every table with a few
 * functions. `cohorts` are cohorts of the caller's project.
 */
export function buildCorpus(cohorts: string[]): Attempt[] {
  const seen = new Set<string>()
  const out: Attempt[] = []
  const add = (name: string, query: string | null, throws: boolean) => {
    if (query === null || seen.has(query)) return
    seen.add(query)
    out.push({ name, query, throws })
  }
  const [first] = THROWERS
  const where = CLAUSES.find((c) => c.name === 'WHERE') as Clause
  for (const s of SOURCES)
    for (const c of CLAUSES) add(`${s.name} × ${c.name} × ${first.name}`, c.build(s, first), true)
  for (const f of THROWERS) {
    for (const s of SOURCES) add(`${s.name} × WHERE × ${f.name}`, where.build(s, f), f.throws)
    if (!f.throws || f.variant) continue
    for (const c of CLAUSES) add(`events × ${c.name} × ${f.name}`, c.build(SOURCES[0], f), true)
    for (const a of crossTableAttempts(f)) add(a.name, a.query, a.throws)
  }
  for (const f of THROWERS.filter((f) => ['_toInt64', 'match (regex)', 'intDiv by zero'].includes(f.name))) {
    for (const a of cohortAttempts(cohorts, f)) add(a.name, a.query, a.throws)
  }
  return out
}

/**
 * Corpus entries that, run by the victim on its own rows, must fail: every clause, every table, every throwing
 * function, IN COHORT and the explicit joins at least once.
 */
export function potencyChecks(corpus: Attempt[]): Attempt[] {
  return corpus.filter((a) => {
    if (!a.throws) return false
    const [source, clause, fn] = a.name.split(' × ')
    if (source === 'events' && fn === '_toInt64') return true
    if (clause === 'WHERE' && (fn === '_toInt64' || source === 'events')) return true
    if (clause.startsWith('IN COHORT') && source === 'events') return true
    return source.includes(' JOIN ') && fn === '_toInt64'
  })
}

/**
 * Throwing functions outside the HogQL catalogue: each must be refused before anything runs. Written over the
 * victim's kind of data like the corpus, in case one is ever added to the catalogue.
 */
export const REFUSED: string[] = [
  "SELECT count() FROM events WHERE throwIf(NOT ilike(properties, '%homerow%'))",
  "SELECT count() FROM events WHERE notEmpty(toString(accurateCast(properties, 'Int64')))",
  'SELECT count() FROM events WHERE notEmpty(toString(toInt64(properties)))',
  'SELECT count() FROM events WHERE notEmpty(toString(toFixedString(properties, 1)))',
  'SELECT count() FROM events WHERE notEmpty(toString(parseDateTimeBestEffortOrZero(properties) > now() AND throwIf(1)))',
  'SELECT count() FROM events WHERE notEmpty(toString(getSetting(properties)))',
  "SELECT count() FROM events WHERE notEmpty(toString(dictGet(properties, 'a', 1)))",
]
