import fs from 'node:fs'
import { type ChdbResult, Session } from 'chdb'
import type { EventQueryOptions, EventStore, QueryProgress, QueryResult } from './types.js'

interface JsonCompact {
  meta: { name: string; type: string }[]
  data: unknown[][]
  statistics?: { elapsed: number; rows_read: number; bytes_read: number }
}

/** Settings for every engine session: no system logs (they grow without bound on an embedded engine). */
const CONNECTION_ARGS = [
  '--output_format_json_quote_64bit_integers=0',
  '--log_queries=0',
  '--log_query_threads=0',
  '--log_query_views=0',
  '--log_processors_profiles=0',
  '--opentelemetry_start_trace_probability=0',
  '--date_time_output_format=iso',
]

const QUERY_TAG = 'burrow_q:'

interface PooledSession {
  session: Session
  running: number
}

/**
 * Embedded ClickHouse. One chDB session runs its queries one after another, so a small pool of sessions on the
 * same data directory lets a slow query and a fast one run side by side; each call goes to the least busy one.
 */
export function createChdbEventStore(dataDir: string, poolSize = 3): EventStore {
  fs.mkdirSync(dataDir, { recursive: true })
  const pool: PooledSession[] = []
  for (let i = 0; i < poolSize; i++) {
    pool.push({ session: new Session(dataDir, { connectionArgs: CONNECTION_ARGS }), running: 0 })
  }
  // A dedicated session for control statements (KILL, progress), so they never wait behind a long query.
  const control = new Session(dataDir, { connectionArgs: CONNECTION_ARGS })
  let closed = false

  async function run(sql: string, options: EventQueryOptions, format: string): Promise<ChdbResult> {
    if (closed) throw new Error('event store is closed')
    let target = pool[0]
    for (const p of pool) if (p.running < target.running) target = p
    target.running++
    try {
      const text = withSettings(sql, options)
      const opts = { format, signal: options.signal }
      return options.params && Object.keys(options.params).length > 0
        ? await target.session.queryBindAsync(text, options.params, opts)
        : await target.session.queryAsync(text, opts)
    } catch (err) {
      // A killed query leaves output behind in its session that the next query would read: start afresh.
      if (/QUERY_WAS_CANCELLED|TIMEOUT_EXCEEDED/.test(String((err as Error)?.message))) recycle(target)
      throw err
    } finally {
      target.running--
    }
  }

  function recycle(entry: PooledSession) {
    const old = entry.session
    entry.session = new Session(dataDir, { connectionArgs: CONNECTION_ARGS })
    old.close()
  }

  return {
    kind: 'chdb',
    async query<Row extends unknown[]>(sql: string, options: EventQueryOptions = {}): Promise<QueryResult<Row>> {
      const result = await run(sql, options, 'JSONCompact')
      const text = result.text()
      if (text.trim() === '') return { columns: [], types: [], rows: [], statistics: stats(result) }
      const parsed = JSON.parse(text) as JsonCompact
      return {
        columns: parsed.meta.map((m) => m.name),
        types: parsed.meta.map((m) => m.type),
        rows: parsed.data as Row[],
        statistics: stats(result),
      }
    },
    async exec(sql, options = {}) {
      await run(sql, options, 'CSV')
    },
    async insertJsonEachRow(table, ndjson) {
      if (closed) throw new Error('event store is closed')
      let target = pool[0]
      for (const p of pool) if (p.running < target.running) target = p
      target.running++
      try {
        await target.session.insert({ table, values: ndjson, format: 'JSONEachRow' })
      } finally {
        target.running--
      }
    },
    async cancel(queryId) {
      const marker = `%${QUERY_TAG}${queryId}'%`
      const found = await control.queryBindAsync(
        "SELECT count() FROM system.processes WHERE query LIKE {m:String} AND query NOT LIKE 'KILL%'",
        { m: marker },
        { format: 'JSONCompact' },
      )
      const count = Number((JSON.parse(found.text()) as JsonCompact).data[0]?.[0] ?? 0)
      if (count === 0) return false
      await control.queryBindAsync(
        "KILL QUERY WHERE query LIKE {m:String} AND query NOT LIKE 'KILL%' ASYNC",
        { m: marker },
        { format: 'CSV' },
      )
      return true
    },
    async progress(queryId) {
      const result = await control.queryBindAsync(
        `SELECT read_rows, read_bytes, total_rows_approx, elapsed,
                ProfileEvents['OSCPUVirtualTimeMicroseconds'] / 1e6
         FROM system.processes WHERE query LIKE {m:String} AND query NOT LIKE 'KILL%' LIMIT 1`,
        { m: `%${QUERY_TAG}${queryId}'%` },
        { format: 'JSONCompact' },
      )
      const row = (JSON.parse(result.text()) as JsonCompact).data[0]
      if (!row) return undefined
      const [rows, bytes, total, elapsed, cpu] = row.map(Number)
      return {
        rows_read: rows,
        bytes_read: bytes,
        estimated_rows_total: total,
        time_elapsed: elapsed,
        active_cpu_time: cpu,
      } satisfies QueryProgress
    },
    async ping() {
      try {
        await control.queryAsync('SELECT 1', { format: 'CSV' })
        return true
      } catch {
        return false
      }
    },
    async close() {
      closed = true
      for (const p of pool) p.session.close()
      control.close()
    },
  }
}

function stats(result: ChdbResult) {
  return { elapsedMs: result.elapsed * 1000, rowsRead: result.rowsRead, bytesRead: result.bytesRead }
}

/** Appends a SETTINGS clause carrying the settings and the query tag that lets `cancel` find the query. */
function withSettings(sql: string, options: EventQueryOptions): string {
  const settings: Record<string, string | number> = { ...options.settings }
  if (options.queryId) settings.log_comment = `${QUERY_TAG}${options.queryId}`
  const entries = Object.entries(settings)
  if (entries.length === 0) return sql
  const clause = entries
    .map(([k, v]) => {
      if (!/^[a-z_][a-z0-9_]*$/i.test(k)) throw new Error(`bad setting name ${k}`)
      return `${k} = ${typeof v === 'number' ? v : `'${String(v).replace(/[\\']/g, '\\$&')}'`}`
    })
    .join(', ')
  const trimmed = sql.replace(/;\s*$/, '')
  // The HogQL printer ends its queries with a SETTINGS clause of its own: extend it rather than add a second one.
  return TRAILING_SETTINGS.test(trimmed) ? `${trimmed}, ${clause}` : `${trimmed}\nSETTINGS ${clause}`
}

const TRAILING_SETTINGS = /\bSETTINGS\s+[a-z_][a-z0-9_]*\s*=\s*[^()]*$/i

export { withSettings as appendSettings }
