/**
 * Runs query nodes: compiles HogQL (or builds it from a structured node), executes it read-only with time and
 * memory limits under the query's engine id, and shapes PostHog's response.
 */

import type * as ast from '../hogql/index.js'
import {
  type ActionResolver,
  type CohortResolver,
  type CompileContext,
  compileHogQL,
  DEFAULT_RETURNED_ROWS,
  parseExpr,
  parseSelect,
  trustedExpr,
} from '../hogql/index.js'
import { ValidationError } from '../http/errors.js'
import { MATERIALIZED_EVENT_PROPERTIES } from '../storage/events/schema.js'
import type { EventStore } from '../storage/events/types.js'
import { QueryFailed, toQueryError, withHogQLMetadata } from './errors.js'
import { buildEventsQuery, type EventsQueryNode, personDistinctIds, shapeEventsRows } from './events-query.js'
import { dateToHogQL, propertiesToHogQL } from './filters.js'
import { formatRows } from './format.js'
import type { PersonLookup } from './person-lookup.js'
import { loadOnce, type RequestMemo } from './request-memo.js'

export type QueryNode = Record<string, unknown> & { kind: string }
export type PropertyTypes = NonNullable<CompileContext['propertyTypes']>

export interface QueryTeam {
  id: number
  timezone: string
}

export interface RunnerDeps {
  events: Pick<EventStore, 'query'>
  persons?: PersonLookup
  /** Declared property types per project, for typed property access in HogQL. */
  propertyTypes?: (teamId: number) => Promise<PropertyTypes | undefined>
  /** The project's cohorts, for `IN COHORT` and cohort property filters (loaded only by queries that use them). */
  cohorts?: (teamId: number) => Promise<CohortResolver>
  /** The project's actions as HogQL, for `matchesAction(id)` (loaded only by queries that use it). */
  actions?: (teamId: number) => Promise<ActionResolver>
  limits?: { maxExecutionSeconds?: number; maxMemoryBytes?: number; maxThreads?: number; maxResultBytes?: number }
  /** Event properties with a column of their own on the events table (default: the event store's schema). */
  materializedEventProperties?: Readonly<Record<string, string>>
}

/** One execution of a node: the engine query id, the cancel signal, and the totals for the query log. */
export interface RunContext {
  team: QueryTeam
  engineId: string
  signal: AbortSignal
  stats: { rowsRead: number; bytesRead: number; resultRows: number; hogql?: string; clickhouse?: string }
  /** the request's metadata loads: the project's cohorts and actions are read once however many queries run */
  memo?: RequestMemo
}

/** A runner for one node kind; other modules add their kinds (insights) through the service's deps. */
export type NodeRunner = (node: QueryNode, ctx: RunContext, run: HogQLExecutor) => Promise<Record<string, unknown>>

export interface ExecutedHogQL {
  columns: string[]
  types: string[]
  rows: unknown[][]
  hogql: string
  clickhouse: string
  pagination?: { limit: number; offset: number }
  timings: { k: string; t: number }[]
}

export type HogQLExecutor = (
  hogql: string,
  ctx: RunContext,
  options?: { placeholders?: Record<string, unknown>; limitPlusOne?: boolean },
) => Promise<ExecutedHogQL>

const DEFAULT_MAX_EXECUTION_SECONDS = 60
const DEFAULT_MAX_MEMORY_BYTES = 2 * 1024 ** 3
const DEFAULT_MAX_RESULT_BYTES = 64 * 1024 ** 2
/** Nice value of a query's engine threads: below inserts, merges and the request thread. */
const QUERY_THREAD_NICE = 19

/** Splits the compiler's trailing `SETTINGS a=1, b=2` off, so that ours can be merged into one clause. */
export function splitSettings(sql: string): { sql: string; settings: Record<string, string | number> } {
  const at = sql.lastIndexOf(' SETTINGS ')
  if (at < 0) return { sql, settings: {} }
  const tail = sql.slice(at + ' SETTINGS '.length)
  const pairs = tail.split(',').map((p) => /^\s*([a-z_][a-z0-9_]*)\s*=\s*(\d+)\s*$/i.exec(p))
  if (pairs.some((p) => p === null)) return { sql, settings: {} }
  const settings: Record<string, number> = {}
  for (const p of pairs as RegExpExecArray[]) settings[p[1]] = Number(p[2])
  return { sql: sql.slice(0, at), settings }
}

const elapsed = (since: number) => (performance.now() - since) / 1000

/**
 * The compiled SQL and the settings it runs with: the compiler's own, read-only, the time, memory and result limits,
 * the query threads' priority. (Benchmarks run the compiled SQL with these, beside the API.)
 */
export function engineQueryOf(
  compiledSql: string,
  limits: RunnerDeps['limits'],
): { sql: string; settings: Record<string, string | number> } {
  const { sql, settings } = splitSettings(compiledSql)
  settings.readonly = 2
  settings.max_execution_time = Math.min(
    Number(settings.max_execution_time ?? Number.POSITIVE_INFINITY),
    limits?.maxExecutionSeconds ?? DEFAULT_MAX_EXECUTION_SECONDS,
  )
  settings.max_memory_usage = limits?.maxMemoryBytes ?? DEFAULT_MAX_MEMORY_BYTES
  settings.max_result_bytes = limits?.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES
  settings.result_overflow_mode = 'throw'
  settings.os_thread_priority = QUERY_THREAD_NICE
  if (limits?.maxThreads) settings.max_threads = limits.maxThreads
  return { sql, settings }
}

export function createHogQLExecutor(deps: RunnerDeps): HogQLExecutor {
  return async (hogql, ctx, options = {}) => {
    const started = performance.now()
    const propertyTypes = (await deps.propertyTypes?.(ctx.team.id)) ?? undefined
    const usesCohorts =
      /cohort/i.test(hogql) ||
      (options.placeholders !== undefined && /cohort/i.test(JSON.stringify(options.placeholders)))
    const usesActions =
      /matchesaction/i.test(hogql) ||
      (options.placeholders !== undefined && /matchesaction/i.test(JSON.stringify(options.placeholders)))
    const load = <T>(loader: ((teamId: number) => Promise<T>) | undefined) =>
      loader ? loadOnce(ctx.memo, loader, ctx.team.id) : undefined
    const actions = usesActions ? await load(deps.actions) : undefined
    // action steps may filter on cohorts
    const cohorts = usesCohorts || actions ? await load(deps.cohorts) : undefined
    let compiled: ReturnType<typeof compileHogQL>
    try {
      compiled = compileHogQL(hogql, {
        teamId: ctx.team.id,
        timezone: ctx.team.timezone,
        propertyTypes,
        cohorts,
        actions,
        placeholders: options.placeholders,
        limit: DEFAULT_RETURNED_ROWS,
        limitPlusOne: options.limitPlusOne ?? false,
        materializedEventProperties: deps.materializedEventProperties ?? MATERIALIZED_EVENT_PROPERTIES,
      })
    } catch (error) {
      throw toQueryError(error)
    }
    const compiledAt = performance.now()
    const { sql, settings } = engineQueryOf(compiled.sql, deps.limits)
    ctx.stats.hogql = compiled.hogql
    ctx.stats.clickhouse = sql
    if (ctx.signal.aborted) throw toQueryError(Object.assign(new Error('aborted'), { name: 'AbortError' }))
    let result: Awaited<ReturnType<EventStore['query']>>
    try {
      result = await deps.events.query(sql, {
        params: compiled.params,
        queryId: ctx.engineId,
        signal: ctx.signal,
        settings,
      })
    } catch (error) {
      throw toQueryError(ctx.signal.aborted ? Object.assign(new Error('aborted'), { name: 'AbortError' }) : error)
    }
    ctx.stats.rowsRead += result.statistics.rowsRead
    ctx.stats.bytesRead += result.statistics.bytesRead
    const columns = compiled.columns.length === result.columns.length ? compiled.columns : result.columns
    return {
      columns,
      // LowCardinality is a storage detail of ours (PostHog's event column is a plain String): report the value type.
      types: result.types.map(withoutLowCardinality),
      rows: formatRows(result.rows, result.types),
      hogql: compiled.hogql,
      clickhouse: sql,
      pagination: compiled.pagination,
      timings: [
        { k: './compile', t: (compiledAt - started) / 1000 },
        { k: './execute', t: elapsed(compiledAt) },
      ],
    }
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The tables (by name) that the SELECT holding the `{filters}` placeholder reads, joins included. */
export function filtersTablesOf(query: string): Set<string> {
  const tables = new Set<string>()
  const visit = (node: unknown, select: ast.SelectNode | undefined): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item, select)
      return
    }
    if (!isObject(node)) return
    if (node.kind === 'Select') select = node as unknown as ast.SelectNode
    if (node.kind === 'Placeholder' && select) {
      const chain = (node as unknown as ast.Placeholder).chain
      if (chain.length === 1 && chain[0] === 'filters') {
        for (let join = select.from; join; join = join.next) {
          if (join.table.kind === 'Field') tables.add(join.table.chain.join('.'))
        }
      }
      return
    }
    for (const value of Object.values(node)) if (typeof value === 'object') visit(value, select)
  }
  visit(parseSelect(query), undefined)
  return tables
}

/**
 * `{filters}` for HogQLQuery: property filters and date range as one boolean expression (`true` if none). As in
 * PostHog, a SELECT over `sessions` reads session filters from the sessions table itself and bounds the session's
 * start; other filters then need the events table in the same SELECT.
 */
function filtersExpression(filters: unknown, tables: Set<string>): string {
  if (!isObject(filters)) return 'true'
  const parts: string[] = []
  const onSessions = tables.has('sessions')
  const onEvents = tables.has('events') || !onSessions
  const range = isObject(filters.dateRange) ? filters.dateRange : {}
  const from = dateToHogQL(range.date_from, 'date_from')
  const to = dateToHogQL(range.date_to, 'date_to')
  const timestamp = onEvents ? 'timestamp' : '$start_timestamp'
  if (from) parts.push(`${timestamp} >= ${from}`)
  if (to) parts.push(`${timestamp} < ${to}`)
  const list = Array.isArray(filters.properties) ? filters.properties : []
  if (onSessions && list.length > 0) {
    const isSession = (p: unknown) => isObject(p) && p.type === 'session'
    const others = list.filter((p) => !isSession(p))
    if (others.length > 0 && !onEvents) {
      throw new ValidationError(
        'Can only use session properties in a filter when selecting from only the sessions table.',
        'filters',
      )
    }
    const sessionExpr = propertiesToHogQL(list.filter(isSession), 'sessions')
    const otherExpr = propertiesToHogQL(others)
    if (sessionExpr) parts.push(sessionExpr)
    if (otherExpr) parts.push(otherExpr)
  } else {
    const properties = propertiesToHogQL(filters.properties)
    if (properties) parts.push(properties)
  }
  return parts.length === 0 ? 'true' : parts.map((p) => `(${p})`).join(' AND ')
}

function placeholdersOf(node: QueryNode): Record<string, unknown> | undefined {
  const text = node.query as string
  const values: Record<string, unknown> = isObject(node.values) ? { ...node.values } : {}
  if (isObject(node.variables)) {
    const variables: Record<string, unknown> = {}
    for (const variable of Object.values(node.variables)) {
      if (!isObject(variable) || typeof variable.code_name !== 'string') continue
      variables[variable.code_name] = variable.isNull === true ? null : (variable.value ?? null)
    }
    values.variables = variables
  }
  if (/\{\s*filters\s*\}/.test(text)) {
    if (isObject(node.values) && 'filters' in node.values) {
      throw new ValidationError("Query contains 'filters' both as placeholder and as a query parameter.", 'query')
    }
    values.filters = trustedExpr(parseExpr(filtersExpression(node.filters, filtersTablesOf(text))))
  }
  return Object.keys(values).length > 0 ? values : undefined
}

export const runHogQLQuery: NodeRunner = async (node, ctx, run) => {
  if (typeof node.query !== 'string' || node.query.trim() === '') {
    throw new ValidationError('This field is required.', 'query', 'required')
  }
  const started = performance.now()
  let placeholders: Record<string, unknown> | undefined
  try {
    placeholders = placeholdersOf(node)
  } catch (error) {
    throw toQueryError(error)
  }
  let executed: ExecutedHogQL
  try {
    executed = await run(node.query, ctx, { placeholders, limitPlusOne: true })
  } catch (error) {
    throw error instanceof QueryFailed ? withHogQLMetadata(error, node.query) : error
  }
  let rows = executed.rows
  const response: Record<string, unknown> = {}
  if (executed.pagination) {
    response.hasMore = rows.length > executed.pagination.limit
    rows = rows.slice(0, executed.pagination.limit)
    response.limit = executed.pagination.limit
    response.offset = executed.pagination.offset
  }
  ctx.stats.resultRows = rows.length
  return {
    results: rows,
    columns: executed.columns,
    types: executed.columns.map((c, i) => [c, executed.types[i]]),
    hogql: executed.hogql,
    clickhouse: executed.clickhouse,
    query: node.query,
    modifiers: isObject(node.modifiers) ? node.modifiers : {},
    error: null,
    timings: [...executed.timings, { k: '.', t: elapsed(started) }],
    ...response,
  }
}

export function createEventsQueryRunner(persons?: PersonLookup): NodeRunner {
  return async (node, ctx, run) => {
    const started = performance.now()
    const plan = buildEventsQuery(node as unknown as EventsQueryNode)
    const executed = await run(plan.hogql, ctx)
    const hasMore = executed.rows.length > plan.limit
    const rows = executed.rows.slice(0, plan.limit)
    const ids = personDistinctIds(plan.plan, rows)
    const people = ids.length > 0 && persons ? await persons(ctx.team.id, ids) : new Map()
    const showsNames = plan.plan.some((p) => p.kind === 'person_display_name')
    const names = showsNames ? await persons?.displayNameProperties(ctx.team.id) : undefined
    const shaped = shapeEventsRows(plan.plan, rows, executed.types, ctx.team.id, people, names ?? undefined)
    ctx.stats.resultRows = rows.length
    return {
      results: shaped.results,
      columns: plan.columns,
      types: shaped.types,
      hogql: executed.hogql,
      clickhouse: executed.clickhouse,
      hasMore,
      limit: plan.limit,
      offset: plan.offset,
      modifiers: isObject(node.modifiers) ? node.modifiers : {},
      timings: [...executed.timings, { k: '.', t: elapsed(started) }],
    }
  }
}

function withoutLowCardinality(type: string): string {
  return type.replace(/LowCardinality\(([^()]*(?:\([^()]*\))?[^()]*)\)/g, '$1')
}
