import { Readable } from 'node:stream'
import { type ClickHouseClientConfigOptions, createClient } from '@clickhouse/client'
import type { EventQueryOptions, EventStore, QueryResult } from './types.js'

interface JsonCompact {
  meta: { name: string; type: string }[]
  data: unknown[][]
  statistics?: { elapsed: number; rows_read: number; bytes_read: number }
}

/**
 * A ClickHouse server or cluster over HTTP: a thin adapter, the same SQL as the embedded engine. `client` passes
 * options through to `@clickhouse/client` (TLS, timeouts, or another `connection` such as chDB's).
 */
export function createClickHouseEventStore(
  url: string,
  client: ClickHouseClientConfigOptions = {},
  options: { cluster?: string } = {},
): EventStore {
  const database = clickHouseDatabase(url)
  const parsed = new URL(url)
  const ch = createClient({
    ...client,
    url: `${parsed.protocol}//${parsed.host}`,
    username: decodeURIComponent(parsed.username) || 'default',
    password: decodeURIComponent(parsed.password),
    database,
    clickhouse_settings: {
      output_format_json_quote_64bit_integers: 0,
      date_time_output_format: 'iso',
      // On a cluster, an insert into the Distributed events table returns once every shard has its rows (not
      // once they are queued on the node that took them): capture acknowledges only what the shards hold.
      ...(options.cluster ? { insert_distributed_sync: 1 } : {}),
      ...client.clickhouse_settings,
    },
  })

  return {
    kind: 'clickhouse',
    cluster: options.cluster ? { cluster: options.cluster, database } : undefined,
    async query<Row extends unknown[]>(sql: string, options: EventQueryOptions = {}): Promise<QueryResult<Row>> {
      const result = await ch.query({
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
      await ch.command({
        query: sql,
        query_params: options.params,
        query_id: options.queryId,
        abort_signal: options.signal,
        clickhouse_settings: options.settings as Record<string, never>,
      })
    },
    async insertJsonEachRow(table, ndjson) {
      // The client takes JSONEachRow as objects (it streams them itself); these are the low-volume mirror tables.
      const rows = ndjson
        .toString()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
      await ch.insert({ table, values: rows, format: 'JSONEachRow' })
    },
    async insertTabSeparated(table, columns, tsv) {
      await ch.insert({
        table,
        values: Readable.from([Buffer.from(tsv)], { objectMode: false }),
        format: 'TabSeparated',
        columns: [...columns] as [string],
      })
    },
    async cancel(queryId) {
      const found = await ch.query({
        query: 'SELECT count() AS c FROM system.processes WHERE query_id = {id:String}',
        query_params: { id: queryId },
        format: 'JSONEachRow',
      })
      const rows = (await found.json()) as { c: number }[]
      if (!rows[0] || Number(rows[0].c) === 0) return false
      await ch.command({ query: 'KILL QUERY WHERE query_id = {id:String} ASYNC', query_params: { id: queryId } })
      return true
    },
    async progress(queryId) {
      const result = await ch.query({
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
      const result = await ch.ping()
      return result.success
    },
    async close() {
      await ch.close()
    },
  }
}

/** The database a `CLICKHOUSE_URL` names (its path), `default` when it names none. */
export function clickHouseDatabase(url: string): string {
  return new URL(url).pathname.replace(/^\//, '') || 'default'
}
