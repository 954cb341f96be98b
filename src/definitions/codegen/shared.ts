import { createHash } from 'node:crypto'

export type CodegenPropertyType = 'String' | 'Numeric' | 'Boolean' | 'DateTime' | 'Duration' | 'Array' | 'Object' | null

export type CodegenProperty = { name: string; property_type: CodegenPropertyType; is_required: boolean }

export type EventSchemaInput = { name: string; properties: CodegenProperty[] }

export type CodegenLanguage = 'typescript' | 'python' | 'golang'

/** One property after merging every occurrence of its name across an event's property groups. */
export type MergedProperty = { name: string; types: CodegenPropertyType[]; isRequired: boolean }

// System events people capture by hand (SPA page views, mobile screens); every other `$` event is SDK-internal.
const INCLUDED_SYSTEM_EVENTS = new Set(['$pageview', '$pageleave', '$screen'])

/** Code-point order, which is how Python compares strings (JS `<` compares UTF-16 units and differs above U+FFFF). */
export function compareCodePoints(a: string, b: string): number {
  const left = Array.from(a)
  const right = Array.from(b)
  const length = Math.min(left.length, right.length)
  for (let i = 0; i < length; i++) {
    const diff = left[i].codePointAt(0)! - right[i].codePointAt(0)!
    if (diff !== 0) return diff
  }
  return left.length - right.length
}

// A lone surrogate cannot be stored in a UTF-8 database nor written to a source file, so it can only be noise.
function toWellFormed(value: string): string {
  return value.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD')
}

/**
 * PostHog's inclusion rule: every event not starting with `$`, plus the three system events people capture by hand,
 * ordered by name. Events listed twice are merged so that no generated file declares a name twice.
 */
export function selectEvents(events: EventSchemaInput[]): EventSchemaInput[] {
  const byName = new Map<string, EventSchemaInput>()
  for (const event of events) {
    const name = toWellFormed(event.name)
    if (name.startsWith('$') && !INCLUDED_SYSTEM_EVENTS.has(name)) continue
    const properties = event.properties.map((p) => ({ ...p, name: toWellFormed(p.name) }))
    const existing = byName.get(name)
    if (existing) existing.properties.push(...properties)
    else byName.set(name, { name, properties })
  }
  return [...byName.values()].sort((a, b) => compareCodePoints(a.name, b.name))
}

/**
 * Merges the occurrences of each property name: the types are unioned (in order of appearance) and the property is
 * required only when every occurrence is. The result is sorted by name so the output does not depend on group order.
 */
export function mergeProperties(properties: CodegenProperty[]): MergedProperty[] {
  const merged = new Map<string, MergedProperty>()
  for (const property of properties) {
    const existing = merged.get(property.name)
    if (!existing) {
      merged.set(property.name, {
        name: property.name,
        types: [property.property_type],
        isRequired: property.is_required,
      })
      continue
    }
    if (!existing.types.includes(property.property_type)) existing.types.push(property.property_type)
    existing.isRequired = existing.isRequired && property.is_required
  }
  return [...merged.values()].sort((a, b) => compareCodePoints(a.name, b.name))
}

// Python's sorted() over (name, type, is_required) tuples; a null type sorts first so ties never compare None to str.
function compareHashTuples(a: CodegenProperty, b: CodegenProperty): number {
  const byName = compareCodePoints(a.name, b.name)
  if (byName !== 0) return byName
  if (a.property_type !== b.property_type) {
    if (a.property_type === null) return -1
    if (b.property_type === null) return 1
    return compareCodePoints(a.property_type, b.property_type)
  }
  return Number(a.is_required) - Number(b.is_required)
}

/**
 * sha256 over orjson's sorted-keys output of `{language, schemas, version}`, first 32 hex digits. orjson writes
 * compact JSON with raw UTF-8, which is what JSON.stringify produces for well-formed strings.
 */
export function computeSchemaHash(language: string, version: string, events: EventSchemaInput[]): string {
  const schemas = selectEvents(events).map((event) => [
    event.name,
    [...event.properties].sort(compareHashTuples).map((p) => [p.name, p.property_type, p.is_required]),
  ])
  const payload = JSON.stringify({ language, schemas, version })
  return createHash('sha256').update(payload, 'utf8').digest('hex').slice(0, 32)
}

/** ASCII letter/digit runs of a name: the only characters every target language accepts in identifiers. */
export function splitWords(name: string): string[] {
  return name.split(/[^0-9A-Za-z]+/).filter((part) => part.length > 0)
}

export function upperFirst(word: string): string {
  return word.slice(0, 1).toUpperCase() + word.slice(1)
}

/** Returns `base`, or `base` + `separator` + the first free number from 2, and records the choice in `used`. */
export function claimUniqueName(base: string, used: Set<string>, separator = ''): string {
  let candidate = base
  for (let i = 2; used.has(candidate); i++) candidate = `${base}${separator}${i}`
  used.add(candidate)
  return candidate
}

/**
 * A double-quoted literal that Python, Go and TypeScript all read back as the same string: printable characters stay
 * as they are (UTF-8 source), quotes and backslashes are escaped, and every control, format or line-separator
 * character in the BMP becomes `\u` and four hex digits (the one escape all three share; Go's `\x` is a byte, not a character),
 * so the literal never spans lines and never hides characters.
 */
export function quoteString(value: string): string {
  let out = '"'
  for (const char of value) {
    const code = char.codePointAt(0)!
    if (char === '"') out += '\\"'
    else if (char === '\\') out += '\\\\'
    else if (char === '\n') out += '\\n'
    else if (char === '\r') out += '\\r'
    else if (char === '\t') out += '\\t'
    else if (code <= 0xffff && /[\p{C}\p{Zl}\p{Zp}]/u.test(char)) out += `\\u${code.toString(16).padStart(4, '0')}`
    else out += char
  }
  return `${out}"`
}

/** Text safe inside a one-line comment in all three languages: no line breaks, no comment terminator. */
export function commentText(value: string): string {
  return quoteString(value).replace(/\*\//g, '*\\/')
}
