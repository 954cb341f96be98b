// A static cohort's CSV upload read as PostHog reads it (posthog/api/cohort.py, CSVConfig): one column of ids,
// optionally under a `person_id` or `email` header; or several columns, one of them headed `person_id`,
// `distinct_id` or `email`. Pure.
import { ValidationError } from '../http/errors.js'

export type CsvIdType = 'distinct_id' | 'person_id' | 'email'

const PERSON_ID_HEADERS = new Set(['person_id', 'person-id', 'person .id'])
const DISTINCT_ID_HEADERS = new Set(['distinct_id', 'distinct-id'])
const EMAIL_HEADERS = new Set(['email', 'e-mail'])

const EMPTY_FILE = 'CSV file is empty. Please upload a CSV file with at least one row of data.'
const NO_VALID_IDS =
  'CSV file contains no valid person IDs, distinct IDs, or email addresses. Please ensure your file has data rows ' +
  'with person IDs, distinct IDs, or email addresses.'
const missingIdColumn = (columns: string) =>
  "Multi-column CSV must contain at least one column with a supported ID header: 'person_id', 'Person .id' " +
  `(PostHog export format), 'distinct_id', 'distinct-id', or 'email'. Found columns: ${columns}`

/** One line's cells (RFC 4180 quoting within the line; an empty line has no cells, as Python's csv.reader). */
export function csvCells(line: string): string[] {
  if (line === '') return []
  const cells: string[] = []
  let cell = ''
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const c = line[i]
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cell += '"'
        i++
      } else if (c === '"') quoted = false
      else cell += c
    } else if (c === '"' && cell === '') quoted = true
    else if (c === ',') {
      cells.push(cell)
      cell = ''
    } else cell += c
  }
  cells.push(cell)
  return cells
}

const fail = (detail: string): never => {
  throw new ValidationError(detail, 'csv')
}

function idColumn(headers: string[]): { index: number; type: CsvIdType } | undefined {
  const lower = headers.map((h) => h.trim().toLowerCase())
  for (const [names, type] of [
    [PERSON_ID_HEADERS, 'person_id'],
    [DISTINCT_ID_HEADERS, 'distinct_id'],
    [EMAIL_HEADERS, 'email'],
  ] as const) {
    const index = lower.findIndex((h) => names.has(h))
    if (index >= 0) return { index, type }
  }
  return undefined
}

/** The ids a CSV names and what they are; PostHog's errors for an empty file, a missing id column or no ids. */
export function parseCohortCsv(text: string): { ids: string[]; type: CsvIdType } {
  const rows = text.split(/\r\n|\n|\r/).map(csvCells)
  const first = rows.findIndex((row) => row.length > 0)
  if (first < 0) return fail(EMPTY_FILE)
  const header = rows[first]
  const rest = rows.slice(first + 1)
  let ids: string[]
  let type: CsvIdType
  if (header.filter((cell) => cell.trim() !== '').length <= 1) {
    const name = header[0].trim().toLowerCase()
    type = PERSON_ID_HEADERS.has(name) ? 'person_id' : EMAIL_HEADERS.has(name) ? 'email' : 'distinct_id'
    // a single column without a person_id or email header is all ids, its first row included
    const body = type === 'distinct_id' ? [header, ...rest] : rest
    ids = body.filter((row) => row.length > 0).map((row) => row[0].trim())
  } else {
    const column = idColumn(header)
    if (!column) {
      const found = header.filter((cell) => cell.trim() !== '')
      return fail(missingIdColumn(found.length ? found.join(', ') : 'none'))
    }
    type = column.type
    ids = rest.filter((row) => row.length > column.index).map((row) => row[column.index].trim())
  }
  ids = ids.filter((id) => id !== '')
  if (ids.length === 0) fail(NO_VALID_IDS)
  return { ids, type }
}
