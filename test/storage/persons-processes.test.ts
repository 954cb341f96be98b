// Persons and groups written through two processes on one PostgreSQL database end as one process would leave them:
// no lost update when each process has the person cached, one person for a distinct id first seen by both at once,
// a group type created by one process never given twice by the other, and a split, deletion or property update made
// through one process's persons API reaches the other's ingestion and /flags person cache at once or within 1.5 s.
// Skipped without DATABASE_URL (on SQLite there is one serving process by design).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Burrow, buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createPersonChangeRelay } from '../../src/persons/changes.js'
import { CHANGES_CHANNEL, type Change, createChangeBus } from '../../src/storage/meta/change-bus.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

const onPostgres = Boolean(process.env.DATABASE_URL?.startsWith('postgres'))

let t: TestApp
/** Process A (the test app) and process B (a second app on the same database, its own data directory). */
let a: Burrow
let b: Burrow
let secondDir: string
let teamId: number
let token: string

beforeAll(async () => {
  if (!onPostgres) return
  t = await startTestApp()
  a = t.burrow
  secondDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-test-second-'))
  b = await buildApp(
    loadConfig({
      DATA_DIR: secondDir,
      LOG_LEVEL: 'silent',
      DATABASE_URL: a.config.databaseUrl,
      CLICKHOUSE_URL: a.config.clickhouseUrl,
    }),
    { logger: false },
  )
  await b.app.ready()
  teamId = t.creds.project_id
  token = t.creds.project_api_key
  // Both listeners connected before the first change is told.
  await new Promise((r) => setTimeout(r, 300))
}, 60_000)
afterAll(async () => {
  if (!onPostgres) return
  await b?.close()
  fs.rmSync(secondDir, { recursive: true, force: true })
  await t?.close()
})

async function capture(through: Burrow, events: Record<string, unknown>[]) {
  const res = await through.app.inject({ method: 'POST', url: '/batch/', payload: { api_key: token, batch: events } })
  expect(res.statusCode, res.body).toBe(200)
}
const set = (distinctId: string, props: Record<string, unknown>) => ({
  event: '$set',
  distinct_id: distinctId,
  properties: { $set: props },
})

/** The person of a distinct id as the metadata store has it. */
async function personOf(distinctId: string) {
  const row = await a.stores.persons.getByDistinctId(teamId, distinctId)
  return row ? { id: row.id, properties: JSON.parse(row.properties) as Record<string, unknown> } : undefined
}

async function personCount(): Promise<number> {
  const row = await a.meta.db
    .selectFrom('persons')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('team_id', '=', teamId)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

const waitFor = async (check: () => Promise<boolean>, timeoutMs: number) => {
  const until = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > until) return false
    await new Promise((r) => setTimeout(r, 20))
  }
  return true
}

describe.skipIf(!onPostgres)('persons written through two processes', () => {
  it('keeps the update made through the other process when each has the person cached ($set a, b, c)', async () => {
    await capture(b, [set('interleaved', { a: 1 })])
    await capture(a, [set('interleaved', { b: 2 })])
    await capture(b, [set('interleaved', { c: 3 })])
    expect((await personOf('interleaved'))?.properties).toEqual({ a: 1, b: 2, c: 3 })
  })

  it("re-sets a value the other process changed, though this process's cache says it is unchanged", async () => {
    await capture(b, [set('reset', { plan: 'free' })])
    await capture(a, [set('reset', { plan: 'pro' })])
    // B's cached person still says `free`: without checking, B would write nothing and `pro` would stay.
    await capture(b, [set('reset', { plan: 'free' })])
    expect((await personOf('reset'))?.properties).toEqual({ plan: 'free' })
    // $set_once and $unset against a stale cache alike.
    await capture(a, [{ event: '$set', distinct_id: 'reset', properties: { $unset: ['plan'] } }])
    await capture(b, [{ event: '$set', distinct_id: 'reset', properties: { $set_once: { plan: 'enterprise' } } }])
    expect((await personOf('reset'))?.properties).toEqual({ plan: 'enterprise' })
  })

  it('loses no property when both processes set different keys of one person at the same time', async () => {
    await capture(a, [set('racing', { start: true })])
    await capture(b, [set('racing', { start: true })])
    const writes = Array.from({ length: 24 }, (_, i) => capture(i % 2 === 0 ? a : b, [set('racing', { [`k${i}`]: i })]))
    await Promise.all(writes)
    const expected: Record<string, unknown> = { start: true }
    for (let i = 0; i < 24; i++) expected[`k${i}`] = i
    expect((await personOf('racing'))?.properties).toEqual(expected)
  })

  it('makes one person for a distinct id whose first events reach both processes at once', async () => {
    const before = await personCount()
    const ids = Array.from({ length: 12 }, (_, i) => `first-${i}`)
    await Promise.all(
      ids.flatMap((id) => [capture(a, [set(id, { via_a: true })]), capture(b, [set(id, { via_b: true })])]),
    )
    expect(await personCount()).toBe(before + 12)
    for (const id of ids) expect((await personOf(id))?.properties).toEqual({ via_a: true, via_b: true })
  })

  it('makes one person each for new distinct ids that two requests name in opposite orders at once', async () => {
    const before = await personCount()
    const ids = Array.from({ length: 30 }, (_, i) => `crossed-${i}`)
    await Promise.all([
      capture(
        a,
        ids.map((id) => set(id, { via_a: true })),
      ),
      capture(
        b,
        [...ids].reverse().map((id) => set(id, { via_b: true })),
      ),
    ])
    expect(await personCount()).toBe(before + 30)
    for (const id of ids) expect((await personOf(id))?.properties).toEqual({ via_a: true, via_b: true })
  })

  it('looks up without writing for events without a person profile, whichever process made the person', async () => {
    const personless = (id: string, event: string) => ({
      event,
      distinct_id: id,
      properties: { $process_person_profile: false, $set: { ignored: true } },
    })
    const before = await personCount()
    // B sees the id first without a profile (no person), A then makes its person, B sees it again without one.
    await capture(b, [personless('profile-later', 'anonymous view')])
    expect(await personOf('profile-later')).toBeUndefined()
    await capture(a, [set('profile-later', { plan: 'pro' })])
    await Promise.all([
      capture(b, [personless('profile-later', 'anonymous view'), personless('never-profiled', 'anonymous view')]),
      capture(a, [set('profile-later', { seats: 3 })]),
    ])
    expect((await personOf('profile-later'))?.properties).toEqual({ plan: 'pro', seats: 3 })
    expect(await personOf('never-profiled')).toBeUndefined()
    expect(await personCount()).toBe(before + 1)
  })

  it('merges once when $identify and the anonymous id arrive through different processes at once', async () => {
    const before = await personCount()
    await Promise.all([
      capture(a, [
        { event: '$identify', distinct_id: 'ana@example.com', properties: { $anon_distinct_id: 'anon-ana' } },
      ]),
      capture(b, [set('anon-ana', { seen: 'b' })]),
      capture(b, [set('ana@example.com', { email: 'ana@example.com' })]),
    ])
    const identified = await personOf('ana@example.com')
    const anonymous = await personOf('anon-ana')
    expect(anonymous?.id).toBe(identified?.id)
    expect(identified?.properties).toEqual({ seen: 'b', email: 'ana@example.com' })
    // Whatever the order, one person is left of the two ids.
    expect(await personCount()).toBe(before + 1)
  })

  it('merges with $create_alias and $merge_dangerously through one process a person the other has cached', async () => {
    await capture(b, [set('alias-main', { main: 1 })])
    await capture(b, [set('alias-other', { other: 1 })])
    await capture(a, [{ event: '$merge_dangerously', distinct_id: 'alias-main', properties: { alias: 'alias-other' } }])
    // B has `alias-other` cached as its own person (now deleted): its next $set lands on the merged one.
    await capture(b, [set('alias-other', { after: 1 })])
    const main = await personOf('alias-main')
    expect((await personOf('alias-other'))?.id).toBe(main?.id)
    expect(main?.properties).toEqual({ main: 1, other: 1, after: 1 })
    await capture(a, [{ event: '$create_alias', distinct_id: 'alias-main', properties: { alias: 'alias-third' } }])
    await capture(b, [set('alias-third', { third: 1 })])
    expect((await personOf('alias-third'))?.id).toBe(main?.id)
    expect((await personOf('alias-main'))?.properties).toEqual({ main: 1, other: 1, after: 1, third: 1 })
  })
})

describe.skipIf(!onPostgres)('group types written through two processes', () => {
  const groupTypes = async () =>
    (await a.stores.persons.groupTypeMapping(teamId)).map((g) => [g.group_type, g.group_type_index])

  async function groupColumns(through: Burrow, event: string): Promise<unknown[]> {
    const res = await through.app.inject({
      method: 'POST',
      url: `/api/projects/${teamId}/query/`,
      headers: t.auth,
      payload: {
        query: {
          kind: 'HogQLQuery',
          query: `SELECT $group_0, $group_1, $group_2 FROM events WHERE event = '${event}'`,
        },
      },
    })
    expect(res.statusCode, res.body).toBe(200)
    return res.json().results[0]
  }

  it('never gives the index of a type created through the other process to another type', async () => {
    // B reads the project's group types (none yet) and keeps them.
    await capture(b, [{ event: 'no groups', distinct_id: 'g-user' }])
    await capture(a, [{ event: 'company event', distinct_id: 'g-user', properties: { $groups: { company: 'acme' } } }])
    await capture(b, [{ event: 'project event', distinct_id: 'g-user', properties: { $groups: { project: 'p-1' } } }])
    expect(await groupTypes()).toEqual([
      ['company', 0],
      ['project', 1],
    ])
    // The project key went to $group_1, not into the company's $group_0.
    expect(await groupColumns(b, 'project event')).toEqual(['', 'p-1', ''])
    // And B knows company = 0 for events that name it.
    await capture(b, [{ event: 'company again', distinct_id: 'g-user', properties: { $groups: { company: 'beta' } } }])
    expect(await groupColumns(b, 'company again')).toEqual(['beta', '', ''])
  })

  it('gives two types created through both processes at once two indexes', async () => {
    await Promise.all([
      capture(a, [{ event: 'team event', distinct_id: 'g-user', properties: { $groups: { team: 't-1' } } }]),
      capture(b, [
        {
          event: '$groupidentify',
          distinct_id: 'g-user',
          properties: { $group_type: 'region', $group_key: 'eu', $group_set: { name: 'Europe' } },
        },
      ]),
    ])
    const types = new Map((await groupTypes()) as [string, number][])
    expect(new Set([types.get('team'), types.get('region')])).toEqual(new Set([2, 3]))
    const region = await a.stores.persons.getGroup(teamId, types.get('region') as number, 'eu')
    expect(JSON.parse(region?.properties ?? '{}')).toEqual({ name: 'Europe' })
  })

  it("shows a group type created through one process in the other's flag definitions within 1.5 s", async () => {
    const mapping = async () => {
      const res = await b.app.inject({
        url: `/api/feature_flag/local_evaluation/?token=${token}`,
        headers: t.auth,
      })
      expect(res.statusCode, res.body).toBe(200)
      return res.json().group_type_mapping as Record<string, string>
    }
    // B has the project's definitions loaded, without the type to come.
    expect(Object.values(await mapping())).not.toContain('store')
    await capture(a, [{ event: 'store event', distinct_id: 'g-user', properties: { $groups: { store: 's-1' } } }])
    const started = Date.now()
    expect(await waitFor(async () => (await mapping())['4'] === 'store', 1_500)).toBe(true)
    expect(Date.now() - started).toBeLessThan(1_500)
  })
})

describe.skipIf(!onPostgres)('person changes through the API reach the other process', () => {
  const flags = async (through: Burrow, distinctId: string) => {
    const res = await through.app.inject({
      method: 'POST',
      url: '/flags/?v=2',
      payload: { token, distinct_id: distinctId },
    })
    expect(res.statusCode, res.body).toBe(200)
    return res.json().flags['pro-only']?.enabled as boolean | undefined
  }

  beforeAll(async () => {
    if (!onPostgres) return
    const created = await a.app.inject({
      method: 'POST',
      url: `/api/projects/${teamId}/feature_flags/`,
      headers: t.auth,
      payload: {
        key: 'pro-only',
        filters: {
          groups: [
            {
              properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }],
              rollout_percentage: 100,
            },
          ],
        },
      },
    })
    expect(created.statusCode, created.body).toBe(201)
    // B serves the new flag (its definitions were told).
    expect(await waitFor(async () => (await flags(b, 'nobody')) === false, 1_500)).toBe(true)
  })

  /** A person with two distinct ids on the pro plan, cached by B's ingestion and B's /flags. */
  async function proPerson(main: string, second: string) {
    await capture(b, [{ event: '$identify', distinct_id: main, properties: { $anon_distinct_id: second } }])
    await capture(b, [set(main, { plan: 'pro' })])
    await capture(b, [{ event: 'seen', distinct_id: second }])
    expect(await flags(b, main)).toBe(true)
    expect(await flags(b, second)).toBe(true)
    const person = await personOf(main)
    expect((await personOf(second))?.id).toBe(person?.id)
    return person?.id as string
  }

  it('a split through A: B ingests the moved id as its own person and its /flags forgets the old one', async () => {
    const personId = await proPerson('split-main', 'split-second')
    const res = await a.app.inject({
      method: 'POST',
      url: `/api/projects/${teamId}/persons/${personId}/split/`,
      headers: t.auth,
      payload: { main_distinct_id: 'split-main' },
    })
    expect(res.statusCode, res.body).toBe(201)
    const started = Date.now()
    expect(await waitFor(async () => (await flags(b, 'split-second')) === false, 1_500)).toBe(true)
    expect(Date.now() - started).toBeLessThan(1_500)
    expect(await flags(b, 'split-main')).toBe(true)
    // B's ingestion writes the moved id's $set to its new person, not to the one it had cached.
    await capture(b, [set('split-second', { after_split: true })])
    const moved = await personOf('split-second')
    expect(moved?.id).not.toBe(personId)
    expect(moved?.properties).toEqual({ after_split: true })
    expect((await personOf('split-main'))?.properties).toEqual({ plan: 'pro' })
  })

  it('a deletion through A: B makes a new person for the id and its /flags forgets the deleted one', async () => {
    const personId = await proPerson('deleted-main', 'deleted-second')
    const res = await a.app.inject({
      method: 'DELETE',
      url: `/api/projects/${teamId}/persons/${personId}/`,
      headers: t.auth,
    })
    expect(res.statusCode, res.body).toBe(202)
    expect(await waitFor(async () => (await flags(b, 'deleted-main')) === false, 1_500)).toBe(true)
    expect(await flags(b, 'deleted-second')).toBe(false)
    await capture(b, [set('deleted-main', { back: true })])
    const again = await personOf('deleted-main')
    expect(again?.id).not.toBe(personId)
    expect(again?.properties).toEqual({ back: true })
    expect(await personOf('deleted-second')).toBeUndefined()
  })

  it('a property update through A reaches B within 1.5 s', async () => {
    const personId = await proPerson('updated-main', 'updated-second')
    const res = await a.app.inject({
      method: 'POST',
      url: `/api/projects/${teamId}/persons/${personId}/update_property/`,
      headers: t.auth,
      payload: { key: 'plan', value: 'free' },
    })
    expect(res.statusCode, res.body).toBeLessThan(300)
    expect(await waitFor(async () => (await flags(b, 'updated-second')) === false, 1_500)).toBe(true)
    expect(await flags(b, 'updated-main')).toBe(false)
    // And B's own ingestion builds on the updated person.
    await capture(b, [set('updated-second', { more: 1 })])
    expect((await personOf('updated-main'))?.properties).toEqual({ plan: 'free', more: 1 })
  })
})

describe.skipIf(!onPostgres)('person changes on the change bus', () => {
  it('gathers changes per project into one notification, names too many ids as the whole project, refuses malformed ones', async () => {
    const options = { databaseUrl: a.config.databaseUrl, db: a.meta.db, onError: () => undefined }
    const sender = createChangeBus(options)
    const receiver = createChangeBus(options)
    const heard: Change[] = []
    // Only these made-up projects: the two apps on the same database tell their own changes meanwhile.
    receiver.subscribe((c) => {
      if (c.kind === 'persons' && c.teamId >= 5 && c.teamId <= 9) heard.push(c)
    })
    const forgotten: [number, string[] | null][] = []
    const relay = createPersonChangeRelay({
      bus: sender,
      forget: (teamId, ids) => {
        if (teamId >= 5 && teamId <= 9) forgotten.push([teamId, ids])
      },
      forgetAll: () => undefined,
      forgetGroupTypes: () => undefined,
      delayMs: 50,
    })
    try {
      await new Promise((r) => setTimeout(r, 500))
      relay.changed(5, ['x', 'y'])
      relay.changed(5, ['y', 'z'])
      relay.changed(6, ['w'])
      const many = Array.from({ length: 2_000 }, (_, i) => `distinct-id-${i}`)
      sender.publish({ kind: 'persons', teamId: 7, distinctIds: many })
      const raw = new pg.Client({ connectionString: a.config.databaseUrl })
      await raw.connect()
      for (const change of [
        { kind: 'persons', teamId: 8, distinctIds: [1, 2] },
        { kind: 'persons', teamId: 'x' },
        { kind: 'persons', teamId: 9, distinctIds: 'a' },
      ]) {
        await raw.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, JSON.stringify({ change })])
      }
      await raw.end()
      expect(await waitFor(async () => heard.length >= 3, 2_000)).toBe(true)
      await new Promise((r) => setTimeout(r, 200))
      expect(heard).toEqual(
        expect.arrayContaining([
          { kind: 'persons', teamId: 5, distinctIds: ['x', 'y', 'z'] },
          { kind: 'persons', teamId: 6, distinctIds: ['w'] },
          { kind: 'persons', teamId: 7 },
        ]),
      )
      expect(heard).toHaveLength(3)
      // The relay forgets only what other processes tell it, never what it sent itself.
      expect(forgotten).toEqual([])
    } finally {
      await sender.close()
      await receiver.close()
    }
  })
})
