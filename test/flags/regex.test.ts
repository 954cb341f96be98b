import { describe, expect, it } from 'vitest'
import { matchProperty } from '../../src/flags/operators.js'
import { compileRegex, MAX_REGEX_SUBJECT_LENGTH, toRe2Syntax } from '../../src/flags/regex.js'

const regex = (pattern: string, value: unknown) =>
  matchProperty({ key: 'k', value: pattern, operator: 'regex' }, { k: value })
const notRegex = (pattern: string, value: unknown) =>
  matchProperty({ key: 'k', value: pattern, operator: 'not_regex' }, { k: value })

describe('regex matching in linear time', () => {
  it('answers nested quantifiers at once (a backtracker takes seconds on 31 characters)', () => {
    const started = performance.now()
    expect(regex('^(a+)+$', `${'a'.repeat(31)}!`)).toBe(false)
    expect(notRegex('^(a+)+$', `${'a'.repeat(31)}!`)).toBe(true)
    expect(regex('^(a+)+$', 'a'.repeat(31))).toBe(true)
    expect(regex('(x+x+)+y', 'x'.repeat(5_000))).toBe(false)
    expect(regex('^(\\w+\\s?)+$', `${'word '.repeat(1_500)}!`)).toBe(false)
    expect(performance.now() - started).toBeLessThan(500)
  })

  it('searches unanchored, with leftmost-first alternation and inline flags', () => {
    expect(regex('\\.com$', 'value.com')).toBe(true)
    expect(regex('\\.com$', 'value.com\n')).toBe(false)
    expect(regex('(?i)^ABC', 'abcdef')).toBe(true)
    expect(regex('^ABC', 'abcdef')).toBe(false)
    expect(regex('(?m)^b$', 'a\nb\nc')).toBe(true)
    expect(regex('(?s)a.b', 'a\nb')).toBe(true)
    expect(regex('a.b', 'a\nb')).toBe(false)
    expect(regex('\\Aabc\\z', 'abc')).toBe(true)
    expect(regex('(?P<x>a)b', 'ab')).toBe(true)
    expect(regex('(?<x>a)b', 'ab')).toBe(true)
    expect(regex('^.$', '😀')).toBe(true)
    expect(regex('3', 323)).toBe(true)
  })

  it('gives Perl classes the Unicode meaning of the Rust regex crate', () => {
    expect(regex('^\\d+$', '١٢٣')).toBe(true)
    expect(regex('^\\w+$', 'héllo_1')).toBe(true)
    expect(regex('^\\s$', '\u00a0')).toBe(true)
    expect(regex('^\\S+$', 'a\u00a0')).toBe(false)
    expect(regex('^\\W$', 'é')).toBe(false)
    expect(regex('^\\D$', '٣')).toBe(false)
    expect(regex('^[\\d-]+$', '١-2')).toBe(true)
    expect(regex('^[\\w.]+@', 'zoë.x@example.com')).toBe(true)
  })

  it('runs lookbehinds and treats other backtracking-only syntax as an invalid pattern for both operators', () => {
    expect(regex('(?<=foo)bar', 'foobar')).toBe(true)
    expect(regex('(?<!foo)bar', 'foobar')).toBe(false)
    expect(notRegex('(?<!foo)bar', 'foobar')).toBe(true)
    for (const pattern of ['foo(?=bar)', 'foo(?!bar)', '(a)\\1', '(?>a)b', 'a++', '(?x) a b', '?*', '(']) {
      expect(regex(pattern, 'foobar aa ab'), pattern).toBe(false)
      expect(notRegex(pattern, 'foobar aa ab'), pattern).toBe(false)
      expect(compileRegex(pattern), pattern).toBeNull()
    }
  })

  it('does not search a value longer than the limit: no match for both operators', () => {
    const atLimit = `${'b'.repeat(MAX_REGEX_SUBJECT_LENGTH - 1)}a`
    expect(regex('a$', atLimit)).toBe(true)
    expect(notRegex('a$', atLimit)).toBe(false)
    const over = `b${atLimit}`
    expect(regex('a$', over)).toBe(false)
    expect(notRegex('a$', over)).toBe(false)
    expect(notRegex('zzz', over)).toBe(false)
  })

  it('compiles a pattern once and shares it', () => {
    expect(compileRegex('^shared-[0-9]+$')).toBe(compileRegex('^shared-[0-9]+$'))
  })
})

describe('translation to RE2 syntax', () => {
  it('rewrites Perl classes outside and inside bracket classes', () => {
    expect(toRe2Syntax('\\d+')).toBe('\\p{Nd}+')
    expect(toRe2Syntax('[\\d-]')).toBe('[\\p{Nd}-]')
    expect(toRe2Syntax('[^\\D]')).toBe('[^\\P{Nd}]')
  })

  it('leaves escaped backslashes, quoted text, POSIX classes and literal brackets alone', () => {
    expect(toRe2Syntax('\\\\d')).toBe('\\\\d')
    expect(toRe2Syntax('\\Q\\d\\E\\d')).toBe('\\Q\\d\\E\\p{Nd}')
    expect(toRe2Syntax('[]\\d]')).toBe('[]\\p{Nd}]')
    expect(toRe2Syntax('[[:alpha:]\\d]')).toBe('[[:alpha:]\\p{Nd}]')
    expect(toRe2Syntax('[\\S]\\S')).toBe(
      '[\\S][^\\x{09}-\\x{0D}\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}]',
    )
    expect(toRe2Syntax('\\.com$')).toBe('\\.com$')
  })
})
