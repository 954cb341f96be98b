import { type ChildProcess, spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'

export const root = path.resolve(import.meta.dirname, '..')

export interface Server {
  url: string
  dataDir: string
  child: ChildProcess
  credentials: { project_api_key: string; personal_api_key: string; project_id: number }
  stop(): Promise<void>
}

/**
 * Starts Burrow the way `npm start` does, in its own process, on a fresh data directory; from this checkout, or
 * from the one at `cwd` (a build to compare with).
 */
export async function startServer(
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
  cwd = root,
): Promise<Server> {
  const dataDir = env.DATA_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-bench-'))
  const port = 20_000 + Math.floor(Math.random() * 5000)
  // The node flags of `npm start` (package.json), then the caller's.
  const child = spawn(
    process.execPath,
    ['--max-semi-space-size=64', '--expose-gc', ...nodeArgs, '--import', 'tsx', 'src/main.ts', 'start'],
    {
      cwd,
      env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'error', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  await new Promise<void>((resolve, reject) => {
    let out = ''
    child.stdout?.on('data', (d) => {
      out += d
      if (out.includes('try: curl')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`server exited (${code})`)))
  })
  const credentials = JSON.parse(fs.readFileSync(path.join(dataDir, 'credentials.json'), 'utf8'))
  return {
    url: `http://127.0.0.1:${port}`,
    dataDir,
    child,
    credentials,
    stop: async () => {
      child.kill('SIGTERM')
      await new Promise((r) => child.once('exit', r))
    },
  }
}

/** A Fastify hello-world in its own process answering `POST /flags` (the floor a benchmark compares with). */
export async function startHelloWorld(): Promise<{ url: string; stop: () => void }> {
  const port = 25_000 + Math.floor(Math.random() * 1000)
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const f = require('fastify')(); f.post('/flags', async () => ({ hello: 'world' })); f.listen({ port: ${port}, host: '127.0.0.1' }).then(() => console.log('ready'))`,
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  )
  await new Promise<void>((resolve) => child.stdout?.on('data', () => resolve()))
  return { url: `http://127.0.0.1:${port}/flags`, stop: () => child.kill() }
}

/** Fields of `/proc/<pid>[/task/<tid>]/stat` after the name (in parentheses, may hold spaces). */
const statFields = (stat: string) => stat.slice(stat.lastIndexOf(')') + 2).split(' ')
/** utime + stime (the 14th and 15th fields of the whole line, in clock ticks: 100 a second). */
const statSeconds = (fields: string[]) => (Number(fields[11]) + Number(fields[12])) / 100

/** CPU seconds (user + system) of every thread of a process so far (Linux). */
export function cpuSeconds(pid: number): number {
  return statSeconds(statFields(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')))
}

/** CPU seconds of a process's threads so far: its main thread, Node's other threads, the engine's threads. */
export function threadCpu(pid: number): { main: number; node: number; engine: number } {
  const out = { main: 0, node: 0, engine: 0 }
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const seconds = statSeconds(statFields(stat))
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      if (Number(tid) === pid) out.main += seconds
      else if (name === 'node' || name.startsWith('libuv')) out.node += seconds
      else out.engine += seconds
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out
}

/** A new PostgreSQL database on the server `adminUrl` names, and how to drop it. */
export async function freshDatabase(adminUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `burrow_bench_${crypto.randomBytes(5).toString('hex')}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl })
      await c.connect()
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await c.end()
    },
  }
}

/** A posthog-js-like `$pageview` of about 1 KB. */
export function realisticEvent(i: number, token: string): Record<string, unknown> {
  const user = `user-${i % 5000}`
  return {
    uuid: crypto.randomUUID(),
    event: i % 7 === 0 ? 'clicked button' : '$pageview',
    timestamp: new Date().toISOString(),
    properties: {
      distinct_id: user,
      token,
      $os: 'Mac OS X',
      $os_version: '14.5.0',
      $browser: i % 3 === 0 ? 'Firefox' : 'Chrome',
      $browser_version: 126,
      $device_type: 'Desktop',
      $current_url: `https://shop.example.com/products/${i % 200}?utm_source=newsletter`,
      $host: 'shop.example.com',
      $pathname: `/products/${i % 200}`,
      $raw_user_agent:
        'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
      $screen_height: 1117,
      $screen_width: 1728,
      $viewport_height: 1000,
      $viewport_width: 1728,
      $lib: 'web',
      $lib_version: '1.449.2',
      $insert_id: crypto.randomBytes(8).toString('hex'),
      $time: Date.now() / 1000,
      $device_id: `device-${i % 5000}`,
      $session_id: `session-${Math.floor(i / 20)}`,
      $window_id: `window-${Math.floor(i / 20)}`,
      $pageview_id: crypto.randomUUID(),
      $referrer: 'https://www.google.com/',
      $referring_domain: 'www.google.com',
      $is_identified: false,
      $process_person_profile: true,
      plan: ['free', 'pro', 'enterprise'][i % 3],
      cart_value: (i % 1000) / 10,
    },
  }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

type Measured = { ms: number; answer: string }

/**
 * An API call against the same question in hand-written SQL: one warm-up of each (their answers, to compare), then
 * `runs` alternating runs; the table rows of both p50s, their ratio against the goal, and both answers.
 */
export async function againstHandWritten(
  name: string,
  api: () => Promise<Measured>,
  sql: () => Promise<Measured>,
  runs: number,
  goal = 1.3,
): Promise<[string, string][]> {
  const first = [await api(), await sql()]
  const times: [number[], number[]] = [[], []]
  for (let i = 0; i < runs; i++) {
    times[0].push((await api()).ms)
    times[1].push((await sql()).ms)
  }
  const [a, b] = times.map((xs) =>
    percentile(
      [...xs].sort((x, y) => x - y),
      50,
    ),
  )
  return [
    [`${name}: API p50`, `${a.toFixed(0)} ms`],
    [`${name}: hand-written SQL p50`, `${b.toFixed(0)} ms`],
    [`${name}: ratio (goal ≤ ${goal})`, (a / b).toFixed(2)],
    [`${name}: answers`, `API ${first[0].answer}; SQL ${first[1].answer}`],
  ]
}

/** The machine line of a benchmark's table: cores and load average. */
export const machineLine = (): [string, string] => [
  'machine',
  `${os.cpus().length} cores, load ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' / ')}`,
]

export function printTable(title: string, rows: [string, string][]): void {
  const width = Math.max(...rows.map((r) => r[0].length))
  process.stdout.write(`\n${title}\n${'-'.repeat(title.length)}\n`)
  for (const [k, v] of rows) process.stdout.write(`${k.padEnd(width)}  ${v}\n`)
}
