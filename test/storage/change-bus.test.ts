// Changes told across processes on one PostgreSQL database (LISTEN/NOTIFY): a flag created through one process is
// served by another within a second, not when its cache's 10 s time limit runs out; a process does not hear its
// own changes; garbage on the channel is ignored; a listener that lost its connection listens again and drops
// everything once. Skipped without DATABASE_URL (on SQLite there is one serving process and nothing to tell).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Burrow, buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { CHANGES_CHANNEL, type Change, createChangeBus } from '../../src/storage/meta/change-bus.js'
import { openMetaDb } from '../../src/storage/meta/db.js'
import { migrateMeta } from '../../src/storage/meta/migrate.js'
import { freshPostgresUrl, startTestApp, type TestApp } from '../helpers/app.js'

const onPostgres = Boolean(process.env.DATABASE_URL?.startsWith('postgres'))

let t: TestApp
let second: Burrow
let secondDir: string
beforeAll(async () => {
  if (!onPostgres) return
  t = await startTestApp()
  secondDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-test-second-'))
  second = await buildApp(
    loadConfig({
      DATA_DIR: secondDir,
      LOG_LEVEL: 'silent',
      DATABASE_URL: t.burrow.config.databaseUrl,
      CLICKHOUSE_URL: t.burrow.config.clickhouseUrl,
    }),
    { logger: false },
  )
  await second.app.ready()
}, 60_000)
afterAll(async () => {
  if (!onPostgres) return
  await second?.close()
  fs.rmSync(secondDir, { recursive: true, force: true })
  await t?.close()
})

const waitFor = async (check: () => boolean | Promise<boolean>, timeoutMs: number) => {
  const until = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > until) return false
    await new Promise((r) => setTimeout(r, 20))
  }
  return true
}

describe.skipIf(!onPostgres)('changes told across processes', () => {
  it('serves a flag created through one process from another within a second', async () => {
    const flags = (app: Burrow['app']) =>
      app.inject({
        method: 'POST',
        url: '/flags/?v=2',
        payload: { token: t.creds.project_api_key, distinct_id: 'someone' },
      })
    // The second process has the project's flags cached (no flag yet).
    expect((await flags(second.app)).json().flags).toEqual({})

    const created = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/feature_flags/`,
      headers: t.auth,
      payload: { key: 'told-across', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
    })
    expect(created.statusCode, created.body).toBe(201)
    const started = Date.now()
    const seen = await waitFor(
      async () => (await flags(second.app)).json().flags['told-across']?.enabled === true,
      1_500,
    )
    expect(seen, 'the flag reached the other process within 1.5 s').toBe(true)
    expect(Date.now() - started).toBeLessThan(1_500)

    // Turning it off is served as quickly.
    const off = await t.burrow.app.inject({
      method: 'PATCH',
      url: `/api/projects/${t.creds.project_id}/feature_flags/${created.json().id}/`,
      headers: t.auth,
      payload: { active: false },
    })
    expect(off.statusCode, off.body).toBe(200)
    // An inactive flag is not evaluated at all (PostHog's /flags leaves it out; SDKs read that as off).
    const gone = await waitFor(async () => (await flags(second.app)).json().flags['told-across'] === undefined, 1_500)
    expect(gone, 'the disabled flag was no longer served within 1.5 s').toBe(true)
  })

  it('delivers to other buses only, ignores garbage, and drops everything after a lost connection', async () => {
    const heardA: Change[] = []
    const heardB: Change[] = []
    const errors: unknown[] = []
    const options = { databaseUrl: t.burrow.config.databaseUrl, db: t.burrow.meta.db, reconnectMs: 100 }
    const a = createChangeBus({ ...options, onError: (e) => errors.push(e) })
    const b = createChangeBus({ ...options, onError: () => undefined })
    a.subscribe((c) => heardA.push(c))
    b.subscribe((c) => heardB.push(c))
    try {
      // Give both listeners time to connect.
      await new Promise((r) => setTimeout(r, 500))
      a.publish({ kind: 'flags', teamId: 7 })
      expect(await waitFor(() => heardB.length === 1, 2_000)).toBe(true)
      expect(heardB).toEqual([{ kind: 'flags', teamId: 7 }])

      // Not JSON, not a change, a change of an unknown kind: none reaches a subscriber.
      const raw = new pg.Client({ connectionString: t.burrow.config.databaseUrl })
      await raw.connect()
      for (const payload of ['not json', '{"change":{"kind":"flags","teamId":"x"}}', '{"change":{"kind":"drop"}}']) {
        await raw.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, payload])
      }
      b.publish({ kind: 'projects' })
      expect(await waitFor(() => heardA.length === 1, 2_000)).toBe(true)
      expect(heardA).toEqual([{ kind: 'projects' }])
      // A's own change never came back to it, and the garbage never reached B.
      expect(heardB).toEqual([{ kind: 'flags', teamId: 7 }])

      // The server ends B's listening connection: B listens again and tells its subscribers to drop everything.
      await raw.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND query = $1 AND pid <> pg_backend_pid()`,
        [`LISTEN ${CHANGES_CHANNEL}`],
      )
      await raw.end()
      expect(await waitFor(() => heardB.some((c) => c.kind === 'all'), 3_000)).toBe(true)
      // And hears changes again afterwards.
      await waitFor(() => heardA.some((c) => c.kind === 'all'), 3_000)
      a.publish({ kind: 'property-types', teamId: 3 })
      expect(await waitFor(() => heardB.some((c) => c.kind === 'property-types'), 2_000)).toBe(true)
    } finally {
      await a.close()
      await b.close()
    }
  })

  it('with CHANGE_NOTIFICATIONS=off, neither listens nor writes heads, and tells nothing', async () => {
    expect(() => loadConfig({ DATA_DIR: secondDir, CHANGE_NOTIFICATIONS: 'maybe' })).toThrow(
      'CHANGE_NOTIFICATIONS must be on or off',
    )
    expect(loadConfig({ DATA_DIR: secondDir, CHANGE_NOTIFICATIONS: 'off' }).changeNotifications).toBe(false)
    expect(loadConfig({ DATA_DIR: secondDir }).changeNotifications).toBe(true)
    const own = await freshPostgresUrl(t.burrow.config.databaseUrl)
    const meta = openMetaDb(own.url)
    await migrateMeta(meta.db, meta.dialect)
    const heardOn: Change[] = []
    const heardOff: Change[] = []
    const options = { databaseUrl: own.url, db: meta.db, headsEveryMs: 100, onError: () => undefined }
    const on = createChangeBus(options)
    const off = createChangeBus({ ...options, enabled: false })
    on.subscribe((x) => heardOn.push(x))
    off.subscribe((x) => heardOff.push(x))
    const listeners = async () => {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND query = ${`LISTEN ${CHANGES_CHANNEL}`}`.execute(meta.db)
      return rows[0]?.n ?? 0
    }
    try {
      expect(await waitFor(async () => (await listeners()) === 1, 10_000)).toBe(true)
      // What the enabled bus publishes is not heard by the disabled one, and the reverse is never sent.
      on.publish({ kind: 'flags', teamId: 21 })
      off.publish({ kind: 'flags', teamId: 22 })
      await new Promise((r) => setTimeout(r, 1_000))
      expect(heardOff).toEqual([])
      expect(heardOn).toEqual([])
      // Only the enabled bus listens, and only it writes a head (it published once).
      expect(await listeners()).toBe(1)
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM change_heads`.execute(meta.db)
      expect(rows[0]?.n).toBe(1)
    } finally {
      await on.close()
      await off.close()
      await meta.close()
      await own.drop()
    }
  })

  it('drops everything within a few beats when a notification was lost, and never when none was', async () => {
    // A database of its own, so that only these buses publish and write heads there. A publishes through a Redis
    // that cannot be reached, so nothing it publishes is heard; B and C listen on PostgreSQL. All three write and
    // read their heads in the same metadata store.
    const own = await freshPostgresUrl(t.burrow.config.databaseUrl)
    const meta = openMetaDb(own.url)
    await migrateMeta(meta.db, meta.dialect)
    const heardB: Change[] = []
    const heardC: Change[] = []
    const options = { databaseUrl: own.url, db: meta.db, headsEveryMs: 200 }
    const a = createChangeBus({ ...options, redisUrl: 'redis://127.0.0.1:1', onError: () => undefined })
    const b = createChangeBus({ ...options, onError: () => undefined })
    const c = createChangeBus({ ...options, onError: () => undefined })
    b.subscribe((x) => heardB.push(x))
    c.subscribe((x) => heardC.push(x))
    try {
      // B and C listen before anything is published (a change sent earlier would rightly count as missed).
      const listening = async () => {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND query = ${`LISTEN ${CHANGES_CHANNEL}`}`.execute(meta.db)
        return rows[0]?.n === 2
      }
      expect(await waitFor(listening, 10_000)).toBe(true)
      // Heard changes are never taken for lost ones: C publishes, B hears them, and over several beats no drop.
      c.publish({ kind: 'projects' })
      c.publish({ kind: 'flags', teamId: 11 })
      expect(await waitFor(() => heardB.length === 2, 3_000)).toBe(true)
      await new Promise((r) => setTimeout(r, 1_000))
      // Two publishes go out on two pool connections, so they may arrive in either order.
      expect(heardB).toHaveLength(2)
      expect(heardB).toEqual(expect.arrayContaining([{ kind: 'projects' }, { kind: 'flags', teamId: 11 }]))

      // A's change never reaches B or C as a notification; its head does, and both drop everything.
      const started = Date.now()
      a.publish({ kind: 'flags', teamId: 12 })
      expect(await waitFor(() => heardB.some((x) => x.kind === 'all'), 6_000)).toBe(true)
      expect(await waitFor(() => heardC.some((x) => x.kind === 'all'), 6_000)).toBe(true)
      // Within about three beats (a head written at most one beat later, then one beat of grace), not 10 s.
      expect(Date.now() - started).toBeLessThan(4_000)
      expect(heardB.filter((x) => x.kind === 'all')).toHaveLength(1)
      expect(heardB.some((x) => x.kind === 'flags' && x.teamId === 12)).toBe(false)
    } finally {
      await a.close()
      await b.close()
      await c.close()
      await meta.close()
      await own.drop()
    }
  })
})
