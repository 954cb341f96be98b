import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { type Burrow, buildApp } from '../../src/app.js'
import { startupAccount } from '../../src/bootstrap.js'
import { loadConfig } from '../../src/config.js'
import { freshPostgresUrl } from '../helpers/app.js'

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const done of cleanups.splice(0).reverse()) await done()
})

/** An app with its own data dir; `shared` names another app's stores to share (as a second process would). */
async function app(shared?: Burrow): Promise<Burrow> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-boot-'))
  const env: Record<string, string> = { DATA_DIR: dataDir, LOG_LEVEL: 'silent' }
  if (shared) {
    env.DATABASE_URL = shared.config.databaseUrl
    env.CLICKHOUSE_URL = shared.config.clickhouseUrl
  } else if (process.env.DATABASE_URL?.startsWith('postgres')) {
    const db = await freshPostgresUrl(process.env.DATABASE_URL)
    env.DATABASE_URL = db.url
    cleanups.push(db.drop)
  }
  const burrow = await buildApp(loadConfig(env), { logger: false })
  cleanups.push(async () => {
    await burrow.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })
  return burrow
}

const count = async (burrow: Burrow, table: 'users' | 'organizations') =>
  Number(
    (
      await burrow.meta.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  )

describe('startupAccount', () => {
  it('creates the demo account on an empty database, reuses it on the next start, and creates nothing where users exist', async () => {
    const first = await app()
    const made = await startupAccount(first)
    expect(made.created).toBe(true)
    expect(made.credentials?.email).toBe('demo@burrow.local')
    const again = await startupAccount(first)
    expect(again).toMatchObject({
      created: false,
      credentials: { personal_api_key: made.credentials?.personal_api_key },
    })

    // Another process's data dir on the same database: users exist, so nothing is made and no secret shown.
    const other = await app(first)
    expect(await startupAccount(other)).toEqual({ credentials: null, created: false })
    expect(await count(first, 'users')).toBe(1)
    expect(await count(first, 'organizations')).toBe(1)
  })
})

describe.skipIf(!process.env.DATABASE_URL?.startsWith('postgres'))('several processes starting at once', () => {
  it('makes exactly one demo account when three processes start together on one PostgreSQL database', async () => {
    const first = await app()
    const others = [await app(first), await app(first)]
    const outcomes = await Promise.all([first, ...others].map((b) => startupAccount(b)))
    expect(outcomes.filter((o) => o.created)).toHaveLength(1)
    expect(outcomes.filter((o) => o.credentials === null)).toHaveLength(2)
    expect(await count(first, 'users')).toBe(1)
    // No orphan organization from a start that lost the race.
    expect(await count(first, 'organizations')).toBe(1)
  }, 60_000)
})
