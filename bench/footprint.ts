/**
 * Footprint (#18): time from start to a healthy `/_health` and resident memory, for Burrow started as `npm start`
 * does (the compiled server), beside two baselines measured in the same run on the same machine:
 * - a Fastify hello-world (the floor for any Node HTTP service), and
 * - Burrow's sources run through tsx (what `npm start` did before it ran compiled code).
 * First start = empty data dir (migrations, demo account); warm start = the same dir again. Idle RSS is read 5 s
 * after healthy; then (BENCH_CAPTURE_SECONDS, default 20) single-event capture back to back from 8 clients, and
 * RSS at its peak and again after 30 s idle.
 *
 * Run: `npx tsx bench/footprint.ts` (build first: `npm run build`).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { printTable, realisticEvent, root } from './lib.js'

const CAPTURE_SECONDS = Number(process.env.BENCH_CAPTURE_SECONDS ?? 20)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
}

async function healthyAfter(port: number, child: ChildProcess, path_ = '/_health'): Promise<number> {
  const started = performance.now()
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`)
    const ok = await fetch(`http://127.0.0.1:${port}${path_}`)
      .then((r) => r.ok)
      .catch(() => false)
    if (ok) return performance.now() - started
    await new Promise((r) => setTimeout(r, 10))
  }
}

async function stop(child: ChildProcess) {
  child.kill('SIGTERM')
  if (child.exitCode === null) await new Promise((r) => child.once('exit', r))
}

interface Started {
  child: ChildProcess
  port: number
  startMs: number
}

async function startProcess(args: string[], env: Record<string, string>, healthPath?: string): Promise<Started> {
  const port = 21_000 + Math.floor(Math.random() * 4000)
  const began = performance.now()
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, PORT: String(port), LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  await healthyAfter(port, child, healthPath)
  return { child, port, startMs: performance.now() - began }
}

const HELLO = `
const app = require('fastify')()
app.get('/_health', async () => ({ status: 'ok' }))
app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
`

async function capture(port: number, token: string, seconds: number): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 })
  const until = Date.now() + seconds * 1000
  let sent = 0
  const client = async (c: number) => {
    for (let i = c; Date.now() < until; i += 8) {
      const body = JSON.stringify({ api_key: token, ...realisticEvent(i, token) })
      await new Promise<void>((resolve) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            path: '/i/v0/e/',
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json' },
          },
          (res) => {
            res.resume()
            res.on('end', () => resolve())
          },
        )
        req.on('error', () => resolve())
        req.end(body)
      })
      sent++
    }
  }
  await Promise.all(Array.from({ length: 8 }, (_, c) => client(c)))
  agent.destroy()
  return sent
}

const results: Record<string, number[]> = {}
const record = (name: string, value: number) => {
  results[name] ??= []
  results[name].push(value)
}

if (!fs.existsSync(path.join(root, 'dist', 'main.js'))) throw new Error('build first: npm run build')

for (let run = 0; run < RUNS; run++) {
  // Baseline: Fastify hello-world.
  const hello = await startProcess(['-e', HELLO], {})
  record('hello-world start (ms)', hello.startMs)
  await new Promise((r) => setTimeout(r, 2000))
  record('hello-world idle RSS (MB)', rssMb(hello.child.pid as number))
  await stop(hello.child)

  // Burrow through tsx (the old npm start) and compiled (npm start now), alternating, fresh dir then warm.
  for (const [label, args] of [
    ['tsx sources', ['--max-semi-space-size=64', '--import', 'tsx', 'src/main.ts', 'start']],
    ['compiled (npm start)', ['--max-semi-space-size=64', 'dist/main.js', 'start']],
  ] as const) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-footprint-'))
    const first = await startProcess([...args], { DATA_DIR: dataDir })
    record(`${label}: first start (ms)`, first.startMs)
    await stop(first.child)
    const warm = await startProcess([...args], { DATA_DIR: dataDir })
    record(`${label}: warm start (ms)`, warm.startMs)
    await new Promise((r) => setTimeout(r, 5000))
    record(`${label}: idle RSS 5 s after start (MB)`, rssMb(warm.child.pid as number))
    if (label.startsWith('compiled') && CAPTURE_SECONDS > 0) {
      const token = JSON.parse(fs.readFileSync(path.join(dataDir, 'credentials.json'), 'utf8')).project_api_key
      let peak = 0
      const watch = setInterval(() => {
        peak = Math.max(peak, rssMb(warm.child.pid as number))
      }, 200)
      const sent = await capture(warm.port, token, CAPTURE_SECONDS)
      clearInterval(watch)
      record(`${label}: capture events/s (8 clients)`, sent / CAPTURE_SECONDS)
      record(`${label}: peak RSS during capture (MB)`, peak)
      await new Promise((r) => setTimeout(r, 30_000))
      record(`${label}: RSS 30 s after capture (MB)`, rssMb(warm.child.pid as number))
    }
    await stop(warm.child)
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
printTable(
  `Footprint, median of ${RUNS} runs (load average ${os.loadavg()[0].toFixed(1)} at the end)`,
  Object.entries(results).map(([k, xs]) => [
    k,
    `${median(xs).toFixed(0)}   (runs: ${xs.map((x) => x.toFixed(0)).join(', ')})`,
  ]),
)
