// Server-mode capture: acknowledged only once the ClickHouse server has the rows, no capture log of its own.
// Driven through the ClickHouse-server adapter (@clickhouse/client) with chDB as its connection, as a server
// deployment would run it.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createChdbConnection } from 'chdb/connection'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EventRow } from '../../src/ingest/committer.js'
import { createDirectCommitter } from '../../src/ingest/direct-committer.js'
import { createClickHouseEventStore } from '../../src/storage/events/clickhouse.js'
import { migrateEventStore } from '../../src/storage/events/schema.js'
import type { EventStore } from '../../src/storage/events/types.js'
import { eventRow } from '../helpers/events.js'

let dir: string
let store: EventStore
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-direct-commit-'))
  store = createClickHouseEventStore('http://localhost:8123/default', {
    connection: createChdbConnection({ path: dir }) as never,
  })
  await migrateEventStore(store)
})
afterAll(async () => {
  await store.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

let team = 100
function rows(count: number, from = 0, teamId = team): EventRow[] {
  return Array.from({ length: count }, (_, k) =>
    eventRow({
      team_id: teamId,
      uuid: `00000000-0000-4000-8000-${String(teamId * 1_000_000 + from + k).padStart(12, '0')}`,
      event: 'tab\there',
      distinct_id: `user-${(from + k) % 7}`,
      properties: `{"n":${from + k},"city":"Zürich"}`,
      timestamp: '2026-11-22 10:00:00.000',
      created_at: '2026-11-22 10:00:00.000',
    }),
  )
}
const batch = (events: EventRow[]) => ({ events, persons: [], distinctIds: [], groups: [] })

async function stored(teamId: number): Promise<{ count: number; distinct: number; sum: number }> {
  const r = await store.query<[string, string, string]>(
    `SELECT count(), uniqExact(uuid), sum(JSONExtractInt(properties, 'n')) FROM events WHERE team_id = ${teamId}`,
  )
  const [count, distinct, sum] = r.rows[0].map(Number)
  return { count, distinct, sum }
}

describe('direct committer (server mode)', () => {
  it('acknowledges concurrent requests only once their rows are in the store, readable at once', async () => {
    team++
    const committer = createDirectCommitter({ events: store, concurrency: 2, maxRows: 50 })
    // 20 requests of 10 events: n = 0..199.
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => committer.commit(batch(rows(10, i * 10)))))
    expect(results.map((r) => r.inserted)).toEqual(Array(20).fill(10))
    // No flush: what was acknowledged is in the store. sum(0..199) = 199·200/2 = 19,900.
    expect(await stored(team)).toEqual({ count: 200, distinct: 200, sum: 19_900 })
    expect(committer.logBacklog).toEqual({ rows: 0, bytes: 0, closedSegments: 0 })
    await committer.close()
  })

  it('skips a retried request and a uuid repeated within one request', async () => {
    team++
    const committer = createDirectCommitter({ events: store })
    const first = rows(5)
    expect(await committer.commit(batch(first))).toEqual({ inserted: 5 })
    // The same five again (an SDK retry after a lost answer), plus two new ones, one of them twice.
    const [extra] = rows(1, 5)
    const again = await committer.commit(batch([...first, extra, extra, ...rows(1, 6)]))
    expect(again).toEqual({ inserted: 2 })
    // n = 0..6 once each: 21.
    expect(await stored(team)).toEqual({ count: 7, distinct: 7, sum: 21 })
    await committer.close()
  })

  it('writes the person, distinct id and group rows of a request with its events', async () => {
    team++
    const committer = createDirectCommitter({ events: store })
    const person = '0190f3b0-0000-7000-8000-00000000abcd'
    await committer.commit({
      events: rows(1),
      persons: [
        {
          team_id: team,
          id: person,
          properties: '{"email":"a@b.c"}',
          created_at: '2026-11-22 10:00:00.000000',
          is_identified: 1,
          is_deleted: 0,
          version: 3,
        },
      ],
      distinctIds: [{ team_id: team, distinct_id: 'user-0', person_id: person, is_deleted: 0, version: 3 }],
      groups: [
        {
          team_id: team,
          group_type_index: 0,
          group_key: 'acme',
          group_properties: '{}',
          created_at: '2026-11-22 10:00:00.000000',
          version: 1,
        },
      ],
    })
    const r = await store.query<[string, string, string]>(
      `SELECT (SELECT JSONExtractString(properties, 'email') FROM persons WHERE team_id = ${team}),
              (SELECT toString(person_id) FROM person_distinct_ids WHERE team_id = ${team} AND distinct_id = 'user-0'),
              (SELECT group_key FROM groups WHERE team_id = ${team})`,
    )
    expect(r.rows[0]).toEqual(['a@b.c', person, 'acme'])
    await committer.close()
  })

  it('fails only the request the server refuses; the others that shared its round are written', async () => {
    team++
    const committer = createDirectCommitter({ events: store, concurrency: 1 })
    // The first request takes the only round; the next two wait and share the following one.
    const first = committer.commit(batch(rows(3)))
    const good = committer.commit(batch(rows(4, 3)))
    const bad = committer.commit(batch([{ ...rows(1, 7)[0], uuid: 'not-a-uuid' }]))
    expect(await first).toEqual({ inserted: 3 })
    expect(await good).toEqual({ inserted: 4 })
    await expect(bad).rejects.toThrow()
    // n = 0..6: 21; nothing of the refused request.
    expect(await stored(team)).toEqual({ count: 7, distinct: 7, sum: 21 })
    await committer.close()
    await expect(committer.commit(batch(rows(1, 9)))).rejects.toThrow('capture is closed')
  })
})
