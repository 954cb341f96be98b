/**
 * SessionsQuery (hogql.md §4.9; PostHog's `SessionsQueryRunner`): EventsQuery's shape over the `sessions` table —
 * `select` expressions (a `*` cell becomes an object of the session's main fields), `where`, property filters on
 * session fields and on the session's person, sessions containing a given event or action, one person's sessions,
 * bounds on the session start (the last 24 hours by default), ordering and pagination.
 */

import { findFunction, parseExpr } from '../../hogql/index.js'
import { ValidationError } from '../../http/errors.js'
import { stripComment } from '../events-query.js'
import { dateToHogQL, literal, propertiesToHogQL } from '../filters.js'
import { toZonedIso } from '../format.js'
import { type InsightDeps, loadInsightContext } from '../insights/context.js'
import type { NodeRunner } from '../runner.js'

export const SESSIONS_DEFAULT_LIMIT = 100
export const SESSIONS_MAX_LIMIT = 50_000

/** The fields a `*` cell holds, in PostHog's order. */
export const SESSION_STAR_FIELDS = [
  'session_id',
  'distinct_id',
  '$start_timestamp',
  '$end_timestamp',
  '$session_duration',
  '$entry_current_url',
  '$end_current_url',
  '$pageview_count',
  '$autocapture_count',
  '$screen_count',
  '$is_bounce',
]

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function containsAggregate(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(containsAggregate)
  if (!node || typeof node !== 'object') return false
  const obj = node as Record<string, unknown>
  if (obj.kind === 'Select' || obj.kind === 'SelectUnion') return false
  if (obj.kind === 'Call' && typeof obj.name === 'string' && findFunction(obj.name)?.aggregate) return true
  return Object.values(obj).some((v) => v && typeof v === 'object' && containsAggregate(v))
}

function isAggregate(expr: string): boolean {
  try {
    return containsAggregate(parseExpr(expr))
  } catch {
    return false
  }
}

function intOf(value: unknown, fallback: number, min: number, max: number, attr: string): number {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new ValidationError(`${attr} must be an integer of at least ${min}.`, attr)
  }
  return Math.min(value, max)
}

const flat = (filters: unknown): unknown[] =>
  filters === undefined || filters === null ? [] : Array.isArray(filters) ? filters : [filters]

/** Filters on the session (`session`), its person (`person`), or any of its events (the rest). */
function splitFilters(filters: unknown[]): { session: unknown[]; person: unknown[]; events: unknown[] } {
  const out = { session: [] as unknown[], person: [] as unknown[], events: [] as unknown[] }
  for (const f of filters) {
    const type = isObject(f) ? (f.type ?? 'event') : 'group'
    if (type === 'cohort' || type === 'static-cohort' || type === 'precalculated-cohort') continue
    if (type === 'person') out.person.push(f)
    else if (type === 'session' || type === 'hogql') out.session.push(f)
    else if (isObject(f) && (f.type === 'AND' || f.type === 'OR')) out.session.push(f)
    else out.events.push(f)
  }
  return out
}

export interface SessionsPlan {
  hogql: string
  columns: string[]
  /** index of the `*` column, whose cells become objects */
  star?: number
  limit: number
  offset: number
}

const instant = (d: Date) => `toDateTime(${literal(d.toISOString().replace('Z', '+00:00'))})`

/** The query of a node; `now` (the service's clock) sets the default bounds: the last 24 hours. */
export function buildSessionsQuery(
  node: Record<string, unknown>,
  testAccountFilters: unknown[],
  now: Date,
): SessionsPlan {
  const rawSelect = node.select ?? []
  if (!Array.isArray(rawSelect) || !rawSelect.every((s) => typeof s === 'string')) {
    throw new ValidationError('select must be a list of HogQL expressions.', 'select')
  }
  const select = rawSelect.length === 0 ? ['*'] : (rawSelect as string[])
  const limit = intOf(node.limit, SESSIONS_DEFAULT_LIMIT, 1, SESSIONS_MAX_LIMIT, 'limit')
  const offset = intOf(node.offset, 0, 0, Number.MAX_SAFE_INTEGER, 'offset')

  const exprs: string[] = []
  const groupBy: string[] = []
  const aggregates: string[] = []
  let star: number | undefined
  select.forEach((item, i) => {
    const expr = stripComment(item)
    if (expr === '*') {
      if (star !== undefined) throw new ValidationError('"*" may appear once.', 'select')
      star = i
      exprs.push(`tuple(${SESSION_STAR_FIELDS.map((f) => `session.${f}`).join(', ')})`)
      groupBy.push(exprs[exprs.length - 1])
      return
    }
    exprs.push(expr)
    if (isAggregate(expr)) aggregates.push(expr)
    else groupBy.push(expr)
  })

  const where: string[] = []
  const having: string[] = []
  const eventConditions: string[] = []
  const attrOf = (attr: string, fn: () => string | undefined) => {
    try {
      return fn()
    } catch (error) {
      if (error instanceof ValidationError) throw new ValidationError(error.detail, attr, error.code)
      throw error
    }
  }
  const filters = [
    { attr: 'properties', list: flat(node.properties) },
    { attr: 'fixedProperties', list: flat(node.fixedProperties) },
    { attr: 'filterTestAccounts', list: node.filterTestAccounts === true ? testAccountFilters : [] },
  ]
  let needsPerson = select.some((s) => /\bperson\./.test(stripComment(s)))
  const sessionsWithEvents: string[] = []
  for (const { attr, list } of filters) {
    const parts = splitFilters(list)
    const onSession = attrOf(attr, () => propertiesToHogQL(parts.session))
    if (onSession) where.push(onSession)
    const onPerson = attrOf(attr, () => propertiesToHogQL(parts.person))
    if (onPerson) {
      where.push(onPerson)
      needsPerson = true
    }
    const onEvents = attrOf(attr, () => propertiesToHogQL(parts.events))
    if (onEvents) sessionsWithEvents.push(onEvents)
  }
  for (const clause of flat(node.where)) {
    if (typeof clause !== 'string') throw new ValidationError('where must be a list of HogQL expressions.', 'where')
    if (clause.trim() === '') continue
    ;(isAggregate(clause) ? having : where).push(clause)
  }
  if (typeof node.personId === 'string' && node.personId !== '') {
    where.push(
      `session.distinct_id IN (SELECT distinct_id FROM person_distinct_ids WHERE person_id = ${literal(node.personId)})`,
    )
  }

  const before = dateToHogQL(node.before, 'before') ?? instant(new Date(now.getTime() + 5_000))
  const after =
    node.after === 'all'
      ? undefined
      : (dateToHogQL(node.after, 'after') ?? instant(new Date(now.getTime() - 24 * 3_600_000)))
  // sessions with a matching event (of the event or action asked for, with the event filters)
  if (typeof node.event === 'string' && node.event !== '') eventConditions.push(`event = ${literal(node.event)}`)
  else if (node.actionId !== undefined && node.actionId !== null) {
    if (typeof node.actionId !== 'number' || !Number.isInteger(node.actionId)) {
      throw new ValidationError('actionId must be an action id.', 'actionId')
    }
    eventConditions.push(`matchesAction(${node.actionId})`)
  }
  const eventProperties = attrOf('eventProperties', () => propertiesToHogQL(node.eventProperties))
  if (eventProperties) eventConditions.push(eventProperties)
  for (const conditions of [eventConditions, ...sessionsWithEvents.map((c) => [c])]) {
    if (conditions.length === 0) continue
    const bounds = [after ? `timestamp > ${after}` : undefined, `timestamp < ${before}`].filter(Boolean)
    where.push(
      `session.session_id IN (SELECT DISTINCT $session_id FROM events WHERE ${[...conditions, ...bounds]
        .map((c) => `(${c})`)
        .join(' AND ')})`,
    )
  }
  where.push(`session.$start_timestamp < ${before}`)
  if (after) where.push(`session.$start_timestamp > ${after}`)

  const hasAggregates = aggregates.length > 0
  let orderBy = flat(node.orderBy).filter((o): o is string => typeof o === 'string' && o.trim() !== '')
  if (orderBy.length === 0) {
    const plain = select.map(stripComment)
    if (plain.includes('count()')) orderBy = ['count() DESC']
    else if (hasAggregates) orderBy = [`${aggregates[0]} DESC`]
    else if (plain.includes('$start_timestamp') || star !== undefined) orderBy = ['session.$start_timestamp DESC']
    else orderBy = [`${exprs[0]} ASC`]
  }

  const from = needsPerson
    ? 'sessions AS session LEFT JOIN person_distinct_ids AS __pdi ON session.distinct_id = __pdi.distinct_id ' +
      'LEFT JOIN persons AS person ON __pdi.person_id = person.id'
    : 'sessions AS session'
  const parts = [`SELECT ${exprs.join(', ')}`, `FROM ${from}`]
  if (where.length > 0) parts.push(`WHERE ${where.map((w) => `(${w})`).join(' AND ')}`)
  if (hasAggregates && groupBy.length > 0) parts.push(`GROUP BY ${groupBy.join(', ')}`)
  if (having.length > 0) parts.push(`HAVING ${having.map((h) => `(${h})`).join(' AND ')}`)
  parts.push(`ORDER BY ${orderBy.map(stripComment).join(', ')}`)
  parts.push(`LIMIT ${limit + 1}`)
  if (offset > 0) parts.push(`OFFSET ${offset}`)
  return { hogql: parts.join(' '), columns: [...select], star, limit, offset }
}

export function createSessionsRunner(deps: InsightDeps): NodeRunner {
  return async (node, ctx, run) => {
    const started = performance.now()
    const insight = await loadInsightContext(ctx, deps)
    if (typeof node.actionId === 'number' && !insight.actions.has(node.actionId)) {
      throw new ValidationError(`Action ${node.actionId} does not exist.`, 'actionId', 'does_not_exist')
    }
    const plan = buildSessionsQuery(node, insight.testAccountFilters, insight.now)
    const executed = await run(plan.hogql, ctx)
    const hasMore = executed.rows.length > plan.limit
    const rows = executed.rows.slice(0, plan.limit)
    if (plan.star !== undefined) {
      const at = plan.star
      for (const row of rows) {
        const cell = Array.isArray(row[at]) ? (row[at] as unknown[]) : []
        // the tuple's datetimes come as UTC text: shown in the project's timezone like top-level datetime cells
        row[at] = Object.fromEntries(
          SESSION_STAR_FIELDS.map((f, i) => {
            const value = cell[i] ?? null
            return [
              f,
              typeof value === 'string' && f.endsWith('_timestamp') ? toZonedIso(value, ctx.team.timezone) : value,
            ]
          }),
        )
      }
    }
    ctx.stats.resultRows += rows.length
    return {
      results: rows,
      columns: plan.columns,
      types: executed.types,
      hogql: executed.hogql,
      hasMore,
      limit: plan.limit,
      offset: plan.offset,
      modifiers: isObject(node.modifiers) ? node.modifiers : {},
      timings: [{ k: '.', t: (performance.now() - started) / 1000 }],
      error: null,
    }
  }
}
