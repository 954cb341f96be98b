/**
 * WebOverviewQuery (hogql.md §4.10, §4.12 "Web overview"): the web analytics dashboard's headline numbers —
 * visitors, views, sessions, average session duration and bounce rate (or, with a conversion goal, visitors,
 * total and unique conversions and the conversion rate), each beside the compared period. Sessions count when
 * they have a pageview or screen (or a goal event) matching the filters and start inside the period, as in
 * PostHog's `WebOverviewQueryRunner`.
 */
import { type InsightDeps, loadInsightContext } from '../insights/context.js'
import { eventsFrom } from '../insights/series.js'
import {
  inPeriods,
  periodPair,
  rangeStrings,
  samplingRate,
  unsample,
  type WebPlan,
  webEventCondition,
  webPlanOf,
} from '../insights/web.js'
import type { NodeRunner } from '../runner.js'

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

export interface WebOverviewItem {
  key: string
  kind: 'unit' | 'duration_s' | 'percentage'
  isIncreaseBad: boolean | null
  value: number | null
  previous: number | null
  changeFromPreviousPct: number | null
}

function item(
  key: string,
  kind: WebOverviewItem['kind'],
  rawValue: number | null,
  rawPrevious: number | null,
  isIncreaseBad: boolean | null = null,
): WebOverviewItem {
  const clean = (v: number | null) => (v === null || Number.isNaN(v) ? null : kind === 'percentage' ? v * 100 : v)
  const value = clean(rawValue)
  const previous = clean(rawPrevious)
  const changeFromPreviousPct =
    value !== null && previous !== null && previous !== 0 ? Math.round((100 * (value - previous)) / previous) : null
  return { key, kind, isIncreaseBad, value, previous, changeFromPreviousPct }
}

const num = (v: unknown): number | null => {
  if (v === null || v === undefined) return null
  const n = Number(v)
  return Number.isFinite(n) ? n : null
}

/** The HogQL of the overview: one row of (current, previous) pairs over one row per session. */
export function webOverviewHogQL(plan: WebPlan): string {
  const perSession = [
    'any(person_id) AS session_person_id',
    'session.session_id AS session_id',
    'min(session.$start_timestamp) AS start_timestamp',
  ]
  const metrics: [string, string][] = []
  if (plan.goal) {
    perSession.push(
      `countIf(${plan.goal}) AS conversion_count`,
      `any(if(${plan.goal}, person_id, NULL)) AS conversion_person_id`,
    )
    metrics.push(
      periodPair(plan, 'uniq', 'session_person_id'),
      periodPair(plan, 'sum', 'conversion_count'),
      periodPair(plan, 'uniq', 'conversion_person_id'),
    )
  } else {
    perSession.push(
      'any(session.$session_duration) AS session_duration',
      "countIf(event = '$pageview' OR event = '$screen') AS filtered_pageview_count",
      'any(session.$is_bounce) AS is_bounce',
    )
    metrics.push(
      periodPair(plan, 'uniq', 'session_person_id'),
      periodPair(plan, 'sum', 'filtered_pageview_count'),
      periodPair(plan, 'uniq', 'session_id'),
      periodPair(plan, 'avg', 'session_duration'),
      periodPair(plan, 'avg', 'is_bounce'),
    )
  }
  const where = [
    'notEmpty($session_id)',
    webEventCondition(plan),
    inPeriods(plan, 'timestamp'),
    ...(plan.filters ? [`(${plan.filters})`] : []),
  ].join(' AND ')
  const inner =
    `SELECT ${perSession.join(', ')} FROM ${eventsFrom(plan.sampling)} WHERE ${where} ` +
    `GROUP BY session_id HAVING ${inPeriods(plan, 'start_timestamp')}`
  return `SELECT ${metrics.flat().join(', ')} FROM (${inner})`
}

export function createWebOverviewRunner(deps: InsightDeps): NodeRunner {
  return async (node, ctx, run) => {
    const started = performance.now()
    const insight = await loadInsightContext(ctx, deps)
    const plan = webPlanOf(node, insight)
    const executed = await run(webOverviewHogQL(plan), ctx)
    ctx.stats.resultRows += executed.rows.length
    const row = executed.rows[0] ?? []
    const compared = plan.previous !== undefined
    const counted = (i: number) => unsample(row[i], plan.sampling)
    const prevCounted = (i: number) => (compared ? unsample(row[i], plan.sampling) : null)
    const prevRaw = (i: number) => (compared ? num(row[i]) : null)
    let results: WebOverviewItem[]
    if (plan.goal) {
      const rate = (conversions: number | null, visitors: number | null) =>
        conversions === null || visitors === null || visitors === 0 ? null : conversions / visitors
      results = [
        item('visitors', 'unit', counted(0), prevCounted(1)),
        item('total conversions', 'unit', counted(2), prevCounted(3)),
        item('unique conversions', 'unit', counted(4), prevCounted(5)),
        item(
          'conversion rate',
          'percentage',
          rate(num(row[4]), num(row[0])),
          compared ? rate(num(row[5]), num(row[1])) : null,
        ),
      ]
    } else {
      results = [
        item('visitors', 'unit', counted(0), prevCounted(1)),
        item('views', 'unit', counted(2), prevCounted(3)),
        item('sessions', 'unit', counted(4), prevCounted(5)),
        item('session duration', 'duration_s', num(row[6]), prevRaw(7)),
        item('bounce rate', 'percentage', num(row[8]), prevRaw(9), true),
      ]
    }
    return {
      results,
      samplingRate: samplingRate(plan.sampling),
      ...rangeStrings(plan.current),
      usedPreAggregatedTables: false,
      modifiers: isObject(node.modifiers) ? node.modifiers : {},
      hogql: executed.hogql,
      timings: [{ k: '.', t: (performance.now() - started) / 1000 }],
      error: null,
    }
  }
}
