/**
 * TrendsQuery (hogql.md §4.2, §4.12): one HogQL query per series and period, shaped into PostHog's result rows
 * (`data`, `labels`, `days`, `count`, `label`, `action`, `breakdown_value`, `compare_label`, `aggregated_value`).
 */
import { ValidationError } from '../../http/errors.js'
import { literal } from '../filters.js'
import { toZonedIso } from '../format.js'
import {
  BREAKDOWN_NULL,
  BREAKDOWN_OTHER,
  type BreakdownSpec,
  breakdownOf,
  breakdownValueExpr,
  cohortBreakdownExpr,
  compareBreakdowns,
  histogramExpr,
  histogramQuantilesExpr,
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
  bucketKey,
  bucketKeyHogQL,
  bucketLabel,
  intervalOf,
  previousPeriod,
  type ResolvedRange,
  rangeBoundsHogQL,
  resolveDateRange,
  resolvedDateRange,
  shiftedRange,
} from '../insights/date-range.js'
import { evaluateFormula, parseFormula } from '../insights/formula.js'
import { actorExpr, groupIndexOf, type MathPlan, mathPlan } from '../insights/math.js'
import {
  actionObject,
  eventsFrom,
  type SeriesNode,
  samplingOf,
  seriesEventCondition,
  seriesLabel,
  seriesOf,
  seriesPropertyCondition,
  sharedCondition,
} from '../insights/series.js'
import { fromLocal } from '../insights/time.js'
import type { HogQLExecutor, NodeRunner, RunContext } from '../runner.js'

const TOTAL_VALUE_DISPLAYS = new Set(['BoldNumber', 'ActionsPie', 'ActionsBarValue', 'ActionsTable', 'WorldMap'])
const MAX_ROWS = 50_000
const MAX_SERIES = 50

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const and = (parts: (string | undefined)[]) =>
  parts
    .filter((p): p is string => p !== undefined && p !== '')
    .map((p) => `(${p})`)
    .join(' AND ') || 'true'

interface Period {
  range: ResolvedRange
  label?: 'current' | 'previous'
}

/** One series' values per breakdown key: a value per bucket (or one total). */
interface SeriesResult {
  /** breakdown key → values per bucket index (or [total]) */
  values: Map<string, number[]>
  /** breakdown key → the breakdown value as results show it */
  breakdownValues: Map<string, unknown>
  hasOther: boolean
}

interface Plan {
  node: Record<string, unknown>
  series: SeriesNode[]
  maths: MathPlan[]
  groupIndex: number | undefined
  breakdown: BreakdownSpec
  totalValue: boolean
  cumulative: boolean
  smoothing: number
  sampling: number | undefined
  shared: string | undefined
  display: string
}

function trendsFilterOf(node: Record<string, unknown>): Record<string, unknown> {
  if (node.trendsFilter === undefined || node.trendsFilter === null) return {}
  if (!isObject(node.trendsFilter)) throw new ValidationError('trendsFilter must be an object.', 'trendsFilter')
  return node.trendsFilter
}

function formulasOf(filter: Record<string, unknown>): { formula: string; custom_name?: string }[] {
  if (Array.isArray(filter.formulaNodes) && filter.formulaNodes.length > 0) {
    return filter.formulaNodes.map((f, i) => {
      if (!isObject(f) || typeof f.formula !== 'string') {
        throw new ValidationError('A formula node needs a formula.', `trendsFilter__formulaNodes__${i}__formula`)
      }
      return { formula: f.formula, custom_name: typeof f.custom_name === 'string' ? f.custom_name : undefined }
    })
  }
  if (Array.isArray(filter.formulas) && filter.formulas.length > 0) {
    return filter.formulas.map((f, i) => {
      if (typeof f !== 'string') throw new ValidationError('Formulas are strings.', `trendsFilter__formulas__${i}`)
      return { formula: f }
    })
  }
  if (typeof filter.formula === 'string' && filter.formula.trim() !== '') return [{ formula: filter.formula }]
  return []
}

/** Rows of a query: [bucket?, breakdown?, value]. */
async function runRows(run: HogQLExecutor, ctx: RunContext, hogql: string): Promise<unknown[][]> {
  const executed = await run(hogql, ctx)
  ctx.stats.resultRows += executed.rows.length
  return executed.rows
}

/** The HogQL of one series over one period, with `breakdownExpr` as the breakdown value (text) if any. */
function seriesQuery(plan: Plan, index: number, range: ResolvedRange, breakdownExpr: string | undefined): string {
  const series = plan.series[index]
  let math = plan.maths[index]
  // cumulative distinct actors: each actor once, on their first day in the range
  if (plan.cumulative && math.kind === 'simple' && math.agg === `count(DISTINCT ${actorExpr(plan.groupIndex)})`) {
    math = { kind: 'first', ignoreFiltersForFirst: false }
  }
  const actor = actorExpr(plan.groupIndex)
  const bounds = rangeBoundsHogQL(range)
  const eventCondition = seriesEventCondition(series)
  const filters = and([seriesPropertyCondition(series), plan.shared])
  const actorPresent = plan.groupIndex === undefined ? undefined : `${actor} != ''`
  const bucket = plan.totalValue ? undefined : bucketKeyHogQL(range.interval, range.weekStartDay)
  const bd = breakdownExpr
  const keys = [bucket ? 'bucket' : undefined, bd ? 'bd' : undefined].filter((k): k is string => !!k)
  const groupBy = keys.length > 0 ? ` GROUP BY ${keys.join(', ')}` : ''
  const select = (value: string, bucketExpr = bucket, bdExpr = bd) =>
    [bucketExpr ? `${bucketExpr} AS bucket` : undefined, bdExpr ? `${bdExpr} AS bd` : undefined, `${value} AS value`]
      .filter(Boolean)
      .join(', ')
  const from = eventsFrom(plan.sampling)
  const scale = (agg: string, scaled: boolean) =>
    plan.sampling !== undefined && scaled ? `round(${agg} / ${plan.sampling})` : agg

  switch (math.kind) {
    case 'simple': {
      const where = and([
        eventCondition,
        filters,
        `timestamp >= ${bounds.from}`,
        `timestamp <= ${bounds.to}`,
        math.condition,
        actorPresent,
      ])
      return `SELECT ${select(scale(math.agg, math.scaled))} FROM ${from} WHERE ${where}${groupBy} LIMIT ${MAX_ROWS}`
    }
    case 'per_actor': {
      const where = and([
        eventCondition,
        filters,
        `timestamp >= ${bounds.from}`,
        `timestamp <= ${bounds.to}`,
        actorPresent,
      ])
      const innerKeys = [...keys, 'actor']
      const inner =
        `SELECT ${[bucket ? `${bucket} AS bucket` : undefined, bd ? `${bd} AS bd` : undefined, `${actor} AS actor`, 'count() AS c'].filter(Boolean).join(', ')} ` +
        `FROM ${from} WHERE ${where} GROUP BY ${innerKeys.join(', ')}`
      return `SELECT ${select(`ifNull(${math.outer('c')}, 0)`, bucket ? 'bucket' : undefined, bd ? 'bd' : undefined)} FROM (${inner})${groupBy} LIMIT ${MAX_ROWS}`
    }
    case 'window': {
      if (plan.totalValue) {
        const start = `toStartOfDay(${bounds.to}) - toIntervalDay(${math.days - 1})`
        const where = and([eventCondition, filters, `timestamp >= ${start}`, `timestamp <= ${bounds.to}`, actorPresent])
        return `SELECT ${select(scale(`count(DISTINCT ${actor})`, true))} FROM ${from} WHERE ${where}${groupBy} LIMIT ${MAX_ROWS}`
      }
      const hourly = range.interval === 'hour'
      const unit = hourly ? 'Hour' : 'Day'
      const steps = hourly ? math.days * 24 : math.days
      const start = `${bounds.from} - toInterval${unit}(${steps - 1})`
      const where = and([eventCondition, filters, `timestamp >= ${start}`, `timestamp <= ${bounds.to}`, actorPresent])
      const period = hourly ? 'toStartOfHour(timestamp)' : 'toDate(timestamp)'
      const inner =
        `SELECT ${[`${actor} AS actor`, bd ? `${bd} AS bd` : undefined, `${period} AS period`].filter(Boolean).join(', ')} ` +
        `FROM ${from} WHERE ${where} GROUP BY ${['actor', bd ? 'bd' : undefined, 'period'].filter(Boolean).join(', ')}`
      const expanded = `SELECT actor, ${bd ? 'bd, ' : ''}period + toInterval${unit}(arrayJoin(range(0, ${steps}))) AS active FROM (${inner})`
      return `SELECT ${select(scale('count(DISTINCT actor)', true), 'toString(active)', bd ? 'bd' : undefined)} FROM (${expanded}) WHERE active <= ${bounds.to}${groupBy} LIMIT ${MAX_ROWS}`
    }
    case 'first': {
      // the first event of each actor, then counted where it falls, if it lies in the range and passes the filters
      const upper = `timestamp <= ${bounds.to}`
      const where = math.ignoreFiltersForFirst
        ? and([eventCondition, upper, actorPresent])
        : and([
            eventCondition,
            filters,
            upper,
            actorPresent,
            plan.cumulative ? `timestamp >= ${bounds.from}` : undefined,
          ])
      const passes = math.ignoreFiltersForFirst ? filters : 'true'
      const inner =
        `SELECT ${[`${actor} AS actor`, 'min(timestamp) AS first_ts', `argMin(${passes}, timestamp) AS ok`, bd ? `argMin(${bd}, timestamp) AS bd` : undefined].filter(Boolean).join(', ')} ` +
        `FROM ${from} WHERE ${where} GROUP BY actor`
      const bucketOfFirst = bucket ? bucketKeyHogQL(range.interval, range.weekStartDay, 'first_ts') : undefined
      return `SELECT ${select(scale('count()', true), bucketOfFirst, bd ? 'bd' : undefined)} FROM (${inner}) WHERE first_ts >= ${bounds.from} AND ok${groupBy} LIMIT ${MAX_ROWS}`
    }
  }
}

/** The breakdown value expression of a series (and for value breakdowns the histogram bins, from one query). */
async function breakdownExprOf(
  plan: Plan,
  index: number,
  range: ResolvedRange,
  ctx: RunContext,
  run: HogQLExecutor,
): Promise<string | undefined> {
  const b = plan.breakdown
  if (b.kind === 'none') return undefined
  if (b.kind === 'cohort') return cohortBreakdownExpr(b.cohorts)
  const parts: string[] = []
  for (const dim of b.dims) {
    const raw = rawBreakdownExpr(dim)
    if (dim.histogramBinCount === undefined) {
      parts.push(breakdownValueExpr(raw))
      continue
    }
    const series = plan.series[index]
    const bounds = rangeBoundsHogQL(range)
    const where = and([
      seriesEventCondition(series),
      seriesPropertyCondition(series),
      plan.shared,
      `timestamp >= ${bounds.from}`,
      `timestamp <= ${bounds.to}`,
    ])
    const rows = await runRows(
      run,
      ctx,
      `SELECT ${histogramQuantilesExpr(raw, dim.histogramBinCount)} FROM events WHERE ${where}`,
    )
    const edges = (Array.isArray(rows[0]?.[0]) ? (rows[0][0] as unknown[]) : []).map(Number).filter(Number.isFinite)
    parts.push(histogramExpr(raw, edges))
  }
  return b.multi ? `[${parts.join(', ')}]` : parts[0]
}

const keyOf = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value))

/** Runs one series over one period: values per breakdown key, with values beyond the limit in the other bucket. */
async function runSeries(
  plan: Plan,
  index: number,
  range: ResolvedRange,
  ctx: RunContext,
  run: HogQLExecutor,
): Promise<SeriesResult> {
  const bdExpr = await breakdownExprOf(plan, index, range, ctx, run)
  const bucketIndex = new Map(range.buckets.map((b, i) => [bucketKey(b, range.interval), i]))
  const width = plan.totalValue ? 1 : range.buckets.length
  const collect = (rows: unknown[][]) => {
    const values = new Map<string, number[]>()
    const breakdownValues = new Map<string, unknown>()
    for (const row of rows) {
      let i = 0
      let at = 0
      if (!plan.totalValue) {
        const found = bucketIndex.get(String(row[i++]))
        if (found === undefined) continue
        at = found
      }
      const value = bdExpr ? row[i++] : undefined
      const key = bdExpr ? keyOf(value) : ''
      let data = values.get(key)
      if (!data) {
        data = new Array(width).fill(0)
        values.set(key, data)
        breakdownValues.set(key, value)
      }
      data[at] += Number(row[i]) || 0
    }
    return { values, breakdownValues }
  }
  const first = collect(await runRows(run, ctx, seriesQuery(plan, index, range, bdExpr)))
  const b = plan.breakdown
  if (b.kind !== 'values' || first.values.size <= b.limit) return { ...first, hasOther: false }
  // more values than the limit: keep the top ones, and count the rest again as one "other" value
  const ranked = [...first.values.entries()]
    .map(([key, data]) => ({
      key,
      total: data.reduce((s, v) => s + v, 0),
      isNull: b.multi
        ? (first.breakdownValues.get(key) as string[]).every((v) => v === BREAKDOWN_NULL)
        : key === BREAKDOWN_NULL,
      isOther: false,
    }))
    .sort(compareBreakdowns)
  const kept = ranked.slice(0, b.limit).map((r) => r.key)
  const mapped = b.multi
    ? `if(toJSONString(${bdExpr}) IN (${kept.map(literal).join(', ')}), ${bdExpr}, arrayMap(x -> ${literal(BREAKDOWN_OTHER)}, ${bdExpr}))`
    : `if(${bdExpr} IN (${kept.map(literal).join(', ')}), ${bdExpr}, ${literal(BREAKDOWN_OTHER)})`
  if (b.hideOther) {
    const values = new Map([...first.values].filter(([k]) => kept.includes(k)))
    return { values, breakdownValues: first.breakdownValues, hasOther: true }
  }
  const second = collect(await runRows(run, ctx, seriesQuery(plan, index, range, mapped)))
  return { ...second, hasOther: true }
}

function smooth(data: number[], n: number): number[] {
  if (n <= 1) return data
  return data.map((_, i) => {
    const window = data.slice(Math.max(0, i - n + 1), i + 1)
    return Math.floor(window.reduce((s, v) => s + v, 0) / window.length)
  })
}

function cumulate(data: number[]): number[] {
  let sum = 0
  return data.map((v) => {
    sum += v
    return sum
  })
}

export function createTrendsRunner(deps: InsightDeps): NodeRunner {
  return async (node, ctx, run) => {
    const started = performance.now()
    const insight = await loadInsightContext(ctx, deps)
    const plan = planOf(node, insight)
    const interval = intervalOf(node.interval)
    const earliest = wantsAllTime(node) ? await earliestEvent(ctx, run) : undefined
    const dateRange = isObject(node.dateRange) ? node.dateRange : undefined
    const current = resolveDateRange(dateRange, interval, insight.team, insight.now, earliest)
    const compare = isObject(node.compareFilter) ? node.compareFilter : {}
    const periods: Period[] = [{ range: current }]
    if (compare.compare === true) {
      periods[0].label = 'current'
      const previous =
        typeof compare.compare_to === 'string' && compare.compare_to !== ''
          ? shiftedRange(current, compare.compare_to)
          : previousPeriod(current)
      periods.push({ range: previous, label: 'previous' })
    }
    const cohortNames =
      plan.breakdown.kind === 'cohort' ? ((await deps.cohortNames?.(ctx.team.id)) ?? new Map()) : undefined
    /** a cohort breakdown's label part: the cohort's name, "all users" for everyone (PostHog's id 0) */
    const cohortLabel = (value: unknown) =>
      value === 'all' ? 'all users' : (cohortNames?.get(Number(value)) ?? String(value))
    const formulas = formulasOf(trendsFilterOf(node)).map((f, i) => ({
      ...f,
      ast: parseFormula(f.formula, plan.series.length, `trendsFilter__formulas__${i}`),
    }))

    const results: Record<string, unknown>[] = []
    let hasMore = false
    for (const period of periods) {
      const perSeries: SeriesResult[] = []
      for (let i = 0; i < plan.series.length; i++) {
        const result = await runSeries(plan, i, period.range, ctx, run)
        for (const [key, data] of result.values) {
          let next = plan.totalValue ? data : smooth(data, plan.smoothing)
          if (plan.cumulative && !plan.totalValue) next = cumulate(next)
          result.values.set(key, next)
        }
        hasMore ||= result.hasOther
        perSeries.push(result)
      }
      const shape = (data: number[], extra: Record<string, unknown>): Record<string, unknown> => {
        const range = period.range
        const base: Record<string, unknown> = plan.totalValue
          ? { data: [], labels: [], days: [], count: 0, aggregated_value: data[0] ?? 0 }
          : {
              data,
              labels: range.buckets.map((b) => bucketLabel(b, range)),
              days: range.buckets.map((b) => bucketKey(b, range.interval)),
              count: plan.cumulative ? (data[data.length - 1] ?? 0) : data.reduce((s, v) => s + v, 0),
            }
        if (period.label) Object.assign(base, { compare: true, compare_label: period.label })
        return { ...base, ...extra, filter: legacyFilter(node, plan, range) }
      }
      if (formulas.length > 0) {
        for (const formula of formulas) {
          const keys = [...new Set(perSeries.flatMap((s) => [...s.values.keys()]))]
          const rows = keys.map((key) => {
            const width = plan.totalValue ? 1 : period.range.buckets.length
            const data = Array.from({ length: width }, (_, b) =>
              evaluateFormula(
                formula.ast,
                perSeries.map((s) => s.values.get(key)?.[b] ?? 0),
              ),
            )
            const value = perSeries.find((s) => s.breakdownValues.has(key))?.breakdownValues.get(key)
            return { key, data, value }
          })
          for (const row of sortRows(rows, plan)) {
            const label = formula.custom_name || `Formula (${formula.formula})`
            results.push(
              shape(row.data, {
                label: plan.breakdown.kind === 'none' ? label : breakdownLabel(row.value),
                action: null,
                ...(plan.breakdown.kind === 'none' ? {} : { breakdown_value: breakdownValueOut(row.value, plan) }),
              }),
            )
          }
        }
        continue
      }
      perSeries.forEach((result, i) => {
        const series = plan.series[i]
        const name = seriesLabel(series, insight.actions)
        const rows = [...result.values.entries()].map(([key, data]) => ({
          key,
          data,
          value: result.breakdownValues.get(key),
        }))
        if (rows.length === 0 && plan.breakdown.kind === 'none') {
          rows.push({
            key: '',
            data: new Array(plan.totalValue ? 1 : period.range.buckets.length).fill(0),
            value: undefined,
          })
        }
        const days = period.range.buckets.map((b) =>
          toZonedIso(fromLocal(b, insight.team.timezone).toISOString(), insight.team.timezone),
        )
        for (const row of sortRows(rows, plan)) {
          const label =
            plan.breakdown.kind === 'none'
              ? name
              : plan.breakdown.kind === 'cohort'
                ? `${name} - ${cohortLabel(row.value)}`
                : plan.series.length > 1
                  ? `${name} - ${breakdownLabel(row.value)}`
                  : breakdownLabel(row.value)
          const math = effectiveMath(series, period.range)
          results.push(
            shape(row.data, {
              label,
              action: actionObject(series, i, insight.actions, { math, days }),
              ...(plan.breakdown.kind === 'none' ? {} : { breakdown_value: breakdownValueOut(row.value, plan) }),
            }),
          )
        }
      })
    }
    return {
      results,
      ...(plan.breakdown.kind === 'values' ? { hasMore } : {}),
      timings: [{ k: '.', t: (performance.now() - started) / 1000 }],
      modifiers: isObject(node.modifiers) ? node.modifiers : {},
      resolved_date_range: resolvedDateRange(current),
      ...(periods[1] ? { resolved_compare_date_range: resolvedDateRange(periods[1].range) } : {}),
      hogql: ctx.stats.hogql ?? null,
      error: null,
    }
  }
}

/** WAU on weekly or monthly graphs and MAU on monthly ones are plain distinct actors per bucket. */
function effectiveMath(series: SeriesNode, range: ResolvedRange): string {
  const math = series.math ?? 'total'
  if (math === 'weekly_active' && (range.interval === 'week' || range.interval === 'month')) return 'dau'
  if (math === 'monthly_active' && range.interval === 'month') return 'dau'
  return math
}

function sortRows<T extends { key: string; data: number[]; value: unknown }>(rows: T[], plan: Plan): T[] {
  if (plan.breakdown.kind === 'none') return rows
  const isNull = (v: unknown) => (Array.isArray(v) ? v.every((x) => x === BREAKDOWN_NULL) : v === BREAKDOWN_NULL)
  const isOther = (v: unknown) => (Array.isArray(v) ? v.every((x) => x === BREAKDOWN_OTHER) : v === BREAKDOWN_OTHER)
  return rows
    .map((r) => ({ r, total: r.data.reduce((s, v) => s + v, 0), isNull: isNull(r.value), isOther: isOther(r.value) }))
    .sort((a, b) => compareBreakdowns({ ...a, key: a.r.key }, { ...b, key: b.r.key }))
    .map((x) => x.r)
}

const breakdownLabel = (value: unknown) => (Array.isArray(value) ? value.join('::') : String(value ?? ''))

function breakdownValueOut(value: unknown, plan: Plan): unknown {
  if (plan.breakdown.kind === 'cohort') return value === 'all' ? 'all' : Number(value)
  return value
}

function legacyFilter(node: Record<string, unknown>, plan: Plan, range: ResolvedRange): Record<string, unknown> {
  const dateRange = isObject(node.dateRange) ? node.dateRange : {}
  const breakdown = isObject(node.breakdownFilter) ? node.breakdownFilter : {}
  return {
    insight: 'TRENDS',
    interval: range.interval,
    display: plan.display,
    date_from: dateRange.date_from ?? '-7d',
    date_to: dateRange.date_to ?? null,
    properties: Array.isArray(node.properties) ? node.properties : [],
    filter_test_accounts: node.filterTestAccounts === true,
    ...(breakdown.breakdown !== undefined
      ? { breakdown: breakdown.breakdown, breakdown_type: breakdown.breakdown_type ?? 'event' }
      : {}),
    ...(isObject(node.compareFilter) && node.compareFilter.compare === true ? { compare: true } : {}),
  }
}

function planOf(node: Record<string, unknown>, insight: InsightContext): Plan {
  const series = seriesOf(node.series, { max: MAX_SERIES })
  for (const s of series) {
    if (s.kind === 'ActionsNode' && !insight.actions.has(s.id as number)) {
      throw new ValidationError(`Action ${s.id} does not exist.`, `series__${series.indexOf(s)}__id`, 'does_not_exist')
    }
  }
  const groupIndex = groupIndexOf(node.aggregation_group_type_index, 'aggregation_group_type_index')
  const interval = intervalOf(node.interval)
  const filter = trendsFilterOf(node)
  const display = typeof filter.display === 'string' ? filter.display : 'ActionsLineGraph'
  const maths = series.map((s, i) => {
    let effective = s
    const math = s.math ?? 'total'
    if (
      (math === 'weekly_active' && (interval === 'week' || interval === 'month')) ||
      (math === 'monthly_active' && interval === 'month')
    ) {
      effective = { ...s, math: 'dau' }
    }
    const plan = mathPlan(effective, i, groupIndex)
    if (plan.kind === 'window' && interval === 'minute' && !TOTAL_VALUE_DISPLAYS.has(display)) {
      throw new ValidationError(`math "${math}" cannot be shown by minute: choose hour or longer.`, 'interval')
    }
    return plan
  })
  const smoothingRaw = filter.smoothingIntervals
  if (smoothingRaw !== undefined && smoothingRaw !== null && (typeof smoothingRaw !== 'number' || smoothingRaw < 1)) {
    throw new ValidationError('smoothingIntervals must be a positive integer.', 'trendsFilter__smoothingIntervals')
  }
  return {
    node,
    series,
    maths,
    groupIndex,
    breakdown: breakdownOf(node.breakdownFilter),
    totalValue: TOTAL_VALUE_DISPLAYS.has(display),
    cumulative: display === 'ActionsLineGraphCumulative',
    smoothing: typeof smoothingRaw === 'number' ? Math.floor(smoothingRaw) : 1,
    sampling: samplingOf(node.samplingFactor),
    shared: sharedCondition(node, insight.testAccountFilters),
    display,
  }
}
