/**
 * PathsQuery (hogql.md §4.5, §4.12 "Paths"): each person's events in the range, split into session paths at gaps of
 * 30 minutes, consecutive repeats collapsed, cut at the start or end point and to `stepLimit` items; every
 * transition between neighbouring items is an edge `"<i>_<item>" → "<i+1>_<item>"` counted once per session path,
 * the heaviest `edgeLimit` kept (within the edge weights), and only those reachable from a first step. The same
 * per-item rows give the persons behind a node or an edge (`pathStartKey`, `pathEndKey`, `pathDropoffKey`).
 */
import { ValidationError } from '../../http/errors.js'
import { literal } from '../filters.js'
import {
  earliestEvent,
  type InsightContext,
  type InsightDeps,
  loadInsightContext,
  wantsAllTime,
} from '../insights/context.js'
import { rangeBoundsHogQL, resolveDateRange, resolvedDateRange } from '../insights/date-range.js'
import { actorExpr, groupIndexOf } from '../insights/math.js'
import { eventsFrom, samplingOf, sharedCondition } from '../insights/series.js'
import type { HogQLExecutor, NodeRunner, RunContext } from '../runner.js'
import { funnelActorPaths } from './funnels.js'

const PATH_TYPES = ['$pageview', '$screen', 'custom_event', 'hogql'] as const
const DEFAULT_STEP_LIMIT = 5
const DEFAULT_EDGE_LIMIT = 50
const MAX_STEP_LIMIT = 20
const MAX_EDGE_LIMIT = 10_000
/** A gap this long (seconds) between two events of a person starts a new session path. */
const SESSION_GAP_SECONDS = 30 * 60
const FUNNEL_PATH_TYPES = ['funnel_path_before_step', 'funnel_path_after_step', 'funnel_path_between_steps'] as const
type FunnelPathType = (typeof FUNNEL_PATH_TYPES)[number]
/** A funnel's conversion window units in seconds (a month is 31 days, as PostHog's interval arithmetic from 2018-01-01). */
const WINDOW_UNIT_SECONDS: Record<string, number> = {
  second: 1,
  minute: 60,
  hour: 3600,
  day: 86_400,
  week: 7 * 86_400,
  month: 31 * 86_400,
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const and = (parts: (string | undefined)[]) =>
  parts
    .filter((p): p is string => !!p)
    .map((p) => `(${p})`)
    .join(' AND ') || 'true'

interface Cleaning {
  regex: string
  alias: string
}

/** `funnelPathsFilter`: the paths of a funnel's actors before, after or between funnel steps. */
export interface FunnelPaths {
  type: FunnelPathType
  /** PostHog's funnelStep: k (1-based) for those who reached step k, −k for those who dropped off before it */
  step: number
  source: Record<string, unknown>
  /** the funnel's actor on an event (person, group key, or the funnel's HogQL aggregation) */
  actor: string
  /** the funnel's conversion window in seconds: paths split at gaps this long instead of 30 minutes */
  windowSeconds: number
}

export interface PathsPlan {
  includeTypes: string[]
  hogqlExpression?: string
  startPoint?: string
  endPoint?: string
  stepLimit: number
  edgeLimit: number
  excludeEvents: string[]
  groupings: string[]
  cleaning: Cleaning[]
  minEdgeWeight?: number
  maxEdgeWeight?: number
  sampling?: number
  shared?: string
  startKey?: string
  endKey?: string
  dropoffKey?: string
  funnel?: FunnelPaths
}

function intIn(value: unknown, attr: string, min: number, max: number): number | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ValidationError(`Must be an integer from ${min} to ${max}.`, attr)
  }
  return value
}

function stringOrUndefined(value: unknown, attr: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value !== 'string') throw new ValidationError('Must be a string.', attr)
  return value
}

function stringList(value: unknown, attr: string): string[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw new ValidationError('Must be a list of strings.', attr)
  }
  return value as string[]
}

/** A point's one trailing slash is dropped, as page URLs are (`/` stays). */
const trimSlash = (point: string | undefined) =>
  point && point.length > 1 && point.endsWith('/') ? point.slice(0, -1) : point

/** `pathsFilter` (and the shared filters) validated. */
export function pathsPlanOf(node: Record<string, unknown>, insight: InsightContext): PathsPlan {
  if (node.pathsFilter !== undefined && node.pathsFilter !== null && !isObject(node.pathsFilter)) {
    throw new ValidationError('pathsFilter must be an object.', 'pathsFilter')
  }
  const f = isObject(node.pathsFilter) ? node.pathsFilter : {}
  const includeTypes = stringList(f.includeEventTypes, 'pathsFilter__includeEventTypes')
  includeTypes.forEach((t, i) => {
    if (!(PATH_TYPES as readonly string[]).includes(t)) {
      throw new ValidationError(
        `Input should be ${PATH_TYPES.map((p) => `'${p}'`).join(', ')}; got ${JSON.stringify(t)}.`,
        `pathsFilter__includeEventTypes__${i}`,
        'invalid_choice',
      )
    }
  })
  // the project's rules first (`pathReplacements`), then the query's own, as PostHog chains them
  const cleaning: Cleaning[] = f.pathReplacements === true ? [...insight.pathCleaningFilters] : []
  if (f.localPathCleaningFilters !== undefined && f.localPathCleaningFilters !== null) {
    if (!Array.isArray(f.localPathCleaningFilters)) {
      throw new ValidationError('Must be a list of {alias, regex}.', 'pathsFilter__localPathCleaningFilters')
    }
    f.localPathCleaningFilters.forEach((rule, i) => {
      const at = `pathsFilter__localPathCleaningFilters__${i}`
      if (!isObject(rule) || typeof rule.regex !== 'string' || rule.regex === '') {
        throw new ValidationError('A path cleaning rule needs a regex.', `${at}__regex`, 'required')
      }
      if (rule.alias !== undefined && rule.alias !== null && typeof rule.alias !== 'string') {
        throw new ValidationError('The alias is a string.', `${at}__alias`)
      }
      cleaning.push({ regex: rule.regex, alias: (rule.alias as string | undefined) ?? '' })
    })
  }
  const minEdgeWeight = intIn(f.minEdgeWeight, 'pathsFilter__minEdgeWeight', 0, Number.MAX_SAFE_INTEGER)
  const maxEdgeWeight = intIn(f.maxEdgeWeight, 'pathsFilter__maxEdgeWeight', 0, Number.MAX_SAFE_INTEGER)
  if (node.aggregation_group_type_index !== undefined && node.aggregation_group_type_index !== null) {
    throw new ValidationError('Paths follow persons, not groups.', 'aggregation_group_type_index')
  }
  return {
    includeTypes,
    hogqlExpression: stringOrUndefined(f.pathsHogQLExpression, 'pathsFilter__pathsHogQLExpression'),
    startPoint: trimSlash(stringOrUndefined(f.startPoint, 'pathsFilter__startPoint')),
    endPoint: trimSlash(stringOrUndefined(f.endPoint, 'pathsFilter__endPoint')),
    // 0 is PostHog's "not set"
    stepLimit: intIn(f.stepLimit, 'pathsFilter__stepLimit', 0, MAX_STEP_LIMIT) || DEFAULT_STEP_LIMIT,
    edgeLimit: intIn(f.edgeLimit, 'pathsFilter__edgeLimit', 0, MAX_EDGE_LIMIT) || DEFAULT_EDGE_LIMIT,
    excludeEvents: stringList(f.excludeEvents, 'pathsFilter__excludeEvents'),
    groupings: stringList(f.pathGroupings, 'pathsFilter__pathGroupings'),
    cleaning,
    minEdgeWeight: minEdgeWeight || undefined,
    maxEdgeWeight: maxEdgeWeight || undefined,
    sampling: samplingOf(node.samplingFactor),
    shared: sharedCondition(node, insight.testAccountFilters),
    startKey: stringOrUndefined(f.pathStartKey, 'pathsFilter__pathStartKey'),
    endKey: stringOrUndefined(f.pathEndKey, 'pathsFilter__pathEndKey'),
    dropoffKey: stringOrUndefined(f.pathDropoffKey, 'pathsFilter__pathDropoffKey'),
    funnel: funnelPathsOf(node.funnelPathsFilter),
  }
}

/** `funnelPathsFilter` validated (PostHog needs a type, a step and a FunnelsQuery source). */
function funnelPathsOf(value: unknown): FunnelPaths | undefined {
  if (value === undefined || value === null) return undefined
  if (!isObject(value)) throw new ValidationError('funnelPathsFilter must be an object.', 'funnelPathsFilter')
  const type = value.funnelPathType
  if (typeof type !== 'string' || !(FUNNEL_PATH_TYPES as readonly string[]).includes(type)) {
    throw new ValidationError(
      `Input should be ${FUNNEL_PATH_TYPES.map((t) => `'${t}'`).join(', ')}; got ${JSON.stringify(type ?? null)}.`,
      'funnelPathsFilter__funnelPathType',
      'invalid_choice',
    )
  }
  const source = value.funnelSource
  if (!isObject(source) || source.kind !== 'FunnelsQuery') {
    throw new ValidationError('funnelSource must be a FunnelsQuery.', 'funnelPathsFilter__funnelSource', 'required')
  }
  const step = value.funnelStep
  if (typeof step !== 'number' || !Number.isInteger(step) || step === 0 || step === -1) {
    throw new ValidationError(
      'funnelStep is a step from 1, or minus a step from 2 for the drop-off before it.',
      'funnelPathsFilter__funnelStep',
    )
  }
  if (type === 'funnel_path_between_steps' && (step === 1 || step === -2)) {
    throw new ValidationError(
      'Cannot request preceding step timestamp if target funnel step is the first step',
      'funnelPathsFilter__funnelStep',
    )
  }
  const f = isObject(source.funnelsFilter) ? source.funnelsFilter : {}
  const byHogQL =
    typeof f.funnelAggregateByHogQL === 'string' &&
    f.funnelAggregateByHogQL.trim() !== '' &&
    f.funnelAggregateByHogQL.trim() !== 'person_id'
      ? `(${f.funnelAggregateByHogQL})`
      : undefined
  const groupIndex = groupIndexOf(
    source.aggregation_group_type_index,
    'funnelPathsFilter__funnelSource__aggregation_group_type_index',
  )
  const interval =
    typeof f.funnelWindowInterval === 'number' && f.funnelWindowInterval > 0 ? f.funnelWindowInterval : 14
  const unit = typeof f.funnelWindowIntervalUnit === 'string' ? f.funnelWindowIntervalUnit : 'day'
  return {
    type: type as FunnelPathType,
    step,
    source,
    actor: byHogQL ?? actorExpr(groupIndex),
    windowSeconds: interval * (WINDOW_UNIT_SECONDS[unit] ?? WINDOW_UNIT_SECONDS.day),
  }
}

/** The time bounds (seconds since the epoch) of one funnel actor's path events. */
interface FunnelBounds {
  ids: string[]
  lower: number[]
  upper: number[]
}

/**
 * The funnel's actors at `funnelStep` with the bounds of the events their paths take (PostHog's funnel actors with
 * `includeTimestamp` / `includePrecedingTimestamp`): the target step's time (the last step done, for a drop-off),
 * and for "between" the step before it. After a drop-off, paths start a conversion window past that step.
 */
async function funnelBounds(
  funnel: FunnelPaths,
  insight: InsightContext,
  ctx: RunContext,
  run: HogQLExecutor,
): Promise<FunnelBounds> {
  const { steps, actors } = await funnelActorPaths(funnel.source, insight, ctx, run)
  const k = funnel.step
  if (Math.abs(k) > steps) {
    throw new ValidationError(`funnelStep is beyond the funnel's ${steps} steps.`, 'funnelPathsFilter__funnelStep')
  }
  // 0-based: the step reached (k > 0), or the last one done before dropping off (k < 0)
  const target = k > 0 ? k - 1 : -k - 2
  const matches = (mask: number) =>
    k > 0 ? (mask & (1 << (k - 1))) !== 0 : (mask & (1 << (-k - 2))) !== 0 && (mask & (1 << (-k - 1))) === 0
  // a skipped optional step takes the time of the step before it
  const timeAt = (times: (number | undefined)[], i: number) => {
    for (let j = i; j >= 0; j--) if (times[j] !== undefined) return times[j] as number
    return undefined
  }
  const out: FunnelBounds = { ids: [], lower: [], upper: [] }
  for (const actor of actors) {
    const best = actor.paths
      .filter((p) => matches(p.stepsMask))
      .sort((a, b) => b.reached - a.reached)
      .at(0)
    if (!best) continue
    const at = timeAt(best.times, target)
    if (at === undefined) continue
    let lower = Number.NEGATIVE_INFINITY
    let upper = Number.POSITIVE_INFINITY
    if (funnel.type === 'funnel_path_after_step') lower = k < 0 ? at + funnel.windowSeconds : at
    else if (funnel.type === 'funnel_path_before_step') upper = at
    else {
      const before = timeAt(best.times, target - 1)
      if (before === undefined) continue
      lower = before
      upper = at
    }
    out.ids.push(actor.id)
    out.lower.push(lower)
    out.upper.push(upper)
  }
  return out
}

/** The `{funnel_*}` placeholders of `pathItemsQuery` for a funnel's actors (none: one id no event has). */
async function funnelPlaceholders(
  plan: PathsPlan,
  insight: InsightContext,
  ctx: RunContext,
  run: HogQLExecutor,
): Promise<Record<string, unknown> | undefined> {
  if (!plan.funnel) return undefined
  const b = await funnelBounds(plan.funnel, insight, ctx, run)
  // infinities are not JSON: bounds far outside any event
  const finite = (xs: number[]) =>
    xs.map((x) => (x === Number.NEGATIVE_INFINITY ? -1e12 : x === Number.POSITIVE_INFINITY ? 1e12 : x))
  return b.ids.length === 0
    ? { funnel_ids: [''], funnel_lower: [0], funnel_upper: [-1] }
    : { funnel_ids: b.ids, funnel_lower: finite(b.lower), funnel_upper: finite(b.upper) }
}

/** Whether events of a kind give path items: the listed types, or (none listed) all but the excluded ones. */
const takes = (plan: PathsPlan, kind: string) =>
  plan.includeTypes.length === 0 ? !plan.excludeEvents.includes(kind) : plan.includeTypes.includes(kind)

/** `pathGroupings` wildcards as regexes (`*` matches anything; everything else literally). */
const groupingRegex = (grouping: string) =>
  grouping
    .split('*')
    .map((part) => part.replace(/[\\^$.|?*+()[\]{}\-/#&~ ]/g, '\\$&'))
    .join('.*')

/** The path item of an event: page URL, screen name, HogQL expression or event name; cleaned, then grouped. */
function pathItemExpr(plan: PathsPlan): string {
  let item = 'event'
  if (takes(plan, 'hogql') && plan.hogqlExpression) item = `(${plan.hogqlExpression})`
  if (takes(plan, '$pageview')) {
    // one trailing slash dropped, "/" kept (PostHog's replaceRegexpAll(url, '(.)/$', '\\1'), without a regex)
    const url = `ifNull(toString(properties.$current_url), '')`
    item = `if(event = '$pageview', if(length(${url}) > 1 AND endsWith(${url}, '/'), substring(${url}, 1, length(${url}) - 1), ${url}), ${item})`
  }
  if (takes(plan, '$screen')) item = `if(event = '$screen', toString(properties.$screen_name), ${item})`
  item = `ifNull(toString(${item}), '')`
  for (const rule of plan.cleaning) item = `replaceRegexpAll(${item}, ${literal(rule.regex)}, ${literal(rule.alias)})`
  if (plan.groupings.length > 0) {
    const regexes = `[${plan.groupings.map((g) => literal(groupingRegex(g))).join(', ')}]`
    item = `if(multiMatchAnyIndex(${item}, ${regexes}) > 0, arrayElement(${literal(plan.groupings)}, multiMatchAnyIndex(${item}, ${regexes})), ${item})`
  }
  return item
}

function eventTypeCondition(plan: PathsPlan): string | undefined {
  const or: string[] = []
  if (plan.includeTypes.includes('$pageview')) or.push(`event = '$pageview'`)
  if (plan.includeTypes.includes('$screen')) or.push(`event = '$screen'`)
  if (plan.includeTypes.includes('custom_event')) or.push(`NOT startsWith(event, '$')`)
  return or.length === 0 ? undefined : or.map((c) => `(${c})`).join(' OR ')
}

/**
 * One row per item of each session path, with `path_key` (`"<i>_<item>"`), `last_path_key` (the item before it,
 * NULL for the first), `path_dropoff_key` (the path's last item), `conversion_time` (seconds since the item before)
 * and the item's event (`ts`, `uuid`, `session_id`, `window_id`).
 */
export function pathItemsQuery(plan: PathsPlan, from: string, to: string, withEvents = false): string {
  const item = pathItemExpr(plan)
  const funnelActor = plan.funnel ? `toString(${plan.funnel.actor})` : undefined
  const where = and([
    `timestamp >= ${from}`,
    `timestamp <= ${to}`,
    plan.shared,
    eventTypeCondition(plan),
    plan.excludeEvents.length > 0 ? `${item} NOT IN ${literal(plan.excludeEvents)}` : undefined,
    // only the funnel's actors, each within the bounds of their funnel step
    funnelActor ? `${funnelActor} IN {funnel_ids}` : undefined,
    funnelActor
      ? `toFloat(timestamp) >= transform(${funnelActor}, {funnel_ids}, arrayMap(x -> toFloat(x), {funnel_lower}), toFloat(0))`
      : undefined,
    funnelActor
      ? `toFloat(timestamp) <= transform(${funnelActor}, {funnel_ids}, arrayMap(x -> toFloat(x), {funnel_upper}), toFloat(0))`
      : undefined,
  ])
  // within a funnel, a path ends only where the conversion window would have
  const gap = plan.funnel?.windowSeconds ?? SESSION_GAP_SECONDS
  // (seconds, item, uuid, session, window, timestamp), sorted by time within each person
  const events =
    `SELECT person_id AS actor, arraySort(x -> tupleElement(x, 1), groupArray(tuple(toUnixTimestamp64Milli(timestamp) / 1000, ${item}${withEvents ? ', toString(uuid), toString($session_id), toString($window_id), timestamp' : ''}))) AS evs ` +
    `FROM ${eventsFrom(plan.sampling)} WHERE ${where} GROUP BY actor`
  const sessions =
    `SELECT actor, arraySplit((x, gap) -> if(gap < ${gap}, 0, 1), evs, arrayDifference(arrayMap(x -> tupleElement(x, 1), evs))) AS session_paths ` +
    `FROM (${events})`
  // consecutive repeats collapse onto the last of them
  const compact =
    'arrayFilter((x, next_item) -> tupleElement(x, 2) != next_item, session, ' +
    "arrayPopFront(arrayPushBack(arrayMap(x -> tupleElement(x, 2), session), ''))) AS compact"
  const names = 'arrayMap(x -> tupleElement(x, 2), compact)'
  const n = plan.stepLimit
  const half = Math.floor(n / 2)
  let cut: string
  let where2: string | undefined
  if (plan.startPoint && plan.endPoint) {
    const s = `indexOf(${names}, ${literal(plan.startPoint)})`
    const fromStart = `arraySlice(compact, ${s})`
    const e = `indexOf(arrayMap(x -> tupleElement(x, 2), ${fromStart}), ${literal(plan.endPoint)})`
    cut =
      `if(${s} > 0 AND ${e} > 0, arrayResize(${fromStart}, ${e}), compact) AS cut, ` +
      // too long: the first half, "...", the last half
      `if(length(cut) > ${n}, arrayConcat(arraySlice(cut, 1, ${half}), [tuple(tupleElement(arrayElement(cut, ${1 + half}), 1), '...'${withEvents ? [3, 4, 5, 6].map((k) => `, tupleElement(arrayElement(cut, ${1 + half}), ${k})`).join('') : ''})], arraySlice(cut, ${-half}, ${half})), cut) AS limited`
    where2 = `${s} > 0 AND ${e} > 0`
  } else if (plan.endPoint) {
    const e = `indexOf(${names}, ${literal(plan.endPoint)})`
    cut = `if(${e} > 0, arrayResize(compact, ${e}), compact) AS cut, arraySlice(cut, ${-n}) AS limited`
    where2 = `${e} > 0`
  } else if (plan.startPoint) {
    const s = `indexOf(${names}, ${literal(plan.startPoint)})`
    cut = `if(${s} > 0, arraySlice(compact, ${s}), compact) AS cut, arraySlice(cut, 1, ${n}) AS limited`
    where2 = `${s} > 0`
  } else {
    cut = `compact AS cut, arraySlice(cut, 1, ${n}) AS limited`
  }
  const perSession =
    `SELECT actor, ${compact}, ${cut}, ` +
    `concat(toString(length(limited)), '_', tupleElement(arrayElement(limited, -1), 2)) AS path_dropoff_key ` +
    `FROM (${sessions}) ARRAY JOIN session_paths AS session` +
    (where2 ? ` WHERE ${where2}` : '')
  return (
    'SELECT actor, path_dropoff_key, idx, tupleElement(arrayElement(limited, idx), 2) AS item, ' +
    `if(idx > 1, tupleElement(arrayElement(limited, idx - 1), 2), '') AS previous_item, ` +
    `concat(toString(idx), '_', tupleElement(arrayElement(limited, idx), 2)) AS path_key, ` +
    `if(idx > 1, concat(toString(idx - 1), '_', tupleElement(arrayElement(limited, idx - 1), 2)), NULL) AS last_path_key, ` +
    `if(idx > 1, tupleElement(arrayElement(limited, idx), 1) - tupleElement(arrayElement(limited, idx - 1), 1), 0) AS conversion_time ` +
    (withEvents
      ? ', tupleElement(arrayElement(limited, idx), 6) AS ts, tupleElement(arrayElement(limited, idx), 3) AS uuid, ' +
        'tupleElement(arrayElement(limited, idx), 4) AS session_id, tupleElement(arrayElement(limited, idx), 5) AS window_id '
      : '') +
    `FROM (${perSession}) ARRAY JOIN arrayEnumerate(limited) AS idx`
  )
}

async function resolveBounds(
  node: Record<string, unknown>,
  insight: InsightContext,
  ctx: RunContext,
  run: HogQLExecutor,
) {
  const earliest = wantsAllTime(node) ? await earliestEvent(ctx, run) : undefined
  const range = resolveDateRange(
    isObject(node.dateRange) ? node.dateRange : undefined,
    'day',
    insight.team,
    insight.now,
    earliest,
  )
  return { range, bounds: rangeBoundsHogQL(range) }
}

/** Keeps the edges reachable from a first-step node (PostHog's `validate_results`). */
function reachable<T extends { source: string; target: string }>(edges: T[]): T[] {
  const next = new Map<string, string[]>()
  const stack: string[] = []
  for (const e of edges) {
    next.set(e.source, [...(next.get(e.source) ?? []), e.target])
    if (e.source.startsWith('1_')) stack.push(e.source)
  }
  const seen = new Set<string>()
  while (stack.length > 0) {
    const node = stack.pop() as string
    seen.add(node)
    for (const target of next.get(node) ?? []) if (!seen.has(target)) stack.push(target)
  }
  return edges.filter((e) => seen.has(e.source))
}

export function createPathsRunner(deps: InsightDeps): NodeRunner {
  return async (node, ctx, run) => {
    const started = performance.now()
    const insight = await loadInsightContext(ctx, deps)
    const plan = pathsPlanOf(node, insight)
    const { range, bounds } = await resolveBounds(node, insight, ctx, run)
    const placeholders = await funnelPlaceholders(plan, insight, ctx, run)
    const having = and([
      plan.minEdgeWeight !== undefined ? `value >= ${plan.minEdgeWeight}` : undefined,
      plan.maxEdgeWeight !== undefined ? `value <= ${plan.maxEdgeWeight}` : undefined,
    ])
    const executed = await run(
      // keys are written once per edge, not once per item
      "SELECT concat(toString(idx - 1), '_', previous_item) AS source, concat(toString(idx), '_', item) AS target, " +
        'count() AS value, avg(conversion_time) AS average_conversion_time ' +
        `FROM (${pathItemsQuery(plan, bounds.from, bounds.to)}) WHERE idx > 1 ` +
        `GROUP BY idx, previous_item, item HAVING ${having} ORDER BY value DESC, source, target LIMIT ${plan.edgeLimit}`,
      ctx,
      { placeholders },
    )
    ctx.stats.resultRows += executed.rows.length
    const edges = executed.rows.map(([source, target, value, time]) => ({
      source: String(source),
      target: String(target),
      value: plan.sampling === undefined ? Number(value) : Math.round(Number(value) / plan.sampling),
      average_conversion_time: Number(time) * 1000,
    }))
    return {
      results: reachable(edges),
      timings: [{ k: '.', t: (performance.now() - started) / 1000 }],
      modifiers: isObject(node.modifiers) ? node.modifiers : {},
      resolved_date_range: resolvedDateRange(range),
      hogql: ctx.stats.hogql ?? null,
      error: null,
    }
  }
}

/**
 * The persons behind a paths node or edge as an actors source (`actor_id`, `event_count`, `matching_events`):
 * those whose session path drops off at `pathDropoffKey`, or goes from `pathStartKey` to `pathEndKey` (either
 * alone: arriving at / leaving from that node).
 */
export async function pathsActorsSource(
  node: Record<string, unknown>,
  insight: InsightContext,
  ctx: RunContext,
  run: HogQLExecutor,
): Promise<{ hogql: string; placeholders?: Record<string, unknown> }> {
  const plan = pathsPlanOf(node, insight)
  const { bounds } = await resolveBounds(node, insight, ctx, run)
  const placeholders = await funnelPlaceholders(plan, insight, ctx, run)
  let condition: string
  if (plan.dropoffKey) {
    condition = `path_dropoff_key = ${literal(plan.dropoffKey)} AND path_dropoff_key = path_key`
  } else {
    condition = and([
      plan.startKey ? `last_path_key = ${literal(plan.startKey)}` : undefined,
      plan.endKey ? `path_key = ${literal(plan.endKey)}` : undefined,
    ])
  }
  return {
    hogql:
      'SELECT actor AS actor_id, count() AS event_count, ' +
      'arraySlice(groupUniqArray(tuple(ts, toUUID(uuid), session_id, window_id)), 1, 100) AS matching_events ' +
      `FROM (${pathItemsQuery(plan, bounds.from, bounds.to, true)}) WHERE ${condition} GROUP BY actor_id`,
    placeholders,
  }
}
