// Property matching with the semantics of PostHog's /flags server (match_property with full properties):
// a missing key is a definite answer, and any evaluation error is "no match".

import { compareInstants, type Instant, parseFilterDate, parsePropertyDate } from './dates.js'
import { type CompiledRegex, compileRegex, searchRegex } from './regex.js'
import { compareSemver, type ParsedSemver, parseSemverLoose, parseSemverRequirement, satisfies } from './semver.js'
import type { PropertyFilter } from './types.js'

export interface MatchOptions {
  /** Team timezone for naive and relative dates (default UTC). */
  timezone?: string
  now?: Date
}

/** Per-filter values derived once from the stored definition (filters are immutable once loaded). */
interface FilterCache {
  lowerValue?: string
  asciiLowerValue?: string
  regex?: CompiledRegex | null
  semver?: ParsedSemver | null
  requirement?: ReturnType<typeof parseSemverRequirement>
  numeric?: number | null
  dates?: Map<string, Instant | null>
}
const filterCache = new WeakMap<PropertyFilter, FilterCache>()

function cacheOf(filter: PropertyFilter): FilterCache {
  let cache = filterCache.get(filter)
  if (!cache) {
    cache = {}
    filterCache.set(filter, cache)
  }
  return cache
}

/** JSON strings as-is, everything else JSON-serialised (Rust's `Value::to_string`). */
export function stringifyValue(value: unknown): string {
  if (typeof value === 'string') return value
  if (value === undefined || value === null) return 'null'
  if (typeof value === 'number') return numberToString(value)
  return JSON.stringify(value) ?? 'null'
}

function numberToString(n: number): string {
  const s = String(n)
  return s.includes('e+') ? s.replace('e+', 'e') : s
}

const ASCII_UPPER = /[A-Z]/

export function asciiLowercase(s: string): string {
  return ASCII_UPPER.test(s) ? s.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32)) : s
}

// Rust's `str::parse::<f64>`: optional sign, decimal or exponent form, inf/infinity/nan; no whitespace.
const FLOAT_SYNTAX = /^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)$/i

export function parseRustFloat(s: string): number | null {
  if (!FLOAT_SYNTAX.test(s)) return null
  const lower = s.toLowerCase()
  const sign = lower.startsWith('-') ? -1 : 1
  const body = lower.replace(/^[+-]/, '')
  if (body === 'nan') return Number.NaN
  if (body === 'inf' || body === 'infinity') return sign * Number.POSITIVE_INFINITY
  return Number(s)
}

export function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return value
  return parseRustFloat(stringifyValue(value))
}

function isTruthyOrFalsy(value: unknown): boolean {
  if (typeof value === 'boolean') return true
  if (typeof value === 'string') {
    const lower = value.toLowerCase()
    return lower === 'true' || lower === 'false'
  }
  if (Array.isArray(value)) return value.every(isTruthyOrFalsy)
  return false
}

function isTruthy(value: unknown): boolean {
  if (typeof value === 'boolean') return value
  if (typeof value === 'string') return value.toLowerCase() === 'true'
  if (Array.isArray(value)) return value.every(isTruthy)
  return false
}

function exactMatch(filter: PropertyFilter, filterValue: unknown, propertyValue: unknown): boolean {
  if (isTruthyOrFalsy(filterValue)) return isTruthy(filterValue) === isTruthy(propertyValue)
  if (Array.isArray(filterValue)) {
    const target = stringifyValue(propertyValue).toLowerCase()
    return filterValue.some((v) => stringifyValue(v).toLowerCase() === target)
  }
  const cache = cacheOf(filter)
  cache.lowerValue ??= stringifyValue(filterValue).toLowerCase()
  return cache.lowerValue === stringifyValue(propertyValue).toLowerCase()
}

function asciiLowerFilterValue(filter: PropertyFilter, filterValue: unknown): string {
  const cache = cacheOf(filter)
  cache.asciiLowerValue ??= asciiLowercase(stringifyValue(filterValue))
  return cache.asciiLowerValue
}

function regexOf(filter: PropertyFilter, filterValue: unknown): CompiledRegex | null {
  const cache = cacheOf(filter)
  if (cache.regex === undefined) cache.regex = compileRegex(stringifyValue(filterValue))
  return cache.regex
}

function filterNumber(filter: PropertyFilter, filterValue: unknown): number | null {
  const cache = cacheOf(filter)
  if (cache.numeric === undefined) cache.numeric = toNumber(filterValue)
  return cache.numeric
}

function filterDate(filter: PropertyFilter, filterValue: string, options: MatchOptions): Instant | null {
  const timezone = options.timezone ?? 'UTC'
  // Relative dates move with the clock, so only absolute ones are cached.
  if (/^-?\d+[hdwmy]$/.test(filterValue)) return parseFilterDate(filterValue, timezone, options.now ?? new Date())
  const cache = cacheOf(filter)
  cache.dates ??= new Map()
  let parsed = cache.dates.get(timezone)
  if (parsed === undefined) {
    parsed = parseFilterDate(filterValue, timezone, options.now ?? new Date())
    cache.dates.set(timezone, parsed)
  }
  return parsed
}

const NEGATED_WHEN_MISSING = new Set([
  'is_not',
  'not_icontains',
  'not_regex',
  'not_starts_with',
  'not_ends_with',
  'not_icontains_multi',
  'not_between',
])

function hasKey(properties: Record<string, unknown>, key: string): boolean {
  return Object.hasOwn(properties, key) && properties[key] !== undefined
}

/**
 * Whether `properties` satisfy one property filter, as PostHog's /flags server decides it (errors ⇒ false).
 * Cohort (`in`/`not_in`) and flag-dependency (`flag_evaluates_to`) filters are resolved by the matcher.
 */
export function matchProperty(
  filter: PropertyFilter,
  properties: Record<string, unknown>,
  options: MatchOptions = {},
): boolean {
  const operator = filter.operator ?? 'exact'
  const present = hasKey(properties, filter.key)
  if (operator === 'is_set') return present
  if (operator === 'is_not_set') return !present

  const filterValue = filter.value
  if (filterValue === null || filterValue === undefined) return false
  if (!present) return NEGATED_WHEN_MISSING.has(operator)
  const value = properties[filter.key]

  switch (operator) {
    case 'exact':
      return exactMatch(filter, filterValue, value)
    case 'is_not':
      return !exactMatch(filter, filterValue, value)
    case 'icontains':
    case 'not_icontains': {
      const contained = asciiLowercase(stringifyValue(value)).includes(asciiLowerFilterValue(filter, filterValue))
      return operator === 'icontains' ? contained : !contained
    }
    case 'starts_with':
    case 'not_starts_with': {
      const prefixed = asciiLowercase(stringifyValue(value)).startsWith(asciiLowerFilterValue(filter, filterValue))
      return operator === 'starts_with' ? prefixed : !prefixed
    }
    case 'ends_with':
    case 'not_ends_with': {
      const suffixed = asciiLowercase(stringifyValue(value)).endsWith(asciiLowerFilterValue(filter, filterValue))
      return operator === 'ends_with' ? suffixed : !suffixed
    }
    case 'icontains_multi':
    case 'not_icontains_multi': {
      const haystack = asciiLowercase(stringifyValue(value))
      const needles = Array.isArray(filterValue) ? filterValue : [filterValue]
      const any = needles.some((n) => haystack.includes(asciiLowercase(stringifyValue(n))))
      return operator === 'icontains_multi' ? any : !any
    }
    case 'regex':
    case 'not_regex': {
      // A pattern that does not compile, or a value too long to search, is no match for both operators.
      const regex = regexOf(filter, filterValue)
      const found = regex ? searchRegex(regex, stringifyValue(value)) : null
      if (found === null) return false
      return operator === 'regex' ? found : !found
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const lhs = toNumber(value)
      const rhs = filterNumber(filter, filterValue)
      if (lhs === null || rhs === null) return false
      if (operator === 'gt') return lhs > rhs
      if (operator === 'gte') return lhs >= rhs
      if (operator === 'lt') return lhs < rhs
      return lhs <= rhs
    }
    case 'between':
    case 'not_between':
      return matchBetween(operator, filterValue, value)
    case 'semver_eq':
    case 'semver_neq':
    case 'semver_gt':
    case 'semver_gte':
    case 'semver_lt':
    case 'semver_lte':
      return matchSemverComparison(filter, operator, filterValue, value)
    case 'semver_tilde':
    case 'semver_caret':
    case 'semver_wildcard': {
      const version = parseSemverLoose(stringifyValue(value))
      if (!version) return false
      const cache = cacheOf(filter)
      if (cache.requirement === undefined)
        cache.requirement = parseSemverRequirement(operator, stringifyValue(filterValue))
      return cache.requirement !== null && satisfies(version, cache.requirement)
    }
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact': {
      const propertyDate = parsePropertyDate(value, options.timezone ?? 'UTC', options.now ?? new Date())
      if (!propertyDate || typeof filterValue !== 'string') return false
      const target = filterDate(filter, filterValue, options)
      if (!target) return false
      const order = compareInstants(propertyDate, target)
      if (operator === 'is_date_before') return order < 0
      if (operator === 'is_date_after') return order > 0
      return order === 0
    }
    default:
      // in/not_in, flag_evaluates_to and unknown operators cannot be matched against properties.
      return false
  }
}

function matchBetween(operator: 'between' | 'not_between', bounds: unknown, value: unknown): boolean {
  if (!Array.isArray(bounds) || bounds.length !== 2) return false
  const low = toNumber(bounds[0])
  const high = toNumber(bounds[1])
  if (low === null || high === null || Number.isNaN(low) || Number.isNaN(high) || low > high) return false
  const n = toNumber(value)
  if (n === null || Number.isNaN(n)) return false
  const inRange = n >= low && n <= high
  return operator === 'between' ? inRange : !inRange
}

function matchSemverComparison(
  filter: PropertyFilter,
  operator: string,
  filterValue: unknown,
  value: unknown,
): boolean {
  const version = parseSemverLoose(stringifyValue(value))
  if (!version) return false
  const cache = cacheOf(filter)
  if (cache.semver === undefined) cache.semver = parseSemverLoose(stringifyValue(filterValue))
  if (!cache.semver) return false
  const order = compareSemver(version, cache.semver)
  switch (operator) {
    case 'semver_eq':
      return order === 0
    case 'semver_neq':
      return order !== 0
    case 'semver_gt':
      return order > 0
    case 'semver_gte':
      return order >= 0
    case 'semver_lt':
      return order < 0
    default:
      return order <= 0
  }
}
