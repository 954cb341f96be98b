/**
 * Reading an import file as a stream of records with flat memory: plain, gzip or zstd (by its magic bytes), JSON
 * lines or CSV (quoted fields may span lines), each record with the line it starts on, the line it ends on and
 * the byte offset where it starts (for resuming a plain file without reading it again).
 */
import fs from 'node:fs'
import { type Readable, Transform } from 'node:stream'
import zlib from 'node:zlib'
import { Decompress } from 'fzstd'

/** An import file's format; Parquet files are read as JSON lines by the engine (parquet.ts). */
export type Format = 'jsonl' | 'csv' | 'parquet'

export interface SourceRecord {
  /** 1-based line the record starts on. */
  line: number
  /** Line it ends on (a CSV record with a quoted newline spans several). */
  endLine: number
  /** Byte offset of the record's start in the decompressed stream. */
  offset: number
  /** The record's text, for the rejects file. */
  text: string
  /** The parsed record, or why it could not be parsed. */
  value?: unknown
  error?: string
}

export interface ReadProgress {
  /** Bytes of the file itself read so far (compressed, for a compressed file). */
  fileBytes: number
  fileSize: number
}

export class UnsupportedInput extends Error {}

/** What the first bytes say the file is. */
export function compressionOf(file: string): 'none' | 'gzip' | 'zstd' {
  const fd = fs.openSync(file, 'r')
  try {
    const head = Buffer.alloc(4)
    const n = fs.readSync(fd, head, 0, 4, 0)
    if (n >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'gzip'
    if (n >= 4 && head.readUInt32LE(0) === 0xfd2fb528) return 'zstd'
    return 'none'
  } finally {
    fs.closeSync(fd)
  }
}

/** The decompressed byte stream from `start` (a decompressed offset; only plain files can start past 0). */
export function openDecompressed(file: string, progress: ReadProgress, start = 0): Readable {
  const kind = compressionOf(file)
  progress.fileSize = fs.statSync(file).size
  const raw = fs.createReadStream(file, { start: kind === 'none' ? start : 0, highWaterMark: 1 << 20 })
  progress.fileBytes = kind === 'none' ? start : 0
  raw.on('data', (chunk) => {
    progress.fileBytes += chunk.length
  })
  if (kind === 'none') return raw
  if (kind === 'gzip') return raw.pipe(zlib.createGunzip())
  return raw.pipe(zstdDecompressor())
}

/**
 * A zstd decompressing stream: Node's own where it has one (22.15 and later), else fzstd's streaming decoder
 * (pure JavaScript, no native build), holding only the frame's window in memory.
 */
export function zstdDecompressor(): Transform {
  const native = (zlib as unknown as { createZstdDecompress?: () => Transform }).createZstdDecompress
  if (native) return native()
  let decoder: Decompress | undefined
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      try {
        decoder?.push(chunk)
        done()
      } catch (err) {
        done(zstdError(err))
      }
    },
    flush(done) {
      try {
        decoder?.push(new Uint8Array(0), true)
        done()
      } catch (err) {
        done(zstdError(err))
      }
    },
  })
  decoder = new Decompress((data) => {
    stream.push(Buffer.from(data))
  })
  return stream
}

function zstdError(err: unknown): Error {
  return new UnsupportedInput(`the zstd data is damaged or cut short (${err instanceof Error ? err.message : err})`)
}

/**
 * The longest record read (a line, or a CSV record over several lines): more than one capture request may carry
 * (`/batch/` takes 20 MiB), so no event is refused for its size alone, and memory stays bounded whatever the file.
 */
export const MAX_RECORD_BYTES = 20 * 1024 * 1024
/** What the rejects file keeps of a record that was too long. */
const TOO_LONG_PREFIX = 200

export interface Line {
  line: number
  offset: number
  text: string
  /** The line was longer than MAX_RECORD_BYTES: `text` is its start only, the rest was skipped unread. */
  tooLong?: true
}

/** Lines of a byte stream with their start offsets; `\r\n` and `\n` both end a line. */
export async function* readLines(stream: Readable, firstLine = 1, startOffset = 0): AsyncGenerator<Line> {
  let line = firstLine
  let offset = startOffset
  let pending: Buffer[] = []
  let pendingBytes = 0
  /** The start of a line too long to keep, while the rest of it is skipped. */
  let skipping: Buffer | undefined
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let from = 0
    for (let nl = chunk.indexOf(10, from); nl !== -1; nl = chunk.indexOf(10, from)) {
      const piece = chunk.subarray(from, nl)
      const length = pendingBytes + piece.length + 1
      if (skipping || length - 1 > MAX_RECORD_BYTES) {
        const start = skipping ?? Buffer.concat([...pending, piece.subarray(0, TOO_LONG_PREFIX)])
        yield { line, offset, text: start.toString('utf8', 0, Math.min(start.length, TOO_LONG_PREFIX)), tooLong: true }
        skipping = undefined
      } else {
        const bytes = pendingBytes > 0 ? Buffer.concat([...pending, piece]) : piece
        const end = bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.length - 1 : bytes.length
        yield { line, offset, text: bytes.toString('utf8', 0, end) }
      }
      line++
      offset += length
      pending = []
      pendingBytes = 0
      from = nl + 1
    }
    if (from < chunk.length) {
      if (!skipping) pending.push(chunk.subarray(from))
      pendingBytes += chunk.length - from
      if (!skipping && pendingBytes > MAX_RECORD_BYTES) {
        skipping = Buffer.concat(pending).subarray(0, TOO_LONG_PREFIX)
        pending = []
      }
    }
  }
  if (pendingBytes > 0) {
    if (skipping) {
      yield { line, offset, text: skipping.toString('utf8'), tooLong: true }
    } else {
      const bytes = Buffer.concat(pending)
      const end = bytes[bytes.length - 1] === 13 ? bytes.length - 1 : bytes.length
      yield { line, offset, text: bytes.toString('utf8', 0, end) }
    }
  }
}

const tooLong = `longer than ${MAX_RECORD_BYTES / 1024 / 1024} MiB, more than one capture request takes (not read)`

/**
 * One CSV record read a line at a time (RFC 4180: a quoted field may hold commas, doubled quotes and line
 * breaks), in time linear in the record's length however many lines it spans.
 */
export class CsvRecord {
  private fields: string[] = []
  private field = ''
  private quoted = false
  private open = false

  /** The next line: the record's fields once it is complete, else null (a quoted field goes on). */
  feed(text: string): string[] | null {
    if (this.open) this.field += '\n'
    let i = 0
    while (i < text.length) {
      const c = text[i]
      if (this.quoted) {
        if (c === '"') {
          if (text[i + 1] === '"') {
            this.field += '"'
            i += 2
            continue
          }
          this.quoted = false
        } else {
          this.field += c
        }
      } else if (c === '"' && this.field === '') {
        this.quoted = true
      } else if (c === ',') {
        this.fields.push(this.field)
        this.field = ''
      } else {
        this.field += c
      }
      i++
    }
    if (this.quoted) {
      this.open = true
      return null
    }
    this.fields.push(this.field)
    const fields = this.fields
    this.reset()
    return fields
  }

  reset() {
    this.fields = []
    this.field = ''
    this.quoted = false
    this.open = false
  }
}

/**
 * `--map COL=FIELD` turns a column (or a JSON line's top-level key) into a field by dot path:
 * `ts=timestamp`, `user=distinct_id`, `plan=properties.plan`, `email=$set.email`; `COL=-` drops it.
 */
export function parseMap(specs: string[]): Map<string, string[] | null> {
  const map = new Map<string, string[] | null>()
  for (const spec of specs) {
    const eq = spec.indexOf('=')
    if (eq <= 0 || eq === spec.length - 1) throw new Error(`--map takes COLUMN=FIELD, got "${spec}"`)
    const target = spec.slice(eq + 1)
    map.set(spec.slice(0, eq), target === '-' ? null : target.split('.'))
  }
  return map
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown) {
  let node = target
  for (const key of path.slice(0, -1)) {
    const next = node[key]
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {}
    node = node[key] as Record<string, unknown>
  }
  node[path[path.length - 1]] = value
}

/** Applies `--map` to one record; `unmapped` says where a column without a mapping goes. */
export function applyMap(
  entries: Iterable<[string, unknown]>,
  map: Map<string, string[] | null>,
  unmapped: (column: string) => string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [column, value] of entries) {
    const path = map.has(column) ? map.get(column) : unmapped(column)
    if (path) setPath(out, path, value)
  }
  return out
}

/** Columns of PostHog's own event shape; in a CSV of captured events, any other column is an event property. */
const CAPTURED_FIELDS = new Set([
  'uuid',
  'event',
  'distinct_id',
  'timestamp',
  'properties',
  'elements_chain',
  'set',
  'set_once',
  '$set',
  '$set_once',
])

/** Records of a file, parsed per its format, after `--map`. */
export async function* readRecords(
  lines: AsyncIterable<Line>,
  options: { format: 'jsonl' | 'csv'; map: Map<string, string[] | null>; capturedCsv: boolean; header?: string[] },
  onHeader: (header: string[]) => void,
): AsyncGenerator<SourceRecord> {
  if (options.format === 'jsonl') {
    const mapped = options.map.size > 0
    for await (const { line, offset, text, tooLong: long } of lines) {
      if (long) {
        yield { line, endLine: line, offset, text, error: tooLong }
        continue
      }
      if (text.trim() === '') continue
      let value: unknown
      try {
        value = JSON.parse(text)
      } catch (err) {
        yield { line, endLine: line, offset, text, error: `not valid JSON: ${(err as Error).message}` }
        continue
      }
      if (mapped && typeof value === 'object' && value !== null && !Array.isArray(value)) {
        value = applyMap(Object.entries(value), options.map, (column) => [column])
      }
      yield { line, endLine: line, offset, text, value }
    }
    return
  }
  let header = options.header
  let open: { line: number; offset: number; text: string } | undefined
  const unmapped = (column: string) =>
    options.capturedCsv && !CAPTURED_FIELDS.has(column) ? ['properties', column] : [column]
  const record = new CsvRecord()
  for await (const { line, offset, text, tooLong: long } of lines) {
    const current = open
      ? { line: open.line, offset: open.offset, text: `${open.text}\n${text}` }
      : { line, offset, text }
    if (long || current.text.length > MAX_RECORD_BYTES) {
      // A line too long, or a quoted field still open after that many bytes (a quote never closed): refused,
      // and reading goes on at the next line rather than joining the rest of the file into one record.
      open = undefined
      record.reset()
      yield {
        line: current.line,
        endLine: line,
        offset: current.offset,
        text: current.text.slice(0, TOO_LONG_PREFIX),
        error: long ? tooLong : `${tooLong.replace(' (not read)', '')} (a quoted field that is never closed?)`,
      }
      continue
    }
    const fields = record.feed(text)
    if (fields === null) {
      open = current
      continue
    }
    open = undefined
    if (!header) {
      header = fields.map((f) => f.trim())
      onHeader(header)
      continue
    }
    if (current.text.trim() === '') continue
    if (fields.length !== header.length) {
      yield {
        line: current.line,
        endLine: line,
        offset: current.offset,
        text: current.text,
        error: `has ${fields.length} fields where the header has ${header.length}`,
      }
      continue
    }
    const cells = header.map((column, i): [string, unknown] => [column, fields[i]])
    yield {
      line: current.line,
      endLine: line,
      offset: current.offset,
      text: current.text,
      value: applyMap(
        cells.filter(([, v]) => v !== ''),
        options.map,
        unmapped,
      ),
    }
  }
  if (open) {
    yield {
      line: open.line,
      endLine: open.line,
      offset: open.offset,
      text: open.text,
      error: 'a quoted field is never closed',
    }
  }
}
