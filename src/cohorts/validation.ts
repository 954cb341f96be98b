// Cohort definitions as the API receives them: nested AND/OR groups of person-property filters and cohort
// references (with `negation`), checked and returned in stored form. Pure.

import { PROPERTY_OPERATORS } from '../flags/filters-validation.js'
import type { CohortPropertyGroup, PropertyFilter } from '../flags/types.js'
import { ValidationError } from '../http/errors.js'

const fail = (detail: string): never => {
  throw new ValidationError(detail, 'filters')
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const MAX_DEPTH = 10

function checkNode(node: unknown, depth: number, into: Set<number>): CohortPropertyGroup | PropertyFilter {
  if (!isObject(node)) return fail('Filters are not valid (every node must be an object).')
  if (Array.isArray(node.values)) {
    if (depth > MAX_DEPTH) fail(`Filters are not valid (groups nest deeper than ${MAX_DEPTH} levels).`)
    const type = node.type ?? 'AND'
    if (type !== 'AND' && type !== 'OR') fail('Filters are not valid (a group type is "AND" or "OR").')
    return { type: type as string, values: node.values.map((v) => checkNode(v, depth + 1, into)) }
  }
  const type = node.type ?? 'person'
  if (type === 'cohort') {
    const id = Number(node.value)
    if (!Number.isInteger(id)) fail('Filters are not valid (a cohort filter needs the cohort id as value).')
    into.add(id)
    return { ...node, key: 'id', type, value: id } as PropertyFilter
  }
  if (type !== 'person') {
    fail(`Filters are not valid (only person property and cohort filters are supported; got "${String(type)}").`)
  }
  if (typeof node.key !== 'string' || node.key === '') fail('Filters are not valid (a property filter needs a key).')
  const operator = node.operator ?? 'exact'
  if (typeof operator !== 'string' || !PROPERTY_OPERATORS.has(operator)) {
    fail(`Filters are not valid (unknown operator ${JSON.stringify(operator)}).`)
  }
  if (operator !== 'is_set' && operator !== 'is_not_set' && node.value === undefined) {
    fail(`Filters are not valid (property "${String(node.key)}" needs a value).`)
  }
  return { ...node, type, operator } as PropertyFilter
}

/** Turns the legacy `groups` list (ORed groups of ANDed properties) into the filters form. */
export function filtersFromLegacyGroups(groups: unknown): unknown {
  if (!Array.isArray(groups)) return fail('groups must be a list.')
  return {
    properties: {
      type: 'OR',
      values: groups.map((g) => ({
        type: 'AND',
        values: isObject(g) && Array.isArray(g.properties) ? g.properties : [],
      })),
    },
  }
}

/** Validates a dynamic cohort's filters; returns them normalised plus the ids of the cohorts they reference. */
export function validateCohortFilters(raw: unknown): {
  filters: { properties: CohortPropertyGroup }
  references: Set<number>
} {
  if (!isObject(raw) || !isObject(raw.properties)) {
    return fail('Filters are not valid (expected {properties: {type: "AND"|"OR", values: [...]}}).')
  }
  const references = new Set<number>()
  const root = checkNode(raw.properties, 0, references)
  const properties = Array.isArray((root as CohortPropertyGroup).values)
    ? (root as CohortPropertyGroup)
    : { type: 'AND', values: [root] }
  return { filters: { properties }, references }
}

/** Distinct ids from a CSV text: first column of each line, quotes removed, a `distinct_id` header skipped. */
export function distinctIdsFromCsv(csv: string): string[] {
  const ids: string[] = []
  for (const [i, line] of csv.split(/\r?\n/).entries()) {
    let cell = line.split(',')[0]?.trim() ?? ''
    if (cell.startsWith('"') && cell.endsWith('"') && cell.length >= 2) cell = cell.slice(1, -1).replaceAll('""', '"')
    if (cell === '') continue
    if (i === 0 && /^distinct[ _-]?id$/i.test(cell)) continue
    ids.push(cell)
  }
  return ids
}
