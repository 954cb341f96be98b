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
  // read by every lifecycle insight (events sent without a person profile do not count): almost always absent or
  // true/false, so the column is a few bytes where the JSON of every event would be parsed
  { property: '$process_person_profile', lowCardinality: true },
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

/** A table of the event store, from which both the single-node and the cluster DDL are printed. */
interface TableSpec {
  name: string
  /** Columns and indexes, one per line. */
  body: string
  /** The ReplacingMergeTree version column, if any. */
  version?: string
  /** PARTITION BY / ORDER BY / SAMPLE BY. */
  keys: string
  /** On a cluster: split across shards by distinct id (events), or a whole copy on every node (the rest). */
  sharded: boolean
}

const TABLES: readonly TableSpec[] = [
  {
    name: 'events',
    body: `    uuid UUID,
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
${MATERIALIZED_PROPERTIES.map((m) => `    ${materializedColumnDdl(m.property, m.lowCardinality)},\n`).join('')}    INDEX uuid_bloom uuid TYPE bloom_filter(0.01) GRANULARITY 4`,
    keys: `PARTITION BY toYYYYMM(timestamp)
  ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), cityHash64(uuid))
  SAMPLE BY cityHash64(distinct_id)`,
    sharded: true,
  },
  {
    name: 'persons',
    body: `    team_id Int64,
    id UUID,
    properties String CODEC(ZSTD(3)),
    created_at DateTime64(6, 'UTC'),
    is_identified UInt8,
    is_deleted UInt8,
    version Int64`,
    version: 'version',
    keys: 'ORDER BY (team_id, id)',
    sharded: false,
  },
  {
    name: 'person_distinct_ids',
    body: `    team_id Int64,
    distinct_id String,
    person_id UUID,
    is_deleted UInt8,
    version Int64`,
    version: 'version',
    keys: 'ORDER BY (team_id, distinct_id)',
    sharded: false,
  },
  {
    name: 'groups',
    body: `    team_id Int64,
    group_type_index UInt8,
    group_key String,
    group_properties String CODEC(ZSTD(3)),
    created_at DateTime64(6, 'UTC'),
    version Int64`,
    version: 'version',
    keys: 'ORDER BY (team_id, group_type_index, group_key)',
    sharded: false,
  },
]

/**
 * A ClickHouse cluster (`CLICKHOUSE_CLUSTER`): every DDL statement runs `ON CLUSTER`; events live in
 * `sharded_events` (ReplicatedReplacingMergeTree, one part of the events per shard, replicated within it) behind a
 * `Distributed` table named `events`, sharded by `sipHash64(distinct_id)` so that a person's events (and a retry of
 * one) land on one shard; persons, distinct ids and groups are replicated whole to every node, so that each shard
 * joins its events to them locally. Queries and inserts name `events` as on one node.
 */
export interface ClusterTarget {
  cluster: string
  /** The database every node holds the tables in (the Distributed table names it). */
  database: string
}

/** The local table that holds a shard's events on a cluster. */
export const SHARDED_EVENTS = 'sharded_events'

/** Cluster names are printed into DDL: only plain names are taken. */
export const CLUSTER_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/

const onCluster = (target: ClusterTarget | undefined) => (target ? ` ON CLUSTER ${quoteString(target.cluster)}` : '')

/** The event-store tables' DDL: for one node (no target), or for a cluster. */
export function eventStoreDdl(target?: ClusterTarget): string[] {
  if (target && !CLUSTER_NAME.test(target.cluster)) throw new Error(`not a cluster name: ${target.cluster}`)
  const ddl: string[] = []
  for (const table of TABLES) {
    const version = table.version ?? ''
    if (!target) {
      ddl.push(`CREATE TABLE IF NOT EXISTS ${table.name} (
${table.body}
  ) ENGINE = ReplacingMergeTree${version ? `(${version})` : ''}
  ${table.keys}`)
      continue
    }
    // Replicated tables name their Keeper path by macros each node defines; a table held whole by every node
    // shares one path across shards, so its replica names must be unique across shards too.
    const local = table.sharded ? SHARDED_EVENTS : table.name
    const replication = table.sharded
      ? `'/clickhouse/tables/{shard}/{database}/${local}', '{replica}'`
      : `'/clickhouse/tables/noshard/{database}/${local}', '{replica}-{shard}'`
    ddl.push(`CREATE TABLE IF NOT EXISTS ${local}${onCluster(target)} (
${table.body}
  ) ENGINE = ReplicatedReplacingMergeTree(${replication}${version ? `, ${version}` : ''})
  ${table.keys}`)
    if (table.sharded) {
      // The same columns (materialized ones computed by each shard), without the skipping index it cannot hold.
      const columns = table.body
        .split('\n')
        .filter((line) => !line.trimStart().startsWith('INDEX '))
        .join('\n')
        .replace(/,$/, '')
      ddl.push(`CREATE TABLE IF NOT EXISTS ${table.name}${onCluster(target)} (
${columns}
  ) ENGINE = Distributed(${quoteString(target.cluster)}, ${quoteString(target.database)}, ${quoteString(local)}, sipHash64(distinct_id))`)
    }
  }
  return ddl
}

/**
 * The event-store tables for one node. The events sort key starts with (team_id, date) so that per-project
 * time-range queries read only their granules; the mutable tables are ReplacingMergeTree, read at their latest
 * version.
 */
export const EVENT_STORE_DDL = eventStoreDdl()

/**
 * Where a mutation of stored events (a lightweight `DELETE FROM …`) goes: the events table on one node; on a
 * cluster, every shard's local table (a Distributed table takes no mutations).
 */
export function eventsMutationTarget(target?: ClusterTarget): string {
  return target ? `${SHARDED_EVENTS}${onCluster(target)}` : 'events'
}

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

export async function migrateEventStore(store: EventStore, target?: ClusterTarget): Promise<void> {
  for (const ddl of eventStoreDdl(target)) await store.exec(ddl)
  // An events table created by an earlier version: add what it lacks (on a cluster, to each shard's table and to
  // the Distributed one, which must list the same columns).
  const local = target ? SHARDED_EVENTS : 'events'
  const { rows } = await store.query<[string, string]>(
    `SELECT name, compression_codec FROM system.columns WHERE database = currentDatabase() AND table = '${local}'`,
  )
  const codecs = new Map(rows)
  for (const { property, lowCardinality } of MATERIALIZED_PROPERTIES) {
    const column = MATERIALIZED_EVENT_PROPERTIES[property]
    if (codecs.has(column)) continue
    const add = `ADD COLUMN IF NOT EXISTS ${materializedColumnDdl(property, lowCardinality)}`
    await store.exec(`ALTER TABLE ${local}${onCluster(target)} ${add}`)
    if (target) await store.exec(`ALTER TABLE events${onCluster(target)} ${add}`)
    // Existing parts compute the column on read until rewritten; this rewrites them in the background.
    await store.exec(`ALTER TABLE ${local}${onCluster(target)} MATERIALIZE COLUMN \`${column}\``)
  }
  // A codec change applies to parts written from now on (inserts and merges); nothing is rewritten at once.
  if (codecs.has('timestamp') && codecs.get('timestamp') !== `CODEC(${TIMESTAMP_CODEC})`) {
    await store.exec(`ALTER TABLE ${local}${onCluster(target)} MODIFY COLUMN timestamp CODEC(${TIMESTAMP_CODEC})`)
  }
}
