/**
 * `dateRange` + `interval` of insight nodes → the bounds the query reads and the buckets the result shows
 * (hogql.md §4.0; PostHog's `QueryDateRange`): relative dates (`-7d`, `-24h`, `-1mStart`, `yStart`, `-2wEnd`),
 * absolute dates in the project's timezone, `all` (from the project's first event), `explicitDate`; buckets
 * aligned to the interval with the project's first day of the week. Pure.
 */
import { ValidationError } from '../../http/errors.js'
import {
  addLocal,
  fromLocal,
  localDateTime,
  localDateTimeMicro,
  localDay,
  MONTHS,
  startOfLocal,
  toLocal,
  type Unit,
} from './time.js'

export type Interval = 'minute' | 'hour' | 'day' | 'week' | 'month'
export const INTERVALS: Interval[] = ['minute', 'hour', 'day', 'week', 'month']

/** More buckets than this is a request for a finer interval than the range can be shown in. */
export const MAX_INTERVALS = 10_000

export interface InsightTeam {
  id: number
  timezone: string
  /** 0 = Sunday, 1 = Monday */
  weekStartDay: 0 | 1
}

export interface DateRangeInput {
  date_from?: string | null
  date_to?: string | null
  explicitDate?: boolean | null
}

/** A resolved range: local (wall-clock) dates in the project's timezone. */
export interface ResolvedRange {
  interval: Interval
  weekStartDay: 0 | 1
  timezone: string
  /** first instant read (inclusive) */
  from: Date
  /** last instant read (inclusive); `toMicro` carries the microseconds past the whole millisecond */
  to: Date
  toMicro: number
  /** start of each bucket */
  buckets: Date[]
}

const RELATIVE = /^-?(\d+)?([hdwmqyMs])(Start|End)?$/

interface Relative {
  unit: Unit
  count: number
  position?: 'Start' | 'End'
  isHours: boolean
}

function parseRelative(value: string): Relative | undefined {
  const match = RELATIVE.exec(value)
  if (!match) return undefined
  const n = match[1] === undefined ? 0 : Number(match[1])
  const letter = match[2]
  const unit: Unit =
    letter === 'h'
      ? 'hour'
      : letter === 'd'
        ? 'day'
        : letter === 'w' || letter === 'q'
          ? 'week'
          : letter === 'm'
            ? 'month'
            : letter === 'y'
              ? 'year'
              : letter === 'M'
                ? 'minute'
                : 'second'
  return {
    unit,
    count: letter === 'q' ? 13 * n : n,
    position: match[3] as Relative['position'],
    isHours: letter === 'h',
  }
}

const ABSOLUTE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/

/** An absolute date as a local date in `timeZone` (naive values are read in it). */
function parseAbsolute(value: string, timeZone: string, attr: string): Date {
  const m = ABSOLUTE.exec(value)
  if (!m) throw new ValidationError(`Invalid date: ${JSON.stringify(value)}.`, attr)
  const ms = m[7] ? Math.floor(Number(m[7].padEnd(6, '0')) / 1000) : 0
  const naive = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0), ms))
  if (Number.isNaN(naive.getTime()) || naive.getUTCDate() !== +m[3]) {
    throw new ValidationError(`Invalid date: ${JSON.stringify(value)}.`, attr)
  }
  if (!m[8]) return naive
  const sign = m[8] === 'Z' ? 0 : m[8][0] === '-' ? -1 : 1
  const digits = m[8].replace(/[^0-9]/g, '')
  const offsetMs = m[8] === 'Z' ? 0 : sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000
  return toLocal(new Date(naive.getTime() - offsetMs), timeZone)
}

/** `now` moved back by a relative date, with its Start/End position (PostHog's `relative_date_parse`). */
function applyRelative(now: Date, rel: Relative, weekStartDay: 0 | 1): Date {
  let d = addLocal(now, rel.unit, -rel.count)
  if (rel.position === 'Start') d = startOfLocal(d, rel.unit === 'second' ? 'second' : rel.unit, weekStartDay)
  if (rel.position === 'End') d = new Date(addLocal(startOfLocal(d, rel.unit, weekStartDay), rel.unit, 1).getTime() - 1)
  return d
}

const truncateToDay = (d: Date) => startOfLocal(d, 'day')

/**
 * Resolves `dateRange` for `interval`. `earliest` gives the project's first event time (for `all`); `now` is the
 * service's clock.
 */
export function resolveDateRange(
  range: DateRangeInput | undefined | null,
  interval: Interval,
  team: InsightTeam,
  now: Date,
  earliest?: Date,
): ResolvedRange {
  const tz = team.timezone
  const localNow = toLocal(now, tz)
  const explicit = range?.explicitDate === true
  const hourly = interval === 'hour' || interval === 'minute'

  // date_to
  let to = localNow
  let toIsRelative = true
  if (range?.date_to) {
    const rel = parseRelative(range.date_to)
    if (rel) to = applyRelative(localNow, rel, team.weekStartDay)
    else {
      to = parseAbsolute(range.date_to, tz, 'dateRange__date_to')
      toIsRelative = false
    }
  }
  let toMicro = to.getUTCMilliseconds() * 1000
  const endOf = (unit: Unit) => {
    to = new Date(addLocal(startOfLocal(to, unit), unit, 1).getTime() - 1)
    toMicro = 999_999
  }
  if (!explicit) {
    if (!hourly) endOf('day')
    else if (toIsRelative) endOf(interval === 'hour' ? 'hour' : 'minute')
  }

  // date_from
  let from: Date
  let fromIsHours = false
  let fromIsRelative = false
  if (range?.date_from === 'all') {
    from = earliest ? toLocal(earliest, tz) : truncateToDay(addLocal(localNow, 'day', -7))
  } else if (range?.date_from) {
    const rel = parseRelative(range.date_from)
    if (rel) {
      fromIsRelative = true
      fromIsHours = rel.isHours
      from = applyRelative(localNow, rel, team.weekStartDay)
      // PostHog truncates relative starts to the day (the hour for hours), except for minute graphs
      if (interval !== 'minute') from = startOfLocal(from, rel.isHours ? 'hour' : 'day')
    } else {
      from = parseAbsolute(range.date_from, tz, 'dateRange__date_from')
    }
  } else {
    from = truncateToDay(addLocal(localNow, 'day', -7))
  }

  // The range read starts at the start of the first bucket, unless the caller asked for exact times, or the
  // graph is hourly, or an hours-relative start is shown by day.
  const useStartOfInterval = !explicit && !(fromIsRelative && (hourly || (interval === 'day' && fromIsHours)))
  const firstBucket = startOfLocal(from, interval, team.weekStartDay)
  if (useStartOfInterval) from = interval === 'week' ? truncateToDay(from) : firstBucket

  return {
    interval,
    weekStartDay: team.weekStartDay,
    timezone: tz,
    from,
    to,
    toMicro,
    buckets: bucketsOf(firstBucket, to, interval),
  }
}

function bucketsOf(first: Date, to: Date, interval: Interval): Date[] {
  const buckets: Date[] = []
  for (let b = first; b.getTime() <= to.getTime(); b = addLocal(first, interval, buckets.length)) {
    buckets.push(b)
    if (buckets.length > MAX_INTERVALS) {
      throw new ValidationError(
        `The interval "${interval}" is too fine for this date range: it would need more than ${MAX_INTERVALS} points. Choose a longer interval or a shorter date range.`,
        'interval',
      )
    }
  }
  return buckets
}

/** The previous period of a range (`compareFilter.compare` without `compare_to`): as long, right before it. */
export function previousPeriod(range: ResolvedRange): ResolvedRange {
  const diff = range.to.getTime() - range.from.getTime()
  let from = new Date(range.from.getTime() - diff)
  from =
    range.interval === 'hour' || range.interval === 'minute'
      ? new Date(from.getTime() - (from.getTime() % 60_000))
      : truncateToDay(from)
  const to = new Date(from.getTime() + diff)
  const first = startOfLocal(from, range.interval, range.weekStartDay)
  return { ...range, from, to, buckets: bucketsOf(first, to, range.interval) }
}

/** The range moved back by a relative amount (`compareFilter.compare_to`, e.g. `-1y`, `-14d`). */
export function shiftedRange(range: ResolvedRange, compareTo: string): ResolvedRange {
  const rel = parseRelative(compareTo)
  if (!rel || rel.position) {
    throw new ValidationError(`Invalid compare_to: ${JSON.stringify(compareTo)}.`, 'compareFilter__compare_to')
  }
  const shift = (d: Date) => addLocal(d, rel.unit, -rel.count)
  const from = shift(range.from)
  const to = shift(range.to)
  const first = startOfLocal(from, range.interval, range.weekStartDay)
  return { ...range, from, to, buckets: bucketsOf(first, to, range.interval) }
}

/** HogQL DateTime64 constants of the bounds (read in the project's timezone by the compiler). */
export function rangeBoundsHogQL(range: ResolvedRange): { from: string; to: string } {
  return {
    from: `toDateTime64('${localDateTimeMicro(range.from)}', 6)`,
    to: `toDateTime64('${localDateTimeMicro(range.to, range.toMicro)}', 6)`,
  }
}

/** The start of the bucket a timestamp falls in, as the engine computes it (a Date, or a DateTime by hour/minute). */
export function bucketStartHogQL(interval: Interval, weekStartDay: 0 | 1, field = 'timestamp'): string {
  switch (interval) {
    case 'minute':
      return `toStartOfMinute(${field})`
    case 'hour':
      return `toStartOfHour(${field})`
    case 'day':
      return `toDate(${field})`
    case 'week':
      return `toStartOfWeek(${field}, ${weekStartDay === 1 ? 3 : 0})`
    case 'month':
      return `toStartOfMonth(${field})`
  }
}

/** The bucket key the engine gives a timestamp: the same text as `bucketKey` of the bucket's start. */
export const bucketKeyHogQL = (interval: Interval, weekStartDay: 0 | 1, field = 'timestamp') =>
  `toString(${bucketStartHogQL(interval, weekStartDay, field)})`

/** One interval as a HogQL interval (`toIntervalDay(1)`), to step bucket starts. */
export const intervalHogQL = (interval: Interval, n = 1) =>
  `toInterval${interval[0].toUpperCase()}${interval.slice(1)}(${n})`

/** A local date as a HogQL DateTime64 constant (read in the project's timezone by the compiler). */
export const localInstantHogQL = (local: Date) => `toDateTime64('${localDateTimeMicro(local)}', 6)`

/** `days` entries: `YYYY-MM-DD`, or `YYYY-MM-DD hh:mm:ss` for hours and minutes. */
export function bucketKey(bucket: Date, interval: Interval): string {
  return interval === 'hour' || interval === 'minute' ? localDateTime(bucket) : localDay(bucket)
}

const dayMonth = (d: Date) => `${d.getUTCDate()}-${MONTHS[d.getUTCMonth()]}`
const dayMonthYear = (d: Date) => `${dayMonth(d)}-${d.getUTCFullYear()}`

/** PostHog's label of a bucket (`format_label_date`): weeks as a range clipped to the date range. */
export function bucketLabel(bucket: Date, range: ResolvedRange): string {
  const pad = (n: number) => String(n).padStart(2, '0')
  switch (range.interval) {
    case 'day':
      return dayMonthYear(bucket)
    case 'minute':
    case 'hour':
      return `${dayMonth(bucket)} ${pad(bucket.getUTCHours())}:${pad(bucket.getUTCMinutes())}`
    case 'month':
      return `${MONTHS[bucket.getUTCMonth()]} ${bucket.getUTCFullYear()}`
    case 'week': {
      const fromDay = truncateToDay(range.from)
      const toDay = truncateToDay(range.to)
      const start = new Date(Math.max(bucket.getTime(), fromDay.getTime()))
      let end = new Date(Math.min(addLocal(bucket, 'day', 6).getTime(), toDay.getTime()))
      if (end.getTime() < start.getTime()) end = start
      if (start.getTime() === end.getTime()) return dayMonthYear(start)
      if (start.getUTCFullYear() !== end.getUTCFullYear()) return `${dayMonthYear(start)} – ${dayMonthYear(end)}`
      if (start.getUTCMonth() !== end.getUTCMonth()) return `${dayMonth(start)} – ${dayMonth(end)}`
      return `${start.getUTCDate()}–${end.getUTCDate()} ${MONTHS[end.getUTCMonth()]}`
    }
  }
}

/** `resolved_date_range` of the response: the bounds as ISO instants with the project's offset. */
export function resolvedDateRange(range: ResolvedRange): { date_from: string; date_to: string } {
  const iso = (local: Date) => fromLocal(local, range.timezone).toISOString()
  return { date_from: iso(range.from), date_to: iso(range.to) }
}

/** `interval` of a node, validated. */
export function intervalOf(value: unknown, attr = 'interval'): Interval {
  if (value === undefined || value === null) return 'day'
  if (typeof value !== 'string' || !(INTERVALS as string[]).includes(value)) {
    throw new ValidationError(
      `Input should be ${INTERVALS.map((i) => `'${i}'`).join(', ')}; got ${JSON.stringify(value)}.`,
      attr,
      'invalid_choice',
    )
  }
  return value as Interval
}
