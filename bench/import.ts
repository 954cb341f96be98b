/**
 * `burrow import` against `/batch/` capture in the same run, on one server:
 * 1. Baseline: historical `/batch/` requests of 1,000 ~1 KB events (the shape `burrow import` sends, plain
 *    JSON) posted as fast as the server takes them from 4 connections — capture's own events/s.
 * 2. `burrow import` of a JSON-lines file of the same events (no uuids: each derived from its line), in its own
 *    process: events/s from its summary, and its peak RSS (flat memory: it must not grow with the file).
 *    The CLI is the compiled one `npx burrow` runs (dist/, built by `npm install`); BENCH_IMPORT_NODE_FLAGS adds
 *    flags to its node (e.g. a heap size, to compare).
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { printTable, realisticEvent, root, startServer } from './lib.js'

const EVENTS = Number(process.env.BENCH_IMPORT_EVENTS ?? 100_000)
const BASELINE_BATCHES = Number(process.env.BENCH_IMPORT_BASELINE_BATCHES ?? 60)
const BATCH = 1000
const CONCURRENCY = 4

/** A historical event: ~1 KB of posthog-js properties, three days or more in the past. */
function historicalEvent(i: number, token: string) {
  const ev = realisticEvent(i, token) as Record<string, unknown>
  delete ev.uuid
  ev.timestamp = new Date(Date.now() - 3 * 86_400_000 - i * 1000).toISOString()
  return ev
}

if (!fs.existsSync(path.join(root, 'dist', 'main.js'))) throw new Error('build first: npm run build')
const server = await startServer()
const token = server.credentials.project_api_key

// 1. Capture's own events/s for historical batches (fresh uuids in every request).
let next = 0
const started = performance.now()
async function worker() {
  for (;;) {
    const n = next++
    if (n >= BASELINE_BATCHES) return
    const batch = Array.from({ length: BATCH }, (_, i) => ({
      ...historicalEvent(n * BATCH + i, token),
      uuid: crypto.randomUUID(),
    }))
    const res = await fetch(`${server.url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: token, historical_migration: true, batch }),
    })
    if (!res.ok) throw new Error(`baseline: ${res.status} ${await res.text()}`)
  }
}
await Promise.all(Array.from({ length: CONCURRENCY }, worker))
const baselineSeconds = (performance.now() - started) / 1000
const baselineRate = (BASELINE_BATCHES * BATCH) / baselineSeconds

// 2. The same kind of events from a file through `burrow import`.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-bench-import-'))
const file = path.join(dir, 'events.jsonl')
const out = fs.createWriteStream(file)
for (let i = 0; i < EVENTS; i++) {
  if (!out.write(`${JSON.stringify(historicalEvent(i, token))}\n`)) {
    await new Promise<void>((r) => out.once('drain', r))
  }
}
await new Promise<void>((resolve) => out.end(resolve))
const fileBytes = fs.statSync(file).size

const child = spawn(
  '/usr/bin/time',
  [
    '-f',
    'maxrss_kb=%M',
    process.execPath,
    ...(process.env.BENCH_IMPORT_NODE_FLAGS ?? '').split(' ').filter(Boolean),
    // What `npx burrow` runs: the compiled CLI that `npm install` builds (no TypeScript loader in the process).
    path.join(root, 'dist', 'main.js'),
    'import',
    file,
    '--host',
    server.url,
    '--project-key',
    token,
    '--no-progress',
    '--json',
    '--concurrency',
    String(CONCURRENCY),
  ],
  { cwd: root, env: { ...process.env, LOG_LEVEL: 'error' }, stdio: ['ignore', 'pipe', 'pipe'] },
)
let stdout = ''
let stderr = ''
child.stdout.on('data', (d) => {
  stdout += d
})
child.stderr.on('data', (d) => {
  stderr += d
})
const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
await server.stop()
fs.rmSync(dir, { recursive: true, force: true })
fs.rmSync(server.dataDir, { recursive: true, force: true })
if (code !== 0) throw new Error(`burrow import exited ${code}: ${stderr}`)
const summary = JSON.parse(stdout) as { events: number; seconds: number }
const importRate = summary.events / summary.seconds
const rssMb = Number(/maxrss_kb=(\d+)/.exec(stderr)?.[1]) / 1024

printTable('Import benchmark', [
  ['machine', `${os.cpus().length} cores, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GB (shared with other work)`],
  ['/batch/ historical, 1,000-event batches, 4 in flight', `${Math.round(baselineRate)} events/s`],
  [
    `burrow import, ${EVENTS} events, ${(fileBytes / 1024 ** 2).toFixed(0)} MB file`,
    `${Math.round(importRate)} events/s`,
  ],
  ['import / capture', (importRate / baselineRate).toFixed(2)],
  ['burrow import peak RSS', `${rssMb.toFixed(0)} MB`],
])
