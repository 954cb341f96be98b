/**
 * What the web analytics nodes share (hogql.md §4.10, §4.12 "Web overview"; PostHog's
 * `WebAnalyticsQueryRunner`): the date range by day with its previous period, the period tests on a session's
 * start, the filters (query properties and test accounts), the conversion goal and sampling. Pure.
 */
import { ValidationError } from '../../http/errors.js'
import { literal, propertiesToHogQL } from '../filters.js'
import type { InsightContext } from './context.js'
import { previousPeriod, type ResolvedRange, rangeBoundsHogQL, resolveDateRange, shiftedRange } from './date-range.js'
import { samplingOf } from './series.js'
import { fromLocal } from './time.js'

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

export interface WebPlan {
  current: ResolvedRange
  /** the period compared with, when `compareFilter` asks for one */
  previous?: ResolvedRange
  /** query properties and (with `filterTestAccounts`) the project's test-account filters, as one condition */
  filters?: string
  /** the same without the query's event `$pathname` filters (bounce rates by entry page) */
  filtersWithoutPathname?: string
  /** `conversionGoal` as a condition on events (an action or a custom event), if any */
  goal?: string
  /** the goal's action id, for validation by the caller */
  goalActionId?: number
  sampling?: number
}

/** Reads the fields of `WebAnalyticsQueryBase` that change answers. */
export function webPlanOf(node: Record<string, unknown>, insight: InsightContext): WebPlan {
  if (node.properties !== undefined && node.properties !== null && !Array.isArray(node.properties)) {
    throw new ValidationError('properties must be a list of property filters.', 'properties')
  }
  let filters: string | undefined
  let filtersWithoutPathname: string | undefined
  const combine = (properties: unknown) => {
    const parts = [
      propertiesToHogQL(properties),
      node.filterTestAccounts === true ? propertiesToHogQL(insight.testAccountFilters) : undefined,
    ].filter((p): p is string => p !== undefined)
    return parts.length === 0 ? undefined : parts.map((p) => `(${p})`).join(' AND ')
  }
  try {
    filters = combine(node.properties)
    const properties = (node.properties ?? []) as unknown[]
    filtersWithoutPathname = combine(
      properties.filter((p) => !(isObject(p) && (p.type ?? 'event') === 'event' && p.key === '$pathname')),
    )
  } catch (error) {
    if (error instanceof ValidationError) throw new ValidationError(error.detail, 'properties', error.code)
    throw error
  }
  const dateRange = isObject(node.dateRange) ? node.dateRange : undefined
  const current = resolveDateRange(dateRange, 'day', insight.team, insight.now)
  let previous: ResolvedRange | undefined
  const compare = node.compareFilter
  if (compare !== undefined && compare !== null) {
    if (!isObject(compare)) throw new ValidationError('compareFilter must be an object.', 'compareFilter')
    if (typeof compare.compare_to === 'string' && compare.compare_to !== '') {
      previous = shiftedRange(current, compare.compare_to)
    } else if (compare.compare === true) {
      previous = previousPeriod(current)
    }
  }
  const plan: WebPlan = {
    current,
    previous,
    filters,
    filtersWithoutPathname,
    sampling: samplingOf(node.samplingFactor),
  }
  const goal = node.conversionGoal
  if (goal !== undefined && goal !== null) {
    if (isObject(goal) && typeof goal.actionId === 'number' && Number.isInteger(goal.actionId)) {
      if (!insight.actions.has(goal.actionId)) {
        throw new ValidationError(
          `Action ${goal.actionId} does not exist.`,
          'conversionGoal__actionId',
          'does_not_exist',
        )
      }
      plan.goal = `matchesAction(${goal.actionId})`
      plan.goalActionId = goal.actionId
    } else if (isObject(goal) && typeof goal.customEventName === 'string' && goal.customEventName !== '') {
      plan.goal = `event = ${literal(goal.customEventName)}`
    } else {
      throw new ValidationError(
        'conversionGoal is {"actionId": <id>} or {"customEventName": <event>}.',
        'conversionGoal',
      )
    }
  }
  return plan
}

/** `field` inside a range (both bounds inclusive, as PostHog compares them). */
export function inRange(range: ResolvedRange, field: string): string {
  const bounds = rangeBoundsHogQL(range)
  return `(${field} >= ${bounds.from} AND ${field} <= ${bounds.to})`
}

/** `field` inside the current period or the compared one. */
export function inPeriods(plan: WebPlan, field: string): string {
  const current = inRange(plan.current, field)
  return plan.previous ? `(${current} OR ${inRange(plan.previous, field)})` : current
}

/**
 * An aggregate for the current period and one for the previous period (`NULL` without comparison), over rows
 * of per-session values carrying `start_timestamp`.
 */
export function periodPair(plan: WebPlan, fn: string, column: string): [string, string] {
  if (!plan.previous) return [`${fn}(${column})`, 'NULL']
  return [
    `${fn}If(${column}, ${inRange(plan.current, 'start_timestamp')})`,
    `${fn}If(${column}, ${inRange(plan.previous, 'start_timestamp')})`,
  ]
}

/** The events the dashboard counts: pageviews and screens (and the goal's events with a conversion goal). */
export const webEventCondition = (plan: WebPlan) =>
  plan.goal
    ? `(event = '$pageview' OR event = '$screen' OR ${plan.goal})`
    : `(event = '$pageview' OR event = '$screen')`

const pad = (n: number, width = 2) => String(n).padStart(width, '0')

/** A local time as Python's `isoformat()` writes it: `2024-01-08T00:00:00+00:00`, microseconds when not 0. */
function pythonIso(local: Date, micro: number, timeZone: string): string {
  const offsetMinutes = Math.round((local.getTime() - fromLocal(local, timeZone).getTime()) / 60_000)
  const abs = Math.abs(offsetMinutes)
  const offset = `${offsetMinutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  return `${local.toISOString().slice(0, 19)}${micro > 0 ? `.${pad(micro, 6)}` : ''}${offset}`
}

/** The range's bounds as PostHog's `dateFrom` / `dateTo` strings (ISO with the project's offset). */
export function rangeStrings(range: ResolvedRange): { dateFrom: string; dateTo: string } {
  return {
    dateFrom: pythonIso(range.from, range.from.getUTCMilliseconds() * 1000, range.timezone),
    dateTo: pythonIso(range.to, range.toMicro, range.timezone),
  }
}

/** A counted value scaled back from a sample. */
export const unsample = (value: unknown, sampling: number | undefined): number | null => {
  if (value === null || value === undefined) return null
  const n = Number(value)
  if (!Number.isFinite(n)) return null
  return sampling === undefined ? n : Math.round(n / sampling)
}

/** `samplingRate` of a response: `1/10` for a factor of 0.1. */
export function samplingRate(sampling: number | undefined): { numerator: number; denominator?: number } {
  if (sampling === undefined) return { numerator: 1 }
  const inverse = 1 / sampling
  return Number.isInteger(Math.round(inverse * 1e9) / 1e9) && Math.abs(inverse - Math.round(inverse)) < 1e-9
    ? { numerator: 1, denominator: Math.round(inverse) }
    : { numerator: sampling, denominator: 1 }
}
