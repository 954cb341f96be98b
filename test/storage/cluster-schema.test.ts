// The event store's DDL for a ClickHouse cluster (CLICKHOUSE_CLUSTER). This machine has no Keeper and no second
// server, so the statements cannot run here; they are checked by hand against ClickHouse's cluster schema (below)
// and parsed by the real engine (`EXPLAIN AST`), and the single-node DDL is pinned to stay what it was.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { openEventStore } from '../../src/storage/events/index.js'
import { EVENT_STORE_DDL, eventStoreDdl, eventsMutationTarget } from '../../src/storage/events/schema.js'
import type { EventStore } from '../../src/storage/events/types.js'

const target = { cluster: 'burrow_cluster', database: 'analytics' }
const ddl = eventStoreDdl(target)

/** Column names of a CREATE TABLE statement's column list, in order. */
function columnsOf(statement: string): string[] {
  const body = statement.slice(statement.indexOf('(\n') + 2, statement.lastIndexOf('\n  ) ENGINE'))
  return body
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('INDEX '))
    .map((line) => line.split(' ')[0].replaceAll('`', ''))
}

let dir: string
let engine: EventStore
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-cluster-ddl-'))
  engine = openEventStore(`chdb:${dir}`)
})
afterAll(async () => {
  await engine.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

describe('cluster schema', () => {
  it('creates every table on the cluster: sharded, replicated events behind a Distributed table; the rest whole on every node', () => {
    expect(ddl.map((s) => s.slice(0, s.indexOf(' (')).trim())).toEqual([
      "CREATE TABLE IF NOT EXISTS sharded_events ON CLUSTER 'burrow_cluster'",
      "CREATE TABLE IF NOT EXISTS events ON CLUSTER 'burrow_cluster'",
      "CREATE TABLE IF NOT EXISTS persons ON CLUSTER 'burrow_cluster'",
      "CREATE TABLE IF NOT EXISTS person_distinct_ids ON CLUSTER 'burrow_cluster'",
      "CREATE TABLE IF NOT EXISTS groups ON CLUSTER 'burrow_cluster'",
    ])
    const engines = ddl.map((s) => s.slice(s.indexOf(') ENGINE = ') + ') ENGINE = '.length).split('\n')[0])
    expect(engines).toEqual([
      "ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/sharded_events', '{replica}')",
      "Distributed('burrow_cluster', 'analytics', 'sharded_events', sipHash64(distinct_id))",
      "ReplicatedReplacingMergeTree('/clickhouse/tables/noshard/{database}/persons', '{replica}-{shard}', version)",
      "ReplicatedReplacingMergeTree('/clickhouse/tables/noshard/{database}/person_distinct_ids', '{replica}-{shard}', version)",
      "ReplicatedReplacingMergeTree('/clickhouse/tables/noshard/{database}/groups', '{replica}-{shard}', version)",
    ])
  })

  it('keeps the single-node tables: the same columns, sort keys, partitions and sampling', () => {
    const single = new Map(EVENT_STORE_DDL.map((s) => [s.split(' ')[5], s]))
    const onCluster = new Map(ddl.map((s) => [s.split(' ')[5], s]))
    // The shard's table is the single-node events table under another name and engine.
    const events = single.get('events') as string
    const sharded = onCluster.get('sharded_events') as string
    expect(columnsOf(sharded)).toEqual(columnsOf(events))
    expect(sharded.slice(sharded.indexOf('\n  PARTITION BY'))).toEqual(events.slice(events.indexOf('\n  PARTITION BY')))
    expect(sharded).toContain('INDEX uuid_bloom uuid TYPE bloom_filter(0.01) GRANULARITY 4')
    // The Distributed table lists the same columns (materialized ones too) and holds no index.
    const distributed = onCluster.get('events') as string
    expect(columnsOf(distributed)).toEqual(columnsOf(events))
    expect(distributed).toContain('`mat_$browser` LowCardinality(Nullable(String)) MATERIALIZED')
    expect(distributed).not.toContain('INDEX')
    for (const table of ['persons', 'person_distinct_ids', 'groups']) {
      const a = single.get(table) as string
      const b = onCluster.get(table) as string
      expect(columnsOf(b)).toEqual(columnsOf(a))
      expect(b.slice(b.indexOf('\n  ORDER BY'))).toEqual(a.slice(a.indexOf('\n  ORDER BY')))
    }
    // One node: nothing of the cluster's.
    for (const statement of EVENT_STORE_DDL) expect(statement).not.toMatch(/ON CLUSTER|Replicated|Distributed/)
  })

  it('is read by the engine’s own parser, as are the statements that mutate events on a cluster', async () => {
    for (const statement of ddl) await expect(engine.query(`EXPLAIN AST ${statement}`)).resolves.toBeDefined()
    expect(eventsMutationTarget(target)).toBe("sharded_events ON CLUSTER 'burrow_cluster'")
    expect(eventsMutationTarget()).toBe('events')
    await expect(
      engine.query(
        `EXPLAIN AST DELETE FROM ${eventsMutationTarget(target)} WHERE team_id = 1 AND distinct_id IN ('a')`,
      ),
    ).resolves.toBeDefined()
  })

  it('takes only plain cluster names, and only with a ClickHouse server', () => {
    expect(() => eventStoreDdl({ cluster: "x' ENGINE", database: 'd' })).toThrow('not a cluster name')
    const base = { DATA_DIR: dir, CLICKHOUSE_URL: 'https://ch.internal:8443/analytics' }
    expect(loadConfig({ ...base, CLICKHOUSE_CLUSTER: 'burrow_cluster' }).clickhouseCluster).toBe('burrow_cluster')
    expect(loadConfig(base).clickhouseCluster).toBeUndefined()
    expect(() => loadConfig({ ...base, CLICKHOUSE_CLUSTER: 'a b' })).toThrow(ConfigError)
    expect(() => loadConfig({ DATA_DIR: dir, CLICKHOUSE_CLUSTER: 'burrow_cluster' })).toThrow(
      'CLICKHOUSE_CLUSTER needs CLICKHOUSE_URL to name a ClickHouse server',
    )
  })
})
