import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '..')

// `npm start` runs the compiled server from dist/ (built by `npm install`'s prepare step, rebuilt when a source is
// newer): started exactly as package.json's start script does, it must come up healthy.
it('starts the built server as npm start does and answers /_health', async () => {
  const start = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start as string
  const [command, ...args] = start.split(' ')
  expect(command).toBe('node')
  expect(args).toContain('scripts/start.mjs')
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-built-'))
  const port = 19_000 + Math.floor(Math.random() * 1000)
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (d) => {
    output += d
  })
  child.stderr.on('data', (d) => {
    output += d
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  try {
    const until = Date.now() + 280_000
    let health: Response | undefined
    while (!health) {
      if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}: ${output}`)
      if (Date.now() > until) throw new Error(`not healthy in time: ${output}`)
      health = await fetch(`http://127.0.0.1:${port}/_health`).catch(() => undefined)
      if (!health) await new Promise((r) => setTimeout(r, 200))
    }
    expect(health.status).toBe(200)
    expect(await health.json()).toMatchObject({ status: 'ok' })
    // It runs the compiled code, not the sources.
    expect(fs.existsSync(path.join(root, 'dist', 'main.js'))).toBe(true)
    expect(fs.existsSync(path.join(root, 'dist', '.built'))).toBe(true)
  } finally {
    child.kill('SIGTERM')
    await exited
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}, 300_000)
