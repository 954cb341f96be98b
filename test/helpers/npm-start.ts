// A server started exactly as package.json's start script does (the compiled build, `npm start`'s Node flags), on a
// fresh data dir and port of its own, waited for until `/_health` answers. For the tests of what `npm start` runs.
import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '../..')

export interface NpmStarted {
  child: ChildProcess
  /** The Node arguments of the start script (flags, then scripts/start.mjs and its arguments). */
  args: string[]
  url: string
  dataDir: string
  /** What it printed so far (stdout and stderr). */
  output(): string
  stop(): Promise<void>
}

export async function npmStart(env: Record<string, string> = {}): Promise<NpmStarted> {
  const start = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start as string
  const [command, ...args] = start.split(' ')
  if (command !== 'node') throw new Error(`the start script does not run node: ${start}`)
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-npm-start-'))
  const port = 18_000 + Math.floor(Math.random() * 2000)
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', DATABASE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout?.on('data', (d) => {
    output += d
  })
  child.stderr?.on('data', (d) => {
    output += d
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  const stop = async () => {
    child.kill('SIGTERM')
    await exited
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
  const url = `http://127.0.0.1:${port}`
  // The first start after a source change builds the server first (scripts/start.mjs).
  const until = Date.now() + 280_000
  while (
    !(await fetch(`${url}/_health`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (child.exitCode !== null || Date.now() > until) {
      await stop()
      throw new Error(`${child.exitCode !== null ? `exited with ${child.exitCode}` : 'not healthy in time'}: ${output}`)
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  return { child, args, url, dataDir, output: () => output, stop }
}
