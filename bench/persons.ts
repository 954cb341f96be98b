/**
 * Persons at scale.
 * 1. `GET /persons/?properties=…` over 1M persons (each with a distinct id), a filter matching a tenth of them and
 *    one matching a single person; p50 of the API (server in its own process, HTTP) beside the hand-written SQL
 *    measured on the same data just before the server starts (ClickHouse `FINAL` read of the newest 101 matching
 *    ids, then the 100 rows and their distinct ids from the metadata store — the same two reads the API makes).
 * 2. Capture p99 (single events, paced at a fixed rate) while one person's events are deleted from the events
 *    table (BENCH_EVENTS rows, default 2M; 1% of them the deleted person's), beside the same load without.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { migrateEventStore, openEventStore } from '../src/storage/events/index.js'
import { openMetaDb } from '../src/storage/meta/db.js'
import { migrateMeta } from '../src/storage/meta/migrate.js'
import { percentile, printTable, realisticEvent, startServer } from './lib.js'
import { pacedLoad } from './paced.js'

const PERSONS = Number(process.env.BENCH_PERSONS ?? 1_000_000)
const EVENTS = Number(process.env.BENCH_EVENTS ?? 2_000_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 30)
const RATE = Number(process.env.BENCH_RATE ?? 1000)
const LOAD_S = Number(process.env.BENCH_DURATION ?? 10)
const TEAM = 1
const VICTIMS = 4

const uuidOf = (i: number) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`
const FILTERS = {
  tenth: [{ key: 'plan', value: 'pro', type: 'person' }],
  one: [{ key: 'email', value: `user-${Math.floor(PERSONS / 2)}@example.com`, type: 'person' }],
}

/** Persons `user-i` (i < PERSONS), plan pro for every tenth, created one second apart; victims own 1% of events. */
async function seed(dataDir: string) {
  const started = performance.now()
  const meta = openMetaDb(`sqlite:${path.join(dataDir, 'burrow.sqlite')}`)
  await migrateMeta(meta.db, meta.dialect)
  const props = `'{"email":"user-' || i || '@example.com","plan":"' || (CASE WHEN i % 10 = 0 THEN 'pro' ELSE 'free' END) || '","seats":' || (i % 100) || '}'`
  const uuid = `'00000000-0000-4000-8000-' || printf('%012x', i)`
  await sql
    .raw(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ${PERSONS})
       INSERT INTO persons (id, team_id, properties, is_identified, version, created_at)
       SELECT ${uuid}, ${TEAM}, ${props}, 1, 0, strftime('%Y-%m-%dT%H:%M:%fZ', 1700000000 + i, 'unixepoch') FROM n`,
    )
    .execute(meta.db)
  await sql
    .raw(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ${PERSONS})
       INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, version) SELECT ${TEAM}, 'user-' || i, ${uuid}, 0 FROM n`,
    )
    .execute(meta.db)
  await meta.close()

  const events = openEventStore(`chdb:${path.join(dataDir, 'chdb')}`)
  await migrateEventStore(events)
  const chUuid = `toUUID(concat('00000000-0000-4000-8000-', leftPad(lower(hex(number)), 12, '0')))`
  await events.exec(
    `INSERT INTO persons SELECT ${TEAM}, ${chUuid},
       concat('{"email":"user-', toString(number), '@example.com","plan":"', if(number % 10 = 0, 'pro', 'free'), '","seats":', toString(number % 100), '}'),
       toDateTime64(1700000000 + number, 6, 'UTC'), 1, 0, 0 FROM numbers(${PERSONS})`,
  )
  await events.exec(
    `INSERT INTO person_distinct_ids SELECT ${TEAM}, concat('user-', toString(number)), ${chUuid}, 0, 0 FROM numbers(${PERSONS})`,
  )
  // Events from the last day; every hundredth belongs to one of the victims (user-0 … user-3).
  await events.exec(
    `INSERT INTO events (uuid, team_id, event, distinct_id, person_id, properties, timestamp, created_at, elements_chain,
       \`$session_id\`, \`$window_id\`, \`$group_0\`, \`$group_1\`, \`$group_2\`, \`$group_3\`, \`$group_4\`)
     SELECT generateUUIDv4(), ${TEAM}, if(number % 7 = 0, 'clicked', '$pageview'),
       if(number % 100 = 0, concat('user-', toString(intDiv(number, 100) % ${VICTIMS})), concat('user-', toString(number % ${PERSONS}))),
       toUUID('00000000-0000-0000-0000-000000000000'), '{"$current_url":"https://example.com/"}',
       now64(6) - toIntervalSecond(number % 86400), now64(6) - INTERVAL 1 MINUTE, '', '', '', '', '', '', '', ''
     FROM numbers(${EVENTS})`,
  )
  const baseline: Record<string, number> = {}
  for (const [name, filter] of Object.entries(FILTERS)) {
    const { key, value } = filter[0]
    const meta2 = openMetaDb(`sqlite:${path.join(dataDir, 'burrow.sqlite')}`)
    const times: number[] = []
    for (let r = 0; r < RUNS; r++) {
      const t0 = performance.now()
      const found = await events.query<[string]>(
        `SELECT toString(id) FROM persons FINAL
         WHERE team_id = {team:Int64} AND is_deleted = 0 AND JSONExtractString(properties, {key:String}) = {value:String}
         ORDER BY created_at DESC, id DESC LIMIT 101`,
        { params: { team: TEAM, key, value } },
      )
      const ids = found.rows.slice(0, 100).map((row) => row[0])
      if (ids.length > 0) {
        await meta2.db.selectFrom('persons').selectAll().where('id', 'in', ids).execute()
        await meta2.db.selectFrom('person_distinct_ids').selectAll().where('person_id', 'in', ids).execute()
      }
      times.push(performance.now() - t0)
    }
    await meta2.close()
    baseline[name] = percentile(
      times.sort((a, b) => a - b),
      50,
    )
  }
  await events.close()
  return { baseline, seedSeconds: (performance.now() - started) / 1000 }
}

async function apiP50(url: string, auth: string, filter: unknown) {
  const target = `${url}/api/projects/${TEAM}/persons/?properties=${encodeURIComponent(JSON.stringify(filter))}`
  const times: number[] = []
  let count = 0
  for (let r = 0; r < RUNS + 3; r++) {
    const t0 = performance.now()
    const res = await fetch(target, { headers: { authorization: `Bearer ${auth}` } })
    const body = (await res.json()) as { results: unknown[] }
    if (res.status !== 200) throw new Error(`persons list: ${res.status} ${JSON.stringify(body)}`)
    count = body.results.length
    if (r >= 3) times.push(performance.now() - t0)
  }
  return {
    p50: percentile(
      times.sort((a, b) => a - b),
      50,
    ),
    count,
  }
}

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ')
const loadAtStart = load()
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-bench-persons-'))
const { baseline, seedSeconds } = await seed(dataDir)
const server = await startServer({ DATA_DIR: dataDir })
const key = server.credentials.personal_api_key
if (server.credentials.project_id !== TEAM) throw new Error(`expected project ${TEAM}`)
const tenth = await apiP50(server.url, key, FILTERS.tenth)
const one = await apiP50(server.url, key, FILTERS.one)
const loadAfterList = load()

// Capture: single events from 5,000 known persons, paced.
const token = server.credentials.project_api_key
const headers = { 'content-type': 'application/json' }
const captureUrl = `${server.url}/i/v0/e/`
const bodies = (offset: number) =>
  Array.from({ length: RATE * LOAD_S + 1000 }, (_, i) => JSON.stringify(realisticEvent(offset + i, token)))
await pacedLoad({ url: captureUrl, rate: RATE, durationS: 3, headers, bodies: bodies(0) })
const without = await pacedLoad({ url: captureUrl, rate: RATE, durationS: LOAD_S, headers, bodies: bodies(100_000) })

const deletionTimes: number[] = []
const deleting = (async () => {
  await new Promise((r) => setTimeout(r, 500))
  for (let v = 0; v < VICTIMS; v++) {
    const t0 = performance.now()
    const res = await fetch(`${server.url}/api/projects/${TEAM}/persons/${uuidOf(v)}/?delete_events=true`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key}` },
    })
    if (res.status !== 202) throw new Error(`delete: ${res.status} ${await res.text()}`)
    const id = res.headers.get('x-person-deletion')
    for (;;) {
      const state = (await (
        await fetch(`${server.url}/api/projects/${TEAM}/persons/deletions/${id}/`, {
          headers: { authorization: `Bearer ${key}` },
        })
      ).json()) as { status: string }
      if (state.status === 'done') break
      await new Promise((r) => setTimeout(r, 50))
    }
    deletionTimes.push(performance.now() - t0)
  }
})()
const during = await pacedLoad({ url: captureUrl, rate: RATE, durationS: LOAD_S, headers, bodies: bodies(200_000) })
await deleting
await server.stop()
fs.rmSync(dataDir, { recursive: true, force: true })

const ms = (n: number) => n.toFixed(1)
printTable(`Persons benchmark (${PERSONS.toLocaleString('en')} persons, ${EVENTS.toLocaleString('en')} events)`, [
  ['load average 1/5/15 min: at start / after the list runs', `${loadAtStart}  |  ${loadAfterList}`],
  ['seeding (s)', seedSeconds.toFixed(0)],
  [`list, plan = pro (1 in 10; page of ${tenth.count}): API p50 (ms)`, ms(tenth.p50)],
  ['  hand-written SQL p50 (ms)', ms(baseline.tenth)],
  ['  ratio', (tenth.p50 / baseline.tenth).toFixed(2)],
  [`list, email = one person (${one.count} found): API p50 (ms)`, ms(one.p50)],
  ['  hand-written SQL p50 (ms)', ms(baseline.one)],
  ['  ratio', (one.p50 / baseline.one).toFixed(2)],
  [`capture ${RATE} req/s, no deletion: p50 / p99 (ms)`, `${ms(without.p50)} / ${ms(without.p99)}`],
  [`capture ${RATE} req/s, ${VICTIMS} deletions in turn: p50 / p99 (ms)`, `${ms(during.p50)} / ${ms(during.p99)}`],
  ['  p99 ratio', (during.p99 / without.p99).toFixed(2)],
  ['  each deletion, request to done (ms)', deletionTimes.map((t) => t.toFixed(0)).join(', ')],
  ['  capture errors (without / during)', `${without.errors} / ${during.errors}`],
])
