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

/** The log row as the API shows it, with the field names of PostHog's `query_log` table. */
export function toQueryLogEntry(row: QueryLogRow) {
  return {
    query_id: row.query_id,
    client_query_id: row.client_query_id,
    name: row.name,
    kind: row.kind,
    query: parseJson(row.query),
    hogql: row.hogql,
    clickhouse: row.clickhouse,
    status: row.status,
    is_async: row.is_async === 1,
    exception: row.error,
    exception_code: row.error_code,
    query_start_time: row.created_at,
    event_time: row.finished_at,
    query_duration_ms: row.duration_ms,
    read_rows: row.rows_read,
    read_bytes: row.bytes_read,
    result_rows: row.result_rows,
    team_id: row.team_id,
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
