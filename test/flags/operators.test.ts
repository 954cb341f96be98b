import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parseFilterDate, parseRelativeDate } from '../../src/flags/dates.js'
import { matchProperty, stringifyValue } from '../../src/flags/operators.js'
import type { PropertyFilter } from '../../src/flags/types.js'

const vectors = JSON.parse(readFileSync(new URL('../fixtures/flag_vectors.json', import.meta.url), 'utf8')) as Record<
  string,
  any
>

const caseKey = (c: any) => JSON.stringify([c.property, c.properties])

// SDK-recorded cases without a `server_expected`, answered here as the /flags server does (flags.md §3):
// unparseable values are a definite "no match", versions keep pre-release/strict shape and lose leading zeros,
// numbers are Unix seconds, and unknown operators never match.
const SERVER_ANSWERS = new Map<string, [boolean, string]>(
  (
    [
      [['1.2.3', 'semver_eq', '1.2.3.4'], false, 'four-part versions are not semver'],
      [['1.2.3', 'semver_eq', 'abc'], false, 'unparseable version'],
      [['1.2.3', 'semver_eq', ''], false, 'unparseable version'],
      [['1.2.3', 'semver_eq', '.1.2.3'], false, 'unparseable version'],
      [['1.2.3', 'semver_eq', '1.2.3-alpha.1'], false, 'pre-release is kept and sorts below the release'],
      [['1.2.3', 'semver_eq', 'not-a-version'], false, 'unparseable version'],
      [['not-valid', 'semver_gt', '1.2.3'], false, 'unparseable filter version'],
      [['01.2.3', 'semver_gt', '1.2.0'], false, '01.2.3 reads as 1.2.3'],
      [['1.07.0', 'semver_caret', '1.2.0'], false, '^1.7.0 excludes 1.2.0'],
      [['1.07.0', 'semver_tilde', '1.2.0'], false, '~1.7.0 excludes 1.2.0'],
      [['01.*', 'semver_wildcard', '1.2.0'], true, '01.* reads as 1.x'],
      [['1.2.3', 'semver_eq', '01.2.3'], true, 'leading zeros are stripped'],
      [['1.2.3', 'semver_eq', '1.02.3'], true, 'leading zeros are stripped'],
      [['1.2.3', 'semver_eq', '1.2.03'], true, 'leading zeros are stripped'],
      [['1.2.3', 'semver_eq', '01.02.03'], true, 'leading zeros are stripped'],
      [['1.2.3', 'semver_eq', '1.07.3'], false, '1.07.3 reads as 1.7.3'],
      [['1.2.3', 'semver_eq', '001.2.3'], true, 'leading zeros are stripped'],
      [['2022-05-01', 'is_date_before', 1], true, 'a number is Unix seconds (1970)'],
      [['2022-05-01', 'is_date_before', 'abcdef'], false, 'unparseable date'],
      [['2022-05-01', 'is_date_after', 'abcdef'], false, 'unparseable date'],
      [[1234, 'is_date_before', 1], false, 'a non-string filter date never matches'],
      [['2022-05-01', 'is_date_before', 'random'], false, 'unparseable date'],
      [['2022-05-01', 'is_unknown', 'random'], false, 'unknown operator'],
    ] as Array<[[unknown, string, unknown], boolean, string]>
  ).map(([[value, operator, propertyValue], answer, why]) => {
    const key = operator.startsWith('semver') ? 'version' : 'key'
    return [
      caseKey({ property: { key, value, operator, type: 'person' }, properties: { [key]: propertyValue } }),
      [answer, why],
    ]
  }),
)

// A missing key is a definite "no match" for a positive operator on the server.
SERVER_ANSWERS.set(
  caseKey({
    property: { key: 'version', value: '1.2.3', operator: 'semver_eq', type: 'person' },
    properties: { other_key: '1.2.3' },
  }),
  [false, 'missing key'],
)

function serverExpectation(c: any): boolean {
  if (c.semantics === 'server') return c.expected
  if (typeof c.server_expected === 'boolean') return c.server_expected
  const answer = SERVER_ANSWERS.get(caseKey(c))
  if (answer) return answer[0]
  if (typeof c.expected !== 'boolean') throw new Error(`no server answer for ${caseKey(c)}`)
  return c.expected
}

describe('matchProperty against the reference property cases', () => {
  const cases = (vectors.property_cases as any[]).map((c, i) => [`#${i} ${c.semantics} ${caseKey(c)}`, c])
  it.each(cases)('%s', (_name, c: any) => {
    expect(matchProperty(c.property as PropertyFilter, c.properties ?? {})).toBe(serverExpectation(c))
  })

  it('uses every server answer above', () => {
    const keys = new Set((vectors.property_cases as any[]).map(caseKey))
    for (const key of SERVER_ANSWERS.keys()) expect(keys.has(key), key).toBe(true)
  })
})

describe('relative dates', () => {
  const now = new Date('2024-06-15T12:00:00Z')
  it.each((vectors.relative_date_property_cases as any[]).map((c: any, i: number): [unknown, any] => [i, c]))(
    'case %s',
    (_i, c: any) => {
      const spec = c.property_value
      let value: unknown
      if ('literal' in spec) value = spec.literal
      else {
        const at = new Date(now.getTime() + spec.now_offset_days * 86_400_000)
        value = spec.format === 'rfc3339' ? at.toISOString() : at.getTime() / 1000
      }
      expect(matchProperty(c.property, { [c.property.key]: value }, { now })).toBe(c.expected)
    },
  )

  it('steps months back on the calendar, clamping the day each step', () => {
    const now = new Date('2024-03-31T10:00:00Z')
    expect(parseRelativeDate('-1m', 'UTC', now)?.ms).toBe(Date.parse('2024-02-29T10:00:00Z'))
    expect(parseRelativeDate('2m', 'UTC', now)?.ms).toBe(Date.parse('2024-01-29T10:00:00Z'))
    expect(parseRelativeDate('-1y', 'UTC', new Date('2024-02-29T00:00:00Z'))?.ms).toBe(Date.parse('2023-02-28'))
    expect(parseRelativeDate('-2w', 'UTC', now)?.ms).toBe(Date.parse('2024-03-17T10:00:00Z'))
    expect(parseRelativeDate('-10000d', 'UTC', now)).toBeNull()
    expect(parseRelativeDate('-3x', 'UTC', now)).toBeNull()
  })

  it('anchors relative dates to the wall clock of the team timezone', () => {
    const now = new Date('2024-06-15T02:00:00Z') // 2024-06-14 22:00 in New York (UTC-4)
    expect(parseRelativeDate('-1d', 'America/New_York', now)?.ms).toBe(Date.parse('2024-06-14T02:00:00Z'))
  })
})

describe('date operators', () => {
  const isBefore = (value: string, property: unknown, timezone?: string) =>
    matchProperty({ key: 'd', value, operator: 'is_date_before' }, { d: property }, { timezone })

  it('reads naive filter dates in the team timezone and explicit offsets as written', () => {
    expect(parseFilterDate('2024-06-01', 'Europe/Berlin', new Date())?.ms).toBe(Date.parse('2024-05-31T22:00:00Z'))
    expect(parseFilterDate('2024-06-01T10:00:00+02:00', 'UTC', new Date())?.ms).toBe(Date.parse('2024-06-01T08:00Z'))
    expect(isBefore('2024-06-01', '2024-05-31T23:00:00Z', 'Europe/Berlin')).toBe(false)
    expect(isBefore('2024-06-01', '2024-05-31T23:00:00Z')).toBe(true)
  })

  it('resolves a repeated wall time to the earlier instant and a skipped one to no match', () => {
    expect(parseFilterDate('2024-11-03 01:30:00', 'America/New_York', new Date())?.ms).toBe(
      Date.parse('2024-11-03T05:30:00Z'),
    )
    expect(parseFilterDate('2024-03-10 02:30:00', 'America/New_York', new Date())).toBeNull()
  })

  it('compares microseconds exactly', () => {
    const exact = { key: 'd', value: '2024-03-21T00:00:00.000001Z', operator: 'is_date_exact' }
    expect(matchProperty(exact, { d: '2024-03-21T00:00:00.000001+00:00' })).toBe(true)
    expect(matchProperty(exact, { d: '2024-03-21T00:00:00.000002Z' })).toBe(false)
  })

  it('treats fractional Unix seconds as instants', () => {
    expect(isBefore('2024-03-21T00:00:01Z', 1710979200.5)).toBe(true)
    expect(isBefore('2024-03-21T00:00:00Z', '1710979200.5')).toBe(false)
    expect(isBefore('2024-03-21', true)).toBe(false)
  })
})

describe('string and number operators beyond the vectors', () => {
  it('compares booleans by truthiness, so "false" matches any non-true value', () => {
    expect(matchProperty({ key: 'k', value: 'false', operator: 'exact' }, { k: 'abc' })).toBe(true)
    expect(matchProperty({ key: 'k', value: true, operator: 'exact' }, { k: 'TRUE' })).toBe(true)
    expect(matchProperty({ key: 'k', value: ['true'], operator: 'is_not' }, { k: true })).toBe(false)
  })

  it('matches icontains_multi when any needle is contained', () => {
    const filter = { key: 'k', value: ['foo', 'BAR'], operator: 'icontains_multi' }
    expect(matchProperty(filter, { k: 'xbarx' })).toBe(true)
    expect(matchProperty(filter, { k: 'baz' })).toBe(false)
    expect(matchProperty({ ...filter, operator: 'not_icontains_multi' }, { k: 'baz' })).toBe(true)
    expect(matchProperty({ ...filter, operator: 'not_icontains_multi' }, {})).toBe(true)
  })

  it('rejects malformed between bounds for both operators', () => {
    for (const operator of ['between', 'not_between']) {
      expect(matchProperty({ key: 'k', value: [5, 1], operator }, { k: 3 })).toBe(false)
      expect(matchProperty({ key: 'k', value: [1], operator }, { k: 3 })).toBe(false)
      expect(matchProperty({ key: 'k', value: [1, 5], operator }, { k: 'NaN' })).toBe(false)
    }
  })

  it('parses numbers the way Rust does (no whitespace, inf allowed)', () => {
    expect(matchProperty({ key: 'k', value: 5, operator: 'gt' }, { k: ' 6' })).toBe(false)
    expect(matchProperty({ key: 'k', value: 5, operator: 'gt' }, { k: 'inf' })).toBe(true)
    expect(matchProperty({ key: 'k', value: 5, operator: 'gt' }, { k: '1e3' })).toBe(true)
  })

  it('honours inline regex flags and treats invalid patterns as no match for both operators', () => {
    expect(matchProperty({ key: 'k', value: '(?i)^ABC', operator: 'regex' }, { k: 'abcdef' })).toBe(true)
    expect(matchProperty({ key: 'k', value: '(?P<x>a)b', operator: 'regex' }, { k: 'ab' })).toBe(true)
    expect(matchProperty({ key: 'k', value: '(', operator: 'not_regex' }, { k: 'x' })).toBe(false)
  })

  it('never matches a null filter value except for is_set / is_not_set', () => {
    expect(matchProperty({ key: 'k', value: null, operator: 'is_not' }, { k: 'x' })).toBe(false)
    expect(matchProperty({ key: 'k', value: null, operator: 'is_set' }, { k: 'x' })).toBe(true)
    expect(matchProperty({ key: 'k', value: 'x', operator: 'in' }, { k: 'x' })).toBe(false)
  })

  it('stringifies non-strings as JSON', () => {
    expect(stringifyValue(123)).toBe('123')
    expect(stringifyValue(null)).toBe('null')
    expect(stringifyValue([1, 'a'])).toBe('[1,"a"]')
    expect(stringifyValue(1e21)).toBe('1e21')
  })
})

describe('semver requirements', () => {
  const req = (operator: string, value: string, version: string) =>
    matchProperty({ key: 'v', value, operator }, { v: version })

  it('matches pre-releases only against a requirement on the same version', () => {
    expect(req('semver_caret', '1.2.3-alpha', '1.2.3-beta')).toBe(true)
    expect(req('semver_caret', '1.2.3-alpha', '1.2.4-beta')).toBe(false)
    expect(req('semver_caret', '1.2.3', '1.5.0-beta')).toBe(false)
    expect(req('semver_wildcard', '1.*', '1.5.0-beta')).toBe(false)
  })

  it('reads wildcard forms and pads short versions', () => {
    expect(req('semver_wildcard', '*', '9.9.9')).toBe(true)
    expect(req('semver_wildcard', '1.*.*', '1.9.0')).toBe(true)
    expect(req('semver_wildcard', '1.*.3', '1.9.3')).toBe(false)
    expect(req('semver_tilde', '3.10', '3.10.7')).toBe(true)
    expect(req('semver_eq', '3.10', '3.10.0')).toBe(true)
    expect(req('semver_gt', '1.0.0', 'v1.0.1')).toBe(true)
  })
})
