/**
 * An insight's result: its query run through the query service (cache, query log, tenant isolation) in the
 * execution mode PostHog derives from `?refresh=`, with a dashboard's filters and variables folded in.
 */

import type { DashboardRow } from '../dashboards/store.js'
import { ApiError, ValidationError } from '../http/errors.js'
import type { QueryService } from '../queries/service.js'

export interface ResultTeam {
  id: number
  timezone: string
}

/** How a result is wanted: the refresh mode and the overrides of the dashboard (or request) it is read in. */
export interface ResultContext {
  refresh?: string | boolean
  filtersOverride?: Record<string, unknown> | null
  variablesOverride?: Record<string, unknown> | null
}

export interface InsightResult {
  result: unknown
  hasMore: unknown
  columns: unknown
  types: unknown
  hogql: unknown
  timezone: string
  last_refresh: string | null
  is_cached: boolean
  cache_target_age: string | null
  next_allowed_client_refresh: string | null
  query_status: unknown
  resolved_date_range: unknown
  /** Why a tile has no result, when its query failed (dashboards only; an insight read answers the error). */
  error?: { type: string; code: string; detail: string }
}

const MODES: Record<string, string> = {
  blocking: 'blocking',
  async: 'async',
  lazy_async: 'lazy_async',
  force_async: 'force_async',
  force_blocking: 'force_blocking',
  force_cache: 'force_cache',
  async_except_on_cache_miss: 'async_except_on_cache_miss',
  true: 'force_blocking',
}

/** PostHog's `execution_mode_from_refresh`: `true` always calculates, anything unknown serves the cache only. */
export function refreshMode(refresh: string | boolean | undefined): string {
  if (refresh === true) return 'force_blocking'
  if (typeof refresh !== 'string') return 'force_cache'
  return MODES[refresh.toLowerCase()] ?? 'force_cache'
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function parseStored(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text)
    return isObject(parsed) ? parsed : {}
  } catch {
    return {}
  }
}

/** A JSON object passed in the query string (`filters_override`, `variables_override`). */
export function parseJsonObject(text: string | undefined, attr: string): Record<string, unknown> | null {
  if (text === undefined || text === '') return null
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new ValidationError(`${attr} must be a JSON object.`, attr, 'parse_error')
  }
  if (parsed === null) return null
  if (!isObject(parsed)) throw new ValidationError(`${attr} must be a JSON object.`, attr)
  return parsed
}

/** Filters that set nothing are no override, so a plain dashboard shares its insights' cached results. */
function effectiveFilters(filters: Record<string, unknown> | null | undefined): Record<string, unknown> | null {
  if (!filters) return null
  const properties = filters.properties
  const hasProperties = Array.isArray(properties) ? properties.length > 0 : properties != null
  return filters.date_from || filters.date_to || hasProperties ? filters : null
}

/** A dashboard's stored filters and variables, replaced by a request's overrides when given (PostHog's rule). */
export function dashboardOverrides(
  dashboard: Pick<DashboardRow, 'filters' | 'variables'> | undefined,
  context: ResultContext,
): ResultContext {
  const filters = context.filtersOverride ?? (dashboard ? parseStored(dashboard.filters) : null)
  const stored = dashboard ? parseStored(dashboard.variables) : {}
  const variables = { ...stored, ...(context.variablesOverride ?? {}) }
  return {
    refresh: context.refresh,
    filtersOverride: effectiveFilters(filters),
    variablesOverride: Object.keys(variables).length > 0 ? variables : null,
  }
}

export function emptyResult(timezone: string): InsightResult {
  return {
    result: null,
    hasMore: null,
    columns: null,
    types: null,
    hogql: null,
    timezone,
    last_refresh: null,
    is_cached: false,
    cache_target_age: null,
    next_allowed_client_refresh: null,
    query_status: null,
    resolved_date_range: null,
  }
}

function fromBody(body: Record<string, unknown>, timezone: string): InsightResult {
  const text = (v: unknown) => (typeof v === 'string' ? v : null)
  return {
    result: body.results ?? body.result ?? null,
    hasMore: body.hasMore ?? null,
    columns: body.columns ?? null,
    types: body.types ?? null,
    hogql: body.hogql ?? null,
    timezone: text(body.timezone) ?? timezone,
    last_refresh: text(body.last_refresh),
    is_cached: body.is_cached === true,
    cache_target_age: text(body.cache_target_age),
    next_allowed_client_refresh: text(body.next_allowed_client_refresh),
    query_status: body.query_status ?? null,
    resolved_date_range: body.resolved_date_range ?? null,
  }
}

export function createInsightResults(deps: { queries: Pick<QueryService, 'query' | 'cached'> }) {
  return {
    /**
     * The result of `query` as `context` asks. `force_cache` (the default) never calculates. With `lenient`,
     * a query that cannot run gives an empty result with its error instead of throwing (a dashboard's tiles).
     */
    async resultFor(
      team: ResultTeam,
      query: Record<string, unknown> | null,
      context: ResultContext,
      lenient = false,
    ): Promise<InsightResult> {
      if (query === null) return emptyResult(team.timezone)
      const request = {
        query,
        filters_override: context.filtersOverride ?? null,
        variables_override: context.variablesOverride ?? null,
      }
      const mode = refreshMode(context.refresh)
      try {
        if (mode === 'force_cache') {
          // A node kind the service cannot run has no cached result either: nothing to show, nothing wrong.
          let cached: Record<string, unknown> | null = null
          try {
            cached = await deps.queries.cached(team, request)
          } catch (error) {
            if (!(error instanceof ApiError)) throw error
          }
          return cached ? fromBody(cached, team.timezone) : emptyResult(team.timezone)
        }
        const answer = await deps.queries.query(team, { ...request, refresh: mode })
        return fromBody(answer.body, team.timezone)
      } catch (error) {
        if (!lenient || !(error instanceof ApiError)) throw error
        return { ...emptyResult(team.timezone), error: { type: error.type, code: error.code, detail: error.detail } }
      }
    },
  }
}
export type InsightResults = ReturnType<typeof createInsightResults>
