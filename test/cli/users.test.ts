import fs from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { burrowProcess, cli } from './helpers.js'

// `burrow users …` on the stores of a stopped Burrow, then a Burrow started on them again to log in; and the
// refusal while an embedded Burrow (this test process) holds the data directory.

let t: TestApp
let env: Record<string, string>

beforeAll(async () => {
  t = await startTestApp()
  env = { DATA_DIR: t.dataDir, DATABASE_URL: t.burrow.config.databaseUrl }
}, 180_000)
afterAll(async () => {
  await t.close().catch(() => {})
  fs.rmSync(t.dataDir, { recursive: true, force: true })
})

/** Starts Burrow again on the same stores, runs `fn`, stops it. */
async function withRunningApp<T>(fn: (app: Awaited<ReturnType<typeof buildApp>>) => Promise<T>): Promise<T> {
  const burrow = await buildApp(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { logger: false })
  try {
    return await fn(burrow)
  } finally {
    await burrow.close()
  }
}

const login = (burrow: Awaited<ReturnType<typeof buildApp>>, email: string, password: string) =>
  burrow.app.inject({ method: 'POST', url: '/api/login', payload: { email, password } })

describe('while an embedded Burrow runs', () => {
  // With PostgreSQL the commands may run beside the server.
  const embedded = !process.env.DATABASE_URL?.startsWith('postgres')
  it.skipIf(!embedded)(
    'refuses clearly and changes nothing',
    async () => {
      const res = await burrowProcess(
        ['users', 'reset-password', t.creds.email, '--password', 'a-Very-long-secret-42'],
        env,
      )
      expect(res.code).toBe(1)
      expect(res.stderr).toContain(`Burrow (process ${process.pid}) is running on ${t.dataDir}`)
      expect(res.stderr).toContain('stop it first')
      const ok = await login(t.burrow, t.creds.email, t.creds.password)
      expect(ok.statusCode).toBe(200)
    },
    120_000,
  )
})

describe('with Burrow stopped', () => {
  beforeAll(async () => {
    // Stop the app but keep its data directory.
    await t.burrow.close()
  })

  it('resets a password: the new one logs in, the old one no longer does', async () => {
    const res = await cli(['users', 'reset-password', t.creds.email], env)
    expect(res.code, res.stderr).toBe(0)
    const password = res.stdout.trim()
    expect(password.length).toBeGreaterThanOrEqual(12)
    expect(res.stderr).toContain('every session of theirs has ended')
    await withRunningApp(async (burrow) => {
      expect((await login(burrow, t.creds.email, password)).statusCode).toBe(200)
      expect((await login(burrow, t.creds.email, t.creds.password)).statusCode).toBe(400)
    })
  }, 120_000)

  it('refuses a weak chosen password as bad usage', async () => {
    const res = await cli(['users', 'reset-password', t.creds.email, '--password', 'short'], env)
    expect(res.code).toBe(2)
    expect(res.stderr).toContain('--password: This password is too short')
  })

  it('creates a user in the first organization who can log in, and lists them', async () => {
    const res = await cli(
      ['users', 'create', 'Ops@Example.com', '--level', 'admin', '--password', 'correct-horse-battery-9', '--json'],
      env,
    )
    expect(res.code, res.stderr).toBe(0)
    const created = JSON.parse(res.stdout)
    expect(created).toMatchObject({ email: 'ops@example.com', level: 'admin' })
    expect(created.password).toBeUndefined()

    const again = await cli(['users', 'create', 'ops@example.com'], env)
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('exists already')

    const list = await cli(['users', 'list', '--json'], env)
    expect(list.code).toBe(0)
    const users = JSON.parse(list.stdout) as {
      email: string
      two_factor: boolean
      organizations: { level: string }[]
    }[]
    expect(users.map((u) => [u.email, u.organizations.map((o) => o.level)])).toEqual([
      [t.creds.email, ['owner']],
      ['ops@example.com', ['admin']],
    ])
    await withRunningApp(async (burrow) => {
      expect((await login(burrow, 'ops@example.com', 'correct-horse-battery-9')).statusCode).toBe(200)
    })
  }, 120_000)

  it('turns off two-factor authentication for a user locked out of it', async () => {
    const user = await cli(['users', 'list', '--json'], env)
    const id = (JSON.parse(user.stdout) as { id: number; email: string }[]).find((u) => u.email === t.creds.email)?.id
    // An authenticator and backup codes, as the web app's setup leaves them.
    await withRunningApp(async (burrow) => {
      const db = burrow.meta.db as unknown as import('kysely').Kysely<Record<string, Record<string, unknown>>>
      await db
        .insertInto('totp_devices')
        .values({ user_id: id, secret_hex: 'ab'.repeat(20), last_step: 0, created_at: new Date().toISOString() })
        .execute()
      await db
        .insertInto('backup_codes')
        .values({ user_id: id, code_hash: 'x', created_at: new Date().toISOString() })
        .execute()
    })
    const listed = JSON.parse((await cli(['users', 'list', '--json'], env)).stdout) as {
      email: string
      two_factor: boolean
    }[]
    expect(listed.find((u) => u.email === t.creds.email)?.two_factor).toBe(true)

    const res = await cli(['users', 'disable-2fa', t.creds.email, '--json'], env)
    expect(res.code, res.stderr).toBe(0)
    expect(JSON.parse(res.stdout)).toEqual({ email: t.creds.email, had_two_factor: true })
    await withRunningApp(async (burrow) => {
      const db = burrow.meta.db as unknown as import('kysely').Kysely<Record<string, Record<string, unknown>>>
      expect(await db.selectFrom('totp_devices').selectAll().execute()).toEqual([])
      expect(await db.selectFrom('backup_codes').selectAll().execute()).toEqual([])
    })
  }, 120_000)

  it('fails for an unknown user and exits 2 for a malformed e-mail', async () => {
    const unknown = await cli(['users', 'disable-2fa', 'nobody@example.com'], env)
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('no user with the e-mail nobody@example.com')
    const malformed = await cli(['users', 'create', 'not-an-email'], env)
    expect(malformed.code).toBe(2)
  })
})
