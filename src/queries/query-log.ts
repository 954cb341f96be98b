import type { Generated, Kysely, Selectable } from 'kysely'
import type { MetaDatabase } from '../storage/meta/schema.js'

export interface QueryLogTable {
  id: Generated<number>
  team_id: number
  query_id: string
  client_query_id: string | null
  name: string | null
  kind: string
  query: string
  hogql: string | null
  clickhouse: string | null
  status: QueryLogStatus
  is_async: number
  error: string | null
  error_code: string | null
  duration_ms: number | null
  rows_read: number | null
  bytes_read: number | null
  result_rows: number | null
  created_at: string
  finished_at: string | null
}

export type QueryLogStatus = 'running' | 'completed' | 'failed' | 'cancelled'
export type QueryLogRow = Selectable<QueryLogTable>

export interface QueryLogStart {
  team_id: number
  query_id: string
  client_query_id: string | null
  name: string | null
  kind: string
  query: string
  is_async: boolean
  created_at: string
}

export interface QueryLogFinish {
  status: Exclude<QueryLogStatus, 'running'>
  hogql?: string | null
  clickhouse?: string | null
  error?: string | null
  error_code?: string | null
  duration_ms: number
  rows_read?: number | null
  bytes_read?: number | null
  result_rows?: number | null
  finished_at: string
}

/** How long query log rows are kept and served (spec §8: the log covers queries of the last 24 hours). */
export const QUERY_LOG_RETENTION_MS = 24 * 3_600_000

/** The query log in the metadata database: one row per query run through the query API. */
export function createQueryLogStore(meta: Kysely<MetaDatabase>) {
  const db = meta.withTables<{ query_log: QueryLogTable }>()
  return {
    async start(entry: QueryLogStart): Promise<number> {
      const row = await db
        .insertInto('query_log')
        .values({ ...entry, is_async: entry.is_async ? 1 : 0, status: 'running' })
        .returning('id')
        .executeTakeFirstOrThrow()
      return row.id
    },
    async finish(id: number, outcome: QueryLogFinish): Promise<void> {
      await db.updateTable('query_log').set(outcome).where('id', '=', id).execute()
    },
    /** The latest log row of a query issued at or after `since`. */
    latest: (teamId: number, queryId: string, since: string) =>
      db
        .selectFrom('query_log')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('query_id', '=', queryId)
        .where('created_at', '>=', since)
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst(),
    async prune(before: string): Promise<void> {
      await db.deleteFrom('query_log').where('created_at', '<', before).execute()
    },
  }
}

export type QueryLogStore = ReturnType<typeof createQueryLogStore>

/**
 * The columns of PostHog's `query_log` table that Burrow records, in its order, with their ClickHouse types;
 * `kind` and `exception` are the node kind and the error detail, which PostHog keeps in the same row.
 */
const LOG_COLUMNS: [name: string, type: string][] = [
  ['event_date', 'Date'],
  ['event_time', "DateTime64(3, 'UTC')"],
  ['query_id', 'String'],
  ['query', 'String'],
  ['query_start_time', "DateTime64(3, 'UTC')"],
  ['query_duration_ms', 'Int64'],
  ['hogql_name', 'String'],
  ['read_rows', 'Int64'],
  ['read_bytes', 'Int64'],
  ['result_rows', 'Int64'],
  ['status', 'String'],
  ['kind', 'String'],
  ['exception', 'String'],
]

/** The engine's query log types (`type` column) for our statuses. */
const STATUS_TYPES: Record<QueryLogStatus, string> = {
  running: 'QueryStart',
  completed: 'QueryFinish',
  failed: 'ExceptionWhileProcessing',
  cancelled: 'ExceptionWhileProcessing',
}

/** `2024-01-01T10:00:00.123Z` as PostHog renders a UTC DateTime cell (no fraction when it is zero). */
const utcCell = (iso: string) => iso.replace(/\.000Z$/, 'Z')

/**
 * `GET /query/{id}/log/` as PostHog answers it: the result of a HogQL query over its `query_log` table for this
 * query id (`results`, `columns`, `types`), empty when nothing was logged.
 */
export function toQueryLogResponse(rows: QueryLogRow[]) {
  const results = rows.map((row) => {
    const node = parseJson(row.query)
    const text =
      typeof node === 'object' && node !== null && typeof (node as { query?: unknown }).query === 'string'
        ? (node as { query: string }).query
        : row.query
    const ended = row.finished_at ?? row.created_at
    return [
      ended.slice(0, 10),
      utcCell(ended),
      row.query_id,
      text,
      utcCell(row.created_at),
      Math.round(row.duration_ms ?? 0),
      row.name ?? '',
      row.rows_read ?? 0,
      row.bytes_read ?? 0,
      row.result_rows ?? 0,
      STATUS_TYPES[row.status],
      row.kind,
      row.error ?? '',
    ]
  })
  const columns = LOG_COLUMNS.map(([name]) => name)
  return {
    results,
    columns,
    types: LOG_COLUMNS,
    hasMore: false,
    limit: 100,
    offset: 0,
    query: 'select * from query_log where query_id = {client_query_id} and event_date >= yesterday()',
    error: null,
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
