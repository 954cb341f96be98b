import fs from 'node:fs'
import path from 'node:path'
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

/** Opens the metadata database named by `url` (`sqlite:<file>` or `postgres://…`). */
export function openMetaDb(url: string): MetaDb {
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
  const db = new Kysely<MetaDatabase>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) })
  return { db, dialect: 'sqlite', close: () => db.destroy() }
}

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
