/**
 * ExperimentQuery (products.md §1.10): one HogQL query computes, per variant, the sufficient statistics of a
 * metric over the entities exposed to the experiment's flag — exposures (first and last per entity, `$multiple`
 * or first-seen for entities that saw several variants), metric events after the first exposure and within the
 * conversion window, one value per entity (winsorized for mean metrics when asked) — and `experiments/stats.ts`
 * turns them into Bayesian or frequentist results.
 */

import {
  experimentResult,
  type MetricType,
  StatisticError,
  statsSettings,
  type VariantCounts,
} from '../../experiments/stats.js'
import type { ExperimentSubject } from '../../experiments/subject.js'
import { ValidationError } from '../../http/errors.js'
import { literal, propertiesToHogQL } from '../filters.js'
import { type InsightDeps, loadInsightContext } from '../insights/context.js'
import type { HogQLExecutor, NodeRunner, QueryNode, RunContext } from '../runner.js'

const MULTIPLE = '$multiple'
const UNIT_SECONDS: Record<string, number> = {
  second: 1,
  minute: 60,
  hour: 3600,
  day: 86_400,
  week: 7 * 86_400,
  month: 30 * 86_400,
}
const MATHS = ['total', 'sum', 'avg', 'min', 'max', 'unique_session', 'dau', 'unique_group', 'hogql']
const METRIC_TYPES: MetricType[] = ['mean', 'funnel', 'ratio', 'retention']
/** Without a conversion window, metric events count up to the end of the experiment. */
const NO_WINDOW = 0

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** A UTC instant as a HogQL DateTime64 constant. */
const instant = (iso: string) => {
  const d = new Date(iso)
  const text = d.toISOString().replace('T', ' ').replace('Z', '')
  return `toDateTime64('${text}', 6, 'UTC')`
}

/** The events a metric source (EventsNode / ActionsNode) matches, with its own property filters. */
export function sourceCondition(source: unknown, attr: string): string {
  if (!isObject(source)) throw new ValidationError('A metric source must be an object.', attr)
  let condition: string
  if (source.kind === 'EventsNode') {
    if (source.id !== undefined && source.id !== null) {
      throw new ValidationError('EventsNode does not take an id: use an ActionsNode for actions.', `${attr}__id`)
    }
    if (source.event !== undefined && source.event !== null && typeof source.event !== 'string') {
      throw new ValidationError('event must be a string or null.', `${attr}__event`)
    }
    condition = typeof source.event === 'string' ? `event = ${literal(source.event)}` : 'true'
  } else if (source.kind === 'ActionsNode') {
    if (typeof source.id !== 'number' || !Number.isInteger(source.id)) {
      throw new ValidationError('An ActionsNode needs the action id.', `${attr}__id`, 'required')
    }
    condition = `matchesAction(${source.id})`
  } else {
    throw new ValidationError(
      `Metric sources of kind ${JSON.stringify(source.kind)} are not supported: use EventsNode or ActionsNode.`,
      `${attr}__kind`,
      'invalid_choice',
    )
  }
  let properties: string | undefined
  try {
    properties = propertiesToHogQL(source.properties)
  } catch (error) {
    if (error instanceof ValidationError) throw new ValidationError(error.detail, `${attr}__properties`, error.code)
    throw error
  }
  return properties ? `(${condition}) AND (${properties})` : condition
}

/** How one source turns its events into one value per entity. */
interface SourcePlan {
  condition: string
  /** per-event column kept in the entity's array: a number for values, a string key for distinct counts */
  value: string
  /** the per-entity value from `pairs`, the entity's (timestamp, value) tuples inside the window */
  aggregate(pairs: string): string
}

const sumOf = (pairs: string) => `arraySum(x -> x.2, ${pairs})`
const countOf = (pairs: string) => `length(${pairs})`
/** avg, min and max of no events are 0, as PostHog's per-entity aggregates give for an entity without any */
const guarded = (fn: 'avg' | 'min' | 'max') => (pairs: string) =>
  `if(empty(${pairs}), 0, array${fn[0].toUpperCase()}${fn.slice(1)}(x -> x.2, ${pairs}))`

function sourcePlan(source: unknown, attr: string): SourcePlan {
  const condition = sourceCondition(source, attr)
  const node = source as Json
  const math = (node.math ?? 'total') as string
  if (!MATHS.includes(math)) throw new ValidationError(`Unsupported math ${JSON.stringify(math)}.`, `${attr}__math`)
  const property = () => {
    if (typeof node.math_property !== 'string' || node.math_property === '') {
      throw new ValidationError(`math ${math} needs math_property.`, `${attr}__math_property`, 'required')
    }
    return `ifNull(toFloat(properties[${literal(node.math_property)}]), 0)`
  }
  const distinct = (key: string): SourcePlan => ({
    condition,
    value: key,
    aggregate: (pairs) => `length(arrayDistinct(arrayFilter(k -> k != '', arrayMap(x -> x.2, ${pairs}))))`,
  })
  switch (math) {
    case 'sum':
      return { condition, value: property(), aggregate: sumOf }
    case 'avg':
    case 'min':
    case 'max':
      return { condition, value: property(), aggregate: guarded(math) }
    case 'unique_session':
      return distinct('toString($session_id)')
    case 'dau':
      return distinct('toString(toDate(timestamp))')
    case 'unique_group': {
      const index = node.math_group_type_index
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index > 4) {
        throw new ValidationError('math unique_group needs math_group_type_index.', `${attr}__math_group_type_index`)
      }
      return distinct(`toString($group_${index})`)
    }
    case 'hogql': {
      if (typeof node.math_hogql !== 'string' || node.math_hogql.trim() === '') {
        throw new ValidationError('math hogql needs math_hogql.', `${attr}__math_hogql`, 'required')
      }
      // `sum(x)`, `avg(x)`… aggregate x per entity; any other expression is summed over the entity's events.
      const call = /^\s*(sum|avg|min|max|count)\s*\(([\s\S]*)\)\s*$/i.exec(node.math_hogql)
      if (call && call[1].toLowerCase() !== 'count') {
        const fn = call[1].toLowerCase() as 'sum' | 'avg' | 'min' | 'max'
        const value = `ifNull(toFloat(${call[2]}), 0)`
        return { condition, value, aggregate: fn === 'sum' ? sumOf : guarded(fn) }
      }
      if (call) return { condition, value: '1', aggregate: countOf }
      return { condition, value: `ifNull(toFloat(${node.math_hogql}), 0)`, aggregate: sumOf }
    }
    default:
      return { condition, value: '1', aggregate: countOf }
  }
}

function windowSeconds(metric: Json): number {
  if (metric.conversion_window === undefined || metric.conversion_window === null) return NO_WINDOW
  const count = metric.conversion_window
  if (typeof count !== 'number' || !Number.isInteger(count) || count <= 0) {
    throw new ValidationError('conversion_window must be a positive integer.', 'metric__conversion_window')
  }
  const unit = (metric.conversion_window_unit ?? 'day') as string
  if (!(unit in UNIT_SECONDS)) {
    throw new ValidationError(
      `Unknown conversion_window_unit ${JSON.stringify(unit)}.`,
      'metric__conversion_window_unit',
    )
  }
  return count * UNIT_SECONDS[unit]
}

export interface ExperimentQueryParts {
  type: MetricType
  /** HogQL: one row per variant */
  hogql: string
  /** HogQL of the per-entity values, for the winsorizing bounds (mean metrics with bounds only) */
  boundsHogql?: string
}

/** Builds the HogQL of an ExperimentQuery for an experiment (validating the metric on the way). */
export function buildExperimentQuery(
  subject: ExperimentSubject,
  metricInput: unknown,
  testAccountFilters: unknown[],
  now: Date,
  bounds?: { lower: number; upper: number },
): ExperimentQueryParts {
  if (!isObject(metricInput)) throw new ValidationError('metric is required.', 'metric', 'required')
  const metric = metricInput
  if (metric.kind !== 'ExperimentMetric') {
    throw new ValidationError(
      `Metrics of kind ${JSON.stringify(metric.kind)} are not supported: use ExperimentMetric.`,
      'metric__kind',
      'invalid_choice',
    )
  }
  const type = metric.metric_type as MetricType
  if (!METRIC_TYPES.includes(type)) {
    throw new ValidationError(
      `metric_type must be one of ${METRIC_TYPES.join(', ')}.`,
      'metric__metric_type',
      'invalid_choice',
    )
  }
  const criteria = subject.exposureCriteria
  const entity = subject.groupTypeIndex === null ? 'person_id' : `$group_${subject.groupTypeIndex}`
  const from = instant(subject.startDate ?? subject.createdAt)
  const to = instant(subject.endDate ?? now.toISOString())

  // Exposures: the flag's own event, or a custom exposure event carrying `$feature/<key>`.
  let exposureCondition: string
  let variantExpr: string
  const config = criteria.exposure_config
  if (isObject(config) && config.kind === 'ExperimentEventExposureConfig' && config.event !== '$feature_flag_called') {
    const event = typeof config.event === 'string' ? `event = ${literal(config.event)}` : 'true'
    const properties = propertiesToHogQL(config.properties)
    exposureCondition = properties ? `${event} AND (${properties})` : event
    variantExpr = `toString(properties[${literal(`$feature/${subject.flagKey}`)}])`
  } else if (isObject(config) && config.kind === 'ActionsNode') {
    exposureCondition = sourceCondition(config, 'exposure_criteria__exposure_config')
    variantExpr = `toString(properties[${literal(`$feature/${subject.flagKey}`)}])`
  } else {
    const properties = isObject(config) ? propertiesToHogQL(config.properties) : undefined
    exposureCondition =
      `event = '$feature_flag_called' AND properties.$feature_flag = ${literal(subject.flagKey)}` +
      (properties ? ` AND (${properties})` : '')
    variantExpr = 'toString(properties.$feature_flag_response)'
  }
  if (criteria.filterTestAccounts === true) {
    const test = propertiesToHogQL(testAccountFilters)
    if (test) exposureCondition += ` AND (${test})`
  }
  const variantList = subject.variants.map(literal).join(', ')
  const firstSeen = criteria.multiple_variant_handling === 'first_seen'
  const isVariant = `${variantExpr} IN (${variantList})`
  const isExposure = `(${exposureCondition}) AND timestamp < ${to} AND ${isVariant}`
  // Metric events: every event of every source, flagged per source.
  const window = windowSeconds(metric)
  const eventsTo = window === NO_WINDOW ? to : `${to} + toIntervalSecond(${window})`
  /** Whether the entity's event tuple `x` (its time first) counts: from the first exposure on, within the window. */
  const inWindow = (x: string) =>
    `${x}.1 >= first_exposure_time` +
    (window === NO_WINDOW ? '' : ` AND ${x}.1 < last_exposure_time + toIntervalSecond(${window})`)
  const windowed = (events: string) => `arrayFilter(x -> ${inWindow('x')}, ${events})`

  /** per-event columns beside the entity, time and exposure */
  let eventColumns: string[]
  /** which events are metric events */
  let conditions: string[]
  /** per-entity arrays of the metric events (time first), built in the same pass as the exposures */
  let arrays: string[]
  /** per-entity values, computed on those arrays */
  let perEntity: string[]
  let variantColumns: string[]
  if (type === 'mean' || type === 'ratio') {
    const sources =
      type === 'mean'
        ? [sourcePlan(metric.source, 'metric__source')]
        : [sourcePlan(metric.numerator, 'metric__numerator'), sourcePlan(metric.denominator, 'metric__denominator')]
    conditions = sources.map((s) => s.condition)
    eventColumns = sources.flatMap((s, i) => [`if(${s.condition}, 1, 0) AS m${i}`, `${s.value} AS v${i}`])
    arrays = sources.map((_, i) => `groupArrayIf(tuple(ts, v${i}), m${i} = 1) AS evs${i}`)
    perEntity = sources.map((s, i) => `toFloat(${s.aggregate(windowed(`evs${i}`))}) AS value${i}`)
    let value = 'value0'
    if (type === 'mean' && bounds) value = `least(greatest(value0, ${bounds.lower}), ${bounds.upper})`
    variantColumns = ['count() AS n', `sum(${value}) AS s`, `sum(pow(${value}, 2)) AS ss`]
    if (type === 'ratio') {
      variantColumns.push('sum(value1) AS ds', 'sum(pow(value1, 2)) AS dss', 'sum(value0 * value1) AS ps')
    }
  } else if (type === 'funnel') {
    if (!Array.isArray(metric.series) || metric.series.length === 0) {
      throw new ValidationError('A funnel metric needs at least one step.', 'metric__series', 'required')
    }
    const order = (metric.funnel_order_type ?? 'ordered') as string
    if (order !== 'ordered' && order !== 'unordered' && order !== 'strict') {
      throw new ValidationError(
        'funnel_order_type must be ordered, unordered or strict.',
        'metric__funnel_order_type',
        'invalid_choice',
      )
    }
    const steps = metric.series.map((s, i) => sourceCondition(s, `metric__series__${i}`))
    const k = steps.length
    arrays = ['groupArrayIf(tuple(ts, bits), is_metric = 1) AS evs']
    let reached: string
    if (order === 'strict') {
      // PostHog's strict funnel (the funnel UDF's strict mode, the exposure prepended as step 0): over the entity's
      // exposure and step events in time order, an exposure (re)enters the funnel; an event advances every attempt
      // whose previous step it follows within the conversion window (counted from the attempt's exposure); and
      // after each event, every step the event does not match is cleared — any other exposure or step event
      // between two steps breaks the sequence. The level is the highest metric step any attempt reached.
      conditions = [isExposure, ...steps]
      eventColumns = [
        `(if(${isExposure}, 1, 0) + ${steps.map((c, i) => `if(${c}, ${2 ** (i + 1)}, 0)`).join(' + ')}) AS bits`,
      ]
      const prev = (i: number) => `arrayElement(acc.1, ${i})`
      const follows = (i: number) =>
        `bitTest(x.2, ${i}) AND ${prev(i)} >= 0` + (window === NO_WINDOW ? '' : ` AND x.1 - ${prev(i)} <= ${window}`)
      const entered = [
        'if(bitTest(x.2, 0), x.1, -1.)',
        ...steps.map((_, j) => {
          const i = j + 1
          return `if(bitTest(x.2, ${i}), if(${follows(i)}, ${prev(i)}, arrayElement(acc.1, ${i + 1})), -1.)`
        }),
      ]
      // Float throughout: the fold's accumulator must keep one type (HogQL's toInt/toFloat are nullable casts)
      const best = `arrayMax([acc.2, ${['if(bitTest(x.2, 0), 0., -1.)', ...steps.map((_, j) => `if(${follows(j + 1)}, ${j + 1}., -1.)`)].join(', ')}])`
      const events = 'arraySort(t -> t.1, arrayMap(t -> tuple(toUnixTimestamp64Milli(t.1) / 1000, t.2), evs))'
      reached = `greatest(arrayFold((acc, x) -> tuple([${entered.join(', ')}], ${best}), ${events}, tuple(arrayWithConstant(${k + 1}, -1.), -1.)).2, 0)`
    } else {
      conditions = steps
      eventColumns = [`(${steps.map((c, i) => `if(${c}, ${2 ** i}, 0)`).join(' + ')}) AS bits`]
      reached =
        order === 'ordered'
          ? `arrayFold((acc, x) -> if(acc < ${k} AND bitTest(x, acc), acc + 1, acc), ` +
            `arrayMap(t -> t.2, arraySort(t -> toUnixTimestamp64Milli(t.1), ${windowed('evs')})), toInt(0))`
          : `bitCount(arrayFold((acc, x) -> bitOr(acc, x.2), ${windowed('evs')}, toInt(0)))`
    }
    perEntity = [`toInt(${reached}) AS level`]
    variantColumns = [
      'count() AS n',
      `countIf(level = ${k}) AS s`,
      `countIf(level = ${k}) AS ss`,
      `[${Array.from({ length: k + 1 }, (_, i) => `countIf(level >= ${i})`).join(', ')}] AS steps`,
    ]
  } else {
    const start = sourceCondition(metric.start_event, 'metric__start_event')
    const completion = sourceCondition(metric.completion_event, 'metric__completion_event')
    const unit = (metric.retention_window_unit ?? 'day') as string
    if (!(unit in UNIT_SECONDS)) {
      throw new ValidationError(
        `Unknown retention_window_unit ${JSON.stringify(unit)}.`,
        'metric__retention_window_unit',
      )
    }
    const windowStart = metric.retention_window_start ?? 0
    const windowEnd = metric.retention_window_end ?? 7
    if (
      typeof windowStart !== 'number' ||
      typeof windowEnd !== 'number' ||
      windowStart < 0 ||
      windowEnd <= windowStart
    ) {
      throw new ValidationError(
        'retention_window_end must be greater than retention_window_start (both at least 0).',
        'metric__retention_window_end',
      )
    }
    conditions = [start, completion]
    eventColumns = [`if(${start}, 1, 0) AS m0`, `if(${completion}, 1, 0) AS m1`]
    arrays = ['groupArrayIf(tuple(ts, m0, m1), is_metric = 1) AS evs']
    const starts = `arrayFilter(x -> ${inWindow('x')} AND x.2 = 1, evs)`
    const lo = `start_at + toIntervalSecond(${windowStart * UNIT_SECONDS[unit]})`
    const hi = `start_at + toIntervalSecond(${windowEnd * UNIT_SECONDS[unit]})`
    perEntity = [
      `${metric.start_handling === 'last_seen' ? 'arrayMax' : 'arrayMin'}(x -> x.1, ${starts}) AS start_at`,
      `if(notEmpty(${starts}), 1, 0) AS value1`,
      `if(notEmpty(${starts}) AND arrayExists(c -> c.3 = 1 AND c.1 >= ${lo} AND c.1 < ${hi}, evs), 1, 0) AS value0`,
    ]
    variantColumns = [
      'count() AS n',
      'sum(value0) AS s',
      'sum(value0) AS ss',
      'sum(value1) AS ds',
      'sum(value1) AS dss',
      'sum(value0 * value1) AS ps',
    ]
  }
  // One read of the events and one grouping per entity: its variant, first and last exposure, and its metric
  // events kept as arrays, on which the per-entity values above are computed (an entity without metric events has
  // empty arrays). The read's condition names each event kind with `event = …` only (the exposure's time bound is
  // in `is_exposure`), so the compiler can hand the event names to the table's read and the join to the persons'
  // distinct ids sees only those events.
  const entityColumn = subject.groupTypeIndex === null ? entity : `toString(${entity})`
  const read =
    `SELECT ${entityColumn} AS entity_id, timestamp AS ts, if(${isExposure}, 1, 0) AS is_exposure, ` +
    `if(is_exposure = 1, ${variantExpr}, '') AS variant_raw, ` +
    `if(${conditions.map((c) => `(${c})`).join(' OR ')}, 1, 0) AS is_metric, ${eventColumns.join(', ')} FROM events ` +
    `WHERE (${[`(${exposureCondition}) AND ${isVariant}`, ...conditions.filter((c) => c !== isExposure)].map((c) => `(${c})`).join(' OR ')}) ` +
    `AND timestamp >= ${from} AND timestamp < ${eventsTo}` +
    (subject.groupTypeIndex === null ? '' : ` AND ${entityColumn} != ''`)
  const perEntityEvents =
    `SELECT entity_id, ${firstSeen ? 'argMinIf(variant_raw, ts, is_exposure = 1)' : `if(uniqExactIf(variant_raw, is_exposure = 1) > 1, '${MULTIPLE}', anyIf(variant_raw, is_exposure = 1))`} AS variant, ` +
    'minIf(ts, is_exposure = 1) AS first_exposure_time, maxIf(ts, is_exposure = 1) AS last_exposure_time, ' +
    `${arrays.join(', ')} FROM (${read}) GROUP BY entity_id HAVING countIf(is_exposure = 1) > 0`
  const entities = `SELECT variant, entity_id, ${perEntity.join(', ')} FROM (${perEntityEvents})`
  const hogql = `SELECT variant, ${variantColumns.join(', ')} FROM (${entities}) WHERE variant != '${MULTIPLE}' GROUP BY variant`
  let boundsHogql: string | undefined
  if (type === 'mean' && !bounds && (metric.lower_bound_percentile != null || metric.upper_bound_percentile != null)) {
    const pct = (v: unknown, attr: string) => {
      if (typeof v !== 'number' || !(v >= 0 && v <= 1)) {
        throw new ValidationError(`${attr} must be a number between 0 and 1.`, `metric__${attr}`)
      }
      return v
    }
    const lower =
      metric.lower_bound_percentile == null
        ? 'min(value0)'
        : `quantileExact(${pct(metric.lower_bound_percentile, 'lower_bound_percentile')})(value0)`
    const upper =
      metric.upper_bound_percentile == null
        ? 'max(value0)'
        : metric.ignore_zeros === true
          ? `quantileExact(${pct(metric.upper_bound_percentile, 'upper_bound_percentile')})(nullIf(value0, 0))`
          : `quantileExact(${pct(metric.upper_bound_percentile, 'upper_bound_percentile')})(value0)`
    boundsHogql = `SELECT toFloat(${lower}), toFloat(${upper}) FROM (${entities}) WHERE variant != '${MULTIPLE}'`
  }
  return { type, hogql, boundsHogql }
}

const num = (v: unknown) => (v === null || v === undefined ? 0 : Number(v))

/** Runs an experiment metric and computes its statistics. */
export async function runExperimentMetric(
  subject: ExperimentSubject,
  metric: unknown,
  ctx: RunContext,
  run: HogQLExecutor,
  testAccountFilters: unknown[],
  now: Date,
): Promise<Record<string, unknown>> {
  let parts = buildExperimentQuery(subject, metric, testAccountFilters, now)
  if (parts.boundsHogql) {
    const bounds = await run(parts.boundsHogql, ctx)
    const [lower, upper] = (bounds.rows[0] ?? [0, 0]) as [unknown, unknown]
    const safe = (v: unknown, fallback: number) => (Number.isFinite(Number(v)) ? Number(v) : fallback)
    parts = buildExperimentQuery(subject, metric, testAccountFilters, now, {
      lower: safe(lower, 0),
      upper: safe(upper, 0),
    })
  }
  const result = await run(parts.hogql, ctx)
  const byKey = new Map<string, VariantCounts>()
  for (const row of result.rows) {
    const [key, n, s, ss, a, b, c] = row as unknown[]
    const counts: VariantCounts = { key: String(key), number_of_samples: num(n), sum: num(s), sum_squares: num(ss) }
    if (parts.type === 'funnel') counts.step_counts = (a as unknown[]).map(num)
    if (parts.type === 'ratio' || parts.type === 'retention') {
      counts.denominator_sum = num(a)
      counts.denominator_sum_squares = num(b)
      counts.numerator_denominator_sum_product = num(c)
    }
    byKey.set(counts.key, counts)
  }
  const stepCount = parts.type === 'funnel' ? ((metric as Json).series as unknown[]).length + 1 : 0
  const variants = subject.variants.map(
    (key): VariantCounts =>
      byKey.get(key) ?? {
        key,
        number_of_samples: 0,
        sum: 0,
        sum_squares: 0,
        ...(parts.type === 'funnel' ? { step_counts: new Array(stepCount).fill(0) } : {}),
        ...(parts.type === 'ratio' || parts.type === 'retention'
          ? { denominator_sum: 0, denominator_sum_squares: 0, numerator_denominator_sum_product: 0 }
          : {}),
      },
  )
  const settings = statsSettings(subject.statsConfig)
  try {
    const { baseline, variant_results } = experimentResult(parts.type, variants, subject.baselineKey, settings)
    return {
      kind: 'ExperimentQuery',
      baseline,
      variant_results,
      hogql: result.hogql,
      clickhouse_sql: result.clickhouse,
    }
  } catch (error) {
    if (error instanceof StatisticError) throw new ValidationError(error.message)
    throw error
  }
}

export function createExperimentRunner(deps: InsightDeps): NodeRunner {
  return async (node: QueryNode, ctx, run) => {
    const id = node.experiment_id
    if (id === undefined || id === null)
      throw new ValidationError('experiment_id is required', 'experiment_id', 'required')
    if (typeof id !== 'number' || !Number.isInteger(id)) {
      throw new ValidationError('experiment_id must be an integer.', 'experiment_id')
    }
    const subject = await deps.experiment?.(ctx.team.id, id)
    if (!subject) throw new ValidationError(`Experiment with id ${id} not found`, 'experiment_id')
    const context = await loadInsightContext(ctx, deps)
    return runExperimentMetric(subject, node.metric, ctx, run, context.testAccountFilters, context.now)
  }
}
