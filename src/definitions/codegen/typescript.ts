import { type CodegenPropertyType, type EventSchemaInput, mergeProperties, quoteString } from './shared.js'

export const TYPESCRIPT_GENERATOR_VERSION = '1.1.0'

const TYPE_MAP: Record<string, string[]> = {
  String: ['string'],
  Numeric: ['number'],
  Boolean: ['boolean'],
  DateTime: ['string', 'Date'],
  Array: ['any[]'],
  Object: ['Record<string, any>'],
}

/** The TypeScript type of one property: the union of the mapped types of every occurrence, without repeats. */
export function typescriptTypeOf(types: CodegenPropertyType[]): string {
  const parts: string[] = []
  for (const type of types) {
    for (const part of TYPE_MAP[type ?? ''] ?? ['any']) if (!parts.includes(part)) parts.push(part)
  }
  // `any` absorbs every other member, and tsc would say so; keep the union honest.
  return parts.includes('any') ? 'any' : parts.join(' | ')
}

// Every object literal already has these through Object.prototype, so an optional property with one of these names
// would reject every literal that leaves it out (the inherited method's type is checked against the schema's).
const OBJECT_PROTOTYPE_MEMBERS = new Set([
  'constructor',
  'toString',
  'toLocaleString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
])

function propertyType(name: string, types: CodegenPropertyType[], isRequired: boolean): string {
  const type = typescriptTypeOf(types)
  if (isRequired || type === 'any' || !OBJECT_PROTOTYPE_MEMBERS.has(name)) return type
  return `${type} | Object[${quoteString(name)}]`
}

function schemaEntries(events: EventSchemaInput[]): string[] {
  const lines: string[] = []
  for (const event of events) {
    const properties = mergeProperties(event.properties)
    if (properties.length === 0) {
      lines.push(`  ${quoteString(event.name)}: Record<string, any>`)
      continue
    }
    lines.push(`  ${quoteString(event.name)}: {`)
    for (const property of properties) {
      const marker = property.isRequired ? '' : '?'
      lines.push(
        `    ${quoteString(property.name)}${marker}: ${propertyType(property.name, property.types, property.isRequired)}`,
      )
    }
    lines.push('  }')
  }
  return lines
}

const HEADER = `/**
 * GENERATED FILE - DO NOT EDIT
 *
 * Typed wrapper around posthog-js for the events defined in this project.
 * Generator version: ${TYPESCRIPT_GENERATOR_VERSION}
 *
 * capture() checks the properties of defined events and still accepts events that have no definition;
 * captureRaw() is the untyped original.
 */
import { posthog as originalPostHog } from 'posthog-js'
import type { CaptureOptions, CaptureResult, PostHog as OriginalPostHog, Properties } from 'posthog-js'
`

const BODY = `
// Every defined event name
export type EventName = keyof EventSchemas

// The schema's properties, plus any extra properties the caller wants to send
export type EventProperties<K extends EventName> = EventSchemas[K] & Record<string, any>

// true when the event has at least one required property, so the properties argument cannot be left out
type HasRequiredProperties<K extends EventName> = {} extends EventSchemas[K] ? false : true

// true for the wide \`string\` type, which must not slip past the schema through the untyped overload
type IsExactlyString<T> = string extends T ? true : false

interface TypedPostHog extends Omit<OriginalPostHog, 'capture'> {
  /**
   * Captures a defined event with checked properties, or an undefined event with any properties.
   *
   * @example
   * posthog.capture('uploaded_file', { file_name: 'a.txt', file_size_b: 100 })
   */
  capture<K extends EventName>(
    event_name: K,
    ...args: HasRequiredProperties<K> extends true
      ? [properties: EventProperties<K>, options?: CaptureOptions]
      : [properties?: EventProperties<K>, options?: CaptureOptions]
  ): CaptureResult | undefined
  capture<T extends string>(
    event_name: IsExactlyString<T> extends true ? never : T extends EventName ? never : T,
    properties?: Properties | null,
    options?: CaptureOptions,
  ): CaptureResult | undefined

  /** Captures any event without checking its properties (posthog-js's own capture). */
  captureRaw(event_name: string, properties?: Properties | null, options?: CaptureOptions): CaptureResult | undefined
}

function createTypedPostHog(original: OriginalPostHog): TypedPostHog {
  const send = (event_name: string, properties?: Properties | null, options?: CaptureOptions) =>
    original.capture(event_name, properties, options)
  // Everything else is the original instance's, with methods bound to it so that their state stays in one place.
  return new Proxy(original, {
    get(target, key) {
      if (key === 'capture' || key === 'captureRaw') return send
      const value: unknown = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  }) as unknown as TypedPostHog
}

// The named export is the same instance as the default one, and resolves alike under bundlers and Node's ESM rules
const posthog = createTypedPostHog(originalPostHog)

export default posthog
export type { EventSchemas, TypedPostHog }

// The rest of posthog-js (types, the PostHog class) stays importable from this module
export * from 'posthog-js'
`

export function generateTypescript(events: EventSchemaInput[]): string {
  const schemas = ['// Properties of each defined event; `?` marks an optional property', 'interface EventSchemas {']
  schemas.push(...schemaEntries(events), '}')
  return `${HEADER}\n${schemas.join('\n')}\n${BODY}`
}
