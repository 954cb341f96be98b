/**
 * `breakdownFilter` (hogql.md §4.0, §4.12 "Trends breakdown") → the HogQL of each breakdown value, the
 * other/null buckets, the limit, and numeric histogram bins. Pure.
 */
import { ValidationError } from '../../http/errors.js'
import { ident, literal } from '../filters.js'

export const BREAKDOWN_OTHER = '$$_posthog_breakdown_other_$$'
export const BREAKDOWN_NULL = '$$_posthog_breakdown_null_$$'
export const DEFAULT_BREAKDOWN_LIMIT = 25
const MAX_BREAKDOWNS = 3

export interface BreakdownDim {
  type: string
  property: string | number
  groupTypeIndex?: number
  normalizeUrl?: boolean
  histogramBinCount?: number
}

export type BreakdownSpec =
  | { kind: 'none' }
  | { kind: 'values'; dims: BreakdownDim[]; multi: boolean; limit: number; hideOther: boolean }
  | { kind: 'cohort'; cohorts: (number | 'all')[] }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function dimOf(raw: Record<string, unknown>, attr: string): BreakdownDim {
  const type = (raw.type ?? raw.breakdown_type ?? 'event') as string
  const property = raw.property ?? raw.breakdown
  if (!['event', 'person', 'group', 'session', 'hogql', 'event_metadata'].includes(type)) {
    throw new ValidationError(`Unsupported breakdown type ${JSON.stringify(type)}.`, `${attr}__type`, 'invalid_choice')
  }
  if ((typeof property !== 'string' || property === '') && typeof property !== 'number') {
    throw new ValidationError('A breakdown needs a property.', attr, 'required')
  }
  const groupTypeIndex = raw.group_type_index ?? raw.breakdown_group_type_index
  if (type === 'group' && (typeof groupTypeIndex !== 'number' || groupTypeIndex < 0 || groupTypeIndex > 4)) {
    throw new ValidationError('A group breakdown needs a group type index from 0 to 4.', `${attr}__group_type_index`)
  }
  const bins = raw.histogram_bin_count ?? raw.breakdown_histogram_bin_count
  if (bins !== undefined && bins !== null && (typeof bins !== 'number' || !Number.isInteger(bins) || bins < 1)) {
    throw new ValidationError('histogram_bin_count must be a positive integer.', `${attr}__histogram_bin_count`)
  }
  return {
    type,
    property: property as string | number,
    groupTypeIndex: typeof groupTypeIndex === 'number' ? groupTypeIndex : undefined,
    normalizeUrl: (raw.normalize_url ?? raw.breakdown_normalize_url) === true,
    histogramBinCount: typeof bins === 'number' ? Math.min(bins, 100) : undefined,
  }
}

/** Reads `breakdownFilter` of a node. */
export function breakdownOf(filter: unknown): BreakdownSpec {
  if (!isObject(filter)) return { kind: 'none' }
  const limitRaw = filter.breakdown_limit
  if (limitRaw !== undefined && limitRaw !== null && (typeof limitRaw !== 'number' || limitRaw < 1)) {
    throw new ValidationError('breakdown_limit must be a positive integer.', 'breakdownFilter__breakdown_limit')
  }
  const limit = typeof limitRaw === 'number' ? Math.floor(limitRaw) : DEFAULT_BREAKDOWN_LIMIT
  const hideOther = filter.breakdown_hide_other_aggregation === true
  if (Array.isArray(filter.breakdowns) && filter.breakdowns.length > 0) {
    if (filter.breakdowns.length > MAX_BREAKDOWNS) {
      throw new ValidationError(`At most ${MAX_BREAKDOWNS} breakdowns are allowed.`, 'breakdownFilter__breakdowns')
    }
    const dims = filter.breakdowns.map((b, i) => {
      if (!isObject(b)) throw new ValidationError('A breakdown must be an object.', `breakdownFilter__breakdowns__${i}`)
      return dimOf(b, `breakdownFilter__breakdowns__${i}`)
    })
    return { kind: 'values', dims, multi: true, limit, hideOther }
  }
  const breakdown = filter.breakdown
  if (breakdown === undefined || breakdown === null || breakdown === '') return { kind: 'none' }
  if (filter.breakdown_type === 'cohort') {
    const ids = Array.isArray(breakdown) ? breakdown : [breakdown]
    const cohorts = ids.map((id) => {
      if (id === 'all' || id === 0 || id === '0') return 'all' as const
      const n = typeof id === 'string' && /^\d+$/.test(id) ? Number(id) : id
      if (typeof n !== 'number' || !Number.isInteger(n)) {
        throw new ValidationError('A cohort breakdown lists cohort ids or "all".', 'breakdownFilter__breakdown')
      }
      return n
    })
    return { kind: 'cohort', cohorts }
  }
  if (Array.isArray(breakdown)) {
    throw new ValidationError(
      'breakdown must be one property; use breakdowns for several.',
      'breakdownFilter__breakdown',
    )
  }
  return { kind: 'values', dims: [dimOf(filter, 'breakdownFilter__breakdown')], multi: false, limit, hideOther }
}

/** The raw value of a breakdown dimension (before null handling). */
export function rawBreakdownExpr(dim: BreakdownDim): string {
  const key = String(dim.property)
  let expr: string
  switch (dim.type) {
    case 'event':
      expr = `properties[${literal(key)}]`
      break
    case 'person':
      expr = `person.properties[${literal(key)}]`
      break
    case 'group':
      expr = `group_${dim.groupTypeIndex}.properties[${literal(key)}]`
      break
    case 'session':
      expr = `session.${ident(key)}`
      break
    case 'event_metadata':
      expr = ident(key)
      break
    default:
      expr = `(${key})`
  }
  if (dim.normalizeUrl) {
    const bare = `replaceRegexpAll(toString(${expr}), '[/?#]+$', '')`
    expr = `if(isNull(${expr}), NULL, if(${bare} = '', '/', ${bare}))`
  }
  return expr
}

/** A breakdown value as text, with missing and empty values in the null bucket. */
export const breakdownValueExpr = (raw: string) => `ifNull(nullIf(toString(${raw}), ''), ${literal(BREAKDOWN_NULL)})`

/** Histogram bins over edges from `quantiles`: `[lo,hi]` labels as PostHog writes them. */
export function histogramExpr(raw: string, edges: number[]): string {
  const unique = [...new Set(edges.map((e) => Math.round(e * 100) / 100))].sort((a, b) => a - b)
  if (unique.length === 0) return literal(BREAKDOWN_NULL)
  if (unique.length === 1) {
    return `if(isNull(toFloat(${raw})), ${literal(BREAKDOWN_NULL)}, ${literal(binLabel(unique[0], unique[0]))})`
  }
  const x = `toFloat(${raw})`
  const branches: string[] = []
  for (let i = 0; i < unique.length - 1; i++) {
    const last = i === unique.length - 2
    branches.push(`${x} ${last ? '<=' : '<'} ${unique[i + 1]}`, literal(binLabel(unique[i], unique[i + 1])))
  }
  return `if(isNull(${x}), ${literal(BREAKDOWN_NULL)}, multiIf(${branches.join(', ')}, ${literal(binLabel(unique[unique.length - 2], unique[unique.length - 1]))}))`
}

/** Python's float formatting of a bin edge (`10.0`, `2.5`). */
const pyFloat = (n: number) => (Number.isInteger(n) ? n.toFixed(1) : String(n))
export const binLabel = (lo: number, hi: number) => `[${pyFloat(lo)},${pyFloat(hi)}]`

/** The quantiles that split a numeric breakdown into `bins` bins. */
export function histogramQuantilesExpr(raw: string, bins: number): string {
  const levels = Array.from({ length: bins + 1 }, (_, i) => Math.round((i / bins) * 1e6) / 1e6)
  return `quantiles(${levels.join(', ')})(toFloat(${raw}))`
}

/** Breakdown values of one cohort breakdown: the ids of the cohorts an event's person is in, one row each. */
export function cohortBreakdownExpr(cohorts: (number | 'all')[]): string {
  const items = cohorts.map((c) => (c === 'all' ? "'all'" : `if(person_id IN COHORT ${c}, '${c}', '')`))
  return `arrayJoin(arrayFilter(x -> x != '', [${items.join(', ')}]))`
}

/** Order of breakdown values in results: regular values by total desc then value, then null, then other. */
export function compareBreakdowns(
  a: { key: string; total: number; isNull: boolean; isOther: boolean },
  b: { key: string; total: number; isNull: boolean; isOther: boolean },
): number {
  const rank = (x: typeof a) => (x.isOther ? 2 : x.isNull ? 1 : 0)
  if (rank(a) !== rank(b)) return rank(a) - rank(b)
  if (a.total !== b.total) return b.total - a.total
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0
}
