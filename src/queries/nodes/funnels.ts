/**
 * FunnelsQuery (hogql.md §4.3, §4.12 "Funnels"). Ordered and strict funnels are matched inside the engine
 * (`funnel-engine.ts`): one HogQL query gathers each actor's step and exclusion events (every event of the actor
 * for strict funnels), walks them and returns totals — step counts and conversion times per breakdown value,
 * the conversion times for the time-to-convert histogram, or entrances and conversions per interval for trends.
 * Unordered funnels, and the actors behind a funnel step, still read each actor's events as arrays and walk them
 * with `funnel-match.ts` (the same walk, which the engine's mirrors).
 */
import { ValidationError } from '../../http/errors.js'
import { type BreakdownDim, breakdownOf, rawBreakdownExpr } from '../insights/breakdown.js'
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
  intervalOf,
  type ResolvedRange,
  rangeBoundsHogQL,
  resolveDateRange,
  resolvedDateRange,
} from '../insights/date-range.js'
import {
  breakdownValuesExpr,
  codedPathColumns,
  type EngineFunnel,
  eventCodeExpr,
  isCodable,
  mixedExpr,
  pathExpr,
  truncatedExpr,
} from '../insights/funnel-engine.js'
import {
  type Attribution,
  average,
  type FunnelEvent,
  type FunnelOptions,
  type FunnelOrder,
  type FunnelPath,
  matchActor,
  median,
  stepDuration,
  timeToConvertBins,
} from '../insights/funnel-match.js'
import { actorExpr, groupIndexOf } from '../insights/math.js'
import {
  type ActionInfo,
  eventsFrom,
  type SeriesNode,
  samplingOf,
  seriesEventCondition,
  seriesOf,
  seriesPropertyCondition,
  sharedCondition,
} from '../insights/series.js'
import { localDay, MONTHS } from '../insights/time.js'
import type { HogQLExecutor, NodeRunner, RunContext } from '../runner.js'

const ORDERS: FunnelOrder[] = ['ordered', 'strict', 'unordered']
const VIZ = ['steps', 'time_to_convert', 'trends']
const ATTRIBUTIONS: Attribution[] = ['first_touch', 'last_touch', 'all_events', 'step']
const UNIT_SECONDS: Record<string, number> = {
  second: 1,
  minute: 60,
  hour: 3600,
  day: 86_400,
  week: 7 * 86_400,
  month: 31 * 86_400,
}
const MAX_STEPS = 30
/** Actors per query: more are read in pages split by a hash of the actor. */
const ACTORS_PER_PAGE = 10_000
const OTHER = 'Other'
const DEFAULT_BREAKDOWN_LIMIT = 25

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const and = (parts: (string | undefined)[]) =>
  parts
    .filter((p): p is string => !!p)
    .map((p) => `(${p})`)
    .join(' AND ') || 'true'

interface Exclusion {
  node: SeriesNode
  from: number
  to: number
}

interface Plan {
  series: SeriesNode[]
  options: FunnelOptions
  viz: string
  exclusions: Exclusion[]
  /** breakdown properties (several: values are arrays) */
  dims: BreakdownDim[]
  multi: boolean
  breakdownLimit: number
  actor: string
  actorPresent?: string
  shared?: string
  sampling?: number
  binCount?: number
  fromStep: number
  toStep: number
}

const stepCondition = (s: SeriesNode) => and([seriesEventCondition(s), seriesPropertyCondition(s)])
const FUNNEL_MATHS = ['total', 'first_time_for_user', 'first_time_for_user_with_filters']

/**
 * A step's events; with a first-time math only the actor's first-ever event of the step (ignoring the step's
 * filters, or the first one passing them with `first_time_for_user_with_filters`), up to the end of the range.
 */
function seriesStepCondition(s: SeriesNode, actor: string, to: string): string {
  const math = s.math ?? 'total'
  if (math === 'total') return stepCondition(s)
  const first = math === 'first_time_for_user' ? seriesEventCondition(s) : stepCondition(s)
  return and([
    stepCondition(s),
    `uuid IN (SELECT argMin(uuid, timestamp) FROM events WHERE (${first}) AND timestamp <= ${to} GROUP BY ${actor})`,
  ])
}

function intIn(value: unknown, attr: string, min: number, max: number, fallback: number): number {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ValidationError(`Must be an integer from ${min} to ${max}.`, attr)
  }
  return value
}

function choice<T extends string>(value: unknown, choices: readonly T[], fallback: T, attr: string): T {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) {
    throw new ValidationError(
      `Input should be ${choices.map((c) => `'${c}'`).join(', ')}; got ${JSON.stringify(value)}.`,
      attr,
      'invalid_choice',
    )
  }
  return value as T
}

function planOf(node: Record<string, unknown>, actions: Map<number, ActionInfo>, testAccountFilters: unknown[]): Plan {
  const series = seriesOf(node.series, { max: MAX_STEPS })
  if (series.length < 2) throw new ValidationError('Funnels need at least two steps.', 'series')
  series.forEach((s, i) => {
    if (s.kind === 'ActionsNode' && !actions.has(s.id as number)) {
      throw new ValidationError(`Action ${s.id} does not exist.`, `series__${i}__id`, 'does_not_exist')
    }
    if (s.math !== undefined && s.math !== null && !FUNNEL_MATHS.includes(s.math)) {
      throw new ValidationError(
        `Funnel steps take math ${FUNNEL_MATHS.map((m) => `"${m}"`).join(', ')}.`,
        `series__${i}__math`,
        'invalid_choice',
      )
    }
  })
  if (node.funnelsFilter !== undefined && node.funnelsFilter !== null && !isObject(node.funnelsFilter)) {
    throw new ValidationError('funnelsFilter must be an object.', 'funnelsFilter')
  }
  const f = isObject(node.funnelsFilter) ? node.funnelsFilter : {}
  const n = series.length
  const order = choice(f.funnelOrderType, ORDERS, 'ordered', 'funnelsFilter__funnelOrderType')
  const viz = choice(f.funnelVizType, VIZ, 'steps', 'funnelsFilter__funnelVizType')
  const windowInterval = intIn(f.funnelWindowInterval, 'funnelsFilter__funnelWindowInterval', 1, 100_000, 14)
  const unit = choice(
    f.funnelWindowIntervalUnit,
    Object.keys(UNIT_SECONDS),
    'day',
    'funnelsFilter__funnelWindowIntervalUnit',
  )
  const attribution = choice(
    f.breakdownAttributionType,
    ATTRIBUTIONS,
    'first_touch',
    'funnelsFilter__breakdownAttributionType',
  )
  const attributionStep =
    attribution === 'step'
      ? intIn(f.breakdownAttributionValue, 'funnelsFilter__breakdownAttributionValue', 0, n - 1, 0)
      : undefined
  if (order === 'unordered' && attribution === 'step' && attributionStep !== 0) {
    throw new ValidationError(
      'Only the first step can be used for breakdown attribution in unordered funnels.',
      'funnelsFilter__breakdownAttributionValue',
    )
  }
  const exclusions: Exclusion[] = []
  if (f.exclusions !== undefined && f.exclusions !== null) {
    if (!Array.isArray(f.exclusions))
      throw new ValidationError('exclusions must be a list.', 'funnelsFilter__exclusions')
    f.exclusions.forEach((raw, i) => {
      const at = `funnelsFilter__exclusions__${i}`
      const [exclusion] = seriesOf([raw], { attr: 'funnelsFilter__exclusions' })
      if (exclusion.kind === 'ActionsNode' && !actions.has(exclusion.id as number)) {
        throw new ValidationError(`Action ${exclusion.id} does not exist.`, `${at}__id`, 'does_not_exist')
      }
      const item = raw as Record<string, unknown>
      const from = intIn(item.funnelFromStep, `${at}__funnelFromStep`, 0, n - 2, 0)
      const to = intIn(item.funnelToStep, `${at}__funnelToStep`, 1, n - 1, n - 1)
      if (from >= to) {
        throw new ValidationError(
          'Exclusion event range is invalid. End of range should be greater than start.',
          `${at}__funnelToStep`,
        )
      }
      if (order === 'unordered' && (from !== 0 || to !== n - 1)) {
        throw new ValidationError('Partial Exclusions not allowed in unordered funnels', at)
      }
      exclusions.push({ node: exclusion, from, to })
    })
  }
  const optional = new Set<number>()
  series.forEach((s, i) => {
    if ((s as unknown as Record<string, unknown>).optionalInFunnel === true) {
      if (i === 0)
        throw new ValidationError('The first step of a funnel cannot be optional.', 'series__0__optionalInFunnel')
      if (order === 'unordered') {
        throw new ValidationError('Unordered funnels have no optional steps.', `series__${i}__optionalInFunnel`)
      }
      optional.add(i + 1)
    }
  })
  const breakdown = breakdownOf(node.breakdownFilter)
  if (breakdown.kind === 'cohort') {
    throw new ValidationError('Funnels break down by properties, not by cohorts.', 'breakdownFilter__breakdown_type')
  }
  const dims = breakdown.kind === 'values' ? breakdown.dims : []
  const groupIndex = groupIndexOf(node.aggregation_group_type_index, 'aggregation_group_type_index')
  const byHogQL =
    typeof f.funnelAggregateByHogQL === 'string' && f.funnelAggregateByHogQL.trim() !== ''
      ? `(${f.funnelAggregateByHogQL})`
      : undefined
  const actor = byHogQL ?? actorExpr(groupIndex)
  // the steps that time to convert and trends measure between (steps ignore them, as PostHog does)
  const measures = viz !== 'steps'
  const fromStep = measures ? intIn(f.funnelFromStep, 'funnelsFilter__funnelFromStep', 0, n - 2, 0) : 0
  const toStep = measures ? intIn(f.funnelToStep, 'funnelsFilter__funnelToStep', 1, n - 1, n - 1) : n - 1
  if (fromStep >= toStep) {
    throw new ValidationError('funnelToStep must come after funnelFromStep.', 'funnelsFilter__funnelToStep')
  }
  if (
    f.binCount !== undefined &&
    f.binCount !== null &&
    (typeof f.binCount !== 'number' || !Number.isFinite(f.binCount))
  ) {
    throw new ValidationError('binCount must be a number.', 'funnelsFilter__binCount')
  }
  const binCount = typeof f.binCount === 'number' ? Math.round(f.binCount) : undefined
  return {
    series,
    options: {
      steps: n,
      order,
      window: windowInterval * UNIT_SECONDS[unit],
      optional,
      attribution,
      attributionStep,
    },
    viz,
    exclusions,
    dims,
    multi: breakdown.kind === 'values' && breakdown.multi,
    breakdownLimit: breakdown.kind === 'values' ? breakdown.limit : DEFAULT_BREAKDOWN_LIMIT,
    actor,
    actorPresent: groupIndex !== undefined && !byHogQL ? `${actor} != ''` : undefined,
    shared: sharedCondition(node, testAccountFilters),
    sampling: samplingOf(node.samplingFactor),
    binCount,
    fromStep,
    toStep,
  }
}

interface EventColumns {
  from: string
  where: string
  /** the steps an event matches (1-based), and −(k + 1) for an exclusion that applies after k steps */
  steps: string
  /** the same as bit masks: bit i − 1 for step i, bit k − 1 for an exclusion that applies after k steps */
  stepMask: string
  exclusionMask: string
  /** the breakdown text ('' when missing), and whether it was set */
  bd: string
  hasBd: string
}

/** The events a funnel reads and what each one means to it. */
function eventColumns(plan: Plan, range: ResolvedRange): EventColumns {
  const n = plan.series.length
  const bounds = rangeBoundsHogQL(range)
  const stepConds = plan.series.map((s) => seriesStepCondition(s, plan.actor, bounds.to))
  const exclusionConds: string[] = []
  const exclusionBits: string[] = []
  for (let k = 1; k < n; k++) {
    // exclusions that apply to actors who completed k steps (between step k − 1 and step k)
    const applying = plan.exclusions.filter((e) => e.from < k && k <= e.to).map((e) => stepCondition(e.node))
    if (applying.length > 0) {
      const any = applying.map((c) => `(${c})`).join(' OR ')
      exclusionConds.push(`_toInt64(if(${any}, ${-(k + 1)}, 0))`)
      exclusionBits.push(`if(${any}, ${2 ** (k - 1)}, 0)`)
    }
  }
  const steps = `arrayFilter(x -> x != 0, [${[...stepConds.map((c, i) => `_toInt64(if(${c}, ${i + 1}, 0))`), ...exclusionConds].join(', ')}])`
  const stepMask = `_toUInt64(${stepConds.map((c, i) => `if(${c}, ${2 ** i}, 0)`).join(' + ')})`
  const exclusionMask = `_toUInt64(${exclusionBits.length === 0 ? '0' : exclusionBits.join(' + ')})`
  const relevant = [...stepConds, ...plan.exclusions.map((e) => stepCondition(e.node))]
    .map((c) => `(${c})`)
    .join(' OR ')
  const where = and([
    plan.shared,
    `timestamp >= ${bounds.from}`,
    `timestamp <= ${bounds.to}`,
    plan.actorPresent,
    plan.options.order === 'strict' ? undefined : relevant,
  ])
  // one text per event: the value ('' when missing), or the JSON array of values for several properties
  const texts = plan.dims.map((d) => `ifNull(toString(${rawBreakdownExpr(d)}), '')`)
  const bd = plan.dims.length === 0 ? "''" : plan.multi ? `toJSONString([${texts.join(', ')}])` : texts[0]
  const hasBd =
    plan.dims.length === 0
      ? 'false'
      : plan.multi
        ? `arrayExists(x -> x != '', [${texts.join(', ')}])`
        : `isNotNull(${rawBreakdownExpr(plan.dims[0])})`
  return { from: eventsFrom(plan.sampling), where, steps, stepMask, exclusionMask, bd, hasBd }
}

/** Reads every actor's funnel events, in pages of about ACTORS_PER_PAGE actors (the walker's input). */
async function readActors(
  plan: Plan,
  range: ResolvedRange,
  ctx: RunContext,
  run: HogQLExecutor,
  /** filled with each actor's id, in the order of the result */
  actorIds?: string[],
): Promise<FunnelEvent[][]> {
  const { from, where, steps: stepsExpr, bd, hasBd } = eventColumns(plan, range)
  const counted = await run(`SELECT count(DISTINCT ${plan.actor}) FROM ${from} WHERE ${where}`, ctx)
  const actors = Number(counted.rows[0]?.[0] ?? 0)
  if (actors === 0) return []
  const pages = Math.max(1, Math.ceil(actors / ACTORS_PER_PAGE))
  const bucket = bucketKeyHogQL(range.interval, range.weekStartDay)
  const out: FunnelEvent[][] = []
  for (let page = 0; page < pages; page++) {
    const pageWhere = pages === 1 ? where : and([where, `cityHash64(toString(${plan.actor})) % ${pages} = ${page}`])
    const executed = await run(
      `SELECT ${plan.actor} AS actor, groupArray(toFloat(timestamp)) AS ts, groupArray(toString(uuid)) AS ids, ` +
        `groupArray(${stepsExpr}) AS steps, groupArray(${bd}) AS bds, ` +
        `groupArray(${hasBd}) AS has_bd, groupArray(${bucket}) AS buckets ` +
        `FROM ${from} WHERE ${pageWhere} GROUP BY actor LIMIT 50000`,
      ctx,
    )
    ctx.stats.resultRows += executed.rows.length
    for (const row of executed.rows) {
      actorIds?.push(String(row[0]))
      const ts = row[1] as number[]
      const ids = row[2] as string[]
      const steps = row[3] as number[][]
      const bds = row[4] as string[]
      const has = row[5] as unknown[]
      const buckets = row[6] as string[]
      out.push(
        ts.map((t, i) => ({
          ts: Number(t),
          uuid: ids[i],
          steps: steps[i].map(Number),
          breakdown: bds[i],
          hasBreakdown: has[i] === true || has[i] === 1 || has[i] === '1',
          bucket: buckets[i],
        })),
      )
    }
  }
  return out
}

/** A breakdown key as results show it: the value, or the array of values ("Other" for the other bucket). */
function valueOut(plan: Plan, key: string): unknown {
  if (!plan.multi) return key
  return key === OTHER ? [OTHER] : (JSON.parse(key) as string[])
}

const scaled = (plan: Plan, n: number) => (plan.sampling === undefined ? n : Math.round(n / plan.sampling))

interface StepTotals {
  counts: number[]
  /** actors whose furthest step is k (index k − 1), for ranking breakdown values */
  exact: number[]
  durations: number[][]
}

/** Step totals per breakdown value from the walker's paths. */
function totalsOfPaths(plan: Plan, paths: FunnelPath[]): Map<string, StepTotals> {
  const n = plan.series.length
  const totals = new Map<string, StepTotals>()
  const totalsOf = (key: string) => {
    let t = totals.get(key)
    if (!t) {
      t = { counts: new Array(n).fill(0), exact: new Array(n).fill(0), durations: plan.series.map(() => []) }
      totals.set(key, t)
    }
    return t
  }
  for (const path of paths) {
    const t = totalsOf(path.breakdown)
    t.exact[path.reached - 1]++
    for (let i = 0; i < n; i++) {
      if ((path.stepsMask & (1 << i)) === 0) continue
      t.counts[i]++
      const d = stepDuration(path, i)
      if (d !== undefined && d > 0) t.durations[i].push(d)
    }
  }
  return totals
}

function stepResults(plan: Plan, totals: Map<string, StepTotals>, actions: Map<number, ActionInfo>): unknown[] {
  const n = plan.series.length
  if (totals.size === 0) return []
  const shape = (t: StepTotals, breakdown?: string) =>
    plan.series.map((s, i) => {
      const isUnordered = plan.options.order === 'unordered'
      const name = s.kind === 'ActionsNode' ? (actions.get(s.id as number)?.name ?? null) : (s.event ?? null)
      return {
        action_id: isUnordered ? null : s.kind === 'ActionsNode' ? s.id : (s.event ?? null),
        name: isUnordered ? `Completed ${i + 1} step${i === 0 ? '' : 's'}` : name,
        custom_name: isUnordered ? null : (s.custom_name ?? null),
        order: i,
        people: [],
        count: scaled(plan, t.counts[i]),
        type: s.kind === 'ActionsNode' ? 'actions' : 'events',
        average_conversion_time: i === 0 ? null : average(t.durations[i]),
        median_conversion_time: i === 0 ? null : median(t.durations[i]),
        ...(breakdown === undefined
          ? {}
          : { breakdown: valueOut(plan, breakdown), breakdown_value: valueOut(plan, breakdown) }),
      }
    })
  if (plan.dims.length === 0) return shape(totals.get('') as StepTotals)
  // ranked by the actors who got furthest (last step first), then by value; past the limit into "Other"
  const ranked = [...totals.entries()].sort(([ka, a], [kb, b]) => {
    for (let i = n - 1; i >= 0; i--) if (a.exact[i] !== b.exact[i]) return b.exact[i] - a.exact[i]
    return ka < kb ? -1 : ka > kb ? 1 : 0
  })
  const kept = ranked.slice(0, plan.breakdownLimit)
  const rest = ranked.slice(plan.breakdownLimit)
  if (rest.length > 0) {
    const other = kept.find(([k]) => k === OTHER)?.[1] ?? {
      counts: new Array(n).fill(0),
      exact: new Array(n).fill(0),
      durations: plan.series.map(() => [] as number[]),
    }
    for (const [, t] of rest) {
      t.counts.forEach((c, i) => {
        other.counts[i] += c
        other.durations[i].push(...t.durations[i])
      })
    }
    if (!kept.some(([k]) => k === OTHER)) kept.push([OTHER, other])
  }
  return kept.map(([key, t]) => shape(t, key))
}

function timingsOfPaths(plan: Plan, paths: FunnelPath[]): number[] {
  const timings: number[] = []
  for (const path of paths) {
    const to = path.times[plan.toStep]
    const from = path.times[plan.fromStep]
    if (path.reached >= plan.toStep + 1 && to !== undefined && from !== undefined) timings.push(to - from)
  }
  return timings
}

function timeToConvert(plan: Plan, timings: number[]): Record<string, unknown> {
  return { average_conversion_time: average(timings), bins: timeToConvertBins(timings, plan.binCount) }
}

interface TrendRow {
  entered: number[]
  converted: number[]
}

function trendRowsOfActors(plan: Plan, actors: FunnelEvent[][], range: ResolvedRange): Map<string, TrendRow> {
  const toCount = plan.toStep + 1
  const options = { ...plan.options, steps: toCount }
  const keys = range.buckets.map((b) => bucketKey(b, range.interval))
  const index = new Map(keys.map((k, i) => [k, i]))
  const rows = new Map<string, TrendRow>()
  for (const events of actors) {
    // the funnel up to funnelToStep; each interval in which the actor did step 1 is an entrance
    const truncated = events.map((e) => ({ ...e, steps: e.steps.filter((s) => Math.abs(s) <= toCount) }))
    const starts = new Set(truncated.filter((e) => e.steps.includes(1)).map((e) => e.bucket as string))
    for (const period of starts) {
      const at = index.get(period)
      if (at === undefined) continue
      const paths = matchActor(truncated, options, plan.dims.length > 0, (e) => e.bucket === period)
      for (const path of paths) {
        let row = rows.get(path.breakdown)
        if (!row) {
          row = { entered: new Array(keys.length).fill(0), converted: new Array(keys.length).fill(0) }
          rows.set(path.breakdown, row)
        }
        if (path.reached >= plan.fromStep + 1) row.entered[at]++
        if (path.reached >= toCount) row.converted[at]++
      }
    }
  }
  return rows
}

function trendResults(plan: Plan, rows: Map<string, TrendRow>, range: ResolvedRange): unknown[] {
  const keys = range.buckets.map((b) => bucketKey(b, range.interval))
  const hourly = range.interval === 'hour' || range.interval === 'minute'
  const labels = range.buckets.map((b) => `${b.getUTCDate()}-${MONTHS[b.getUTCMonth()]}-${b.getUTCFullYear()}`)
  const days = range.buckets.map((b) => (hourly ? bucketKey(b, range.interval) : localDay(b)))
  const shape = (row: { entered: number[]; converted: number[] } | undefined) => ({
    count: keys.length,
    data: keys.map((_, i) =>
      row && row.entered[i] > 0 ? Math.round((row.converted[i] / row.entered[i]) * 10_000) / 100 : 0,
    ),
    days,
    labels,
  })
  if (plan.dims.length === 0) return [shape(rows.get(''))]
  // the values with the most entrances, listed by value as PostHog groups them
  const sum = (xs: number[]) => xs.reduce((s, v) => s + v, 0)
  return [...rows.entries()]
    .sort(([ka, a], [kb, b]) => sum(b.entered) - sum(a.entered) || (ka < kb ? 1 : ka > kb ? -1 : 0))
    .slice(0, plan.breakdownLimit)
    .sort(([ka], [kb]) => (ka < kb ? -1 : ka > kb ? 1 : 0))
    .map(([key, row]) => ({ ...shape(row), breakdown_value: valueOut(plan, key) }))
}

/** The engine's description of an ordered or strict funnel matched up to `steps` steps. */
function engineFunnel(plan: Plan, steps: number): EngineFunnel {
  const ks: number[] = []
  for (let k = 1; k < steps; k++) if (plan.exclusions.some((e) => e.from < k && k <= e.to)) ks.push(k)
  return {
    steps,
    strict: plan.options.order === 'strict',
    window: plan.options.window,
    optional: plan.options.optional,
    // without a breakdown every event's value is '': attribution changes nothing
    attribution: plan.dims.length > 0 ? plan.options.attribution : 'first_touch',
    attributionStep: plan.options.attributionStep,
    exclusionKs: ks,
  }
}

/**
 * One row per actor path (breakdown value `bv`, and entrance period `period` for trends) with the furthest path
 * `p` = (reached, excluded, times, mask, start), actors with no path left out: the subquery the engine paths
 * aggregate over. Its times count `perSecond` to the second.
 */
function enginePaths(plan: Plan, range: ResolvedRange, trends: boolean): { sql: string; perSecond: number } {
  const { from, where, stepMask, exclusionMask, bd, hasBd } = eventColumns(plan, range)
  const count = trends ? plan.toStep + 1 : plan.series.length
  const f = engineFunnel(plan, count)
  /** the walk's intermediate arrays as columns of their own, a subquery per level: each computed once */
  const layered = (first: string, carried: string[], layers: string[][]) => {
    let walked = first
    for (const layer of layers) {
      walked = `SELECT ${carried.join(', ')}, ${layer.join(', ')} FROM (${walked})`
      carried.push(...layer.map((c) => c.slice(c.lastIndexOf(' AS ') + 4)))
    }
    return walked
  }
  const spanMicros = (range.to.getTime() - range.from.getTime() + 1) * 1000
  if (!trends && plan.dims.length === 0 && isCodable(f, spanMicros)) {
    // each event one number (microseconds since the range's start, then its steps): sorted as numbers, walked
    // without tuples
    const code = eventCodeExpr(rangeBoundsHogQL(range).from, stepMask, count)
    const actors = `SELECT ${plan.actor} AS actor, arraySort(groupArray(${code})) AS codes FROM ${from} WHERE ${where} GROUP BY actor`
    const { layers, path } = codedPathColumns({ ...f, window: f.window * 1_000_000 }, 'codes')
    const walked = layered(`SELECT '' AS bv, codes FROM (${actors})`, ['bv', 'codes'], layers)
    return { sql: `SELECT bv, ${path} AS p FROM (${walked})`, perSecond: 1_000_000 }
  }
  const bucket = trends ? bucketKeyHogQL(range.interval, range.weekStartDay) : "''"
  // each event: (ts, step mask, exclusion mask, breakdown, has breakdown, bucket), the last three only when used
  const ts = 'assumeNotNull(toFloat(timestamp))'
  const extra = plan.dims.length > 0 || trends ? `, ${bd}, ${hasBd}, ${bucket}` : ''
  const actors =
    `SELECT ${plan.actor} AS actor, arraySort(groupArray((${ts}, ${stepMask}, ${exclusionMask}${extra}))) AS events ` +
    `FROM ${from} WHERE ${where} GROUP BY actor`
  const evs = trends && count < plan.series.length ? truncatedExpr('events', count) : 'events'
  const values = breakdownValuesExpr(f, evs, plan.dims.length > 0)
  const period = trends
    ? `, arrayJoin(arrayDistinct(arrayMap(y -> y.6, arrayFilter(y -> notEquals(bitAnd(y.2, 1), 0), ${evs})))) AS period`
    : ''
  const { layers, path } = pathExpr(f, evs, 'bv', 'mixed', trends ? 'equals(y.6, period)' : '1')
  const keys = `bv${trends ? ', period' : ''}`
  const walked = layered(
    `SELECT arrayJoin(${values}) AS bv${period}, events, ${mixedExpr('events')} AS mixed FROM (${actors})`,
    [keys, 'events', 'mixed'],
    layers,
  )
  return { sql: `SELECT ${keys}, ${path} AS p FROM (${walked})`, perSecond: 1 }
}

async function engineStepTotals(
  plan: Plan,
  range: ResolvedRange,
  ctx: RunContext,
  run: HogQLExecutor,
): Promise<Map<string, StepTotals>> {
  const n = plan.series.length
  const steps = Array.from({ length: n }, (_, i) => i)
  const counts = steps.map((i) => `countIf(bitAnd(p.4, ${2 ** i}) != 0)`)
  const exact = steps.map((i) => `countIf(p.1 = ${i + 1})`)
  // seconds from the previous step on the path (an optional step skipped: the one before it)
  const paths = enginePaths(plan, range, false)
  const seconds = (d: string) => (paths.perSecond === 1 ? d : `(${d}) / ${paths.perSecond}`)
  const durations = steps.map((i) => {
    if (i === 0) return 'arrayResize([0.0], 0)'
    const d = `p.3[${i + 1}] - arrayLast(t -> t >= 0, arraySlice(p.3, 1, ${i}))`
    return `groupArrayIf(${seconds(d)}, p.3[${i + 1}] >= 0 AND ${d} > 0)`
  })
  const executed = await run(
    `SELECT bv, [${counts.join(', ')}], [${exact.join(', ')}], [${durations.join(', ')}] ` +
      `FROM (${paths.sql}) WHERE p.1 > 0 AND NOT p.2 GROUP BY bv LIMIT 50000`,
    ctx,
  )
  ctx.stats.resultRows += executed.rows.length
  const totals = new Map<string, StepTotals>()
  for (const row of executed.rows) {
    totals.set(String(row[0]), {
      counts: (row[1] as unknown[]).map(Number),
      exact: (row[2] as unknown[]).map(Number),
      durations: (row[3] as unknown[][]).map((ds) => ds.map(Number)),
    })
  }
  return totals
}

async function engineTimings(plan: Plan, range: ResolvedRange, ctx: RunContext, run: HogQLExecutor): Promise<number[]> {
  const to = `p.3[${plan.toStep + 1}]`
  const from = `p.3[${plan.fromStep + 1}]`
  const paths = enginePaths(plan, range, false)
  const executed = await run(
    `SELECT groupArray((${to} - ${from}) / ${paths.perSecond}) FROM (${paths.sql}) ` +
      `WHERE p.1 >= ${plan.toStep + 1} AND NOT p.2 AND ${to} >= 0 AND ${from} >= 0`,
    ctx,
  )
  ctx.stats.resultRows += executed.rows.length
  return ((executed.rows[0]?.[0] ?? []) as unknown[]).map(Number)
}

async function engineTrendRows(
  plan: Plan,
  range: ResolvedRange,
  ctx: RunContext,
  run: HogQLExecutor,
): Promise<Map<string, TrendRow>> {
  const toCount = plan.toStep + 1
  const keys = range.buckets.map((b) => bucketKey(b, range.interval))
  const index = new Map(keys.map((k, i) => [k, i]))
  const executed = await run(
    `SELECT bv, period, countIf(p.1 >= ${plan.fromStep + 1}), countIf(p.1 >= ${toCount}) ` +
      `FROM (${enginePaths(plan, range, true).sql}) WHERE p.1 > 0 AND NOT p.2 GROUP BY bv, period LIMIT 50000`,
    ctx,
  )
  ctx.stats.resultRows += executed.rows.length
  const rows = new Map<string, TrendRow>()
  for (const [bv, period, entered, converted] of executed.rows) {
    const at = index.get(String(period))
    if (at === undefined) continue
    let row = rows.get(String(bv))
    if (!row) {
      row = { entered: new Array(keys.length).fill(0), converted: new Array(keys.length).fill(0) }
      rows.set(String(bv), row)
    }
    row.entered[at] += Number(entered)
    row.converted[at] += Number(converted)
  }
  return rows
}

/**
 * Every actor's funnel paths (one per breakdown value they count under), for the actors behind a funnel step: the
 * same plan, range and matching as the insight. `canStart` limits the events that may start an attempt.
 */
export async function funnelActorPaths(
  node: Record<string, unknown>,
  insight: InsightContext,
  ctx: RunContext,
  run: HogQLExecutor,
  canStart?: (range: ResolvedRange) => ((e: FunnelEvent) => boolean) | undefined,
): Promise<{ steps: number; groupIndex?: number; actors: { id: string; paths: FunnelPath[] }[] }> {
  const plan = planOf(node, insight.actions, insight.testAccountFilters)
  const earliest = wantsAllTime(node) ? await earliestEvent(ctx, run) : undefined
  const range = resolveDateRange(
    isObject(node.dateRange) ? node.dateRange : undefined,
    intervalOf(node.interval),
    insight.team,
    insight.now,
    earliest,
  )
  const ids: string[] = []
  const events = await readActors(plan, range, ctx, run, ids)
  const start = canStart?.(range)
  return {
    steps: plan.series.length,
    groupIndex: groupIndexOf(node.aggregation_group_type_index, 'aggregation_group_type_index'),
    actors: events.map((e, i) => ({ id: ids[i], paths: matchActor(e, plan.options, plan.dims.length > 0, start) })),
  }
}

export function createFunnelsRunner(deps: InsightDeps): NodeRunner {
  return async (node, ctx, run) => {
    const started = performance.now()
    const insight = await loadInsightContext(ctx, deps)
    const plan = planOf(node, insight.actions, insight.testAccountFilters)
    const earliest = wantsAllTime(node) ? await earliestEvent(ctx, run) : undefined
    const range = resolveDateRange(
      isObject(node.dateRange) ? node.dateRange : undefined,
      intervalOf(node.interval),
      insight.team,
      insight.now,
      earliest,
    )
    let results: unknown
    if (plan.options.order !== 'unordered') {
      // ordered and strict: matched in the engine, which answers totals
      if (plan.viz === 'trends') results = trendResults(plan, await engineTrendRows(plan, range, ctx, run), range)
      else if (plan.viz === 'time_to_convert') results = timeToConvert(plan, await engineTimings(plan, range, ctx, run))
      else results = stepResults(plan, await engineStepTotals(plan, range, ctx, run), insight.actions)
    } else {
      // unordered: every actor's events, walked here
      const actors = await readActors(plan, range, ctx, run)
      if (plan.viz === 'trends') results = trendResults(plan, trendRowsOfActors(plan, actors, range), range)
      else {
        const paths = actors.flatMap((events) => matchActor(events, plan.options, plan.dims.length > 0))
        results =
          plan.viz === 'time_to_convert'
            ? timeToConvert(plan, timingsOfPaths(plan, paths))
            : stepResults(plan, totalsOfPaths(plan, paths), insight.actions)
      }
    }
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
