/**
 * The query service: execution modes (`refresh`), result cache, asynchronous jobs, cancellation and the
 * query log around the node runners. Knows nothing of HTTP.
 */
import crypto from 'node:crypto'
import type { Kysely } from 'kysely'
import { tokenize } from '../hogql/lexer.js'
import { NotFound, ValidationError } from '../http/errors.js'
import type { EventStore } from '../storage/events/types.js'
import { cacheFields, cacheKeyOf, createQueryCache, isStale, type QueryCache } from './cache.js'
import { CANCELLED_DETAIL, QueryFailed, toQueryError } from './errors.js'
import { createQueryJobs, type QueryStatus } from './jobs.js'
import { checkKnownKind, checkLimitContext, unsupportedKind } from './kinds.js'
import { QUERY_LOG_RETENTION_MS, type QueryLogStore, toQueryLogResponse } from './query-log.js'
import { createRequestMemo, type RequestMemo } from './request-memo.js'
import {
  createEventsQueryRunner,
  createHogQLExecutor,
  type NodeRunner,
  type QueryNode,
  type QueryTeam,
  type RunContext,
  type RunnerDeps,
  runHogQLQuery,
} from './runner.js'
import { upgradeQuery } from './upgrade.js'

export type ExecutionMode =
  | 'blocking'
  | 'async'
  | 'async_except_on_cache_miss'
  | 'lazy_async'
  | 'force_async'
  | 'force_blocking'
  | 'force_cache'

export const EXECUTION_MODES: ExecutionMode[] = [
  'blocking',
  'async',
  'async_except_on_cache_miss',
  'lazy_async',
  'force_async',
  'force_blocking',
  'force_cache',
]

export interface QueryRequest {
  query: Record<string, unknown>
  client_query_id?: string | null
  refresh?: string | boolean | null
  async?: boolean | null
  filters_override?: Record<string, unknown> | null
  variables_override?: Record<string, unknown> | null
  name?: string | null
  limit_context?: string | null
}

export interface QueryAnswer {
  statusCode: 200 | 202
  body: Record<string, unknown>
  /** what the engine read to answer (0 from the cache or for a job still running) */
  bytesRead?: number
  /** the read budget left after this query was debited, when the caller debits one */
  budgetRemaining?: number
}

/** How a caller pays for what its queries read: PostHog's read budget for personal-API-key queries. */
export interface QueryOptions {
  /** Debits what a run read; answers the budget left. */
  debit?: (bytes: number) => Promise<number>
  /** Aborted when the client has gone away: a blocking run is stopped in the engine. */
  clientGone?: AbortSignal
}

/** Wrapper nodes that display another node: the API runs their `source`. */
const WRAPPER_KINDS = new Set(['DataTableNode', 'DataVisualizationNode', 'InsightVizNode'])
const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/
const LOG_PRUNE_EVERY_MS = 3_600_000

export interface QueryServiceDeps extends RunnerDeps {
  events: Pick<EventStore, 'query' | 'cancel' | 'progress'>
  /** The metadata store: asynchronous query statuses, shared by every process. */
  db: Kysely<any>
  log: Pick<QueryLogStore, 'start' | 'finish' | 'latest' | 'prune'>
  clock: () => Date
  cache?: QueryCache
  /** Runners for more node kinds (insights), by kind. */
  runners?: Record<string, NodeRunner>
  /**
   * What answers depend on besides the query (project settings, actions, cohorts), for cache keys; loads through
   * the request's memo what the compiler reads too.
   */
  cacheContext?: (teamId: number, node: QueryNode, memo?: RequestMemo) => Promise<unknown>
  /** Told of failures of background work (status heartbeats) that never fail a query. */
  onBackgroundError?: (error: unknown, what: string) => void
  /** Told of every failed run with the original error, whose text (engine messages) callers never see. */
  onFailure?: (error: unknown, context: { teamId: number; queryId: string; code: string }) => void
  /** This process's name (INSTANCE_ID), for the asynchronous query statuses it owns. */
  instanceId?: string
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The engine's id for a query: unique across projects and made of characters that need no escaping. */
export const engineIdOf = (teamId: number, queryId: string) =>
  `t${teamId}x${Buffer.from(queryId, 'utf8').toString('hex')}`

function modeOf(request: QueryRequest): ExecutionMode {
  const refresh = request.refresh
  let mode: ExecutionMode
  if (refresh === true) mode = 'force_blocking'
  else if (refresh === false || refresh === null || refresh === undefined) mode = 'blocking'
  else if ((EXECUTION_MODES as string[]).includes(refresh)) mode = refresh as ExecutionMode
  else throw new ValidationError(`"${refresh}" is not a valid choice.`, 'refresh', 'invalid_choice')
  if (request.async === true && mode === 'blocking') mode = 'async'
  // The query endpoint always calculates when the cache is stale (PostHog converts force_cache here too).
  if (mode === 'force_cache') mode = 'blocking'
  return mode
}

/** Insight nodes, whose dates live in `dateRange` and whose filters in `properties` (a list or a group). */
const INSIGHT_KINDS = new Set([
  'TrendsQuery',
  'StickinessQuery',
  'FunnelsQuery',
  'RetentionQuery',
  'PathsQuery',
  'LifecycleQuery',
])

/**
 * A dashboard's filters on an insight node, as PostHog applies them: a date bound replaces both bounds of the
 * node's range, and property filters are ANDed with the node's own.
 */
function overrideInsightFilters(node: QueryNode, filters: Record<string, unknown>, properties: unknown[]): QueryNode {
  const next = { ...node }
  if (filters.date_from || filters.date_to) {
    const range = isObject(next.dateRange) ? { ...next.dateRange } : {}
    range.date_from = filters.date_from ?? null
    range.date_to = filters.date_to ?? null
    if (filters.explicitDate !== undefined) range.explicitDate = filters.explicitDate
    next.dateRange = range
  }
  if (properties.length > 0) {
    const existing = next.properties
    if (Array.isArray(existing)) next.properties = [...existing, ...properties]
    else if (isObject(existing))
      next.properties = { type: 'AND', values: [existing, { type: 'AND', values: properties }] }
    else next.properties = properties
  }
  return next
}

/** `filters_override` / `variables_override` folded into the node they apply to. */
function applyOverrides(node: QueryNode, request: QueryRequest): QueryNode {
  let next = node
  const filters = request.filters_override
  if (isObject(filters)) {
    const properties = Array.isArray(filters.properties) ? filters.properties : []
    if (next.kind === 'HogQLQuery') {
      const current = isObject(next.filters) ? next.filters : {}
      const range = isObject(current.dateRange) ? { ...current.dateRange } : {}
      if ('date_from' in filters) range.date_from = filters.date_from
      if ('date_to' in filters) range.date_to = filters.date_to
      const existing = Array.isArray(current.properties) ? current.properties : []
      next = { ...next, filters: { ...current, dateRange: range, properties: [...existing, ...properties] } }
    } else if (typeof next.kind === 'string' && INSIGHT_KINDS.has(next.kind)) {
      next = overrideInsightFilters(next, filters, properties)
    } else if (next.kind === 'EventsQuery') {
      next = { ...next }
      if (filters.date_from !== undefined) next.after = filters.date_from
      if (filters.date_to !== undefined) next.before = filters.date_to
      const existing = Array.isArray(next.properties) ? next.properties : []
      if (properties.length > 0) next.properties = [...existing, ...properties]
    }
  }
  const variables = request.variables_override
  if (isObject(variables) && next.kind === 'HogQLQuery') {
    const current = isObject(next.variables) ? { ...next.variables } : {}
    for (const [id, override] of Object.entries(variables)) {
      if (!isObject(override)) continue
      current[id] = { ...(isObject(current[id]) ? current[id] : { variableId: id }), ...override }
    }
    next = { ...next, variables: current }
  }
  return next
}

const RELATIVE_DATE = /^-?\d*[sMhdwmqy](Start|End)?$/

/** Whether a result can be served from cache at all: relative time bounds make it stale at once. */
function isCacheable(node: QueryNode): boolean {
  if (node.kind !== 'EventsQuery') return true
  const absolute = (v: unknown) => typeof v === 'string' && v !== '' && v !== 'all' && !RELATIVE_DATE.test(v)
  return absolute(node.after) && absolute(node.before)
}

/**
 * Refuses HogQL text the lexer cannot read (nested past the limit, an unterminated string) before it costs a cache
 * key, a query log row or an engine session: a flood of such queries (100,000 parentheses, 200 KB each) then costs
 * little more than its body's parse. Lexing stops at the first fault, and a readable query's lexing is microseconds.
 */
function refuseUnreadable(node: QueryNode): void {
  if (node.kind !== 'HogQLQuery' || typeof node.query !== 'string') return
  try {
    tokenize(node.query)
  } catch (error) {
    throw toQueryError(error)
  }
}

export function createQueryService(deps: QueryServiceDeps) {
  const cache = deps.cache ?? createQueryCache()
  const jobs = createQueryJobs({
    events: deps.events,
    db: deps.db,
    clock: deps.clock,
    onError: deps.onBackgroundError,
    instanceId: deps.instanceId,
  })
  const execute = createHogQLExecutor(deps)
  const runners: Record<string, NodeRunner> = {
    HogQLQuery: runHogQLQuery,
    EventsQuery: createEventsQueryRunner(deps.persons),
    ...deps.runners,
  }
  /** Blocking queries in flight, so DELETE can stop them too. */
  const inFlight = new Map<string, { engineId: string; controller: AbortController }>()
  let lastPrune = 0

  function resolveNode(raw: unknown): QueryNode {
    let node = upgradeQuery(raw)
    if (isObject(node)) checkKnownKind(node, (kind) => !!runners[kind] || WRAPPER_KINDS.has(kind))
    for (let depth = 0; isObject(node) && WRAPPER_KINDS.has(node.kind as string); depth++) {
      if (depth > 5 || !isObject(node.source)) throw new ValidationError('The query has no source to run.', 'query')
      node = node.source
    }
    if (!isObject(node) || typeof node.kind !== 'string') {
      throw new ValidationError('The query needs a kind.', 'query__kind', 'required')
    }
    if (!runners[node.kind]) throw unsupportedKind(node.kind)
    return node as QueryNode
  }

  /**
   * What the node's answer depends on besides itself, for its cache key: the project's settings (deps), and the
   * person properties an EventsQuery shows as names when it has a `person_display_name` column.
   */
  async function contextOf(teamId: number, node: QueryNode, memo: RequestMemo): Promise<unknown> {
    const context = await deps.cacheContext?.(teamId, node, memo)
    const select = node.kind === 'EventsQuery' && Array.isArray(node.select) ? node.select : []
    const showsNames = select.some((s) => typeof s === 'string' && /^\s*person_display_name\b/.test(s))
    if (!showsNames || !deps.persons) return context
    const names = await deps.persons.displayNameProperties(teamId)
    return { ...(isObject(context) ? context : {}), person_display_name_properties: names }
  }

  /** Runs a node once, with its query log row, and caches a successful result. */
  async function calculate(
    team: QueryTeam,
    node: QueryNode,
    meta: {
      queryId: string
      clientQueryId: string | null
      name: string | null
      cacheKey: string
      isAsync: boolean
      /** the request's metadata loads, shared with its cache key */
      memo: RequestMemo
      /** told what the engine read, for the async status */
      read?: { bytes: number }
    },
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const now = deps.clock()
    if (now.getTime() - lastPrune > LOG_PRUNE_EVERY_MS) {
      lastPrune = now.getTime()
      // housekeeping: no query waits for it or fails with it
      deps.log
        .prune(new Date(now.getTime() - QUERY_LOG_RETENTION_MS).toISOString())
        .catch((error) => deps.onBackgroundError?.(error, 'query log prune'))
    }
    // The log row is written while the engine works, not before it starts; the run waits for it before it caches,
    // finishes the row or answers, so a query whose row cannot be written still fails.
    const logged = deps.log.start({
      team_id: team.id,
      query_id: meta.queryId,
      client_query_id: meta.clientQueryId,
      name: meta.name,
      kind: node.kind,
      query: JSON.stringify(node),
      is_async: meta.isAsync,
      created_at: now.toISOString(),
    })
    logged.catch(() => undefined)
    const ctx: RunContext = {
      team,
      engineId: engineIdOf(team.id, meta.queryId),
      signal,
      memo: meta.memo,
      stats: { rowsRead: 0, bytesRead: 0, resultRows: 0 },
    }
    const started = performance.now()
    const finishLog = async (status: 'completed' | 'failed' | 'cancelled', error?: QueryFailed | unknown) =>
      deps.log.finish(await logged, {
        status,
        hogql: ctx.stats.hogql ?? null,
        clickhouse: ctx.stats.clickhouse ?? null,
        error: error === undefined ? null : error instanceof QueryFailed ? error.detail : 'error',
        error_code: error instanceof QueryFailed ? error.code : error === undefined ? null : 'error',
        duration_ms: performance.now() - started,
        rows_read: ctx.stats.rowsRead,
        bytes_read: ctx.stats.bytesRead,
        result_rows: ctx.stats.resultRows,
        finished_at: deps.clock().toISOString(),
      })
    try {
      const response = await runners[node.kind](node, ctx, execute)
      if (signal.aborted) throw toQueryError(Object.assign(new Error('aborted'), { name: 'AbortError' }))
      await logged
      const lastRefresh = deps.clock()
      cache.set(meta.cacheKey, { response, lastRefresh, cacheable: isCacheable(node) })
      await finishLog('completed')
      if (meta.read) meta.read.bytes = ctx.stats.bytesRead
      return { ...response, ...cacheFields(meta.cacheKey, lastRefresh, team.timezone, false) }
    } catch (error) {
      const mapped = toQueryError(error)
      const cancelled = signal.aborted || (mapped instanceof QueryFailed && mapped.detail === CANCELLED_DETAIL)
      if (!cancelled) {
        const code = mapped instanceof QueryFailed ? mapped.code : 'error'
        deps.onFailure?.(error, { teamId: team.id, queryId: meta.queryId, code })
      }
      await finishLog(cancelled ? 'cancelled' : 'failed', mapped).catch(() => undefined)
      throw mapped
    }
  }

  return {
    /** `POST /query/`: runs (or starts, or serves from cache) a query as the request's `refresh` asks. */
    async query(team: QueryTeam, request: QueryRequest, options: QueryOptions = {}): Promise<QueryAnswer> {
      const clientQueryId = request.client_query_id ?? null
      if (clientQueryId !== null && !SAFE_ID.test(clientQueryId)) {
        throw new ValidationError(
          'client_query_id may only contain letters, digits, "-" and "_" (at most 128).',
          'client_query_id',
        )
      }
      const mode = modeOf(request)
      checkLimitContext(request.limit_context)
      const node = applyOverrides(resolveNode(request.query), request)
      refuseUnreadable(node)
      const queryId = clientQueryId ?? crypto.randomUUID().replace(/-/g, '')
      // the project's cohorts and actions, read once for the cache key and the compiler
      const memo = createRequestMemo()
      const cacheKey = cacheKeyOf(team.id, team.timezone, node, await contextOf(team.id, node, memo))
      const meta = { queryId, clientQueryId, name: request.name ?? null, cacheKey, isAsync: false, memo }
      const now = deps.clock()
      const cached = cache.get(cacheKey)
      const fresh = cached && !isStale(cached, now, mode === 'lazy_async') ? cached : undefined
      const fromCache = (entry: NonNullable<typeof cached>) => ({
        ...entry.response,
        ...cacheFields(cacheKey, entry.lastRefresh, team.timezone, true),
      })

      const startJob = (): Promise<QueryStatus> =>
        jobs.start(team.id, queryId, engineIdOf(team.id, queryId), async (signal) => {
          const read = { bytes: 0 }
          const results = await calculate(team, node, { ...meta, isAsync: true, read }, signal)
          const budgetRemaining = await options.debit?.(read.bytes)
          return { results, bytesRead: read.bytes, budgetRemaining }
        })

      if (mode === 'force_async') {
        return { statusCode: 202, body: { query_status: await startJob() }, bytesRead: 0 }
      }
      if (fresh && mode !== 'force_blocking') return { statusCode: 200, body: fromCache(fresh), bytesRead: 0 }
      if (mode === 'async' || mode === 'lazy_async' || (mode === 'async_except_on_cache_miss' && cached)) {
        const status = await startJob()
        const body = cached
          ? { ...fromCache(cached), query_status: status }
          : { cache_key: cacheKey, query_status: status }
        return { statusCode: status.complete ? 200 : 202, body, bytesRead: 0 }
      }

      const key = `${team.id}:${queryId}`
      const controller = new AbortController()
      const engineId = engineIdOf(team.id, queryId)
      inFlight.set(key, { engineId, controller })
      // Nobody waits for the answer any more: the engine stops working on it (on a server, the node running it).
      const stop = () => {
        controller.abort()
        deps.events.cancel(engineId).catch(() => undefined)
      }
      options.clientGone?.addEventListener('abort', stop, { once: true })
      try {
        const read = { bytes: 0 }
        const body = await calculate(team, node, { ...meta, read }, controller.signal)
        return { statusCode: 200, body, bytesRead: read.bytes, budgetRemaining: await options.debit?.(read.bytes) }
      } finally {
        options.clientGone?.removeEventListener('abort', stop)
        if (inFlight.get(key)?.controller === controller) inFlight.delete(key)
      }
    },

    /**
     * PostHog's `force_cache` for saved insights and dashboards: the cached result of the request's query, stale
     * or not, without calculating; null when nothing is cached.
     */
    async cached(team: QueryTeam, request: Pick<QueryRequest, 'query' | 'filters_override' | 'variables_override'>) {
      const node = applyOverrides(resolveNode(request.query), request)
      const cacheKey = cacheKeyOf(team.id, team.timezone, node, await contextOf(team.id, node, createRequestMemo()))
      const entry = cache.get(cacheKey)
      if (!entry) return null
      return { ...entry.response, ...cacheFields(cacheKey, entry.lastRefresh, team.timezone, true) }
    },

    /** `GET /query/{id}/`: the status of an asynchronous query, with PostHog's status codes. */
    async status(
      teamId: number,
      queryId: string,
    ): Promise<{ statusCode: number; body: { query_status: QueryStatus } }> {
      const status = await jobs.get(teamId, queryId)
      if (!status) throw new NotFound()
      const statusCode = !status.complete ? 202 : !status.error ? 200 : status.error_message ? 400 : 500
      return { statusCode, body: { query_status: status } }
    },

    /**
     * `DELETE /query/{id}/`: stops the query in the engine, and says what it did in PostHog's words. With
     * `dequeueOnly`, a query that has already started is left running (Burrow has no queue: queries start at once).
     */
    async cancel(teamId: number, queryId: string, options: { dequeueOnly?: boolean } = {}): Promise<string> {
      const running = inFlight.get(`${teamId}:${queryId}`)
      if (options.dequeueOnly) {
        if (!running && !(await jobs.get(teamId, queryId))) throw new NotFound()
        return 'Only tried to dequeue, not cancelling query on clickhouse'
      }
      const outcome = await jobs.cancel(teamId, queryId)
      if (outcome === 'complete' && !running) return 'Query already complete'
      if (outcome === false || outcome === 'complete') {
        if (!running) throw new NotFound()
        running.controller.abort()
        await deps.events.cancel(running.engineId)
      }
      return 'Cancelled query on clickhouse'
    },

    /** `GET /query/{id}/log/`: the latest log row of a query issued in the last 24 hours, as a HogQL response. */
    async log(teamId: number, queryId: string) {
      const since = new Date(deps.clock().getTime() - QUERY_LOG_RETENTION_MS).toISOString()
      const row = await deps.log.latest(teamId, queryId, since)
      return toQueryLogResponse(row ? [row] : [])
    },

    upgrade: <T>(query: T): T => upgradeQuery(query),

    /** Waits for an asynchronous query to end (shutdown, tests). */
    settled: (teamId: number, queryId: string) => jobs.settled(teamId, queryId),

    close: () => jobs.close(),
  }
}

export type QueryService = ReturnType<typeof createQueryService>
