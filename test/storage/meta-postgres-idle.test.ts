import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'

const isPostgres = process.env.DATABASE_URL?.startsWith('postgres') === true

describe.runIf(isPostgres)('PostgreSQL connections ended by the server', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp()
  })
  afterAll(() => t?.close())

  it('survive: an idle connection terminated by the server is dropped and the next query connects anew', async () => {
    const { db } = t.burrow.meta
    const database = (await sql<{ name: string }>`SELECT current_database() AS name`.execute(db)).rows[0].name
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL })
    await admin.connect()
    try {
      const ended = await admin.query(
        'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database],
      )
      expect(ended.rows.length).toBeGreaterThan(0)
    } finally {
      await admin.end()
    }
    await new Promise((r) => setTimeout(r, 200))
    const res = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${t.creds.project_id}/feature_flags/`,
      headers: t.auth,
    })
    expect(res.statusCode).toBe(200)
  })
})

describe.runIf(isPostgres)('PostgreSQL connection ended by the server while checked out', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp()
  })
  afterAll(() => t?.close())

  it('does not end the process: the next statement on it fails, and the pool then connects anew', async () => {
    const { db } = t.burrow.meta
    const failed = await db.connection().execute(async (conn) => {
      const pid = (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(conn)).rows[0].pid
      const admin = new pg.Client({ connectionString: process.env.DATABASE_URL })
      await admin.connect()
      try {
        await admin.query('SELECT pg_terminate_backend($1)', [pid])
      } finally {
        await admin.end()
      }
      // The server's notice arrives while the connection is checked out and idle between two statements.
      await new Promise((r) => setTimeout(r, 300))
      return sql`SELECT 1`.execute(conn).then(
        () => false,
        () => true,
      )
    })
    expect(failed).toBe(true)
    const after = await sql<{ one: number }>`SELECT 1 AS one`.execute(db)
    expect(after.rows[0].one).toBe(1)
  })
})
