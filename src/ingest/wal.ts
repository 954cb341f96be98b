// The capture log: rows are appended here before a request is acknowledged, and moved into the event store in
// large inserts shortly after. A crash between the two leaves segment files that the next start replays.
import fs from 'node:fs'
import path from 'node:path'

export type WalFormat = 'TabSeparated' | 'JSONEachRow'

export interface WalRecord {
  table: string
  format: WalFormat
  payload: Buffer
}

/** A closed run of records, written to one file, to be inserted and then removed. */
export interface WalSegment {
  file: string
  records: WalRecord[]
}

const SEGMENT_NAME = /^(\d+)\.wal$/
const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * Record framing: a header line `<table>\t<format>\t<payload bytes>\n`, then the payload. A record cut short by
 * a crash is the tail of the last write, whose request never got its answer: it is dropped on replay.
 */
function frame(record: WalRecord): Buffer {
  return Buffer.from(`${record.table}\t${record.format}\t${record.payload.length}\n`)
}

/** The records as the runs of bytes a segment holds (header, payload, header, …), and their total length. */
function framed(records: readonly WalRecord[]): { parts: Buffer[]; bytes: number } {
  const parts: Buffer[] = []
  let bytes = 0
  for (const record of records) {
    const header = frame(record)
    parts.push(header, record.payload)
    bytes += header.length + record.payload.length
  }
  return { parts, bytes }
}

export function parseSegment(bytes: Buffer): WalRecord[] {
  const records: WalRecord[] = []
  let at = 0
  while (at < bytes.length) {
    const end = bytes.indexOf(0x0a, at)
    if (end < 0) break
    const [table, format, length] = bytes.subarray(at, end).toString().split('\t')
    const size = Number(length)
    const formatOk = format === 'TabSeparated' || format === 'JSONEachRow'
    if (!TABLE_NAME.test(table ?? '') || !formatOk || !Number.isSafeInteger(size) || size < 0) break
    if (end + 1 + size > bytes.length) break
    records.push({ table, format, payload: bytes.subarray(end + 1, end + 1 + size) })
    at = end + 1 + size
  }
  return records
}

/**
 * Appends up to this size are written on the request thread: a write into the page cache takes a few
 * microseconds there, while handing it to the thread pool cost ~25 µs of CPU (waking a pool thread and back) and
 * queued the write behind the engine's inserts, which run in the same pool. Larger ones go to the pool.
 */
const SYNC_WRITE_BYTES = 1 << 20

/** Writes the parts in order without joining them first (a write may take only some of them). */
async function writeAll(write: (parts: Buffer[]) => number | Promise<number>, parts: Buffer[]): Promise<void> {
  let rest = parts
  while (rest.length > 0) {
    const bytesWritten = await write(rest)
    if (bytesWritten === 0) throw new Error('capture log: the file takes no more bytes')
    rest = after(rest, bytesWritten)
  }
}

/** The same, blocking. */
function writeAllSync(fd: number, parts: Buffer[]): void {
  let rest = parts
  while (rest.length > 0) {
    const bytesWritten = fs.writevSync(fd, rest)
    if (bytesWritten === 0) throw new Error('capture log: the file takes no more bytes')
    rest = after(rest, bytesWritten)
  }
}

/** The parts left once the first `written` bytes of them are written. */
function after(parts: Buffer[], written: number): Buffer[] {
  let i = 0
  let left = written
  while (i < parts.length && left >= parts[i].length) left -= parts[i++].length
  const rest = parts.slice(i)
  if (left > 0) rest[0] = rest[0].subarray(left)
  return rest
}

const closeFd = (fd: number) =>
  new Promise<void>((resolve, reject) => fs.close(fd, (err) => (err ? reject(err) : resolve())))

const writevAsync = (fd: number, parts: Buffer[]) =>
  new Promise<number>((resolve, reject) => fs.writev(fd, parts, (err, n) => (err ? reject(err) : resolve(n))))

export function openWal(dir: string) {
  fs.mkdirSync(dir, { recursive: true })
  const leftover = fs
    .readdirSync(dir)
    .map((name) => SEGMENT_NAME.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b)
  let nextId = (leftover.at(-1) ?? 0) + 1
  interface OpenSegment {
    file: string
    fd: number
    records: WalRecord[]
    /** Bytes written to the file so far (where the next append begins). */
    bytes: number
  }
  let current: OpenSegment | undefined
  /** Appends being written by the thread pool, in order; later appends and closes wait for them. */
  let writes: Promise<unknown> = Promise.resolve()
  let writing = 0

  /** The open segment (opened now if there is none): an append goes where the call finds it, in call order. */
  function segment(): OpenSegment {
    if (!current) {
      const file = path.join(dir, `${nextId++}.wal`)
      current = { file, fd: fs.openSync(file, 'a'), records: [], bytes: 0 }
    }
    return current
  }

  /** A write that stopped part-way would leave a torn record that replay stops at, hiding the records appended
   * after it: the file is cut back to where the append began. */
  function cutBack(target: OpenSegment) {
    try {
      fs.ftruncateSync(target.fd, target.bytes)
    } catch {}
  }

  return {
    /** Segments a previous run left behind, oldest first, with their readable records. */
    recover(): WalSegment[] {
      return leftover.map((id) => {
        const file = path.join(dir, `${id}.wal`)
        return { file, records: parseSegment(fs.readFileSync(file)) }
      })
    },

    /** Appends records in one write; resolves once the operating system has them (they survive a crash). */
    append(records: WalRecord[]): Promise<void> {
      let target: OpenSegment
      try {
        target = segment()
      } catch (err) {
        return Promise.reject(err)
      }
      const { parts, bytes } = framed(records)
      const done = () => {
        target.bytes += bytes
        for (const record of records) target.records.push(record)
      }
      if (writing === 0 && bytes <= SYNC_WRITE_BYTES) {
        try {
          writeAllSync(target.fd, parts)
        } catch (err) {
          cutBack(target)
          return Promise.reject(err)
        }
        done()
        return Promise.resolve()
      }
      writing++
      const write = writes
        .then(() => writeAll((rest) => writevAsync(target.fd, rest), parts))
        .then(done, (err) => {
          cutBack(target)
          throw err
        })
        .finally(() => writing--)
      writes = write.catch(() => undefined)
      return write
    },

    /** Closes the segment being written (after its pending writes) and returns it; new appends start another. */
    async rotate(): Promise<WalSegment | undefined> {
      const segment = current
      current = undefined
      if (!segment) return undefined
      const closing = writes.then(async () => {
        await closeFd(segment.fd)
        return { file: segment.file, records: segment.records }
      })
      writes = closing.catch(() => undefined)
      return closing
    },

    remove(segment: WalSegment): void {
      fs.rmSync(segment.file, { force: true })
    },

    /** Keeps records the store refused beside the log (`<segment>.rejected`, same framing, never replayed). */
    quarantine(segment: WalSegment, records: WalRecord[]): string {
      const target = `${segment.file}.rejected`
      fs.writeFileSync(target, Buffer.concat(framed(records).parts))
      return target
    },

    async close(): Promise<void> {
      const segment = current
      current = undefined
      await writes
      if (segment) await closeFd(segment.fd)
    },
  }
}
export type Wal = ReturnType<typeof openWal>
