import { execFile, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import zlib from 'node:zlib'
import { type CliIo, runCli } from '../../src/cli/program.js'
import type { TestApp } from '../helpers/app.js'

export const root = path.resolve(import.meta.dirname, '../..')
const run = promisify(execFile)

export interface CliResult {
  code: number | 'serving'
  stdout: string
  stderr: string
}

/** The command functions in this process, output captured. */
export async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  let stdout = ''
  let stderr = ''
  const io: CliIo = {
    out: (text) => {
      stdout += text
    },
    err: (text) => {
      stderr += text
    },
    errIsTty: false,
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
  }
  const refuse = async () => {
    throw new Error('not in tests')
  }
  const code = await runCli(args, { start: refuse, migrate: refuse }, io)
  return { code, stdout, stderr }
}

/** The real `burrow` in its own process. */
export async function burrowProcess(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

/** Starts `burrow …` in its own process without waiting for it. */
export function spawnBurrow(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

export function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-cli-'))
}

export function writeLines(file: string, records: unknown[], options: { gzip?: boolean } = {}) {
  const text = records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n'
  fs.writeFileSync(file, options.gzip ? zlib.gzipSync(text) : text)
  return file
}

/** Rows of a HogQL query in one project. */
export async function hogql(t: TestApp, projectId: number, query: string): Promise<unknown[][]> {
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: `/api/projects/${projectId}/query/`,
    headers: t.auth,
    payload: { query: { kind: 'HogQLQuery', query } },
  })
  if (res.statusCode !== 200) throw new Error(`query failed: ${res.body}`)
  return res.json().results
}

/** A new project in the demo organization (a paid plan: historical imports allowed), with its token. */
export async function newProject(t: TestApp, name: string): Promise<{ id: number; token: string }> {
  const res = await t.burrow.app.inject({ method: 'POST', url: '/api/projects/', headers: t.auth, payload: { name } })
  if (res.statusCode !== 201) throw new Error(`project: ${res.body}`)
  return { id: res.json().id, token: res.json().api_token }
}

/** ISO time `days` before now (historical imports need events at least 48 hours old). */
export const daysAgo = (days: number, plusMinutes = 0) =>
  new Date(Date.now() - days * 86_400_000 + plusMinutes * 60_000).toISOString()
