/**
 * The statements that build a materialized endpoint's table in the event store. On one node a table is replaced
 * in one statement (`CREATE OR REPLACE TABLE … AS SELECT`, or from a staging table), so readers see the old rows or
 * the new ones, never a part. On a cluster (`CLICKHOUSE_CLUSTER`) a run of the endpoint may reach any node, so the
 * table must exist whole on every node: it is a replicated table whose one Keeper path is shared by every node of
 * every shard (as persons are), filled once on the node that runs the sync, waited for on every replica, then
 * swapped in for the old one on every node at once (`EXCHANGE TABLES … ON CLUSTER`).
 *
 * Pure: statements only; `sync.ts` runs them.
 */
import { quoteString } from '../storage/events/params.js'
import type { ClusterTarget } from '../storage/events/schema.js'

/** The row number column every materialized table is ordered by (the order of the result). */
export const ROW_COLUMN = '__endpoint_row'
/** The columns of an insight's materialized result rows. */
export const ITEM_COLUMNS = `${ROW_COLUMN} UInt64, keys Array(String), item String`

/** A SELECT whose rows keep their order in a `ROW_COLUMN`. */
export const numbered = (select: string) =>
  `SELECT *, toUInt64(rowNumberInAllBlocks()) AS ${ROW_COLUMN} FROM (${select})`

export const stagingOf = (table: string) => `${table}_staging`

/** One node: the statements that replace `table` with a SELECT's rows, at once. */
export function replaceFromSelect(table: string, select: string): string {
  return `CREATE OR REPLACE TABLE ${table} ENGINE = MergeTree ORDER BY ${ROW_COLUMN} AS ${numbered(select)}`
}

/** The statements of one materialization on a cluster. */
export interface ClusterMaterialization {
  /** A staging table left by a sync that died part-way, removed first. */
  dropStaging: string
  /** An empty staging table on every node, its columns those of the SELECT. */
  createStagingFromSelect(select: string): string
  /** An empty staging table on every node for an insight's result rows. */
  createStagingForItems: string
  /** Fills the staging table once (on this node; replication copies it to every other). */
  fillStaging(select: string): string
  /** Waits until every replica has the staging table's rows. */
  syncStaging: string
  /** Puts the staging table in the table's place on every node (the old one, if any, becomes the staging table). */
  swapIn(tableExists: boolean): string
  /** Removes the table (and its staging table) from every node. */
  drop: string[]
}

export function clusterMaterialization(table: string, target: ClusterTarget): ClusterMaterialization {
  const on = ` ON CLUSTER ${quoteString(target.cluster)}`
  const staging = stagingOf(table)
  // `{uuid}`: each table (a staging table swapped in keeps its own) has a Keeper path of its own.
  const engine = `ReplicatedMergeTree('/clickhouse/tables/noshard/{database}/${table}/{uuid}', '{replica}-{shard}')`
  return {
    dropStaging: `DROP TABLE IF EXISTS ${staging}${on} SYNC`,
    createStagingFromSelect: (select) =>
      `CREATE TABLE ${staging}${on} ENGINE = ${engine} ORDER BY ${ROW_COLUMN} EMPTY AS ${numbered(select)}`,
    createStagingForItems: `CREATE TABLE ${staging}${on} (${ITEM_COLUMNS}) ENGINE = ${engine} ORDER BY ${ROW_COLUMN}`,
    fillStaging: (select) => `INSERT INTO ${staging} ${numbered(select)}`,
    syncStaging: `SYSTEM SYNC REPLICA${on} ${staging}`,
    swapIn: (tableExists) =>
      tableExists ? `EXCHANGE TABLES ${staging} AND ${table}${on}` : `RENAME TABLE ${staging} TO ${table}${on}`,
    drop: [`DROP TABLE IF EXISTS ${table}${on} SYNC`, `DROP TABLE IF EXISTS ${staging}${on} SYNC`],
  }
}
