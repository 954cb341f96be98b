/**
 * Parquet output for `burrow export`: the server's JSON lines become the columns of PostHog's batch-export
 * Parquet files (timestamps as UTC microseconds, `properties` as JSON text), written a row group at a time so
 * memory stays flat whatever the range. `burrow import` reads the file back (its Parquet input).
 */

import { Writable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { fileWriter, ParquetWriter } from 'hyparquet-writer'

type Kind = 'events' | 'persons'
type ColumnType = 'string' | 'json' | 'micros' | 'int64' | 'boolean'

const COLUMNS: Record<Kind, [string, ColumnType][]> = {
  events: [
    ['uuid', 'string'],
    ['event', 'string'],
    ['distinct_id', 'string'],
    ['timestamp', 'micros'],
    ['created_at', 'micros'],
    ['person_id', 'string'],
    ['elements_chain', 'string'],
    ['properties', 'json'],
  ],
  persons: [
    ['team_id', 'int64'],
    ['distinct_id', 'string'],
    ['person_id', 'string'],
    ['person_version', 'int64'],
    ['created_at', 'micros'],
    ['is_identified', 'boolean'],
    ['properties', 'json'],
  ],
}

const SCHEMA_TYPES = {
  string: { type: 'BYTE_ARRAY', converted_type: 'UTF8' },
  json: { type: 'BYTE_ARRAY', converted_type: 'UTF8' },
  micros: { type: 'INT64', converted_type: 'TIMESTAMP_MICROS' },
  int64: { type: 'INT64' },
  boolean: { type: 'BOOLEAN' },
} as const

/** Rows per row group: ~1 KB events make groups of tens of MB, the size Parquet readers like. */
const ROW_GROUP = 50_000
/** A line longer than this is not one the server writes. */
const MAX_LINE_BYTES = 64 * 1024 * 1024

/** An ISO time with up to microseconds (`2026-11-20T10:00:00.123456Z`) as microseconds since the epoch. */
export function isoToMicros(iso: string): bigint {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/.exec(iso)
  if (!m) throw new Error(`not an ISO UTC time: ${JSON.stringify(iso)}`)
  const seconds = Date.parse(`${m[1]}Z`)
  if (Number.isNaN(seconds)) throw new Error(`not an ISO UTC time: ${JSON.stringify(iso)}`)
  const fraction = (m[2] ?? '').padEnd(6, '0').slice(0, 6)
  return BigInt(seconds) * 1000n + BigInt(fraction)
}

function cell(type: ColumnType, value: unknown): unknown {
  if (value === null || value === undefined) return null
  switch (type) {
    case 'string':
      return String(value)
    case 'json':
      return typeof value === 'string' ? value : JSON.stringify(value)
    case 'micros':
      return isoToMicros(String(value))
    case 'int64':
      return BigInt(value as number)
    case 'boolean':
      return value === true || value === 'true'
  }
}

/**
 * A writable taking the export's JSON lines (as the server sends them, cut anywhere) and writing them to `file`
 * as Parquet; the file is whole once the stream has finished.
 */
export function parquetSink(file: string, kind: Kind): Writable {
  const columns = COLUMNS[kind]
  const writer = new ParquetWriter({
    writer: fileWriter(file),
    schema: [
      { name: 'root', num_children: columns.length },
      ...columns.map(([name, type]) => ({ name, repetition_type: 'OPTIONAL' as const, ...SCHEMA_TYPES[type] })),
    ],
    createdBy: 'burrow export',
  })
  let data: unknown[][] = columns.map(() => [])
  let rows = 0
  let rest = ''
  // A character split between two chunks is joined before the lines are cut.
  const decoder = new StringDecoder('utf8')

  const flush = () => {
    if (rows === 0) return
    writer.write({
      columnData: columns.map(([name], i) => ({ name, data: data[i] as never })),
      rowGroupSize: rows,
    })
    data = columns.map(() => [])
    rows = 0
  }
  const take = (line: string) => {
    if (line.length === 0) return
    const record = JSON.parse(line) as Record<string, unknown>
    columns.forEach(([name, type], i) => {
      data[i].push(cell(type, record[name]))
    })
    if (++rows >= ROW_GROUP) flush()
  }

  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      try {
        const text = rest + decoder.write(chunk)
        const lines = text.split('\n')
        rest = lines.pop() ?? ''
        if (rest.length > MAX_LINE_BYTES) throw new Error('a line of the export is longer than 64 MiB')
        for (const line of lines) take(line)
        done()
      } catch (err) {
        done(err as Error)
      }
    },
    final(done) {
      try {
        take(rest + decoder.end())
        rest = ''
        flush()
        writer.finish()
        done()
      } catch (err) {
        done(err as Error)
      }
    },
  })
}
