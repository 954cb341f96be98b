import {
  type CodegenPropertyType,
  claimUniqueName,
  commentText,
  type EventSchemaInput,
  type MergedProperty,
  mergeProperties,
  quoteString,
  splitWords,
  upperFirst,
} from './shared.js'

export const PYTHON_GENERATOR_VERSION = '1.0.0'

const TYPE_MAP: Record<string, string> = {
  String: 'str',
  Numeric: 'float',
  Boolean: 'bool',
  DateTime: 'datetime',
  Array: 'list[Any]',
  Object: 'Dict[str, Any]',
}

// keyword.kwlist of Python 3.11; soft keywords (match, case, type, _) are valid names
const PYTHON_KEYWORDS = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(
    ' ',
  ),
)

export function pythonTypeOf(types: CodegenPropertyType[]): string {
  const parts = [...new Set(types.map((type) => TYPE_MAP[type ?? ''] ?? 'Any'))]
  if (parts.includes('Any')) return 'Any'
  return parts.length === 1 ? parts[0] : `Union[${parts.join(', ')}]`
}

/** `file-name` → `file_name`, `123abc` → `prop_123abc`, `class` → `class_`, `日本` → `value`. */
export function toPythonIdentifier(name: string): string {
  const identifier = splitWords(name).join('_')
  if (identifier === '') return 'value'
  if (/^[0-9]/.test(identifier)) return `prop_${identifier}`
  return PYTHON_KEYWORDS.has(identifier) ? `${identifier}_` : identifier
}

/** `downloaded_file` → `DownloadedFileProps`; names without ASCII letters become `EventProps`. */
export function toPythonClassBase(eventName: string): string {
  const pascal = splitWords(eventName).map(upperFirst).join('')
  if (pascal === '') return 'Event'
  return /^[0-9]/.test(pascal) ? `Event${pascal}` : pascal
}

type PythonField = MergedProperty & { identifier: string }

/**
 * Gives every property a distinct identifier. Names that are already identifiers keep themselves first, so only the
 * names that had to change need a mapping back to the original.
 */
function assignIdentifiers(properties: MergedProperty[]): PythonField[] {
  const used = new Set<string>()
  const identifiers = new Map<string, string>()
  const keepsName = (p: MergedProperty) => toPythonIdentifier(p.name) === p.name
  for (const property of properties.filter(keepsName))
    identifiers.set(property.name, claimUniqueName(property.name, used, '_'))
  for (const property of properties.filter((p) => !keepsName(p))) {
    identifiers.set(property.name, claimUniqueName(toPythonIdentifier(property.name), used, '_'))
  }
  return properties.map((property) => ({ ...property, identifier: identifiers.get(property.name)! }))
}

type PythonEvent = { name: string; className: string; fields: PythonField[] }

function planEvents(events: EventSchemaInput[]): PythonEvent[] {
  const classNames = new Set<string>()
  return events.map((event) => {
    const base = toPythonClassBase(event.name)
    let className = `${base}Props`
    for (let i = 2; classNames.has(className); i++) className = `${base}${i}Props`
    classNames.add(className)
    return { name: event.name, className, fields: assignIdentifiers(mergeProperties(event.properties)) }
  })
}

function typedDictBlock(event: PythonEvent): string {
  if (event.fields.length === 0) {
    return `# The ${commentText(event.name)} event has no schema: any properties are accepted\n${event.className} = Dict[str, Any]`
  }
  const lines = [
    `class ${event.className}(TypedDict, total=False):`,
    `    # Properties of the ${commentText(event.name)} event`,
  ]
  const ordered = [...event.fields.filter((f) => f.isRequired), ...event.fields.filter((f) => !f.isRequired)]
  for (const field of ordered) {
    const wrapper = field.isRequired ? 'Required' : 'NotRequired'
    lines.push(`    ${field.identifier}: ${wrapper}[${pythonTypeOf(field.types)}]`)
  }
  return lines.join('\n')
}

function mappingsBlock(events: PythonEvent[]): string {
  const lines = [
    '# Python identifier -> original property name, for the properties whose names are not identifiers',
    '_PROPERTY_MAPPINGS: Dict[str, Dict[str, str]] = {',
  ]
  for (const event of events) {
    const renamed = event.fields.filter((field) => field.identifier !== field.name)
    if (renamed.length === 0) continue
    lines.push(`    ${quoteString(event.name)}: {`)
    for (const field of renamed) lines.push(`        ${quoteString(field.identifier)}: ${quoteString(field.name)},`)
    lines.push('    },')
  }
  lines.push('}')
  return lines.join('\n')
}

function propertiesParameter(event: PythonEvent, optionalDefault: string): string {
  const hasRequired = event.fields.some((field) => field.isRequired)
  return hasRequired ? event.className : `Optional[${event.className}] = ${optionalDefault}`
}

// `properties` is also a key of OptionalCaptureArgs; the typed parameter is meant to take precedence over it.
const OVERLAP_NOTE = '# type: ignore[misc]  # the typed `properties` overrides the one in OptionalCaptureArgs'

function overloadBlock(event: PythonEvent): string {
  return `@overload
def capture(  ${OVERLAP_NOTE}
    event: Literal[${quoteString(event.name)}],
    *,
    properties: ${propertiesParameter(event, '...')},
    **kwargs: Unpack[OptionalCaptureArgs],
) -> Optional[str]: ...`
}

const CAPTURE_DOC = `    """
    Captures a defined event with properties checked against its schema.

    Property names that are not Python identifiers are written with their identifier here
    and sent under their original name.
    """`

function captureFunctions(events: PythonEvent[]): string {
  if (events.length === 0) {
    return `def capture(event: str, **kwargs: Unpack[OptionalCaptureArgs]) -> Optional[str]:
${CAPTURE_DOC}
    return _send(event, dict(kwargs))`
  }
  // A lone @overload is an error for type checkers, so a single event gets a plain typed function.
  if (events.length === 1) {
    const [event] = events
    return `def capture(  ${OVERLAP_NOTE}
    event: Literal[${quoteString(event.name)}],
    *,
    properties: ${propertiesParameter(event, 'None')},
    **kwargs: Unpack[OptionalCaptureArgs],
) -> Optional[str]:
${CAPTURE_DOC}
    return _send(event, {**kwargs, "properties": properties})`
  }
  return `# Type-safe capture overloads, one per defined event
${events.map(overloadBlock).join('\n\n\n')}


def capture(event: str, **kwargs: Any) -> Optional[str]:
${CAPTURE_DOC}
    return _send(event, kwargs)`
}

function header(needsDatetime: boolean): string {
  return `"""
GENERATED FILE - DO NOT EDIT

Type-safe event capture for the events defined in this project.
Generator version: ${PYTHON_GENERATOR_VERSION}

Save this file as posthog_typed.py and call posthog_typed.capture instead of posthog.capture:

    import posthog_typed

    posthog_typed.capture("event_name", distinct_id="user_123", properties={"property": "value"})

Events that are not defined here are still captured with posthog.capture. Property names that
are not Python identifiers are written as identifiers (see _PROPERTY_MAPPINGS) and sent under
their original names.
"""
import sys
${needsDatetime ? 'from datetime import datetime\n' : ''}from typing import Any, Dict, Literal, Optional, TypedDict, Union, overload

if sys.version_info >= (3, 11):
    from typing import NotRequired, Required, Unpack
else:
    from typing_extensions import NotRequired, Required, Unpack

import posthog as _posthog
from posthog.args import OptionalCaptureArgs`
}

const SEND = `def _send(event: str, kwargs: Dict[str, Any]) -> Optional[str]:
    mapping = _PROPERTY_MAPPINGS.get(event)
    properties = kwargs.get("properties")
    if mapping and properties:
        kwargs = {**kwargs, "properties": {mapping.get(key, key): value for key, value in properties.items()}}
    result: Optional[str] = _posthog.capture(event=event, **kwargs)
    return result`

export function generatePython(events: EventSchemaInput[]): string {
  const planned = planEvents(events)
  const needsDatetime = events.some((event) => event.properties.some((p) => p.property_type === 'DateTime'))
  const sections = [header(needsDatetime), mappingsBlock(planned), SEND, ...planned.map(typedDictBlock)]
  sections.push(captureFunctions(planned))
  return `${sections.join('\n\n\n')}\n`
}
