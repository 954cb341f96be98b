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
 *    most 5,000 per attack), each on a new connection, from a process of its own (bench/hostile-attacker.ts: in
 *    this one its client work shared the event loop that times A's requests). Goals for each: answers 4xx within 1 s, the
 *    process stays up, RSS grows by under 100 MB, and A's `/flags` and capture p99 ≤ 2× normal.
 *
 *    Each attack phase sits between two phases of the same traffic with nothing hostile running, as long as it:
 *    the baseline just before and the control just after. "Normal" p99 is the mean of theirs, and the control's
 *    ratio to the baseline shows how far two quiet phases differ. The server's RSS rises and falls by up to
 *    ~170 MB within 15 s with A's own traffic (a young generation of up to 192 MB, old-space collections), so a
 *    phase's growth (peak − start) says where that saw-tooth was when the phase began; the RSS attributed to an
 *    attack is how far its phase's peak rises above the mean of the quiet phases' peaks. Each attack also reports
 *    the server's CPU (all threads and the main thread, whose event loop A's requests wait for) and bytes read per
 *    attack request past the quiet phases': figures that hold on a loaded machine, where the p99 ratios do not.
 *
 * BENCH_DURATION (s, default 20) sets part 1's phases' length, BENCH_ATTACK_DURATION (default 15) each attack's and
 * its baseline's, BENCH_RATE (default 500) the paced rate of each of the two streams, BENCH_QUERY_CLIENTS
 * (default 3) the query clients; BENCH_PART=1 or 2 runs one part only; BENCH_ATTACKS (e.g. `2,5`) runs only those
 * attacks of part 2 (by position).
 */
import { fork } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { setup } from './flags-setup.js'
import { bytesRead, lz64Bomb, probe, request, rssMb, statusSummary, watchRss } from './hostile-lib.js'
import { cpuSeconds, percentile, printTable, realisticEvent, type Server, startServer, threadCpu } from './lib.js'
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

/** The attacker in a process of its own (bench/hostile-attacker.ts), started and ready to go. */
async function startAttacker(server: Server, requests: ReturnType<Attack['requests']>, localAddress: string) {
  const child = fork(fileURLToPath(new URL('./hostile-attacker.ts', import.meta.url)), {
    execArgv: ['--import', 'tsx'],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const next = () =>
    new Promise<unknown>((resolve, reject) => {
      child.once('message', resolve)
      child.once('exit', (code) => reject(new Error(`attacker exited (${code})`)))
    })
  const ready = next()
  child.send({
    setup: {
      url: server.url,
      requests: requests.map((r) => ({ path: r.path, headers: r.headers, body: new Uint8Array(r.body) })),
      localAddress,
      max: MAX_ATTACK_REQUESTS,
      timeoutMs: ATTACK_TIMEOUT_MS,
    },
  })
  await ready
  return {
    /** Attacks for `durationMs`; resolves with every answer's status and time once the last is in. */
    go(durationMs: number) {
      const result = next() as Promise<{ statuses: number[]; times: number[]; first: string }>
      child.send({ go: durationMs })
      return result
    },
    stop: () => {
      if (child.connected) child.send({ stop: true })
    },
    end: () => {
      if (child.exitCode === null) child.kill()
    },
  }
}

/** A phase of A's traffic, with the server's RSS, CPU (all threads, and the main thread's) and bytes read in it. */
async function measuredTraffic(target: Target) {
  const pid = target.server.child.pid as number
  const rss = watchRss(pid)
  const before = { cpu: cpuSeconds(pid), main: threadCpu(pid).main, read: bytesRead(pid) }
  const result = await traffic(target, ATTACK_S)
  const used = {
    cpu: cpuSeconds(pid) - before.cpu,
    main: threadCpu(pid).main - before.main,
    read: bytesRead(pid) - before.read,
  }
  return { traffic: result, memory: rss.stop(), used }
}

async function attacks(): Promise<[string, string][]> {
  let target = await prepare()
  let b = await projectB(target.server)
  const rows: [string, string][] = []
  for (const [n, attack] of ATTACKS.entries()) {
    if (CHOSEN.length > 0 && !CHOSEN.includes(n)) continue
    const { server } = target
    // The machine's speed drifts with others' work, and the server's memory grows and shrinks with A's own
    // traffic: each attack gets a phase with nothing hostile running just before it (the baseline) and one just
    // after it (the control), each as long as the attack.
    const loads = [load()]
    const baseline = await measuredTraffic(target)
    const attacker = await startAttacker(server, attack.requests(server, b), `127.0.0.${n + 2}`)
    let exited = false
    const onExit = () => {
      exited = true
      attacker.stop()
    }
    server.child.once('exit', onExit)
    loads.push(load())
    const attacked = attacker.go(ATTACK_S * 1000)
    const during = await measuredTraffic(target)
    const { statuses, times, first } = await attacked
    attacker.end()
    server.child.off('exit', onExit)
    loads.push(load())
    const control = exited ? undefined : await measuredTraffic(target)
    loads.push(load())
    rows.push([`${attack.name}: first answer`, first])

    const growth = (m: { first: number; peak: number }) => m.peak - m.first
    const quiet = control ? [baseline, control] : [baseline]
    const quietPeak = quiet.reduce((sum, phase) => sum + phase.memory.peak, 0) / quiet.length
    const quietP99 = (pick: (t: Traffic) => PacedResult) =>
      quiet.reduce((sum, phase) => sum + pick(phase.traffic).p99, 0) / quiet.length
    const latency = (label: string, pick: (t: Traffic) => PacedResult): [string, string][] => {
      const normal = quietP99(pick)
      const d = pick(during.traffic).p99
      const bl = pick(baseline.traffic).p99
      const c = control ? pick(control.traffic).p99 : Number.NaN
      return [
        [`  A's ${label} p99 (ms): baseline / during / control`, `${ms(bl)} / ${ms(d)} / ${control ? ms(c) : '—'}`],
        [
          `  A's ${label} p99 ratio, during ÷ mean of baseline and control (goal ≤ 2); control ÷ baseline`,
          `${ratio(d, normal)}; ${control ? ratio(c, bl) : '—'}`,
        ],
      ]
    }
    const perRequest = (a: number, q: number) => (((a - q) / Math.max(1, statuses.length)) * 1000).toFixed(3)
    const quietUse = (pick: (u: typeof baseline.used) => number) =>
      quiet.reduce((sum, phase) => sum + pick(phase.used), 0) / quiet.length
    // The tarpit answers a flood's refusals past its first ones TARPIT_MS (100 ms) late: what came sooner is the burst
    // the attacker got at full speed.
    const fast = times.filter((t) => t < 100).length
    const sorted = [...times].sort((x, y) => x - y)
    rows.push(
      [`${attack.name}: answers`, statusSummary(statuses)],
      ['  answers in under 100 ms (at full speed) / later', `${fast} / ${times.length - fast}`],
      [
        '  answer time p50 / max (ms; goal: max ≤ 1,000)',
        `${ms(percentile(sorted, 50))} / ${ms(sorted[sorted.length - 1] ?? 0)}`,
      ],
      [
        '  server RSS (MB) in the attack: start / peak / end; growth',
        exited
          ? `${mb(during.memory.first)} / ${mb(during.memory.peak)} / —; THE SERVER EXITED`
          : `${mb(during.memory.first)} / ${mb(during.memory.peak)} / ${mb(during.memory.last)}; ` +
            mb(growth(during.memory)),
      ],
      [
        '  server RSS growth (MB): baseline / control (nothing hostile, as long)',
        `${mb(growth(baseline.memory))} / ${control ? mb(growth(control.memory)) : '—'}`,
      ],
      [
        '  server RSS peak (MB): baseline / attack / control',
        `${mb(baseline.memory.peak)} / ${mb(during.memory.peak)} / ${control ? mb(control.memory.peak) : '—'}`,
      ],
      [
        "  server RSS attributable to the attack (MB, goal < 100): attack's peak − mean of the quiet phases' peaks",
        mb(during.memory.peak - quietPeak),
      ],
      [
        '  server CPU (s), all threads / main thread: baseline / attack / control',
        `${baseline.used.cpu.toFixed(2)} / ${during.used.cpu.toFixed(2)} / ` +
          `${control ? control.used.cpu.toFixed(2) : '—'}` +
          ` — main ${baseline.used.main.toFixed(2)} / ${during.used.main.toFixed(2)} / ` +
          `${control ? control.used.main.toFixed(2) : '—'}`,
      ],
      [
        '  per attack request past the no-attack phases: server CPU, main thread (ms); bytes read (KB)',
        `${perRequest(
          during.used.cpu,
          quietUse((u) => u.cpu),
        )}, ${perRequest(
          during.used.main,
          quietUse((u) => u.main),
        )}; ` + `${((during.used.read - quietUse((u) => u.read)) / Math.max(1, statuses.length) / 1024).toFixed(1)}`,
      ],
      ...latency('/flags', (t) => t.flags),
      ...latency('capture', (t) => t.capture),
      ['  machine load average: baseline start / attack start / end / control end', loads.join(' / ')],
      [
        "  A's failed requests (flags, capture, health) in the attack",
        `${during.traffic.flags.errors}, ${during.traffic.capture.errors}, ${during.traffic.health.failed}`,
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
    `Attacks from another address while A's /flags and capture run at ${RATE} req/s each (${ATTACK_S} s each, ` +
      'between a baseline and a control as long)',
    rows,
  )
}
// A lost phase may leave sockets of a dead server behind.
process.exit(0)
