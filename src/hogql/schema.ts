/**
 * The virtual database HogQL queries see, mapped onto Burrow's physical ClickHouse tables
 * (events, persons, person_distinct_ids, groups). Lazy tables become team-filtered subqueries that read
 * ReplacingMergeTree rows at their latest version; lazy joins are added only when a query uses them.
 */

export type BaseType = 'String' | 'Integer' | 'Float' | 'Boolean' | 'DateTime' | 'Date' | 'UUID' | 'Array' | 'Unknown'

export type PropertyScope = 'event' | 'person' | 'group'

export type FieldDef =
  /** a column of the table (physical column, or output column of a lazy table's subquery) */
  | { kind: 'column'; ch: string; type: BaseType; nullable?: boolean; json?: PropertyScope }
  /** a join added on use: `events.pdi`, `events.session`, `events.group_0` */
  | { kind: 'lazy'; join: LazyJoinDef }
  /** another path on the same table: `events.person` → `pdi.person` */
  | { kind: 'traverse'; chain: string[] }
  /** a namespace of fields living on the parent row: `events.poe.properties` */
  | { kind: 'virtual'; fields: Record<string, FieldDef> }

export interface LazyJoinDef {
  table: string
  joinType: 'INNER JOIN' | 'LEFT JOIN'
  /** field on the host, field on the joined table */
  on: [string, string]
  /** extra argument for the lazy table's builder, e.g. the group type index */
  variant?: number
}

export interface TableDef {
  name: string
  /** physical ClickHouse table name; absent for lazy tables */
  ch?: string
  fields: Record<string, FieldDef>
  /** what `*` expands to */
  star: string[]
  /** a DateTime column whose date is in the table's sort key (comparisons with it get an index hint) */
  sortKeyTime?: string
  /** lazy tables: SQL of a team-filtered subquery exposing the needed fields under their HogQL names */
  lazySelect?: (needed: Set<string>, team: string, variant?: number) => string
}

const col = (ch: string, type: BaseType, extra: Partial<Extract<FieldDef, { kind: 'column' }>> = {}): FieldDef => ({
  kind: 'column',
  ch,
  type,
  ...extra,
})

/** Backtick-quotes an identifier unless it is a plain word. */
export function quoteIdent(name: string): string {
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return name
  return '`' + name.replace(/\\/g, '\\\\').replace(/`/g, '\\`') + '`'
}

function pick(needed: Set<string>, exprs: Record<string, string>, always: string[]): string {
  const names = [...new Set([...always, ...[...needed].filter((n) => n in exprs)])]
  return names.map((n) => `${exprs[n]} AS ${quoteIdent(n)}`).join(', ')
}

function personsSelect(needed: Set<string>, team: string): string {
  const latest = (c: string) => `argMax(raw_persons.${c}, raw_persons.version)`
  const cols = pick(
    needed,
    {
      id: 'raw_persons.id',
      properties: latest('properties'),
      created_at: latest('created_at'),
      is_identified: latest('is_identified'),
    },
    ['id'],
  )
  return (
    `SELECT ${cols} FROM persons AS raw_persons PREWHERE equals(raw_persons.team_id, ${team}) ` +
    `GROUP BY raw_persons.id HAVING equals(${latest('is_deleted')}, 0)`
  )
}

function distinctIdsSelect(_needed: Set<string>, team: string): string {
  const latest = (c: string) => `argMax(raw_pdi.${c}, raw_pdi.version)`
  return (
    `SELECT raw_pdi.distinct_id AS distinct_id, ${latest('person_id')} AS person_id ` +
    `FROM person_distinct_ids AS raw_pdi PREWHERE equals(raw_pdi.team_id, ${team}) ` +
    `GROUP BY raw_pdi.distinct_id HAVING equals(${latest('is_deleted')}, 0)`
  )
}

function groupsSelect(needed: Set<string>, team: string, index?: number): string {
  const latest = (c: string) => `argMax(raw_groups.${c}, raw_groups.version)`
  const cols = pick(
    needed,
    {
      index: 'raw_groups.group_type_index',
      key: 'raw_groups.group_key',
      properties: latest('group_properties'),
      created_at: latest('created_at'),
    },
    ['index', 'key'],
  )
  const indexFilter = index === undefined ? '' : ` AND equals(raw_groups.group_type_index, ${index})`
  return (
    `SELECT ${cols} FROM groups AS raw_groups PREWHERE equals(raw_groups.team_id, ${team})${indexFilter} ` +
    `GROUP BY raw_groups.group_type_index, raw_groups.group_key`
  )
}

/** Session fields derived from the events of each `$session_id`. */
const prop = (name: string) => `JSONExtractString(raw_events.properties, '${name}')`
const firstOf = (name: string) => `nullIf(argMinIf(${prop(name)}, raw_events.timestamp, notEmpty(${prop(name)})), '')`
const lastOf = (name: string) => `nullIf(argMaxIf(${prop(name)}, raw_events.timestamp, notEmpty(${prop(name)})), '')`
const DURATION = "dateDiff('second', min(raw_events.timestamp), max(raw_events.timestamp))"
const PAGEVIEWS = "countIf(equals(raw_events.event, '$pageview'))"
const AUTOCAPTURES = "countIf(equals(raw_events.event, '$autocapture'))"
/** seconds a one-page session must last not to count as a bounce (PostHog's default) */
const BOUNCE_SECONDS = 10

const SESSION_EXPRS: Record<string, string> = {
  session_id: 'raw_events.`$session_id`',
  id: 'raw_events.`$session_id`',
  distinct_id: 'argMin(raw_events.distinct_id, raw_events.timestamp)',
  $start_timestamp: 'min(raw_events.timestamp)',
  $end_timestamp: 'max(raw_events.timestamp)',
  $session_duration: DURATION,
  duration: DURATION,
  $pageview_count: PAGEVIEWS,
  $autocapture_count: AUTOCAPTURES,
  $screen_count: "countIf(equals(raw_events.event, '$screen'))",
  $urls: `groupUniqArrayIf(${prop('$current_url')}, notEmpty(${prop('$current_url')}))`,
  $num_uniq_urls: `uniqIf(${prop('$current_url')}, notEmpty(${prop('$current_url')}))`,
  $entry_current_url: firstOf('$current_url'),
  $entry_pathname: firstOf('$pathname'),
  $entry_hostname: firstOf('$host'),
  $end_current_url: lastOf('$current_url'),
  $end_pathname: lastOf('$pathname'),
  $end_hostname: lastOf('$host'),
  $exit_current_url: lastOf('$current_url'),
  $exit_pathname: lastOf('$pathname'),
  $entry_referring_domain: firstOf('$referring_domain'),
  $entry_referrer: firstOf('$referrer'),
  $last_external_click_url: lastOf('$external_click_url'),
  $is_bounce:
    `if(equals(${PAGEVIEWS}, 0), NULL, ` +
    `not(or(greater(${PAGEVIEWS}, 1), greater(${AUTOCAPTURES}, 0), greaterOrEquals(${DURATION}, ${BOUNCE_SECONDS}))))`,
}
for (const k of ['utm_source', 'utm_campaign', 'utm_medium', 'utm_term', 'utm_content']) {
  SESSION_EXPRS[`$entry_${k}`] = firstOf(k)
}
const CLICK_IDS =
  'gclid gad_source gclsrc dclid gbraid wbraid fbclid msclkid twclid li_fat_id mc_cid igshid ttclid _kx irclid'
for (const k of CLICK_IDS.split(' ')) SESSION_EXPRS[`$entry_${k}`] = firstOf(k)

const SESSION_TYPES: Record<string, BaseType> = {
  $start_timestamp: 'DateTime',
  $end_timestamp: 'DateTime',
  $session_duration: 'Integer',
  duration: 'Integer',
  $pageview_count: 'Integer',
  $autocapture_count: 'Integer',
  $screen_count: 'Integer',
  $num_uniq_urls: 'Integer',
  $urls: 'Array',
  $is_bounce: 'Boolean',
}

function sessionsSelect(needed: Set<string>, team: string): string {
  return (
    `SELECT ${pick(needed, SESSION_EXPRS, ['session_id'])} FROM events AS raw_events ` +
    `PREWHERE and(equals(raw_events.team_id, ${team}), notEmpty(raw_events.\`$session_id\`)) ` +
    'GROUP BY raw_events.`$session_id`'
  )
}

const sessionFields: Record<string, FieldDef> = {}
for (const name of Object.keys(SESSION_EXPRS)) {
  const nullable = SESSION_EXPRS[name].startsWith('nullIf') || name === '$is_bounce'
  sessionFields[name] = col(name, SESSION_TYPES[name] ?? 'String', { nullable })
}

const persons: TableDef = {
  name: 'persons',
  fields: {
    id: col('id', 'UUID'),
    created_at: col('created_at', 'DateTime'),
    properties: col('properties', 'String', { json: 'person' }),
    is_identified: col('is_identified', 'Boolean'),
  },
  star: ['id', 'created_at', 'properties', 'is_identified'],
  lazySelect: personsSelect,
}

const personDistinctIds: TableDef = {
  name: 'person_distinct_ids',
  fields: {
    distinct_id: col('distinct_id', 'String'),
    person_id: col('person_id', 'UUID'),
    person: { kind: 'lazy', join: { table: 'persons', joinType: 'INNER JOIN', on: ['person_id', 'id'] } },
  },
  star: ['distinct_id', 'person_id'],
  lazySelect: distinctIdsSelect,
}

const groups: TableDef = {
  name: 'groups',
  fields: {
    index: col('index', 'Integer'),
    key: col('key', 'String'),
    created_at: col('created_at', 'DateTime'),
    properties: col('properties', 'String', { json: 'group' }),
  },
  star: ['index', 'key', 'created_at', 'properties'],
  lazySelect: groupsSelect,
}

const sessions: TableDef = {
  name: 'sessions',
  fields: sessionFields,
  star: ['session_id', 'distinct_id', '$start_timestamp', '$end_timestamp', '$session_duration'],
  lazySelect: sessionsSelect,
}

const eventFields: Record<string, FieldDef> = {
  uuid: col('uuid', 'UUID'),
  event: col('event', 'String'),
  properties: col('properties', 'String', { json: 'event' }),
  timestamp: col('timestamp', 'DateTime'),
  distinct_id: col('distinct_id', 'String'),
  elements_chain: col('elements_chain', 'String'),
  created_at: col('created_at', 'DateTime'),
  $session_id: col('$session_id', 'String'),
  $window_id: col('$window_id', 'String'),
  team_id: col('team_id', 'Integer'),
  // the person behind the distinct id *now* (merges included), not the id stored at ingestion
  person_id: { kind: 'traverse', chain: ['pdi', 'person_id'] },
  event_person_id: col('person_id', 'UUID'),
  pdi: {
    kind: 'lazy',
    join: { table: 'person_distinct_ids', joinType: 'INNER JOIN', on: ['distinct_id', 'distinct_id'] },
  },
  person: { kind: 'traverse', chain: ['pdi', 'person'] },
  session: { kind: 'lazy', join: { table: 'sessions', joinType: 'LEFT JOIN', on: ['$session_id', 'session_id'] } },
  // Burrow stores no person columns on events, so the person-on-events namespace reads the joined person
  poe: {
    kind: 'virtual',
    fields: {
      id: col('person_id', 'UUID'),
      properties: { kind: 'traverse', chain: ['pdi', 'person', 'properties'] },
      created_at: { kind: 'traverse', chain: ['pdi', 'person', 'created_at'] },
    },
  },
}
for (let i = 0; i < 5; i++) {
  eventFields[`$group_${i}`] = col(`$group_${i}`, 'String')
  eventFields[`group_${i}`] = {
    kind: 'lazy',
    join: { table: 'groups', joinType: 'LEFT JOIN', on: [`$group_${i}`, 'key'], variant: i },
  }
  eventFields[`goe_${i}`] = {
    kind: 'virtual',
    fields: {
      key: col(`$group_${i}`, 'String'),
      properties: { kind: 'traverse', chain: [`group_${i}`, 'properties'] },
      created_at: { kind: 'traverse', chain: [`group_${i}`, 'created_at'] },
    },
  }
}

const events: TableDef = {
  name: 'events',
  ch: 'events',
  fields: eventFields,
  sortKeyTime: 'timestamp',
  star: [
    'uuid',
    'event',
    'properties',
    'timestamp',
    'distinct_id',
    'elements_chain',
    'created_at',
    '$session_id',
    '$window_id',
    '$group_0',
    '$group_1',
    '$group_2',
    '$group_3',
    '$group_4',
  ],
}

const rawPersons: TableDef = {
  name: 'raw_persons',
  ch: 'persons',
  fields: {
    id: col('id', 'UUID'),
    team_id: col('team_id', 'Integer'),
    properties: col('properties', 'String', { json: 'person' }),
    created_at: col('created_at', 'DateTime'),
    is_identified: col('is_identified', 'Boolean'),
    is_deleted: col('is_deleted', 'Boolean'),
    version: col('version', 'Integer'),
  },
  star: ['id', 'properties', 'created_at', 'is_identified', 'is_deleted', 'version'],
}

const rawDistinctIds: TableDef = {
  name: 'raw_person_distinct_ids',
  ch: 'person_distinct_ids',
  fields: {
    distinct_id: col('distinct_id', 'String'),
    person_id: col('person_id', 'UUID'),
    team_id: col('team_id', 'Integer'),
    is_deleted: col('is_deleted', 'Boolean'),
    version: col('version', 'Integer'),
    person: { kind: 'lazy', join: { table: 'persons', joinType: 'INNER JOIN', on: ['person_id', 'id'] } },
  },
  star: ['distinct_id', 'person_id', 'is_deleted', 'version'],
}

const rawGroups: TableDef = {
  name: 'raw_groups',
  ch: 'groups',
  fields: {
    index: col('group_type_index', 'Integer'),
    group_type_index: col('group_type_index', 'Integer'),
    key: col('group_key', 'String'),
    group_key: col('group_key', 'String'),
    team_id: col('team_id', 'Integer'),
    properties: col('group_properties', 'String', { json: 'group' }),
    group_properties: col('group_properties', 'String', { json: 'group' }),
    created_at: col('created_at', 'DateTime'),
    version: col('version', 'Integer'),
  },
  star: ['group_type_index', 'group_key', 'group_properties', 'created_at', 'version'],
}

/** Every table a HogQL query may name. Anything else (system.*, url(), s3(), …) is rejected. */
export const TABLES: Record<string, TableDef> = {
  events,
  persons,
  person_distinct_ids: personDistinctIds,
  groups,
  sessions,
  raw_persons: rawPersons,
  raw_person_distinct_ids: rawDistinctIds,
  raw_groups: rawGroups,
}

/** Table functions PostHog allows, with their argument counts. */
export const TABLE_FUNCTIONS: Record<string, { min: number; max: number; columns: Record<string, BaseType> }> = {
  numbers: { min: 1, max: 2, columns: { number: 'Integer' } },
}
