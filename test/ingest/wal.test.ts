import { execFileSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createCommitter } from '../../src/ingest/committer.js'
import { openWal, parseSegment } from '../../src/ingest/wal.js'
import { migrateEventStore, openEventStore } from '../../src/storage/events/index.js'
import type { EventStore } from '../../src/storage/events/types.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { eventRow } from '../helpers/events.js'

const dirs: string[] = []
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-wal-'))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

describe('capture log files', () => {
  it('gives back what was appended, segment by segment, after a restart', async () => {
    const dir = tempDir()
    const wal = openWal(dir)
    await wal.append([{ table: 'events', format: 'TabSeparated', payload: Buffer.from('a\tb\n') }])
    await wal.append([{ table: 'persons', format: 'JSONEachRow', payload: Buffer.from('{"x":"é"}\n') }])
    const first = await wal.rotate()
    expect(first?.records.map((r) => r.table)).toEqual(['events', 'persons'])
    await wal.append([{ table: 'events', format: 'TabSeparated', payload: Buffer.from('c\td\n') }])
    await wal.close()

    const again = openWal(dir).recover()
    expect(again).toHaveLength(2)
    expect(again[0].records.map((r) => r.payload.toString())).toEqual(['a\tb\n', '{"x":"é"}\n'])
    expect(again[1].records.map((r) => r.payload.toString())).toEqual(['c\td\n'])
  })

  // A real full disk: a small tmpfs (mounting needs root, as CI has; elsewhere this case is skipped).
  const root = process.getuid?.() === 0
  it.skipIf(!root)('cuts a write that the disk stopped part-way off the segment, so later records replay', async () => {
    const dir = tempDir()
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir])
    const wal = openWal(dir)
    try {
      const record = (byte: string, size: number) => ({
        table: 'events',
        format: 'TabSeparated' as const,
        payload: Buffer.alloc(size, byte),
      })
      await wal.append([record('a', 20_000)])
      // Too large for what is left: the file system takes part of it, then refuses the rest.
      await expect(wal.append([record('b', 60_000)])).rejects.toThrow(/ENOSPC/)
      await wal.append([record('c', 10_000)])
      await wal.close()
      const [segment] = openWal(dir).recover()
      expect(segment.records.map((r) => [r.payload[0], r.payload.length])).toEqual([
        [0x61, 20_000],
        [0x63, 10_000],
      ])
    } finally {
      await wal.close().catch(() => undefined)
      // Lazily: an open handle must not leave the mount behind.
      execFileSync('umount', ['-l', dir])
    }
  })

  it('drops a record cut short by a crash and anything unreadable after it', () => {
    const whole = Buffer.from('events\tTabSeparated\t4\na\tb\n')
    expect(parseSegment(whole)).toHaveLength(1)
    expect(parseSegment(Buffer.concat([whole, Buffer.from('events\tTabSeparated\t10\nab')]))).toHaveLength(1)
    expect(parseSegment(Buffer.concat([whole, Buffer.from('events\tTabSep')]))).toHaveLength(1)
    expect(parseSegment(Buffer.from('not a header\n'))).toHaveLength(0)
    expect(parseSegment(Buffer.from('events;drop\tTabSeparated\t1\nx'))).toHaveLength(0)
  })
})

describe('replay at start', () => {
  let app: TestApp | undefined
  afterEach(async () => {
    await app?.close()
    app = undefined
  })

  const line = (team: number, uuid: string, event: string, timestamp: string) =>
    `${[uuid, team, event, 'replayed-user', '00000000-0000-0000-0000-000000000000', '{}']
      .concat([timestamp, timestamp, '', '', ''])
      .concat(['', '', '', '', ''])
      .join('\t')}\n`

  it('moves rows a crash left in the log into the store, skipping those already stored', async () => {
    const dataDir = tempDir()
    app = await startTestApp({ env: { DATA_DIR: dataDir } })
    const team = app.creds.project_id
    const stored = crypto.randomUUID()
    const res = await app.burrow.app.inject({
      method: 'POST',
      url: '/e/',
      payload: { api_key: app.creds.project_api_key, event: 'before crash', distinct_id: 'u', uuid: stored },
    })
    expect(res.statusCode).toBe(200)
    const [[timestamp]] = (
      await app.burrow.events.query<[string]>('SELECT toString(timestamp) FROM events WHERE uuid = {u:UUID}', {
        params: { u: stored },
      })
    ).rows
    await app.close()
    app = undefined

    // What a crash between the log write and the store insert leaves, plus an event the store already has.
    const missing = crypto.randomUUID()
    const payload = Buffer.from(
      line(team, stored, 'before crash', timestamp) + line(team, missing, 'only in the log', timestamp),
    )
    fs.writeFileSync(
      path.join(dataDir, 'wal', '999.wal'),
      Buffer.concat([Buffer.from(`events\tTabSeparated\t${payload.length}\n`), payload]),
    )
    app = await startTestApp({ env: { DATA_DIR: dataDir } })
    const counts = await app.burrow.events.query<[string, number]>(
      `SELECT toString(uuid), count() FROM events WHERE uuid IN ({a:UUID}, {b:UUID}) GROUP BY uuid ORDER BY uuid`,
      { params: { a: stored, b: missing } },
    )
    expect(Object.fromEntries(counts.rows)).toEqual({ [stored]: 1, [missing]: 1 })
    expect(fs.readdirSync(path.join(dataDir, 'wal')).filter((f) => f === '999.wal')).toEqual([])
  })
})

/** Fault injection on a real store: while `down`, inserts fail as on a dropped connection and pings get no answer. */
function outage(store: EventStore) {
  const insert = store.insertTabSeparated.bind(store)
  const ping = store.ping.bind(store)
  const state = { down: true }
  store.insertTabSeparated = async (...args) => {
    if (state.down) throw new Error('connection refused')
    return insert(...args)
  }
  store.ping = async () => !state.down && ping()
  return state
}

describe('an event store that stops answering', () => {
  let app: TestApp | undefined
  afterEach(async () => {
    await app?.close()
    app = undefined
  })

  it('is waited for: acknowledged events arrive once it is back, none set aside', async () => {
    const dataDir = tempDir()
    app = await startTestApp({ env: { DATA_DIR: dataDir } })
    const engine = outage(app.burrow.eventStore)
    const uuid = crypto.randomUUID()
    const res = await app.burrow.app.inject({
      method: 'POST',
      url: '/e/',
      payload: { api_key: app.creds.project_api_key, event: 'while down', distinct_id: 'u', uuid },
    })
    expect(res.statusCode).toBe(200)
    // Longer than the retries for a refusing store would take, with the segment still waiting.
    await new Promise((r) => setTimeout(r, 1_500))
    engine.down = false
    const counts = await app.burrow.events.query<[number]>('SELECT count() FROM events WHERE uuid = {u:UUID}', {
      params: { u: uuid },
    })
    expect(counts.rows[0][0]).toBe(1)
    expect(fs.readdirSync(path.join(dataDir, 'wal')).filter((f) => f.endsWith('.rejected'))).toEqual([])
  })
})

describe('a long outage', () => {
  it('sets the open segment aside on disk past its size, and moves every event in once the store is back', async () => {
    const dir = tempDir()
    const store = openEventStore(`chdb:${path.join(dir, 'chdb')}`)
    await migrateEventStore(store)
    const state = outage(store)
    const walDir = path.join(dir, 'wal')
    const committer = createCommitter({ events: store, walDir, spillBytes: 4096, drainDelayMs: 20 })
    const row = (uuid: string) =>
      eventRow({ uuid, event: 'during outage', properties: JSON.stringify({ padding: 'x'.repeat(200) }) })
    try {
      const uuids: string[] = []
      for (let batch = 0; batch < 30; batch++) {
        const events = Array.from({ length: 10 }, () => row(crypto.randomUUID()))
        for (const e of events) uuids.push(e.uuid)
        expect(await committer.commit({ events, persons: [], distinctIds: [], groups: [] })).toEqual({ inserted: 10 })
        await new Promise((r) => setTimeout(r, 5))
      }
      // A retry of an event still waiting in a set-aside segment is known as one.
      const retried = [row(uuids[3])]
      expect(await committer.commit({ events: retried, persons: [], distinctIds: [], groups: [] })).toEqual({
        inserted: 0,
      })
      await new Promise((r) => setTimeout(r, 50))
      const segments = fs.readdirSync(walDir).filter((f) => f.endsWith('.wal'))
      expect(segments.length).toBeGreaterThan(5)
      state.down = false
      await committer.flushPending()
      const counts = await store.query<[number, number]>(
        "SELECT count(), uniqExact(uuid) FROM events WHERE event = 'during outage'",
      )
      expect(counts.rows[0]).toEqual([300, 300])
      expect(fs.readdirSync(walDir).filter((f) => f.endsWith('.wal'))).toEqual([])
    } finally {
      state.down = false
      await committer.close()
      await store.close()
    }
  })
})

describe('the first captures after a start', () => {
  it('are acknowledged before the engine answers, and a retry of an event stored before the start is kept out', async () => {
    const dir = tempDir()
    const store = openEventStore(`chdb:${path.join(dir, 'chdb')}`)
    await migrateEventStore(store)
    const walDir = path.join(dir, 'wal')
    const batch = (events: ReturnType<typeof eventRow>[]) => ({ events, persons: [], distinctIds: [], groups: [] })
    // Written now: the start's preload reads the ids of the last hour.
    const timestamp = new Date().toISOString().replace('T', ' ').replace('Z', '')
    const [before, retried, fresh] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()]

    // Before the restart: two events stored.
    const first = createCommitter({ events: store, walDir })
    const row = (uuid: string) => eventRow({ uuid, timestamp, created_at: timestamp })
    const stored = [row(before), row(retried)]
    expect(await first.commit(batch(stored))).toEqual({ inserted: 2 })
    await first.close()

    // After it, the engine's first answers are held back (as while it opens): the acknowledgement does not wait.
    let answer!: () => void
    const answering = new Promise<void>((r) => {
      answer = r
    })
    const query = store.query.bind(store)
    store.query = (async (...args: Parameters<typeof store.query>) => {
      await answering
      return query(...args)
    }) as typeof store.query
    const second = createCommitter({ events: store, walDir })
    try {
      const acknowledged = await Promise.race([
        second.commit(batch([row(retried), row(fresh)])),
        new Promise((r) => setTimeout(() => r('waited for the engine'), 10_000)),
      ])
      // Both counted as new: the retry is known as one only once the store answers.
      expect(acknowledged).toEqual({ inserted: 2 })
      answer()
      await second.flushPending()
      store.query = query
      const counts = await store.query<[string, number]>(
        'SELECT toString(uuid), count() FROM events WHERE uuid IN {u:Array(UUID)} GROUP BY uuid',
        { params: { u: [before, retried, fresh] } },
      )
      expect(Object.fromEntries(counts.rows)).toEqual({ [before]: 1, [retried]: 1, [fresh]: 1 })
      // Once the store has answered, a retry is known as one before it is acknowledged.
      expect(await second.commit(batch([row(before)]))).toEqual({ inserted: 0 })
    } finally {
      answer()
      store.query = query
      await second.close()
      await store.close()
    }
  })
})

describe('moving a segment with new persons into the store', () => {
  it('inserts its tables one after another, never side by side, and every row arrives', async () => {
    const dir = tempDir()
    const store = openEventStore(`chdb:${path.join(dir, 'chdb')}`)
    await migrateEventStore(store)
    // Counts the inserts running at once on the real store.
    let running = 0
    let most = 0
    const tables: string[] = []
    const watched =
      <A extends unknown[]>(insert: (table: string, ...rest: A) => Promise<void>) =>
      async (table: string, ...rest: A) => {
        running++
        most = Math.max(most, running)
        tables.push(table)
        try {
          await insert(table, ...rest)
        } finally {
          running--
        }
      }
    store.insertTabSeparated = watched(store.insertTabSeparated.bind(store))
    store.insertJsonEachRow = watched(store.insertJsonEachRow.bind(store))
    const committer = createCommitter({ events: store, walDir: path.join(dir, 'wal'), drainDelayMs: 10 })
    try {
      const personId = crypto.randomUUID()
      const batch = {
        events: [eventRow({ uuid: crypto.randomUUID(), distinct_id: 'new-1', person_id: personId })],
        persons: [
          {
            team_id: 1,
            id: personId,
            properties: '{"plan":"pro"}',
            created_at: '2026-11-22 10:00:00.000000',
            is_identified: 0,
            is_deleted: 0,
            version: 0,
          },
        ],
        distinctIds: [{ team_id: 1, distinct_id: 'new-1', person_id: personId, is_deleted: 0, version: 0 }],
        groups: [
          {
            team_id: 1,
            group_type_index: 0,
            group_key: 'acme',
            group_properties: '{}',
            created_at: '2026-11-22 10:00:00.000000',
            version: 0,
          },
        ],
      }
      expect(await committer.commit(batch)).toEqual({ inserted: 1 })
      await committer.flushPending()
      expect(tables.sort()).toEqual(['events', 'groups', 'person_distinct_ids', 'persons'])
      expect(most).toBe(1)
      const counts = await store.query<[number, number, number, number]>(
        `SELECT (SELECT count() FROM events), (SELECT count() FROM persons), (SELECT count() FROM person_distinct_ids),
                (SELECT count() FROM groups)`,
      )
      expect(counts.rows[0].map(Number)).toEqual([1, 1, 1, 1])
    } finally {
      await committer.close()
      await store.close()
    }
  })
})
