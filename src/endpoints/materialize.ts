/**
 * Whether a version's query can be materialized, and how (PostHog's `can_materialize`): the HogQL to store, with
 * its one variable turned into a selected and grouped column so that one table serves every value, or the insight
 * node with its single breakdown. Pure: no I/O.
 */
import type * as ast from '../hogql/ast.js'
import { findFunction, parseSelect, printHogQL } from '../hogql/index.js'

export const MATERIALIZABLE_KINDS = [
  'HogQLQuery',
  'TrendsQuery',
  'FunnelsQuery',
  'LifecycleQuery',
  'RetentionQuery',
  'PathsQuery',
  'StickinessQuery',
]

/** `sync_frequency` labels and their intervals in seconds. */
export const SYNC_FREQUENCIES: Record<string, number> = {
  '1min': 60,
  '5min': 300,
  '15min': 900,
  '30min': 1800,
  '1hour': 3600,
  '6hour': 21_600,
  '12hour': 43_200,
  '24hour': 86_400,
  '7day': 604_800,
  '30day': 2_592_000,
}
export const DEFAULT_SYNC_FREQUENCY = '24hour'

/** Insight kinds whose single breakdown may be a run variable. */
export const BREAKDOWN_VARIABLE_KINDS = new Set(['TrendsQuery', 'FunnelsQuery', 'RetentionQuery'])

export type MaterializationPlan =
  | { kind: 'hogql'; hogql: string; variable: string | null }
  | { kind: 'insight'; breakdown: string | null }

export type Materializability = { ok: true; plan: MaterializationPlan } | { ok: false; reason: string }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The breakdown properties of an insight node (`breakdownFilter.breakdown` or `.breakdowns[]`). */
export function breakdownsOf(node: Record<string, unknown>): string[] {
  const filter = isObject(node.breakdownFilter) ? node.breakdownFilter : {}
  const out: string[] = []
  if (Array.isArray(filter.breakdowns)) {
    for (const b of filter.breakdowns) if (isObject(b) && b.property !== undefined) out.push(String(b.property))
  }
  if (typeof filter.breakdown === 'string' || typeof filter.breakdown === 'number') out.push(String(filter.breakdown))
  else if (Array.isArray(filter.breakdown)) for (const b of filter.breakdown) out.push(String(b))
  return out
}

/** `{variables.x}` placeholders anywhere in a tree. */
function variablesIn(node: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(node)) for (const n of node) variablesIn(n, out)
  else if (isObject(node)) {
    if (node.kind === 'Placeholder') {
      const chain = node.chain as string[]
      if (chain[0] === 'variables' && chain.length === 2) out.add(chain[1])
      else if (chain[0] === 'variables') out.add(chain.slice(1).join('.'))
    } else for (const v of Object.values(node)) if (v && typeof v === 'object') variablesIn(v, out)
  }
  return out
}

const isVariable = (e: ast.Expr, name: string) =>
  e.kind === 'Placeholder' && e.chain.length === 2 && e.chain[0] === 'variables' && e.chain[1] === name

function hasAggregate(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(hasAggregate)
  if (!isObject(node)) return false
  if (node.kind === 'Select' || node.kind === 'SelectUnion') return false
  if (node.kind === 'Call' && findFunction(String(node.name))?.aggregate) return true
  return Object.values(node).some((v) => v && typeof v === 'object' && hasAggregate(v))
}

/**
 * HogQL with `{variables.x}` compared for equality in the top-level WHERE: the comparison leaves the WHERE, its
 * other side becomes the last selected column (named after the variable) and the last GROUP BY key, and LIMIT and
 * OFFSET go (they apply when the table is read).
 */
export function planHogQL(query: string): Materializability {
  if (query.trim() === '') return { ok: false, reason: 'Query is empty or invalid.' }
  let tree: ast.AnySelect
  try {
    tree = parseSelect(query)
  } catch {
    return { ok: false, reason: 'Query is empty or invalid.' }
  }
  const variables = [...variablesIn(tree, new Set())]
  if (variables.length === 0) return { ok: true, plan: { kind: 'hogql', hogql: query, variable: null } }
  const unsupported = (why: string): Materializability => ({ ok: false, reason: `Variables not supported: ${why}` })
  if (variables.length > 1) return unsupported('only one variable can be materialized.')
  if (tree.kind !== 'Select') return unsupported('the query must be a single SELECT.')
  const name = variables[0]
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return unsupported(`'${name}' is not a valid column name.`)
  const where = tree.where
  const conjuncts = !where ? [] : where.kind === 'And' ? where.exprs : [where]
  let column: ast.Expr | undefined
  const rest: ast.Expr[] = []
  for (const c of conjuncts) {
    if (column === undefined && c.kind === 'CompareOperation' && c.op === '==') {
      if (isVariable(c.right, name) && variablesIn(c.left, new Set()).size === 0) {
        column = c.left
        continue
      }
      if (isVariable(c.left, name) && variablesIn(c.right, new Set()).size === 0) {
        column = c.right
        continue
      }
    }
    rest.push(c)
  }
  if (!column || variablesIn(rest, new Set()).size > 0 || variablesIn({ ...tree, where: undefined }, new Set()).size) {
    return unsupported(`'${name}' must be used once, in a simple equality in WHERE.`)
  }
  const select: ast.SelectNode = {
    ...tree,
    select: [...tree.select, { kind: 'Alias', expr: column, alias: name }],
    where: rest.length === 0 ? undefined : rest.length === 1 ? rest[0] : { kind: 'And', exprs: rest },
    limit: undefined,
    offset: undefined,
  }
  if (tree.groupBy && tree.groupBy.length > 0) select.groupBy = [...tree.groupBy, column]
  else if (hasAggregate(tree.select) || tree.having) select.groupBy = [column]
  return { ok: true, plan: { kind: 'hogql', hogql: printHogQL(select), variable: name } }
}

/** PostHog's `can_materialize` for a stored (upgraded) query. */
export function materializability(query: Record<string, unknown>): Materializability {
  const kind = String(query.kind ?? '')
  if (!MATERIALIZABLE_KINDS.includes(kind)) {
    return {
      ok: false,
      reason: `Query type '${kind}' cannot be materialized. Supported types: ${MATERIALIZABLE_KINDS.join(', ')}`,
    }
  }
  if (kind === 'HogQLQuery') {
    if (typeof query.query !== 'string') return { ok: false, reason: 'Query is empty or invalid.' }
    return planHogQL(query.query)
  }
  const breakdowns = breakdownsOf(query)
  if (breakdowns.length > 1) return { ok: false, reason: 'Multiple breakdowns not supported for materialization' }
  return {
    ok: true,
    plan: { kind: 'insight', breakdown: BREAKDOWN_VARIABLE_KINDS.has(kind) ? (breakdowns[0] ?? null) : null },
  }
}

/** Strings a materialized insight row is found by: its breakdown value(s), as text. */
export function breakdownKeys(item: unknown): string[] {
  const keys = new Set<string>()
  const add = (value: unknown) => {
    if (Array.isArray(value)) for (const v of value) add(v)
    else if (value !== null && value !== undefined) keys.add(String(value))
  }
  const items = Array.isArray(item) ? item : [item]
  for (const i of items) if (isObject(i)) add(i.breakdown_value)
  return [...keys]
}
