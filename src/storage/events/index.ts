import { createChdbEventStore } from './chdb.js'
import { createClickHouseEventStore } from './clickhouse.js'
import type { EventStore } from './types.js'

export { migrateEventStore } from './schema.js'
export type { EventQueryOptions, EventStore, QueryProgress, QueryResult } from './types.js'

/** Opens the event store named by `url`: `chdb:<dir>` (embedded) or `http(s)://…` (ClickHouse server). */
export function openEventStore(
  url: string,
  options: { engineThreadNice?: number; engineMemoryBytes?: number } = {},
): EventStore {
  if (url.startsWith('chdb:')) {
    return createChdbEventStore(url.slice('chdb:'.length), 3, {
      engineThreadNice: options.engineThreadNice ?? 0,
      engineMemoryBytes: options.engineMemoryBytes,
    })
  }
  return createClickHouseEventStore(url)
}
