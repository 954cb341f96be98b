import { HogQLSyntaxError } from './errors.js'

export type TokenType = 'ident' | 'qident' | 'string' | 'number' | 'op' | 'eof'

export interface Token {
  type: TokenType
  /** identifier name / unescaped string / operator text / number literal text */
  value: string
  start: number
  end: number
  /** lower-cased value of identifiers, for keyword checks */
  lower?: string
}

const OPERATORS = [
  '=~*',
  '!~*',
  '?.',
  '??',
  '->',
  '::',
  '||',
  '==',
  '!=',
  '<>',
  '<=',
  '>=',
  '=~',
  '!~',
  '~*',
  '<',
  '>',
  '=',
  '~',
  '+',
  '-',
  '*',
  '/',
  '%',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  ',',
  '.',
  ';',
  '?',
  ':',
]

const OPS_BY_FIRST = new Map<string, string[]>()
for (const op of OPERATORS) {
  const list = OPS_BY_FIRST.get(op[0]) ?? []
  list.push(op)
  OPS_BY_FIRST.set(op[0], list)
}
function matchOperator(src: string, i: number): string | undefined {
  const candidates = OPS_BY_FIRST.get(src[i])
  if (!candidates) return undefined
  for (const op of candidates) if (op.length === 1 || src.startsWith(op, i)) return op
  return undefined
}

const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '0': '\0',
  b: '\b',
  f: '\f',
  a: '\x07',
  v: '\v',
  e: '\x1b',
}

function isIdentStart(code: number): boolean {
  return (
    (code >= 97 && code <= 122) ||
    (code >= 65 && code <= 90) ||
    code === 95 ||
    code === 36 ||
    (code > 127 && /\p{L}/u.test(String.fromCharCode(code)))
  )
}
function isIdentPart(code: number): boolean {
  return isIdentStart(code) || (code >= 48 && code <= 57)
}
function isDigit(code: number): boolean {
  return code >= 48 && code <= 57
}

/** Length of the number literal at `i` (digits, one dot, exponent, or 0x hex); 0 if none. */
function numberLength(src: string, i: number, allowDot: boolean): number {
  let j = i
  if (src[j] === '0' && (src[j + 1] === 'x' || src[j + 1] === 'X') && /[0-9a-fA-F]/.test(src[j + 2] ?? '')) {
    j += 2
    while (j < src.length && /[0-9a-fA-F]/.test(src[j])) j++
    return j - i
  }
  while (isDigit(src.charCodeAt(j))) j++
  if (allowDot && src[j] === '.' && !(src[j + 1] === '.')) {
    j++
    while (isDigit(src.charCodeAt(j))) j++
  }
  if (j > i && (src[j] === 'e' || src[j] === 'E')) {
    let k = j + 1
    if (src[k] === '+' || src[k] === '-') k++
    if (isDigit(src.charCodeAt(k))) {
      while (isDigit(src.charCodeAt(k))) k++
      j = k
    }
  }
  return j - i
}

/** Reads a quoted run starting at `i` (the opening quote); doubling the quote or a backslash escapes it. */
function readQuoted(src: string, i: number): { value: string; end: number } {
  const quote = src[i]
  let out = ''
  let j = i + 1
  while (j < src.length) {
    const c = src[j]
    if (c === '\\' && j + 1 < src.length) {
      const n = src[j + 1]
      if (n === 'x' && /^[0-9a-fA-F]{2}$/.test(src.slice(j + 2, j + 4))) {
        out += String.fromCharCode(Number.parseInt(src.slice(j + 2, j + 4), 16))
        j += 4
        continue
      }
      out += ESCAPES[n] ?? n
      j += 2
      continue
    }
    if (c === quote) {
      if (src[j + 1] === quote) {
        out += quote
        j += 2
        continue
      }
      return { value: out, end: j + 1 }
    }
    out += c
    j++
  }
  const what = quote === "'" ? 'string' : 'quoted identifier'
  throw new HogQLSyntaxError(`Syntax error at position ${i}: unterminated ${what}`, i, src.length)
}

/**
 * How deep expressions and subqueries may nest. Each level costs the parser and every later walk of the tree
 * (placeholders, cohorts, printers) a few stack frames; legitimate queries stay far below this.
 */
export const MAX_NESTING = 200
export const TOO_DEEP = 'Query too deeply nested'

/**
 * Longest query text accepted: tokenizing costs the request thread about half a microsecond per character, and a
 * token list takes about a hundred times the text's size (15 MB of `a,` took 1.8 s and 1.3 GB before this check).
 */
export const MAX_QUERY_LENGTH = 512 * 1024

export function tokenize(src: string): Token[] {
  if (src.length > MAX_QUERY_LENGTH) {
    throw new HogQLSyntaxError(`Query is too long: at most ${MAX_QUERY_LENGTH} characters`)
  }
  const tokens: Token[] = []
  let i = 0
  const n = src.length
  // Every open bracket starts at least one level of nesting in the parser: past the limit the query is refused
  // here, before the rest of the text is tokenized (100,000 parentheses cost a few microseconds, not 80 ms).
  let brackets = 0
  while (i < n) {
    const c = src[i]
    if (c === ' ' || c === '\n' || c === '\t' || c === '\r' || c === '\f') {
      i++
      continue
    }
    if (c === '-' && src[i + 1] === '-') {
      while (i < n && src[i] !== '\n') i++
      continue
    }
    if (c === '/' && src[i + 1] === '*') {
      const close = src.indexOf('*/', i + 2)
      if (close < 0) throw new HogQLSyntaxError(`Syntax error at position ${i}: unterminated comment`, i, n)
      i = close + 2
      continue
    }
    if (c === "'") {
      const { value, end } = readQuoted(src, i)
      tokens.push({ type: 'string', value, start: i, end })
      i = end
      continue
    }
    if (c === '`' || c === '"') {
      const { value, end } = readQuoted(src, i)
      tokens.push({ type: 'qident', value, start: i, end })
      i = end
      continue
    }
    const code = src.charCodeAt(i)
    if (isDigit(code) || (c === '.' && isDigit(src.charCodeAt(i + 1)) && !afterAccessible(tokens))) {
      // `t.1.2` is tuple access: a number right after `.` never swallows a further dot
      const prev = tokens[tokens.length - 1]
      const afterDot = prev?.type === 'op' && prev.value === '.'
      const len = numberLength(src, i, !afterDot)
      const text = src.slice(i, i + len)
      tokens.push({ type: 'number', value: text, start: i, end: i + len })
      i += len
      continue
    }
    if (isIdentStart(code)) {
      let j = i + 1
      while (j < n && isIdentPart(src.charCodeAt(j))) j++
      const value = src.slice(i, j)
      tokens.push({ type: 'ident', value, start: i, end: j, lower: value.toLowerCase() })
      i = j
      continue
    }
    const op = matchOperator(src, i)
    if (!op) throw new HogQLSyntaxError(`Syntax error at position ${i}: unexpected character '${c}'`, i, i + 1)
    if (op === '(' || op === '[') {
      if (++brackets > MAX_NESTING) throw new HogQLSyntaxError(TOO_DEEP, i)
    } else if (op === ')' || op === ']') brackets--
    tokens.push({ type: 'op', value: op, start: i, end: i + op.length })
    i += op.length
  }
  tokens.push({ type: 'eof', value: '', start: n, end: n })
  return tokens
}

/** `.5` after an identifier or closing bracket is member access (`t.5` is never `t` followed by 0.5). */
function afterAccessible(tokens: Token[]): boolean {
  const prev = tokens[tokens.length - 1]
  if (!prev) return false
  return (
    prev.type === 'ident' ||
    prev.type === 'qident' ||
    prev.type === 'number' ||
    (prev.type === 'op' && (prev.value === ')' || prev.value === ']'))
  )
}
