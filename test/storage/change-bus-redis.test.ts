// Changes told across processes through Redis pub/sub (REDIS_URL) instead of PostgreSQL's NOTIFY: heard by the
// other processes and not by the sender, garbage ignored, everything dropped once after the subscribed connection
// came back, and a Redis that cannot be reached neither blocks nor grows anything. Needs the Redis server at
// REDIS_URL (default redis://127.0.0.1:6379, which this machine and CI run); the two-process test also needs
// DATABASE_URL (PostgreSQL).
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { createClient } from 'redis'
import { afterAll, describe, expect, it } from 'vitest'
import { type Burrow, buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { CHANGES_CHANNEL, type Change, type ChangeBus, createChangeBus } from '../../src/storage/meta/change-bus.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379'
const reachable = await new Promise<boolean>((resolve) => {
  const { hostname, port } = new URL(redisUrl)
  const socket = net.connect({ host: hostname, port: Number(port || 6379) })
  socket.setTimeout(1_000, () => {
    socket.destroy()
    resolve(false)
  })
  socket.on('connect', () => {
    socket.end()
    resolve(true)
  })
  socket.on('error', () => resolve(false))
})
const onPostgres = Boolean(process.env.DATABASE_URL?.startsWith('postgres'))

const buses: ChangeBus[] = []
afterAll(async () => {
  for (const bus of buses) await bus.close()
})

function bus(options: { onError?: (e: unknown) => void; url?: string } = {}) {
  const heard: Change[] = []
  const b = createChangeBus({
    databaseUrl: 'sqlite::memory:',
    db: undefined as never,
    redisUrl: options.url ?? redisUrl,
    onError: options.onError ?? (() => undefined),
    reconnectMs: 200,
  })
  b.subscribe((c) => heard.push(c))
  buses.push(b)
  return { bus: b, heard }
}

const waitFor = async (check: () => boolean, timeoutMs = 3_000) => {
  const until = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > until) return false
    await new Promise((r) => setTimeout(r, 20))
  }
  return true
}
/** How many connections are subscribed to the channel, once at least `count` are (or 3 s have passed). */
const subscribed = async (count: number) => {
  const admin = createClient({ url: redisUrl })
  await admin.connect()
  try {
    const until = Date.now() + 3_000
    for (;;) {
      const [, n] = (await admin.sendCommand(['PUBSUB', 'NUMSUB', CHANGES_CHANNEL])) as [string, number]
      if (Number(n) >= count || Date.now() > until) return Number(n)
      await new Promise((r) => setTimeout(r, 20))
    }
  } finally {
    await admin.close()
  }
}

describe.skipIf(!reachable)('change bus over Redis', () => {
  it('tells the other processes, never the sender; a long persons change becomes the whole team', async () => {
    const a = bus()
    const b = bus()
    expect(await subscribed(2)).toBeGreaterThanOrEqual(2)
    await waitFor(() => false, 100)
    a.bus.publish({ kind: 'flags', teamId: 7 })
    a.bus.publish({ kind: 'persons', teamId: 7, distinctIds: Array.from({ length: 2_000 }, (_, i) => `user-${i}`) })
    expect(await waitFor(() => b.heard.length >= 2)).toBe(true)
    expect(b.heard).toEqual([
      { kind: 'flags', teamId: 7 },
      { kind: 'persons', teamId: 7 },
    ])
    await waitFor(() => false, 200)
    expect(a.heard).toEqual([])
  })

  it('ignores garbage on the channel, and drops everything once after its connection came back', async () => {
    const b = bus()
    expect(await subscribed(1)).toBeGreaterThanOrEqual(1)
    const raw = createClient({ url: redisUrl })
    await raw.connect()
    try {
      for (const garbage of ['not json', '{"origin":"x","change":{"kind":"flags","teamId":"7"}}', 'x'.repeat(10_000)]) {
        await raw.publish(CHANGES_CHANNEL, garbage)
      }
      await raw.publish(CHANGES_CHANNEL, JSON.stringify({ origin: 'another', change: { kind: 'projects' } }))
      expect(await waitFor(() => b.heard.length >= 1)).toBe(true)
      expect(b.heard).toEqual([{ kind: 'projects' }])
      // Every subscribed connection is cut (as a Redis restart would): each bus subscribes again, and tells its
      // caches to drop everything, since what was published meanwhile is lost.
      await raw.sendCommand(['CLIENT', 'KILL', 'TYPE', 'pubsub'])
      expect(await waitFor(() => b.heard.some((c) => c.kind === 'all'))).toBe(true)
      expect(await subscribed(1)).toBeGreaterThanOrEqual(1)
      await raw.publish(CHANGES_CHANNEL, JSON.stringify({ origin: 'another', change: { kind: 'flags', teamId: 9 } }))
      expect(await waitFor(() => b.heard.some((c) => c.kind === 'flags'))).toBe(true)
    } finally {
      await raw.close()
    }
  })

  it('with Redis unreachable: one error reported, publishing drops, closing does not hang', async () => {
    const errors: unknown[] = []
    const closedPort = await new Promise<number>((resolve) => {
      const server = net.createServer()
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo
        server.close(() => resolve(port))
      })
    })
    const down = bus({ url: `redis://127.0.0.1:${closedPort}`, onError: (e) => errors.push(e) })
    for (let i = 0; i < 1_000; i++) down.bus.publish({ kind: 'flags', teamId: i })
    await waitFor(() => false, 1_000)
    expect(errors.length).toBeGreaterThanOrEqual(1)
    // Reported once per connection and outage, not at every reconnection attempt.
    expect(errors.length).toBeLessThanOrEqual(2)
    const started = Date.now()
    await down.bus.close()
    expect(Date.now() - started).toBeLessThan(2_000)
  })
})

describe.skipIf(!reachable || !onPostgres)('two processes on one PostgreSQL, told through Redis', () => {
  let t: TestApp
  let second: Burrow
  let secondDir: string
  afterAll(async () => {
    await second?.close()
    if (secondDir) fs.rmSync(secondDir, { recursive: true, force: true })
    await t?.close()
  })

  it('serves a flag created through one process from the other within 1.5 s, with nothing sent through NOTIFY', async () => {
    t = await startTestApp({ env: { REDIS_URL: redisUrl } })
    secondDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-test-redis-second-'))
    second = await buildApp(
      loadConfig({
        DATA_DIR: secondDir,
        LOG_LEVEL: 'silent',
        DATABASE_URL: t.burrow.config.databaseUrl,
        CLICKHOUSE_URL: t.burrow.config.clickhouseUrl,
        REDIS_URL: redisUrl,
      }),
      { logger: false },
    )
    await second.app.ready()
    const listener = new pg.Client({ connectionString: t.burrow.config.databaseUrl })
    const notified: string[] = []
    await listener.connect()
    listener.on('notification', (m) => notified.push(m.channel))
    await listener.query(`LISTEN ${CHANGES_CHANNEL}`)
    try {
      const flags = (app: Burrow['app']) =>
        app.inject({
          method: 'POST',
          url: '/flags/?v=2',
          payload: { token: t.creds.project_api_key, distinct_id: 'x' },
        })
      expect((await flags(second.app)).json().flags).toEqual({})
      const created = await t.burrow.app.inject({
        method: 'POST',
        url: `/api/projects/${t.creds.project_id}/feature_flags/`,
        headers: t.auth,
        payload: { key: 'told-by-redis', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
      })
      expect(created.statusCode, created.body).toBe(201)
      const started = Date.now()
      let served = false
      while (Date.now() - started < 1_500 && !served) {
        served = (await flags(second.app)).json().flags['told-by-redis']?.enabled === true
        if (!served) await new Promise((r) => setTimeout(r, 25))
      }
      expect(served).toBe(true)
      expect(notified).toEqual([])
    } finally {
      await listener.end()
    }
  }, 60_000)
})
