import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { burrowProcess, cli, tempDir } from './helpers.js'

// The command line itself: --help of every command, exit codes, and `burrow doctor` on a real data directory.

describe('--help', () => {
  it.each([
    [[]],
    ['start'],
    ['migrate'],
    ['import'],
    ['users'],
    ['users', 'create'],
    ['users', 'list'],
    ['users', 'reset-password'],
    ['users', 'disable-2fa'],
    ['doctor'],
    ['export'],
    ['backup'],
    ['restore'],
  ])('burrow %s --help prints its usage and exits 0', async (...words) => {
    const res = await cli([...words.flat(), '--help'])
    expect(res.code).toBe(0)
    expect(res.stdout).toMatch(/^Usage: burrow/)
  })

  it('burrow keys --help prints the keys usage', async () => {
    const res = await cli(['keys', '--help'])
    expect(res.code).toBe(0)
    expect(res.stdout).toContain('burrow keys create --label')
  })

  it('works in its own process, with exit code 2 for an unknown command', async () => {
    const help = await burrowProcess(['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('import [options] <files...>')
    const unknown = await burrowProcess(['frobnicate'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("unknown command 'frobnicate'")
  }, 120_000)
})

describe('burrow doctor', () => {
  let t: TestApp
  let empty: string
  beforeAll(async () => {
    t = await startTestApp()
    empty = tempDir()
  }, 180_000)
  afterAll(async () => {
    await t.close()
    fs.rmSync(empty, { recursive: true, force: true })
  })

  it('reports each store with its version, disk space and the capture log of a data directory', async () => {
    const res = await cli(['doctor', '--json'], {
      DATA_DIR: t.dataDir,
      DATABASE_URL: t.burrow.config.databaseUrl,
      // Nothing listens here: the server check is skipped, not failed.
      PORT: '1',
    })
    const report = JSON.parse(res.stdout) as { ok: boolean; checks: { name: string; status: string; detail: string }[] }
    const byName = Object.fromEntries(report.checks.map((c) => [c.name, c]))
    expect(res.code, res.stdout).toBe(0)
    expect(report.ok).toBe(true)
    expect(byName.configuration.status).toBe('ok')
    expect(byName['metadata store'].status).toBe('ok')
    expect(byName['metadata store'].detail).toMatch(/migrations applied/)
    expect(byName['disk space'].detail).toMatch(/GiB free/)
    expect(byName['capture log'].status).toBe('ok')
    // In this process the engine's holder is the command itself, so it asks the engine directly.
    expect(byName['event store']).toMatchObject({ status: 'ok' })
    expect(byName['event store'].detail).toMatch(/^(embedded chDB|ClickHouse server) \d+\./)
  })

  it('fails on invalid configuration with the fix, exit 1', async () => {
    const res = await cli(['doctor'], { DATA_DIR: empty, PORT: 'eighty' })
    expect(res.code).toBe(1)
    expect(res.stdout).toMatch(/^fail {2}configuration: .*PORT/m)
    expect(res.stdout).toContain('fix: correct that environment variable')
  })

  it('says what to do for a data directory Burrow has not started in yet', async () => {
    const res = await cli(['doctor', '--json'], { DATA_DIR: path.join(empty, 'new'), PORT: '1' })
    const report = JSON.parse(res.stdout) as { checks: { name: string; status: string; fix?: string }[] }
    expect(report.checks.find((c) => c.name === 'data directory')).toMatchObject({ status: 'warn' })
    expect(report.checks.find((c) => c.name === 'metadata store')?.fix).toContain('burrow start')
  })
})
