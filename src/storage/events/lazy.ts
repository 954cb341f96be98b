import type { EventQueryOptions, EventStore, QueryResult } from './types.js'

/** Where an event store that opens on first need stands; `error` is the last failed opening's message. */
export interface EventStoreState {
  state: 'closed' | 'opening' | 'open' | 'failed'
  error?: string
}

/** An event store that opens (engine load, sessions, migrations) when first used, not when made. */
export interface LazyEventStore extends EventStore {
  /** Opens the store now (once, however many callers ask at the same time); rejects when opening failed. */
  open(): Promise<void>
  state(): EventStoreState
}

/**
 * Wraps `open` so that it runs on the first call that needs the store: concurrent first calls share one opening,
 * a failed opening is reported by `state()`, retried by the next call and in the background (so that a store
 * that failed once recovers without a caller), and `close()` closes whatever was opened — or nothing.
 */
export function lazyEventStore(
  kind: EventStore['kind'],
  open: () => Promise<EventStore>,
  options: {
    retryDelaysMs?: readonly number[]
    onOpenError?: (err: unknown) => void
    cluster?: EventStore['cluster']
  } = {},
): LazyEventStore {
  const retryDelaysMs = options.retryDelaysMs ?? [1_000, 5_000, 30_000]
  let store: EventStore | undefined
  let opening: Promise<EventStore> | undefined
  let lastError: string | undefined
  let failures = 0
  let retryTimer: NodeJS.Timeout | undefined
  let closed = false

  function opened(): Promise<EventStore> {
    if (closed) return Promise.reject(new Error('event store is closed'))
    if (store) return Promise.resolve(store)
    if (retryTimer) clearTimeout(retryTimer)
    retryTimer = undefined
    opening ??= open().then(
      (s) => {
        opening = undefined
        lastError = undefined
        failures = 0
        // Shut down while it was opening: close it at once, nothing may use it.
        if (closed) return s.close().then(() => Promise.reject(new Error('event store is closed')))
        store = s
        return s
      },
      (err: unknown) => {
        opening = undefined
        lastError = err instanceof Error ? err.message : String(err)
        options.onOpenError?.(err)
        if (!closed) {
          const delay = retryDelaysMs[Math.min(failures++, retryDelaysMs.length - 1)]
          retryTimer = setTimeout(() => void opened().catch(() => undefined), delay)
          retryTimer.unref()
        }
        throw err
      },
    )
    return opening
  }

  return {
    kind,
    cluster: options.cluster,
    open: async () => {
      await opened()
    },
    state() {
      if (store) return { state: 'open' }
      if (opening) return { state: 'opening', error: lastError }
      if (lastError !== undefined) return { state: 'failed', error: lastError }
      return { state: 'closed' }
    },
    async query<Row extends unknown[]>(sql: string, queryOptions?: EventQueryOptions): Promise<QueryResult<Row>> {
      return (await opened()).query<Row>(sql, queryOptions)
    },
    async exec(sql, queryOptions) {
      return (await opened()).exec(sql, queryOptions)
    },
    async insertJsonEachRow(table, ndjson) {
      return (await opened()).insertJsonEachRow(table, ndjson)
    },
    async insertTabSeparated(table, columns, tsv) {
      return (await opened()).insertTabSeparated(table, columns, tsv)
    },
    async cancel(queryId) {
      // Nothing runs in a store that is not open, and nothing is worth opening it for.
      return store ? store.cancel(queryId) : false
    },
    async progress(queryId) {
      return store ? store.progress(queryId) : undefined
    },
    async ping() {
      // A store not needed yet is not down; one whose opening failed is (and is tried again here).
      if (store) return store.ping()
      if (lastError === undefined) return true
      return opened().then(
        (s) => s.ping(),
        () => false,
      )
    },
    async close() {
      closed = true
      if (retryTimer) clearTimeout(retryTimer)
      retryTimer = undefined
      // An opening under way is waited for, so that its engine is closed rather than left running.
      if (opening) await opening.catch(() => undefined)
      const open = store
      store = undefined
      await open?.close()
    },
  }
}
