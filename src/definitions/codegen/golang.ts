import {
  type CodegenPropertyType,
  claimUniqueName,
  commentText,
  type EventSchemaInput,
  mergeProperties,
  quoteString,
  splitWords,
  upperFirst,
} from './shared.js'

export const GOLANG_GENERATOR_VERSION = '1.0.0'

const TYPE_MAP: Record<string, string> = {
  String: 'string',
  Numeric: 'float64',
  Boolean: 'bool',
  DateTime: 'time.Time',
  Array: '[]interface{}',
  Object: 'map[string]interface{}',
}

// Names a parameter must not take: Go keywords, predeclared identifiers, the imported packages, and the locals the
// generated bodies use. Parameters live in the body's scope, so any of these would be shadowed or clash.
const RESERVED_PARAMETER_NAMES = [
  'break case chan const continue default defer else fallthrough for func go goto if import interface map package',
  'range return select struct switch type var',
  'any bool byte comparable complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint',
  'uint8 uint16 uint32 uint64 uintptr true false iota nil append cap clear close complex copy delete imag len make',
  'max min new panic print println real recover',
  'posthog time distinctId base options props c opt p k v',
].flatMap((line) => line.split(' '))

/** Go has no unions: a property seen with several types takes whatever value the caller has. */
export function goTypeOf(types: CodegenPropertyType[]): string {
  const mapped = new Set(types.map((type) => TYPE_MAP[type ?? ''] ?? 'interface{}'))
  return mapped.size === 1 ? [...mapped][0] : 'interface{}'
}

/** `downloaded_file` → `DownloadedFile`; a leading digit or no ASCII letters at all gets an `Event` prefix. */
export function toGoExportedName(name: string): string {
  const pascal = splitWords(name).map(upperFirst).join('')
  return /^[A-Za-z]/.test(pascal) ? pascal : `Event${pascal}`
}

/** `file_name` → `fileName`, `User-ID` → `userId`, `2fa` → `p2fa`. */
export function toGoParameterName(name: string): string {
  const words = splitWords(name).map((word) => word.toLowerCase())
  if (words.length === 0) return 'value'
  const camel = words[0] + words.slice(1).map(upperFirst).join('')
  return /^[0-9]/.test(camel) ? `p${camel}` : camel
}

type GoProperty = { name: string; type: string; isRequired: boolean; parameter: string; suffix: string }

type GoEvent = { name: string; base: string; properties: GoProperty[] }

function planEvents(events: EventSchemaInput[]): GoEvent[] {
  const bases = new Set<string>()
  return events.map((event) => {
    const base = claimUniqueName(toGoExportedName(event.name), bases)
    const parameters = new Set(RESERVED_PARAMETER_NAMES)
    const properties = mergeProperties(event.properties).map((property) => ({
      name: property.name,
      type: goTypeOf(property.types),
      isRequired: property.isRequired,
      parameter: claimUniqueName(toGoParameterName(property.name), parameters),
      suffix: splitWords(property.name).map(upperFirst).join('') || 'Prop',
    }))
    return { name: event.name, base, properties }
  })
}

/** Hands out package-level names; a name derived from one event can otherwise equal one derived from another. */
type NameClaimer = (wanted: string) => string

function eventWithoutSchema(event: GoEvent, claim: NameClaimer): string {
  const capture = claim(`${event.base}Capture`)
  return `// ${capture} creates a capture of the ${commentText(event.name)} event, which has no schema.
func ${capture}(distinctId string, properties ...posthog.Properties) posthog.Capture {
	props := posthog.Properties{}
	for _, p := range properties {
		for k, v := range p {
			props[k] = v
		}
	}
	return posthog.Capture{
		DistinctId: distinctId,
		Event:      ${quoteString(event.name)},
		Properties: props,
	}
}`
}

function requiredParameters(properties: GoProperty[]): string {
  return properties.map((property) => `\t${property.parameter} ${property.type},\n`).join('')
}

function requiredAssignments(target: string, properties: GoProperty[]): string {
  return properties.map((p) => `\t${target}[${quoteString(p.name)}] = ${p.parameter}\n`).join('')
}

function eventWithSchema(event: GoEvent, claim: NameClaimer): string {
  const label = commentText(event.name)
  const option = claim(`${event.base}Option`)
  const required = event.properties.filter((p) => p.isRequired)
  const blocks = [
    `// ${option} sets optional properties of a ${label} capture.
type ${option} func(*posthog.Capture)`,
  ]
  for (const property of event.properties.filter((p) => !p.isRequired)) {
    const func = claim(`${event.base}With${property.suffix}`)
    blocks.push(`// ${func} sets the ${commentText(property.name)} property of a ${label} capture.
func ${func}(${property.parameter} ${property.type}) ${option} {
	return func(c *posthog.Capture) {
		if c.Properties == nil {
			c.Properties = posthog.Properties{}
		}
		c.Properties[${quoteString(property.name)}] = ${property.parameter}
	}
}`)
  }
  const extra = claim(`${event.base}WithExtraProps`)
  blocks.push(`// ${extra} adds properties that are not in the schema to a ${label} capture.
func ${extra}(props posthog.Properties) ${option} {
	return func(c *posthog.Capture) {
		if c.Properties == nil {
			c.Properties = posthog.Properties{}
		}
		for k, v := range props {
			c.Properties[k] = v
		}
	}
}`)
  const capture = claim(`${event.base}Capture`)
  blocks.push(`// ${capture} creates a capture of the ${label} event. Required properties are parameters;
// optional ones are set with the ${option} functions.
func ${capture}(
	distinctId string,
${requiredParameters(required)}	options ...${option},
) posthog.Capture {
	props := posthog.Properties{}
${requiredAssignments('props', required)}	c := posthog.Capture{
		DistinctId: distinctId,
		Event:      ${quoteString(event.name)},
		Properties: props,
	}
	for _, opt := range options {
		opt(&c)
	}
	return c
}`)
  const fromBase = claim(`${event.base}CaptureFromBase`)
  blocks.push(`// ${fromBase} turns an existing capture into a ${label} capture: the event name is
// replaced and the required properties are merged into its properties.
func ${fromBase}(
	base posthog.Capture,
${requiredParameters(required)}	options ...${option},
) posthog.Capture {
	props := posthog.Properties{}
	for k, v := range base.Properties {
		props[k] = v
	}
${requiredAssignments('props', required)}	base.Event = ${quoteString(event.name)}
	base.Properties = props
	for _, opt := range options {
		opt(&base)
	}
	return base
}`)
  return blocks.join('\n\n')
}

const HEADER = `// Code generated by Burrow. DO NOT EDIT.
//
// Generator version: ${GOLANG_GENERATOR_VERSION}
//
// Helpers that build posthog.Capture values for the events defined in this project:
// <Event>Capture takes the distinct id and the required properties, <Event>CaptureFromBase
// starts from a capture you built, and <Event>With<Property> options set optional properties.
// Each event has its own option type, so options cannot be mixed up between events.
//
//	client.Enqueue(typed.DownloadedFileCapture("user_123", "report.pdf", typed.DownloadedFileWithSize(1024)))

package typed`

export function generateGolang(events: EventSchemaInput[]): string {
  const planned = planEvents(events)
  const used = new Set<string>()
  const claim: NameClaimer = (wanted) => claimUniqueName(wanted, used)
  const blocks = planned.map((event) =>
    event.properties.length === 0 ? eventWithoutSchema(event, claim) : eventWithSchema(event, claim),
  )
  const needsTime = planned.some((event) => event.properties.some((p) => p.type === 'time.Time'))
  const packages = [...(needsTime ? ['\t"time"\n\n'] : []), '\t"github.com/posthog/posthog-go"\n']
  // Go rejects unused imports, and with no events nothing refers to posthog-go.
  const imports = blocks.length === 0 ? [] : [`import (\n${packages.join('')})`]
  return `${[HEADER, ...imports, ...blocks].join('\n\n')}\n`
}
