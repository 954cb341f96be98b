/**
 * Property filters and date bounds of query nodes, written as HogQL text that the compiler then parses,
 * types and binds (every value becomes a bound parameter there, never spliced into engine SQL). Pure.
 */
import { ValidationError } from '../http/errors.js'

/** A HogQL literal for a JSON value. */
export function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL'
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new ValidationError('Numbers in filters must be finite.', 'value')
    return String(value)
  }
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`
  return `'${String(value).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
}

/** A HogQL identifier, quoted when it is not a plain name. */
export function ident(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``
}

type Filter = Record<string, unknown>

const isObject = (v: unknown): v is Filter => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * Which table the filters apply to: `events` (query nodes), or `persons` (a cohort's definition, compiled into a
 * subquery over persons, where person properties are the table's own `properties`).
 */
export type FilterScope = 'events' | 'persons' | 'sessions'

function fieldOf(filter: Filter, scope: FilterScope): string {
  const key = filter.key
  const type = filter.type ?? (scope === 'persons' ? 'person' : 'event')
  if (scope === 'persons' && type !== 'person') {
    throw new ValidationError(`Cohort filters of type "${String(type)}" are not supported.`, 'type')
  }
  if (scope === 'sessions' && type !== 'session') {
    throw new ValidationError(`The '${String(type)}' property filter does not work in 'session' scope`, 'type')
  }
  if (type === 'hogql') {
    if (typeof key !== 'string' || key.trim() === '') throw new ValidationError('A hogql filter needs a key.', 'key')
    return `(${key})`
  }
  if (typeof key !== 'string' || key === '') throw new ValidationError('A property filter needs a key.', 'key')
  switch (type) {
    case 'event':
    case 'feature':
      // PostHog treats the autocapture chain as an event property, but it is a column of the events table
      return key === '$elements_chain' ? 'elements_chain' : `properties[${literal(key)}]`
    case 'flag':
      // a flag filter on events: the value the flag had when the event was sent
      return `properties[${literal(key.startsWith('$feature/') ? key : `$feature/${key}`)}]`
    case 'person':
      return scope === 'persons' ? `properties[${literal(key)}]` : `person.properties[${literal(key)}]`
    case 'group': {
      const index = filter.group_type_index
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index > 4) {
        throw new ValidationError('A group filter needs a group_type_index from 0 to 4.', 'group_type_index')
      }
      return `group_${index}.properties[${literal(key)}]`
    }
    case 'session':
      return scope === 'sessions' ? `sessions.${ident(key)}` : `session.${ident(key)}`
    case 'event_metadata':
      return ident(key)
    default:
      throw new ValidationError(`Property filters of type "${String(type)}" are not supported.`, 'type')
  }
}

/** Properties are stored as JSON text, so scalar values compare as their text unless the field is typed. */
const asText = (value: unknown) => (typeof value === 'number' || typeof value === 'boolean' ? String(value) : value)

function numberOf(value: unknown): string {
  const n = typeof value === 'number' ? value : Number(value)
  if (value === '' || value === null || !Number.isFinite(n)) {
    throw new ValidationError(`Expected a number, got ${JSON.stringify(value)}.`, 'value')
  }
  return String(n)
}

/** `{type: 'cohort', key: 'id', value: 5}`: the event's person (or the person itself) is in cohort 5. */
function cohortFilterToHogQL(filter: Filter, scope: FilterScope): string {
  const id = typeof filter.value === 'string' && /^\d+$/.test(filter.value) ? Number(filter.value) : filter.value
  if (typeof id !== 'number' || !Number.isInteger(id)) {
    throw new ValidationError('A cohort filter needs the cohort id as value.', 'value')
  }
  const negated = filter.operator === 'not_in'
  return `${scope === 'persons' ? 'id' : 'person_id'} ${negated ? 'NOT IN' : 'IN'} COHORT ${id}`
}

function propertyFilterToHogQL(filter: Filter, scope: FilterScope): string {
  const expr = positiveFilterToHogQL(filter, scope)
  return filter.negation === true ? `NOT (${expr})` : expr
}

function positiveFilterToHogQL(filter: Filter, scope: FilterScope): string {
  const type = filter.type ?? 'event'
  if (type === 'cohort') return cohortFilterToHogQL(filter, scope)
  if (type === 'element') {
    if (scope === 'persons') throw new ValidationError('Cohort filters of type "element" are not supported.', 'type')
    return elementFilterToHogQL(filter)
  }
  if (type === 'hogql') return fieldOf(filter, scope)
  const field = fieldOf(filter, scope)
  const raw = type === 'event_metadata' ? (x: unknown) => x : asText
  const value = filter.value
  const values = Array.isArray(value) ? value : [value]
  const operator = (filter.operator ?? 'exact') as string
  const textField = `toString(${field})`
  switch (operator) {
    case 'exact':
    case 'in':
      if (values.length === 0) return 'false'
      return values.length === 1
        ? `${field} = ${literal(raw(values[0]))}`
        : `${field} IN (${values.map((v) => literal(raw(v))).join(', ')})`
    case 'is_not':
    case 'not_in':
      if (values.length === 0) return 'true'
      return values.length === 1
        ? `${field} != ${literal(raw(values[0]))}`
        : `${field} NOT IN (${values.map((v) => literal(raw(v))).join(', ')})`
    case 'icontains':
      return `(${values.map((v) => `${textField} ILIKE ${literal(`%${String(v)}%`)}`).join(' OR ')})`
    case 'not_icontains':
      return `(${values.map((v) => `${textField} NOT ILIKE ${literal(`%${String(v)}%`)}`).join(' AND ')})`
    case 'regex':
      return `ifNull(match(${textField}, ${literal(String(values[0]))}), 0)`
    case 'not_regex':
      return `ifNull(not(match(${textField}, ${literal(String(values[0]))})), 1)`
    case 'gt':
      return `toFloat(${field}) > ${numberOf(values[0])}`
    case 'gte':
    case 'min':
      return `toFloat(${field}) >= ${numberOf(values[0])}`
    case 'lt':
      return `toFloat(${field}) < ${numberOf(values[0])}`
    case 'lte':
    case 'max':
      return `toFloat(${field}) <= ${numberOf(values[0])}`
    case 'between':
    case 'not_between': {
      if (values.length !== 2) throw new ValidationError('between needs two values.', 'value')
      const inside = `toFloat(${field}) >= ${numberOf(values[0])} AND toFloat(${field}) <= ${numberOf(values[1])}`
      return operator === 'between' ? `(${inside})` : `NOT (${inside})`
    }
    case 'is_set':
      return `${field} != NULL`
    case 'is_not_set':
      return `${field} = NULL`
    case 'is_cleaned_path_exact':
      return `${cleanedPath(textField)} = ${literal(cleanPath(String(values[0])))}`
    case 'flag_evaluates_to':
      return `${field} = ${literal(raw(values[0]))}`
    case 'is_date_exact':
      return `toDateTime(${field}) = toDateTime(${literal(String(values[0]))})`
    case 'is_date_before':
      return `toDateTime(${field}) < toDateTime(${literal(String(values[0]))})`
    case 'is_date_after':
      return `toDateTime(${field}) > toDateTime(${literal(String(values[0]))})`
    default:
      throw new ValidationError(`Unsupported property filter operator "${operator}".`, 'operator')
  }
}

/** A path without its query string, fragment and trailing slashes (`/` stays), as PostHog's cleaned paths. */
function cleanPath(path: string): string {
  const bare = path.replace(/[?#].*$/, '')
  const trimmed = bare.replace(/\/+$/, '')
  return trimmed === '' ? '/' : trimmed
}

const cleanedPath = (text: string) =>
  `if(replaceRegexpAll(replaceRegexpAll(${text}, '[?#].*$', ''), '/+$', '') = '', '/', replaceRegexpAll(replaceRegexpAll(${text}, '[?#].*$', ''), '/+$', ''))`

/** Text of an RE2 pattern that matches `text` literally. */
export const escapeRegex = (text: string) => text.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&')

/**
 * One element of a CSS selector (`tag.class#id[attr="v"]`) as a pattern over one element of `elements_chain`
 * (`tag.classA.classB:attr__id="x"nth-child="1"…`; classes are written sorted).
 */
function selectorPartPattern(part: string): string {
  const tag = /^([A-Za-z][A-Za-z0-9-]*|\*)?/.exec(part)?.[1]
  let rest = part.slice(tag?.length ?? 0)
  const classes: string[] = []
  const attributes: string[] = []
  while (rest.length > 0) {
    const cls = /^\.([A-Za-z0-9_-]+)/.exec(rest)
    const id = /^#([A-Za-z0-9_-]+)/.exec(rest)
    const attr = /^\[([A-Za-z0-9_-]+)(?:=["']?([^"'\]]*)["']?)?\]/.exec(rest)
    if (cls) classes.push(cls[1])
    else if (id) attributes.push(`attr_id="${escapeRegex(id[1])}"`)
    else if (attr)
      attributes.push(`attr__${escapeRegex(attr[1])}${attr[2] === undefined ? '' : `="${escapeRegex(attr[2])}"`}`)
    else throw new ValidationError(`Unsupported selector: ${JSON.stringify(part)}.`, 'value')
    rest = rest.slice((cls ?? id ?? attr)![0].length)
  }
  const tagPattern = tag && tag !== '*' ? escapeRegex(tag) : '[^.:;]*'
  const classPattern = classes
    .sort()
    .map((c) => `(?:\\.[^.:;]+)*?\\.${escapeRegex(c)}`)
    .join('')
  const attrPattern = attributes.length > 0 ? `:${attributes.map((a) => `[^;]*?${a}`).join('')}[^;]*` : '(?::[^;]*)?'
  return `${tagPattern}${classPattern}(?:\\.[^.:;]+)*${attrPattern}(?:;|$)`
}

/** A CSS selector (descendant ` ` and child `>` combinators) as a pattern over the whole `elements_chain`. */
export function selectorPattern(selector: string): string {
  const tokens = selector
    .trim()
    .replace(/\s*>\s*/g, ' > ')
    .split(/\s+/)
    .filter(Boolean)
  if (tokens.length === 0) throw new ValidationError('A selector cannot be empty.', 'value')
  // the chain lists the clicked element first, then its ancestors
  const parts: string[] = []
  let combinator = ''
  for (let i = tokens.length - 1; i >= 0; i--) {
    const token = tokens[i]
    if (token === '>') {
      combinator = '>'
      continue
    }
    if (parts.length > 0 && combinator !== '>') parts.push('(?:[^;]*;)*?')
    parts.push(selectorPartPattern(token))
    combinator = ''
  }
  return `(?:^|;)${parts.join('')}`
}

/** `{type: 'element', key: 'selector'|'tag_name'|'text'|'href', …}`: the autocaptured element chain matches. */
function elementFilterToHogQL(filter: Filter): string {
  const key = filter.key
  const operator = (filter.operator ?? 'exact') as string
  const values = (Array.isArray(filter.value) ? filter.value : [filter.value]).map((v) => String(v ?? ''))
  const negated = operator === 'is_not' || operator === 'not_icontains' || operator === 'not_regex'
  const any = (patterns: string[]) => {
    const expr = patterns.map((p) => `match(elements_chain, ${literal(p)})`).join(' OR ')
    return negated ? `NOT (${expr})` : `(${expr})`
  }
  const valuePattern = (v: string) => {
    if (operator === 'regex' || operator === 'not_regex') return v
    if (operator === 'icontains' || operator === 'not_icontains') return `(?i)[^"]*${escapeRegex(v)}[^"]*`
    return escapeRegex(v)
  }
  switch (key) {
    case 'selector':
      return any(values.map(selectorPattern))
    case 'tag_name':
      return any(values.map((v) => `(?:^|;)${escapeRegex(v)}(?:\\.|$|:|;)`))
    case 'text':
      return any(values.map((v) => `(?:^|;)[^;]*text="${valuePattern(v)}"`))
    case 'href':
      return any(values.map((v) => `(?:^|;)[^;]*href="${valuePattern(v)}"`))
    default:
      throw new ValidationError(`Element filters on "${String(key)}" are not supported.`, 'key')
  }
}

/**
 * A list of filters (ANDed) or a `PropertyGroupFilter` (`{type: 'AND'|'OR', values}`, nested) as one HogQL
 * boolean expression; undefined when there is nothing to filter on.
 */
export function propertiesToHogQL(properties: unknown, scope: FilterScope = 'events'): string | undefined {
  if (properties === undefined || properties === null) return undefined
  if (Array.isArray(properties)) {
    const parts = properties.map((p) => propertiesToHogQL(p, scope)).filter((p): p is string => p !== undefined)
    return parts.length === 0 ? undefined : parts.length === 1 ? parts[0] : parts.map((p) => `(${p})`).join(' AND ')
  }
  if (!isObject(properties)) throw new ValidationError('Property filters must be objects.', 'properties')
  if ((properties.type === 'AND' || properties.type === 'OR') && Array.isArray(properties.values)) {
    const parts = properties.values.map((p) => propertiesToHogQL(p, scope)).filter((p): p is string => p !== undefined)
    if (parts.length === 0) return undefined
    return parts.map((p) => `(${p})`).join(` ${properties.type} `)
  }
  return propertyFilterToHogQL(properties, scope)
}

const UNITS: Record<string, { interval: string; start: string; factor?: number }> = {
  s: { interval: 'SECOND', start: 'toStartOfSecond' },
  M: { interval: 'MINUTE', start: 'toStartOfMinute' },
  h: { interval: 'HOUR', start: 'toStartOfHour' },
  d: { interval: 'DAY', start: 'toStartOfDay' },
  w: { interval: 'WEEK', start: 'toStartOfWeek' },
  m: { interval: 'MONTH', start: 'toStartOfMonth' },
  q: { interval: 'WEEK', start: 'toStartOfQuarter', factor: 13 },
  y: { interval: 'YEAR', start: 'toStartOfYear' },
}

/**
 * A date bound as a HogQL DateTime expression in the project's timezone: relative (`-7d`, `-24h`, `-1mStart`,
 * `dStart`, `-2wEnd`) or absolute (ISO; naive times are read in the project's timezone). `all` and empty mean
 * no bound (undefined).
 */
export function dateToHogQL(value: unknown, attr: string): string | undefined {
  if (value === undefined || value === null || value === '' || value === 'all') return undefined
  if (typeof value !== 'string') throw new ValidationError('Dates must be strings.', attr)
  const relative = /^-?(\d*)([sMhdwmqy])(Start|End)?$/.exec(value)
  if (relative) {
    const unit = UNITS[relative[2]]
    const count = relative[1] === '' ? 0 : Number(relative[1]) * (unit.factor ?? 1)
    const moment = count === 0 ? 'now()' : `now() - INTERVAL ${count} ${unit.interval}`
    if (relative[3] === 'Start') return `${unit.start}(${moment})`
    if (relative[3] === 'End') return `${unit.start}(${moment}) + INTERVAL ${unit.factor ?? 1} ${unit.interval}`
    return moment
  }
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?(Z|[+-]\d{2}:?\d{2})?$/.test(value)) {
    throw new ValidationError(`Invalid date: ${JSON.stringify(value)}.`, attr)
  }
  return `toDateTime(${literal(value)})`
}
