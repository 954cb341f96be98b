/**
 * The type a property definition gets from the first value seen, as PostHog's property-defs service decides it
 * (reference/products.md §5.2): a few key families are always strings, time-like keys with date-like or recent
 * unix-timestamp values are DateTime, then the JSON type of the value decides.
 */
export type PropertyType = 'DateTime' | 'String' | 'Numeric' | 'Boolean'

const SIX_MONTHS_SECONDS = 15_768_000
// "timestamp" needs no entry of its own: it contains "time".
const TIME_KEYWORDS = ['time', 'date', '_at', '-at', 'createdat', 'updatedat']
const DATE_PREFIX =
  /^(([0-9]{4}[/-][0-2][0-9][/-][0-3][0-9])|([0-2][0-9][/-][0-3][0-9][/-][0-9]{4}))([ T][0-2][0-9]:[0-6][0-9]:[0-6][0-9].*)?$/
const MAX_U64 = 2 ** 64

const PLAIN = 0
const ALWAYS_STRING = 1
const TIME_LIKE = 2
type KeyClass = typeof PLAIN | typeof ALWAYS_STRING | typeof TIME_LIKE

// Property names repeat on every event; their classification is cached (bounded, cleared when full).
const keyClasses = new Map<string, KeyClass>()
const KEY_CACHE_SIZE = 50_000

export function detectPropertyType(key: string, value: unknown, nowSeconds: number): PropertyType | null {
  let keyClass = keyClasses.get(key)
  if (keyClass === undefined) {
    keyClass = classifyKey(key)
    if (keyClasses.size >= KEY_CACHE_SIZE) keyClasses.clear()
    keyClasses.set(key, keyClass)
  }
  if (keyClass === ALWAYS_STRING) return 'String'

  if (typeof value === 'string') {
    if (keyClass === TIME_LIKE && isLikelyDateString(value)) return 'DateTime'
    const s = value.trim()
    if (s === 'true' || s === 'false' || s === 'TRUE' || s === 'FALSE') return 'Boolean'
    return isLikelyDateString(s) ? 'DateTime' : 'String'
  }
  if (typeof value === 'number') {
    if (keyClass === TIME_LIKE && isLikelyUnixTimestamp(value, nowSeconds)) return 'DateTime'
    return 'Numeric'
  }
  if (typeof value === 'boolean') return 'Boolean'
  return null
}

function classifyKey(key: string): KeyClass {
  const k = key.toLowerCase()
  // Values of these keys flip between types (a flag is `false` until it has a variant, a campaign id looks
  // numeric once); the first value must not lock the definition to the wrong type.
  if (
    k.startsWith('utm_') ||
    k.startsWith('$initial_utm_') ||
    k.startsWith('$feature/') ||
    k === '$feature_flag_response' ||
    k.startsWith('$survey_response')
  ) {
    return ALWAYS_STRING
  }
  for (const word of TIME_KEYWORDS) if (k.includes(word)) return TIME_LIKE
  return PLAIN
}

// A non-negative integer no older than six months, read as seconds; milliseconds are larger still and pass too.
function isLikelyUnixTimestamp(n: number, nowSeconds: number): boolean {
  return Number.isInteger(n) && n >= 0 && n < MAX_U64 && n >= nowSeconds - SIX_MONTHS_SECONDS
}

export function isLikelyDateString(s: string): boolean {
  // Cheap gates first: RFC 3339 and the prefix pattern start with a digit; RFC 2822 always has a time (':').
  if (s.length < 8) return false
  const c = s.charCodeAt(0)
  if (c >= 0x30 && c <= 0x39) return isRfc3339(s) || DATE_PREFIX.test(s) || isRfc2822(s)
  return s.includes(':') && isRfc2822(s)
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/

function isRfc3339(s: string): boolean {
  const m = RFC3339.exec(s)
  if (!m) return false
  if (!isValidDate(+m[1], +m[2], +m[3]) || !isValidTime(+m[4], +m[5], +m[6])) return false
  return m[9] === undefined || (+m[9] < 24 && +m[10] < 60)
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']
const RFC2822 =
  /^\s*(?:(?:mon|tue|wed|thu|fri|sat|sun)\s*,\s*)?(\d{1,2})\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\s+(\d{2,4})\s+(\d{2}):(\d{2})(?::(\d{2}))?\s+(?:[+-]\d{4}|ut|gmt|[ecmp][sd]t|[a-ik-z])\s*$/i

function isRfc2822(s: string): boolean {
  const m = RFC2822.exec(s)
  if (!m) return false
  let year = +m[3]
  // Obsolete two- and three-digit years (RFC 2822 §4.3).
  if (m[3].length === 2) year += year < 50 ? 2000 : 1900
  else if (m[3].length === 3) year += 1900
  const month = MONTHS.indexOf(m[2].toLowerCase()) + 1
  return isValidDate(year, month, +m[1]) && isValidTime(+m[4], +m[5], m[6] === undefined ? 0 : +m[6])
}

function isValidDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
  return day <= days
}

// Second 60 is a leap second, which RFC 3339 allows.
function isValidTime(hour: number, minute: number, second: number): boolean {
  return hour < 24 && minute < 60 && second <= 60
}
