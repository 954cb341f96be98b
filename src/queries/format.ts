/**
 * Result cells as PostHog shows them: datetimes as ISO strings in the project's timezone with their offset
 * (`2024-01-01T05:00:00-05:00`, `Z` for UTC). The engine returns them as UTC ISO text. Pure.
 */

const formatters = new Map<string, Intl.DateTimeFormat>()

function partsIn(timeZone: string, date: Date) {
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
  const out: Record<string, string> = {}
  for (const p of f.formatToParts(date)) out[p.type] = p.value
  return out
}

const pad = (n: number) => String(n).padStart(2, '0')

/** `2024-01-01T10:00:00.123000Z` → the same instant written in `timeZone` with its UTC offset. */
export function toZonedIso(utcIso: string, timeZone: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(\.\d+)?Z$/.exec(utcIso)
  if (!match) return utcIso
  const fraction = match[3] && /[1-9]/.test(match[3]) ? match[3] : ''
  if (timeZone === 'UTC' || timeZone === 'Etc/UTC') return `${match[1]}T${match[2]}${fraction}Z`
  const instant = new Date(`${match[1]}T${match[2]}Z`)
  if (Number.isNaN(instant.getTime())) return utcIso
  const p = partsIn(timeZone, instant)
  const local = Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second)
  const offsetMinutes = Math.round((local - instant.getTime()) / 60_000)
  const sign = offsetMinutes < 0 ? '-' : '+'
  const abs = Math.abs(offsetMinutes)
  const offset = `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}${fraction}${offset}`
}

/** The timezone of a DateTime column type (`Nullable(DateTime64(6, 'Europe/Paris'))`), if it is one. */
export function dateTimeZoneOf(type: string): string | undefined {
  const match = /^(?:Nullable\()?DateTime(?:64)?\((?:\d+,\s*)?'([^']+)'\)\)?$/.exec(type)
  if (match) return match[1]
  return /^(?:Nullable\()?DateTime(?:64\(\d+\))?\)?$/.test(type) ? 'UTC' : undefined
}

/** Rewrites the datetime cells of `rows` in place, column by column, using each column's type. */
export function formatRows(rows: unknown[][], types: string[]): unknown[][] {
  const zones = types.map(dateTimeZoneOf)
  if (zones.every((z) => z === undefined)) return rows
  for (const row of rows) {
    for (let i = 0; i < row.length; i++) {
      const zone = zones[i]
      if (zone && typeof row[i] === 'string') row[i] = toZonedIso(row[i] as string, zone)
    }
  }
  return rows
}
