/**
 * "Who is behind this data point" (hogql.md §4.8): for an insight node and the coordinates of one of its data points
 * (`day`, `series`, `breakdown`, `compare`, `status`, `interval`, funnel step), a HogQL query with one row per actor
 * — `actor_id`, and where the insight reads events, `event_count`, `matching_events` (up to 100 tuples of
 * timestamp, uuid, session and window id) and `event_distinct_ids` — that the actors query joins to persons or
 * groups. Built from the same pieces as the insight runners, so a data point and its actors always agree.
 */
import { ValidationError } from '../../http/errors.js'
import { literal } from '../filters.js'
import { funnelActorPaths } from '../nodes/funnels.js'
import { lifecycleActivity } from '../nodes/lifecycle.js'
import { pathsActorsSource } from '../nodes/paths.js'
import { retentionActivity, retentionOtherValues } from '../nodes/retention.js'
import type { HogQLExecutor, NodeRunner, RunContext } from '../runner.js'
import {
  BREAKDOWN_NULL,
  BREAKDOWN_OTHER,
  type BreakdownDim,
  breakdownOf,
  breakdownValueExpr,
  histogramExpr,
  histogramQuantilesExpr,
  rawBreakdownExpr,
} from './breakdown.js'
import { earliestEvent, type InsightContext, wantsAllTime } from './context.js'
import {
  bucketKey,
  bucketStartHogQL,
  type Interval,
  intervalOf,
  localInstantHogQL,
  previousPeriod,
  type ResolvedRange,
  rangeBoundsHogQL,
  resolveDateRange,
  shiftedRange,
} from './date-range.js'
import { actorExpr, groupIndexOf, mathPlan } from './math.js'
import {
  eventsFrom,
  samplingOf,
  seriesEventCondition,
  seriesOf,
  seriesPropertyCondition,
  sharedCondition,
} from './series.js'
import { addLocal, startOfLocal, toLocal } from './time.js'

export interface ActorSource {
  /** HogQL with an `actor_id` column (and the event columns when `hasEvents`) */
  hogql: string
  /** values of the `{…}` placeholders of `hogql` */
  placeholders?: Record<string, unknown>
  /** the actors are groups of this type (else persons) */
  groupIndex?: number
  hasEvents: boolean
  /** the insight kind the actors come from */
  insightKind: string
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const and = (parts: (string | undefined)[]) =>
  parts
    .filter((p): p is string => !!p)
    .map((p) => `(${p})`)
    .join(' AND ') || 'true'

const NO_ACTOR = '00000000-0000-0000-0000-000000000000'
const TOTAL_VALUE_DISPLAYS = new Set(['BoldNumber', 'ActionsPie', 'ActionsBarValue', 'ActionsTable', 'WorldMap'])

/** The event columns of an actors source, grouped per actor. */
const EVENT_COLUMNS =
  'count() AS event_count, ' +
  'arraySlice(groupUniqArray(tuple(timestamp, uuid, $session_id, $window_id)), 1, 100) AS matching_events, ' +
  'groupUniqArray(distinct_id) AS event_distinct_ids'

const ABSOLUTE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/

/** A data point's `day` (`2024-01-03`, `2024-01-03 13:00:00`, ISO with offset) as a local date in `timeZone`. */
function localDayOf(value: unknown, timeZone: string, attr: string): Date {
  const m = typeof value === 'string' ? ABSOLUTE.exec(value.trim()) : null
  if (!m) throw new ValidationError(`Invalid day: ${JSON.stringify(value)}.`, attr)
  const naive = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0)))
  if (Number.isNaN(naive.getTime())) throw new ValidationError(`Invalid day: ${JSON.stringify(value)}.`, attr)
  if (!m[7]) return naive
  if (m[7] === 'Z') return toLocal(naive, timeZone)
  const sign = m[7][0] === '-' ? -1 : 1
  const digits = m[7].replace(/[^0-9]/g, '')
  const offsetMs = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000
  return toLocal(new Date(naive.getTime() - offsetMs), timeZone)
}

async function insightRange(
  source: Record<string, unknown>,
  interval: Interval,
  insight: InsightContext,
  ctx: RunContext,
  run: HogQLExecutor,
): Promise<ResolvedRange> {
  const earliest = wantsAllTime(source) ? await earliestEvent(ctx, run) : undefined
  return resolveDateRange(
    isObject(source.dateRange) ? source.dateRange : undefined,
    interval,
    insight.team,
    insight.now,
    earliest,
  )
}

function seriesIndexOf(value: unknown, count: number): number {
  if (value === undefined || value === null) return 0
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value >= count) {
    throw new ValidationError(`series is the index of one of the ${count} series.`, 'source__series')
  }
  return value
}

/** The period a compare value selects. */
function periodOf(source: Record<string, unknown>, current: ResolvedRange, compare: unknown): ResolvedRange {
  if (compare === undefined || compare === null || compare === 'current') return current
  if (compare !== 'previous') {
    throw new ValidationError("compare is 'current' or 'previous'.", 'source__compare', 'invalid_choice')
  }
  const filter = isObject(source.compareFilter) ? source.compareFilter : {}
  return typeof filter.compare_to === 'string' && filter.compare_to !== ''
    ? shiftedRange(current, filter.compare_to)
    : previousPeriod(current)
}

/** PostHog's breakdown value for "every value" of a numeric breakdown: no condition. */
const NUMERIC_ALL_VALUES = '["",""]'

/** A histogram bin label `[lo,hi]` (numbers), PostHog's null or other bucket, or its every-value placeholder. */
function checkBinLabel(value: unknown): void {
  if (value === BREAKDOWN_NULL || value === BREAKDOWN_OTHER || value === NUMERIC_ALL_VALUES) return
  let bounds: unknown
  try {
    bounds = typeof value === 'string' && value.startsWith('[') ? JSON.parse(value) : undefined
  } catch {
    bounds = undefined
  }
  if (!Array.isArray(bounds) || bounds.length !== 2 || bounds.some((b) => typeof b !== 'number')) {
    throw new ValidationError(
      'Breakdown value must be a valid JSON array or custom bin string. ' +
        'Breakdown value must contain valid float or int values if the the bin count is selected.',
      'source__breakdown',
    )
  }
}

/**
 * The expression giving a data point's breakdown value of one dimension: its text, or for histogram bins the bin
 * label, binned over the same edges as the insight (the quantiles of the series' values in the period).
 */
async function breakdownDimExpr(
  dim: BreakdownDim,
  edgesWhere: string,
  ctx: RunContext,
  run: HogQLExecutor,
): Promise<string> {
  const raw = rawBreakdownExpr(dim)
  if (dim.histogramBinCount === undefined) return breakdownValueExpr(raw)
  const executed = await run(
    `SELECT ${histogramQuantilesExpr(raw, dim.histogramBinCount)} FROM events WHERE ${edgesWhere}`,
    ctx,
  )
  const row = executed.rows[0]?.[0]
  const edges = (Array.isArray(row) ? row : []).map(Number).filter(Number.isFinite)
  return histogramExpr(raw, edges)
}

/** The condition on one breakdown value of a trends data point (`other`: none of the values shown). */
async function trendsBreakdownCondition(
  query: Record<string, unknown>,
  source: Record<string, unknown>,
  seriesIndex: number,
  /** the events whose values set a histogram's bin edges */
  edgesWhere: string,
  ctx: RunContext,
  run: HogQLExecutor,
  trends: NodeRunner,
): Promise<string | undefined> {
  const value = query.breakdown
  if (value === undefined || value === null) return undefined
  const spec = breakdownOf(source.breakdownFilter)
  if (spec.kind === 'none') return undefined
  if (spec.kind === 'cohort') {
    if (value === 'all') return undefined
    const id = typeof value === 'number' ? value : Number(value)
    if (!Number.isInteger(id))
      throw new ValidationError('A cohort breakdown value is a cohort id.', 'source__breakdown')
    return `person_id IN COHORT ${id}`
  }
  const values = Array.isArray(value) ? value : [value]
  if (values.length !== spec.dims.length) {
    throw new ValidationError(`The breakdown value needs ${spec.dims.length} part(s).`, 'source__breakdown')
  }
  spec.dims.forEach((d, i) => {
    if (d.histogramBinCount !== undefined) checkBinLabel(values[i])
  })
  const exprs: string[] = []
  for (const d of spec.dims) exprs.push(await breakdownDimExpr(d, edgesWhere, ctx, run))
  const isOther = values.every((v) => v === BREAKDOWN_OTHER)
  if (!isOther) {
    return and(
      exprs.map((e, i) =>
        // a numeric breakdown's every-value placeholder selects every value
        spec.dims[i].histogramBinCount !== undefined && values[i] === NUMERIC_ALL_VALUES
          ? undefined
          : `${e} = ${literal(values[i] === null ? BREAKDOWN_NULL : String(values[i]))}`,
      ),
    )
  }
  // the other bucket: every value the insight does not show on its own (as the insight ranks them)
  const response = await trends({ ...source, kind: 'TrendsQuery' }, ctx, run)
  const period = query.compare === 'previous' ? 'previous' : 'current'
  const shown = (response.results as Record<string, unknown>[])
    .filter(
      (r) => isObject(r.action) && r.action.order === seriesIndex && (!r.compare_label || r.compare_label === period),
    )
    .map((r) => r.breakdown_value)
    .filter((v) => !(Array.isArray(v) ? v.every((x) => x === BREAKDOWN_OTHER) : v === BREAKDOWN_OTHER))
  if (shown.length === 0) return undefined
  const tuple = spec.multi ? `[${exprs.join(', ')}]` : exprs[0]
  return `${tuple} NOT IN (${shown.map((v) => literal(v)).join(', ')})`
}

/** TrendsQuery: the actors counted in one bucket (or the whole range) of one series, breakdown value and period. */
async function trendsSource(
  query: Record<string, unknown>,
  source: Record<string, unknown>,
  insight: InsightContext,
  ctx: RunContext,
  run: HogQLExecutor,
  trends: NodeRunner,
): Promise<ActorSource> {
  const series = seriesOf(source.series, { attr: 'source__series' })
  const index = seriesIndexOf(query.series, series.length)
  const s = series[index]
  const interval = intervalOf(source.interval, 'source__interval')
  const aggregation = groupIndexOf(source.aggregation_group_type_index, 'source__aggregation_group_type_index')
  const groupIndex =
    aggregation ?? (s.math === 'unique_group' ? groupIndexOf(s.math_group_type_index, 'source__series') : undefined)
  const math = mathPlan(s, index, aggregation)
  const actor = actorExpr(groupIndex)
  const current = await insightRange(source, interval, insight, ctx, run)
  const range = periodOf(source, current, query.compare)
  const bounds = rangeBoundsHogQL(range)
  const filter = isObject(source.trendsFilter) ? source.trendsFilter : {}
  const totalValue = TOTAL_VALUE_DISPLAYS.has(String(filter.display ?? ''))
  const wau =
    (s.math === 'weekly_active' && interval !== 'week' && interval !== 'month') ||
    (s.math === 'monthly_active' && interval !== 'month')
  // the events of the data point: its bucket, or for weekly/monthly active the window ending with it
  const lower: string[] = [bounds.from]
  const upper: { op: '<' | '<='; at: string }[] = [{ op: '<=', at: bounds.to }]
  if (query.day !== undefined && query.day !== null && !totalValue) {
    const start = startOfLocal(
      localDayOf(query.day, insight.team.timezone, 'source__day'),
      interval,
      range.weekStartDay,
    )
    upper.push({ op: '<', at: localInstantHogQL(addLocal(start, interval, 1)) })
    // weekly and monthly active look back from the day, past the start of the range
    if (wau && math.kind === 'window')
      lower[0] = localInstantHogQL(addLocal(startOfLocal(start, 'day'), 'day', -(math.days - 1)))
    else lower.push(localInstantHogQL(start))
  } else if (wau && math.kind === 'window' && totalValue) {
    lower[0] = `toStartOfDay(${bounds.to}) - toIntervalDay(${math.days - 1})`
  }
  const within = (field: string) =>
    and([...lower.map((l) => `${field} >= ${l}`), ...upper.map((u) => `${field} ${u.op} ${u.at}`)])
  const shared = sharedCondition(source, insight.testAccountFilters)
  const edgesWhere = and([
    seriesEventCondition(s),
    seriesPropertyCondition(s),
    shared,
    `timestamp >= ${bounds.from}`,
    `timestamp <= ${bounds.to}`,
  ])
  const breakdown = await trendsBreakdownCondition(query, source, index, edgesWhere, ctx, run, trends)
  const where = and([
    seriesEventCondition(s),
    seriesPropertyCondition(s),
    shared,
    breakdown,
    within('timestamp'),
    math.kind === 'simple' ? math.condition : undefined,
    groupIndex === undefined ? undefined : `${actor} != ''`,
  ])
  let firstTime: string | undefined
  if (math.kind === 'first') {
    // only the actors whose first event (of the series, or the first passing every filter) falls in the point
    const firstWhere = math.ignoreFiltersForFirst
      ? and([seriesEventCondition(s), `timestamp <= ${bounds.to}`])
      : and([seriesEventCondition(s), seriesPropertyCondition(s), shared, `timestamp <= ${bounds.to}`])
    firstTime =
      `${actor} IN (SELECT ${actor} FROM events WHERE ${firstWhere} GROUP BY ${actor} ` +
      `HAVING ${within('min(timestamp)')})`
  }
  return {
    hogql: `SELECT ${actor} AS actor_id, ${EVENT_COLUMNS} FROM ${eventsFrom(samplingOf(source.samplingFactor))} WHERE ${and([where, firstTime])} GROUP BY actor_id`,
    groupIndex,
    hasEvents: true,
    insightKind: 'TrendsQuery',
  }
}

/** StickinessQuery: the actors active in exactly `day` intervals of the range (or as `operator` says). */
async function stickinessSource(
  query: Record<string, unknown>,
  source: Record<string, unknown>,
  insight: InsightContext,
  ctx: RunContext,
  run: HogQLExecutor,
): Promise<ActorSource> {
  const series = seriesOf(source.series, { attr: 'source__series' })
  const index = seriesIndexOf(query.series, series.length)
  const s = series[index]
  const interval = intervalOf(source.interval, 'source__interval')
  const groupIndex = groupIndexOf(source.aggregation_group_type_index, 'source__aggregation_group_type_index')
  const actor = actorExpr(groupIndex)
  const current = await insightRange(source, interval, insight, ctx, run)
  const range = periodOf(source, current, query.compare)
  const bounds = rangeBoundsHogQL(range)
  const filter = isObject(source.stickinessFilter) ? source.stickinessFilter : {}
  const day = query.day === undefined || query.day === null ? undefined : Number(query.day)
  if (day !== undefined && (!Number.isInteger(day) || day < 1)) {
    throw new ValidationError('day is the number of intervals (1 or more).', 'source__day')
  }
  const operator = query.operator ?? (filter.computedAs === 'cumulative' ? 'gte' : 'exact')
  const ops: Record<string, string> = { exact: '=', gte: '>=', lte: '<=' }
  if (typeof operator !== 'string' || !(operator in ops)) {
    throw new ValidationError("operator is 'exact', 'gte' or 'lte'.", 'source__operator', 'invalid_choice')
  }
  const where = and([
    seriesEventCondition(s),
    seriesPropertyCondition(s),
    sharedCondition(source, insight.testAccountFilters),
    `timestamp >= ${bounds.from}`,
    `timestamp <= ${bounds.to}`,
    groupIndex === undefined ? undefined : `${actor} != ''`,
  ])
  const bucket = bucketStartHogQL(interval, range.weekStartDay)
  return {
    hogql:
      `SELECT ${actor} AS actor_id, ${EVENT_COLUMNS} FROM ${eventsFrom(samplingOf(source.samplingFactor))} WHERE ${where} ` +
      `GROUP BY actor_id${day === undefined ? '' : ` HAVING count(DISTINCT ${bucket}) ${ops[operator]} ${day}`}`,
    groupIndex,
    hasEvents: true,
    insightKind: 'StickinessQuery',
  }
}

/** LifecycleQuery: the actors of one status in one interval. */
async function lifecycleSource(
  query: Record<string, unknown>,
  source: Record<string, unknown>,
  insight: InsightContext,
  ctx: RunContext,
  run: HogQLExecutor,
): Promise<ActorSource> {
  const activity = await lifecycleActivity(source, insight, ctx, run)
  const conditions: string[] = []
  if (query.status !== undefined && query.status !== null) {
    if (!['new', 'returning', 'resurrecting', 'dormant'].includes(query.status as string)) {
      throw new ValidationError(
        "status is 'new', 'returning', 'resurrecting' or 'dormant'.",
        'source__status',
        'invalid_choice',
      )
    }
    conditions.push(`status = ${literal(query.status)}`)
  }
  if (query.day !== undefined && query.day !== null) {
    const start = startOfLocal(
      localDayOf(query.day, insight.team.timezone, 'source__day'),
      activity.interval,
      activity.range.weekStartDay,
    )
    conditions.push(`toString(start_of_period) = ${literal(bucketKey(start, activity.interval))}`)
  } else {
    const keys = activity.range.buckets.map((b) => literal(bucketKey(b, activity.interval)))
    conditions.push(`toString(start_of_period) IN (${keys.join(', ')})`)
  }
  return {
    hogql: `SELECT actor AS actor_id, [] AS matching_events FROM (${activity.perPerson}) WHERE ${and(conditions)} GROUP BY actor_id`,
    groupIndex: activity.groupIndex,
    hasEvents: false,
    insightKind: 'LifecycleQuery',
  }
}

/**
 * RetentionQuery: the actors of one cohort (`interval`, its index; every cohort without it), with the intervals
 * they came back in (`appearances`, 0 being the cohort's own).
 */
async function retentionSource(
  query: Record<string, unknown>,
  source: Record<string, unknown>,
  insight: InsightContext,
  ctx: RunContext,
  run: HogQLExecutor,
): Promise<ActorSource> {
  const activity = await retentionActivity(source, insight, ctx, run)
  const conditions: string[] = []
  if (query.interval !== undefined && query.interval !== null) {
    const i = query.interval
    if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= activity.n) {
      throw new ValidationError(`interval is the index of one of the ${activity.n} cohorts.`, 'source__interval')
    }
    conditions.push(`start_index = ${i}`)
  }
  if (query.breakdown !== undefined && query.breakdown !== null && activity.hasBreakdown) {
    const value = Array.isArray(query.breakdown) ? query.breakdown[0] : query.breakdown
    if (value === BREAKDOWN_OTHER) {
      // the other bucket: the values the insight folds into it (ranked as the insight ranks them)
      const others = await retentionOtherValues(activity, ctx, run)
      conditions.push(
        others.length === 0 ? 'false' : `breakdown_value IN (${others.map((v) => literal(v)).join(', ')})`,
      )
    } else conditions.push(`breakdown_value = ${literal(String(value ?? ''))}`)
  }
  return {
    hogql:
      'SELECT actor_id, arraySort(groupUniqArray(intervals_from_base)) AS appearances, [] AS matching_events ' +
      `FROM (${activity.perActor}) WHERE ${and(conditions)} GROUP BY actor_id`,
    groupIndex: activity.groupIndex,
    hasEvents: false,
    insightKind: 'RetentionQuery',
  }
}

/** FunnelsQuery: the actors who reached a step (positive), or dropped off right before it (negative). */
async function funnelsSource(
  query: Record<string, unknown>,
  source: Record<string, unknown>,
  insight: InsightContext,
  ctx: RunContext,
  run: HogQLExecutor,
): Promise<ActorSource> {
  const f = isObject(source.funnelsFilter) ? source.funnelsFilter : {}
  if (typeof f.funnelAggregateByHogQL === 'string' && f.funnelAggregateByHogQL.trim() !== '') {
    throw new ValidationError(
      'The actors of a funnel aggregated by a HogQL expression are not persons or groups.',
      'source__funnelsFilter__funnelAggregateByHogQL',
    )
  }
  const viz = f.funnelVizType ?? 'steps'
  const trendsEntrance = query.funnelTrendsEntrancePeriodStart
  const isTrends = viz === 'trends'
  const { steps, groupIndex, actors } = await funnelActorPaths(source, insight, ctx, run, (range) => {
    if (!isTrends || trendsEntrance === undefined || trendsEntrance === null) return undefined
    const start = startOfLocal(
      localDayOf(trendsEntrance, insight.team.timezone, 'funnelTrendsEntrancePeriodStart'),
      range.interval,
      range.weekStartDay,
    )
    const key = bucketKey(start, range.interval)
    return (e) => e.bucket === key
  })
  let matches: (mask: number, reached: number) => boolean
  if (isTrends) {
    // funnel trends: who converted (or, with funnelTrendsDropOff, who entered and did not)
    const toStep = typeof f.funnelToStep === 'number' ? f.funnelToStep + 1 : steps
    const dropOff = query.funnelTrendsDropOff === true
    matches = (_, reached) => (dropOff ? reached < toStep : reached >= toStep)
  } else {
    const step = query.funnelStep ?? 1
    if (typeof step !== 'number' || !Number.isInteger(step) || step === 0 || step === -1 || Math.abs(step) > steps) {
      throw new ValidationError(
        `funnelStep is a step from 1 to ${steps}, or minus a step from 2 to ${steps} for the drop-off before it.`,
        'funnelStep',
      )
    }
    // counted at step k (its bit on the path), or counted at step k − 1 and not at step k
    matches =
      step > 0
        ? (mask) => (mask & (1 << (step - 1))) !== 0
        : (mask) => (mask & (1 << (-step - 2))) !== 0 && (mask & (1 << (-step - 1))) === 0
  }
  const breakdown = query.funnelStepBreakdown
  // a path's breakdown key is the value, or the JSON array of values for several properties
  const breakdownMatches = (key: string) => {
    if (breakdown === undefined || breakdown === null) return true
    if (!Array.isArray(breakdown)) return key === String(breakdown)
    if (key.startsWith('[')) return key === JSON.stringify(breakdown.map((v) => String(v)))
    return breakdown.length === 1 && key === String(breakdown[0])
  }
  const ids = actors
    .filter((a) =>
      a.paths.some((p) => {
        if (!breakdownMatches(p.breakdown)) return false
        const mask = isTrends && p.reached > 0 ? (1 << p.reached) - 1 : p.stepsMask
        return matches(mask, p.reached)
      }),
    )
    .map((a) => a.id)
  return {
    // persons are UUIDs, groups keys; nobody: one placeholder row, never returned
    hogql:
      `SELECT ${groupIndex === undefined ? 'toUUID(arrayJoin({actor_ids}))' : 'arrayJoin({actor_ids})'} AS actor_id, ` +
      `[] AS matching_events${ids.length === 0 ? ' LIMIT 0' : ''}`,
    placeholders: { actor_ids: ids.length > 0 ? ids : [groupIndex === undefined ? NO_ACTOR : ''] },
    groupIndex,
    hasEvents: false,
    insightKind: 'FunnelsQuery',
  }
}

/**
 * The actors source of an `InsightActorsQuery`, `FunnelsActorsQuery` or `StickinessActorsQuery` (its `source` is
 * the insight node).
 */
export async function actorSourceOf(
  query: Record<string, unknown>,
  insight: InsightContext,
  ctx: RunContext,
  run: HogQLExecutor,
  trends: NodeRunner,
): Promise<ActorSource> {
  const source = query.source
  if (!isObject(source) || typeof source.kind !== 'string') {
    throw new ValidationError('The insight whose actors to list is required.', 'source', 'required')
  }
  switch (source.kind) {
    case 'TrendsQuery':
      return trendsSource(query, source, insight, ctx, run, trends)
    case 'StickinessQuery':
      return stickinessSource(query, source, insight, ctx, run)
    case 'LifecycleQuery':
      return lifecycleSource(query, source, insight, ctx, run)
    case 'RetentionQuery':
      return retentionSource(query, source, insight, ctx, run)
    case 'FunnelsQuery':
      return funnelsSource(query, source, insight, ctx, run)
    case 'PathsQuery':
      return { ...(await pathsActorsSource(source, insight, ctx, run)), hasEvents: true, insightKind: 'PathsQuery' }
    default:
      throw new ValidationError(
        `The actors of a ${JSON.stringify(source.kind)} cannot be listed.`,
        'source__kind',
        'invalid_choice',
      )
  }
}
