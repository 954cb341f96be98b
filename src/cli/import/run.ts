/**
 * `burrow import FILE…`: streams export files into a running Burrow through `/batch/` with
 * `historical_migration: true`, so validation, persons, groups and definitions are live capture's own.
 *
 * Resumable: a checkpoint beside each file names the first record not yet known to be stored (everything before
 * it is acknowledged or in the rejects file). `--resume` starts there; the few batches that were in flight when
 * the import stopped are sent again with the same uuids, which the server stores once.
 */
import fs from 'node:fs'
import path from 'node:path'
import { CaptureValidationError, isHistoricallyValid, normalizeEvent, parseTimestamp } from '../../ingest/normalize.js'
import { BoundedSet, type Content, RecordError, transformRecord } from './content.js'
import { openParquet } from './parquet.js'
import {
  compressionOf,
  type Format,
  openDecompressed,
  parseMap,
  type ReadProgress,
  readLines,
  readRecords,
} from './reader.js'
import { FatalSendError, type PendingEvent, sendBatch } from './sender.js'

export interface ImportOptions {
  files: string[]
  host: string
  token: string
  content: Content
  format: Format
  map: string[]
  resume: boolean
  dryRun: boolean
  rejects?: string
  /** Send events younger than 48 hours as live events instead of rejecting them. */
  recentAsLive: boolean
  concurrency: number
  batchSize: number
  /** Progress to stderr: a redrawn line on a terminal, else a line every `progressEveryMs`. */
  progress: 'tty' | 'lines' | 'none'
  progressEveryMs?: number
  clock?: () => Date
  err: (text: string) => void
}

export interface FileSummary {
  file: string
  records: number
  events: number
  rejected: number
  skipped_by_resume: number
  status: 'done' | 'already done' | 'stopped'
}

export interface ImportSummary {
  files: FileSummary[]
  events: number
  rejected: number
  rejects_file: string | null
  seconds: number
  dry_run: boolean
  error?: string
}

interface Checkpoint {
  version: 1
  file: string
  size: number
  content: Content
  format: Format
  /** First record not yet known to be stored or rejected. */
  next: { line: number; offset: number }
  header?: string[]
  done: boolean
  events: number
  rejected: number
}

const MAX_BATCH_BYTES = 4 * 1024 * 1024

export const checkpointPath = (file: string) => `${file}.burrow-import.json`

/** Thrown for a situation the operator must settle (a previous import's checkpoint, unreadable input). */
export class ImportRefused extends Error {}

export async function runImport(options: ImportOptions): Promise<ImportSummary> {
  const started = Date.now()
  const clock = options.clock ?? (() => new Date())
  const rejectsPath = path.resolve(options.rejects ?? `${options.files[0]}.rejects.jsonl`)
  const summary: ImportSummary = {
    files: [],
    events: 0,
    rejected: 0,
    rejects_file: null,
    seconds: 0,
    dry_run: options.dryRun,
  }
  // Refuse before sending anything: a file whose previous import stopped needs --resume (or its checkpoint gone).
  const checkpoints = new Map<string, Checkpoint | undefined>()
  for (const file of options.files) {
    if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw new ImportRefused(`${file}: no such file`)
    const cp = options.dryRun ? undefined : readCheckpoint(file)
    if (cp && !options.resume) {
      throw new ImportRefused(
        cp.done
          ? `${file} was imported already (${checkpointPath(file)}); delete that file to import it again`
          : `an import of ${file} stopped at line ${cp.next.line}: run again with --resume to finish it, ` +
              `or delete ${checkpointPath(file)} to start over`,
      )
    }
    if (cp && (cp.content !== options.content || cp.format !== options.format)) {
      throw new ImportRefused(
        `${file} was being imported as --content ${cp.content} --format ${cp.format}; resume with the same options`,
      )
    }
    checkpoints.set(file, cp)
  }
  const rejects = openRejects(rejectsPath, options, checkpoints)
  try {
    for (const file of options.files) {
      const result = await importFile(file, checkpoints.get(file), options, rejects, clock, summary)
      summary.files.push(result.file)
      if (result.error) {
        summary.error = result.error
        break
      }
    }
  } finally {
    rejects.close()
  }
  summary.rejects_file = rejects.written > 0 || fs.existsSync(rejectsPath) ? rejectsPath : null
  summary.seconds = Math.round((Date.now() - started) / 100) / 10
  return summary
}

interface Rejects {
  write(file: string, line: number, reason: string, text: string): void
  close(): void
  written: number
}

/** The rejects file: JSON lines of {file, line, reason, text}. On resume, entries at or past the resume point
 * of their file are dropped (those lines are read, and rejected, again). */
function openRejects(file: string, options: ImportOptions, checkpoints: Map<string, Checkpoint | undefined>): Rejects {
  let fd: number | undefined
  const rejects: Rejects = {
    written: 0,
    write(source, line, reason, text) {
      fd ??= fs.openSync(file, 'a', 0o600)
      fs.writeSync(fd, `${JSON.stringify({ file: source, line, reason, text })}\n`)
      rejects.written++
    },
    close() {
      if (fd !== undefined) fs.closeSync(fd)
    },
  }
  if (!options.resume) {
    if (fs.existsSync(file)) fs.rmSync(file)
    return rejects
  }
  if (fs.existsSync(file)) {
    const kept = fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((entry) => {
        if (entry === '') return false
        try {
          const { file: source, line } = JSON.parse(entry) as { file: string; line: number }
          const cp = [...checkpoints].find(([f]) => path.resolve(f) === source)?.[1]
          return !cp || cp.done || line < cp.next.line
        } catch {
          return false
        }
      })
    fs.writeFileSync(file, kept.map((entry) => `${entry}\n`).join(''), { mode: 0o600 })
  }
  return rejects
}

function readCheckpoint(file: string): Checkpoint | undefined {
  const cpFile = checkpointPath(file)
  if (!fs.existsSync(cpFile)) return undefined
  const cp = JSON.parse(fs.readFileSync(cpFile, 'utf8')) as Checkpoint
  if (cp.version !== 1) throw new ImportRefused(`${cpFile} is not a checkpoint this version can read`)
  if (cp.size !== fs.statSync(file).size) {
    throw new ImportRefused(`${file} changed since its import stopped (size differs from ${cpFile})`)
  }
  return cp
}

function writeCheckpoint(file: string, cp: Checkpoint) {
  const target = checkpointPath(file)
  const temp = `${target}.tmp`
  const fd = fs.openSync(temp, 'w', 0o600)
  try {
    fs.writeSync(fd, JSON.stringify(cp))
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
  fs.renameSync(temp, target)
}

interface Buffered {
  events: PendingEvent[]
  bytes: number
  first?: { line: number; offset: number }
}

async function importFile(
  file: string,
  previous: Checkpoint | undefined,
  options: ImportOptions,
  rejects: Rejects,
  clock: () => Date,
  summary: ImportSummary,
): Promise<{ file: FileSummary; error?: string }> {
  const source = path.resolve(file)
  const result: FileSummary = { file, records: 0, events: 0, rejected: 0, skipped_by_resume: 0, status: 'done' }
  if (previous?.done) {
    result.status = 'already done'
    return { file: result }
  }
  const size = fs.statSync(file).size
  const cp: Checkpoint = previous ?? {
    version: 1,
    file: source,
    size,
    content: options.content,
    format: options.format,
    next: { line: 1, offset: 0 },
    done: false,
    events: 0,
    rejected: 0,
  }
  const resumeAt = cp.next
  const progress: ReadProgress = { fileBytes: 0, fileSize: size }
  // A plain file is read from where the import stopped; a compressed one is read again up to there.
  // A Parquet file's rows are read (as JSON lines) from its start every time.
  const parquet = options.format === 'parquet'
  const canSeek =
    !parquet &&
    resumeAt.offset > 0 &&
    compressionOf(file) === 'none' &&
    (options.format !== 'csv' || cp.header !== undefined)
  const stream = parquet
    ? await openParquet(file, progress)
    : openDecompressed(file, progress, canSeek ? resumeAt.offset : 0)
  const lines = canSeek ? readLines(stream, resumeAt.line, resumeAt.offset) : readLines(stream)
  const records = readRecords(
    lines,
    {
      format: options.format === 'parquet' ? 'jsonl' : options.format,
      map: parseMap(options.map),
      capturedCsv: options.content === 'captured',
      header: canSeek ? cp.header : undefined,
    },
    (header) => {
      cp.header = header
    },
  )

  const ctx = { lineKey: '', seenPairs: new BoundedSet() }
  const buffers: Record<'historical' | 'live', Buffered> = {
    historical: { events: [], bytes: 0 },
    live: { events: [], bytes: 0 },
  }
  const inflight = new Map<number, { promise: Promise<void>; first: { line: number; offset: number } }>()
  let batchId = 0
  let fatal: string | undefined
  let frontier = { ...resumeAt }
  let lastSave = Date.now()
  const baseName = path.basename(file)

  const reject = (line: number, reason: string, text: string) => {
    result.rejected++
    cp.rejected++
    summary.rejected++
    rejects.write(source, line, reason, text)
  }

  // A batch left unsent because the import is stopping: the checkpoint must stay before it.
  let unsent: { line: number; offset: number } | undefined
  const position = () => {
    let next = frontier
    const pending = [
      buffers.historical.first,
      buffers.live.first,
      unsent,
      ...[...inflight.values()].map((f) => f.first),
    ]
    for (const b of pending) {
      if (b && b.line < next.line) next = b
    }
    return next
  }
  const save = (force = false) => {
    if (options.dryRun) return
    if (!force && Date.now() - lastSave < 1000) return
    lastSave = Date.now()
    cp.next = position()
    writeCheckpoint(file, cp)
  }

  const flush = async (mode: 'historical' | 'live') => {
    const buffer = buffers[mode]
    if (buffer.events.length === 0) return
    buffers[mode] = { events: [], bytes: 0 }
    if (options.dryRun) {
      result.events += buffer.events.length
      summary.events += buffer.events.length
      return
    }
    const first = buffer.first as { line: number; offset: number }
    while (inflight.size >= options.concurrency && !fatal) {
      await Promise.race([...inflight.values()].map((f) => f.promise))
    }
    if (fatal) {
      if (!unsent || first.line < unsent.line) unsent = first
      return
    }
    const id = batchId++
    const promise = sendBatch(buffer.events, {
      host: options.host,
      token: options.token,
      historical: mode === 'historical',
      onRetry: (status, delay) =>
        options.err(`burrow import: server answered ${status}; retrying in ${Math.round(delay)} ms\n`),
    })
      .then((sent) => {
        for (const r of sent.rejected) reject(r.event.line, r.reason, r.event.text)
        result.events += sent.stored
        cp.events += sent.stored
        summary.events += sent.stored
        inflight.delete(id)
        save()
      })
      .catch((err: unknown) => {
        fatal ??= err instanceof FatalSendError ? err.message : `sending failed: ${(err as Error).message}`
        // Left in `inflight` (never acknowledged), so the checkpoint stays before it.
      })
    inflight.set(id, { promise, first })
  }

  const ticker = startProgress(options, file, progress, result)
  const minResumeLine = canSeek ? 0 : resumeAt.line
  try {
    for await (const record of records) {
      if (fatal) break
      if (record.line < minResumeLine) {
        result.skipped_by_resume++
        continue
      }
      frontier = { line: record.line, offset: record.offset }
      result.records++
      if (record.error !== undefined) {
        reject(record.line, record.error, record.text)
        continue
      }
      ctx.lineKey = `${baseName}\u0000${record.line}\u0000${record.text}`
      let events: ReturnType<typeof transformRecord>
      try {
        events = transformRecord(options.content, record.value, ctx)
      } catch (err) {
        if (err instanceof RecordError) {
          reject(record.line, err.message, record.text)
          continue
        }
        throw err
      }
      const now = clock()
      const accepted: { mode: 'historical' | 'live'; json: string }[] = []
      let refused: string | undefined
      for (const ev of events) {
        const json = JSON.stringify(ev)
        const reason = validate(ev, now, options.recentAsLive)
        if (typeof reason === 'string') {
          refused = reason
          break
        }
        accepted.push({ mode: reason.live ? 'live' : 'historical', json })
      }
      if (refused !== undefined) {
        reject(record.line, refused, record.text)
        continue
      }
      for (const { mode, json } of accepted) {
        const buffer = buffers[mode]
        buffer.first ??= { line: record.line, offset: record.offset }
        buffer.events.push({ json, line: record.line, text: record.text })
        buffer.bytes += json.length
        if (buffer.events.length >= options.batchSize || buffer.bytes >= MAX_BATCH_BYTES) await flush(mode)
      }
      save()
    }
    await flush('historical')
    await flush('live')
    while (inflight.size > 0 && !fatal) await Promise.race([...inflight.values()].map((f) => f.promise))
    if (fatal) {
      // Let the batches still running settle, so the checkpoint reflects what they stored.
      await Promise.allSettled([...inflight.values()].map((f) => f.promise))
    }
  } finally {
    ticker.stop()
  }
  if (fatal) {
    result.status = 'stopped'
    save(true)
    return { file: result, error: fatal }
  }
  if (!options.dryRun) {
    cp.done = true
    cp.next = { line: Number.MAX_SAFE_INTEGER, offset: size }
    writeCheckpoint(file, cp)
  }
  return { file: result }
}

/** Live capture's own validation, plus the 48-hour rule of historical imports. */
function validate(
  ev: ReturnType<typeof transformRecord>[number],
  now: Date,
  recentAsLive: boolean,
): string | { live: boolean } {
  if (ev.timestamp === undefined || ev.timestamp === null || ev.timestamp === '') {
    return 'the event has no timestamp (a historical import keeps each event at its own time)'
  }
  if (parseTimestamp(ev.timestamp) === null) {
    return `timestamp ${JSON.stringify(ev.timestamp)} is not a date`
  }
  let normalized: ReturnType<typeof normalizeEvent>
  try {
    // Validation only: normalizeEvent may edit the event, which is already serialized.
    normalized = normalizeEvent(ev, 0, { now })
  } catch (err) {
    if (err instanceof CaptureValidationError) return err.message.replace(/^event 0: /, '')
    throw err
  }
  if (!isHistoricallyValid(normalized, now)) {
    if (recentAsLive) return { live: true }
    return (
      `timestamp ${normalized.timestamp.toISOString()} is less than 48 hours old: historical imports take only ` +
      'events at least 48 hours in the past (the 48-hour rule); pass --recent-as-live to import such events as live events'
    )
  }
  return { live: false }
}

function startProgress(options: ImportOptions, file: string, progress: ReadProgress, result: FileSummary) {
  if (options.progress === 'none') return { stop() {} }
  const started = Date.now()
  const line = () => {
    const seconds = (Date.now() - started) / 1000
    const rate = seconds > 0 ? Math.round(result.events / seconds) : 0
    const share = progress.fileSize > 0 ? progress.fileBytes / progress.fileSize : 1
    const eta = share > 0 && share < 1 ? Math.round((seconds / share) * (1 - share)) : 0
    return (
      `${path.basename(file)}: ${result.events} events, ${result.rejected} rejected, ${rate} events/s, ` +
      `${Math.floor(share * 100)}% read${eta > 0 ? `, ETA ${eta} s` : ''}`
    )
  }
  const tty = options.progress === 'tty'
  const timer = setInterval(
    () => options.err(tty ? `\r\x1b[2K${line()}` : `${line()}\n`),
    tty ? 250 : (options.progressEveryMs ?? 5000),
  )
  timer.unref()
  return {
    stop() {
      clearInterval(timer)
      options.err(tty ? `\r\x1b[2K${line()}\n` : `${line()}\n`)
    },
  }
}
