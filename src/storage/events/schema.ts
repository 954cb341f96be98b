import type { EventStore } from './types.js'

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
    timestamp DateTime64(6, 'UTC'),
    created_at DateTime64(6, 'UTC'),
    elements_chain String CODEC(ZSTD(3)),
    \`$session_id\` String,
    \`$window_id\` String,
    \`$group_0\` String,
    \`$group_1\` String,
    \`$group_2\` String,
    \`$group_3\` String,
    \`$group_4\` String,
    INDEX uuid_bloom uuid TYPE bloom_filter(0.01) GRANULARITY 4
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
}
