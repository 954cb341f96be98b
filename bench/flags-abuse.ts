/**
 * /flags under abuse, the server in its own process as `npm start` runs it. A victim project holds the flags
 * benchmark's 50 flags and stored persons; an attacked project holds flags and a cohort with `regex` filters,
 * one of them the classic catastrophic-backtracking pattern. While the victim is served at a paced rate, anonymous
 * clients of the attacked project send (a) values that make a backtracking engine run for seconds, then
 * (b) distinct multi-megabyte `person_properties`. Reported: the attack's slowest answer and statuses, the
 * victim's p50/p99 against the same load alone, and the server's RSS before and after each attack.
 */
import fs from 'node:fs'
import { PERSONS, setup } from './flags-setup.js'
import { printTable, startServer } from './lib.js'
import { pacedLoad } from './paced.js'

const DURATION_S = Number(process.env.BENCH_DURATION ?? 15)
const VICTIM_RATE = Number(process.env.BENCH_RATE ?? 1000)
const LARGE_BODIES = Number(process.env.BENCH_LARGE_BODIES ?? 850)
// The 4 MB bodies, and bodies just under the 256 KiB /flags limit, alternately.
const LARGE_BYTES = [4 * 1024 * 1024, 250_000]
const HEADERS = { 'content-type': 'application/json', 'user-agent': 'posthog-node/5.70.0' }

const server = await startServer()
const rssMb = () => {
  const line = fs.readFileSync(`/proc/${server.child.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/)
  return Number(line?.[1] ?? 0) / 1024
}

async function api(path: string, body: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${server.credentials.personal_api_key}` },
    body: JSON.stringify(body),
  })
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  return res.json() as Promise<{ id: number; api_token: string }>
}

await setup(server.url, server.credentials)
const attacked = await api('/api/projects/', { name: 'Attacked project' })
const regexFilter = (value: string) => ({ key: 'name', type: 'person', value, operator: 'regex' })
const cohort = await api(`/api/projects/${attacked.id}/cohorts/`, {
  name: 'Backtracking cohort',
  filters: { properties: { type: 'AND', values: [{ type: 'AND', values: [regexFilter('^(a|aa)+$')] }] } },
})
const attackedFlags: [string, unknown[]][] = [
  ['redos-flag', [regexFilter('^(a+)+$')]],
  ['redos-not-regex', [{ ...regexFilter('^(\\w+\\s?)+$'), operator: 'not_regex' }]],
  ['redos-cohort', [{ key: 'id', type: 'cohort', value: cohort.id }]],
  ['plain-regex', [regexFilter('\\.com$')]],
]
for (const [key, properties] of attackedFlags) {
  await api(`/api/projects/${attacked.id}/feature_flags/`, {
    key,
    filters: { groups: [{ properties, rollout_percentage: 100 }] },
  })
}

const victimUrl = `${server.url}/flags/?v=2`
const victimBodies = Array.from({ length: PERSONS }, (_, i) =>
  JSON.stringify({ token: server.credentials.project_api_key, distinct_id: `person-${i}`, geoip_disable: true }),
)
const victim = () =>
  pacedLoad({ url: victimUrl, rate: VICTIM_RATE, durationS: DURATION_S, headers: HEADERS, bodies: victimBodies })

interface AttackResult {
  requests: number
  slowestMs: number
  statuses: Map<number, number>
}

/** Sends bodies back to back on `connections` clients until `until` resolves or the bodies run out. */
async function attack(body: (i: number) => string, connections: number, until: Promise<unknown>, limit = Infinity) {
  const result: AttackResult = { requests: 0, slowestMs: 0, statuses: new Map() }
  let stop = false
  void until.then(() => {
    stop = true
  })
  let next = 0
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (!stop && next < limit) {
        const payload = body(next++)
        const started = performance.now()
        // A refused body may close the connection before it is all sent: that counts as an answer (status 0).
        const status = await fetch(victimUrl, { method: 'POST', headers: HEADERS, body: payload }).then(
          async (res) => {
            await res.arrayBuffer()
            return res.status
          },
          () => 0,
        )
        result.slowestMs = Math.max(result.slowestMs, performance.now() - started)
        result.statuses.set(status, (result.statuses.get(status) ?? 0) + 1)
        result.requests += 1
      }
    }),
  )
  return result
}

const statuses = (r: AttackResult) => [...r.statuses].map(([status, n]) => `${n}× ${status}`).join(', ')
const ms = (n: number) => n.toFixed(2)

// Warm the victim's definitions, persons and answers, then measure it alone.
await pacedLoad({ url: victimUrl, rate: 1000, durationS: 2, headers: HEADERS, bodies: victimBodies })
const alone = await victim()

// (a) Values a backtracking engine would take seconds (or forever) on, within and beyond the searched length.
const redosValues = [`${'a'.repeat(31)}!`, `${'a'.repeat(8_000)}!`, `${'word '.repeat(1_600)}!`, 'a'.repeat(100_000)]
const rssBeforeRedos = rssMb()
const duringRedos = victim()
const redos = await attack(
  (i) =>
    JSON.stringify({
      token: attacked.api_token,
      distinct_id: `anon-${i}`,
      person_properties: { name: redosValues[i % redosValues.length] },
    }),
  2,
  duringRedos,
)
const victimDuringRedos = await duringRedos
const rssAfterRedos = rssMb()

// (b) Distinct large request properties from anonymous visitors.
const paddings = LARGE_BYTES.map((bytes) => 'p'.repeat(bytes - 200))
const rssBeforeLarge = rssMb()
const duringLarge = victim()
// Runs to its last body however long that takes; the victim is measured over its first DURATION_S seconds.
const large = await attack(
  (i) =>
    JSON.stringify({
      token: attacked.api_token,
      distinct_id: `anon-large-${i}`,
      person_properties: { name: `${i}@example.com`, padding: `${i}${paddings[i % paddings.length]}` },
    }),
  2,
  new Promise(() => undefined),
  LARGE_BODIES,
)
const victimDuringLarge = await duringLarge
const rssAfterLarge = rssMb()
const healthy = (await fetch(`${server.url}/_health`)).status
await server.stop()

printTable(`Flags under abuse (victim: 50 flags, ${PERSONS} persons, paced ${VICTIM_RATE} req/s for ${DURATION_S} s)`, [
  ['victim alone: p50 / p99 / max (ms)', `${ms(alone.p50)} / ${ms(alone.p99)} / ${ms(alone.max)}`],
  ['backtracking values: requests, statuses', `${redos.requests}: ${statuses(redos)}`],
  ['  slowest attack answer (ms)', ms(redos.slowestMs)],
  [
    '  victim meanwhile: p50 / p99 / max (ms)',
    `${ms(victimDuringRedos.p50)} / ${ms(victimDuringRedos.p99)} / ${ms(victimDuringRedos.max)}`,
  ],
  ['  victim p99 ratio to alone', (victimDuringRedos.p99 / alone.p99).toFixed(2)],
  ['  server RSS before → after (MB)', `${rssBeforeRedos.toFixed(0)} → ${rssAfterRedos.toFixed(0)}`],
  ['4 MB and 250 KB distinct bodies: requests, statuses', `${large.requests}: ${statuses(large)}`],
  ['  slowest attack answer (ms)', ms(large.slowestMs)],
  [
    '  victim meanwhile: p50 / p99 / max (ms)',
    `${ms(victimDuringLarge.p50)} / ${ms(victimDuringLarge.p99)} / ${ms(victimDuringLarge.max)}`,
  ],
  ['  victim p99 ratio to alone', (victimDuringLarge.p99 / alone.p99).toFixed(2)],
  ['  server RSS before → after (MB)', `${rssBeforeLarge.toFixed(0)} → ${rssAfterLarge.toFixed(0)}`],
  ['/_health after both', String(healthy)],
])
