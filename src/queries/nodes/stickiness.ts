/**
 * StickinessQuery (hogql.md §4.6, §4.12): per series, how many actors were active in exactly k intervals of the
 * range (k = 1…N), or in k or more when cumulative; compare periods interleave per series.
 */
import { ValidationError } from '../../http/errors.js'
import { earliestEvent, type InsightDeps, loadInsightContext, wantsAllTime } from '../insights/context.js'
import {
  bucketKeyHogQL,
  intervalOf,
  previousPeriod,
  type ResolvedRange,
  rangeBoundsHogQL,
  resolveDateRange,
  resolvedDateRange,
  shiftedRange,
} from '../insights/date-range.js'
import { actorExpr, groupIndexOf } from '../insights/math.js'
import {
  actionObject,
  eventsFrom,
  samplingOf,
  seriesEventCondition,
  seriesLabel,
  seriesOf,
  seriesPropertyCondition,
  sharedCondition,
} from '../insights/series.js'
import type { NodeRunner } from '../runner.js'

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const and = (parts: (string | undefined)[]) =>
  parts
    .filter((p): p is string => !!p)
    .map((p) => `(${p})`)
    .join(' AND ') || 'true'

export function createStickinessRunner(deps: InsightDeps): NodeRunner {
  return async (node, ctx, run) => {
    const started = performance.now()
    const insight = await loadInsightContext(ctx, deps)
    const series = seriesOf(node.series)
    series.forEach((s, i) => {
      if (s.kind === 'ActionsNode' && !insight.actions.has(s.id as number)) {
        throw new ValidationError(`Action ${s.id} does not exist.`, `series__${i}__id`, 'does_not_exist')
      }
    })
    const interval = intervalOf(node.interval)
    const groupIndex = groupIndexOf(node.aggregation_group_type_index, 'aggregation_group_type_index')
    const filter = isObject(node.stickinessFilter) ? node.stickinessFilter : {}
    const cumulative = filter.computedAs === 'cumulative'
    const shared = sharedCondition(node, insight.testAccountFilters)
    const sampling = samplingOf(node.samplingFactor)
    const earliest = wantsAllTime(node) ? await earliestEvent(ctx, run) : undefined
    const current = resolveDateRange(
      isObject(node.dateRange) ? node.dateRange : undefined,
      interval,
      insight.team,
      insight.now,
      earliest,
    )
    const compare = isObject(node.compareFilter) ? node.compareFilter : {}
    const periods: { range: ResolvedRange; label?: string }[] = [{ range: current }]
    if (compare.compare === true) {
      periods[0].label = 'current'
      const previous =
        typeof compare.compare_to === 'string' && compare.compare_to !== ''
          ? shiftedRange(current, compare.compare_to)
          : previousPeriod(current)
      periods.push({ range: previous, label: 'previous' })
    }
    const actor = actorExpr(groupIndex)
    const results: Record<string, unknown>[] = []
    for (let i = 0; i < series.length; i++) {
      for (const period of periods) {
        const n = period.range.buckets.length
        const bounds = rangeBoundsHogQL(period.range)
        const where = and([
          seriesEventCondition(series[i]),
          seriesPropertyCondition(series[i]),
          shared,
          `timestamp >= ${bounds.from}`,
          `timestamp <= ${bounds.to}`,
          groupIndex === undefined ? undefined : `${actor} != ''`,
        ])
        const bucket = bucketKeyHogQL(interval, period.range.weekStartDay)
        const executed = await run(
          `SELECT intervals, count() FROM (SELECT ${actor} AS actor, count(DISTINCT ${bucket}) AS intervals ` +
            `FROM ${eventsFrom(sampling)} WHERE ${where} GROUP BY actor) GROUP BY intervals LIMIT 50000`,
          ctx,
        )
        ctx.stats.resultRows += executed.rows.length
        const exact = new Array(n).fill(0)
        for (const [k, count] of executed.rows) {
          const at = Number(k) - 1
          if (at >= 0 && at < n) exact[at] += Number(count)
        }
        const actors = exact.reduce((s, v) => s + v, 0)
        const data = cumulative ? exact.map((_, k) => exact.slice(k).reduce((s, v) => s + v, 0)) : exact
        const unit = (k: number) => `${k} ${interval}${k === 1 ? '' : 's'}`
        results.push({
          count: actors,
          data,
          days: Array.from({ length: n }, (_, k) => k + 1),
          labels: Array.from({ length: n }, (_, k) => (cumulative ? `${unit(k + 1)} or more` : unit(k + 1))),
          label: seriesLabel(series[i], insight.actions),
          action: actionObject(series[i], i, insight.actions),
          ...(period.label ? { compare: true, compare_label: period.label } : {}),
        })
      }
    }
    return {
      results,
      timings: [{ k: '.', t: (performance.now() - started) / 1000 }],
      modifiers: isObject(node.modifiers) ? node.modifiers : {},
      resolved_date_range: resolvedDateRange(current),
      hogql: ctx.stats.hogql ?? null,
      error: null,
    }
  }
}
