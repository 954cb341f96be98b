import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../src/config.js'

const root = path.resolve(import.meta.dirname, '..')

/** Starts `npm start`'s command on a free port and resolves once it prints its URL. */
function startServer(dataDir: string, port: number) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'start'], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      output += d
      if (output.includes('try: curl')) resolve(output)
    })
    child.stderr.on('data', (d) => {
      output += d
    })
    child.on('exit', (code) => reject(new Error(`exited with ${code}: ${output}`)))
  })
  const stopped = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, ready, stopped }
}

describe('first start', () => {
  it('creates the demo account, writes credentials with mode 0600, and reuses them on the next start', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-first-'))
    const port = 18_000 + Math.floor(Math.random() * 1000)
    try {
      const first = startServer(dataDir, port)
      const printed = await first.ready
      const file = path.join(dataDir, 'credentials.json')
      expect(fs.statSync(file).mode & 0o777).toBe(0o600)
      const creds = JSON.parse(fs.readFileSync(file, 'utf8'))
      expect(Object.keys(creds).sort()).toEqual(
        ['email', 'password', 'personal_api_key', 'project_api_key', 'project_id', 'url'].sort(),
      )
      expect(printed).toContain(creds.personal_api_key)
      expect(printed).toContain(`http://127.0.0.1:${port}`)

      const res = await fetch(`${creds.url}/api/projects/`, {
        headers: { authorization: `Bearer ${creds.personal_api_key}` },
      })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { results: { id: number; api_token: string }[] }
      expect(body.results[0]).toMatchObject({ id: creds.project_id, api_token: creds.project_api_key })

      first.child.kill('SIGTERM')
      expect(await first.stopped).toBe(0)

      const second = startServer(dataDir, port)
      const again = await second.ready
      expect(again).toContain('Using demo credentials')
      expect(JSON.parse(fs.readFileSync(file, 'utf8')).personal_api_key).toBe(creds.personal_api_key)
      const health = await fetch(`${creds.url}/_health`)
      expect(health.status).toBe(200)
      second.child.kill('SIGTERM')
      expect(await second.stopped).toBe(0)
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 90_000)
})

describe('configuration', () => {
  it('uses embedded defaults', () => {
    const config = loadConfig({ DATA_DIR: '/tmp/x' })
    expect(config).toMatchObject({
      port: 8010,
      databaseUrl: 'sqlite:/tmp/x/burrow.sqlite',
      clickhouseUrl: 'chdb:/tmp/x/chdb',
      siteUrl: 'http://127.0.0.1:8010',
      engineThreadNice: 10,
    })
  })

  it.each([
    [{ PORT: 'abc' }, /PORT must be an integer/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must start with/],
    [{ CLICKHOUSE_URL: 'tcp://x' }, /CLICKHOUSE_URL must start with/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
    [{ SMTP_URL: 'mail.example.com' }, /SMTP_URL must start with/],
    [{ SITE_URL: 'not a url' }, /SITE_URL must be an absolute URL/],
    [{ ENGINE_THREAD_NICE: '-5' }, /ENGINE_THREAD_NICE must be an integer between 0 and 19/],
  ])('rejects %o with one clear line', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError)
    expect(() => loadConfig(env)).toThrow(message)
  })

  it('fails at start with one clear line on bad configuration', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'start'], {
      cwd: root,
      env: { ...process.env, PORT: 'seventy' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (d) => {
      stderr += d
    })
    const code = await new Promise((r) => child.on('exit', r))
    expect(code).toBe(1)
    expect(stderr.trim()).toBe(
      'burrow: invalid configuration: PORT must be an integer between 0 and 65535, got "seventy"',
    )
  }, 30_000)
})
