/**
 * Hostile work against the server while ordinary traffic runs: does capture and `/flags` keep its latency?
 *
 * The server runs in its own process as `npm start` runs it (50 flags, 2,000 persons and 100,000 events in project
 * A). Project A's ordinary traffic is `/flags?v=2` and single-event capture (`/i/v0/e/`), each at a paced 500 req/s
 * (bench/paced.ts), plus a `/_health` probe every 50 ms. Each phase is compared with a baseline phase of the same
 * traffic with nothing hostile running, measured in the same run on the same server.
 *
 * 1. Worst-case HogQL: clients with the personal API key run queries back to back through the query API (CPU
 *    without end, a 10¹² cross join, huge arrays, a join over the events), as many at once as the per-project
 *    limit allows (3 by default: a fourth gets 429). Goal: `/flags` and capture p99 ≤ 2× the baseline.
 * 2. Attacks from another address (127.0.0.2…, so that the per-IP failure limits count them apart from A's
 *    traffic), without credentials or with project B's: an lz64 bomb, 7,000 levels of nested JSON in an event,
 *    `/flags` with 4 MB of person properties, a catastrophic-backtracking regex flag in project B, HogQL nested
 *    100,000 parentheses deep, and 15 MB of HogQL. The attacker sends one request at a time, back to back (at
 *    most 5,000 per attack), each on a new connection. Goals for each: answers 4xx within 1 s, the process stays up, RSS grows by under
 *    100 MB, and A's `/flags` and capture p99 ≤ 2× the baseline measured just before the attack.
 *
 * Each attack also reports the server's CPU and bytes read per attack request past its baseline phase (the same
 * ordinary traffic as long): figures that hold on a loaded machine, where the p99 ratios do not.
 *
 * BENCH_DURATION (s, default 20) sets part 1's phases' length, BENCH_ATTACK_DURATION (default 15) each attack's and
 * its baseline's, BENCH_RATE (default 500) the paced rate of each of the two streams, BENCH_QUERY_CLIENTS
 * (default 3) the query clients; BENCH_PART=1 or 2 runs one part only; BENCH_ATTACKS (e.g. `2,5`) runs only those
 * attacks of part 2 (by position).
 */
import fs from 'node:fs'
import os from 'node:os'
import { setup } from './flags-setup.js'
import { bytesRead, lz64Bomb, probe, request, rssMb, statusSummary, watchRss } from './hostile-lib.js'
import { cpuSeconds, percentile, printTable, realisticEvent, type Server, startServer } from './lib.js'
import { type PacedResult, pacedLoad } from './paced.js'

const DURATION_S = Number(process.env.BENCH_DURATION ?? 20)
const ATTACK_S = Number(process.env.BENCH_ATTACK_DURATION ?? 15)
const RATE = Number(process.env.BENCH_RATE ?? 500)
const QUERY_CLIENTS = Number(process.env.BENCH_QUERY_CLIENTS ?? 3)
const PART = process.env.BENCH_PART ?? 'all'
/** Bounds on the attacker: requests per attack, and how long to wait for one answer. */
const MAX_ATTACK_REQUESTS = 5000
const ATTACK_TIMEOUT_MS = 30_000
const SETTLE_MAX_MS = 120_000
const FLAGS_HEADERS = { 'content-type': 'application/json', 'user-agent': 'posthog-node/5.70.0' }
const JSON_HEADERS = { 'content-type': 'application/json' }

interface Target {
  server: Server
  /** Request bodies of A's ordinary traffic. */
  flagsBodies: string[]
  eventNumber: number
}

/** Starts a server on a fresh data directory: project A's flags, persons and events. */
async function prepare(): Promise<Target> {
  // BENCH_SERVER_NODE_ARGS: node flags for the server (e.g. `--import` of a heap-statistics reporter).
  const server = await startServer({}, (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean))
  await setup(server.url, server.credentials)
  const token = server.credentials.project_api_key
  // Events for the heavy real query.
  for (let start = 0; start < 100_000; start += 5000) {
    const batch = Array.from({ length: 5000 }, (_, i) => realisticEvent(start + i, token))
    const answer = await request({
      url: `${server.url}/batch/`,
      headers: JSON_HEADERS,
      body: JSON.stringify({ api_key: token, batch }),
    })
    if (answer.status !== 200) throw new Error(`batch: ${answer.status} ${answer.body}`)
  }
  const flagsBodies = Array.from({ length: 2000 }, (_, i) =>
    JSON.stringify({ token, distinct_id: `person-${i}`, groups: {}, geoip_disable: true }),
  )
  const target: Target = { server, flagsBodies, eventNumber: 0 }
  // Let the events be stored (the committer drains its log into the engine) before anything is measured.
  const settleEnd = performance.now() + SETTLE_MAX_MS
  while (performance.now() < settleEnd) {
    const answer = await request({
      url: `${server.url}/api/projects/${server.credentials.project_id}/query/`,
      headers: { ...JSON_HEADERS, authorization: `Bearer ${server.credentials.personal_api_key}` },
      body: JSON.stringify({
        query: { kind: 'HogQLQuery', query: 'select count() from events' },
        refresh: 'force_blocking',
      }),
    })
    if (answer.status === 200 && JSON.parse(answer.body).results[0][0] >= 100_000) break
    await new Promise((r) => setTimeout(r, 1000))
  }
  await new Promise((r) => setTimeout(r, 2000))
  // Warm the definitions and person caches (a running server has seen its flags and users).
  await traffic(target, 10)
  return target
}

interface Traffic {
  flags: PacedResult
  capture: PacedResult
  health: { p99: number; max: number; failed: number }
}

/** A's ordinary traffic for `durationS`: /flags and single-event capture paced, /_health probed. */
async function traffic(target: Target, durationS: number): Promise<Traffic> {
  const { server } = target
  const token = server.credentials.project_api_key
  // Fresh uuids in every request (a reused one would be deduplicated, not stored), from the stored persons.
  const captureBodies = Array.from({ length: Math.ceil(RATE * durationS) }, () => {
    const i = target.eventNumber++
    const event = realisticEvent(i, token)
    ;(event.properties as Record<string, unknown>).distinct_id = `person-${i % 2000}`
    return JSON.stringify({ api_key: token, ...event })
  })
  const measured = Promise.all([
    pacedLoad({
      url: `${server.url}/flags/?v=2`,
      rate: RATE,
      durationS,
      headers: FLAGS_HEADERS,
      bodies: target.flagsBodies,
    }),
    pacedLoad({ url: `${server.url}/i/v0/e/`, rate: RATE, durationS, headers: JSON_HEADERS, bodies: captureBodies }),
    probe(`${server.url}/_health`, 50, durationS),
  ])
  // A server that dies with requests queued leaves them unanswered: past a minute, the phase counts as lost.
  const lost: PacedResult = { rps: 0, p50: Number.NaN, p99: Number.NaN, max: Number.NaN, errors: -1 }
  const deadline = new Promise<[PacedResult, PacedResult, Traffic['health']]>((resolve) =>
    setTimeout(
      () => resolve([lost, lost, { p99: Number.NaN, max: Number.NaN, failed: -1 }]),
      (durationS + 60) * 1000,
    ).unref(),
  )
  const [flags, capture, health] = await Promise.race([measured, deadline])
  return { flags, capture, health }
}

const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(2))
const mb = (n: number) => n.toFixed(0)
/** The machine's 1-minute load average (two cores: others' work moves every figure here). */
const load = () => os.loadavg()[0].toFixed(1)
const ratio = (during: number, baseline: number) => (during / baseline).toFixed(2)

function latencyRows(label: string, during: Traffic, baseline: Traffic): [string, string][] {
  return [
    [
      `${label} /flags p50 / p99 / max (ms), baseline`,
      `${ms(baseline.flags.p50)} / ${ms(baseline.flags.p99)} / ${ms(baseline.flags.max)}`,
    ],
    [
      `${label} /flags p50 / p99 / max (ms), during`,
      `${ms(during.flags.p50)} / ${ms(during.flags.p99)} / ${ms(during.flags.max)}`,
    ],
    [`${label} /flags p99 ratio (goal ≤ 2)`, ratio(during.flags.p99, baseline.flags.p99)],
    [
      `${label} capture p50 / p99 / max (ms), baseline`,
      `${ms(baseline.capture.p50)} / ${ms(baseline.capture.p99)} / ${ms(baseline.capture.max)}`,
    ],
    [
      `${label} capture p50 / p99 / max (ms), during`,
      `${ms(during.capture.p50)} / ${ms(during.capture.p99)} / ${ms(during.capture.max)}`,
    ],
    [`${label} capture p99 ratio (goal ≤ 2)`, ratio(during.capture.p99, baseline.capture.p99)],
    [
      `${label} /_health p99 / max (ms), baseline → during`,
      `${ms(baseline.health.p99)} / ${ms(baseline.health.max)} → ${ms(during.health.p99)} / ${ms(during.health.max)}`,
    ],
    [
      `${label} failed requests (flags, capture, health), during`,
      `${during.flags.errors}, ${during.capture.errors}, ${during.health.failed}`,
    ],
  ]
}

// Part 1: worst-case HogQL queries.

// Each runs until the server's time limit (60 s) or memory limit stops it, so in a 20 s phase mostly the first three
// run (one per client): CPU without end, a real query, memory.
const WORST_QUERIES = [
  'select sum(number) from numbers(1000000000000)',
  // A real query over the events: a join whose rows grow as the square of each event name's count.
  'select b.properties.$browser, count() from events a join events b on a.event = b.event group by 1',
  'select length(range(300000000))',
  'select count() from numbers(1000000) a, numbers(1000000) b',
  'select length(groupArray(number)) from numbers(100000000)',
]

async function hostileQueries(): Promise<[string, string][]> {
  const target = await prepare()
  const { server } = target
  const pid = server.child.pid as number
  const { personal_api_key, project_id } = server.credentials
  const loads = [load()]
  const baselineRss = watchRss(pid)
  const baseline = await traffic(target, DURATION_S)
  const baselineMemory = baselineRss.stop()
  loads.push(load())

  const statuses: number[] = []
  const byQuery = WORST_QUERIES.map(() => ({ statuses: [] as number[], maxMs: 0 }))
  let stop = false
  let next = 0
  const client = async () => {
    while (!stop) {
      const index = next++ % WORST_QUERIES.length
      const answer = await request({
        url: `${server.url}/api/projects/${project_id}/query/`,
        headers: { ...JSON_HEADERS, authorization: `Bearer ${personal_api_key}` },
        body: JSON.stringify({
          query: { kind: 'HogQLQuery', query: WORST_QUERIES[index] },
          refresh: 'force_blocking',
          name: 'hostile',
        }),
        // The server's own limit is 60 s; past 120 s the answer is counted as none.
        timeoutMs: 120_000,
      })
      statuses.push(answer.status)
      byQuery[index].statuses.push(answer.status)
      byQuery[index].maxMs = Math.max(byQuery[index].maxMs, answer.ms)
      // Refused (429: all slots taken, or the per-key rate): try again shortly, as a client would.
      if (answer.status === 429) await new Promise((r) => setTimeout(r, 100))
    }
  }
  const rss = watchRss(pid)
  const clients = Array.from({ length: QUERY_CLIENTS }, () => client())
  // Let the queries start before measuring.
  await new Promise((r) => setTimeout(r, 1000))
  const during = await traffic(target, DURATION_S)
  loads.push(load())
  stop = true
  const drainStart = performance.now()
  await Promise.all(clients)
  const drainS = (performance.now() - drainStart) / 1000
  const memory = rss.stop()
  await new Promise((r) => setTimeout(r, 2000))
  const after = rssMb(pid)
  // Early phases of a fresh server have shown stalls of seconds with nothing hostile running: a second baseline.
  const baselineAfter = await traffic(target, DURATION_S)
  loads.push(load())
  await server.stop()
  fs.rmSync(server.dataDir, { recursive: true, force: true })

  return [
    ...latencyRows('', during, baseline),
    [
      '/flags, capture p99 (ms) in a second baseline after the queries; ratios to it',
      `${ms(baselineAfter.flags.p99)}, ${ms(baselineAfter.capture.p99)}; ` +
        `${ratio(during.flags.p99, baselineAfter.flags.p99)}, ${ratio(during.capture.p99, baselineAfter.capture.p99)}`,
    ],
    [`query clients / queries answered`, `${QUERY_CLIENTS} / ${statuses.length}`],
    ['query answers by status', statusSummary(statuses)],
    ...WORST_QUERIES.map((q, i): [string, string] => [
      `  ${q.length > 60 ? `${q.slice(0, 57)}...` : q}`,
      `${statusSummary(byQuery[i].statuses)}; max ${(byQuery[i].maxMs / 1000).toFixed(1)} s`,
    ]),
    ['waiting for the last queries after the phase (s)', drainS.toFixed(1)],
    [
      'machine load average: start / end of baseline / end of queries phase / end of second baseline',
      loads.join(' / '),
    ],
    [
      'server RSS (MB): baseline phase start / queries start / peak / 2 s after the last answer',
      `${mb(baselineMemory.first)} / ${mb(memory.first)} / ${mb(memory.peak)} / ${mb(after)}`,
    ],
  ]
}

// Part 2: attacks on project B, or without credentials.

interface Attack {
  name: string
  /** Builds the i-th request (all of them built before the phase, so that building takes no time in it). */
  requests: (server: Server, b: ProjectB) => { path: string; headers: Record<string, string>; body: Buffer }[]
}

interface ProjectB {
  id: number
  token: string
}

const REGEX_SUBJECT = `${'a'.repeat(30)}!`

const ATTACKS: Attack[] = [
  {
    name: 'lz64 bomb, no credentials (250 KB → ~4·10⁹ characters)',
    requests: () => [
      {
        path: '/i/v0/e/?compression=lz64',
        headers: { 'content-type': 'text/plain' },
        body: Buffer.from(lz64Bomb(250_000)),
      },
    ],
  },
  {
    name: 'event with 7,000 levels of nested JSON, B key',
    requests: (_server, b) => [
      {
        path: '/i/v0/e/',
        headers: JSON_HEADERS,
        body: Buffer.from(
          `{"api_key":"${b.token}","event":"deep","distinct_id":"attacker","properties":{"deep":` +
            `${'{"a":['.repeat(3500)}1${']}'.repeat(3500)}}}`,
        ),
      },
    ],
  },
  {
    name: '/flags with 4 MB person_properties (400 of them), B key',
    requests: (_server, b) =>
      Array.from({ length: 4 }, (_, variant) => {
        const properties: Record<string, string> = {}
        for (let i = 0; i < 400; i++) properties[`prop_${i}`] = `${variant}-${i}-${'x'.repeat(10_000)}`
        return {
          path: '/flags/?v=2',
          headers: FLAGS_HEADERS,
          body: Buffer.from(
            JSON.stringify({ token: b.token, distinct_id: `attacker-${variant}`, person_properties: properties }),
          ),
        }
      }),
  },
  {
    name: `/flags, B's regex flag ^(a+)+$ against '${REGEX_SUBJECT.slice(0, 4)}…!' (31 chars), B key`,
    requests: (_server, b) =>
      Array.from({ length: 16 }, (_, i) => ({
        path: '/flags/?v=2',
        headers: FLAGS_HEADERS,
        body: Buffer.from(
          JSON.stringify({ token: b.token, distinct_id: `attacker-${i}`, person_properties: { email: REGEX_SUBJECT } }),
        ),
      })),
  },
  {
    name: 'HogQL nested 100,000 parentheses deep, on project B',
    requests: (server, b) => [
      {
        path: `/api/projects/${b.id}/query/`,
        headers: { ...JSON_HEADERS, authorization: `Bearer ${server.credentials.personal_api_key}` },
        body: Buffer.from(
          JSON.stringify({
            query: { kind: 'HogQLQuery', query: `select ${'('.repeat(100_000)}1${')'.repeat(100_000)}` },
            refresh: 'force_blocking',
          }),
        ),
      },
    ],
  },
  {
    name: 'HogQL of 15 MB (7.5 million tokens), on project B',
    requests: (server, b) => [
      {
        path: `/api/projects/${b.id}/query/`,
        headers: { ...JSON_HEADERS, authorization: `Bearer ${server.credentials.personal_api_key}` },
        body: Buffer.from(
          JSON.stringify({
            query: { kind: 'HogQLQuery', query: `select ${'a,'.repeat(7_500_000)}a` },
            refresh: 'force_blocking',
          }),
        ),
      },
    ],
  },
]
/** BENCH_ATTACKS: the attacks to run, by their 1-based position in ATTACKS (comma-separated); default all. */
const CHOSEN = (process.env.BENCH_ATTACKS ?? '')
  .split(',')
  .filter(Boolean)
  .map((n) => Number(n) - 1)

async function api(server: Server, path: string, body: unknown) {
  const answer = await request({
    url: `${server.url}${path}`,
    headers: { ...JSON_HEADERS, authorization: `Bearer ${server.credentials.personal_api_key}` },
    body: JSON.stringify(body),
  })
  if (answer.status >= 300) throw new Error(`${path}: ${answer.status} ${answer.body}`)
  return JSON.parse(answer.body)
}

/** Project B, with a flag whose regex backtracks catastrophically on `aaa…!` in a backtracking engine. */
async function projectB(server: Server): Promise<ProjectB> {
  const project = await api(server, '/api/projects/', { name: 'B (attacker)' })
  await api(server, `/api/projects/${project.id}/feature_flags/`, {
    key: 'redos',
    name: 'ReDoS',
    active: true,
    filters: {
      groups: [
        {
          properties: [{ key: 'email', type: 'person', value: '^(a+)+$', operator: 'regex' }],
          rollout_percentage: 100,
        },
      ],
    },
  })
  return { id: project.id, token: project.api_token }
}

async function attacks(): Promise<[string, string][]> {
  let target = await prepare()
  let b = await projectB(target.server)
  const rows: [string, string][] = []
  for (const [n, attack] of ATTACKS.entries()) {
    if (CHOSEN.length > 0 && !CHOSEN.includes(n)) continue
    const { server } = target
    const pid = server.child.pid as number
    // The machine's speed drifts with others' work: each attack gets a baseline of its own, just before it.
    const baselineLoad = load()
    const baselineRss = watchRss(pid)
    const baselineUse = { cpu: cpuSeconds(pid), read: bytesRead(pid) }
    const baseline = await traffic(target, ATTACK_S)
    const baselineCpu = cpuSeconds(pid) - baselineUse.cpu
    const baselineRead = bytesRead(pid) - baselineUse.read
    const baselineMemory = baselineRss.stop()
    const requests = attack.requests(server, b)
    const localAddress = `127.0.0.${n + 2}`
    const statuses: number[] = []
    const times: number[] = []
    let exited = false
    const onExit = () => {
      exited = true
    }
    server.child.once('exit', onExit)
    const startLoad = load()
    const rss = watchRss(pid)
    const attackUse = { cpu: cpuSeconds(pid), read: bytesRead(pid) }
    const end = performance.now() + ATTACK_S * 1000
    const attacker = (async () => {
      for (let i = 0; i < MAX_ATTACK_REQUESTS && performance.now() < end && !exited; i++) {
        const r = requests[i % requests.length]
        const answer = await request({
          url: `${server.url}${r.path}`,
          headers: r.headers,
          body: r.body,
          localAddress,
          timeoutMs: ATTACK_TIMEOUT_MS,
        })
        statuses.push(answer.status)
        times.push(answer.ms)
        if (i === 0) rows.push([`${attack.name}: first answer`, answer.body.slice(0, 120).replace(/\s+/g, ' ')])
      }
    })()
    const during = await traffic(target, ATTACK_S)
    await attacker
    // The attack phase's server CPU and bytes read past the baseline's (the same ordinary traffic, as long), per
    // attack request: what a refusal costs, a figure that holds on a loaded machine where p99 ratios do not.
    const exitedEarly = exited
    const attackCpu = exitedEarly ? Number.NaN : cpuSeconds(pid) - attackUse.cpu
    const attackRead = exitedEarly ? Number.NaN : bytesRead(pid) - attackUse.read
    const memory = rss.stop()
    server.child.off('exit', onExit)
    // The tarpit answers a flood's refusals past its first ones TARPIT_MS (100 ms) late: what came sooner is the burst
    // the attacker got at full speed.
    const fast = times.filter((t) => t < 100).length
    rows.push(
      [`${attack.name}: answers`, statusSummary(statuses)],
      ['  answers in under 100 ms (at full speed) / later', `${fast} / ${times.length - fast}`],
      [
        '  answer time p50 / max (ms; goal: max ≤ 1,000)',
        `${ms(
          percentile(
            times.sort((x, y) => x - y),
            50,
          ),
        )} / ${ms(times[times.length - 1] ?? 0)}`,
      ],
      [
        '  server RSS (MB): before / peak / after; growth (goal < 100)',
        exited
          ? `${mb(memory.first)} / ${mb(memory.peak)} / —; THE SERVER EXITED`
          : `${mb(memory.first)} / ${mb(memory.peak)} / ${mb(memory.last)}; ${mb(memory.peak - memory.first)}`,
      ],
      ['  server RSS growth in the baseline just before (MB)', mb(baselineMemory.peak - baselineMemory.first)],
      [
        '  server CPU (ms) and bytes read (KB) per attack request, past the baseline phase',
        `${(((attackCpu - baselineCpu) / Math.max(1, statuses.length)) * 1000).toFixed(3)} ms; ` +
          `${((attackRead - baselineRead) / Math.max(1, statuses.length) / 1024).toFixed(1)} KB ` +
          `(server CPU ${baselineCpu.toFixed(2)} → ${attackCpu.toFixed(2)} s)`,
      ],
      [
        "  A's /flags p99, during / baseline (ms); ratio (goal ≤ 2)",
        `${ms(during.flags.p99)} / ${ms(baseline.flags.p99)}; ${ratio(during.flags.p99, baseline.flags.p99)}`,
      ],
      [
        "  A's capture p99, during / baseline (ms); ratio (goal ≤ 2)",
        `${ms(during.capture.p99)} / ${ms(baseline.capture.p99)}; ${ratio(during.capture.p99, baseline.capture.p99)}`,
      ],
      ['  machine load average: baseline start / attack start / end', `${baselineLoad} / ${startLoad} / ${load()}`],
      [
        "  A's failed requests (flags, capture, health)",
        `${during.flags.errors}, ${during.capture.errors}, ${during.health.failed}`,
      ],
    )
    if (exited && n < ATTACKS.length - 1) {
      // The next attacks get a server of their own.
      fs.rmSync(server.dataDir, { recursive: true, force: true })
      target = await prepare()
      b = await projectB(target.server)
    }
  }
  await target.server.stop()
  fs.rmSync(target.server.dataDir, { recursive: true, force: true })
  return rows
}

if (PART !== '2') {
  const rows = await hostileQueries()
  printTable(
    `Hostile queries: A's /flags and capture at ${RATE} req/s each, ${QUERY_CLIENTS} worst-case HogQL clients back to back (${DURATION_S} s phases)`,
    rows,
  )
}
if (PART !== '1') {
  const rows = await attacks()
  printTable(
    `Attacks from another address while A's /flags and capture run at ${RATE} req/s each (${ATTACK_S} s each, after a baseline as long)`,
    rows,
  )
}
// A lost phase may leave sockets of a dead server behind.
process.exit(0)
