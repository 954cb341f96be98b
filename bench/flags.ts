/**
 * /flags throughput and latency: 50 active flags (rollouts, property filters, multivariate, one cohort) and
 * stored persons, the server in its own process as `npm start` runs it, the load generator in this one.
 * Baseline in the same run: a Fastify hello-world under the same load.
 */
import { spawn } from 'node:child_process'
import autocannon from 'autocannon'
import { printTable, root, startServer } from './lib.js'

const DURATION_S = Number(process.env.BENCH_DURATION ?? 15)
const CONNECTIONS = 50
const PERSONS = 2000

async function api(url: string, key: string, path: string, body: unknown) {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  })
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  return res.json() as Promise<{ id: number }>
}

async function setup(url: string, creds: { project_api_key: string; personal_api_key: string; project_id: number }) {
  const base = `/api/projects/${creds.project_id}`
  const cohort = await api(url, creds.personal_api_key, `${base}/cohorts/`, {
    name: 'Pro users in Germany',
    filters: {
      properties: {
        type: 'AND',
        values: [
          {
            type: 'AND',
            values: [
              { key: 'plan', type: 'person', value: ['pro'], operator: 'exact' },
              { key: 'country', type: 'person', value: 'DE', operator: 'exact' },
            ],
          },
        ],
      },
    },
  })
  for (let i = 0; i < 50; i++) {
    const kind = i % 5
    const filters =
      kind === 0
        ? { groups: [{ properties: [], rollout_percentage: 10 + i }] }
        : kind === 1
          ? {
              groups: [
                {
                  properties: [{ key: 'plan', type: 'person', value: ['pro', 'enterprise'], operator: 'exact' }],
                  rollout_percentage: 100,
                },
              ],
            }
          : kind === 2
            ? {
                groups: [{ properties: [], rollout_percentage: 100 }],
                multivariate: {
                  variants: [
                    { key: 'control', rollout_percentage: 50 },
                    { key: 'test', rollout_percentage: 50 },
                  ],
                },
              }
            : kind === 3
              ? {
                  groups: [
                    {
                      properties: [{ key: 'email', type: 'person', value: '@example.com', operator: 'icontains' }],
                      rollout_percentage: 50,
                    },
                  ],
                }
              : i === 4
                ? {
                    groups: [
                      { properties: [{ key: 'id', type: 'cohort', value: cohort.id }], rollout_percentage: 100 },
                    ],
                  }
                : {
                    groups: [
                      {
                        properties: [{ key: 'age', type: 'person', value: 30, operator: 'gt' }],
                        rollout_percentage: 100,
                      },
                    ],
                  }
    await api(url, creds.personal_api_key, `${base}/feature_flags/`, {
      key: `flag-${i}`,
      name: `Flag ${i}`,
      filters,
      active: true,
    })
  }
  // Stored persons arrive the way they do in production: through capture.
  for (let start = 0; start < PERSONS; start += 500) {
    const batch = Array.from({ length: 500 }, (_, k) => {
      const i = start + k
      return {
        event: '$identify',
        distinct_id: `person-${i}`,
        properties: {
          $set: {
            plan: ['free', 'pro', 'enterprise'][i % 3],
            country: i % 2 ? 'DE' : 'US',
            email: `p${i}@example.com`,
            age: 20 + (i % 40),
          },
        },
      }
    })
    const res = await fetch(`${url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: creds.project_api_key, batch }),
    })
    if (res.status !== 200) throw new Error(`capture: ${res.status}`)
  }
}

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
