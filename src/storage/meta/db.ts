import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import Database from 'better-sqlite3'
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely'
import pg from 'pg'
import type { MetaDatabase } from './schema.js'

export type MetaDialect = 'sqlite' | 'postgres'

export interface MetaDb {
  db: Kysely<MetaDatabase>
  dialect: MetaDialect
  close(): Promise<void>
}

// PostgreSQL returns int8/numeric as strings by default; our counters fit in a JS number.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10))

export interface MetaDbOptions {
  /** SQLite: the write-ahead log's size past which the checkpointer resets it even if that makes a writer wait. */
  walLimitBytes?: number
  /** SQLite: how often the checkpointer copies the log into the database. */
  checkpointEveryMs?: number
}

/** Opens the metadata database named by `url` (`sqlite:<file>` or `postgres://…`). */
export function openMetaDb(url: string, options: MetaDbOptions = {}): MetaDb {
  if (url.startsWith('postgres')) {
    const pool = new pg.Pool({ connectionString: url, max: 10 })
    // An idle connection the server ends (a restart, a terminated backend) is reported on the pool, which drops
    // it and connects anew on demand; unheard, the report would end the process. Quiet once closing.
    let closing = false
    pool.on('error', (err) => {
      if (!closing) console.error(`burrow: an idle PostgreSQL connection failed: ${err.message}`)
    })
    // The pool listens only to idle connections: one the server ends while it is checked out (between two
    // statements of a transaction, or holding a lock) would report with no one listening and end the process.
    // Its statement fails on its own; the connection is not reusable and the pool drops it on release.
    const inUse = new WeakSet<pg.PoolClient>()
    pool.on('acquire', (client) => inUse.add(client))
    pool.on('release', (_err, client) => inUse.delete(client))
    pool.on('connect', (client) => {
      client.on('error', (err) => {
        if (!closing && inUse.has(client))
          console.error(`burrow: a PostgreSQL connection in use failed: ${err.message}`)
      })
    })
    const db = new Kysely<MetaDatabase>({ dialect: new PostgresDialect({ pool }) })
    return {
      db,
      dialect: 'postgres',
      close: () => {
        closing = true
        return db.destroy()
      },
    }
  }
  const file = url.slice('sqlite:'.length)
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true })
  const sqlite = new Database(file)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma('busy_timeout = 5000')
  // The pages of persons and their distinct ids' indexes that capture reads (SQLite's default is 2 MB).
  sqlite.pragma(`cache_size = -${CACHE_KIB}`)
  const checkpointer = file === ':memory:' ? undefined : startCheckpointer(sqlite, file, options)
  const db = new Kysely<MetaDatabase>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) })
  return {
    db,
    dialect: 'sqlite',
    close: async () => {
      // First: the last connection to close copies what is left of the log into the database and removes it.
      await checkpointer?.stop()
      await db.destroy()
    },
  }
}

const CACHE_KIB = 16 * 1024
const WAL_LIMIT_BYTES = 64 << 20
const CHECKPOINT_EVERY_MS = 100
/** A checkpoint copies at least this many frames (1 MB of 4 KB pages), or what is there once a second. */
const CHECKPOINT_MIN_FRAMES = 256
const CHECKPOINT_MAX_DELAY_MS = 1_000

/**
 * Checkpoints off the request thread. SQLite's automatic checkpoint runs inside the commit that crosses 1,000
 * pages of log: that commit copies the log into the database and syncs it, and the request that committed (and
 * every one behind it on the event loop) waits. Here the writing connection never checkpoints
 * (`wal_autocheckpoint = 0`); a connection of its own in a worker thread looks every `checkpointEveryMs` and
 * copies the log with PASSIVE checkpoints, which never block a writer (what is appended meanwhile waits for the
 * next one), once 1 MB of it waits or a second after a smaller write. The log starts over from its beginning at the first write after a checkpoint that copied all
 * of it, and that write cuts the file back to `journal_size_limit`. Under writes that never pause, no checkpoint
 * copies all of the log; past `walLimitBytes` the writing connection then checkpoints for itself again (SQLite's
 * automatic checkpoint) until the log is back under half of it. Should the worker fail, it does so for good.
 */
function startCheckpointer(sqlite: Database.Database, file: string, options: MetaDbOptions) {
  const walLimitBytes = options.walLimitBytes ?? WAL_LIMIT_BYTES
  sqlite.pragma('wal_autocheckpoint = 0')
  sqlite.pragma(`journal_size_limit = ${Math.floor(walLimitBytes / 4)}`)
  const worker = new Worker(CHECKPOINTER_SOURCE, {
    eval: true,
    workerData: {
      module: createRequire(import.meta.url).resolve('better-sqlite3'),
      file,
      walLimitBytes,
      everyMs: options.checkpointEveryMs ?? CHECKPOINT_EVERY_MS,
      minFrames: CHECKPOINT_MIN_FRAMES,
      maxDelayMs: CHECKPOINT_MAX_DELAY_MS,
    },
  })
  worker.unref()
  worker.on('message', (over: boolean) => {
    if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${over ? 1000 : 0}`)
  })
  let stopped = false
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
  worker.once('error', (err) => {
    if (stopped) return
    console.error(`burrow: the SQLite checkpointer failed (${err.message}); the writer checkpoints for itself`)
    if (sqlite.open) sqlite.pragma('wal_autocheckpoint = 1000')
  })
  return {
    stop: async () => {
      stopped = true
      // Kept alive until it has closed its connection (it does not keep an idle process alive otherwise).
      worker.ref()
      worker.postMessage('stop')
      await exited
    },
  }
}

/** The checkpointer's worker (CommonJS, evaluated: it needs no file of its own in the build). */
const CHECKPOINTER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const fs = require('node:fs')
const Database = require(workerData.module)
const db = new Database(workerData.file)
const walFile = workerData.file + '-wal'
const walBytes = () => { try { return fs.statSync(walFile).size } catch { return 0 } }
// Frames in the log not yet copied, from the shared wal-index: its header's mxFrame (byte 16) and the checkpoint
// info's nBackfill (byte 96), in the machine's byte order. Every checkpoint that copies anything syncs the log and
// the database, so a few frames wait for more (or for a second) rather than cost two syncs each.
const little = require('node:os').endianness() === 'LE'
const word = Buffer.alloc(100)
let shm
const pendingFrames = () => {
  try {
    shm ??= fs.openSync(workerData.file + '-shm', 'r')
    if (fs.readSync(shm, word, 0, 100, 0) < 100) return Infinity
    const at = (i) => (little ? word.readUInt32LE(i) : word.readUInt32BE(i))
    return at(16) - at(96)
  } catch {
    return Infinity
  }
}
let last = 0
let over = false
const timer = setInterval(() => {
  try {
    const pending = pendingFrames()
    if (pending >= workerData.minFrames || (pending > 0 && Date.now() - last >= workerData.maxDelayMs)) {
      last = Date.now()
      db.pragma('wal_checkpoint(PASSIVE)')
    }
    // Past the limit the writer checkpoints for itself again until the log has started over (and been cut back
    // to journal_size_limit): a TRUNCATE from here would take the write lock, and a transaction of the writer that
    // had read before it fails with SQLITE_BUSY instead of waiting (measured: requests failed).
    const bytes = walBytes()
    if (!over && bytes > workerData.walLimitBytes) parentPort.postMessage((over = true))
    else if (over && bytes <= workerData.walLimitBytes / 2) parentPort.postMessage((over = false))
  } catch (err) {
    // SQLITE_BUSY and the like: the next turn tries again.
  }
}, workerData.everyMs)
parentPort.on('message', () => {
  clearInterval(timer)
  if (shm !== undefined) fs.closeSync(shm)
  db.close()
  parentPort.close()
})
`

const STATEMENT_CACHE_SIZE = 500

/**
 * Kysely prepares every query anew, and preparing costs more than running a small query. SQLite runs one
 * statement at a time in this process, so a prepared statement can be reused by SQL text.
 */
function withStatementCache(sqlite: Database.Database) {
  const cache = new Map<string, Database.Statement>()
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = cache.get(sql)
      if (!statement) {
        statement = sqlite.prepare(sql)
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string)
        cache.set(sql, statement)
      }
      return statement
    },
  }
}
