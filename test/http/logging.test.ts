import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Burrow, buildApp } from '../../src/app.js'
import { type Credentials, ensureDemoAccount } from '../../src/bootstrap.js'
import { loadConfig } from '../../src/config.js'
import { redactUrl } from '../../src/http/logging.js'
import { freshPostgresUrl } from '../helpers/app.js'

// The request log as an operator reads it: every line the app's logger writes, at the default level.
const lines: string[] = []
let burrow: Burrow
let creds: Credentials
let dataDir: string
let dropDb: (() => Promise<void>) | undefined

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-log-'))
  const env: Record<string, string> = { DATA_DIR: dataDir, LOG_LEVEL: 'info', INSTANCE_ID: 'burrow-log-7' }
  if (process.env.DATABASE_URL?.startsWith('postgres')) {
    const db = await freshPostgresUrl(process.env.DATABASE_URL)
    env.DATABASE_URL = db.url
    dropDb = db.drop
  }
  burrow = await buildApp(loadConfig(env), { logStream: { write: (line) => lines.push(line) } })
  creds = (await ensureDemoAccount(burrow)).credentials
  await burrow.app.ready()
})
afterAll(async () => {
  await burrow.close()
  await dropDb?.()
  fs.rmSync(dataDir, { recursive: true, force: true })
})

describe('request log', () => {
  it('names the process on every line (INSTANCE_ID), and job leases and query statuses by it too', async () => {
    await burrow.app.inject({ method: 'GET', url: '/_health' })
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ hostname: 'burrow-log-7', pid: process.pid })
    const started = await burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${creds.project_id}/query/`,
      headers: { authorization: `Bearer ${creds.personal_api_key}` },
      payload: { query: { kind: 'HogQLQuery', query: 'select 1' }, refresh: 'force_async', client_query_id: 'named-1' },
    })
    expect(started.statusCode, started.body).toBe(202)
    const row = await burrow.meta.db
      .selectFrom('query_statuses' as never)
      .select('owner' as never)
      .where('query_id' as never, '=', 'named-1' as never)
      .executeTakeFirst()
    expect((row as { owner: string } | undefined)?.owner).toMatch(new RegExp(`^burrow-log-7-${process.pid}-`))
  })

  it('refuses an INSTANCE_ID that is not a plain name', () => {
    expect(() => loadConfig({ DATA_DIR: dataDir, INSTANCE_ID: 'two words' })).toThrow('INSTANCE_ID must be')
    expect(loadConfig({ DATA_DIR: dataDir }).instanceId).toBe(os.hostname())
  })

  it('never holds a personal API key sent in the query string or a header', async () => {
    const key = creds.personal_api_key
    const good = await burrow.app.inject({ method: 'GET', url: `/api/projects/?personal_api_key=${key}&limit=5` })
    expect(good.statusCode).toBe(200)
    const bad = await burrow.app.inject({ method: 'GET', url: `/api/projects/?personal_api_key=${key}x` })
    expect(bad.statusCode).toBe(401)
    const header = await burrow.app.inject({
      method: 'GET',
      url: '/api/projects/',
      headers: { authorization: `Bearer ${key}`, cookie: `session=${key}` },
    })
    expect(header.statusCode).toBe(200)
    // A key-shaped value under any parameter name, percent-encoded names included.
    await burrow.app.inject({ method: 'GET', url: `/api/projects/?whatever=${key}&personal%5Fapi%5Fkey=${key}` })

    const log = lines.join('')
    expect(log).toContain('/api/projects/?personal_api_key=[redacted]&limit=5')
    expect(log).toContain('/api/projects/?whatever=[redacted]&personal%5Fapi%5Fkey=[redacted]')
    expect(log).not.toContain(key)
    expect(log).not.toContain(key.slice(4))
  })
})

describe('redactUrl', () => {
  it.each([
    ['/api/x/', '/api/x/'],
    ['/api/x/?limit=1', '/api/x/?limit=1'],
    ['/api/x/?personal_api_key=abc', '/api/x/?personal_api_key=[redacted]'],
    ['/api/x/?PASSWORD=hunter2&a=b', '/api/x/?PASSWORD=[redacted]&a=b'],
    ['/flags/definitions?token=phc_public', '/flags/definitions?token=phc_public'],
    ['/flags/definitions?token=phs_secret', '/flags/definitions?token=[redacted]'],
    ['/x?key=%zz&flag', '/x?key=%zz&flag'],
  ])('%s → %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected)
  })
})
