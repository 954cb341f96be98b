/**
 * LifecycleQuery (hogql.md §4.7, §4.12 "Lifecycle window"): per interval, the persons (or groups) who were new,
 * returning, resurrecting or dormant (dormant counted negative), from each person's sorted active intervals, as PostHog's
 * lifecycle runner computes them.
 */
import { ValidationError } from '../../http/errors.js'
import {
  earliestEvent,
  type InsightContext,
  type InsightDeps,
  loadInsightContext,
  wantsAllTime,
} from '../insights/context.js'
import {
  bucketKey,
  bucketStartHogQL,
  intervalHogQL,
  intervalOf,
  localInstantHogQL,
  resolveDateRange,
  resolvedDateRange,
} from '../insights/date-range.js'
import { actorExpr, groupIndexOf } from '../insights/math.js'
import {
  eventsFrom,
  samplingOf,
  seriesEventCondition,
  seriesName,
  seriesOf,
  seriesPropertyCondition,
  sharedCondition,
} from '../insights/series.js'
import { addLocal, localDay, MONTHS } from '../insights/time.js'
import type { HogQLExecutor, NodeRunner, RunContext } from '../runner.js'

export const LIFECYCLE_STATUSES = ['new', 'returning', 'resurrecting', 'dormant'] as const
type Status = (typeof LIFECYCLE_STATUSES)[number]

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const and = (parts: (string | undefined)[]) =>
  parts
    .filter((p): p is string => !!p)
    .map((p) => `(${p})`)
    .join(' AND ') || 'true'

/** `lifecycleFilter.toggledLifecycles`: the statuses to return (all four when absent). */
function toggledOf(filter: Record<string, unknown>): Set<Status> {
  const raw = filter.toggledLifecycles
  if (raw === undefined || raw === null) return new Set(LIFECYCLE_STATUSES)
  if (!Array.isArray(raw) || raw.some((s) => !(LIFECYCLE_STATUSES as readonly unknown[]).includes(s))) {
    throw new ValidationError(
      `toggledLifecycles lists statuses among ${LIFECYCLE_STATUSES.map((s) => `'${s}'`).join(', ')}.`,
      'lifecycleFilter__toggledLifecycles',
      'invalid_choice',
    )
  }
  return new Set(raw as Status[])
}

const pad = (n: number) => String(n).padStart(2, '0')

/**
 * The lifecycle statuses of each actor: one row per (actor, start_of_period, status) — for the insight and for the
 * actors behind one of its data points.
 */
export async function lifecycleActivity(
  node: Record<string, unknown>,
  insight: InsightContext,
  ctx: RunContext,
  run: HogQLExecutor,
) {
  const series = seriesOf(node.series, { max: 1 })[0]
  if (series.kind === 'ActionsNode' && !insight.actions.has(series.id as number)) {
    throw new ValidationError(`Action ${series.id} does not exist.`, 'series__0__id', 'does_not_exist')
  }
  const interval = intervalOf(node.interval)
  if (interval === 'minute') {
    throw new ValidationError('Lifecycles are shown by hour, day, week or month.', 'interval', 'invalid_choice')
  }
  const groupIndex = groupIndexOf(node.aggregation_group_type_index, 'aggregation_group_type_index')
  // persons, or groups of one type (new in the interval the group was created)
  const actor = actorExpr(groupIndex)
  const createdAt = groupIndex === undefined ? 'person.created_at' : `group_${groupIndex}.created_at`
  const filter = isObject(node.lifecycleFilter) ? node.lifecycleFilter : {}
  const toggled = toggledOf(filter)
  const sampling = samplingOf(node.samplingFactor)
  const earliest = wantsAllTime(node) ? await earliestEvent(ctx, run) : undefined
  const range = resolveDateRange(
    isObject(node.dateRange) ? node.dateRange : undefined,
    interval,
    insight.team,
    insight.now,
    earliest,
  )
  const first = range.buckets[0]
  const last = range.buckets[range.buckets.length - 1]
  const trunc = (field: string) => bucketStartHogQL(interval, range.weekStartDay, field)
  const one = intervalHogQL(interval)
  // one interval before the first bucket (is its activity returning or resurrecting? dormant after it?) up to the
  // end of the last bucket; earlier activity is invisible, as in PostHog
  const where = and([
    seriesEventCondition(series),
    seriesPropertyCondition(series),
    sharedCondition(node, insight.testAccountFilters),
    `timestamp >= ${localInstantHogQL(addLocal(first, interval, -1))}`,
    `timestamp < ${localInstantHogQL(addLocal(last, interval, 1))}`,
    groupIndex === undefined ? `ifNull(toString(properties.$process_person_profile), '') != 'false'` : `${actor} != ''`,
  ])
  const statuses =
    `arrayPopBack(arrayPushFront(all_activity, ${trunc('created_at')})) AS previous_activity, ` +
    `arrayPopFront(arrayPushBack(all_activity, ${trunc("toDateTime('1970-01-01 00:00:00')")})) AS following_activity, ` +
    `arrayMap((previous, current, index) -> if(previous = current, 'new', if(current - ${one} = previous AND index != 1, 'returning', 'resurrecting')), previous_activity, all_activity, arrayEnumerate(all_activity)) AS initial_status, ` +
    `arrayMap((current, next) -> if(current + ${one} = next, '', 'dormant'), all_activity, following_activity) AS dormant_status, ` +
    `arrayMap(x -> x + ${one}, arrayFilter((current, is_dormant) -> is_dormant = 'dormant', all_activity, dormant_status)) AS dormant_periods, ` +
    `arrayJoin(arrayConcat(arrayZip(all_activity, initial_status), arrayZip(dormant_periods, arrayMap(x -> 'dormant', dormant_periods)))) AS pair, ` +
    'tupleElement(pair, 1) AS start_of_period, tupleElement(pair, 2) AS status'
  // Persons: each distinct id's active intervals first (one pass over the events, grouped by the events' own
  // column), then the distinct ids joined to their current person — and that person's created_at — once each, and
  // the intervals of a person's distinct ids merged. The same answer as grouping the events by `person_id`, which
  // joins every event to the distinct ids and to the persons (2.1× the hand-written SQL at 10M events;
  // docs/benchmarks.md, "Insights"). Groups are their own key on the events.
  const activity =
    groupIndex === undefined
      ? 'SELECT pdi.person_id AS actor, min(pdi.person.created_at) AS created_at, ' +
        'arraySort(groupUniqArrayArray(e.periods)) AS all_activity ' +
        `FROM (SELECT distinct_id, groupUniqArray(${trunc('timestamp')}) AS periods FROM ${eventsFrom(sampling)} ` +
        `WHERE ${where} GROUP BY distinct_id) AS e ` +
        'INNER JOIN person_distinct_ids AS pdi ON e.distinct_id = pdi.distinct_id GROUP BY actor'
      : `SELECT ${actor} AS actor, min(${createdAt}) AS created_at, ` +
        `arraySort(groupUniqArray(${trunc('timestamp')})) AS all_activity ` +
        `FROM ${eventsFrom(sampling)} WHERE ${where} GROUP BY actor`
  const read = range.buckets.length + 1
  const perPerson =
    groupIndex === undefined && interval !== 'hour' && read <= 64
      ? maskedActivity(where, sampling, interval, range.weekStartDay, localDay(addLocal(first, interval, -1)), read)
      : `SELECT actor, created_at, all_activity, ${statuses} FROM (${activity})`
  return { perPerson, range, interval, series, sampling, toggled, groupIndex }
}

/**
 * The persons' statuses when the intervals read fit in 64 bits (days, weeks or months; at most 63 shown): interval k (0
 * = the one before the first shown) is bit k of a mask per distinct id — OR-ed over its events, then over the person's
 * distinct ids — instead of a set of interval starts per distinct id merged per person (on the benchmark's 10M events,
 * about a quarter less CPU for the whole query; docs/benchmarks.md, "Insights"). The statuses are the same rules as on
 * the interval starts, on the indices: the first active interval is `new` if it is the creation interval, else
 * `resurrecting`; a later one `returning` if the interval before it was active, else `resurrecting`; the interval after
 * each active one that is followed by none is `dormant`. Rows as the general form's, `start_of_period` the interval's
 * start (a Date).
 */
function maskedActivity(
  where: string,
  sampling: number | undefined,
  interval: 'day' | 'week' | 'month',
  weekStartDay: 0 | 1,
  firstRead: string,
  read: number,
): string {
  const origin = `toDate('${firstRead}')`
  const index = (field: string) =>
    interval === 'day'
      ? `toDate(${field}) - ${origin}`
      : interval === 'week'
        ? `intDiv(${bucketStartHogQL('week', weekStartDay, field)} - ${origin}, 7)`
        : `dateDiff('month', ${origin}, toStartOfMonth(${field}))`
  const start =
    interval === 'day'
      ? `addDays(${origin}, period_index)`
      : interval === 'week'
        ? `addDays(${origin}, 7 * period_index)`
        : `addMonths(${origin}, period_index)`
  return (
    `SELECT actor, arrayFilter(i -> bitTest(mask, i), range(${read})) AS active, ${index('created_at')} AS created, ` +
    'arrayJoin(arrayConcat(' +
    "arrayMap((k, j) -> (k, if(j = 1, if(k = created, 'new', 'resurrecting'), if(active[j - 1] = k - 1, 'returning', 'resurrecting'))), active, arrayEnumerate(active)), " +
    "arrayMap(k -> (k + 1, 'dormant'), arrayFilter((k, j) -> j = length(active) OR active[j + 1] != k + 1, active, arrayEnumerate(active))))) AS pair, " +
    `tupleElement(pair, 1) AS period_index, tupleElement(pair, 2) AS status, ${start} AS start_of_period ` +
    'FROM (SELECT pdi.person_id AS actor, min(pdi.person.created_at) AS created_at, groupBitOr(e.mask) AS mask ' +
    `FROM (SELECT distinct_id, groupBitOr(bitShiftLeft(_toUInt64(1), ${index('timestamp')})) AS mask ` +
    `FROM ${eventsFrom(sampling)} WHERE ${where} GROUP BY distinct_id) AS e ` +
    'INNER JOIN person_distinct_ids AS pdi ON e.distinct_id = pdi.distinct_id GROUP BY actor)'
  )
}

export function createLifecycleRunner(deps: InsightDeps): NodeRunner {
  return async (node, ctx, run) => {
    const started = performance.now()
    const insight = await loadInsightContext(ctx, deps)
    const { perPerson, range, interval, series, sampling, toggled } = await lifecycleActivity(node, insight, ctx, run)
    const executed = await run(
      // one row per (actor, interval, status): a count of rows is a count of actors
      `SELECT toString(start_of_period) AS period, status, count() AS counts FROM (${perPerson}) ` +
        'GROUP BY period, status LIMIT 50000',
      ctx,
    )
    ctx.stats.resultRows += executed.rows.length

    const index = new Map(range.buckets.map((b, i) => [bucketKey(b, interval), i]))
    const data = new Map<Status, number[]>(LIFECYCLE_STATUSES.map((s) => [s, new Array(range.buckets.length).fill(0)]))
    for (const [period, status, counts] of executed.rows) {
      const at = index.get(String(period))
      const values = data.get(status as Status)
      if (at === undefined || !values) continue
      const n = sampling === undefined ? Number(counts) : Math.round(Number(counts) / sampling)
      values[at] = status === 'dormant' ? -n : n
    }
    const hourly = interval === 'hour'
    const labels = range.buckets.map(
      (b) =>
        `${b.getUTCDate()}-${MONTHS[b.getUTCMonth()]}-${b.getUTCFullYear()}` +
        (hourly ? ` ${pad(b.getUTCHours())}:${pad(b.getUTCMinutes())}` : ''),
    )
    const days = range.buckets.map((b) => (hourly ? bucketKey(b, interval) : localDay(b)))
    const name = seriesName(series, insight.actions)
    const action = {
      id: series.kind === 'ActionsNode' ? String(series.id) : (series.event ?? null),
      name,
      type: series.kind === 'ActionsNode' ? 'actions' : 'events',
      order: 0,
      math: 'total',
      ...(series.custom_name ? { custom_name: series.custom_name } : {}),
    }
    const results = LIFECYCLE_STATUSES.filter((s) => toggled.has(s)).map((status) => {
      const values = data.get(status) as number[]
      return {
        action,
        data: values,
        count: values.reduce((s, v) => s + v, 0),
        labels,
        days,
        label: `${name} - ${status}`,
        status,
      }
    })
    return {
      results,
      timings: [{ k: '.', t: (performance.now() - started) / 1000 }],
      modifiers: isObject(node.modifiers) ? node.modifiers : {},
      resolved_date_range: resolvedDateRange(range),
      hogql: ctx.stats.hogql ?? null,
      error: null,
    }
  }
}
