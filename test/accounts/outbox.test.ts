import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { simpleParser } from 'mailparser'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type Burrow, buildApp } from '../../src/app.js'
import { ensureDemoAccount } from '../../src/bootstrap.js'
import { loadConfig } from '../../src/config.js'
import { freshPostgresUrl } from '../helpers/app.js'

// Without SMTP_URL every mail is written to <DATA_DIR>/outbox/ as an .eml file, and the start-up log says so.

let burrow: Burrow
let dataDir: string
let dropDb: (() => Promise<void>) | undefined
const logLines: string[] = []
let email = ''

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-test-'))
  const env: Record<string, string> = { DATA_DIR: dataDir, LOG_LEVEL: 'info', SITE_URL: 'http://burrow.test' }
  if (process.env.DATABASE_URL?.startsWith('postgres')) {
    const db = await freshPostgresUrl(process.env.DATABASE_URL)
    env.DATABASE_URL = db.url
    dropDb = db.drop
  }
  burrow = await buildApp(loadConfig(env), { logStream: { write: (line) => logLines.push(line) } })
  email = (await ensureDemoAccount(burrow)).credentials.email
  await burrow.app.ready()
})
afterAll(async () => {
  await burrow.close()
  await dropDb?.()
  fs.rmSync(dataDir, { recursive: true, force: true })
})

it('writes mail to the outbox as .eml files and logs where mail goes', async () => {
  const outbox = path.join(dataDir, 'outbox')
  expect(logLines.some((l) => l.includes(`mail goes to ${outbox}`))).toBe(true)
  const res = await burrow.app.inject({ method: 'POST', url: '/api/reset/', payload: { email } })
  expect(res.statusCode).toBe(204)
  let files: string[] = []
  for (let i = 0; i < 50 && files.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 100))
    files = fs.existsSync(outbox) ? fs.readdirSync(outbox).filter((f) => f.endsWith('.eml')) : []
  }
  expect(files).toHaveLength(1)
  expect(fs.statSync(path.join(outbox, files[0])).mode & 0o077).toBe(0)
  const parsed = await simpleParser(fs.readFileSync(path.join(outbox, files[0])))
  expect(parsed.subject).toBe('Reset your Burrow password')
  const link = /http:\/\/burrow\.test\/reset\/([0-9a-f-]{36})\/(\S+)/.exec(parsed.text ?? '')
  expect(link).not.toBeNull()
  const check = await burrow.app.inject({ method: 'GET', url: `/api/reset/${link?.[1]}/?token=${link?.[2]}` })
  expect(check.statusCode).toBe(200)
})
