import { chdbConnectionArgs } from './chdb-args.js'
import { clickHouseDatabase, createClickHouseEventStore } from './clickhouse.js'
import { claimEngineDir } from './engine-dir.js'
import { startEngineOnWorker } from './engine-thread.js'
import { type LazyEventStore, lazyEventStore } from './lazy.js'
import { CLUSTER_NAME, migrateEventStore } from './schema.js'

export type { EventStoreState, LazyEventStore } from './lazy.js'
export { migrateEventStore } from './schema.js'

import type { EngineSettings } from './types.js'

export type { EngineSettings, EventQueryOptions, EventStore, QueryProgress, QueryResult } from './types.js'

export interface EventStoreOptions {
  engineThreadNice?: number
  /** The embedded engine's settings (memory limit, cache sizes): see chdb.ts. */
  engine?: EngineSettings
  /** Runs the event-store migrations as part of opening. */
  migrate?: boolean
  /** Told of each failed opening (it is retried). */
  onOpenError?: (err: unknown) => void
  /** A ClickHouse server only: the cluster the tables are spread over (see schema.ts, `eventStoreDdl`). */
  cluster?: string
}

/**
 * Opens the event store named by `url`: `chdb:<dir>` (embedded) or `http(s)://…` (ClickHouse server). Nothing is
 * opened until the store is first used (or `open()` is called): the embedded engine's library is loaded then,
 * so a process that has not needed it yet does not carry it.
 */
export function openEventStore(url: string, options: EventStoreOptions = {}): LazyEventStore {
  const migrated = async <S extends Parameters<typeof migrateEventStore>[0]>(store: S): Promise<S> => {
    if (!options.migrate) return store
    try {
      await migrateEventStore(store, store.cluster)
      return store
    } catch (err) {
      await store.close().catch(() => undefined)
      throw err
    }
  }
  if (url.startsWith('chdb:')) {
    claimEngineDir(url.slice('chdb:'.length))
    return lazyEventStore(
      'chdb',
      async () => {
        const dir = url.slice('chdb:'.length)
        // The engine's library and server start on a worker thread first (engine-thread.ts): the event loop
        // goes on meanwhile, and chdb.js then loads a library already in place.
        const onWorker = await startEngineOnWorker(dir, chdbConnectionArgs(options.engine ?? {}))
        try {
          const { createChdbEventStore } = await import('./chdb.js')
          return migrated(
            createChdbEventStore(dir, 3, {
              engineThreadNice: options.engineThreadNice ?? 0,
              engine: options.engine,
              afterClose: onWorker.release,
            }),
          )
        } catch (error) {
          await onWorker.release()
          throw error
        }
      },
      { onOpenError: options.onOpenError },
    )
  }
  if (options.cluster && !CLUSTER_NAME.test(options.cluster)) throw new Error(`not a cluster name: ${options.cluster}`)
  const cluster = options.cluster ? { cluster: options.cluster, database: clickHouseDatabase(url) } : undefined
  return lazyEventStore(
    'clickhouse',
    async () => migrated(createClickHouseEventStore(url, {}, { cluster: options.cluster })),
    { onOpenError: options.onOpenError, cluster },
  )
}
