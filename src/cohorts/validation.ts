// Cohort definitions as the API receives them: nested AND/OR groups of person-property filters, cohort
// references and behavioural filters (what people did), each with `negation`, checked as PostHog's cohort
// schema checks them and returned in stored form. The legacy `groups` form is converted, never guessed: what
// cannot be read is refused, so nothing is ever stored as "match everyone". Pure.

import { PROPERTY_OPERATORS } from '../flags/filters-validation.js'
import type { CohortPropertyGroup, PropertyFilter } from '../flags/types.js'
import { ValidationError } from '../http/errors.js'

const fail = (detail: string, attr: string | null = 'filters'): never => {
  throw new ValidationError(detail, attr)
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const MAX_DEPTH = 10

/** PostHog's behavioural filter kinds (`value` of a `type: 'behavioral'` filter). */
export const BEHAVIORAL_VALUES = [
  'performed_event',
  'performed_event_multiple',
  'performed_event_first_time',
  'performed_event_sequence',
  'performed_event_regularly',
  'stopped_performing_event',
  'restarted_performing_event',
] as const
export type BehavioralValue = (typeof BEHAVIORAL_VALUES)[number]

/** Kinds a simple realtime engine can answer; the others make a cohort `analytical`, as PostHog types them. */
const SIMPLE_BEHAVIORAL = new Set<string>(['performed_event', 'performed_event_multiple'])

export const TIME_INTERVALS = ['minute', 'hour', 'day', 'week', 'month', 'year'] as const
export const COUNT_OPERATORS = ['gte', 'lte', 'gt', 'lt', 'eq', 'exact'] as const

/** Fields a behavioural filter may carry (PostHog's schema forbids any other). */
const BEHAVIORAL_FIELDS = new Set([
  ...['type', 'key', 'value', 'event_type', 'time_value', 'time_interval', 'negation', 'operator'],
  ...['operator_value', 'seq_time_interval', 'seq_time_value', 'seq_event', 'seq_event_type', 'total_periods'],
  ...['min_periods', 'event_filters', 'explicit_datetime', 'conditionHash', 'bytecode', 'bytecode_error'],
])

/** Fields each behavioural kind needs to be computed, beyond `key`, `value` and `event_type`. */
const BEHAVIORAL_NEEDS: Record<BehavioralValue, string[]> = {
  performed_event: [],
  performed_event_multiple: ['operator_value'],
  performed_event_first_time: [],
  performed_event_sequence: ['seq_event', 'seq_event_type', 'seq_time_value', 'seq_time_interval'],
  performed_event_regularly: ['time_value', 'time_interval', 'total_periods', 'min_periods', 'operator_value'],
  stopped_performing_event: ['time_value', 'time_interval', 'seq_time_value', 'seq_time_interval'],
  restarted_performing_event: ['time_value', 'time_interval', 'seq_time_value', 'seq_time_interval'],
}

const missing = (kind: string, keys: string[]): never =>
  fail(`Missing required keys for ${kind} filter: ${keys.join(', ')}`)

const absent = (value: unknown) => value === undefined || value === null

function checkInteger(node: Record<string, unknown>, field: string, minimum: number): void {
  const value = node[field]
  if (absent(value)) return
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    fail(`Invalid ${field}: ${JSON.stringify(value)} is not a valid integer.`)
  }
  if ((value as number) < minimum) fail(`Invalid ${field}: must be at least ${minimum}.`)
}

function checkBehavioral(node: Record<string, unknown>): PropertyFilter {
  const extra = Object.keys(node).filter((k) => !BEHAVIORAL_FIELDS.has(k))
  if (extra.length > 0)
    fail(`Unknown fields in behavioral filter: ${extra.join(', ')} (extra inputs are not permitted).`)
  const need = ['key', 'value', 'event_type'].filter((k) => absent(node[k]))
  if (need.length > 0) missing('behavioral', need)
  const value = node.value as string
  if (!(BEHAVIORAL_VALUES as readonly string[]).includes(value)) {
    fail(`Invalid behavioral filter value ${JSON.stringify(value)}: expected one of ${BEHAVIORAL_VALUES.join(', ')}.`)
  }
  const needs = BEHAVIORAL_NEEDS[value as BehavioralValue].filter((k) => absent(node[k]))
  if (needs.length > 0) missing('behavioral', needs)
  for (const [typeField, keyField] of [
    ['event_type', 'key'],
    ['seq_event_type', 'seq_event'],
  ] as const) {
    const type = node[typeField]
    if (absent(type) && absent(node[keyField])) continue
    if (type !== 'events' && type !== 'actions') fail(`Invalid ${typeField}: expected "events" or "actions".`)
    const key = node[keyField]
    if (type === 'events' && (typeof key !== 'string' || key === '')) fail(`Invalid ${keyField}: an event name.`)
    if (type === 'actions' && !Number.isInteger(Number(key))) fail(`Invalid ${keyField}: an action id.`)
  }
  for (const field of ['time_interval', 'seq_time_interval']) {
    const interval = node[field]
    if (!absent(interval) && !(TIME_INTERVALS as readonly string[]).includes(interval as string)) {
      fail(`Invalid ${field}: expected one of ${TIME_INTERVALS.join(', ')}.`)
    }
  }
  if (!absent(node.time_value) !== !absent(node.time_interval) && absent(node.explicit_datetime)) {
    missing('behavioral', absent(node.time_value) ? ['time_value'] : ['time_interval'])
  }
  for (const field of ['time_value', 'seq_time_value', 'total_periods', 'min_periods']) checkInteger(node, field, 1)
  checkInteger(node, 'operator_value', 0)
  if (!absent(node.operator) && !(COUNT_OPERATORS as readonly string[]).includes(node.operator as string)) {
    fail(`Invalid operator for behavioral filter: expected one of ${COUNT_OPERATORS.join(', ')}.`)
  }
  if (!absent(node.explicit_datetime) && typeof node.explicit_datetime !== 'string') {
    fail('Invalid explicit_datetime: expected a date string.')
  }
  if (!absent(node.event_filters) && !Array.isArray(node.event_filters)) fail('Invalid event_filters: expected a list.')
  if (!absent(node.negation) && typeof node.negation !== 'boolean') fail('Invalid negation: expected a boolean.')
  return { ...node, type: 'behavioral' } as unknown as PropertyFilter
}

function checkNode(node: unknown, depth: number, into: Set<number>): CohortPropertyGroup | PropertyFilter {
  if (!isObject(node)) return fail('Filters are not valid (every node must be an object).')
  if (Array.isArray(node.values)) {
    if (depth > MAX_DEPTH) fail(`Filters are not valid (groups nest deeper than ${MAX_DEPTH} levels).`)
    const type = node.type ?? 'AND'
    if (type !== 'AND' && type !== 'OR') fail('Filters are not valid (a group type is "AND" or "OR").')
    return { type: type as string, values: node.values.map((v) => checkNode(v, depth + 1, into)) }
  }
  const type = node.type ?? 'person'
  if (type === 'behavioral') return checkBehavioral(node)
  if (type === 'cohort') {
    if (absent(node.value)) missing('cohort', ['value'])
    const id = Number(node.value)
    if (!Number.isInteger(id) || typeof node.value === 'boolean') fail('Invalid Cohort ID in filter')
    into.add(id)
    return { ...node, key: 'id', type, value: id } as PropertyFilter
  }
  if (type !== 'person') {
    fail(`Filters are not valid (only person, behavioral and cohort filters are supported; got "${String(type)}").`)
  }
  const operator = node.operator
  const need: string[] = []
  if (typeof node.key !== 'string' || node.key === '') need.push('key')
  if (absent(node.value) && operator !== 'is_set' && operator !== 'is_not_set') need.push('value')
  if (absent(operator)) need.push('operator')
  if (need.length > 0) missing('person', need)
  if (typeof operator !== 'string' || !PROPERTY_OPERATORS.has(operator)) {
    fail(`Filters are not valid (unknown operator ${JSON.stringify(operator)}).`)
  }
  return { ...node, type, operator } as PropertyFilter
}

/** The person-property filters of one legacy group: a list of filters, or a `{key: value}` dict (old scripts). */
function legacyProperties(raw: unknown, i: number): Record<string, unknown>[] {
  if (absent(raw)) return []
  if (Array.isArray(raw)) {
    return raw.map((p) => {
      if (!isObject(p)) return fail(`groups[${i}].properties: each property must be an object.`, 'groups')
      // the legacy form defaults to an exact match on a person property
      return { type: 'person', operator: 'exact', ...p }
    })
  }
  if (isObject(raw)) {
    return Object.entries(raw).map(([key, value]) => {
      const [name, operator] = key.includes('__') ? key.split('__', 2) : [key, 'exact']
      if (!PROPERTY_OPERATORS.has(operator) && operator !== 'is_not') {
        fail(`groups[${i}].properties: unknown operator "${operator}" in "${key}".`, 'groups')
      }
      return { key: name, value, type: 'person', operator }
    })
  }
  return fail(`groups[${i}].properties must be a list of property filters or an object of values.`, 'groups')
}

const LEGACY_FIELDS = new Set(['properties', 'action_id', 'event_id', 'days', 'count', 'count_operator', 'id', 'name'])

/**
 * Turns the legacy `groups` list (ORed groups of ANDed person properties, or "did action/event in the last N
 * days, at least/most/exactly `count` times") into the filters form. Anything it cannot read is refused.
 */
export function filtersFromLegacyGroups(groups: unknown): unknown {
  if (typeof groups === 'string') {
    try {
      return filtersFromLegacyGroups(JSON.parse(groups))
    } catch (error) {
      if (error instanceof ValidationError) throw error
      return fail('groups must be a list.', 'groups')
    }
  }
  if (!Array.isArray(groups)) return fail('groups must be a list.', 'groups')
  if (groups.length === 0) return fail('groups must not be empty: a cohort needs at least one condition.', 'groups')
  const values = groups.map((g, i) => {
    if (!isObject(g)) return fail(`groups[${i}] must be an object.`, 'groups')
    const unknown = Object.keys(g).filter((k) => !LEGACY_FIELDS.has(k))
    if (unknown.length > 0) fail(`groups[${i}]: unknown fields ${unknown.join(', ')}.`, 'groups')
    const parts: Record<string, unknown>[] = legacyProperties(g.properties, i)
    const eventKey = g.action_id ?? g.event_id
    if (!absent(g.action_id) && !absent(g.event_id)) fail(`groups[${i}]: either action_id or event_id.`, 'groups')
    if (!absent(eventKey)) {
      const days = absent(g.days) ? null : Number(g.days)
      if (days !== null && (!Number.isInteger(days) || days < 1)) fail(`groups[${i}].days must be a whole number.`)
      const count = absent(g.count) ? null : Number(g.count)
      if (count !== null && (!Number.isInteger(count) || count < 0)) fail(`groups[${i}].count must be a number.`)
      const operator = (g.count_operator as string | undefined) ?? 'gte'
      if (!['gte', 'lte', 'eq'].includes(operator)) fail(`groups[${i}].count_operator: gte, lte or eq.`, 'groups')
      parts.push({
        type: 'behavioral',
        key: absent(g.action_id) ? String(eventKey) : Number(eventKey),
        event_type: absent(g.action_id) ? 'events' : 'actions',
        value: count === null ? 'performed_event' : 'performed_event_multiple',
        ...(days === null ? {} : { time_value: days, time_interval: 'day' }),
        ...(count === null ? {} : { operator, operator_value: count }),
      })
    } else if (!absent(g.days) || !absent(g.count)) {
      fail(`groups[${i}]: days and count need an action_id or event_id.`, 'groups')
    }
    if (parts.length === 0) {
      fail(`groups[${i}] has no condition (properties, action_id or event_id); it would match everyone.`, 'groups')
    }
    return { type: 'AND', values: parts }
  })
  return { properties: { type: 'OR', values } }
}

export interface CheckedFilters {
  filters: { properties: CohortPropertyGroup }
  /** ids of the cohorts the filters reference */
  references: Set<number>
  /** whether any filter is behavioural (needs events) */
  isBehavioral: boolean
  /** PostHog's cohort_type for these filters: person_property, behavioral or analytical */
  cohortType: 'person_property' | 'behavioral' | 'analytical'
}

function leaves(node: CohortPropertyGroup | PropertyFilter): PropertyFilter[] {
  return Array.isArray((node as CohortPropertyGroup).values)
    ? (node as CohortPropertyGroup).values.flatMap(leaves)
    : [node as PropertyFilter]
}

/** Validates a dynamic cohort's filters; returns them normalised, the cohorts they reference and their kind. */
export function validateCohortFilters(raw: unknown): CheckedFilters {
  if (!isObject(raw) || !('properties' in raw)) return fail("Must contain a 'properties' key with type and values")
  if (!isObject(raw.properties)) return fail("Must contain a 'properties' key with type and values")
  const references = new Set<number>()
  const root = checkNode(raw.properties, 0, references)
  const properties = Array.isArray((root as CohortPropertyGroup).values)
    ? (root as CohortPropertyGroup)
    : { type: 'AND', values: [root] }
  const all = leaves(properties)
  if (all.length === 0) fail('Filters are not valid: a cohort needs at least one condition.')
  const behavioral = all.filter((leaf) => leaf.type === 'behavioral')
  const cohortType =
    behavioral.length === 0
      ? 'person_property'
      : behavioral.every((leaf) => SIMPLE_BEHAVIORAL.has(String(leaf.value)))
        ? 'behavioral'
        : 'analytical'
  return { filters: { properties }, references, isBehavioral: behavioral.length > 0, cohortType }
}

/** Whether stored filters hold a behavioural condition anywhere (such cohorts cannot target flags). */
export function hasBehavioralFilters(filters: unknown): boolean {
  const walk = (node: unknown): boolean => {
    if (!isObject(node)) return false
    if (Array.isArray(node.values)) return node.values.some(walk)
    return node.type === 'behavioral'
  }
  return isObject(filters) && walk(filters.properties)
}
