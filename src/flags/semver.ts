// Semantic versions as PostHog's flag server reads them: a leading `v` and surrounding whitespace are ignored,
// missing minor/patch parts are padded and leading zeros stripped, then strict SemVer 2.0 applies
// (pre-release ordering included). Requirements follow the Rust `semver` crate's VersionReq.

export interface ParsedSemver {
  major: string
  minor: string
  patch: string
  pre: string[]
  build: string[]
}

const NUMERIC = /^(0|[1-9]\d*)$/
const IDENTIFIER = /^[0-9A-Za-z-]+$/

function stripLeadingZeros(part: string): string {
  if (part === '' || !/^\d+$/.test(part)) return part
  const trimmed = part.replace(/^0+/, '')
  return trimmed === '' ? '0' : trimmed
}

function normalize(raw: string): string {
  return (raw.startsWith('v') ? raw.slice(1) : raw).trim()
}

/** Pads `3.10` to `3.10.0` and strips leading zeros from numeric core parts, keeping any suffix. */
function canonicalize(version: string): string {
  const cut = version.search(/[-+]/)
  const core = cut === -1 ? version : version.slice(0, cut)
  const suffix = cut === -1 ? '' : version.slice(cut)
  const parts = core.split('.').map(stripLeadingZeros)
  while (parts.length < 3) parts.push('0')
  return parts.join('.') + suffix
}

/** Strict SemVer 2.0 (as the Rust crate parses it). */
export function parseSemverStrict(text: string): ParsedSemver | null {
  const plus = text.indexOf('+')
  const beforeBuild = plus === -1 ? text : text.slice(0, plus)
  const buildText = plus === -1 ? null : text.slice(plus + 1)
  const dash = beforeBuild.indexOf('-')
  const core = dash === -1 ? beforeBuild : beforeBuild.slice(0, dash)
  const preText = dash === -1 ? null : beforeBuild.slice(dash + 1)
  const parts = core.split('.')
  if (parts.length !== 3 || !parts.every((p) => NUMERIC.test(p))) return null
  const pre = preText === null ? [] : preText.split('.')
  if (preText !== null && !pre.every((id) => IDENTIFIER.test(id) && (!/^\d+$/.test(id) || NUMERIC.test(id)))) {
    return null
  }
  const build = buildText === null ? [] : buildText.split('.')
  if (buildText !== null && !build.every((id) => IDENTIFIER.test(id))) return null
  return { major: parts[0], minor: parts[1], patch: parts[2], pre, build }
}

/** The server's lenient reading of a property or filter value as a version. */
export function parseSemverLoose(raw: string): ParsedSemver | null {
  return parseSemverStrict(canonicalize(normalize(raw)))
}

function compareNumeric(a: string, b: string): number {
  const left = a.replace(/^0+(?=\d)/, '')
  const right = b.replace(/^0+(?=\d)/, '')
  if (left.length !== right.length) return left.length < right.length ? -1 : 1
  return left < right ? -1 : left > right ? 1 : 0
}

function compareIdentifiers(a: string[], b: string[]): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const x = a[i]
    const y = b[i]
    const xNum = /^\d+$/.test(x)
    const yNum = /^\d+$/.test(y)
    let order: number
    if (xNum && yNum) order = compareNumeric(x, y) || (x.length < y.length ? -1 : x.length > y.length ? 1 : 0)
    else if (xNum) order = -1
    else if (yNum) order = 1
    else order = x < y ? -1 : x > y ? 1 : 0
    if (order !== 0) return order
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1
}

function compareCore(a: ParsedSemver, b: ParsedSemver): number {
  return compareNumeric(a.major, b.major) || compareNumeric(a.minor, b.minor) || compareNumeric(a.patch, b.patch)
}

function comparePre(a: string[], b: string[]): number {
  if (a.length === 0 || b.length === 0) return a.length === b.length ? 0 : a.length === 0 ? 1 : -1
  return compareIdentifiers(a, b)
}

/** Total order of the Rust crate: core, then pre-release (release sorts last), then build metadata. */
export function compareSemver(a: ParsedSemver, b: ParsedSemver): number {
  const core = compareCore(a, b)
  if (core !== 0) return core
  const pre = comparePre(a.pre, b.pre)
  if (pre !== 0) return pre
  if (a.build.length === 0 || b.build.length === 0) {
    return a.build.length === b.build.length ? 0 : a.build.length === 0 ? -1 : 1
  }
  return compareIdentifiers(a.build, b.build)
}

type Op = '=' | '>' | '>=' | '<' | '<=' | '~' | '^' | '*'

interface Comparator {
  op: Op
  major: string
  minor: string | null
  patch: string | null
  pre: string[]
  /** A bare `*`/`x`: any version. */
  isAny?: boolean
}

export type SemverRequirement = Comparator[]

function version(major: string, minor: string, patch: string, pre: string[] = []): ParsedSemver {
  return { major, minor, patch, pre, build: [] }
}

function inc(n: string): string {
  return (BigInt(n) + 1n).toString()
}

function parseComparator(text: string): Comparator | null {
  const match = /^(>=|<=|>|<|=|~|\^)?\s*(.*)$/.exec(text.trim())
  if (!match) return null
  const explicitOp = match[1] as Op | undefined
  const rest = match[2]
  const plus = rest.indexOf('+')
  const body = plus === -1 ? rest : rest.slice(0, plus)
  const dash = body.indexOf('-')
  const core = dash === -1 ? body : body.slice(0, dash)
  const pre = dash === -1 ? [] : body.slice(dash + 1).split('.')
  const parts = core.split('.')
  if (parts.length < 1 || parts.length > 3) return null
  const isWild = (p: string) => p === '*' || p === 'x' || p === 'X'
  let sawWildcard = false
  const numbers: Array<string | null> = []
  for (const part of parts) {
    if (isWild(part)) {
      sawWildcard = true
      numbers.push(null)
    } else if (sawWildcard || !NUMERIC.test(part)) {
      return null
    } else {
      numbers.push(part)
    }
  }
  if (pre.length > 0 && (numbers.length !== 3 || numbers[2] === null)) return null
  if (dash !== -1 && !pre.every((id) => IDENTIFIER.test(id))) return null
  const [major, minor = null, patch = null] = numbers
  if (major === null) {
    if (explicitOp && explicitOp !== '=') return null
    return { op: '*', major: '0', minor: null, patch: null, pre: [], isAny: true }
  }
  const op: Op = sawWildcard ? (explicitOp && explicitOp !== '=' ? explicitOp : '*') : (explicitOp ?? '^')
  return { op, major, minor, patch, pre }
}

/**
 * Builds the requirement the server derives for `semver_tilde` (`~x.y.z`), `semver_caret` (`^x.y.z`) and
 * `semver_wildcard` (`1.2.*` → `1.2.x`). Null when it does not parse (the server then reports no match).
 */
export function parseSemverRequirement(operator: string, raw: string): SemverRequirement | null {
  const normalized = normalize(raw)
  let text: string
  if (operator === 'semver_tilde') text = `~${canonicalize(normalized)}`
  else if (operator === 'semver_caret') text = `^${canonicalize(normalized)}`
  else text = normalized.split('.').map(stripLeadingZeros).join('.').replaceAll('*', 'x')
  if (text.trim() === '') return null
  const comparators: Comparator[] = []
  for (const piece of text.split(',')) {
    const comparator = parseComparator(piece)
    if (!comparator) return null
    comparators.push(comparator)
  }
  return comparators
}

function lower(c: Comparator): ParsedSemver {
  return version(c.major, c.minor ?? '0', c.patch ?? '0', c.pre)
}

function matchesComparator(v: ParsedSemver, c: Comparator): boolean {
  const cmp = (w: ParsedSemver) => compareCore(v, w) || comparePre(v.pre, w.pre)
  switch (c.op) {
    case '*':
      if (c.isAny) return true
      return c.minor === null ? v.major === c.major : v.major === c.major && v.minor === c.minor
    case '=':
    case '>=':
    case '>':
    case '<':
    case '<=': {
      if (c.minor === null || c.patch === null) {
        // Partial versions compare as ranges (`>1.2` means `>=1.3.0`, `<=1.2` means `<1.3.0`).
        const upper = c.minor === null ? version(inc(c.major), '0', '0') : version(c.major, inc(c.minor), '0')
        const low = lower(c)
        if (c.op === '=') return cmp(low) >= 0 && compareCore(v, upper) < 0
        if (c.op === '>') return compareCore(v, upper) >= 0
        if (c.op === '>=') return cmp(low) >= 0
        if (c.op === '<') return cmp(low) < 0
        return compareCore(v, upper) < 0
      }
      const order = cmp(lower(c))
      if (c.op === '=') return order === 0
      if (c.op === '>') return order > 0
      if (c.op === '>=') return order >= 0
      if (c.op === '<') return order < 0
      return order <= 0
    }
    case '~': {
      const upper = c.minor === null ? version(inc(c.major), '0', '0') : version(c.major, inc(c.minor), '0')
      return cmp(lower(c)) >= 0 && compareCore(v, upper) < 0
    }
    case '^': {
      let upper: ParsedSemver
      if (c.major !== '0' || c.minor === null) upper = version(inc(c.major), '0', '0')
      else if (c.minor !== '0' || c.patch === null) upper = version('0', inc(c.minor), '0')
      else upper = version('0', '0', inc(c.patch))
      return cmp(lower(c)) >= 0 && compareCore(v, upper) < 0
    }
  }
}

/** VersionReq matching: every comparator holds, and a pre-release only matches a comparator on its own x.y.z. */
export function satisfies(v: ParsedSemver, requirement: SemverRequirement): boolean {
  if (!requirement.every((c) => matchesComparator(v, c))) return false
  if (v.pre.length === 0) return true
  return requirement.some(
    (c) => c.major === v.major && c.minor === v.minor && c.patch === v.patch && c.pre.length > 0 && c.op !== '*',
  )
}
