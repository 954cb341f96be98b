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

/** Writes the parts in order without joining them first (a write may take only some of them). */
async function writeAll(handle: fs.promises.FileHandle, parts: Buffer[]): Promise<void> {
  let rest = parts
  while (rest.length > 0) {
    let { bytesWritten } = await handle.writev(rest)
    if (bytesWritten === 0) throw new Error('capture log: the file takes no more bytes')
    let i = 0
    while (i < rest.length && bytesWritten >= rest[i].length) bytesWritten -= rest[i++].length
    rest = rest.slice(i)
    if (bytesWritten > 0) rest[0] = rest[0].subarray(bytesWritten)
  }
}

export function openWal(dir: string) {
  fs.mkdirSync(dir, { recursive: true })
  const leftover = fs
    .readdirSync(dir)
    .map((name) => SEGMENT_NAME.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b)
  let nextId = (leftover.at(-1) ?? 0) + 1
  let current:
    | { file: string; handle: fs.promises.FileHandle | undefined; records: WalRecord[]; bytes: number }
    | undefined
  let writes: Promise<unknown> = Promise.resolve()

  async function segment() {
    if (!current) {
      const file = path.join(dir, `${nextId++}.wal`)
      current = { file, handle: await fs.promises.open(file, 'a'), records: [], bytes: 0 }
    }
    return current
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
      const write = writes.then(async () => {
        const target = await segment()
        const { parts, bytes } = framed(records)
        const handle = target.handle as fs.promises.FileHandle
        try {
          await writeAll(handle, parts)
        } catch (err) {
          // A write that stopped part-way would leave a torn record that replay stops at, hiding the records
          // appended after it: cut the file back to where this append began.
          await handle.truncate(target.bytes).catch(() => undefined)
          throw err
        }
        target.bytes += bytes
        for (const record of records) target.records.push(record)
      })
      writes = write.catch(() => undefined)
      return write
    },

    /** Closes the segment being written (after its pending writes) and returns it; new appends start another. */
    async rotate(): Promise<WalSegment | undefined> {
      const closing = writes.then(async () => {
        const segment = current
        current = undefined
        if (!segment) return undefined
        await segment.handle?.close()
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
      await writes
      await current?.handle?.close()
      current = undefined
    },
  }
}
export type Wal = ReturnType<typeof openWal>
