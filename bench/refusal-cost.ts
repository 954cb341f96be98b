/**
 * What one refused request costs the server, with nothing else running: server CPU (all its threads, from
 * /proc/<pid>/stat) and bytes read (`rchar`) per request, what the client saw, and the heap left after a full
 * collection before and after the flood (what the refusals retained). Figures that hold on a loaded machine, where
 * bench/hostile.ts's p99 ratios do not.
 *
 * Kinds, each from an address of its own (127.0.0.x) sending one request at a time on a new connection, N times
 * after it has reached its per-address limit (its first requests answer 413 or 400, then 429):
 * - `lz64`: a 250 KB lz64 bomb to `/i/v0/e/` without credentials;
 * - `deep`: an event with 7,000 levels of nested JSON (28 KB);
 * - `deep400`: the same event's 590 first requests, refused 400 before the address's limit;
 * - `flags4mb`: `/flags` with 4 MB of `person_properties`;
 * - `small`: a 1-byte body (what any refusal costs).
 *
 * Past 50 refusals or failures in a minute an address's answers come 100 ms late (the rate limits' tarpit), so on
 * this build a kind takes about (warm-up + N) / 10 seconds; CPU and bytes per request are what they measure still.
 *
 * BENCH_N (default 300) requests per kind; BENCH_KINDS picks kinds (comma-separated); BENCH_BEFORE_DIR, a checkout
 * of the build before a change (`git worktree add`, its node_modules linked), runs it and this one alternately,
 * BENCH_ROUNDS (default 2) times each.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { bytesRead, lz64Bomb, request, statusSummary, watchRss } from './hostile-lib.js'
import { cpuSeconds, printTable, startServer, threadCpu } from './lib.js'

const N = Number(process.env.BENCH_N ?? 300)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
const KINDS = (process.env.BENCH_KINDS ?? 'small,lz64,deep400,deep,flags4mb').split(',')
const BEFORE_DIR = process.env.BENCH_BEFORE_DIR
const here = path.resolve(import.meta.dirname, '..')

interface Kind {
  path: string
  contentType: string
  body: (token: string) => Buffer
  /** Requests that reach the address's limit before the measured ones. */
  warm: number
  /** Requests measured, when not BENCH_N. */
  count?: number
}

const KIND_DEFS: Record<string, Kind> = {
  small: { path: '/i/v0/e/', contentType: 'application/json', body: () => Buffer.from('x'), warm: 610 },
  lz64: {
    path: '/i/v0/e/?compression=lz64',
    contentType: 'text/plain',
    body: () => Buffer.from(lz64Bomb(250_000)),
    warm: 12,
  },
  deep: {
    path: '/i/v0/e/',
    contentType: 'application/json',
    body: (token) =>
      Buffer.from(
        `{"api_key":"${token}","event":"deep","distinct_id":"attacker","properties":{"deep":` +
          `${'{"a":['.repeat(3500)}1${']}'.repeat(3500)}}}`,
      ),
    warm: 610,
  },
  // The deep event's refusals themselves (400, before the address's limit): body read, scanned and refused.
  deep400: {
    path: '/i/v0/e/',
    contentType: 'application/json',
    body: (token) =>
      Buffer.from(
        `{"api_key":"${token}","event":"deep","distinct_id":"attacker","properties":{"deep":` +
          `${'{"a":['.repeat(3500)}1${']}'.repeat(3500)}}}`,
      ),
    warm: 0,
    count: 590,
  },
  flags4mb: {
    path: '/flags/?v=2',
    contentType: 'application/json',
    body: (token) => {
      const properties: Record<string, string> = {}
      for (let i = 0; i < 400; i++) properties[`prop_${i}`] = `${i}-${'x'.repeat(10_000)}`
      return Buffer.from(JSON.stringify({ token, distinct_id: 'attacker', person_properties: properties }))
    },
    warm: 12,
  },
}

/** Heap after a full collection in the server (bench/heap-reporter.mjs), in MB. */
async function heapAfterGc(pid: number, file: string): Promise<{ heapUsed: number; external: number }> {
  const lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0
  process.kill(pid, 'SIGUSR2')
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 50))
    const all = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : []
    if (all.length > lines) {
      const m = JSON.parse(all[all.length - 1])
      return { heapUsed: m.heapUsed / 1e6, external: m.external / 1e6 }
    }
  }
  return { heapUsed: Number.NaN, external: Number.NaN }
}

async function measure(build: string, cwd: string): Promise<[string, string][]> {
  const heapFile = path.join(os.tmpdir(), `refusal-cost-heap-${process.pid}-${Date.now()}.jsonl`)
  const server = await startServer(
    { BENCH_HEAP_FILE: heapFile },
    ['--expose-gc', '--import', path.join(here, 'bench/heap-reporter.mjs')],
    cwd,
  )
  const pid = server.child.pid as number
  const token = server.credentials.project_api_key
  const rows: [string, string][] = []
  for (const [k, name] of KINDS.entries()) {
    const kind = KIND_DEFS[name]
    const body = kind.body(token)
    const localAddress = `127.0.0.${k + 10}`
    const send = () =>
      request({
        url: `${server.url}${kind.path}`,
        headers: { 'content-type': kind.contentType },
        body,
        localAddress,
      })
    const warm: number[] = []
    for (let i = 0; i < kind.warm; i++) warm.push((await send()).status)
    await new Promise((r) => setTimeout(r, 300))
    const heapBefore = await heapAfterGc(pid, heapFile)
    const rss = watchRss(pid)
    const cpu0 = cpuSeconds(pid)
    const main0 = threadCpu(pid).main
    const read0 = bytesRead(pid)
    const statuses: number[] = []
    const count = kind.count ?? N
    const started = performance.now()
    for (let i = 0; i < count; i++) statuses.push((await send()).status)
    const wallMs = (performance.now() - started) / count
    // Lingering refused connections close within a second.
    await new Promise((r) => setTimeout(r, 1000))
    const cpuMs = ((cpuSeconds(pid) - cpu0) / count) * 1000
    const mainMs = ((threadCpu(pid).main - main0) / count) * 1000
    const readKb = (bytesRead(pid) - read0) / count / 1024
    const memory = rss.stop()
    const heapAfter = await heapAfterGc(pid, heapFile)
    rows.push(
      [
        `${build} ${name} (${(body.length / 1024).toFixed(0)} KB): warm-up / measured answers`,
        `${statusSummary(warm)} / ${statusSummary(statuses)}`,
      ],
      [`  server CPU per request, all threads / main thread (ms)`, `${cpuMs.toFixed(3)} / ${mainMs.toFixed(3)}`],
      [
        `  bytes read per request (KB); client wall time per request (ms)`,
        `${readKb.toFixed(1)}; ${wallMs.toFixed(2)}`,
      ],
      [
        `  heap used after a full GC before → after (MB); external`,
        `${heapBefore.heapUsed.toFixed(1)} → ${heapAfter.heapUsed.toFixed(1)}; ` +
          `${heapBefore.external.toFixed(1)} → ${heapAfter.external.toFixed(1)}`,
      ],
      [
        `  server RSS (MB): before / peak / after (nothing else running)`,
        `${memory.first.toFixed(0)} / ${memory.peak.toFixed(0)} / ${memory.last.toFixed(0)}`,
      ],
    )
  }
  rows.push([`${build}: machine load average at the end`, os.loadavg()[0].toFixed(1)])
  await server.stop()
  fs.rmSync(server.dataDir, { recursive: true, force: true })
  fs.rmSync(heapFile, { force: true })
  return rows
}

const rows: [string, string][] = []
for (let round = 0; round < (BEFORE_DIR ? ROUNDS : 1); round++) {
  rows.push(...(await measure('this build', here)))
  if (BEFORE_DIR) rows.push(...(await measure('before', path.resolve(BEFORE_DIR))))
}
printTable(
  `Refused requests, ${N} of each kind back to back from one address (load at start ${os.loadavg()[0].toFixed(1)})`,
  rows,
)
process.exit(0)
