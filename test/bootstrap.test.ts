import { execSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { secureDataDir } from '../src/bootstrap.js'
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
      if (/Burrow is running at[\s\S]*\n\n/.test(output)) resolve(output)
    })
    child.stderr.on('data', (d) => {
      output += d
    })
    child.on('exit', (code) => reject(new Error(`exited with ${code}: ${output}`)))
  })
  const stopped = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, ready, stopped }
}

/** Every address a start banner prints answers (with the demo key), and the shell snippets it prints run. */
async function expectBannerWorks(printed: string, key: string) {
  const urls = [...new Set(printed.match(/https?:\/\/[^\s"')]+/g) ?? [])]
  expect(urls.length).toBeGreaterThan(1)
  for (const url of urls) {
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } })
    expect(res.status, url).toBe(200)
  }
  for (const [, snippet] of printed.matchAll(/\$\((node -p "[^"]+")\)/g)) {
    expect(execSync(snippet, { encoding: 'utf8' }).trim(), snippet).toBe(key)
  }
}

/** Files and directories under `dir` that someone other than the owner may read, write or enter. */
function openToOthers(dir: string): string[] {
  const found: string[] = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name)
    if (!entry.isSymbolicLink() && (fs.statSync(full).mode & 0o077) !== 0) found.push(full)
  }
  return found
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
      expect(printed).toContain(creds.password)
      expect(printed).toContain(`http://127.0.0.1:${port}`)

      const res = await fetch(`${creds.url}/api/projects/`, {
        headers: { authorization: `Bearer ${creds.personal_api_key}` },
      })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { results: { id: number; api_token: string }[] }
      expect(body.results[0]).toMatchObject({ id: creds.project_id, api_token: creds.project_api_key })
      await expectBannerWorks(printed, creds.personal_api_key)

      first.child.kill('SIGTERM')
      expect(await first.stopped).toBe(0)
      // Only the owner may read the stores, the capture log and the credentials.
      expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700)
      expect(fs.statSync(path.join(dataDir, 'burrow.sqlite')).mode & 0o777).toBe(0o600)
      expect(fs.statSync(path.join(dataDir, 'chdb')).mode & 0o777).toBe(0o700)
      expect(fs.statSync(path.join(dataDir, 'wal')).mode & 0o777).toBe(0o700)
      expect(openToOthers(dataDir)).toEqual([])

      const second = startServer(dataDir, port)
      const again = await second.ready
      // Secrets are printed once: later starts say where they are and how to make a key.
      expect(again).not.toContain(creds.personal_api_key)
      expect(again).not.toContain(creds.password)
      expect(again).toContain(file)
      expect(again).toContain('npm run burrow -- keys create')
      expect(JSON.parse(fs.readFileSync(file, 'utf8')).personal_api_key).toBe(creds.personal_api_key)
      const health = await fetch(`${creds.url}/_health`)
      expect(health.status).toBe(200)
      await expectBannerWorks(again, creds.personal_api_key)
      second.child.kill('SIGTERM')
      expect(await second.stopped).toBe(0)
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 90_000)
})

describe('data directory', () => {
  it('creates it owner-only, and tightens one an older Burrow left readable to others', () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-modes-'))
    try {
      const fresh = path.join(parent, 'fresh')
      secureDataDir(loadConfig({ DATA_DIR: fresh }))
      expect(fs.statSync(fresh).mode & 0o777).toBe(0o700)
      expect(fs.statSync(path.join(fresh, 'burrow.sqlite')).mode & 0o777).toBe(0o600)
      expect(fs.statSync(path.join(fresh, 'chdb')).mode & 0o777).toBe(0o700)
      expect(fs.statSync(path.join(fresh, 'wal')).mode & 0o777).toBe(0o700)

      const old = path.join(parent, 'old')
      fs.mkdirSync(path.join(old, 'chdb'), { recursive: true, mode: 0o755 })
      fs.chmodSync(old, 0o755)
      for (const name of ['burrow.sqlite', 'burrow.sqlite-wal'])
        fs.writeFileSync(path.join(old, name), '', { mode: 0o644 })
      secureDataDir(loadConfig({ DATA_DIR: old }))
      expect(fs.statSync(old).mode & 0o777).toBe(0o700)
      expect(fs.statSync(path.join(old, 'chdb')).mode & 0o777).toBe(0o700)
      expect(fs.statSync(path.join(old, 'burrow.sqlite')).mode & 0o777).toBe(0o600)
      expect(fs.statSync(path.join(old, 'burrow.sqlite-wal')).mode & 0o777).toBe(0o600)

      // A directory that holds other things is not Burrow's to lock: only Burrow's own parts are.
      const shared = path.join(parent, 'shared')
      fs.mkdirSync(shared, { mode: 0o755 })
      fs.chmodSync(shared, 0o755)
      fs.writeFileSync(path.join(shared, 'notes.txt'), 'x')
      secureDataDir(loadConfig({ DATA_DIR: shared }))
      expect(fs.statSync(shared).mode & 0o777).toBe(0o755)
      expect(fs.statSync(path.join(shared, 'burrow.sqlite')).mode & 0o777).toBe(0o600)
    } finally {
      fs.rmSync(parent, { recursive: true, force: true })
    }
  })
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
      rateLimits: {
        authFailuresPerMinute: 60,
        publicFailuresPerMinute: 600,
        queriesPerMinute: 240,
        queriesPerHour: 1200,
        queryConcurrency: 3,
      },
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
    [{ RATE_LIMIT_QUERY_CONCURRENCY: '-1' }, /RATE_LIMIT_QUERY_CONCURRENCY must be an integer between 0 and 1000/],
    [{ RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: 'lots' }, /RATE_LIMIT_AUTH_FAILURES_PER_MINUTE must be an integer/],
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
