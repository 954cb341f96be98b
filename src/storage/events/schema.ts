import { jsonPropertySql } from '../../hogql/properties.js'
import { quoteString } from './params.js'
import type { EventStore } from './types.js'

/**
 * Hot event properties kept in columns of their own (PostHog's materialized columns), so that a breakdown or a
 * filter on one reads a small column instead of parsing every event's JSON. Each column is `MATERIALIZED` with the
 * very expression HogQL prints for `properties.<name>` (missing and JSON null → NULL, strings without their
 * quotes, numbers, booleans and nested values as raw JSON), so reading it gives exactly the JSON expression's
 * value; the engine fills it at insert, and for parts written before the column existed, on read until they are
 * rewritten. Few-valued properties are LowCardinality (smaller and faster to group by); URLs are plain strings.
 * Each column costs capture inserts a JSON lookup per event (measured in docs/benchmarks.md, "Queries").
 */
const MATERIALIZED_PROPERTIES: readonly { property: string; lowCardinality: boolean }[] = [
  { property: '$browser', lowCardinality: true },
  { property: '$os', lowCardinality: true },
  { property: '$device_type', lowCardinality: true },
  { property: '$host', lowCardinality: true },
  { property: '$current_url', lowCardinality: false },
  { property: '$pathname', lowCardinality: false },
]

/** Event property → its column on the events table (what the HogQL printer reads instead of the JSON). */
export const MATERIALIZED_EVENT_PROPERTIES: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(MATERIALIZED_PROPERTIES.map(({ property }) => [property, `mat_${property}`])),
)

function materializedColumnDdl(property: string, lowCardinality: boolean): string {
  const type = lowCardinality ? 'LowCardinality(Nullable(String))' : 'Nullable(String)'
  const value = jsonPropertySql('properties', [quoteString(property)])
  return `\`${MATERIALIZED_EVENT_PROPERTIES[property]}\` ${type} MATERIALIZED ${value}`
}

/** Timestamps sit in random order within a day's granules: T64 (bit packing) is both smaller and faster to
 * read than LZ4 there (measured in docs/benchmarks.md, "Queries"). */
const TIMESTAMP_CODEC = 'T64'

/**
 * The event-store tables. The events sort key starts with (team_id, date) so that per-project time-range
 * queries read only their granules; the mutable tables are ReplacingMergeTree, read at their latest version.
 */
export const EVENT_STORE_DDL = [
  `CREATE TABLE IF NOT EXISTS events (
    uuid UUID,
    team_id Int64,
    event LowCardinality(String),
    distinct_id String,
    person_id UUID,
    properties String CODEC(ZSTD(3)),
    timestamp DateTime64(6, 'UTC') CODEC(${TIMESTAMP_CODEC}),
    created_at DateTime64(6, 'UTC'),
    elements_chain String CODEC(ZSTD(3)),
    \`$session_id\` String,
    \`$window_id\` String,
    \`$group_0\` String,
    \`$group_1\` String,
    \`$group_2\` String,
    \`$group_3\` String,
    \`$group_4\` String,
${MATERIALIZED_PROPERTIES.map((m) => `    ${materializedColumnDdl(m.property, m.lowCardinality)},\n`).join('')}    INDEX uuid_bloom uuid TYPE bloom_filter(0.01) GRANULARITY 4
  ) ENGINE = ReplacingMergeTree
  PARTITION BY toYYYYMM(timestamp)
  ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(uuid))
  SAMPLE BY cityHash64(distinct_id)`,
  `CREATE TABLE IF NOT EXISTS persons (
    team_id Int64,
    id UUID,
    properties String CODEC(ZSTD(3)),
    created_at DateTime64(6, 'UTC'),
    is_identified UInt8,
    is_deleted UInt8,
    version Int64
  ) ENGINE = ReplacingMergeTree(version)
  ORDER BY (team_id, id)`,
  `CREATE TABLE IF NOT EXISTS person_distinct_ids (
    team_id Int64,
    distinct_id String,
    person_id UUID,
    is_deleted UInt8,
    version Int64
  ) ENGINE = ReplacingMergeTree(version)
  ORDER BY (team_id, distinct_id)`,
  `CREATE TABLE IF NOT EXISTS groups (
    team_id Int64,
    group_type_index UInt8,
    group_key String,
    group_properties String CODEC(ZSTD(3)),
    created_at DateTime64(6, 'UTC'),
    version Int64
  ) ENGINE = ReplacingMergeTree(version)
  ORDER BY (team_id, group_type_index, group_key)`,
]

/** The events table's columns in table order (positional inserts depend on it). */
export const EVENT_COLUMNS = [
  'uuid',
  'team_id',
  'event',
  'distinct_id',
  'person_id',
  'properties',
  'timestamp',
  'created_at',
  'elements_chain',
  '$session_id',
  '$window_id',
  '$group_0',
  '$group_1',
  '$group_2',
  '$group_3',
  '$group_4',
] as const

export async function migrateEventStore(store: EventStore): Promise<void> {
  for (const ddl of EVENT_STORE_DDL) await store.exec(ddl)
  // An events table created by an earlier version: add what it lacks.
  const { rows } = await store.query<[string, string]>(
    `SELECT name, compression_codec FROM system.columns WHERE database = currentDatabase() AND table = 'events'`,
  )
  const codecs = new Map(rows)
  for (const { property, lowCardinality } of MATERIALIZED_PROPERTIES) {
    const column = MATERIALIZED_EVENT_PROPERTIES[property]
    if (codecs.has(column)) continue
    await store.exec(`ALTER TABLE events ADD COLUMN IF NOT EXISTS ${materializedColumnDdl(property, lowCardinality)}`)
    // Existing parts compute the column on read until rewritten; this rewrites them in the background.
    await store.exec(`ALTER TABLE events MATERIALIZE COLUMN \`${column}\``)
  }
  // A codec change applies to parts written from now on (inserts and merges); nothing is rewritten at once.
  if (codecs.has('timestamp') && codecs.get('timestamp') !== `CODEC(${TIMESTAMP_CODEC})`) {
    await store.exec(`ALTER TABLE events MODIFY COLUMN timestamp CODEC(${TIMESTAMP_CODEC})`)
  }
}
