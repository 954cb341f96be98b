import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type EventStore, migrateEventStore, openEventStore } from '../../src/storage/events/index.js'

let dir: string
let store: EventStore
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-chdb-'))
  store = openEventStore(`chdb:${dir}`)
  await migrateEventStore(store)
})
afterAll(async () => {
  await store.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

const row = (team: number, event: string, props: object) => ({
  uuid: crypto.randomUUID(),
  team_id: team,
  event,
  distinct_id: 'user-1',
  person_id: '00000000-0000-0000-0000-000000000000',
  properties: JSON.stringify(props),
  timestamp: '2026-11-01 10:00:00.123456',
  created_at: '2026-11-01 10:00:01',
  elements_chain: '',
  $session_id: 's1',
  $window_id: 'w1',
  $group_0: '',
  $group_1: '',
  $group_2: '',
  $group_3: '',
  $group_4: '',
})

describe('chDB event store', () => {
  it('round-trips inserted events through a parameterised query', async () => {
    const rows = [
      row(1, '$pageview', { $browser: 'Firefox' }),
      row(1, 'signup', { plan: "it's paid" }),
      row(2, '$pageview', {}),
    ]
    await store.insertJsonEachRow('events', rows.map((r) => JSON.stringify(r)).join('\n'))
    const result = await store.query<[string, string, number]>(
      `SELECT event, JSONExtractString(properties, 'plan'), toUnixTimestamp64Micro(timestamp) % 1000000
       FROM events WHERE team_id = {team:Int64} ORDER BY event`,
      { params: { team: 1 } },
    )
    expect(result.columns).toHaveLength(3)
    expect(result.rows).toEqual([
      ['$pageview', '', 123456],
      ['signup', "it's paid", 123456],
    ])
    expect(result.statistics.rowsRead).toBeGreaterThan(0)
  })

  it('binds parameters instead of splicing them', async () => {
    const result = await store.query<[number]>('SELECT count() FROM events WHERE event = {e:String}', {
      params: { e: "x' OR 1=1 --" },
    })
    expect(result.rows[0][0]).toBe(0)
  })

  it('stops a running query when asked to cancel it', async () => {
    const queryId = `cancel-${Date.now()}`
    const running = store.query('SELECT count() FROM numbers(100000000000) WHERE sipHash64(number) = 7', { queryId })
    const outcome = running.then(
      () => 'finished',
      (e: Error) => e.message,
    )
    let cancelled = false
    for (let i = 0; i < 50 && !cancelled; i++) {
      await new Promise((r) => setTimeout(r, 100))
      cancelled = await store.cancel(queryId)
    }
    expect(cancelled).toBe(true)
    expect(await outcome).toMatch(/cancelled/i)
    expect(await store.cancel('no-such-query')).toBe(false)
  })

  it('reports a failing query as an error', async () => {
    await expect(store.query('SELECT no_such_column FROM events')).rejects.toThrow(/no_such_column/)
  })
})

describe('query settings', () => {
  it('extends a trailing SETTINGS clause instead of adding a second one', async () => {
    const result = await store.query<[number]>('SELECT 1 SETTINGS max_threads = 1', {
      queryId: 'settings-merge',
      settings: { max_execution_time: 5 },
    })
    expect(result.rows).toEqual([[1]])
  })

  it('samples events by distinct id', async () => {
    const result = await store.query<[number]>('SELECT count() FROM events SAMPLE 0.5')
    expect(result.rows[0][0]).toBeGreaterThanOrEqual(0)
  })
})

describe('parameters', () => {
  it('binds strings with quotes, backslashes, tabs and newlines, arrays, numbers and dates exactly', async () => {
    const tricky = "it's a \\ back\tslash\nline ' OR 1=1 --"
    const result = await store.query<[string, number, string[], string]>(
      'SELECT {s:String}, {n:Int64}, {arr:Array(String)}, toString({d:DateTime64(6)})',
      { params: { s: tricky, n: -42, arr: ['a', "b'c", 'd\\e'], d: '2026-01-02 03:04:05.123456' } },
    )
    expect(result.rows[0]).toEqual([tricky, -42, ['a', "b'c", 'd\\e'], '2026-01-02 03:04:05.123456'])
  })

  it('does not hold a fast parameterised query behind a slow one', async () => {
    const queryId = `slow-param-${Date.now()}`
    const slow = store
      .query('SELECT count() FROM numbers(100000000000) WHERE cityHash64(number) = {x:UInt64}', {
        params: { x: 7 },
        queryId,
      })
      .catch((e: Error) => e.message)
    while ((await store.progress(queryId)) === undefined) await new Promise((r) => setTimeout(r, 20))
    const fast = await store.query<[string]>('SELECT {s:String}', { params: { s: 'quick' } })
    expect(fast.rows).toEqual([['quick']])
    // The slow one is still running: the fast one did not wait for it.
    expect(await store.progress(queryId)).toBeDefined()
    expect(await store.cancel(queryId)).toBe(true)
    expect(await slow).toMatch(/cancelled/i)
  })
})
