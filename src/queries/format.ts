/**
 * Result cells as PostHog shows them: datetimes as ISO strings in the project's timezone with their offset
 * (`2024-01-01T05:00:00-05:00`, `Z` for UTC). The engine returns them as UTC ISO text. Pure.
 */
import { toLocal } from './insights/time.js'

const pad = (n: number) => String(n).padStart(2, '0')

/** `2024-01-01T10:00:00.123000Z` → the same instant written in `timeZone` with its UTC offset. */
export function toZonedIso(utcIso: string, timeZone: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(\.\d+)?Z$/.exec(utcIso)
  if (!match) return utcIso
  const fraction = match[3] && /[1-9]/.test(match[3]) ? match[3] : ''
  if (timeZone === 'UTC' || timeZone === 'Etc/UTC') return `${match[1]}T${match[2]}${fraction}Z`
  const instant = new Date(`${match[1]}T${match[2]}Z`)
  if (Number.isNaN(instant.getTime())) return utcIso
  const local = toLocal(instant, timeZone)
  const offsetMinutes = Math.round((local.getTime() - instant.getTime()) / 60_000)
  const sign = offsetMinutes < 0 ? '-' : '+'
  const abs = Math.abs(offsetMinutes)
  const offset = `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  // the local reading is held in the UTC fields: its ISO text up to the seconds is the wall clock
  return `${local.toISOString().slice(0, 19)}${fraction}${offset}`
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

/** A cell as text for a reader: strings as they are, anything else as JSON. */
const cellText = (v: unknown) => (typeof v === 'string' ? v : v === null || v === undefined ? '' : JSON.stringify(v))

/**
 * A HogQL answer as text for a language model (PostHog's `formatted_results` for MCP clients): the column names,
 * then one line per row, cells separated by `|`. Undefined when the answer has no rows and columns to show.
 */
export function formatResultsForLLM(body: Record<string, unknown>): string | undefined {
  const { columns, results } = body
  if (!Array.isArray(columns) || !Array.isArray(results)) return undefined
  const lines = [columns.map(cellText).join('|')]
  for (const row of results) lines.push(Array.isArray(row) ? row.map(cellText).join('|') : cellText(row))
  return lines.join('\n')
}
