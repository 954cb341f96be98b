// Date parsing for the is_date_* operators, as PostHog's flag server does it: numbers are Unix seconds,
// relative dates (`-7d`) are anchored to now in the team timezone, explicit offsets are honoured, and naive
// dates/datetimes are wall-clock times in the team timezone.
import { parseRustFloat } from './operators.js'

/** An instant with nanosecond precision: milliseconds since the epoch plus the nanoseconds within that ms. */
export interface Instant {
  ms: number
  nanos: number
}

export function compareInstants(a: Instant, b: Instant): number {
  if (a.ms !== b.ms) return a.ms < b.ms ? -1 : 1
  return a.nanos === b.nanos ? 0 : a.nanos < b.nanos ? -1 : 1
}

const MAX_MS = 8.64e15

function instantOf(seconds: number, nanos: number): Instant | null {
  const ms = seconds * 1000 + Math.floor(nanos / 1e6)
  if (!Number.isFinite(ms) || Math.abs(ms) > MAX_MS) return null
  return { ms, nanos: nanos % 1e6 }
}

/** Unix seconds with a fraction; a negative fraction is dropped, as the server's unsigned cast does. */
export function instantFromUnixSeconds(value: number): Instant | null {
  if (Number.isNaN(value)) return { ms: 0, nanos: 0 }
  if (!Number.isFinite(value)) return null
  const whole = Math.floor(value)
  const nanos = Math.min(999_999_999, Math.max(0, Math.round((value % 1) * 1e9)))
  return instantOf(whole, nanos)
}

const formatters = new Map<string, Intl.DateTimeFormat | null>()

function formatterFor(timezone: string): Intl.DateTimeFormat | null {
  let formatter = formatters.get(timezone)
  if (formatter === undefined) {
    try {
      formatter = new Intl.DateTimeFormat('en-US', {
        timeZone: timezone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
        era: 'short',
      })
    } catch {
      formatter = null
    }
    formatters.set(timezone, formatter)
  }
  return formatter
}

function isUtc(timezone: string): boolean {
  return timezone === 'UTC' || timezone === 'Etc/UTC' || timezone === 'GMT' || formatterFor(timezone) === null
}

/** Offset of `timezone` from UTC at the instant `utcMs`, in milliseconds. */
function offsetAt(timezone: string, utcMs: number): number {
  const formatter = formatterFor(timezone)
  if (!formatter) return 0
  const whole = Math.floor(utcMs / 1000) * 1000
  const fields: Record<string, string> = {}
  for (const part of formatter.formatToParts(new Date(whole))) fields[part.type] = part.value
  let year = Number(fields.year)
  if (fields.era === 'BC' || fields.era === 'B') year = 1 - year
  const wall = Date.UTC(
    year,
    Number(fields.month) - 1,
    Number(fields.day),
    Number(fields.hour),
    Number(fields.minute),
    Number(fields.second),
  )
  return wall - whole
}

/**
 * The UTC instant of a wall-clock time (given as ms of the same fields in UTC) in `timezone`. A repeated wall
 * time resolves to the earlier instant; one skipped by a DST jump has none.
 */
export function wallClockToUtc(wallMs: number, timezone: string): number | null {
  if (isUtc(timezone)) return wallMs
  const day = 86_400_000
  const candidates = new Set([wallMs - offsetAt(timezone, wallMs - day), wallMs - offsetAt(timezone, wallMs + day)])
  let best: number | null = null
  for (const candidate of candidates) {
    if (wallMs - candidate === offsetAt(timezone, candidate) && (best === null || candidate < best)) best = candidate
  }
  return best
}

function wallClockAt(utcMs: number, timezone: string): number {
  return isUtc(timezone) ? utcMs : utcMs + offsetAt(timezone, utcMs)
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate()
}

const RELATIVE = /^-?(\d+)([hdwmy])$/

/** `-3d` and `3d` both mean three days ago; months and years step back on the calendar, clamping the day. */
export function parseRelativeDate(text: string, timezone: string, now: Date): Instant | null {
  const match = RELATIVE.exec(text)
  if (!match) return null
  const amount = Number(match[1])
  if (amount >= 10_000) return null
  const wall = wallClockAt(now.getTime(), timezone)
  let result: number
  switch (match[2]) {
    case 'h':
      result = wall - amount * 3_600_000
      break
    case 'd':
      result = wall - amount * 86_400_000
      break
    case 'w':
      result = wall - amount * 604_800_000
      break
    default: {
      const date = new Date(wall)
      let year = date.getUTCFullYear()
      let month = date.getUTCMonth() + 1
      let day = date.getUTCDate()
      for (let i = 0; i < amount; i++) {
        if (match[2] === 'm') {
          ;[year, month] = month === 1 ? [year - 1, 12] : [year, month - 1]
          day = Math.min(day, daysInMonth(year, month))
        } else {
          year -= 1
          if (month === 2) day = Math.min(day, daysInMonth(year, month))
        }
      }
      const timeOfDay = wall - Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate())
      result = Date.UTC(year, month - 1, day) + timeOfDay
    }
  }
  const utc = wallClockToUtc(result, timezone)
  return utc === null ? null : { ms: utc, nanos: 0 }
}

interface Fields {
  year: number
  month: number
  day: number
  hour: number
  minute: number
  second: number
  fraction: string
}

function fieldsToWallMs(f: Fields): { ms: number; nanos: number } | null {
  if (f.month < 1 || f.month > 12 || f.day < 1 || f.day > daysInMonth(f.year, f.month)) return null
  if (f.hour > 23 || f.minute > 59 || f.second > 59) return null
  const nanosTotal = f.fraction === '' ? 0 : Number(f.fraction.slice(0, 9).padEnd(9, '0'))
  const base = Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second)
  const date = new Date(base)
  // Date.UTC maps years 0..99 to 1900..1999; set the year explicitly.
  date.setUTCFullYear(f.year)
  return { ms: date.getTime() + Math.floor(nanosTotal / 1e6), nanos: nanosTotal % 1e6 }
}

function offsetMinutes(text: string): number | null {
  if (/^(?:z|utc|gmt)$/i.test(text)) return 0
  const match = /^([+-])(\d{2}):?(\d{2})?$/.exec(text)
  if (!match) return null
  const hours = Number(match[2])
  const minutes = Number(match[3] ?? '0')
  if (hours > 23 || minutes > 59) return null
  return (match[1] === '-' ? -1 : 1) * (hours * 60 + minutes)
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/
const BARE_DATE = /^(\d{4})-(\d{1,2})-(\d{1,2})$/
const NAIVE_DATETIME = /^(\d{4})-(\d{1,2})-(\d{1,2})[T ](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d+))?)?$/
// Forms the server's lenient fallback parser also reads (naive ones as UTC).
const LENIENT_WITH_ZONE =
  /^(\d{4})-(\d{1,2})-(\d{1,2})[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?\s*(Z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)$/i
const LENIENT_SLASHED = /^(\d{4})\/(\d{1,2})\/(\d{1,2})$/
const LENIENT_US_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/
const RFC2822 = /^[A-Za-z]{3}, \d{1,2} [A-Za-z]{3} \d{4} \d{2}:\d{2}(?::\d{2})? (?:[+-]\d{4}|GMT|UTC)$/

function fields(m: RegExpExecArray, withTime: boolean): Fields {
  return {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: withTime ? Number(m[4]) : 0,
    minute: withTime ? Number(m[5]) : 0,
    second: withTime && m[6] ? Number(m[6]) : 0,
    fraction: withTime ? (m[7] ?? '') : '',
  }
}

function withOffset(f: Fields, offset: number | null): Instant | null {
  if (offset === null) return null
  const wall = fieldsToWallMs(f)
  return wall && { ms: wall.ms - offset * 60_000, nanos: wall.nanos }
}

function inTimezone(f: Fields, timezone: string): Instant | null {
  const wall = fieldsToWallMs(f)
  if (!wall) return null
  const utc = wallClockToUtc(wall.ms, timezone)
  return utc === null ? null : { ms: utc, nanos: wall.nanos }
}

function parseLenient(text: string): Instant | null {
  let m = LENIENT_WITH_ZONE.exec(text)
  if (m) return withOffset(fields(m, true), offsetMinutes(m[8]))
  if (/^\d{10}$/.test(text)) return instantOf(Number(text), 0)
  if (/^\d{13}$/.test(text)) return { ms: Number(text), nanos: 0 }
  m = LENIENT_SLASHED.exec(text)
  if (m) return withOffset(fields(m, false), 0)
  m = LENIENT_US_DATE.exec(text)
  if (m) return withOffset({ ...fields(m, false), year: Number(m[3]), month: Number(m[1]), day: Number(m[2]) }, 0)
  if (RFC2822.test(text)) {
    const ms = Date.parse(text)
    return Number.isNaN(ms) ? null : { ms, nanos: 0 }
  }
  return null
}

/** A filter's date string: relative, RFC 3339, naive (team timezone), then a lenient fallback. */
export function parseFilterDate(text: string, timezone: string, now: Date): Instant | null {
  const relative = parseRelativeDate(text, timezone, now)
  if (relative) return relative
  let m = RFC3339.exec(text)
  if (m) return withOffset(fields(m, true), offsetMinutes(m[8]))
  m = BARE_DATE.exec(text)
  if (m) return inTimezone(fields(m, false), timezone)
  m = NAIVE_DATETIME.exec(text)
  if (m) return inTimezone(fields(m, true), timezone)
  return parseLenient(text)
}

/** A property value as a date: numbers and numeric strings are Unix seconds; other types never match. */
export function parsePropertyDate(value: unknown, timezone: string, now: Date): Instant | null {
  if (typeof value === 'number') return instantFromUnixSeconds(value)
  if (typeof value !== 'string') return null
  const numeric = parseRustFloat(value)
  if (numeric !== null) return instantFromUnixSeconds(numeric)
  return parseFilterDate(value, timezone, now)
}
