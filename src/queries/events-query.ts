/**
 * EventsQuery (hogql.md §4.1) → one HogQL SELECT over events, and the post-processing that turns the hidden
 * columns of `*`, `person` and `person_display_name` back into objects. Pure.
 */
import { findFunction, parseExpr } from '../hogql/index.js'
import { ValidationError } from '../http/errors.js'
import { dateToHogQL, literal, propertiesToHogQL } from './filters.js'

export const EVENTS_DEFAULT_LIMIT = 100
export const EVENTS_MAX_LIMIT = 50_000

/** The event columns behind a `*` cell, in the order its object lists them. */
const STAR_COLUMNS = ['uuid', 'event', 'properties', 'timestamp', 'distinct_id', 'elements_chain', 'created_at']

export interface EventsQueryNode {
  kind: 'EventsQuery'
  select: string[]
  where?: string[]
  orderBy?: string[]
  properties?: unknown
  fixedProperties?: unknown
  event?: string | null
  events?: string[]
  personId?: string
  after?: string
  before?: string
  limit?: number
  offset?: number
  [key: string]: unknown
}

/** What each requested column is made of in the compiled SELECT. */
export type ColumnPlan =
  | { kind: 'expr'; index: number }
  | { kind: 'star'; indexes: number[] }
  | { kind: 'person' | 'person_display_name'; index: number }

export interface EventsQueryPlan {
  hogql: string
  columns: string[]
  plan: ColumnPlan[]
  limit: number
  offset: number
}

/** `properties.$browser -- Browser` → `properties.$browser` (the comment only labels the column). */
export function stripComment(item: string): string {
  const at = item.search(/\s--(\s|$)/)
  return (at >= 0 ? item.slice(0, at) : item).trim()
}

function containsAggregate(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(containsAggregate)
  if (!node || typeof node !== 'object') return false
  const obj = node as Record<string, unknown>
  // A subquery's aggregates are its own.
  if (obj.kind === 'Select' || obj.kind === 'SelectUnion') return false
  if (obj.kind === 'Call' && typeof obj.name === 'string' && findFunction(obj.name)?.aggregate) return true
  return Object.values(obj).some((v) => v && typeof v === 'object' && containsAggregate(v))
}

function isAggregate(expr: string): boolean {
  try {
    return containsAggregate(parseExpr(expr))
  } catch {
    // Let the compiler report the syntax error with the whole query in view.
    return false
  }
}

function clampInt(value: unknown, fallback: number, min: number, max: number, attr: string): number {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new ValidationError(`${attr} must be an integer of at least ${min}.`, attr)
  }
  return Math.min(value, max)
}

export function buildEventsQuery(node: EventsQueryNode): EventsQueryPlan {
  if (!Array.isArray(node.select) || node.select.length === 0 || !node.select.every((s) => typeof s === 'string')) {
    throw new ValidationError('select must be a non-empty list of HogQL expressions.', 'select')
  }
  const limit = clampInt(node.limit, EVENTS_DEFAULT_LIMIT, 1, EVENTS_MAX_LIMIT, 'limit')
  const offset = clampInt(node.offset, 0, 0, Number.MAX_SAFE_INTEGER, 'offset')

  const selectExprs: string[] = []
  const plan: ColumnPlan[] = []
  const groupBy: string[] = []
  const aggregates: string[] = []
  const push = (expr: string) => selectExprs.push(expr) - 1
  for (const item of node.select) {
    const expr = stripComment(item)
    if (expr === '*') plan.push({ kind: 'star', indexes: STAR_COLUMNS.map((c) => push(c)) })
    else if (expr === 'person' || expr === 'person_display_name') plan.push({ kind: expr, index: push('distinct_id') })
    else {
      plan.push({ kind: 'expr', index: push(expr) })
      if (isAggregate(expr)) aggregates.push(expr)
      else groupBy.push(expr)
    }
  }
  const hasAggregates = aggregates.length > 0
  if (hasAggregates && plan.some((p) => p.kind !== 'expr')) {
    throw new ValidationError('"*" and person columns cannot be combined with aggregations.', 'select')
  }

  const where: string[] = []
  const having: string[] = []
  const before = dateToHogQL(node.before, 'before') ?? (node.before ? undefined : 'now() + INTERVAL 5 SECOND')
  const after = dateToHogQL(node.after ?? '-24h', 'after')
  if (before) where.push(`timestamp < ${before}`)
  if (after) where.push(`timestamp > ${after}`)
  if (typeof node.event === 'string' && node.event !== '') where.push(`event = ${literal(node.event)}`)
  if (Array.isArray(node.events) && node.events.length > 0)
    where.push(`event IN (${node.events.map(literal).join(', ')})`)
  if (typeof node.personId === 'string' && node.personId !== '') where.push(`person_id = ${literal(node.personId)}`)
  for (const filters of [node.properties, node.fixedProperties]) {
    const expr = propertiesToHogQL(filters)
    if (expr) where.push(expr)
  }
  for (const clause of node.where ?? []) {
    if (typeof clause !== 'string') throw new ValidationError('where must be a list of HogQL expressions.', 'where')
    if (clause.trim() === '') continue
    ;(isAggregate(clause) ? having : where).push(clause)
  }

  let orderBy = (node.orderBy ?? []).filter((o) => typeof o === 'string' && o.trim() !== '')
  if (orderBy.length === 0) {
    const exprs = plan.filter((p) => p.kind === 'expr').map((p) => selectExprs[(p as { index: number }).index])
    if (exprs.includes('count()')) orderBy = ['count() DESC']
    else if (hasAggregates) orderBy = [`${aggregates[0]} DESC`]
    else if (exprs.includes('timestamp') || plan.some((p) => p.kind === 'star')) orderBy = ['timestamp DESC']
    else orderBy = [`${selectExprs[0]} ASC`]
  }

  const parts = [`SELECT ${selectExprs.join(', ')}`, 'FROM events']
  if (where.length > 0) parts.push(`WHERE ${where.map((w) => `(${w})`).join(' AND ')}`)
  if (hasAggregates && groupBy.length > 0) parts.push(`GROUP BY ${groupBy.join(', ')}`)
  if (having.length > 0) parts.push(`HAVING ${having.map((h) => `(${h})`).join(' AND ')}`)
  parts.push(`ORDER BY ${orderBy.join(', ')}`)
  // One row more than asked for tells whether there is a next page.
  parts.push(`LIMIT ${limit + 1}`)
  if (offset > 0) parts.push(`OFFSET ${offset}`)
  return { hogql: parts.join(' '), columns: [...node.select], plan, limit, offset }
}

export interface PersonInfo {
  id: string
  created_at: string
  properties: Record<string, unknown>
}

/** The person properties PostHog shows as a person's name when the project has not chosen its own. */
export const DEFAULT_DISPLAY_NAME_PROPERTIES = [
  'email',
  'Email',
  '$email',
  'name',
  'Name',
  'username',
  'Username',
  'UserName',
]

/**
 * An instant as Django's JSON encoder writes it: UTC as `Z`, milliseconds only when there are some
 * (`2020-01-10T12:00:00Z`, `2020-01-10T12:00:00.250Z`).
 */
export function djangoDateTime(text: string): string {
  const at = new Date(text)
  return Number.isNaN(at.getTime()) ? text : at.toISOString().replace(/\.000Z$/, 'Z')
}

/**
 * Engine rows → EventsQuery result rows: `*` becomes the event object, person columns become person objects
 * (looked up by distinct id through `persons`); the types list gets one entry per requested column.
 */
export function shapeEventsRows(
  plan: ColumnPlan[],
  rows: unknown[][],
  types: string[],
  teamId: number,
  persons: Map<string, PersonInfo | undefined>,
  displayNameProperties: readonly string[] = DEFAULT_DISPLAY_NAME_PROPERTIES,
): { results: unknown[][]; types: string[] } {
  const results = rows.map((row) =>
    plan.map((p) => {
      if (p.kind === 'expr') return row[p.index]
      if (p.kind === 'star') {
        const [uuid, event, properties, timestamp, distinctId, elementsChain, createdAt] = p.indexes.map((i) => row[i])
        return {
          uuid,
          event,
          properties: parseProperties(properties),
          timestamp,
          team_id: teamId,
          distinct_id: distinctId,
          elements_chain: elementsChain,
          created_at: createdAt,
          person_mode: 'full',
        }
      }
      const distinctId = String(row[p.index])
      const person = persons.get(distinctId)
      if (p.kind === 'person') {
        return person
          ? {
              uuid: person.id,
              created_at: djangoDateTime(person.created_at),
              properties: person.properties,
              distinct_id: distinctId,
            }
          : { distinct_id: distinctId }
      }
      const named = displayNameProperties
        .map((k) => person?.properties[k])
        .find((v) => typeof v === 'string' && v !== '')
      return { display_name: named ?? distinctId, id: person?.id ?? null, distinct_id: distinctId }
    }),
  )
  const outTypes = plan.map((p) => {
    if (p.kind === 'expr') return types[p.index]
    if (p.kind === 'star') return `Tuple(${p.indexes.map((i) => types[i]).join(', ')})`
    return 'Tuple(String, String, String)'
  })
  return { results, types: outTypes }
}

function parseProperties(value: unknown): unknown {
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value)
  } catch {
    return {}
  }
}

/** The distinct ids whose persons the result needs. */
export function personDistinctIds(plan: ColumnPlan[], rows: unknown[][]): string[] {
  const ids = new Set<string>()
  for (const p of plan) {
    if (p.kind !== 'person' && p.kind !== 'person_display_name') continue
    for (const row of rows) ids.add(String(row[p.index]))
  }
  return [...ids]
}
