import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { goTypeOf, toGoExportedName, toGoParameterName } from '../../src/definitions/codegen/golang.js'
import { type EventSchemaInput, generateEventCode } from '../../src/definitions/codegen/index.js'
import { pythonTypeOf, toPythonClassBase, toPythonIdentifier } from '../../src/definitions/codegen/python.js'
import {
  compareCodePoints,
  computeSchemaHash,
  mergeProperties,
  quoteString,
  selectEvents,
} from '../../src/definitions/codegen/shared.js'
import { typescriptTypeOf } from '../../src/definitions/codegen/typescript.js'
import { AWKWARD, NASTY_EVENTS, prop } from './codegen-fixtures.js'

// PostHog's own computation, run by Python: orjson's OPT_SORT_KEYS output is json.dumps with sorted keys, no
// spaces and raw UTF-8, which is what this reference uses (orjson is not installable here).
const POSTHOG_HASH = `
import hashlib, json, sys
language, version, events = json.load(sys.stdin)
included = {"$pageview", "$pageleave", "$screen"}
schema_data = []
for event in sorted((e for e in events if e["name"] in included or not e["name"].startswith("$")), key=lambda e: e["name"]):
    prop_data = [(p["name"], p["property_type"], p["is_required"]) for p in event["properties"]]
    schema_data.append((event["name"], sorted(prop_data)))
schema_data.sort(key=lambda x: x[0])
payload = json.dumps({"language": language, "version": version, "schemas": schema_data}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
print(hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32])
`

function posthogHash(language: string, version: string, events: EventSchemaInput[]): string {
  return execFileSync('python3', ['-c', POSTHOG_HASH], {
    input: JSON.stringify([language, version, events]),
    encoding: 'utf8',
  }).trim()
}

describe('event selection', () => {
  it('keeps every non-$ event plus $pageview, $pageleave and $screen, ordered by name', () => {
    const names = selectEvents([
      { name: 'zebra', properties: [] },
      { name: '$screen', properties: [] },
      { name: '$autocapture', properties: [] },
      { name: 'Apple', properties: [] },
      { name: '$pageleave', properties: [] },
      { name: '$identify', properties: [] },
      { name: '$pageview', properties: [] },
      { name: 'apple', properties: [] },
      { name: '🎉', properties: [] },
      { name: '\uffff', properties: [] },
    ]).map((event) => event.name)
    expect(names).toEqual(['$pageleave', '$pageview', '$screen', 'Apple', 'apple', 'zebra', '\uffff', '🎉'])
  })

  it('counts only the included events', () => {
    const result = generateEventCode('typescript', NASTY_EVENTS)
    expect(result.event_count).toBe(NASTY_EVENTS.length - 2)
    expect(result.content).not.toContain('$autocapture')
    expect(result.content).toContain('"$pageview"')
  })

  it('merges an event listed twice instead of declaring it twice', () => {
    const [event] = selectEvents([
      { name: 'e', properties: [prop('a', 'String')] },
      { name: 'e', properties: [prop('b', 'Numeric', true)] },
    ])
    expect(event.properties.map((p) => p.name)).toEqual(['a', 'b'])
  })

  it('replaces lone surrogates, which no UTF-8 store or source file can hold', () => {
    expect(selectEvents([{ name: 'a\ud800b', properties: [] }])[0].name).toBe('a\ufffdb')
  })

  it('orders by code point like Python, not by UTF-16 unit', () => {
    expect(compareCodePoints('\uffff', '🎉')).toBeLessThan(0)
    expect('\uffff' < '🎉').toBe(false)
  })
})

describe('schema_hash', () => {
  const cases: Array<[string, EventSchemaInput[]]> = [
    ['no events', []],
    ['one simple event', [{ name: 'signed_up', properties: [prop('plan', 'String', true), prop('seats', 'Numeric')] }]],
    ['the awkward fixture', NASTY_EVENTS],
  ]
  for (const language of ['typescript', 'python', 'golang'] as const) {
    for (const [label, events] of cases) {
      it(`matches PostHog's algorithm for ${language}, ${label}`, () => {
        const result = generateEventCode(language, events)
        expect(result.schema_hash).toMatch(/^[0-9a-f]{32}$/)
        expect(result.schema_hash).toBe(posthogHash(language, result.generator_version, events))
      })
    }
  }

  it('does not depend on the order of events or properties', () => {
    const reversed = [...NASTY_EVENTS].reverse().map((e) => ({ ...e, properties: [...e.properties].reverse() }))
    expect(computeSchemaHash('python', '1.0.0', reversed)).toBe(computeSchemaHash('python', '1.0.0', NASTY_EVENTS))
  })

  it('changes when a property becomes required, changes type, or the generator version changes', () => {
    const base = [{ name: 'e', properties: [prop('a', 'String')] }]
    const hash = computeSchemaHash('typescript', '1.1.0', base)
    expect(computeSchemaHash('typescript', '1.1.0', [{ name: 'e', properties: [prop('a', 'String', true)] }])).not.toBe(
      hash,
    )
    expect(computeSchemaHash('typescript', '1.1.0', [{ name: 'e', properties: [prop('a', 'Numeric')] }])).not.toBe(hash)
    expect(computeSchemaHash('typescript', '1.2.0', base)).not.toBe(hash)
  })

  it('hashes the compact, sorted-keys JSON of language, schemas and version', () => {
    const json = '{"language":"golang","schemas":[["e",[["a","String",false],["b",null,true]]]],"version":"1.0.0"}'
    const expected = createHash('sha256').update(json).digest('hex').slice(0, 32)
    const events = [{ name: 'e', properties: [prop('b', null, true), prop('a', 'String')] }]
    expect(computeSchemaHash('golang', '1.0.0', events)).toBe(expected)
  })
})

describe('generator versions', () => {
  it('reports 1.1.0 for TypeScript and 1.0.0 for Python and Go', () => {
    expect(generateEventCode('typescript', []).generator_version).toBe('1.1.0')
    expect(generateEventCode('python', []).generator_version).toBe('1.0.0')
    expect(generateEventCode('golang', []).generator_version).toBe('1.0.0')
  })

  it('generates the same content for the same input', () => {
    expect(generateEventCode('golang', NASTY_EVENTS).content).toBe(generateEventCode('golang', NASTY_EVENTS).content)
  })
})

describe('property merging', () => {
  it('unions the types of a repeated name and keeps it required only if every occurrence is', () => {
    expect(
      mergeProperties([prop('b', 'String', true), prop('a', 'Numeric', true), prop('b', 'DateTime', false)]),
    ).toEqual([
      { name: 'a', types: ['Numeric'], isRequired: true },
      { name: 'b', types: ['String', 'DateTime'], isRequired: false },
    ])
  })
})

describe('type mapping', () => {
  const cases: Array<[EventSchemaInput['properties'][number]['property_type'][], string, string, string]> = [
    [['String'], 'string', 'str', 'string'],
    [['Numeric'], 'number', 'float', 'float64'],
    [['Boolean'], 'boolean', 'bool', 'bool'],
    [['DateTime'], 'string | Date', 'datetime', 'time.Time'],
    [['Array'], 'any[]', 'list[Any]', '[]interface{}'],
    [['Object'], 'Record<string, any>', 'Dict[str, Any]', 'map[string]interface{}'],
    [['Duration'], 'any', 'Any', 'interface{}'],
    [[null], 'any', 'Any', 'interface{}'],
    [['String', 'DateTime'], 'string | Date', 'Union[str, datetime]', 'interface{}'],
    [['Numeric', 'Boolean'], 'number | boolean', 'Union[float, bool]', 'interface{}'],
    [['String', null], 'any', 'Any', 'interface{}'],
  ]
  for (const [types, ts, py, go] of cases) {
    it(`maps ${JSON.stringify(types)} to ${ts} / ${py} / ${go}`, () => {
      expect(typescriptTypeOf(types)).toBe(ts)
      expect(pythonTypeOf(types)).toBe(py)
      expect(goTypeOf(types)).toBe(go)
    })
  }
})

describe('identifiers', () => {
  const cases: Array<[string, string, string, string, string]> = [
    // name, Python identifier, Python class base, Go exported name, Go parameter
    ['file_name', 'file_name', 'FileName', 'FileName', 'fileName'],
    ['file-name', 'file_name', 'FileName', 'FileName', 'fileName'],
    ['User ID', 'User_ID', 'UserID', 'UserID', 'userId'],
    ['123abc', 'prop_123abc', 'Event123abc', 'Event123abc', 'p123abc'],
    ['class', 'class_', 'Class', 'Class', 'class'],
    ['None', 'None_', 'None', 'None', 'none'],
    ['$current_url', 'current_url', 'CurrentUrl', 'CurrentUrl', 'currentUrl'],
    ['__proto__', 'proto', 'Proto', 'Proto', 'proto'],
    ['日本', 'value', 'Event', 'Event', 'value'],
    ['', 'value', 'Event', 'Event', 'value'],
    [AWKWARD, 'quote_back_nl_tab_end', 'QuoteBackNlTabEnd', 'QuoteBackNlTabEnd', 'quoteBackNlTabEnd'],
  ]
  for (const [name, pyIdentifier, pyClass, goName, goParameter] of cases) {
    it(`sanitises ${JSON.stringify(name)}`, () => {
      expect(toPythonIdentifier(name)).toBe(pyIdentifier)
      expect(toPythonClassBase(name)).toBe(pyClass)
      expect(toGoExportedName(name)).toBe(goName)
      expect(toGoParameterName(name)).toBe(goParameter)
    })
  }
})

describe('string literals', () => {
  const samples = [
    AWKWARD,
    '',
    'plain',
    '\u0000\u0007\u007f\u0085\u00a0\u200b\u202e\ufeff',
    '"\'`$' + '{x}',
    '🎉\u{e0001}',
  ]

  it('reads back as the same string in JavaScript', () => {
    for (const sample of samples) expect(JSON.parse(quoteString(sample))).toBe(sample)
  })

  it('reads back as the same string in Python', () => {
    const literals = samples.map(quoteString).join(',\n')
    const echoed = execFileSync('python3', ['-c', `import json\nprint(json.dumps([${literals}]))`], {
      encoding: 'utf8',
    })
    expect(JSON.parse(echoed)).toEqual(samples)
  })

  it('never spans lines', () => {
    for (const sample of samples) expect(quoteString(sample)).not.toMatch(/[\n\r\u2028\u2029\u0085]/)
  })
})
