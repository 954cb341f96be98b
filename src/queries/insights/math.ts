/**
 * `math` of a series (hogql.md §4.0 "Math", §4.12 "Trends math") → how its values are aggregated. Pure.
 */
import { ValidationError } from '../../http/errors.js'
import { ident, literal } from '../filters.js'
import type { SeriesNode } from './series.js'

const PROPERTY_MATH: Record<string, (x: string) => string> = {
  sum: (x) => `sum(${x})`,
  avg: (x) => `avg(${x})`,
  min: (x) => `min(${x})`,
  max: (x) => `max(${x})`,
  median: (x) => `quantile(0.5)(${x})`,
  p75: (x) => `quantile(0.75)(${x})`,
  p90: (x) => `quantile(0.9)(${x})`,
  p95: (x) => `quantile(0.95)(${x})`,
  p99: (x) => `quantile(0.99)(${x})`,
}

const PER_ACTOR: Record<string, (x: string) => string> = {
  avg_count_per_actor: (x) => `avg(${x})`,
  min_count_per_actor: (x) => `min(${x})`,
  max_count_per_actor: (x) => `max(${x})`,
  median_count_per_actor: (x) => `quantile(0.5)(${x})`,
  p75_count_per_actor: (x) => `quantile(0.75)(${x})`,
  p90_count_per_actor: (x) => `quantile(0.9)(${x})`,
  p95_count_per_actor: (x) => `quantile(0.95)(${x})`,
  p99_count_per_actor: (x) => `quantile(0.99)(${x})`,
}

export const MATHS = [
  'total',
  'dau',
  'weekly_active',
  'monthly_active',
  'unique_session',
  'unique_group',
  'first_time_for_user',
  'first_matching_event_for_user',
  'hogql',
  ...Object.keys(PROPERTY_MATH),
  ...Object.keys(PER_ACTOR),
]

export type MathPlan =
  /** one aggregate per bucket; `scaled` ones are multiplied back up when sampling */
  | { kind: 'simple'; agg: string; condition?: string; scaled: boolean }
  /** count per actor per bucket, then `outer` over those counts */
  | { kind: 'per_actor'; outer: (x: string) => string }
  /** distinct actors active in the `days` days ending with each bucket */
  | { kind: 'window'; days: number }
  /** each actor counted once, at their first event (of the series, or the first one passing every filter) */
  | { kind: 'first'; ignoreFiltersForFirst: boolean }

/** The actor an insight counts: a group of type `groupIndex`, else the person. */
export const actorExpr = (groupIndex: number | undefined) =>
  groupIndex === undefined ? 'person_id' : `$group_${groupIndex}`

export function groupIndexOf(value: unknown, attr: string): number | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 4) {
    throw new ValidationError('A group type index is an integer from 0 to 4.', attr)
  }
  return value
}

function propertyExpr(series: SeriesNode, at: string): string {
  const key = series.math_property
  if (typeof key !== 'string' || key === '') {
    throw new ValidationError(`math "${series.math}" needs math_property.`, `${at}__math_property`, 'required')
  }
  switch (series.math_property_type ?? 'event_properties') {
    case 'event_properties':
      return `toFloat(properties[${literal(key)}])`
    case 'person_properties':
      return `toFloat(person.properties[${literal(key)}])`
    case 'session_properties':
      return `toFloat(session.${ident(key)})`
    case 'group_properties': {
      const index = groupIndexOf(series.math_group_type_index, `${at}__math_group_type_index`) ?? 0
      return `toFloat(group_${index}.properties[${literal(key)}])`
    }
    default:
      throw new ValidationError(
        `Unsupported math_property_type ${JSON.stringify(series.math_property_type)}.`,
        `${at}__math_property_type`,
        'invalid_choice',
      )
  }
}

/** The plan for series `index` of an insight aggregating by `groupIndex` (undefined = persons). */
export function mathPlan(series: SeriesNode, index: number, groupIndex: number | undefined): MathPlan {
  const at = `series__${index}`
  const math = series.math ?? 'total'
  if (typeof math !== 'string' || !MATHS.includes(math)) {
    throw new ValidationError(`Unknown math ${JSON.stringify(math)}.`, `${at}__math`, 'invalid_choice')
  }
  const actor = actorExpr(groupIndex)
  switch (math) {
    case 'total':
      return { kind: 'simple', agg: 'count()', scaled: true }
    case 'dau':
      return { kind: 'simple', agg: `count(DISTINCT ${actor})`, scaled: true }
    case 'weekly_active':
      return { kind: 'window', days: 7 }
    case 'monthly_active':
      return { kind: 'window', days: 30 }
    case 'unique_session':
      return { kind: 'simple', agg: 'count(DISTINCT $session_id)', condition: "$session_id != ''", scaled: true }
    case 'unique_group': {
      const g = groupIndexOf(series.math_group_type_index, `${at}__math_group_type_index`)
      if (g === undefined) {
        throw new ValidationError(
          'math "unique_group" needs math_group_type_index.',
          `${at}__math_group_type_index`,
          'required',
        )
      }
      return { kind: 'simple', agg: `count(DISTINCT $group_${g})`, condition: `$group_${g} != ''`, scaled: true }
    }
    case 'first_time_for_user':
      return { kind: 'first', ignoreFiltersForFirst: true }
    case 'first_matching_event_for_user':
      return { kind: 'first', ignoreFiltersForFirst: false }
    case 'hogql': {
      if (typeof series.math_hogql !== 'string' || series.math_hogql.trim() === '') {
        throw new ValidationError('math "hogql" needs math_hogql.', `${at}__math_hogql`, 'required')
      }
      return { kind: 'simple', agg: `(${series.math_hogql})`, scaled: false }
    }
  }
  if (math in PROPERTY_MATH) {
    return {
      kind: 'simple',
      agg: `ifNull(${PROPERTY_MATH[math](propertyExpr(series, at))}, 0)`,
      scaled: math === 'sum',
    }
  }
  return { kind: 'per_actor', outer: PER_ACTOR[math] }
}
