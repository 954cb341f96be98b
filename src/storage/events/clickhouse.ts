import { createClient } from '@clickhouse/client'
import type { EventQueryOptions, EventStore, QueryResult } from './types.js'

interface JsonCompact {
  meta: { name: string; type: string }[]
  data: unknown[][]
  statistics?: { elapsed: number; rows_read: number; bytes_read: number }
}

/** A ClickHouse server or cluster over HTTP: a thin adapter, the same SQL as the embedded engine. */
export function createClickHouseEventStore(url: string): EventStore {
  const parsed = new URL(url)
  const database = parsed.pathname.replace(/^\//, '') || 'default'
  const client = createClient({
    url: `${parsed.protocol}//${parsed.host}`,
    username: decodeURIComponent(parsed.username) || 'default',
    password: decodeURIComponent(parsed.password),
    database,
    clickhouse_settings: { output_format_json_quote_64bit_integers: 0, date_time_output_format: 'iso' },
  })

  return {
    kind: 'clickhouse',
    async query<Row extends unknown[]>(sql: string, options: EventQueryOptions = {}): Promise<QueryResult<Row>> {
      const result = await client.query({
        query: sql,
        format: 'JSONCompact',
        query_params: options.params,
        query_id: options.queryId,
        abort_signal: options.signal,
        clickhouse_settings: options.settings as Record<string, never>,
      })
      const body = (await result.json()) as unknown as JsonCompact
      return {
        columns: body.meta.map((m) => m.name),
        types: body.meta.map((m) => m.type),
        rows: body.data as Row[],
        statistics: {
          elapsedMs: (body.statistics?.elapsed ?? 0) * 1000,
          rowsRead: body.statistics?.rows_read ?? 0,
          bytesRead: body.statistics?.bytes_read ?? 0,
        },
      }
    },
    async exec(sql, options = {}) {
      await client.command({
        query: sql,
        query_params: options.params,
        query_id: options.queryId,
        abort_signal: options.signal,
        clickhouse_settings: options.settings as Record<string, never>,
      })
    },
    async insertJsonEachRow(table, ndjson) {
      await client.command({
        query: `INSERT INTO ${table} FORMAT JSONEachRow\n${ndjson.toString()}`,
      })
    },
    async insertTabSeparated(table, columns, tsv) {
      await client.command({
        query: `INSERT INTO ${table} (${columns.map((c) => `\`${c}\``).join(', ')}) FORMAT TabSeparated\n${tsv.toString()}`,
      })
    },
    async cancel(queryId) {
      const found = await client.query({
        query: 'SELECT count() AS c FROM system.processes WHERE query_id = {id:String}',
        query_params: { id: queryId },
        format: 'JSONEachRow',
      })
      const rows = (await found.json()) as { c: number }[]
      if (!rows[0] || Number(rows[0].c) === 0) return false
      await client.command({ query: 'KILL QUERY WHERE query_id = {id:String} ASYNC', query_params: { id: queryId } })
      return true
    },
    async progress(queryId) {
      const result = await client.query({
        query: `SELECT read_rows, read_bytes, total_rows_approx, elapsed,
                       ProfileEvents['OSCPUVirtualTimeMicroseconds'] / 1e6 AS cpu
                FROM system.processes WHERE query_id = {id:String}`,
        query_params: { id: queryId },
        format: 'JSONCompact',
      })
      const row = ((await result.json()) as unknown as JsonCompact).data[0]
      if (!row) return undefined
      const [rows, bytes, total, elapsed, cpu] = row.map(Number)
      return {
        rows_read: rows,
        bytes_read: bytes,
        estimated_rows_total: total,
        time_elapsed: elapsed,
        active_cpu_time: cpu,
      }
    },
    async ping() {
      const result = await client.ping()
      return result.success
    },
    async close() {
      await client.close()
    },
  }
}
