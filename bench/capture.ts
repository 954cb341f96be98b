/**
 * Capture throughput and latency.
 * 1. Acknowledged throughput: ~1 KB posthog-js events in batches of 50 from concurrent connections; every
 *    acknowledged event is then counted in the store.
 * 2. Storage ceiling in the same run: the same rows inserted straight into chDB from one process, no HTTP.
 * 3. p99 of single-event capture at a fixed 2,000 req/s from known persons; also, reported apart, while persons
 *    are being created (the warm-up, and a phase where every event comes from a new person).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { migrateEventStore, openEventStore } from '../src/storage/events/index.js'
import { printTable, realisticEvent, startServer } from './lib.js'
import { type PacedResult, pacedLoad } from './paced.js'
import { FRESH_UUID, maxLoad } from './wrk.js'

const DURATION_S = Number(process.env.BENCH_DURATION ?? 20)
const BATCH = 50
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32)

async function countEvents(dataDir: string): Promise<number> {
  const store = openEventStore(`chdb:${path.join(dataDir, 'chdb')}`)
  await migrateEventStore(store)
  const result = await store.query<[number]>('SELECT count() FROM events')
  await store.close()
  return result.rows[0][0]
}

async function throughput() {
  const server = await startServer({}, [
    ...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []),
    ...(process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []),
  ])
  const token = server.credentials.project_api_key
  let n = 0
  // Bodies with a fresh-uuid marker in every event: wrk writes a new uuid there in every request (a reused uuid
  // would be deduplicated, not stored), so the load generator spends its CPU on sending.
  const bodies = Array.from({ length: 200 }, () =>
    JSON.stringify({
      api_key: token,
      batch: Array.from({ length: BATCH }, () => ({ ...realisticEvent(n++, token), uuid: FRESH_UUID })),
    }),
  )
  const result = await maxLoad({
    url: `${server.url}/batch/`,
    durationS: DURATION_S,
    connections: CONNECTIONS,
    headers: { 'content-type': 'application/json' },
    bodies,
  })
  await server.stop()
  const acknowledgedEvents = (result.requests - result.non2xx) * BATCH
  const stored = await countEvents(server.dataDir)
  const bytesPerEvent = Buffer.byteLength(JSON.stringify(realisticEvent(1, token)))
  fs.rmSync(server.dataDir, { recursive: true, force: true })
  return {
    eventsPerSecond: acknowledgedEvents / DURATION_S,
    acknowledgedEvents,
    stored,
    errors: result.errors,
    p99: result.p99,
    tool: result.tool,
    bytesPerEvent,
  }
}

async function ceiling(batchRows: number, totalRows: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-ceiling-'))
  const store = openEventStore(`chdb:${dir}`)
  await migrateEventStore(store)
  const token = 'phc_bench'
  const started = performance.now()
  for (let done = 0; done < totalRows; done += batchRows) {
    let ndjson = ''
    for (let i = 0; i < batchRows; i++) {
      const e = realisticEvent(done + i, token)
      const props = e.properties as Record<string, unknown>
      ndjson += `${JSON.stringify({
        uuid: e.uuid,
        team_id: 1,
        event: e.event,
        distinct_id: props.distinct_id,
        person_id: '00000000-0000-0000-0000-000000000000',
        properties: JSON.stringify(props),
        timestamp: new Date().toISOString().replace('T', ' ').replace('Z', ''),
        created_at: new Date().toISOString().replace('T', ' ').replace('Z', ''),
        elements_chain: '',
        $session_id: props.$session_id,
        $window_id: props.$window_id,
        $group_0: '',
        $group_1: '',
        $group_2: '',
        $group_3: '',
        $group_4: '',
      })}\n`
    }
    await store.insertJsonEachRow('events', ndjson)
  }
  const seconds = (performance.now() - started) / 1000
  await store.close()
  fs.rmSync(dir, { recursive: true, force: true })
  return totalRows / seconds
}

async function singleEventLatency() {
  const server = await startServer()
  const token = server.credentials.project_api_key
  const url = `${server.url}/i/v0/e/`
  const headers = { 'content-type': 'application/json' }
  // Fresh uuids per request: a reused body would be deduplicated, not stored.
  const bodies = Array.from({ length: 40_000 }, (_, i) =>
    JSON.stringify({ api_key: token, ...realisticEvent(i, token) }),
  )
  // Warm-up: every one of the 5,000 users once (a running server has seen its users), which creates them.
  const creating = await pacedLoad({ url, rate: 1000, durationS: 6, headers, bodies: bodies.slice(0, 6000) })
  const steady = await pacedLoad({ url, rate: 2000, durationS: 15, headers, bodies: bodies.slice(6000) })
  // Then every event from a person never seen before: each creates a person in the metadata store.
  const strangers = Array.from({ length: 20_000 }, (_, i) => {
    const event = realisticEvent(i, token)
    ;(event.properties as Record<string, unknown>).distinct_id = `stranger-${i}`
    return JSON.stringify({ api_key: token, ...event })
  })
  const newPersons = await pacedLoad({ url, rate: 2000, durationS: 10, headers, bodies: strangers })
  await server.stop()
  fs.rmSync(server.dataDir, { recursive: true, force: true })
  return { creating, steady, newPersons }
}

const latencies = (r: PacedResult) => `${r.p50.toFixed(2)} / ${r.p99.toFixed(2)} / ${r.max.toFixed(1)}`

const t = await throughput()
if (process.env.BENCH_ONLY_THROUGHPUT) {
  process.stdout.write(`${JSON.stringify(t)}\n`)
  process.exit(0)
}
const ceiling500 = await ceiling(500, 100_000)
const ceiling10k = await ceiling(10_000, 200_000)
const single = await singleEventLatency()

printTable('Capture benchmark', [
  ['event size (JSON bytes)', String(t.bytesPerEvent)],
  ['acknowledged events/s (batches of 50)', t.eventsPerSecond.toFixed(0)],
  ['acknowledged events / counted in store', `${t.acknowledgedEvents} / ${t.stored}`],
  ['failed requests', String(t.errors)],
  ['batch request p99 (ms)', String(t.p99)],
  ['storage ceiling, 500-row inserts (rows/s)', ceiling500.toFixed(0)],
  ['storage ceiling, 10,000-row inserts (rows/s)', ceiling10k.toFixed(0)],
  ['ratio to 500-row ceiling', (t.eventsPerSecond / ceiling500).toFixed(2)],
  ['ratio to 10,000-row ceiling', (t.eventsPerSecond / ceiling10k).toFixed(2)],
  ['single-event capture at 2,000 req/s: achieved req/s', single.steady.rps.toFixed(0)],
  ['single-event capture (paced) p50 / p99 / max (ms)', latencies(single.steady)],
  ['single-event failed requests', String(single.steady.errors)],
  ['  warm-up, 1,000 req/s creating 5,000 persons: p50 / p99 / max', latencies(single.creating)],
  ['  2,000 req/s, every event a new person: p50 / p99 / max', latencies(single.newPersons)],
  ['  failed requests in these two', String(single.creating.errors + single.newPersons.errors)],
])
