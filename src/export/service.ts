/**
 * Export of a project's events for a time range, in pages that follow (timestamp, uuid), so that a large range
 * streams in bounded memory and no event is read twice or skipped between pages. Every read is HogQL, so the
 * compiler confines it to the project. Lines are PostHog's batch-export event shape, which `burrow import`
 * reads back (`--content captured`).
 */
import crypto from 'node:crypto'
import { MAX_SELECT_RETURNED_ROWS } from '../hogql/index.js'
import { ValidationError } from '../http/errors.js'
import { literal } from '../queries/filters.js'
import type { HogQLExecutor, RunContext } from '../queries/runner.js'
import type { ExportStore } from './store.js'

export const EXPORT_FORMATS = ['jsonl', 'csv'] as const
export type ExportFormat = (typeof EXPORT_FORMATS)[number]

/** The columns of a CSV export, in order (`properties` as JSON text). */
export const CSV_COLUMNS = [
  'uuid',
  'event',
  'distinct_id',
  'timestamp',
  'created_at',
  'person_id',
  'elements_chain',
  'properties',
] as const

const PAGE = 5000
/** Histograms of the range are taken this much at a time (a month of hours stays far below the row cap). */
const SPAN_MS = 31 * 86_400_000

export interface ExportTeam {
  id: number
  timezone: string
}

export interface ExportRange {
  after: string
  before: string
}

/** Checks an export's time range: two dates, the first before the second. */
export function exportRange(after: string | undefined, before: string | undefined): ExportRange {
  const parse = (value: string | undefined, attr: string) => {
    if (!value) throw new ValidationError('This field is required.', attr, 'required')
    const ms = Date.parse(value)
    if (Number.isNaN(ms)) throw new ValidationError(`"${value}" is not a valid date.`, attr)
    return new Date(ms).toISOString()
  }
  const range = { after: parse(after, 'after'), before: parse(before, 'before') }
  if (range.after >= range.before) throw new ValidationError('after must be earlier than before.', 'after')
  return range
}

// DateTime64 literal for HogQL from an ISO time.
const hogqlTime = (iso: string) => `toDateTime64(${literal(iso.replace('T', ' ').replace('Z', ''))}, 6, 'UTC')`

/** A CSV cell (RFC 4180): quoted when it holds a comma, a quote or a line break. */
export function csvCell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value
}

/** The columns of a persons export, in order: PostHog's persons batch-export model, one row per distinct id. */
export const PERSON_COLUMNS = [
  'team_id',
  'distinct_id',
  'person_id',
  'person_version',
  'created_at',
  'is_identified',
  'properties',
] as const

export function createExportService(deps: { execute: HogQLExecutor; store: Pick<ExportStore, 'personPage'> }) {
  function context(team: ExportTeam, signal: AbortSignal): RunContext {
    return {
      team,
      engineId: `x${team.id}x${crypto.randomUUID().replace(/-/g, '')}`,
      signal,
      stats: { rowsRead: 0, bytesRead: 0, resultRows: 0 },
    }
  }

  const inRange = (range: ExportRange) =>
    `timestamp >= ${hogqlTime(range.after)} AND timestamp < ${hogqlTime(range.before)}`

  return {
    /** How many events the range holds now (for the client's progress; more may arrive while it runs). */
    async count(team: ExportTeam, range: ExportRange, signal: AbortSignal): Promise<number> {
      const res = await deps.execute(`SELECT count() FROM events WHERE ${inRange(range)}`, context(team, signal))
      return Number(res.rows[0]?.[0] ?? 0)
    },

    /** The range's events, one line each (with its newline), window after window, page after page. */
    async *lines(team: ExportTeam, range: ExportRange, format: ExportFormat, signal: AbortSignal) {
      if (format === 'csv') yield `${CSV_COLUMNS.join(',')}\n`
      for await (const window of windows(team, range, signal)) yield* pages(team, window, format, signal)
    },

    /** The project's persons created in the range, one line per distinct id, oldest first. */
    async *personLines(team: ExportTeam, range: ExportRange, format: ExportFormat, signal: AbortSignal) {
      if (format === 'csv') yield `${PERSON_COLUMNS.join(',')}\n`
      let cursor: { createdAt: string; id: string; distinctId: string } | undefined
      for (;;) {
        signal.throwIfAborted()
        const rows = await deps.store.personPage(team.id, range, cursor, PAGE)
        if (rows.length === 0) return
        let page = ''
        for (const r of rows) {
          const identified = r.is_identified === 1 || (r.is_identified as unknown) === true
          if (format === 'csv') {
            const cells = [String(team.id), r.distinct_id, r.id, String(r.version), r.created_at, String(identified)]
            page += `${[...cells, r.properties].map(csvCell).join(',')}\n`
          } else {
            page +=
              `{"team_id":${team.id},"distinct_id":${JSON.stringify(r.distinct_id)},"person_id":${JSON.stringify(r.id)},` +
              `"person_version":${Number(r.version)},"created_at":${JSON.stringify(r.created_at)},` +
              `"is_identified":${identified},"properties":${validObject(r.properties)}}\n`
          }
        }
        yield page
        if (rows.length < PAGE) return
        const last = rows[rows.length - 1]
        cursor = { createdAt: last.created_at, id: last.id, distinctId: last.distinct_id }
      }
    },
  }

  /**
   * The range cut into windows of about a page each, from histograms of the events per hour (and per minute
   * inside a busy hour): each page then sorts only its own window, where paging the whole range by
   * (timestamp, uuid) would sort everything after the cursor for every page. Histograms are taken a month at a
   * time, far below the engine's cap on returned rows.
   */
  async function* windows(team: ExportTeam, range: ExportRange, signal: AbortSignal): AsyncGenerator<ExportRange> {
    const end = Date.parse(range.before)
    for (let from = Date.parse(range.after); from < end; from += SPAN_MS) {
      const span = {
        after: new Date(from).toISOString(),
        before: new Date(Math.min(end, from + SPAN_MS)).toISOString(),
      }
      yield* grouped(team, span, 3600, signal)
    }
  }

  /** Windows that tile `span` exactly (an event inserted meanwhile in a gap still falls in one). */
  async function* grouped(
    team: ExportTeam,
    span: ExportRange,
    unit: number,
    signal: AbortSignal,
  ): AsyncGenerator<ExportRange> {
    const res = await deps.execute(
      `SELECT intDiv(toUnixTimestamp(timestamp), ${unit}) AS bucket, count() FROM events WHERE ${inRange(span)} ` +
        `GROUP BY bucket ORDER BY bucket LIMIT ${MAX_SELECT_RETURNED_ROWS}`,
      context(team, signal),
    )
    const clip = (ms: number) =>
      new Date(Math.min(Date.parse(span.before), Math.max(Date.parse(span.after), ms))).toISOString()
    let from = span.after
    let rows = 0
    for (const [bucket, count] of res.rows as [number, number][]) {
      const start = clip(Number(bucket) * unit * 1000)
      const stop = clip((Number(bucket) + 1) * unit * 1000)
      const n = Number(count)
      if (rows > 0 && rows + n > PAGE) {
        yield { after: from, before: start }
        from = start
        rows = 0
      }
      if (n > PAGE) {
        // A busy hour is cut by minutes; a busy minute is paged on its own.
        if (from < start) yield { after: from, before: start }
        if (unit > 60) yield* grouped(team, { after: start, before: stop }, 60, signal)
        else yield { after: start, before: stop }
        from = stop
      } else {
        rows += n
      }
    }
    if (from < span.before) yield { after: from, before: span.before }
  }

  /** One window's events by (timestamp, uuid), a page per query. */
  async function* pages(team: ExportTeam, range: ExportRange, format: ExportFormat, signal: AbortSignal) {
    let cursor: { timestamp: string; uuid: string } | undefined
    for (;;) {
      const after = cursor
        ? ` AND (timestamp > ${hogqlTime(cursor.timestamp)} OR (timestamp = ${hogqlTime(cursor.timestamp)} AND toString(uuid) > ${literal(cursor.uuid)}))`
        : ''
      const res = await deps.execute(
        `SELECT toString(uuid) AS id, event, distinct_id, formatDateTime(timestamp, '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC') AS ts, ` +
          `formatDateTime(created_at, '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC'), toString(person_id), elements_chain, properties ` +
          `FROM events WHERE ${inRange(range)}${after} ORDER BY timestamp, id LIMIT 1 BY id LIMIT ${PAGE}`,
        context(team, signal),
      )
      const rows = res.rows as string[][]
      if (rows.length === 0) return
      let page = ''
      for (const [uuid, event, distinctId, timestamp, createdAt, personId, elementsChain, properties] of rows) {
        if (format === 'csv') {
          page += `${[uuid, event, distinctId, timestamp, createdAt, personId, elementsChain, properties ?? '{}'].map(csvCell).join(',')}\n`
        } else {
          // The stored properties are already JSON text: spliced in as the object they are.
          page +=
            `{"uuid":${JSON.stringify(uuid)},"event":${JSON.stringify(event)},"distinct_id":${JSON.stringify(distinctId)},` +
            `"timestamp":${JSON.stringify(timestamp)},"created_at":${JSON.stringify(createdAt)},` +
            `"person_id":${JSON.stringify(personId)},"elements_chain":${JSON.stringify(elementsChain ?? '')},` +
            `"properties":${validObject(properties)}}\n`
        }
      }
      yield page
      if (rows.length < PAGE) return
      const last = rows[rows.length - 1]
      cursor = { timestamp: last[3], uuid: last[0] }
    }
  }
}

/** The stored properties text when it is a JSON object, `{}` otherwise (a line must stay valid JSON). */
function validObject(text: string | null | undefined): string {
  if (typeof text !== 'string' || !text.startsWith('{')) return '{}'
  try {
    JSON.parse(text)
    return text
  } catch {
    return '{}'
  }
}

export type ExportService = ReturnType<typeof createExportService>
