/**
 * Footprint (#18): time from start to a healthy `/_health` and resident memory, for Burrow started as `npm start`
 * does (the compiled server), beside two baselines measured in the same run on the same machine:
 * - a Fastify hello-world (the floor for any Node HTTP service), and
 * - Burrow's sources run through tsx (what `npm start` did before it ran compiled code; BENCH_TSX=0 leaves it out).
 * First start = empty data dir (migrations, demo account); warm start = the same dir again. Idle RSS is read 5 s
 * after healthy (the embedded engine is not open yet: nothing has needed it); then one capture request (which
 * opens the engine) is timed, RSS read 5 s later; then (BENCH_CAPTURE_SECONDS, default 20) single-event capture
 * back to back from 8 clients, and RSS at its peak and again after 30 s idle.
 *
 * Compiled builds compared side by side (A/B, alternating in each run): BENCH_BUILDS="label=dir,label=dir", each
 * dir holding a compiled `main.js` one level under the repository (default: `compiled (npm start)=dist`). Each
 * build runs with the Node flags of `npm start` (the "start" script in package.json), or with those written after
 * a `;` (`label=dir;--max-semi-space-size=64`, or `label=dir;` for none), to compare flags on the same build.
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

/** The Node flags `npm start` runs the server with (those before the start script in package.json). */
const startFlags = (() => {
  const script: string = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start
  const words = script.split(/\s+/)
  return words
    .slice(
      1,
      words.findIndex((w) => w.endsWith('.mjs') || w.endsWith('.js')),
    )
    .filter(Boolean)
})()

const builds = (process.env.BENCH_BUILDS ?? 'compiled (npm start)=dist').split(',').map((entry) => {
  const label = entry.slice(0, entry.indexOf('='))
  const [dir, flags] = entry.slice(entry.indexOf('=') + 1).split(';')
  if (!label || !dir || !fs.existsSync(path.join(root, dir, 'main.js')))
    throw new Error(`no ${dir}/main.js: build first`)
  const nodeFlags = flags === undefined ? startFlags : flags.split(/\s+/).filter(Boolean)
  return [label, [...nodeFlags, `${dir}/main.js`, 'start']] as const
})
const variants = [
  ...(process.env.BENCH_TSX === '0'
    ? []
    : [['tsx sources', [...startFlags, '--import', 'tsx', 'src/main.ts', 'start']] as const]),
  ...builds,
]

async function eventStoreState(port: number): Promise<string> {
  const body = (await (await fetch(`http://127.0.0.1:${port}/_health`)).json()) as { event_store?: string }
  return body.event_store ?? 'open (not reported)'
}

const loads: number[] = []
for (let run = 0; run < RUNS; run++) {
  // Baseline: Fastify hello-world.
  const hello = await startProcess(['-e', HELLO], {})
  record('hello-world start (ms)', hello.startMs)
  await new Promise((r) => setTimeout(r, 2000))
  record('hello-world idle RSS (MB)', rssMb(hello.child.pid as number))
  await stop(hello.child)

  // Burrow through tsx (the old npm start) and compiled builds, alternating, fresh dir then warm.
  for (const [label, args] of run % 2 === 0 ? variants : [...variants].reverse()) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-footprint-'))
    const first = await startProcess([...args], { DATA_DIR: dataDir })
    record(`${label}: first start (ms)`, first.startMs)
    await stop(first.child)
    const warm = await startProcess([...args], { DATA_DIR: dataDir })
    record(`${label}: warm start (ms)`, warm.startMs)
    await new Promise((r) => setTimeout(r, 5000))
    record(`${label}: idle RSS 5 s after start (MB)`, rssMb(warm.child.pid as number))
    if (run === 0) console.log(`${label}: event store 5 s after start: ${await eventStoreState(warm.port)}`)
    if (label !== 'tsx sources' && CAPTURE_SECONDS > 0) {
      const token = JSON.parse(fs.readFileSync(path.join(dataDir, 'credentials.json'), 'utf8')).project_api_key
      const began = performance.now()
      const firstCapture = await fetch(`http://127.0.0.1:${warm.port}/i/v0/e/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_key: token, ...realisticEvent(0, token) }),
      })
      if (!firstCapture.ok) throw new Error(`first capture answered ${firstCapture.status}`)
      record(`${label}: first capture after start (ms)`, performance.now() - began)
      await new Promise((r) => setTimeout(r, 5000))
      record(`${label}: RSS 5 s after the first capture (MB)`, rssMb(warm.child.pid as number))
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
  loads.push(os.loadavg()[0])
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
printTable(
  `Footprint, median of ${RUNS} runs (load average ${loads.map((l) => l.toFixed(1)).join(', ')} at the end of each run)`,
  Object.entries(results).map(([k, xs]) => [
    k,
    `${median(xs).toFixed(0)}   (runs: ${xs.map((x) => x.toFixed(0)).join(', ')})`,
  ]),
)
