/**
 * The engine's own insert rate for capture's rows, in a process of its own (run by `bench/capture.ts`, or alone):
 *
 *   npx tsx bench/capture-engine.ts [rows per insert] [total rows] [variant…]
 *
 * Every row is built and encoded before the clock starts, by capture's own code (`normalizeEvent`, the service's
 * `eventRow`, `tsvRow`: the same properties JSON, with `$set` / `$set_once`), into the real events schema (materialized columns, bloom index, ReplacingMergeTree). Only the
 * inserts are timed, so the figure is the engine's, not JavaScript's. Prints one JSON line per variant: rows/s and
 * the CPU time of every thread of the process per row. Variants: `tsv` (what capture sends), `json` (the same rows as
 * JSONEachRow), and `tsv+<setting>=<value>[,…]` (TabSeparated with per-insert settings).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Session } from 'chdb'
import { createTsvArena, type EventRow, ndjson } from '../src/ingest/committer.js'
import { normalizeEvent } from '../src/ingest/normalize.js'
import { eventRow } from '../src/ingest/service.js'
import { migrateEventStore, openEventStore } from '../src/storage/events/index.js'
import { realisticEvent } from './lib.js'

/**
 * Capture's rows for these events, made by capture's own code from the events as a request body decodes them:
 * normalized (the client address added, person properties lifted into `$set` / `$set_once`) and turned into rows
 * by the service's `eventRow`.
 */
export function captureRows(from: number, count: number): EventRow[] {
  const rows: EventRow[] = new Array(count)
  const now = new Date()
  const createdAt = now.toISOString().replace('T', ' ').replace('Z', '')
  for (let i = 0; i < count; i++) {
    const raw = JSON.parse(JSON.stringify(realisticEvent(from + i, 'phc_bench')))
    const ev = normalizeEvent(raw, i, { now, ip: '203.0.113.7' })
    rows[i] = eventRow(ev, 1, '0190a8f2-7e6c-7c3a-9d41-5f2b8c6e1a00', ['', '', '', '', ''], createdAt)
  }
  return rows
}

export interface EngineFigure {
  variant: string
  rowsPerInsert: number
  rows: number
  rowsPerSecond: number
  /** CPU time of every thread of the process (the engine's insert and merge threads), per row. */
  cpuMicrosPerRow: number
}

function parseVariant(variant: string): { format: 'TabSeparated' | 'JSONEachRow'; settings: Record<string, string> } {
  const [format, rest] = variant.split('+')
  const settings: Record<string, string> = {}
  for (const pair of rest ? rest.split(',') : []) {
    const [name, value] = pair.split('=')
    if (!/^[a-z_]+$/.test(name) || value === undefined) throw new Error(`not a setting: ${pair}`)
    settings[name] = value
  }
  if (format !== 'tsv' && format !== 'json') throw new Error(`unknown format in variant ${variant}`)
  return { format: format === 'tsv' ? 'TabSeparated' : 'JSONEachRow', settings }
}

/** Inserts pre-encoded payloads into a fresh events table; only the inserts are timed. */
export async function engineRate(variant: string, rowsPerInsert: number, total: number): Promise<EngineFigure> {
  const { format, settings } = parseVariant(variant)
  const payloads: Buffer[] = []
  const arena = createTsvArena()
  for (let done = 0; done < total; done += rowsPerInsert) {
    const rows = captureRows(done, Math.min(rowsPerInsert, total - done))
    // A copy of the arena's view: every payload must outlive the next one's encoding.
    payloads.push(format === 'TabSeparated' ? Buffer.from(arena.write(rows)) : Buffer.from(ndjson(rows)))
    arena.seal()()
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-engine-'))
  const store = openEventStore(`chdb:${dir}`)
  await migrateEventStore(store)
  const session = new Session(dir)
  const before = process.cpuUsage()
  const started = performance.now()
  for (const values of payloads) {
    await session.insert({
      table: 'events',
      values,
      format,
      ...(Object.keys(settings).length > 0 ? { settings } : {}),
    })
  }
  const seconds = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(before)
  const counted = Number((await session.queryAsync('SELECT count() FROM events', { format: 'CSV' })).text().trim())
  session.close()
  await store.close()
  fs.rmSync(dir, { recursive: true, force: true })
  if (counted !== total) throw new Error(`inserted ${total} rows, the table has ${counted}`)
  return {
    variant,
    rowsPerInsert,
    rows: total,
    rowsPerSecond: total / seconds,
    cpuMicrosPerRow: (cpu.user + cpu.system) / total,
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const rowsPerInsert = Number(process.argv[2] ?? 10_000)
  const total = Number(process.argv[3] ?? 200_000)
  const variants = process.argv.length > 4 ? process.argv.slice(4) : ['tsv']
  // An insert in flight does not hold the event loop open by itself (the process ended mid-run, exit code 13).
  const alive = setInterval(() => undefined, 60_000)
  for (const variant of variants) {
    process.stdout.write(`${JSON.stringify(await engineRate(variant, rowsPerInsert, total))}\n`)
  }
  clearInterval(alive)
}
