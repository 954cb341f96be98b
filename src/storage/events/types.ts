import type { ClusterTarget } from './schema.js'

export interface QueryStatistics {
  elapsedMs: number
  rowsRead: number
  bytesRead: number
}

export interface QueryResult<Row extends unknown[] = unknown[]> {
  columns: string[]
  types: string[]
  rows: Row[]
  statistics: QueryStatistics
}

export interface EventQueryOptions {
  /** Values for `{name:Type}` placeholders, bound by the engine (never spliced into the SQL). */
  params?: Record<string, unknown>
  /** Our own id for the query, so that it can be found and killed while it runs. */
  queryId?: string
  signal?: AbortSignal
  settings?: Record<string, string | number>
}

/** The event store: ClickHouse SQL over embedded chDB or a ClickHouse server, behind one interface. */
export interface EventStore {
  readonly kind: 'chdb' | 'clickhouse'
  /** The ClickHouse cluster the tables are spread over (`CLICKHOUSE_CLUSTER`); none on one node. */
  readonly cluster?: ClusterTarget
  /** Runs a SELECT and returns its rows in column order. */
  query<Row extends unknown[] = unknown[]>(sql: string, options?: EventQueryOptions): Promise<QueryResult<Row>>
  /** Runs a statement that returns nothing (DDL, ALTER, OPTIMIZE). */
  exec(sql: string, options?: EventQueryOptions): Promise<void>
  /** Inserts rows given as newline-delimited JSON (JSONEachRow). */
  insertJsonEachRow(table: string, ndjson: string | Buffer): Promise<void>
  /** Inserts rows given as TabSeparated text in the order of `columns` (the cheapest format to build and parse). */
  insertTabSeparated(table: string, columns: readonly string[], tsv: string | Buffer): Promise<void>
  /** Stops a running query started with `queryId`; false when no such query runs. */
  cancel(queryId: string): Promise<boolean>
  /** Progress of a running query, when the engine reports it. */
  progress(queryId: string): Promise<QueryProgress | undefined>
  ping(): Promise<boolean>
  close(): Promise<void>
}

export interface QueryProgress {
  rows_read: number
  bytes_read: number
  estimated_rows_total: number
  time_elapsed: number
  active_cpu_time: number
}

/** The embedded engine's memory settings (bytes); unset ones keep the engine's own default. */
export interface EngineSettings {
  /** Total memory of the engine (queries, inserts, merges together). */
  memoryBytes?: number
  markCacheBytes?: number
  uncompressedCacheBytes?: number
  /** Further caches that grow with use (primary index, query condition, compiled expressions, index marks). */
  otherCachesBytes?: number
}
