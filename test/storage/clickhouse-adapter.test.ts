// The ClickHouse-server adapter, driven through @clickhouse/client with chDB as its connection: the same client
// code path a server deployment uses (query formats, parameters, inserts, commands), without a server on this
// machine (Debian only ships ClickHouse 18.16, far too old for this SQL).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createChdbConnection } from 'chdb/connection'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClickHouseEventStore } from '../../src/storage/events/clickhouse.js'
import { EVENT_COLUMNS, migrateEventStore } from '../../src/storage/events/schema.js'
import type { EventStore } from '../../src/storage/events/types.js'

let dir: string
let store: EventStore
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-ch-adapter-'))
  store = createClickHouseEventStore('http://localhost:8123/default', {
    connection: createChdbConnection({ path: dir }) as never,
  })
  await migrateEventStore(store)
})
afterAll(async () => {
  await store.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

describe('ClickHouse adapter (through @clickhouse/client)', () => {
  it('answers a ping and creates the tables', async () => {
    expect(await store.ping()).toBe(true)
    const tables = await store.query<[string]>(
      'SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name',
    )
    expect(tables.rows.map((r) => r[0])).toEqual(
      expect.arrayContaining(['events', 'groups', 'person_distinct_ids', 'persons']),
    )
  })

  it('inserts TabSeparated and JSONEachRow rows and reads them back with bound parameters', async () => {
    const uuid = '0190f3b0-0000-7000-8000-000000000001'
    const row = [
      uuid,
      '7',
      'signup',
      "o'brien",
      uuid,
      '{"plan":"pro"}',
      '2026-11-01 10:00:00.000000',
      '2026-11-01 10:00:01.000000',
      '',
      's1',
      'w1',
      '',
      '',
      '',
      '',
      '',
    ]
    expect(row).toHaveLength(EVENT_COLUMNS.length)
    await store.insertTabSeparated('events', EVENT_COLUMNS, `${row.join('\t')}\n`)
    await store.insertJsonEachRow(
      'persons',
      `${JSON.stringify({ team_id: 7, id: uuid, properties: '{}', created_at: '2026-11-01 10:00:00', is_identified: 1, is_deleted: 0, version: 3 })}\n`,
    )
    const events = await store.query<[string, string]>(
      'SELECT event, JSONExtractString(properties, {key:String}) FROM events WHERE team_id = {team:Int64} AND distinct_id = {id:String}',
      { params: { team: 7, id: "o'brien", key: 'plan' } },
    )
    expect(events.columns).toHaveLength(2)
    expect(events.rows).toEqual([['signup', 'pro']])
    const persons = await store.query<[number]>('SELECT max(version) FROM persons WHERE team_id = {team:Int64}', {
      params: { team: 7 },
    })
    expect(persons.rows).toEqual([[3]])
  })

  it('reports a failing query as an error', async () => {
    await expect(store.query('SELECT no_such_column FROM events')).rejects.toThrow(/no_such_column/)
  })
})
