/**
 * Wall-clock arithmetic in a project's timezone. A "local" date is a `Date` whose UTC fields hold the wall-clock
 * reading in that timezone (so `getUTCDate()` is the local day); `toLocal` / `fromLocal` convert to and from real
 * instants. Pure.
 */

const formatters = new Map<string, Intl.DateTimeFormat>()

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
    formatters.set(timeZone, f)
  }
  return f
}

/** The wall-clock reading of `instant` in `timeZone`, as a local date. */
export function toLocal(instant: Date, timeZone: string): Date {
  const parts: Record<string, string> = {}
  for (const p of formatterOf(timeZone).formatToParts(instant)) parts[p.type] = p.value
  const ms = instant.getTime() - Math.floor(instant.getTime() / 1000) * 1000
  return new Date(
    Date.UTC(+parts.year, +parts.month - 1, +parts.day, +parts.hour % 24, +parts.minute, +parts.second, ms),
  )
}

/** The instant at which the wall clock of `timeZone` reads `local` (the later one in a repeated hour). */
export function fromLocal(local: Date, timeZone: string): Date {
  const t = local.getTime()
  const offsetAt = (instant: number) => toLocal(new Date(instant), timeZone).getTime() - instant
  let guess = t - offsetAt(t)
  guess = t - offsetAt(guess)
  return new Date(guess)
}

export type Unit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year'

/** `local` moved by `n` units of wall-clock time (months clamp to the month's last day, like dateutil). */
export function addLocal(local: Date, unit: Unit, n: number): Date {
  const d = new Date(local.getTime())
  switch (unit) {
    case 'second':
      return new Date(d.getTime() + n * 1000)
    case 'minute':
      return new Date(d.getTime() + n * 60_000)
    case 'hour':
      return new Date(d.getTime() + n * 3_600_000)
    case 'day':
      d.setUTCDate(d.getUTCDate() + n)
      return d
    case 'week':
      d.setUTCDate(d.getUTCDate() + 7 * n)
      return d
    case 'month':
    case 'year': {
      const months = unit === 'year' ? 12 * n : n
      const day = d.getUTCDate()
      d.setUTCDate(1)
      d.setUTCMonth(d.getUTCMonth() + months)
      const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate()
      d.setUTCDate(Math.min(day, last))
      return d
    }
  }
}

/** The start of the unit `local` falls in; weeks start on Sunday (0) or Monday (1). */
export function startOfLocal(local: Date, unit: Unit, weekStartDay: 0 | 1 = 0): Date {
  const y = local.getUTCFullYear()
  const m = local.getUTCMonth()
  const day = local.getUTCDate()
  switch (unit) {
    case 'second':
      return new Date(Math.floor(local.getTime() / 1000) * 1000)
    case 'minute':
      return new Date(Date.UTC(y, m, day, local.getUTCHours(), local.getUTCMinutes()))
    case 'hour':
      return new Date(Date.UTC(y, m, day, local.getUTCHours()))
    case 'day':
      return new Date(Date.UTC(y, m, day))
    case 'week': {
      const back = (local.getUTCDay() - weekStartDay + 7) % 7
      return new Date(Date.UTC(y, m, day - back))
    }
    case 'month':
      return new Date(Date.UTC(y, m, 1))
    case 'year':
      return new Date(Date.UTC(y, 0, 1))
  }
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0')

/** `YYYY-MM-DD` of a local date. */
export const localDay = (local: Date) =>
  `${local.getUTCFullYear()}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}`

/** `YYYY-MM-DD hh:mm:ss` of a local date. */
export const localDateTime = (local: Date) =>
  `${localDay(local)} ${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}`

/** `YYYY-MM-DD hh:mm:ss.ffffff` of a local date (microseconds are whole when they came from 999 ms + 999 µs). */
export const localDateTimeMicro = (local: Date, micro = local.getUTCMilliseconds() * 1000) =>
  `${localDateTime(local)}.${pad(micro, 6)}`

export const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
