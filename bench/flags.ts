/**
 * /flags throughput and latency: 50 active flags (rollouts, property filters, multivariate, one cohort) and
 * stored persons, the server in its own process as `npm start` runs it, the load generator in this one.
 * Baseline in the same run: a Fastify hello-world under the same load.
 */
import { spawn } from 'node:child_process'
import autocannon from 'autocannon'
import { PERSONS, setup } from './flags-setup.js'
import { printTable, root, startServer } from './lib.js'

const DURATION_S = Number(process.env.BENCH_DURATION ?? 15)
const CONNECTIONS = 50

async function load(url: string, bodies: string[], rate?: number) {
  let next = 0
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'posthog-node/5.70.0' },
    connections: CONNECTIONS,
    duration: DURATION_S,
    ...(rate ? { overallRate: rate } : {}),
    requests: [{ setupRequest: (req) => ({ ...req, body: bodies[next++ % bodies.length] }) }],
  })
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors,
  }
}

async function helloWorld() {
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
  const result = await load(`http://127.0.0.1:${port}/flags`, ['{"token":"x","distinct_id":"y"}'])
  child.kill()
  return result
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
// Warm the definitions cache and the person cache once.
await load(`${server.url}/flags/?v=2`, bodies.slice(0, 200), 500)
const max = await load(`${server.url}/flags/?v=2`, bodies)
const steady = await load(`${server.url}/flags/?v=2`, bodies, 2000)
await server.stop()
const hello = await helloWorld()

printTable('Flags benchmark (50 flags, 2,000 stored persons)', [
  ['max throughput (req/s)', max.rps.toFixed(0)],
  ['  p50 / p99 at max (ms)', `${max.p50} / ${max.p99}`],
  ['  failed requests', String(max.errors)],
  ['at 2,000 req/s: achieved (req/s)', steady.rps.toFixed(0)],
  ['  p50 / p99 (ms)', `${steady.p50} / ${steady.p99}`],
  ['fastify hello-world (req/s)', hello.rps.toFixed(0)],
  ['ratio to hello-world', (max.rps / hello.rps).toFixed(2)],
])
