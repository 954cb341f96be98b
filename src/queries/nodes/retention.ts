/**
 * RetentionQuery (hogql.md §4.4, §4.12 "Retention output"): one cohort per interval of the range, the actors who
 * did the target event in it (recurring), for the first time ever (`retention_first_time`), or whose first-ever
 * target event matches the entity's filters (`retention_first_ever_occurrence`); then how many of them did the
 * returning event k intervals later, k = 0 … totalIntervals − 1, inside the range.
 */
import { ValidationError } from '../../http/errors.js'
import { propertiesToHogQL } from '../filters.js'
import { toZonedIso } from '../format.js'
import {
  BREAKDOWN_OTHER,
  type BreakdownSpec,
  breakdownOf,
  DEFAULT_BREAKDOWN_LIMIT,
  rawBreakdownExpr,
} from '../insights/breakdown.js'
import {
  earliestEvent,
  type InsightContext,
  type InsightDeps,
  loadInsightContext,
  wantsAllTime,
} from '../insights/context.js'
import {
  bucketStartHogQL,
  type Interval,
  localInstantHogQL,
  MAX_INTERVALS,
  resolveDateRange,
} from '../insights/date-range.js'
import { actorExpr, groupIndexOf } from '../insights/math.js'
import {
  eventsFrom,
  type SeriesNode,
  samplingOf,
  seriesEventCondition,
  seriesPropertyCondition,
  sharedCondition,
} from '../insights/series.js'
import { addLocal, fromLocal, startOfLocal } from '../insights/time.js'
import type { HogQLExecutor, NodeRunner, RunContext } from '../runner.js'

const PERIODS: Record<string, Interval> = { Hour: 'hour', Day: 'day', Week: 'week', Month: 'month' }
const RETENTION_TYPES = ['retention_recurring', 'retention_first_time', 'retention_first_ever_occurrence']
export const DEFAULT_TOTAL_INTERVALS = 8
const MAX_TOTAL_INTERVALS = 1000

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const and = (parts: (string | undefined)[]) =>
  parts
    .filter((p): p is string => !!p)
    .map((p) => `(${p})`)
    .join(' AND ') || 'true'

/** A retention entity (`{id, type: 'events'|'actions', properties}`, default `$pageview`) as a series node. */
function entityOf(value: unknown, attr: string, actions: Map<number, unknown>): SeriesNode {
  if (value === undefined || value === null) return { kind: 'EventsNode', event: '$pageview' }
  if (!isObject(value)) throw new ValidationError('An entity must be an object.', attr)
  const type = value.type ?? 'events'
  try {
    propertiesToHogQL(value.properties)
  } catch (error) {
    if (error instanceof ValidationError) throw new ValidationError(error.detail, `${attr}__properties`, error.code)
    throw error
  }
  if (type === 'actions') {
    const id = typeof value.id === 'string' && /^\d+$/.test(value.id) ? Number(value.id) : value.id
    if (typeof id !== 'number' || !Number.isInteger(id)) {
      throw new ValidationError('An actions entity needs the action id.', `${attr}__id`, 'required')
    }
    if (!actions.has(id)) throw new ValidationError(`Action ${id} does not exist.`, `${attr}__id`, 'does_not_exist')
    return { kind: 'ActionsNode', id, properties: value.properties }
  }
  if (type !== 'events') {
    throw new ValidationError(`Unsupported entity type ${JSON.stringify(type)}.`, `${attr}__type`, 'invalid_choice')
  }
  if (value.id !== undefined && value.id !== null && typeof value.id !== 'string') {
    throw new ValidationError('An events entity id is an event name or null.', `${attr}__id`)
  }
  return { kind: 'EventsNode', event: (value.id as string | null | undefined) ?? null, properties: value.properties }
}

const entityCondition = (entity: SeriesNode) => and([seriesEventCondition(entity), seriesPropertyCondition(entity)])

function positiveInt(value: unknown, fallback: number, max: number, attr: string): number {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new ValidationError(`Must be an integer from 1 to ${max}.`, attr)
  }
  return value
}

/**
 * A retention breakdown as PostHog reads it: cohorts listed in `breakdowns` (entries of type "cohort", the
 * others then ignored) or as `breakdown_type: "cohort"` are one breakdown value each, the cohort id as text ("0"
 * for all users, also written "all"); of several property breakdowns only the first is used.
 */
function retentionBreakdown(filter: unknown): { spec: BreakdownSpec; limit: number } {
  let raw = filter
  if (isObject(filter) && Array.isArray(filter.breakdowns)) {
    const cohorts = filter.breakdowns.filter((b) => isObject(b) && b.type === 'cohort')
    if (cohorts.length > 0) {
      raw = {
        breakdown: cohorts.map((b) => (b as Record<string, unknown>).property),
        breakdown_type: 'cohort',
        breakdown_limit: filter.breakdown_limit,
      }
    }
  }
  const spec = breakdownOf(raw)
  const limit =
    spec.kind === 'values'
      ? spec.limit
      : isObject(raw) && typeof raw.breakdown_limit === 'number' && raw.breakdown_limit >= 1
        ? Math.floor(raw.breakdown_limit)
        : DEFAULT_BREAKDOWN_LIMIT
  return { spec, limit }
}

/**
 * Each actor's cohort and returns: rows of (actor_id, [breakdown_value,] start_index, intervals_from_base) — for the
 * insight and for the actors behind one of its cohorts.
 */
export async function retentionActivity(
  node: Record<string, unknown>,
  insight: InsightContext,
  ctx: RunContext,
  run: HogQLExecutor,
) {
  if (node.retentionFilter !== undefined && !isObject(node.retentionFilter)) {
    throw new ValidationError('retentionFilter must be an object.', 'retentionFilter')
  }
  const filter = isObject(node.retentionFilter) ? node.retentionFilter : {}
  const periodName = (filter.period ?? 'Day') as string
  const interval = PERIODS[periodName]
  if (!interval) {
    throw new ValidationError(
      `period must be one of ${Object.keys(PERIODS).join(', ')}.`,
      'retentionFilter__period',
      'invalid_choice',
    )
  }
  const retentionType = (filter.retentionType ?? 'retention_recurring') as string
  if (!RETENTION_TYPES.includes(retentionType)) {
    throw new ValidationError(
      `retentionType must be one of ${RETENTION_TYPES.join(', ')}.`,
      'retentionFilter__retentionType',
      'invalid_choice',
    )
  }
  const lookahead = positiveInt(
    filter.totalIntervals,
    DEFAULT_TOTAL_INTERVALS,
    MAX_TOTAL_INTERVALS,
    'retentionFilter__totalIntervals',
  )
  const minimumOccurrences = positiveInt(filter.minimumOccurrences, 1, 1000, 'retentionFilter__minimumOccurrences')
  const target = entityOf(filter.targetEntity, 'retentionFilter__targetEntity', insight.actions)
  const returning = entityOf(filter.returningEntity, 'retentionFilter__returningEntity', insight.actions)
  const groupIndex = groupIndexOf(node.aggregation_group_type_index, 'aggregation_group_type_index')
  const sampling = samplingOf(node.samplingFactor)
  const { spec: breakdown, limit: breakdownLimit } = retentionBreakdown(node.breakdownFilter)

  // cohorts: every interval from date_from's to date_to's, or the last totalIntervals without date_from
  const dateRange = isObject(node.dateRange) ? node.dateRange : undefined
  const earliest = wantsAllTime(node) ? await earliestEvent(ctx, run) : undefined
  const resolved = resolveDateRange(dateRange, interval, insight.team, insight.now, earliest)
  const wsd = insight.team.weekStartDay
  const end = addLocal(startOfLocal(resolved.to, interval, wsd), interval, 1)
  const start = dateRange?.date_from ? startOfLocal(resolved.from, interval, wsd) : addLocal(end, interval, -lookahead)
  const cohorts: Date[] = []
  for (let d = start; d.getTime() < end.getTime(); d = addLocal(start, interval, cohorts.length)) {
    cohorts.push(d)
    if (cohorts.length > MAX_INTERVALS) {
      throw new ValidationError(`The date range holds more than ${MAX_INTERVALS} periods.`, 'retentionFilter__period')
    }
  }
  const n = cohorts.length

  const trunc = bucketStartHogQL(interval, wsd)
  const inRange = `timestamp >= ${localInstantHogQL(start)} AND timestamp < ${localInstantHogQL(end)}`
  const startCondition = entityCondition(target)
  const returnCondition = entityCondition(returning)
  const actor = actorExpr(groupIndex)
  const unit = `toInterval${interval[0].toUpperCase()}${interval.slice(1)}`
  const startTimestamps = `arraySort(groupUniqArrayIf(${trunc}, (${startCondition}) AND ${inRange}))`
  let cohortTimestamps: string
  let relevant = `(${startCondition}) OR (${returnCondition})`
  let readsHistory = false
  if (retentionType === 'retention_first_time') {
    // the interval of the actor's first target event ever, when it lies in the range
    const first = bucketStartHogQL(interval, wsd, `minIf(timestamp, ${startCondition})`)
    cohortTimestamps = `if(has(${startTimestamps}, ${first}), [${first}], [])`
    readsHistory = true
  } else if (retentionType === 'retention_first_ever_occurrence') {
    // the first target event ever, found without the entity's property filters, which it must then match
    const bare = seriesEventCondition(target)
    const first = bucketStartHogQL(interval, wsd, `minIf(timestamp, ${bare})`)
    const matches = `argMinIf(${startCondition}, timestamp, ${bare})`
    cohortTimestamps = `if(${matches} AND has(${startTimestamps}, ${first}), [${first}], [])`
    relevant = `(${bare}) OR (${returnCondition})`
    readsHistory = true
  } else {
    cohortTimestamps = startTimestamps
  }
  const returnTimestamps =
    minimumOccurrences > 1
      ? `arrayFilter((d, c) -> c >= ${minimumOccurrences}, date_range, arrayMap(d -> countEqual(return_dupes, d), date_range))`
      : `arraySort(groupUniqArrayIf(${trunc}, (${returnCondition}) AND ${inRange}))`
  const dim = breakdown.kind === 'values' ? breakdown.dims[0] : undefined
  const cohortIds = breakdown.kind === 'cohort' ? breakdown.cohorts.map((c) => (c === 'all' ? 0 : c)) : []
  const hasBreakdown = dim !== undefined || cohortIds.length > 0
  const where = and([
    relevant,
    sharedCondition(node, insight.testAccountFilters),
    readsHistory ? `timestamp < ${localInstantHogQL(end)}` : inRange,
    groupIndex === undefined ? undefined : `${actor} != ''`,
  ])
  /** the activity of actors, with a breakdown value (`select`) and a condition of its own */
  const activityOf = (breakdownSelect: string, condition: string | undefined, byValue: boolean) =>
    `SELECT ${actor} AS actor_id${breakdownSelect}, ` +
    `arrayMap(x -> ${bucketStartHogQL(interval, wsd, localInstantHogQL(start))} + ${unit}(x), range(0, ${n})) AS date_range, ` +
    `${cohortTimestamps} AS start_timestamps, ` +
    (minimumOccurrences > 1 ? `groupArrayIf(${trunc}, (${returnCondition}) AND ${inRange}) AS return_dupes, ` : '') +
    `${returnTimestamps} AS return_timestamps, ` +
    `arrayJoin(arrayFilter(x -> x > -1, arrayMap((i, d) -> if(has(start_timestamps, d), i - 1, -1), arrayEnumerate(date_range), date_range))) AS start_index, ` +
    `arrayJoin(arrayConcat([0], arrayFilter(x -> x > 0, arrayMap(ts -> indexOf(arraySlice(date_range, start_index + 1, ${lookahead}), ts) - 1, return_timestamps)))) AS intervals_from_base ` +
    `FROM ${eventsFrom(sampling)} WHERE ${and([where, condition])} GROUP BY actor_id${byValue ? ', breakdown_value' : ''}`
  // a cohort breakdown: the activity within each cohort, one after the other (an actor may be in several)
  const perActor =
    cohortIds.length > 0
      ? cohortIds
          .map((id) =>
            activityOf(`, '${id}' AS breakdown_value`, id === 0 ? undefined : `person_id IN COHORT ${id}`, false),
          )
          .join(' UNION ALL ')
      : activityOf(dim ? `, ifNull(toString(${rawBreakdownExpr(dim)}), '') AS breakdown_value` : '', undefined, !!dim)
  const bd = hasBreakdown ? ', breakdown_value' : ''
  const activity =
    filter.cumulative === true
      ? `SELECT actor_id, start_index${bd}, arrayJoin(range(0, max(intervals_from_base) + 1)) AS intervals_from_base ` +
        `FROM (${perActor}) GROUP BY actor_id, start_index${bd}`
      : perActor
  return {
    activity,
    perActor,
    bd,
    hasBreakdown,
    breakdownLimit,
    sampling,
    n,
    lookahead,
    cohorts,
    periodName,
    groupIndex,
  }
}

/**
 * PostHog's ranking of retention breakdown values: by their cohorts' total size (the actors at interval 0 of every
 * cohort), then by value; past `limit` they fold into the other bucket.
 */
export function rankBreakdownValues(sizes: Map<string, number>, limit: number): { kept: string[]; others: string[] } {
  const keys = [...sizes.keys()].sort(
    (a, b) => (sizes.get(b) as number) - (sizes.get(a) as number) || (a < b ? -1 : a > b ? 1 : 0),
  )
  return { kept: keys.slice(0, limit), others: keys.slice(limit) }
}

/** The breakdown values a retention insight folds into its other bucket (none without a breakdown). */
export async function retentionOtherValues(
  activity: Awaited<ReturnType<typeof retentionActivity>>,
  ctx: RunContext,
  run: HogQLExecutor,
): Promise<string[]> {
  if (!activity.hasBreakdown) return []
  const executed = await run(
    'SELECT breakdown_value, start_index, count(DISTINCT actor_id) FROM (' +
      `${activity.perActor}) WHERE intervals_from_base = 0 GROUP BY breakdown_value, start_index LIMIT 100000`,
    ctx,
  )
  const sizes = new Map<string, number>()
  for (const [value, index, count] of executed.rows) {
    if (Number(index) < 0 || Number(index) >= activity.n) continue
    const scaled = activity.sampling === undefined ? Number(count) : Math.round(Number(count) / activity.sampling)
    sizes.set(String(value), (sizes.get(String(value)) ?? 0) + scaled)
  }
  return rankBreakdownValues(sizes, activity.breakdownLimit).others
}

export function createRetentionRunner(deps: InsightDeps): NodeRunner {
  return async (node, ctx, run) => {
    const started = performance.now()
    const insight = await loadInsightContext(ctx, deps)
    const { activity, bd, hasBreakdown, breakdownLimit, sampling, n, lookahead, cohorts, periodName } =
      await retentionActivity(node, insight, ctx, run)
    const executed = await run(
      `SELECT start_index, intervals_from_base${bd}, count(DISTINCT actor_id) AS count FROM (${activity}) ` +
        `GROUP BY start_index, intervals_from_base${bd} LIMIT 100000`,
      ctx,
    )
    ctx.stats.resultRows += executed.rows.length

    const scale = (c: unknown) => (sampling === undefined ? Number(c) : Math.round(Number(c) / sampling))
    // breakdown value → cohort → interval → count
    const counts = new Map<string, number[][]>()
    const cell = (key: string) => {
      let grid = counts.get(key)
      if (!grid) {
        grid = Array.from({ length: n }, () => new Array(lookahead).fill(0))
        counts.set(key, grid)
      }
      return grid
    }
    for (const row of executed.rows) {
      const [i, k] = [Number(row[0]), Number(row[1])]
      const key = hasBreakdown ? String(row[2]) : ''
      if (i < 0 || i >= n || k < 0 || k >= lookahead) continue
      cell(key)[i][k] += scale(row[hasBreakdown ? 3 : 2])
    }
    let keys = [...counts.keys()]
    if (hasBreakdown) {
      const size = (key: string) => (counts.get(key) as number[][]).reduce((s, r) => s + r[0], 0)
      const ranked = rankBreakdownValues(new Map(keys.map((k) => [k, size(k)])), breakdownLimit)
      keys = ranked.kept
      if (ranked.others.length > 0) {
        const other = cell(BREAKDOWN_OTHER)
        for (const key of ranked.others) {
          const grid = counts.get(key) as number[][]
          grid.forEach((r, i) => {
            r.forEach((c, k) => {
              other[i][k] += c
            })
          })
        }
        keys.push(BREAKDOWN_OTHER)
      }
    } else keys = ['']
    const title = periodName
    const tz = insight.team.timezone
    const results = keys.flatMap((key) => {
      const grid = counts.get(key) ?? cell(key)
      return cohorts.map((c, i) => ({
        values: grid[i].map((count, k) => ({ count, label: `${title} ${k}` })),
        label: `${title} ${i}`,
        date: toZonedIso(fromLocal(c, tz).toISOString(), tz),
        breakdown_value: hasBreakdown ? key : null,
      }))
    })
    return {
      results,
      timings: [{ k: '.', t: (performance.now() - started) / 1000 }],
      modifiers: isObject(node.modifiers) ? node.modifiers : {},
      hogql: ctx.stats.hogql ?? null,
      error: null,
    }
  }
}
