// The `regex` / `not_regex` matcher for flags and cohorts. PostHog's server compiles the filter value with
// fancy-regex (the Rust regex crate for ordinary patterns, a backtracker capped at 10,000 steps for the rest);
// property values come from clients, so a backtracking engine here would let one request hold the event loop for
// seconds (`^(a+)+$` against 31 characters). Patterns run on re2js, a linear-time RE2 engine whose syntax and
// leftmost-first semantics are the regex crate's. Where the two differ:
// - Perl classes `\d`, `\s`, `\w` are Unicode in Rust and ASCII in RE2: they are rewritten to Unicode classes
//   (`\S` and `\W` inside a bracket class stay ASCII: RE2 cannot negate a union there). `\b` stays ASCII.
// - fancy-regex extras: lookbehinds work (re2js runs captureless ones in linear time); lookaheads, backreferences,
//   atomic groups and possessive repeats do not compile, and a pattern that does not compile is no match for both
//   operators, as PostHog treats an invalid pattern (and as it treats a pattern that hits its backtrack limit).
// - `(?x)`, class set operations (`&&`, `--`) and `(?-u)` are not supported by RE2 (invalid or literal).
// A property value longer than MAX_REGEX_SUBJECT_LENGTH is not searched: both operators answer false, like an
// evaluation error, so a request cannot buy a long search with a large body.
import { RE2JS } from 're2js'

export const MAX_REGEX_SUBJECT_LENGTH = 8_192

export interface CompiledRegex {
  test(subject: string): boolean
}

// Rust's Unicode Perl classes as RE2 class items (White_Space; Alphabetic ∪ M ∪ Nd ∪ Pc ∪ Join_Control, with
// Alphabetic approximated by L ∪ Nl, whose remaining code points are marks already in M).
const SPACE_ITEMS =
  '\\x{09}-\\x{0D}\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}'
const WORD_ITEMS = '\\p{L}\\p{Nl}\\p{M}\\p{Nd}\\p{Pc}\\x{200C}\\x{200D}'

const OUTSIDE_CLASS: Record<string, string> = {
  d: '\\p{Nd}',
  D: '\\P{Nd}',
  s: `[${SPACE_ITEMS}]`,
  S: `[^${SPACE_ITEMS}]`,
  w: `[${WORD_ITEMS}]`,
  W: `[^${WORD_ITEMS}]`,
}
const INSIDE_CLASS: Record<string, string> = { d: '\\p{Nd}', D: '\\P{Nd}', s: SPACE_ITEMS, w: WORD_ITEMS }

/** Rewrites the ASCII-only Perl classes of RE2 to the Unicode ones of Rust's regex crate. */
export function toRe2Syntax(pattern: string): string {
  let out = ''
  let inClass = false
  let i = 0
  while (i < pattern.length) {
    const c = pattern[i]
    if (c === '\\') {
      const next = pattern[i + 1] ?? ''
      if (next === 'Q') {
        const end = pattern.indexOf('\\E', i + 2)
        const stop = end === -1 ? pattern.length : end + 2
        out += pattern.slice(i, stop)
        i = stop
        continue
      }
      out += (inClass ? INSIDE_CLASS[next] : OUTSIDE_CLASS[next]) ?? `\\${next}`
      i += 2
      continue
    }
    if (!inClass && c === '[') {
      inClass = true
      out += c
      i += 1
      // A `]` first in the class (after an optional `^`) is a literal.
      if (pattern[i] === '^') out += pattern[i++]
      if (pattern[i] === ']') out += pattern[i++]
      continue
    }
    if (inClass && c === '[' && pattern[i + 1] === ':') {
      const end = pattern.indexOf(':]', i + 2)
      if (end !== -1) {
        out += pattern.slice(i, end + 2)
        i = end + 2
        continue
      }
    }
    if (inClass && c === ']') inClass = false
    out += c
    i += 1
  }
  return out
}

const MAX_CACHED_PATTERNS = 1_000
const MAX_CACHED_PATTERN_CHARS = 1_000_000
/** Compiled patterns by source, least recently used first; shared by every team and every definitions reload. */
const compiled = new Map<string, CompiledRegex | null>()
let cachedChars = 0

function compileUncached(pattern: string): CompiledRegex | null {
  try {
    return RE2JS.compile(toRe2Syntax(pattern), RE2JS.LOOKBEHINDS)
  } catch {
    return null
  }
}

/** The compiled pattern, or null when it does not compile (no match for both operators). */
export function compileRegex(pattern: string): CompiledRegex | null {
  const known = compiled.get(pattern)
  if (known !== undefined) {
    compiled.delete(pattern)
    compiled.set(pattern, known)
    return known
  }
  const regex = compileUncached(pattern)
  if (pattern.length <= MAX_CACHED_PATTERN_CHARS) {
    compiled.set(pattern, regex)
    cachedChars += pattern.length
    for (const [oldest] of compiled) {
      if (compiled.size <= MAX_CACHED_PATTERNS && cachedChars <= MAX_CACHED_PATTERN_CHARS) break
      compiled.delete(oldest)
      cachedChars -= oldest.length
    }
  }
  return regex
}

/** Whether the pattern occurs in the subject; null when the subject is too long to search (no answer). */
export function searchRegex(regex: CompiledRegex, subject: string): boolean | null {
  if (subject.length > MAX_REGEX_SUBJECT_LENGTH) return null
  return regex.test(subject)
}
