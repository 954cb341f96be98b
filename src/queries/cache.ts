/**
 * The query result cache (hogql.md §3.5): keyed by project and normalized query, with PostHog's staleness
 * thresholds. Kept in process memory (bounded, least recently used first out): results are recomputable.
 */
import crypto from 'node:crypto'

const MINUTE = 60_000
const HOUR = 60 * MINUTE
/** `day`-interval thresholds, which PostHog applies to HogQL queries: 6 h, or 12 h for lazy refreshes. */
const STALE_AFTER_MS = 6 * HOUR
const LAZY_STALE_AFTER_MS = 12 * HOUR
/** How soon a client may ask for a recalculation (`BASE_MINIMUM_INSIGHT_REFRESH_INTERVAL`). */
export const MIN_CLIENT_REFRESH_MS = 15 * MINUTE

export interface CachedResult {
  response: Record<string, unknown>
  lastRefresh: Date
  /** false when the result can never be trusted as fresh (e.g. relative time bounds) */
  cacheable: boolean
}

/** Display-only fields that do not change a query's result. */
const IGNORED_KEYS = new Set(['custom_name', 'name', 'tags', 'response', 'version'])

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (!value || typeof value !== 'object') return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) {
    if (IGNORED_KEYS.has(key)) continue
    const v = (value as Record<string, unknown>)[key]
    if (v !== undefined) out[key] = canonical(v)
  }
  return out
}

/**
 * `cache_<hash>` of everything that decides the result: the project, its timezone, the query, and what else the
 * answer depends on (`context`: the project's week start and test-account filters, the actions and cohorts the
 * query may refer to — see `cacheContextLoader`).
 */
export function cacheKeyOf(teamId: number, timezone: string, query: unknown, context?: unknown): string {
  const payload = JSON.stringify({
    team_id: teamId,
    timezone,
    query: canonical(query),
    ...(context === undefined ? {} : { context }),
  })
  return `cache_${crypto.createHash('sha256').update(payload).digest('hex').slice(0, 40)}`
}

export function isStale(entry: CachedResult, now: Date, lazy: boolean): boolean {
  if (!entry.cacheable) return true
  return now.getTime() > entry.lastRefresh.getTime() + (lazy ? LAZY_STALE_AFTER_MS : STALE_AFTER_MS)
}

/** The cache fields every cacheable response carries. */
export function cacheFields(key: string, lastRefresh: Date, timezone: string, isCached: boolean) {
  return {
    is_cached: isCached,
    last_refresh: lastRefresh.toISOString(),
    next_allowed_client_refresh: new Date(lastRefresh.getTime() + MIN_CLIENT_REFRESH_MS).toISOString(),
    cache_target_age: new Date(lastRefresh.getTime() + STALE_AFTER_MS).toISOString(),
    cache_key: key,
    timezone,
    calculation_trigger: null,
  }
}

export function createQueryCache(maxEntries = 500) {
  const entries = new Map<string, CachedResult>()
  return {
    get(key: string): CachedResult | undefined {
      const entry = entries.get(key)
      if (entry) {
        entries.delete(key)
        entries.set(key, entry)
      }
      return entry
    },
    set(key: string, entry: CachedResult): void {
      entries.delete(key)
      entries.set(key, entry)
      while (entries.size > maxEntries) entries.delete(entries.keys().next().value as string)
    },
    get size() {
      return entries.size
    },
  }
}

export type QueryCache = ReturnType<typeof createQueryCache>
