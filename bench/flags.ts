/**
 * /flags throughput and latency: 50 active flags (rollouts, property filters, multivariate, one cohort) and
 * stored persons, the server in its own process as `npm start` runs it. Maximum throughput by wrk (autocannon
 * when wrk is missing), latency at 2,000 req/s by an open-loop paced generator (bench/paced.ts); also the
 * throughput when no answer can be reused. Baseline in the same run: a Fastify hello-world under the same loads.
 */
import { PERSONS, setup } from './flags-setup.js'
import { printTable, startHelloWorld, startServer } from './lib.js'
import { pacedLoad } from './paced.js'
import { maxLoad } from './wrk.js'

const DURATION_S = Number(process.env.BENCH_DURATION ?? 15)
const CONNECTIONS = 50

const HEADERS = { 'content-type': 'application/json', 'user-agent': 'posthog-node/5.70.0' }

const maxOf = (url: string, bodies: string[]) =>
  maxLoad({ url, durationS: DURATION_S, connections: CONNECTIONS, headers: HEADERS, bodies })
const steadyOf = (url: string, bodies: string[]) =>
  pacedLoad({ url, rate: 2000, durationS: DURATION_S, headers: HEADERS, bodies })

async function helloWorld() {
  const hello = await startHelloWorld()
  const url = hello.url
  const bodies = ['{"token":"x","distinct_id":"y"}']
  const max = await maxOf(url, bodies)
  const steady = await steadyOf(url, bodies)
  hello.stop()
  return { max, steady }
}

const server = await startServer(
  {},
  process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [],
)
await setup(server.url, server.credentials)
const bodies = Array.from({ length: PERSONS }, (_, i) =>
  JSON.stringify({
    token: server.credentials.project_api_key,
    distinct_id: `person-${i}`,
    groups: {},
    geoip_disable: true,
  }),
)
const flagsUrl = `${server.url}/flags/?v=2`
// Warm the definitions cache and the person cache once.
await pacedLoad({ url: flagsUrl, rate: 1000, durationS: 2, headers: HEADERS, bodies })
const max = await maxOf(flagsUrl, bodies)
const steady = await steadyOf(flagsUrl, bodies)
// Every request evaluated in full: the same stored persons, but a request property that differs every time, so
// no answer can be reused.
const fresh = await maxLoad({
  url: flagsUrl,
  durationS: DURATION_S,
  connections: CONNECTIONS,
  headers: HEADERS,
  bodies: [],
  numbered: {
    prefix: `{"token":"${server.credentials.project_api_key}","distinct_id":"person-`,
    modulo: PERSONS,
    middle: '","groups":{},"geoip_disable":true,"person_properties":{"request_number":',
    suffix: '}}',
  },
})
await server.stop()
const hello = await helloWorld()

const ms = (n: number) => n.toFixed(2)
printTable(`Flags benchmark (50 flags, ${PERSONS} stored persons; max load by ${max.tool})`, [
  ['max throughput (req/s)', max.rps.toFixed(0)],
  ['  p50 / p99 at max (ms)', `${ms(max.p50)} / ${ms(max.p99)}`],
  ['  failed requests', String(max.errors)],
  ['at 2,000 req/s (paced): achieved (req/s)', steady.rps.toFixed(0)],
  ['  p50 / p99 / max (ms)', `${ms(steady.p50)} / ${ms(steady.p99)} / ${ms(steady.max)}`],
  ['  failed requests', String(steady.errors)],
  ['max throughput, no answer reusable (req/s)', fresh.rps.toFixed(0)],
  ['  p50 / p99 (ms)', `${ms(fresh.p50)} / ${ms(fresh.p99)}`],
  ['  failed requests', String(fresh.errors)],
  ['fastify hello-world max (req/s)', hello.max.rps.toFixed(0)],
  ['fastify hello-world at 2,000 req/s p50 / p99 (ms)', `${ms(hello.steady.p50)} / ${ms(hello.steady.p99)}`],
  ['ratio to hello-world', (max.rps / hello.max.rps).toFixed(2)],
])
