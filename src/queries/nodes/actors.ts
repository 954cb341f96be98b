/**
 * ActorsQuery (hogql.md §4.8): persons — or the persons or groups behind a data point of an insight, through an
 * `InsightActorsQuery` / `FunnelsActorsQuery` / `StickinessActorsQuery` source — with PostHog's columns (`person` /
 * `actor` / `group` objects, `id`, `created_at`, `event_count`, `matched_recordings`, any HogQL over the person or
 * group), search, person filters, order, limit and offset. The actor sources run on their own too (their rows, as
 * a HogQL response), and `InsightActorsQueryOptions` lists the coordinates a data point may take.
 */
import { ValidationError } from '../../http/errors.js'
import { literal, propertiesToHogQL } from '../filters.js'
import { type ActorSource, actorSourceOf } from '../insights/actor-sources.js'
import { BREAKDOWN_NULL, BREAKDOWN_OTHER } from '../insights/breakdown.js'
import { type InsightContext, type InsightDeps, loadInsightContext } from '../insights/context.js'
import { bucketKey, bucketLabel, intervalOf, resolveDateRange } from '../insights/date-range.js'
import { type ActionInfo, seriesLabel, seriesOf } from '../insights/series.js'
import type { HogQLExecutor, NodeRunner, QueryNode, RunContext } from '../runner.js'
import { LIFECYCLE_STATUSES } from './lifecycle.js'
import { createTrendsRunner } from './trends.js'

const DEFAULT_LIMIT = 100
const MAX_LIMIT = 10_000
const SOURCE_KINDS = ['InsightActorsQuery', 'FunnelsActorsQuery', 'StickinessActorsQuery']
/** Aggregate functions: a select item using one makes the query grouped by the others. */
const AGGREGATE =
  /\b(count|countIf|sum|sumIf|avg|avgIf|min|max|any|uniq|uniqExact|groupArray|groupUniqArray|quantile|median|argMin|argMax)\s*\(/i

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

interface Strategy {
  /** the column that is expanded to the actor object */
  field: 'person' | 'group'
  /** the table and its id column */
  table: string
  id: string
  groupIndex?: number
}

function stringList(value: unknown, attr: string): string[] | undefined {
  if (value === undefined || value === null) return undefined
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.trim() === '')) {
    throw new ValidationError('Must be a list of HogQL expressions.', attr)
  }
  return value as string[]
}

function limitOf(value: unknown, attr: string, fallback: number, max: number): number {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new ValidationError('Must be a non-negative integer.', attr)
  }
  return Math.min(value, max)
}

function withAttr<T>(attr: string, fn: () => T): T {
  try {
    return fn()
  } catch (error) {
    if (error instanceof ValidationError) throw new ValidationError(error.detail, attr, error.code)
    throw error
  }
}

/** The objects of the actors on a page: persons with their distinct ids, or groups. */
async function actorObjects(
  strategy: Strategy,
  ids: string[],
  ctx: RunContext,
  run: HogQLExecutor,
): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>()
  if (ids.length === 0) return found
  const parse = (text: unknown) => {
    try {
      const parsed = typeof text === 'string' ? JSON.parse(text) : text
      return isObject(parsed) ? parsed : {}
    } catch {
      return {}
    }
  }
  if (strategy.field === 'person') {
    const executed = await run(
      'SELECT persons.id, persons.properties, persons.is_identified, persons.created_at, pdi.distinct_ids ' +
        'FROM persons LEFT JOIN (SELECT person_id, arraySort(groupArray(distinct_id)) AS distinct_ids ' +
        'FROM person_distinct_ids WHERE person_id IN {ids} GROUP BY person_id) AS pdi ON pdi.person_id = persons.id ' +
        `WHERE persons.id IN {ids} LIMIT ${MAX_LIMIT + 1}`,
      ctx,
      { placeholders: { ids } },
    )
    for (const [id, properties, isIdentified, createdAt, distinctIds] of executed.rows) {
      found.set(String(id), {
        id: String(id),
        properties: parse(properties),
        is_identified: isIdentified === true || isIdentified === 1,
        created_at: createdAt,
        distinct_ids: Array.isArray(distinctIds) ? distinctIds : [],
      })
    }
  } else {
    const executed = await run(
      `SELECT key, index, properties, created_at FROM groups WHERE index = ${strategy.groupIndex} AND key IN {ids} LIMIT ${MAX_LIMIT + 1}`,
      ctx,
      { placeholders: { ids } },
    )
    for (const [key, index, properties, createdAt] of executed.rows) {
      const groupProperties = parse(properties)
      found.set(String(key), {
        id: String(key),
        type: 'group',
        properties: groupProperties,
        group_key: String(key),
        group_type_index: Number(index),
        created_at: createdAt,
        group_properties: groupProperties,
      })
    }
  }
  return found
}

/** Person (or group) filters of the actors query itself: properties, fixed properties, search. */
function actorConditions(node: Record<string, unknown>, strategy: Strategy): string[] {
  const where: string[] = []
  if (strategy.field === 'person') {
    for (const key of ['properties', 'fixedProperties']) {
      const condition = withAttr(key, () => propertiesToHogQL(node[key], 'persons'))
      if (condition) where.push(condition)
    }
  } else if (
    node.properties !== undefined &&
    node.properties !== null &&
    (!Array.isArray(node.properties) || node.properties.length > 0)
  ) {
    throw new ValidationError('Group actors are not filtered by person properties.', 'properties')
  }
  if (node.search !== undefined && node.search !== null && typeof node.search !== 'string') {
    throw new ValidationError('search is a string.', 'search')
  }
  const search = typeof node.search === 'string' ? node.search.trim() : ''
  if (search !== '') {
    const pattern = literal(`%${search}%`)
    where.push(
      strategy.field === 'person'
        ? `toString(properties.email) ILIKE ${pattern} OR toString(properties.name) ILIKE ${pattern} OR ` +
            `toString(id) ILIKE ${pattern} OR id IN (SELECT person_id FROM person_distinct_ids WHERE distinct_id ILIKE ${pattern})`
        : `toString(properties.name) ILIKE ${pattern} OR toString(key) ILIKE ${pattern}`,
    )
  }
  return where
}

export function createActorsRunners(deps: InsightDeps): Record<string, NodeRunner> {
  const trends = createTrendsRunner(deps)

  async function sourceOf(
    node: Record<string, unknown>,
    insight: InsightContext,
    ctx: RunContext,
    run: HogQLExecutor,
  ): Promise<ActorSource | undefined> {
    const source = node.source
    if (source === undefined || source === null) return undefined
    if (!isObject(source) || !SOURCE_KINDS.includes(source.kind as string)) {
      throw new ValidationError(
        `An actors query lists the actors of ${SOURCE_KINDS.join(', ')}.`,
        'source__kind',
        'invalid_choice',
      )
    }
    return actorSourceOf(source, insight, ctx, run, trends)
  }

  const actorsQuery: NodeRunner = async (node, ctx, run) => {
    const started = performance.now()
    const insight = await loadInsightContext(ctx, deps)
    const source = await sourceOf(node, insight, ctx, run)
    const strategy: Strategy =
      source?.groupIndex !== undefined
        ? { field: 'group', table: 'groups', id: 'key', groupIndex: source.groupIndex }
        : { field: 'person', table: 'persons', id: 'id' }
    const select = stringList(node.select, 'select') ?? [
      ...(strategy.field === 'person' ? ['person', 'id', 'person.$delete'] : ['group']),
      ...(strategy.field === 'person' && source?.insightKind === 'TrendsQuery' ? ['event_distinct_ids'] : []),
    ]
    const orderBy = stringList(node.orderBy, 'orderBy')
    const limit = limitOf(node.limit, 'limit', DEFAULT_LIMIT, MAX_LIMIT)
    const offset = limitOf(node.offset, 'offset', 0, Number.MAX_SAFE_INTEGER)
    const idColumn = `${strategy.table}.${strategy.id}`
    const isActor = (expr: string) => expr === strategy.field || expr === 'actor' || expr === 'person'
    const columns = select.map((expr) => {
      if (expr === 'person.$delete') return '1'
      if (isActor(expr)) return idColumn
      if (expr === 'matched_recordings') {
        if (!source) throw new ValidationError('matched_recordings needs an insight source.', 'select')
        return 'source.matching_events'
      }
      return expr
    })
    const aggregations = columns.filter((c) => AGGREGATE.test(c))
    const groupBy = aggregations.length > 0 ? columns.filter((c) => !AGGREGATE.test(c) && c !== '1') : []
    const where = actorConditions(node, strategy)
    if (strategy.field === 'group') where.push(`groups.index = ${strategy.groupIndex}`)
    let order: string[]
    if (orderBy && orderBy.length > 0) {
      const byActor = /^(person|group|actor)( (ASC|DESC))?$/i.exec(orderBy[0])
      if (orderBy.length === 1 && byActor) {
        const property = strategy.field === 'person' ? 'email' : 'name'
        order = [`toString(properties.${property}) ${byActor[3]?.toUpperCase() === 'DESC' ? 'DESC' : 'ASC'}`]
      } else order = orderBy
    } else if (select.includes('count()')) order = ['count() DESC']
    else if (aggregations.length > 0) order = [`${aggregations[0]} DESC`]
    else if (select.includes('created_at')) order = ['created_at DESC']
    else order = [`${columns[0]} ASC`]
    const from = source
      ? `(${source.hogql}) AS source INNER JOIN ${strategy.table} ON ${idColumn} = source.actor_id`
      : strategy.table
    const hogql =
      `SELECT ${columns.join(', ')} FROM ${from}` +
      (where.length > 0 ? ` WHERE ${where.map((w) => `(${w})`).join(' AND ')}` : '') +
      (groupBy.length > 0 ? ` GROUP BY ${groupBy.join(', ')}` : '') +
      ` ORDER BY ${order.join(', ')} LIMIT ${limit + 1} OFFSET ${offset}`
    const executed = await run(hogql, ctx, { placeholders: source?.placeholders })
    const hasMore = executed.rows.length > limit
    const rows = executed.rows.slice(0, limit).map((r) => [...r])
    ctx.stats.resultRows += rows.length

    let missing: number | undefined
    const actorIndex = select.findIndex(isActor)
    if (actorIndex >= 0) {
      const ids = [...new Set(rows.map((r) => String(r[actorIndex])))]
      const objects = await actorObjects(strategy, ids, ctx, run)
      missing = rows.length - objects.size
      for (const row of rows) {
        const id = String(row[actorIndex])
        row[actorIndex] = objects.get(id) ?? { id }
      }
    }
    const recordings = select.indexOf('matched_recordings')
    // Burrow stores no session recordings: no matched event is in a recorded session
    if (recordings >= 0) for (const row of rows) row[recordings] = []
    return {
      results: rows,
      columns: select,
      types: executed.types,
      hogql: executed.hogql,
      hasMore,
      limit,
      offset,
      missing_actors_count: missing ?? null,
      modifiers: isObject(node.modifiers) ? node.modifiers : {},
      timings: [{ k: '.', t: (performance.now() - started) / 1000 }],
      error: null,
    }
  }

  /** An actors source on its own: its rows (`actor_id`, …) as a HogQL response. */
  const sourceQuery: NodeRunner = async (node, ctx, run) => {
    const started = performance.now()
    const insight = await loadInsightContext(ctx, deps)
    const source = await actorSourceOf(node, insight, ctx, run, trends)
    const executed = await run(`SELECT * FROM (${source.hogql}) LIMIT ${MAX_LIMIT}`, ctx, {
      placeholders: source.placeholders,
    })
    ctx.stats.resultRows += executed.rows.length
    return {
      results: executed.rows,
      columns: executed.columns,
      types: executed.columns.map((c, i) => [c, executed.types[i]]),
      hogql: executed.hogql,
      modifiers: isObject(node.modifiers) ? node.modifiers : {},
      timings: [{ k: '.', t: (performance.now() - started) / 1000 }],
      error: null,
    }
  }

  const options: NodeRunner = async (node, ctx, run) => {
    const insight = await loadInsightContext(ctx, deps)
    const query = isObject(node.source) ? node.source : undefined
    if (!query || !SOURCE_KINDS.includes(query.kind as string)) {
      throw new ValidationError('The source is an InsightActorsQuery.', 'source__kind', 'invalid_choice')
    }
    return { ...(await optionsOf(query, insight, ctx, run, trends)), error: null }
  }

  return {
    ActorsQuery: actorsQuery,
    InsightActorsQuery: sourceQuery,
    FunnelsActorsQuery: sourceQuery,
    StickinessActorsQuery: sourceQuery,
    InsightActorsQueryOptions: options,
  }
}

const titleCase = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)

/** The coordinates a data point of the insight may take, each as `{label, value}`. */
async function optionsOf(
  query: Record<string, unknown>,
  insight: InsightContext,
  ctx: RunContext,
  run: HogQLExecutor,
  trends: NodeRunner,
): Promise<Record<string, unknown>> {
  const source = isObject(query.source) ? query.source : {}
  const kind = source.kind
  if (kind === 'TrendsQuery') {
    const series = withAttr('source__series', () => seriesOf(source.series))
    const interval = intervalOf(source.interval, 'source__interval')
    const range = resolveDateRange(
      isObject(source.dateRange) ? source.dateRange : undefined,
      interval,
      insight.team,
      insight.now,
    )
    const out: Record<string, unknown> = {
      day: range.buckets.map((b) => ({ label: bucketLabel(b, range), value: bucketKey(b, interval) })),
      series: series.map((s, i) => ({ label: seriesLabel(s, insight.actions as Map<number, ActionInfo>), value: i })),
    }
    if (isObject(source.breakdownFilter)) {
      const response = await trends({ ...source, kind: 'TrendsQuery' } as QueryNode, ctx, run)
      const seen = new Map<string, unknown>()
      for (const r of response.results as Record<string, unknown>[]) {
        const value = r.breakdown_value
        if (value !== undefined) seen.set(JSON.stringify(value), value)
      }
      out.breakdown = [...seen.values()].map((value) => ({ label: breakdownLabel(value), value }))
    }
    if (isObject(source.compareFilter) && source.compareFilter.compare === true) {
      out.compare = [
        { label: 'Current', value: 'current' },
        { label: 'Previous', value: 'previous' },
      ]
    }
    return out
  }
  if (kind === 'LifecycleQuery') {
    const interval = intervalOf(source.interval, 'source__interval')
    const range = resolveDateRange(
      isObject(source.dateRange) ? source.dateRange : undefined,
      interval,
      insight.team,
      insight.now,
    )
    return {
      day: range.buckets.map((b) => ({ label: bucketLabel(b, range), value: bucketKey(b, interval) })),
      status: LIFECYCLE_STATUSES.map((s) => ({ label: titleCase(s), value: s })),
    }
  }
  if (kind === 'StickinessQuery') {
    const series = withAttr('source__series', () => seriesOf(source.series))
    const interval = intervalOf(source.interval, 'source__interval')
    const range = resolveDateRange(
      isObject(source.dateRange) ? source.dateRange : undefined,
      interval,
      insight.team,
      insight.now,
    )
    return {
      day: range.buckets.map((_, k) => ({ label: `${k + 1} ${interval}${k === 0 ? '' : 's'}`, value: k + 1 })),
      series: series.map((s, i) => ({ label: seriesLabel(s, insight.actions as Map<number, ActionInfo>), value: i })),
    }
  }
  return {}
}

const breakdownLabel = (value: unknown): string => {
  if (Array.isArray(value)) return value.map(breakdownLabel).join('::')
  if (value === BREAKDOWN_NULL) return 'None'
  if (value === BREAKDOWN_OTHER) return 'Other'
  return String(value)
}
