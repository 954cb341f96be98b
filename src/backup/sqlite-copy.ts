/**
 * A consistent copy of a SQLite database while it is written to: `VACUUM INTO` reads one snapshot (WAL mode lets
 * the writer go on), where the stepwise online backup API restarts whenever a write lands. It runs on a
 * connection of its own in a worker thread, because better-sqlite3 is synchronous and a large copy would
 * otherwise hold the event loop (capture, flags) for its whole length.
 */
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

// Plain JavaScript, so the worker runs the same under tsx, vitest and the built code.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
try {
  if (workerData.from) {
    const source = new Database(workerData.from, { readonly: true, fileMustExist: true })
    source.pragma('busy_timeout = 30000')
    source.prepare('VACUUM INTO ?').run(workerData.to)
    source.close()
  }
  const copy = new Database(workerData.to, { readonly: true, fileMustExist: true })
  const tables = copy
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all()
    .map((r) => r.name)
  const rows = {}
  for (const t of tables) rows[t] = copy.prepare('SELECT count(*) AS n FROM "' + t.replace(/"/g, '""') + '"').get().n
  let migrations = []
  if (tables.includes('kysely_migration')) {
    migrations = copy.prepare('SELECT name FROM kysely_migration ORDER BY name').all().map((r) => r.name)
  }
  copy.close()
  parentPort.postMessage({ rows, migrations })
} catch (err) {
  parentPort.postMessage({ error: err && err.message ? err.message : String(err) })
}
`

export interface SqliteCopy {
  rows: Record<string, number>
  migrations: string[]
}

/** Copies the database file `from` into the new file `to`; resolves with its row counts and migrations. */
export function copySqlite(from: string, to: string): Promise<SqliteCopy> {
  return runWorker({ from, to }, 'copying the metadata store')
}

/** Row counts and migrations of a SQLite file, read on a connection of its own (for checking a restore). */
export function describeSqlite(file: string): Promise<SqliteCopy> {
  return runWorker({ from: null, to: file }, `reading ${file}`)
}

function runWorker(data: { from: string | null; to: string }, what: string): Promise<SqliteCopy> {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3')
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { eval: true, workerData: { driver, ...data } })
    worker.once('message', (msg: SqliteCopy & { error?: string }) => {
      if (msg.error) reject(new Error(`${what} failed: ${msg.error}`))
      else resolve({ rows: msg.rows, migrations: msg.migrations })
      void worker.terminate()
    })
    worker.once('error', reject)
  })
}
