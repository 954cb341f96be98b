/** HogQL text → parameterised ClickHouse SQL. Pure: no I/O. */

import { type ActionResolver, expandActions } from './actions.js'
import type * as ast from './ast.js'
import { type CohortResolver, expandCohorts } from './cohorts.js'
import { HogQLValidationError } from './errors.js'
import { printHogQL } from './hogql-printer.js'
import { parseSelect } from './parser.js'
import { evaluatePlaceholder, SqlValue } from './placeholder-expressions.js'
import { expandPostHogFunctions, MAY_CALL_POSTHOG_FUNCTION } from './posthog-functions.js'
import { ClickHousePrinter, TEAM_PARAM } from './printer.js'

export interface CompileContext {
  teamId: number
  /** IANA timezone of the project */
  timezone: string
  /** 0 = Sunday (default), 1 = Monday */
  weekStartDay?: 0 | 1
  /** declared property types (String, Numeric, Boolean, DateTime, Duration) by property name */
  propertyTypes?: { event?: Record<string, string>; person?: Record<string, string>; group?: Record<string, string> }
  /** values for `{name}` placeholders: JSON values become bound constants, HogQL AST nodes are inserted as-is */
  placeholders?: Record<string, unknown>
  /** default LIMIT for a top-level SELECT without one (default 100, at most MAX_SELECT_RETURNED_ROWS) */
  limit?: number
  /** fetch one row more than the default limit, so the caller can tell whether there are more rows */
  limitPlusOne?: boolean
  /** the project's cohorts, for `IN COHORT`: without them, any IN COHORT is an unknown cohort */
  cohorts?: CohortResolver
  /** the project's actions, for `matchesAction(id)`: without them, any matchesAction is an unknown action */
  actions?: ActionResolver
  /**
   * Event properties the events table stores in columns of their own (property name → column), each defined as
   * the property's JSON expression: `properties.x` then reads the column. Without it, every property is read
   * from the JSON text.
   */
  materializedEventProperties?: Readonly<Record<string, string>>
}

export interface CompiledQuery {
  sql: string
  params: Record<string, unknown>
  /** column names: aliases, field names, or the printed HogQL of the expression */
  columns: string[]
  /** not filled by the compiler: the runner takes real types from ClickHouse's result metadata */
  types?: string[]
  /** normalised HogQL text that was compiled (placeholders filled in, limit applied) */
  hogql: string
  /** set when the query had no LIMIT and the default applied: the caller paginates with these */
  pagination?: { limit: number; offset: number }
}

export const DEFAULT_RETURNED_ROWS = 100
export const MAX_SELECT_RETURNED_ROWS = 50_000

/**
 * Tenant isolation. Each physical table is read through a subquery whose only condition is an explicit `PREWHERE`:
 * the team (and date or event bounds Burrow derives from constants). The read step evaluates that PREWHERE and
 * removes every row that fails it before handing rows to any step above it, so whatever the engine does with the
 * query's own conditions, they only ever see the team's rows: it may push them down (`query_plan_filter_push_down`)
 * and merge them (`query_plan_merge_filters`) to just above the read, where they skip granules through the primary
 * key and run on the team's rows only. Nothing user-written can join that PREWHERE: a query's own PREWHERE is
 * compiled as a WHERE condition, the engine never moves conditions into a read that already has a PREWHERE (and
 * `optimize_move_to_prewhere=0` besides), and the engine's own additions to it (the top-K threshold of `ORDER BY
 * column LIMIT n`) compare a column with a constant and cannot throw. `enable_optimize_predicate_expression=0`
 * keeps an engine on the old analyzer from copying conditions into the subquery's text. `SELECT *` inside the
 * subquery must carry the materialized property columns out (`asterisk_include_materialized_columns`).
 * test/security/exfiltration.test.ts and test/hogql/isolation-pushdown.test.ts try to break it.
 */
export const ISOLATION_SETTINGS = [
  'optimize_move_to_prewhere=0',
  'enable_optimize_predicate_expression=0',
  'asterisk_include_materialized_columns=1',
]

/** ClickHouse settings on every query: read-only, bounded, and the semantics HogQL relies on. */
const SETTINGS = [
  'readonly=2',
  'max_execution_time=60',
  'max_ast_elements=4000000',
  'max_expanded_ast_elements=4000000',
  'max_bytes_before_external_group_by=0',
  'transform_null_in=1',
  'optimize_min_equality_disjunction_chain_length=4294967295',
  'allow_experimental_join_condition=1',
  // The right side of a join is the one held in memory, as the query wrote it (lazy joins put the small tables
  // there). The engine's own choice misjudges the events side once its team filter is a PREWHERE (it took the
  // 30-day dau trend from 0.15 s to 0.55 s on 3M events by building the hash table from the events).
  'query_plan_join_swap_table=0',
  ...ISOLATION_SETTINGS,
].join(', ')

const validZones = new Set<string>(['UTC'])

/** Quoted timezone literal; throws for names the runtime does not know. */
export function timezoneLiteral(tz: string): string {
  if (!validZones.has(tz)) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tz })
    } catch {
      throw new HogQLValidationError(`Unknown timezone: '${tz}'`)
    }
    if (!/^[A-Za-z0-9_+\-/]+$/.test(tz)) throw new HogQLValidationError(`Unknown timezone: '${tz}'`)
    validZones.add(tz)
  }
  return `'${tz}'`
}

function valueToExpr(value: unknown, name: string): ast.Expr {
  if (value === null || value === undefined) return { kind: 'Constant', value: null }
  if (typeof value === 'string' || typeof value === 'boolean') return { kind: 'Constant', value }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new HogQLValidationError(`Placeholder {${name}} is not a finite number`)
    return { kind: 'Constant', value, float: !Number.isInteger(value) }
  }
  if (value instanceof Date) return { kind: 'Constant', value: value.toISOString() }
  if (Array.isArray(value)) return { kind: 'Array', exprs: value.map((v) => valueToExpr(v, name)) }
  // Only trees our own code built (parsed from text it wrote) may stand in for a placeholder: a tree from a request
  // body could carry strings the printer writes as they are.
  if (typeof value === 'object' && trusted.has(value)) return value as ast.Expr
  throw new HogQLValidationError(`Placeholder {${name}} has a value of an unsupported type`)
}

const trusted = new WeakSet<object>()

/** Marks an expression built by Burrow itself (e.g. `{filters}`) as safe to use as a placeholder value. */
export function trustedExpr<T extends ast.Expr>(expr: T): T {
  trusted.add(expr)
  return expr
}

function lookupPlaceholder(chain: string[], values: Record<string, unknown> | undefined, pos?: number): unknown {
  const key = chain.join('.')
  if (!values) throw new HogQLValidationError(`Unresolved placeholder: {${key}}`, pos)
  if (key in values) return values[key]
  let cur: unknown = values
  for (const part of chain) {
    if (cur && typeof cur === 'object' && part in (cur as object)) cur = (cur as Record<string, unknown>)[part]
    else {
      const available = Object.keys(values).join(', ')
      throw new HogQLValidationError(
        `Placeholder {${key}} is not available in this context. You can use the following: ${available}`,
        pos,
      )
    }
  }
  return cur
}

/** Returns a copy of the tree with every `{placeholder}` replaced by its value. */
function fillPlaceholders<T>(node: T, values: Record<string, unknown> | undefined): T {
  if (Array.isArray(node)) return node.map((n) => fillPlaceholders(n, values)) as T
  if (!node || typeof node !== 'object') return node
  const obj = node as Record<string, unknown>
  if (obj.kind === 'Placeholder') {
    const p = obj as unknown as ast.Placeholder
    if (p.expr) {
      const value = evaluatePlaceholder(p.expr, (chain, pos) => lookupPlaceholder(chain, values, pos))
      // sql(…) stands for HogQL the query itself wrote, which may hold placeholders of its own
      return (value instanceof SqlValue ? fillPlaceholders(value.expr, values) : valueToExpr(value, 'expression')) as T
    }
    return valueToExpr(lookupPlaceholder(p.chain, values, p.start), p.chain.join('.')) as T
  }
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(obj)) out[k] = v && typeof v === 'object' ? fillPlaceholders(v, values) : v
  return out as T
}

/** Top-level LIMIT rules (hogql.md §1.5): default when missing, clamped to the maximum. */
function applyLimits(node: ast.AnySelect, defaultLimit: number): ast.AnySelect {
  if (node.kind === 'SelectUnion') {
    return {
      ...node,
      initial: applyLimits(node.initial, defaultLimit),
      subsequent: node.subsequent.map((s) => ({ ...s, query: applyLimits(s.query, defaultLimit) })),
    }
  }
  const limit = node.limit
  if (!limit) return { ...node, limit: { kind: 'Constant', value: defaultLimit } }
  if (limit.kind === 'Constant' && typeof limit.value === 'number') {
    return limit.value > MAX_SELECT_RETURNED_ROWS
      ? { ...node, limit: { kind: 'Constant', value: MAX_SELECT_RETURNED_ROWS } }
      : node
  }
  const max: ast.Constant = { kind: 'Constant', value: MAX_SELECT_RETURNED_ROWS }
  return { ...node, limit: { kind: 'Call', name: 'min2', args: [max, limit] } }
}

export function compileHogQL(query: string, ctx: CompileContext): CompiledQuery {
  if (!Number.isSafeInteger(ctx.teamId)) throw new HogQLValidationError('teamId must be an integer')
  const tz = timezoneLiteral(ctx.timezone || 'UTC')
  let tree = parseSelect(query)
  if (query.includes('{')) tree = fillPlaceholders(tree, ctx.placeholders)
  if (MAY_CALL_POSTHOG_FUNCTION.test(query) || ctx.placeholders) tree = expandPostHogFunctions(tree)
  // actions first: their steps may use cohorts
  if (/matchesaction/i.test(query) || ctx.placeholders) tree = expandActions(tree, ctx.actions)
  // placeholders may carry IN COHORT too (property filters), so the text check alone is not enough
  if (/cohort/i.test(query) || ctx.placeholders) tree = expandCohorts(tree, ctx.cohorts)
  const defaultLimit = Math.min(Math.max(1, Math.floor(ctx.limit ?? DEFAULT_RETURNED_ROWS)), MAX_SELECT_RETURNED_ROWS)
  const paginate = tree.kind === 'Select' && !tree.limit
  const limited = applyLimits(tree, defaultLimit)
  let printedTree = limited
  if (paginate && ctx.limitPlusOne) {
    printedTree = { ...(limited as ast.SelectNode), limit: { kind: 'Constant', value: defaultLimit + 1 } }
  }
  const printer = new ClickHousePrinter({
    tz,
    weekMode: ctx.weekStartDay === 1 ? 3 : 0,
    propertyTypes: ctx.propertyTypes ?? {},
    materializedEventProperties: ctx.materializedEventProperties,
  })
  const printed = printer.printQuery(printedTree)
  let hogql: string | undefined
  const result: CompiledQuery = {
    sql: `${printed.sql} SETTINGS ${SETTINGS}`,
    params: { ...printer.params, [TEAM_PARAM]: ctx.teamId },
    columns: printed.columns.map((c) => c.name),
    // printed on first read: most callers on the hot path never look at it
    get hogql() {
      hogql ??= printHogQL(limited)
      return hogql
    },
  }
  if (paginate) {
    const offset = (tree as ast.SelectNode).offset
    const offsetValue = offset?.kind === 'Constant' && typeof offset.value === 'number' ? offset.value : 0
    result.pagination = { limit: defaultLimit, offset: offsetValue }
  }
  return result
}
