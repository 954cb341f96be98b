/**
 * The HogQL of a persons list (`GET /persons/`): the ids of a page of the project's persons, newest first.
 *
 * A person is the latest version of its rows in the event store's `persons` (a ReplacingMergeTree by version).
 * The HogQL `persons` table says so with an aggregation (`argMax(…, version) … GROUP BY id`) over every person of
 * the project carrying each one's latest properties, which the filters then read: over 1M persons that grouping
 * of JSON texts took 10–18× the hand-written `FINAL` read. The list reads `raw_persons FINAL` instead — the same
 * latest versions, merged by the engine in the table's own order rather than hashed — and filters those rows:
 * not deleted, the conditions on the id (distinct id, cohort), then a cheap necessary condition on the JSON text
 * (`position(properties, 'pro')`, a substring search) before the exact filters (HogQL's property read, a JSON
 * extraction and a regular expression per row), so that the expensive test runs on few rows.
 */
import { literal } from '../queries/filters.js'

/** Characters a value may have for its text to appear as it is in the stored JSON (no escapes, no spacing). */
const PLAIN = /^[A-Za-z0-9@._+ -]+$/
/** JSON's own words: a typed (Boolean) property may compare `'True'` equal to a stored `true`. */
const JSON_WORDS = new Set(['true', 'false', 'null'])

/**
 * A value whose text must appear in the JSON of any person it matches: plain characters, with a letter (a
 * number or a date can be stored in another spelling and be compared as one by a typed property).
 */
function plainText(value: unknown): string | undefined {
  if (typeof value !== 'string' || !PLAIN.test(value) || !/[A-Za-z]/.test(value)) return undefined
  if (JSON_WORDS.has(value.toLowerCase())) return undefined
  return value
}

/**
 * A condition on a stored row's JSON text that every row matching the filter meets (a necessary condition, not
 * a sufficient one); undefined when the filter has none worth testing.
 */
export function cheapCondition(filter: unknown): string | undefined {
  if (Array.isArray(filter)) return allOf(filter.map(cheapCondition))
  if (filter === null || typeof filter !== 'object') return undefined
  const node = filter as Record<string, unknown>
  if ((node.type === 'AND' || node.type === 'OR') && Array.isArray(node.values)) {
    const parts = node.values.map(cheapCondition)
    if (node.type === 'AND') return allOf(parts)
    // One branch without a condition can match any row.
    return parts.length > 0 && parts.every((p) => p !== undefined) ? anyOf(parts as string[]) : undefined
  }
  if ((node.type ?? 'person') !== 'person' || node.negation === true || typeof node.key !== 'string') return undefined
  const operator = node.operator ?? 'exact'
  const values = Array.isArray(node.value) ? node.value : [node.value]
  const search =
    operator === 'exact' || operator === 'in'
      ? 'position'
      : operator === 'icontains'
        ? 'positionCaseInsensitive'
        : undefined
  if (search === undefined || values.length === 0) return undefined
  const texts = values.map(plainText)
  if (texts.some((t) => t === undefined)) return undefined
  return anyOf(texts.map((t) => `${search}(properties, ${literal(t)}) > 0`))
}

function allOf(parts: (string | undefined)[]): string | undefined {
  const present = parts.filter((p): p is string => p !== undefined)
  return present.length === 0 ? undefined : present.map((p) => `(${p})`).join(' AND ')
}

function anyOf(parts: string[]): string {
  return parts.length === 1 ? parts[0] : `(${parts.map((p) => `(${p})`).join(' OR ')})`
}

export interface PersonListConditions {
  /** conditions on a person's properties (and other versioned fields), HogQL over `raw_persons` */
  rows: string[]
  /** necessary conditions on the rows' JSON text, cheaper than `rows` */
  cheap: string[]
  /** conditions on the person's id alone (its distinct ids, its cohorts) */
  ids: string[]
}

/** The HogQL selecting the ids of one page (one row more than `limit`, to tell whether more follow). */
export function personListHogQL(conditions: PersonListConditions, limit: number, offset: number): string {
  // The cheap test comes before the exact one: `and` stops at the first false operand, so the exact one (a JSON
  // extraction and a regular expression) runs on few rows.
  const where = ['is_deleted = 0', ...conditions.ids, ...conditions.cheap, ...conditions.rows]
  return (
    `SELECT id FROM raw_persons FINAL WHERE ${where.map((w) => `(${w})`).join(' AND ')}` +
    ` ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}${offset > 0 ? ` OFFSET ${offset}` : ''}`
  )
}
