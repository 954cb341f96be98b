// A materialized endpoint's table on a ClickHouse cluster: created empty on every node as one replicated table
// (one Keeper path across every shard), filled once, waited for on every replica, then swapped in everywhere. This
// machine has no Keeper and no second server, so the statements are pinned by hand and read by the engine's own
// parser (`EXPLAIN AST`); the single-node statement stays what it was.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clusterMaterialization, replaceFromSelect } from '../../src/endpoints/materialized-ddl.js'
import { openEventStore } from '../../src/storage/events/index.js'
import type { EventStore } from '../../src/storage/events/types.js'

const target = { cluster: 'burrow_cluster', database: 'analytics' }
const select = 'SELECT event, count() AS c FROM events WHERE team_id = {t:Int64} GROUP BY event'
const numbered = `SELECT *, toUInt64(rowNumberInAllBlocks()) AS __endpoint_row FROM (${select})`
const engineClause =
  "ReplicatedMergeTree('/clickhouse/tables/noshard/{database}/endpoint_mat_1_ab/{uuid}', '{replica}-{shard}')"

let dir: string
let engine: EventStore
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-mat-ddl-'))
  engine = openEventStore(`chdb:${dir}`)
})
afterAll(async () => {
  await engine.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

describe('materialized endpoint tables', () => {
  it('on one node: one statement replaces the table with the numbered rows', () => {
    expect(replaceFromSelect('endpoint_mat_1_ab', select)).toBe(
      `CREATE OR REPLACE TABLE endpoint_mat_1_ab ENGINE = MergeTree ORDER BY __endpoint_row AS ${numbered}`,
    )
  })

  it('on a cluster: staged on every node, filled once, synced, swapped in everywhere', () => {
    const m = clusterMaterialization('endpoint_mat_1_ab', target)
    const on = "ON CLUSTER 'burrow_cluster'"
    expect(m.dropStaging).toBe(`DROP TABLE IF EXISTS endpoint_mat_1_ab_staging ${on} SYNC`)
    expect(m.createStagingFromSelect(select)).toBe(
      `CREATE TABLE endpoint_mat_1_ab_staging ${on} ENGINE = ${engineClause} ORDER BY __endpoint_row EMPTY AS ${numbered}`,
    )
    expect(m.createStagingForItems).toBe(
      `CREATE TABLE endpoint_mat_1_ab_staging ${on} (__endpoint_row UInt64, keys Array(String), item String) ` +
        `ENGINE = ${engineClause} ORDER BY __endpoint_row`,
    )
    // Filled on this node only: replication (not ON CLUSTER) brings the rows to the others.
    expect(m.fillStaging(select)).toBe(`INSERT INTO endpoint_mat_1_ab_staging ${numbered}`)
    expect(m.syncStaging).toBe(`SYSTEM SYNC REPLICA ${on} endpoint_mat_1_ab_staging`)
    expect(m.swapIn(true)).toBe(`EXCHANGE TABLES endpoint_mat_1_ab_staging AND endpoint_mat_1_ab ${on}`)
    expect(m.swapIn(false)).toBe(`RENAME TABLE endpoint_mat_1_ab_staging TO endpoint_mat_1_ab ${on}`)
    expect(m.drop).toEqual([
      `DROP TABLE IF EXISTS endpoint_mat_1_ab ${on} SYNC`,
      `DROP TABLE IF EXISTS endpoint_mat_1_ab_staging ${on} SYNC`,
    ])
  })

  it('is read by the engine’s own parser', async () => {
    const m = clusterMaterialization('endpoint_mat_1_ab', target)
    const statements = [
      m.dropStaging,
      m.createStagingFromSelect(select),
      m.createStagingForItems,
      m.fillStaging(select),
      m.syncStaging,
      m.swapIn(true),
      m.swapIn(false),
      ...m.drop,
      'EXISTS TABLE endpoint_mat_1_ab',
    ]
    for (const statement of statements) {
      const parsed = await engine.query(`EXPLAIN AST ${statement}`, { params: { t: 1 } })
      expect(parsed.rows.length, statement).toBeGreaterThan(0)
    }
  })

  it('builds a staging table from a SELECT with the SELECT’s columns and none of its rows (EMPTY AS)', async () => {
    // The part of the cluster path one node can run: EMPTY AS SELECT on a plain MergeTree.
    await engine.exec(
      `CREATE TABLE mat_empty ENGINE = MergeTree ORDER BY __endpoint_row EMPTY AS ${numbered.replace(
        'FROM events WHERE team_id = {t:Int64}',
        'FROM (SELECT toString(number % 3) AS event FROM numbers(10))',
      )}`,
    )
    const columns = await engine.query<[string, string]>(
      "SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = 'mat_empty' ORDER BY position",
    )
    expect(columns.rows).toEqual([
      ['event', 'String'],
      ['c', 'UInt64'],
      ['__endpoint_row', 'UInt64'],
    ])
    expect((await engine.query<[number]>('SELECT count() FROM mat_empty')).rows).toEqual([[0]])
    expect((await engine.query<[number]>('EXISTS TABLE mat_empty')).rows.map((r) => Number(r[0]))).toEqual([1])
    expect((await engine.query<[number]>('EXISTS TABLE mat_none')).rows.map((r) => Number(r[0]))).toEqual([0])
  })
})
