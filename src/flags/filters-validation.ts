// Checks a flag's `filters` as the management API receives them and returns them in stored form (payloads as
// JSON strings). Pure: the caller passes what exists in the project (group types, cohorts, flags).
import { ValidationError } from '../http/errors.js'
import type { FlagCondition, FlagFilters, FlagVariant, PropertyFilter } from './types.js'

export interface FilterContext {
  groupTypeIndexes: ReadonlySet<number>
  /** Live cohort ids of the project. */
  cohortIds: ReadonlySet<number>
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

const fail = (detail: string): never => {
  throw new ValidationError(detail, 'filters')
}

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
    if (!Number.isInteger(id) || !ctx.cohortIds.has(id))
      fail(`Cohort with id ${JSON.stringify(raw.value)} does not exist.`)
    return { ...raw, key: 'id', type, value: id, operator: operator ?? 'in' } as PropertyFilter
  }
  if (type === 'flag') {
    if (operator !== 'flag_evaluates_to')
      fail(`Filters are not valid (${where}: flag filters use "flag_evaluates_to").`)
    if (!ctx.flagIds.has(Number(key))) fail(`Flag dependency ${key} does not exist in this project.`)
    if (typeof raw.value !== 'boolean' && typeof raw.value !== 'string') {
      fail(`Filters are not valid (${where}: a flag filter's value is true, false or a variant key).`)
    }
    return { ...raw, key, type } as PropertyFilter
  }
  if (type === 'person') {
    if (aggregation !== null) fail(`Filters are not valid (can only use group properties in a group-based flag).`)
  } else if (type === 'group') {
    const index = checkGroupTypeIndex(raw.group_type_index ?? aggregation, ctx, where)
    if (index === null || (aggregation !== null && index !== aggregation) || aggregation === null) {
      fail(`Filters are not valid (group properties must use the flag's group type).`)
    }
  } else {
    fail(`Filters are not valid (can only use person, group, cohort and flag properties; got "${String(type)}").`)
  }
  if (operator !== null && (typeof operator !== 'string' || !PROPERTY_OPERATORS.has(operator))) {
    fail(`Filters are not valid (${where}: unknown operator ${JSON.stringify(operator)}).`)
  }
  if (operator !== 'is_set' && operator !== 'is_not_set' && raw.value === undefined) {
    fail(`Filters are not valid (${where}: property "${key}" needs a value).`)
  }
  return { ...raw, key, type } as PropertyFilter
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
      fail(
        `Filters are not valid (${where}: variant override ${JSON.stringify(variant)} is not a variant of this flag).`,
      )
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
  if (!isObject(raw)) return fail('Payloads must be an object keyed by "true" or a variant key.')
  const payloads: Record<string, string> = {}
  for (const [key, value] of Object.entries(raw)) {
    if (value === null || value === undefined || value === '') continue
    if (key !== 'true' && !variants.some((v) => v.key === key) && !key.startsWith('holdout-')) {
      fail(`Payload key "${key}" is neither "true" nor a variant of this flag.`)
    }
    if (typeof value === 'string') {
      try {
        JSON.parse(value)
      } catch {
        fail(`Payload for "${key}" is not valid JSON.`)
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
