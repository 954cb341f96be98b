import fs from 'node:fs'
import { type ChdbResult, type RawInsertParams, Session } from 'chdb'
import { chdbConnectionArgs } from './chdb-args.js'
import { quoteString, setParamsStatement } from './params.js'
import { keepEngineThreadsDeprioritized } from './thread-priority.js'
import type { EngineSettings, EventQueryOptions, EventStore, QueryProgress, QueryResult } from './types.js'

interface JsonCompact {
  meta: { name: string; type: string }[]
  data: unknown[][]
  statistics?: { elapsed: number; rows_read: number; bytes_read: number }
}

const QUERY_TAG = 'burrow_q:'
/** `{name:Type}` placeholders in a query's text. */
const PARAM_NAMES = /\{([A-Za-z_][A-Za-z0-9_]*):[^}]+\}/g

interface PooledSession {
  session: Session
  running: number
  /** One statement pair (SET params, query) at a time per session, so parameters never mix. */
  lock: () => Promise<() => void>
}

function createLock(): () => Promise<() => void> {
  let tail = Promise.resolve()
  return () => {
    let release!: () => void
    const next = new Promise<void>((r) => {
      release = r
    })
    const ready = tail.then(() => release)
    tail = tail.then(() => next)
    return ready
  }
}

/**
 * Embedded ClickHouse. One chDB session runs its queries one after another, so a small pool of sessions on the
 * same data directory lets a slow query and a fast one run side by side; each call goes to the least busy one.
 */
export function createChdbEventStore(
  dataDir: string,
  poolSize = 3,
  options: {
    engineThreadNice?: number
    engine?: EngineSettings
    /** Runs once the sessions have closed (the engine's worker thread lets its own session go: engine-thread.ts). */
    afterClose?: () => Promise<void>
  } = {},
): EventStore {
  fs.mkdirSync(dataDir, { recursive: true })
  const connectionArgs = chdbConnectionArgs(options.engine ?? {})
  const open = () => new Session(dataDir, { connectionArgs })
  const pool: PooledSession[] = []
  for (let i = 0; i < poolSize; i++) pool.push({ session: open(), running: 0, lock: createLock() })
  // A dedicated session for control statements (KILL, progress), so they never wait behind a long query.
  const control = open()
  const stopDeprioritizing = keepEngineThreadsDeprioritized(options.engineThreadNice ?? 0)
  let closed = false

  async function run(sql: string, options: EventQueryOptions, format: string): Promise<ChdbResult> {
    if (closed) throw new Error('event store is closed')
    const target = leastBusy()
    target.running++
    const release = await target.lock()
    try {
      const text = withSettings(sql, options)
      // Parameters set for an earlier query stay on the session: a query must bring every one it names.
      for (const match of text.matchAll(PARAM_NAMES)) {
        if (!options.params || !Object.hasOwn(options.params, match[1])) {
          throw new Error(`query parameter ${match[1]} has no value`)
        }
      }
      if (options.params && Object.keys(options.params).length > 0) {
        await target.session.queryAsync(setParamsStatement(options.params), { format: 'CSV' })
      }
      // chDB's own abort only detaches the caller while the engine goes on; a tagged query is killed instead,
      // so its session is free again and its entry leaves system.processes.
      const { signal, queryId } = options
      if (signal && queryId) {
        signal.throwIfAborted()
        const kill = () => void store.cancel(queryId).catch(() => undefined)
        signal.addEventListener('abort', kill, { once: true })
        try {
          return await target.session.queryAsync(text, { format })
        } finally {
          signal.removeEventListener('abort', kill)
        }
      }
      return await target.session.queryAsync(text, { format, signal })
    } catch (err) {
      // A query that failed or was killed part-way leaves its partial output in the session, and the next query
      // there would read it before its own: start afresh (a session opens in a few milliseconds).
      if (err instanceof Error && err.name !== 'AbortError' && /DB::Exception/.test(err.message)) recycle(target)
      throw err
    } finally {
      release()
      target.running--
    }
  }

  const checkedOrders = new Map<string, string>()
  async function checkColumnOrder(table: string, columns: readonly string[]) {
    const wanted = columns.join(',')
    if (checkedOrders.get(table) === wanted) return
    const result = await control.queryAsync(`DESCRIBE TABLE ${table.replace(/[^A-Za-z0-9_.]/g, '')}`, {
      format: 'JSONCompact',
    })
    // MATERIALIZED and ALIAS columns are computed by the engine and take no part in a positional insert.
    const actual = (JSON.parse(result.text()) as JsonCompact).data
      .filter((r) => r[2] !== 'MATERIALIZED' && r[2] !== 'ALIAS')
      .map((r) => String(r[0]))
      .join(',')
    if (actual !== wanted) throw new Error(`columns of ${table} are (${actual}), not (${wanted})`)
    checkedOrders.set(table, wanted)
  }

  function leastBusy(): PooledSession {
    let target = pool[0]
    for (const p of pool) if (p.running < target.running) target = p
    return target
  }

  async function insert(params: RawInsertParams) {
    if (closed) throw new Error('event store is closed')
    const target = leastBusy()
    target.running++
    const release = await target.lock()
    try {
      await target.session.insert(params)
    } finally {
      release()
      target.running--
    }
  }

  function recycle(entry: PooledSession) {
    const old = entry.session
    entry.session = open()
    old.close()
  }

  const store: EventStore = {
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
        // What the query read (as a ClickHouse server reports it); the result's own figures count only the
        // result block.
        statistics: parsed.statistics
          ? {
              elapsedMs: parsed.statistics.elapsed * 1000,
              rowsRead: parsed.statistics.rows_read,
              bytesRead: parsed.statistics.bytes_read,
            }
          : stats(result),
      }
    },
    async exec(sql, options = {}) {
      await run(sql, options, 'CSV')
    },
    async insertJsonEachRow(table, ndjson) {
      await insert({ table, values: ndjson, format: 'JSONEachRow' })
    },
    async insertTabSeparated(table, columns, tsv) {
      // chDB's insert accepts only plain identifiers as column names ($session_id is not one), so the rows go in
      // positionally; the caller's columns must be the table's own order, checked once per table.
      await checkColumnOrder(table, columns)
      await insert({ table, values: tsv, format: 'TabSeparated' })
    },
    async cancel(queryId) {
      const marker = markerOf(queryId)
      const found = await control.queryAsync(
        `SELECT count() FROM system.processes WHERE query LIKE ${marker} AND query NOT LIKE 'KILL%'`,
        { format: 'JSONCompact' },
      )
      const count = Number((JSON.parse(found.text()) as JsonCompact).data[0]?.[0] ?? 0)
      if (count === 0) return false
      await control.queryAsync(`KILL QUERY WHERE query LIKE ${marker} AND query NOT LIKE 'KILL%' ASYNC`, {
        format: 'CSV',
      })
      // Wait (briefly) until the engine has really stopped it, so that callers see it gone.
      for (let i = 0; i < 100; i++) {
        const left = await control.queryAsync(
          `SELECT count() FROM system.processes WHERE query LIKE ${marker} AND query NOT LIKE 'KILL%'`,
          { format: 'JSONCompact' },
        )
        if (Number((JSON.parse(left.text()) as JsonCompact).data[0]?.[0] ?? 0) === 0) break
        await new Promise((r) => setTimeout(r, 20))
      }
      return true
    },
    async progress(queryId) {
      const result = await control.queryAsync(
        `SELECT read_rows, read_bytes, total_rows_approx, elapsed,
                ProfileEvents['OSCPUVirtualTimeMicroseconds'] / 1e6
         FROM system.processes WHERE query LIKE ${markerOf(queryId)} AND query NOT LIKE 'KILL%' LIMIT 1`,
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
      stopDeprioritizing()
      for (const p of pool) p.session.close()
      control.close()
      await options.afterClose?.()
    },
  }
  return store
}

/** A LIKE pattern that finds a tagged query in system.processes (query ids are plain tokens, checked here). */
function markerOf(queryId: string): string {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(queryId)) throw new Error(`bad query id ${queryId}`)
  // `_` is a LIKE wildcard: escaped, so that one id never matches another's query.
  return quoteString(`%${QUERY_TAG}${queryId.replaceAll('_', '\\_')}'%`)
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
      return `${k} = ${typeof v === 'number' ? v : quoteString(String(v))}`
    })
    .join(', ')
  const trimmed = sql.replace(/;\s*$/, '')
  // The HogQL printer ends its queries with a SETTINGS clause of its own: extend it rather than add a second one.
  return TRAILING_SETTINGS.test(trimmed) ? `${trimmed}, ${clause}` : `${trimmed}\nSETTINGS ${clause}`
}

const TRAILING_SETTINGS = /\bSETTINGS\s+[a-z_][a-z0-9_]*\s*=\s*[^()]*$/i

export { withSettings as appendSettings }
