/**
 * `burrow backup` of a running Burrow holding BENCH_BACKUP_EVENTS events (default 3,000,000), against capture's
 * single-event latency in the same run:
 * 1. The events are written straight into the engine of a stopped Burrow (capture would take an hour for 3M here),
 *    with posthog-js-like properties, then Burrow is started on that data directory.
 * 2. A backup with no load: how long it takes (T) and its size.
 * 3. Baseline: paced single-event capture (`/i/v0/e/`, BENCH_BACKUP_RATE req/s) for T seconds, no backup.
 * 4. The same load for T seconds while a second backup runs: p99 during it, and its ratio to the baseline.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { migrateEventStore, openEventStore } from '../src/storage/events/index.js'
import { printTable, realisticEvent, root, startServer } from './lib.js'
import { type PacedResult, pacedLoad } from './paced.js'

const EVENTS = Number(process.env.BENCH_BACKUP_EVENTS ?? 3_000_000)
const RATE = Number(process.env.BENCH_BACKUP_RATE ?? 1000)

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-bench-backup-'))
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-bench-backups-'))

// 1. A Burrow made once (credentials, project), stopped, filled, started again.
const first = await startServer({ DATA_DIR: dataDir })
const token = first.credentials.project_api_key
const teamId = first.credentials.project_id
await first.stop()
{
  const events = openEventStore(`chdb:${path.join(dataDir, 'chdb')}`)
  await migrateEventStore(events)
  const filled = performance.now()
  // ~1 KB of properties per event, varied like posthog-js's; one insert per million rows.
  for (let from = 0; from < EVENTS; from += 1_000_000) {
    const n = Math.min(1_000_000, EVENTS - from)
    await events.exec(
      `INSERT INTO events (uuid, team_id, event, distinct_id, person_id, properties, timestamp, created_at,
         elements_chain, \`$session_id\`, \`$window_id\`, \`$group_0\`, \`$group_1\`, \`$group_2\`, \`$group_3\`, \`$group_4\`)
       SELECT generateUUIDv4(), ${teamId}, if(number % 7 = 0, 'clicked button', '$pageview'),
         concat('user-', toString(number % 50000)), generateUUIDv4(),
         concat('{"$os":"Mac OS X","$browser":"', if(number % 3 = 0, 'Firefox', 'Chrome'),
           '","$current_url":"https://shop.example.com/products/', toString(number % 200),
           '?utm_source=newsletter","$host":"shop.example.com","$pathname":"/products/', toString(number % 200),
           '","$insert_id":"', hex(sipHash64(number)), '","$session_id":"session-', toString(intDiv(number, 20)),
           '","plan":"', ['free','pro','enterprise'][number % 3 + 1], '","cart_value":', toString((number % 1000) / 10),
           ',"$raw_user_agent":"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36","$lib":"web","$lib_version":"1.449.2"}'),
         now64(6) - toIntervalSecond(number % 2592000), now64(6), '', concat('session-', toString(intDiv(number, 20))),
         '', '', '', '', '', ''
       FROM numbers(${from}, ${n})`,
    )
  }
  console.log(`filled ${EVENTS} events in ${((performance.now() - filled) / 1000).toFixed(1)} s`)
  await events.close()
}
const server = await startServer({ DATA_DIR: dataDir })

async function backup(dir: string): Promise<{ seconds: number; bytes: number }> {
  const started = performance.now()
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'backup', dir, '--json', '--no-progress'], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'error' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout.on('data', (d) => {
    out += d
  })
  const code = await new Promise<number>((r) => child.once('exit', (c) => r(c ?? 1)))
  if (code !== 0) throw new Error(`backup exited ${code}`)
  return { seconds: (performance.now() - started) / 1000, bytes: JSON.parse(out).bytes }
}

const url = `${server.url}/i/v0/e/`
const headers = { 'content-type': 'application/json' }
const bodiesFor = (seconds: number, offset: number) =>
  Array.from({ length: Math.ceil(RATE * seconds) + 10 }, (_, i) =>
    JSON.stringify({ api_key: token, ...realisticEvent(offset + i, token) }),
  )

// Warm-up: the 5,000 users of the load seen once (a running server has seen its users).
await pacedLoad({ url, rate: RATE, durationS: 6, headers, bodies: bodiesFor(6, 0) })

// 2. A backup alone.
const alone = await backup(path.join(work, 'alone'))
const window = Math.max(5, Math.ceil(alone.seconds))

// 3. Baseline: the load for as long as a backup takes.
const baseline = await pacedLoad({ url, rate: RATE, durationS: window, headers, bodies: bodiesFor(window, 10_000) })

// 4. The same load while a backup runs.
const during = pacedLoad({ url, rate: RATE, durationS: window, headers, bodies: bodiesFor(window, 20_000) })
const loaded = await backup(path.join(work, 'during'))
const withBackup: PacedResult = await during

await server.stop()
fs.rmSync(dataDir, { recursive: true, force: true })
fs.rmSync(work, { recursive: true, force: true })

const ms = (r: PacedResult) => `${r.p50.toFixed(2)} / ${r.p99.toFixed(2)} / ${r.max.toFixed(1)} ms`
printTable(
  `burrow backup of ${EVENTS.toLocaleString('en')} events, capture at ${RATE} req/s (load ${os.loadavg()[0].toFixed(2)})`,
  [
    ['backup alone', `${alone.seconds.toFixed(1)} s, ${(alone.bytes / 1e6).toFixed(0)} MB`],
    ['backup under capture', `${loaded.seconds.toFixed(1)} s`],
    ['capture p50 / p99 / max, no backup', ms(baseline)],
    ['capture p50 / p99 / max, during backup', ms(withBackup)],
    ['p99 ratio (goal ≤ 2)', (withBackup.p99 / baseline.p99).toFixed(2)],
    ['errors (no backup / during)', `${baseline.errors} / ${withBackup.errors}`],
  ],
)
