// A fatal error must end the real server process quickly and visibly (a non-zero exit or a signal), so that a
// supervisor starts a new one: each case starts `burrow start` as `npm start` does, in its own process, causes
// one fault inside it (test/helpers/fault-preload.ts) and waits for the process to end.
import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '..')
const started: { child: ChildProcess; dataDir: string }[] = []

async function startServer(fault: string, nodeArgs: string[] = []) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-fatal-'))
  const port = 30_000 + Math.floor(Math.random() * 5000)
  const child = spawn(
    process.execPath,
    [
      '--max-semi-space-size=64',
      ...nodeArgs,
      '--import',
      'tsx',
      '--import',
      './test/helpers/fault-preload.ts',
      'src/main.ts',
      'start',
    ],
    {
      cwd: root,
      env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'error', BURROW_TEST_FAULT: fault },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  started.push({ child, dataDir })
  let stderr = ''
  child.stderr?.on('data', (d) => {
    stderr += d
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  await new Promise<void>((resolve, reject) => {
    let out = ''
    child.stdout?.on('data', (d) => {
      out += d
      if (out.includes('try: curl')) resolve()
    })
    void exited.then(() => reject(new Error(`server exited while starting: ${stderr}`)))
  })
  const health = await fetch(`http://127.0.0.1:${port}/_health`)
  expect(health.status).toBe(200)
  return { child, exited, stderr: () => stderr }
}

/** Causes the fault and measures how long the process takes to end (at most `withinMs`). */
async function faultAndWait(server: Awaited<ReturnType<typeof startServer>>, withinMs: number) {
  const faultedAt = Date.now()
  server.child.kill('SIGUSR2')
  const outcome = await Promise.race([
    server.exited,
    new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), withinMs)),
  ])
  return { outcome, elapsedMs: Date.now() - faultedAt }
}

afterEach(() => {
  for (const { child, dataDir } of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
})

describe('a fatal error ends the server process', () => {
  it('on an uncaught exception, reporting it', async () => {
    const server = await startServer('uncaught')
    const { outcome } = await faultAndWait(server, 5_000)
    expect(outcome).not.toBe('still running')
    if (outcome === 'still running') return
    expect(outcome.code === null ? outcome.signal : outcome.code).not.toBe(0)
    expect(server.stderr()).toContain('an uncaught test fault')
  }, 60_000)

  it('on an unhandled promise rejection', async () => {
    const server = await startServer('rejection')
    const { outcome } = await faultAndWait(server, 5_000)
    expect(outcome).not.toBe('still running')
    expect(server.stderr()).toContain('an unhandled test rejection')
  }, 60_000)

  it('on an uncaught exception while an embedded ClickHouse query is running', async () => {
    const server = await startServer('uncaught-during-query')
    const { outcome } = await faultAndWait(server, 5_000)
    expect(outcome).not.toBe('still running')
    expect(server.stderr()).toContain('while a query runs')
  }, 60_000)

  it('when the JavaScript heap runs out (V8 aborts; chDB must not hold the abort)', async () => {
    const server = await startServer('oom', ['--max-old-space-size=160'])
    const { outcome } = await faultAndWait(server, 30_000)
    expect(outcome).toEqual({ code: null, signal: 'SIGABRT' })
    expect(server.stderr()).toContain('JavaScript heap out of memory')
  }, 90_000)
})
