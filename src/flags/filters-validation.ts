// Checks a flag's `filters` as the management API receives them and returns them in stored form (payloads as
// JSON strings). Pure: the caller passes what exists in the project (group types, cohorts, flags).
import { ValidationError } from '../http/errors.js'
import { parsePropertyDate } from './dates.js'
import { compileRegex } from './regex.js'
import type { FlagCondition, FlagFilters, FlagVariant, PropertyFilter } from './types.js'

export interface FilterContext {
  groupTypeIndexes: ReadonlySet<number>
  /** Live cohorts of the project: each one's name, and the name of a cohort with behavioural filters it reaches. */
  cohorts: ReadonlyMap<number, { name: string; behavioralName: string | null }>
  /** Live flag ids of the project other than the one being saved. */
  flagIds: ReadonlySet<number>
}

export const PROPERTY_OPERATORS = new Set([
  ...['exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex', 'gt', 'gte', 'lt', 'lte'],
  ...['is_set', 'is_not_set', 'is_date_exact', 'is_date_before', 'is_date_after', 'between', 'not_between'],
  ...['starts_with', 'not_starts_with', 'ends_with', 'not_ends_with', 'icontains_multi', 'not_icontains_multi'],
  ...['semver_eq', 'semver_neq', 'semver_gt', 'semver_gte', 'semver_lt', 'semver_lte', 'semver_tilde'],
  ...['semver_caret', 'semver_wildcard'],
])

const fail = (detail: string, code?: string): never => {
  throw new ValidationError(detail, 'filters', code)
}

/** A value as PostHog's (Python) messages print it. */
function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None'
  if (value === true) return 'True'
  if (value === false) return 'False'
  if (typeof value === 'string') return value
  if (Array.isArray(value))
    return `[${value.map((v) => (typeof v === 'string' ? `'${v}'` : pythonRepr(v))).join(', ')}]`
  if (typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]) => `'${k}': ${typeof v === 'string' ? `'${v}'` : pythonRepr(v)}`)
    return `{${entries.join(', ')}}`
  }
  return String(value)
}

/** Operators PostHog requires a single text value for (numbers are read as their text here too). */
const SCALAR_OPERATORS = new Set(['regex', 'icontains', 'not_regex', 'not_icontains', 'gte', 'lte', 'gt', 'lt'])

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function checkGroupTypeIndex(value: unknown, ctx: FilterContext, where: string): number | null {
  if (value === null || value === undefined) return null
  if (typeof value !== 'number' || !Number.isInteger(value) || !ctx.groupTypeIndexes.has(value)) {
    fail(`Invalid group type index ${JSON.stringify(value)} in ${where}: no such group type in this project.`)
  }
  return value as number
}

function checkProperty(raw: unknown, aggregation: number | null, ctx: FilterContext, where: string): PropertyFilter {
  if (!isObject(raw)) return fail(`Filters are not valid (${where}: each property must be an object).`)
  const type = raw.type ?? (aggregation === null ? 'person' : 'group')
  if (typeof raw.key !== 'string' && typeof raw.key !== 'number') {
    fail(`Filters are not valid (${where}: property "key" is required).`)
  }
  const key = String(raw.key)
  if (key === '') fail(`Filters are not valid (${where}: property "key" is required).`)
  const operator = raw.operator ?? null
  if (type === 'cohort') {
    if (operator !== null && operator !== 'in' && operator !== 'not_in') {
      fail(`Filters are not valid (${where}: cohort filters use the operator "in" or "not_in").`)
    }
    const id = Number(raw.value)
    const cohort = Number.isInteger(id) ? ctx.cohorts.get(id) : undefined
    if (!cohort) return fail(`Cohort with id ${pythonRepr(raw.value)} does not exist`, 'cohort_does_not_exist')
    if (cohort.behavioralName !== null) {
      fail(
        `Cohort '${cohort.behavioralName}' with filters on events cannot be used in feature flags.`,
        'behavioral_cohort_found',
      )
    }
    // an absent operator means `in`; it stays absent, as PostHog stores and shows it
    return { ...raw, key: 'id', type, value: id, ...(operator !== null ? { operator } : {}) } as PropertyFilter
  }
  if (type === 'flag') {
    if (operator !== 'flag_evaluates_to') fail("Flag properties must use the 'flag_evaluates_to' operator")
    if (!ctx.flagIds.has(Number(key))) fail(`Flag dependency ${key} does not exist in this project.`)
    if (typeof raw.value !== 'boolean' && typeof raw.value !== 'string') {
      fail(`Filters are not valid (${where}: a flag filter's value is true, false or a variant key).`)
    }
    return { ...raw, key, type } as PropertyFilter
  }
  if (type === 'person') {
    if (aggregation !== null) fail('Filters are not valid (can only use group properties)')
  } else if (type === 'group') {
    const index = checkGroupTypeIndex(raw.group_type_index ?? aggregation, ctx, where)
    if (index === null || (aggregation !== null && index !== aggregation) || aggregation === null) {
      fail(
        aggregation === null
          ? 'Filters are not valid (can only use person, cohort, and flag properties)'
          : 'Filters are not valid (can only use group properties)',
      )
    }
  } else {
    fail(
      aggregation === null
        ? 'Filters are not valid (can only use person, cohort, and flag properties)'
        : 'Filters are not valid (can only use group properties)',
    )
  }
  if (operator === 'in' || operator === 'not_in') {
    fail(
      `The '${operator}' operator is only valid for cohort properties, not '${type}' properties.`,
      'invalid_operator',
    )
  }
  if (operator !== null && (typeof operator !== 'string' || !PROPERTY_OPERATORS.has(operator))) {
    fail(`Invalid operator ${pythonRepr(operator)} for property "${key}".`, 'invalid_operator')
  }
  if (operator !== 'is_set' && operator !== 'is_not_set' && raw.value === undefined) {
    fail(`Filters are not valid (${where}: property "${key}" needs a value).`)
  }
  const value = raw.value
  if (typeof operator === 'string' && SCALAR_OPERATORS.has(operator)) {
    if (typeof value !== 'string' && !(typeof value === 'number' && Number.isFinite(value))) {
      fail(`Invalid value for operator ${operator}: ${pythonRepr(value)}`, 'invalid_value')
    }
    if ((operator === 'regex' || operator === 'not_regex') && compileRegex(String(value)) === null) {
      fail(`Invalid regex pattern: ${String(value)}`, 'invalid_regex')
    }
    if ((operator === 'regex' || operator === 'not_regex') && hasBadBound(String(value))) {
      // PostHog's trial evaluation of the conditions fails on such a pattern: its answer has no attr
      throw new ValidationError("Can't evaluate flag - please check release conditions", null)
    }
  }
  if (operator === 'is_date_before' || operator === 'is_date_after') {
    if (parsePropertyDate(value, 'UTC', new Date()) === null)
      fail(`Invalid date value: ${pythonRepr(value)}`, 'invalid_date')
  }
  return { ...raw, key, type } as PropertyFilter
}

/**
 * Whether a pattern has a `{` that opens a repetition bound (a digit follows it) but is no valid bound
 * (`{m}`, `{m,}`, `{m,n}` with m ≤ n ≤ 255): RE2 reads such a brace as a literal, PostgreSQL's and Rust's regex
 * engines, which evaluate PostHog's flags, refuse the pattern.
 */
export function hasBadBound(pattern: string): boolean {
  let inClass = false
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === '\\') {
      i++
      continue
    }
    if (inClass) {
      if (c === ']') inClass = false
      continue
    }
    if (c === '[') {
      inClass = true
      // a `]` right after `[` or `[^` is a member, not the end
      if (pattern[i + 1] === '^') i++
      if (pattern[i + 1] === ']') i++
      continue
    }
    if (c !== '{' || !/[0-9]/.test(pattern[i + 1] ?? '')) continue
    const bound = /^\{(\d+)(?:(,)(\d*))?\}/.exec(pattern.slice(i))
    if (!bound) return true
    const min = Number(bound[1])
    const max = bound[2] ? (bound[3] === '' ? min : Number(bound[3])) : min
    if (min > 255 || max > 255 || max < min) return true
    i += bound[0].length - 1
  }
  return false
}

function checkRollout(value: unknown, where: string): number | null {
  if (value === null || value === undefined) return null
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0 || value > 100) {
    fail(`Invalid rollout percentage in ${where}: must be a number between 0 and 100.`)
  }
  return value as number
}

function checkConditions(
  raw: unknown,
  name: string,
  flagAggregation: number | null,
  variants: readonly FlagVariant[] | 'any',
  ctx: FilterContext,
): FlagCondition[] | undefined {
  if (raw === undefined || raw === null) return undefined
  if (!Array.isArray(raw)) return fail(`Filters are not valid (${name} must be a list of condition sets).`)
  return raw.map((condition, i) => {
    const where = `${name}[${i}]`
    if (!isObject(condition)) return fail(`Filters are not valid (${where} must be an object).`)
    const hasOwnAggregation = Object.hasOwn(condition, 'aggregation_group_type_index')
    const aggregation = hasOwnAggregation
      ? checkGroupTypeIndex(condition.aggregation_group_type_index, ctx, where)
      : flagAggregation
    const properties = condition.properties ?? []
    if (!Array.isArray(properties)) return fail(`Filters are not valid (${where}.properties must be a list).`)
    const variant = condition.variant ?? null
    const isDeclared = variants === 'any' || variants.some((v) => v.key === variant)
    if (variant !== null && (typeof variant !== 'string' || !isDeclared)) {
      fail('Filters are not valid (variant override does not exist)')
    }
    const checked: FlagCondition = {
      ...condition,
      properties: properties.map((p) => checkProperty(p, aggregation, ctx, where)),
      rollout_percentage: checkRollout(condition.rollout_percentage, where),
      variant: variant as string | null,
    }
    if (hasOwnAggregation) checked.aggregation_group_type_index = aggregation
    return checked
  })
}

function checkVariants(raw: unknown): FlagVariant[] {
  if (raw === undefined || raw === null) return []
  if (!isObject(raw) || !Array.isArray(raw.variants))
    return fail('Invalid variant definitions: expected {variants: [...]}.')
  const seen = new Set<string>()
  let total = 0
  const variants = (raw.variants as unknown[]).map((v) => {
    if (!isObject(v) || typeof v.key !== 'string' || !/^[a-zA-Z0-9_-]+$/.test(v.key)) {
      return fail('Invalid variant definitions: each variant needs a key of letters, numbers, "-" or "_".')
    }
    if (seen.has(v.key)) fail(`Invalid variant definitions: duplicate variant key "${v.key}".`)
    seen.add(v.key)
    if (typeof v.rollout_percentage !== 'number' || v.rollout_percentage < 0 || v.rollout_percentage > 100) {
      fail(`Invalid variant definitions: variant "${v.key}" needs a rollout_percentage between 0 and 100.`)
    }
    total += v.rollout_percentage as number
    return { ...v, key: v.key, rollout_percentage: v.rollout_percentage as number } as FlagVariant
  })
  if (variants.length > 0 && Math.abs(total - 100) > 1e-9) {
    fail('Invalid variant definitions: Variant rollout percentages must sum to 100.')
  }
  return variants
}

function checkPayloads(raw: unknown, variants: readonly FlagVariant[]): Record<string, string> {
  if (raw === undefined || raw === null) return {}
  if (!isObject(raw)) return fail('Payloads must be passed as a dictionary')
  const payloads: Record<string, string> = {}
  for (const [key, value] of Object.entries(raw)) {
    if (value === null || value === undefined || value === '') continue
    if (!key.startsWith('holdout-')) {
      if (variants.length > 0 && !variants.some((v) => v.key === key)) {
        fail('Payload keys must match a variant key for multivariate flags')
      }
      if (variants.length === 0 && key !== 'true') fail("Payload keys must be 'true' for boolean flags")
    }
    if (typeof value === 'string') {
      try {
        JSON.parse(value)
      } catch {
        fail('Payload value is not valid JSON')
      }
      payloads[key] = value
    } else {
      payloads[key] = JSON.stringify(value)
    }
  }
  return payloads
}

/** Validates and normalises a flag's filters; throws ValidationError(attr `filters`) with the first problem. */
export function validateFlagFilters(raw: unknown, ctx: FilterContext): FlagFilters {
  if (!isObject(raw)) return fail('Filters must be an object.')
  // A property of another kind than the flag aggregates by is PostHog's first complaint, before the group type.
  const wanted = raw.aggregation_group_type_index
  if (typeof wanted === 'number' && Array.isArray(raw.groups)) {
    for (const condition of raw.groups) {
      const properties = isObject(condition) && Array.isArray(condition.properties) ? condition.properties : []
      for (const p of properties) {
        if (!isObject(p) || p.type === undefined) continue
        if (p.type !== 'group' || (typeof p.group_type_index === 'number' && p.group_type_index !== wanted)) {
          fail('Filters are not valid (can only use group properties)')
        }
      }
    }
  }
  const aggregation = checkGroupTypeIndex(raw.aggregation_group_type_index, ctx, 'filters')
  const variants = checkVariants(raw.multivariate)
  const groups = checkConditions(raw.groups ?? [], 'groups', aggregation, variants, ctx) ?? []
  const filters: FlagFilters = {
    ...raw,
    groups,
    multivariate: variants.length > 0 ? { ...(raw.multivariate as object), variants } : null,
    payloads: checkPayloads(raw.payloads, variants),
    aggregation_group_type_index: aggregation,
  }
  const superGroups = checkConditions(raw.super_groups, 'super_groups', null, variants, ctx)
  if (superGroups) filters.super_groups = superGroups
  const holdoutGroups = checkConditions(raw.holdout_groups, 'holdout_groups', aggregation, 'any', ctx)
  if (holdoutGroups) filters.holdout_groups = holdoutGroups
  return filters
}
