import { gzipSync } from 'node:zlib'
import { sql } from 'kysely'
import LZString from 'lz-string'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createUsageStore } from '../../src/ingest/usage-store.js'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let token: string
beforeAll(async () => {
  t = await startTestApp()
  token = t.creds.project_api_key
})
afterAll(() => t.close())

let seq = 0
let distinctId: string
beforeEach(() => {
  seq++
  distinctId = `user-${seq}-${Math.random().toString(36).slice(2)}`
})

const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
  t.burrow.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload),
  })

async function eventsOf(id: string) {
  const result = await t.burrow.events.query<[string, string, string, string]>(
    `SELECT event, toString(person_id), properties, toString(timestamp) FROM events
     WHERE team_id = {team:Int64} AND distinct_id = {id:String} ORDER BY timestamp, event`,
    { params: { team: t.creds.project_id, id } },
  )
  return result.rows.map(([event, personId, properties, timestamp]) => ({
    event,
    personId,
    properties: JSON.parse(properties) as Record<string, unknown>,
    timestamp,
  }))
}

async function personOf(id: string) {
  const person = await t.burrow.stores.persons.getByDistinctId(t.creds.project_id, id)
  return person && { ...person, properties: JSON.parse(person.properties) as Record<string, unknown> }
}

describe('capture formats', () => {
  it('stores a single JSON event and answers {status: 1}', async () => {
    const res = await post('/i/v0/e/', {
      api_key: token,
      event: 'signup',
      distinct_id: distinctId,
      properties: { plan: 'pro' },
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ status: 1 })
    const [ev] = await eventsOf(distinctId)
    expect(ev.event).toBe('signup')
    expect(ev.properties.plan).toBe('pro')
  })

  it('accepts a batch as {batch: [...]} with distinct ids in properties', async () => {
    const res = await post('/batch/', {
      api_key: token,
      batch: [
        { event: 'a', properties: { distinct_id: distinctId } },
        { event: 'b', distinct_id: distinctId, properties: {} },
      ],
    })
    expect(res.statusCode).toBe(200)
    expect((await eventsOf(distinctId)).map((e) => e.event).sort()).toEqual(['a', 'b'])
  })

  it('accepts a batch as a bare array with the token in properties', async () => {
    const res = await post('/e/', [{ event: 'arr', properties: { distinct_id: distinctId, token } }])
    expect(res.statusCode).toBe(200)
    expect(await eventsOf(distinctId)).toHaveLength(1)
  })

  it('accepts gzip with Content-Encoding, with ?compression=gzip-js, and unannounced gzip as text/plain', async () => {
    const body = (event: string) => gzipSync(JSON.stringify({ api_key: token, event, distinct_id: distinctId }))
    expect((await post('/e/', body('g1'), { 'content-encoding': 'gzip' })).statusCode).toBe(200)
    expect(
      (await post('/e/?compression=gzip-js', body('g2'), { 'content-type': 'application/octet-stream' })).statusCode,
    ).toBe(200)
    expect((await post('/e/', body('g3'), { 'content-type': 'text/plain' })).statusCode).toBe(200)
    expect((await eventsOf(distinctId)).map((e) => e.event).sort()).toEqual(['g1', 'g2', 'g3'])
  })

  it('accepts lz64 form bodies and base64 data= forms', async () => {
    const json = JSON.stringify([{ event: 'lz', properties: { distinct_id: distinctId, token } }])
    const lz = `data=${encodeURIComponent(LZString.compressToBase64(json))}`
    const form = { 'content-type': 'application/x-www-form-urlencoded' }
    expect((await post('/e/?compression=lz64', lz, form)).statusCode).toBe(200)
    const b64 = `data=${encodeURIComponent(Buffer.from(JSON.stringify({ api_key: token, event: 'b64', distinct_id: distinctId })).toString('base64'))}`
    expect((await post('/e/', b64, form)).statusCode).toBe(200)
    expect((await eventsOf(distinctId)).map((e) => e.event).sort()).toEqual(['b64', 'lz'])
  })

  it('answers CORS preflights for browser SDKs', async () => {
    const res = await t.burrow.app.inject({
      method: 'OPTIONS',
      url: '/e/',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' },
    })
    expect(res.statusCode).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example')
  })
})

describe('capture rules', () => {
  it('rejects a missing or wrong project key with 401', async () => {
    const missing = await post('/batch/', { batch: [{ event: 'x', distinct_id: distinctId }] })
    expect(missing.statusCode).toBe(401)
    expect(missing.json()).toMatchObject({ type: 'authentication_error', attr: null })
    const wrong = await post('/batch/', { api_key: 'phc_nope', batch: [{ event: 'x', distinct_id: distinctId }] })
    expect(wrong.statusCode).toBe(401)
  })

  it.each([
    ['not JSON', '{"api_key": ', 400],
    ['bad gzip', Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02]), 400],
    ['a string', '"hello"', 400],
    ['batch not an array', JSON.stringify({ api_key: 'x', batch: 5 }), 400],
  ])('rejects a malformed body (%s) with PostHog error shape', async (_name, body, status) => {
    const res = await post('/e/', body)
    expect(res.statusCode).toBe(status)
    expect(Object.keys(res.json()).sort()).toEqual(['attr', 'code', 'detail', 'type'])
    expect(res.json().type).toBe('validation_error')
  })

  it('rejects a whole batch when one event is bad, naming it, and stores none of it', async () => {
    const res = await post('/batch/', {
      api_key: token,
      batch: [
        { event: 'good', distinct_id: distinctId },
        { event: 'bad', properties: {} },
      ],
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({
      type: 'validation_error',
      attr: 'batch__1__distinct_id',
      detail: 'Invalid payload: All events must have the event field "distinct_id"!',
    })
    expect(await eventsOf(distinctId)).toHaveLength(0)
  })

  it.each([
    [{ distinct_id: 'x' }, 'event'],
    [{ event: 42, distinct_id: 'x' }, 'event'],
    [{ event: 'e', distinct_id: '' }, 'distinct_id'],
    [{ event: 'e', distinct_id: 'x', uuid: 'not-a-uuid' }, 'uuid'],
    [{ event: 'e', distinct_id: 'x', properties: [1] }, 'properties'],
  ])('rejects the bad event %o naming %s', async (event, attr) => {
    const res = await post('/e/', { api_key: token, ...event })
    expect(res.statusCode).toBe(400)
    expect(res.json().attr).toBe(attr)
  })

  it('keeps a sent uuid and stores a retried batch once', async () => {
    const uuid = '0190f3b0-0000-7000-8000-000000000abc'.replace(
      'abc',
      Math.floor(Math.random() * 4095)
        .toString(16)
        .padStart(3, '0'),
    )
    const batch = { api_key: token, batch: [{ event: 'retry', distinct_id: distinctId, uuid }] }
    expect((await post('/batch/', batch)).statusCode).toBe(200)
    expect((await post('/batch/', batch)).statusCode).toBe(200)
    const rows = await t.burrow.events.query<[string]>(
      'SELECT toString(uuid) FROM events WHERE team_id = {team:Int64} AND distinct_id = {id:String}',
      { params: { team: t.creds.project_id, id: distinctId } },
    )
    expect(rows.rows).toEqual([[uuid]])
  })

  it('corrects client clock skew with sent_at', async () => {
    const clientNow = Date.now() - 3_600_000 // the client's clock is an hour behind
    const eventTime = clientNow - 60_000 // the event happened a minute before sending
    const res = await post('/batch/', {
      api_key: token,
      sent_at: new Date(clientNow).toISOString(),
      batch: [{ event: 'skew', distinct_id: distinctId, timestamp: new Date(eventTime).toISOString() }],
    })
    expect(res.statusCode).toBe(200)
    const [ev] = await eventsOf(distinctId)
    const stored = Date.parse(`${ev.timestamp.replace(' ', 'T')}Z`)
    expect(Math.abs(stored - (Date.now() - 60_000))).toBeLessThan(10_000)
  })

  it('sets $ip from X-Forwarded-For only when proxies are trusted, and enriches GeoIP', async () => {
    const res = await post(
      '/e/',
      { api_key: token, event: 'ip', distinct_id: distinctId },
      { 'x-forwarded-for': '8.8.8.8' },
    )
    expect(res.statusCode).toBe(200)
    const [ev] = await eventsOf(distinctId)
    // TRUSTED_PROXIES is 0 here: the socket address wins.
    expect(ev.properties.$ip).toBe('127.0.0.1')
    const withIp = await post('/e/', {
      api_key: token,
      event: 'geo',
      distinct_id: distinctId,
      properties: { $ip: '8.8.8.8' },
    })
    expect(withIp.statusCode).toBe(200)
    const geo = (await eventsOf(distinctId)).find((e) => e.event === 'geo')
    expect(geo?.properties.$geoip_country_code).toBe('US')
    expect((await personOf(distinctId))?.properties.$geoip_country_code).toBe('US')
    const off = await post('/e/', {
      api_key: token,
      event: 'nogeo',
      distinct_id: distinctId,
      properties: { $ip: '8.8.8.8', $geoip_disable: true },
    })
    expect(off.statusCode).toBe(200)
    const nogeo = (await eventsOf(distinctId)).find((e) => e.event === 'nogeo')
    expect(nogeo?.properties.$geoip_country_code).toBeUndefined()
  })
})

describe('historical import', () => {
  const old = () => new Date(Date.now() - 72 * 3_600_000).toISOString()

  it('imports old events for a paid organization and counts them apart from billable events', async () => {
    const month = new Date().toISOString().slice(0, 7)
    const usage = createUsageStore(t.burrow.meta.db)
    const project = await t.burrow.stores.projects.get(t.creds.project_id)
    await t.burrow.ingest.flushBackground()
    const before = await usage.get(project!.organization_id, month)
    const res = await post('/batch/', {
      api_key: token,
      historical_migration: true,
      batch: [
        { event: 'old1', properties: { distinct_id: distinctId }, timestamp: old() },
        { event: 'old2', properties: { distinct_id: distinctId }, timestamp: old() },
      ],
    })
    expect(res.statusCode).toBe(200)
    await t.burrow.ingest.flushBackground()
    const after = await usage.get(project!.organization_id, month)
    if (!after) throw new Error('no usage row after the import')
    expect(Number(after.historical_events) - Number(before?.historical_events ?? 0)).toBe(2)
    expect(Number(after.billable_events)).toBe(Number(before?.billable_events ?? 0))
    expect(await eventsOf(distinctId)).toHaveLength(2)
  })

  it('stores a recent event of a historical batch as an ordinary event instead of refusing the batch', async () => {
    const res = await post('/batch/', {
      api_key: token,
      historical_migration: true,
      batch: [
        { event: 'old', properties: { distinct_id: distinctId }, timestamp: old() },
        { event: 'new', properties: { distinct_id: distinctId }, timestamp: new Date().toISOString() },
      ],
    })
    expect(res.statusCode).toBe(200)
    expect((await eventsOf(distinctId)).map((e) => e.event)).toEqual(['old', 'new'])
  })

  it('refuses historical import on the free plan', async () => {
    const free = await createTenant(t, { plan: 'free' })
    const res = await post('/batch/', {
      api_key: free.project.api_token,
      historical_migration: true,
      batch: [{ event: 'old', properties: { distinct_id: distinctId }, timestamp: old() }],
    })
    expect(res.statusCode).toBe(402)
    expect(res.json()).toMatchObject({ code: 'payment_required' })
    expect(res.json().detail).toContain('paid')
  })
})

describe('persons and groups', () => {
  it('applies $set, $set_once and $unset in order', async () => {
    await post('/batch/', {
      api_key: token,
      batch: [
        { event: 'e1', distinct_id: distinctId, properties: { $set: { a: 1, b: 1 }, $set_once: { first: 'x' } } },
        { event: 'e2', distinct_id: distinctId, properties: { $set: { a: 2 }, $set_once: { first: 'y', other: 1 } } },
        { event: 'e3', distinct_id: distinctId, properties: { $unset: ['b'] } },
      ],
    })
    expect((await personOf(distinctId))?.properties).toMatchObject({ a: 2, first: 'x', other: 1 })
    expect((await personOf(distinctId))?.properties).not.toHaveProperty('b')
  })

  it('merges the anonymous person into the identified one on $identify and stamps person_id', async () => {
    const anon = `anon-${distinctId}`
    await post('/batch/', {
      api_key: token,
      batch: [{ event: '$pageview', distinct_id: anon, properties: { $set_once: { landing: '/home' } } }],
    })
    await post('/batch/', {
      api_key: token,
      batch: [{ event: 'x', distinct_id: distinctId, properties: { $set: { email: 'a@b.c' } } }],
    })
    const anonPerson = await personOf(anon)
    const userPerson = await personOf(distinctId)
    expect(anonPerson?.id).not.toBe(userPerson?.id)

    await post('/batch/', {
      api_key: token,
      batch: [
        { event: '$identify', distinct_id: distinctId, properties: { $anon_distinct_id: anon, $set: { name: 'Ann' } } },
      ],
    })
    const merged = await personOf(anon)
    expect(merged?.id).toBe(userPerson?.id)
    expect(merged?.properties).toMatchObject({ email: 'a@b.c', landing: '/home', name: 'Ann' })
    expect(merged?.is_identified).toBe(1)
    expect(await t.burrow.stores.persons.distinctIds(merged!.id)).toEqual([anon, distinctId].sort())

    const [ev] = await eventsOf(distinctId)
    expect(ev.personId).toBe(userPerson?.id)
    // The event-store mirror resolves the anonymous id to the merged person too.
    const mirror = await t.burrow.events.query<[string]>(
      `SELECT toString(argMax(person_id, version)) FROM person_distinct_ids
       WHERE team_id = {team:Int64} AND distinct_id = {id:String}`,
      { params: { team: t.creds.project_id, id: anon } },
    )
    expect(mirror.rows[0][0]).toBe(userPerson?.id)
  })

  it('joins an unknown anonymous id to the identified person on $create_alias', async () => {
    await post('/e/', { api_key: token, event: 'x', distinct_id: distinctId })
    await post('/e/', {
      api_key: token,
      event: '$create_alias',
      distinct_id: distinctId,
      properties: { alias: `alias-${distinctId}` },
    })
    expect((await personOf(`alias-${distinctId}`))?.id).toBe((await personOf(distinctId))?.id)
  })

  it('merges two identified persons only with $merge_dangerously', async () => {
    const other = `other-${distinctId}`
    await post('/batch/', {
      api_key: token,
      batch: [
        { event: '$identify', distinct_id: distinctId, properties: {} },
        { event: '$identify', distinct_id: other, properties: {} },
      ],
    })
    await post('/e/', { api_key: token, event: '$create_alias', distinct_id: distinctId, properties: { alias: other } })
    expect((await personOf(other))?.id).not.toBe((await personOf(distinctId))?.id)
    await post('/e/', {
      api_key: token,
      event: '$merge_dangerously',
      distinct_id: distinctId,
      properties: { alias: other },
    })
    expect((await personOf(other))?.id).toBe((await personOf(distinctId))?.id)
  })

  it('skips person processing when $process_person_profile is false', async () => {
    await post('/e/', {
      api_key: token,
      event: 'anon',
      distinct_id: distinctId,
      properties: { $process_person_profile: false, $set: { a: 1 } },
    })
    expect(await personOf(distinctId)).toBeUndefined()
    const [ev] = await eventsOf(distinctId)
    expect(ev.personId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('identifies groups with $groupidentify and fills $group_N on events', async () => {
    const key = `acme-${distinctId}`
    await post('/batch/', {
      api_key: token,
      batch: [
        {
          event: '$groupidentify',
          distinct_id: distinctId,
          properties: { $group_type: 'company', $group_key: key, $group_set: { size: 50 } },
        },
        {
          event: '$group_identify',
          distinct_id: distinctId,
          properties: { $group_type: 'company', $group_key: key, $group_set: { plan: 'pro' } },
        },
        { event: 'used', distinct_id: distinctId, properties: { $groups: { company: key } } },
      ],
    })
    const types = await t.burrow.stores.persons.groupTypeMapping(t.creds.project_id)
    const company = types.find((g) => g.group_type === 'company')
    expect(company).toBeDefined()
    const group = await t.burrow.stores.persons.getGroup(t.creds.project_id, company!.group_type_index, key)
    expect(JSON.parse(group!.properties)).toEqual({ size: 50, plan: 'pro' })
    const row = await t.burrow.events.query<[string]>(
      `SELECT $group_${company!.group_type_index} FROM events WHERE team_id = {team:Int64} AND distinct_id = {id:String} AND event = 'used'`,
      { params: { team: t.creds.project_id, id: distinctId } },
    )
    expect(row.rows).toEqual([[key]])
  })

  it('keeps projects apart: the same distinct id is a different person in another project', async () => {
    const other = await createTenant(t)
    await post('/e/', { api_key: token, event: 'x', distinct_id: distinctId, properties: { $set: { who: 'mine' } } })
    await post('/e/', {
      api_key: other.project.api_token,
      event: 'x',
      distinct_id: distinctId,
      properties: { $set: { who: 'theirs' } },
    })
    expect((await personOf(distinctId))?.properties.who).toBe('mine')
    const theirs = await t.burrow.stores.persons.getByDistinctId(other.project.id, distinctId)
    expect(JSON.parse(theirs!.properties).who).toBe('theirs')
  })
})

describe('persons of requests that arrive together', () => {
  const postgres = process.env.DATABASE_URL?.startsWith('postgres')
  // A real failure of the real metadata store for one distinct id: a trigger refuses it.
  async function poisonDistinctIds(prefix: string) {
    const db = t.burrow.stores.persons.db
    if (postgres) {
      await sql
        .raw(
          `CREATE OR REPLACE FUNCTION refuse_poison() RETURNS trigger AS $$ BEGIN
             IF NEW.distinct_id LIKE '${prefix}%' THEN RAISE EXCEPTION 'refused distinct id'; END IF;
             RETURN NEW; END $$ LANGUAGE plpgsql`,
        )
        .execute(db)
      await sql
        .raw(
          'CREATE TRIGGER refuse_poison BEFORE INSERT ON person_distinct_ids FOR EACH ROW EXECUTE FUNCTION refuse_poison()',
        )
        .execute(db)
      return () => sql.raw('DROP TRIGGER refuse_poison ON person_distinct_ids').execute(db)
    }
    await sql
      .raw(
        `CREATE TRIGGER refuse_poison BEFORE INSERT ON person_distinct_ids WHEN NEW.distinct_id LIKE '${prefix}%'
         BEGIN SELECT RAISE(ABORT, 'refused distinct id'); END`,
      )
      .execute(db)
    return () => sql.raw('DROP TRIGGER refuse_poison').execute(db)
  }

  it('creates every person, in order, and one request the store refuses fails alone', async () => {
    const poison = `poison-${distinctId}`
    const restore = await poisonDistinctIds(poison)
    try {
      const requests = Array.from({ length: 30 }, (_, i) =>
        i === 17
          ? { api_key: token, event: 'e', distinct_id: poison, properties: { $set: { n: i } } }
          : { api_key: token, event: 'e', distinct_id: `${distinctId}-${i}`, properties: { $set: { n: i } } },
      )
      // The same person twice more, after its creation: its last $set must win.
      requests.push({ api_key: token, event: 'e', distinct_id: `${distinctId}-3`, properties: { $set: { n: 100 } } })
      requests.push({ api_key: token, event: 'e', distinct_id: `${distinctId}-3`, properties: { $set: { n: 101 } } })
      const answers = await Promise.all(requests.map((body) => post('/e/', body)))
      expect(answers[17].statusCode).toBeGreaterThanOrEqual(500)
      expect(answers.filter((a) => a.statusCode === 200)).toHaveLength(requests.length - 1)
      expect(await personOf(poison)).toBeUndefined()
      const ids = new Set<string>()
      for (let i = 0; i < 30; i++) {
        if (i === 17) continue
        const person = await personOf(`${distinctId}-${i}`)
        expect(person?.properties.n).toBe(i === 3 ? 101 : i)
        ids.add(person?.id as string)
        const [event] = await eventsOf(`${distinctId}-${i}`)
        expect(event.personId).toBe(person?.id)
      }
      expect(ids.size).toBe(29)
      // Every person reached the event store's mirror too.
      const mirrored = await t.burrow.events.query<[number]>(
        `SELECT count(DISTINCT distinct_id) FROM person_distinct_ids
         WHERE team_id = {team:Int64} AND startsWith(distinct_id, {prefix:String})`,
        { params: { team: t.creds.project_id, prefix: `${distinctId}-` } },
      )
      expect(mirrored.rows[0][0]).toBe(29)
    } finally {
      await restore()
    }
  })
})

describe('persons created and changed in one batch', () => {
  it('stores the last state of a person created and updated in one batch, and merges two new persons', async () => {
    const [a, b, c] = ['a', 'b', 'c'].map((s) => `${distinctId}-${s}`)
    const res = await post('/batch/', {
      api_key: token,
      batch: [
        { event: 'e', distinct_id: a, properties: { $set: { n: 1 }, $set_once: { first: 'x' } } },
        { event: 'e', distinct_id: a, properties: { $set: { n: 2 }, $set_once: { first: 'y' } } },
        { event: 'e', distinct_id: c, properties: { $set: { from: 'c' } } },
        // b is new, c was created just before in this batch: c's person gets b.
        { event: '$identify', distinct_id: b, properties: { $anon_distinct_id: c, $set: { email: 'b@x' } } },
        { event: 'e', distinct_id: b, properties: { $set: { from: 'b' } } },
      ],
    })
    expect(res.statusCode).toBe(200)
    const personA = await personOf(a)
    expect(personA?.properties).toEqual({ n: 2, first: 'x' })
    // Created (version 0) then changed once.
    expect(Number(personA?.version)).toBe(1)
    const personB = await personOf(b)
    const personC = await personOf(c)
    expect(personB?.id).toBe(personC?.id)
    expect(personB?.properties).toEqual({ from: 'b', email: 'b@x' })
    expect(Number(personB?.is_identified)).toBe(1)
    // Every event carries its person, and the event store's mirror has each person's last state.
    expect((await eventsOf(a)).map((e) => e.personId)).toEqual([personA?.id, personA?.id])
    expect((await eventsOf(b)).map((e) => e.personId)).toEqual([personB?.id, personB?.id])
    const mirrored = await t.burrow.events.query<[string, string]>(
      `SELECT toString(id), argMax(properties, version) FROM persons
       WHERE team_id = {team:Int64} AND id IN {ids:Array(UUID)} GROUP BY id`,
      { params: { team: t.creds.project_id, ids: [personA?.id, personB?.id] } },
    )
    const byId = new Map(mirrored.rows.map(([id, props]) => [id, JSON.parse(props)]))
    expect(byId.get(personA?.id as string)).toEqual({ n: 2, first: 'x' })
    expect(byId.get(personB?.id as string)).toEqual({ from: 'b', email: 'b@x' })
  })

  it('creates a thousand and more new persons of one batch, each with its own id', async () => {
    // More than one insert statement's worth (1,000 rows each).
    const batch = Array.from({ length: 1_203 }, (_, i) => ({
      event: 'e',
      distinct_id: `${distinctId}-${i}`,
      properties: { $set: { i } },
    }))
    const res = await post('/batch/', { api_key: token, batch })
    expect(res.statusCode).toBe(200)
    const rows = await t.burrow.stores.persons.db
      .selectFrom('person_distinct_ids')
      .innerJoin('persons', 'persons.id', 'person_distinct_ids.person_id')
      .select(['person_distinct_ids.distinct_id', 'persons.id', 'persons.properties'])
      .where('person_distinct_ids.distinct_id', 'like', `${distinctId}-%`)
      .execute()
    expect(rows).toHaveLength(1_203)
    expect(new Set(rows.map((r) => r.id)).size).toBe(1_203)
    for (const r of rows) expect(JSON.parse(r.properties)).toEqual({ i: Number(r.distinct_id.split('-').pop()) })
  })
})

describe('definitions discovery', () => {
  it('creates event and property definitions of the right kind and type from real capture traffic', async () => {
    const event = `discovered ${distinctId}`
    await post('/batch/', {
      api_key: token,
      batch: [
        {
          event,
          distinct_id: distinctId,
          properties: {
            price: 9.5,
            paid: true,
            coupon: 'X1',
            created_at: '2026-01-02T03:04:05Z',
            $set: { tier: 'gold' },
          },
        },
        {
          event: '$groupidentify',
          distinct_id: distinctId,
          properties: { $group_type: 'team', $group_key: 't1', $group_set: { seats: 3 } },
        },
      ],
    })
    await t.burrow.ingest.flushBackground()
    const get = (url: string) => t.burrow.app.inject({ method: 'GET', url, headers: t.auth }).then((r) => r.json())
    const base = `/api/projects/${t.creds.project_id}`
    const events = await get(`${base}/event_definitions/?search=${encodeURIComponent(event)}`)
    expect(events.results.map((e: { name: string }) => e.name)).toEqual([event])
    const props = await get(
      `${base}/property_definitions/?event_names=${encodeURIComponent(JSON.stringify([event]))}&filter_by_event_names=true&limit=100`,
    )
    const types = Object.fromEntries(
      props.results.map((p: { name: string; property_type: string }) => [p.name, p.property_type]),
    )
    expect(types).toMatchObject({ price: 'Numeric', paid: 'Boolean', coupon: 'String', created_at: 'DateTime' })
    const person = await get(`${base}/property_definitions/?type=person&search=tier`)
    expect(person.results.map((p: { name: string }) => p.name)).toContain('tier')
    const group = await get(
      `${base}/property_definitions/?type=group&group_type_index=${(await t.burrow.stores.persons.groupTypeMapping(t.creds.project_id)).find((g) => g.group_type === 'team')!.group_type_index}`,
    )
    expect(group.results.map((p: { name: string }) => p.name)).toContain('seats')
  })
})

describe('flags see capture at once', () => {
  it('evaluates a flag on a person property set by capture a moment before', async () => {
    const flag = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/feature_flags/`,
      headers: t.auth,
      payload: {
        key: `vip-${seq}`,
        filters: {
          groups: [
            {
              properties: [{ key: 'vip', type: 'person', value: ['yes'], operator: 'exact' }],
              rollout_percentage: 100,
            },
          ],
        },
      },
    })
    expect(flag.statusCode).toBe(201)
    const evaluate = async () =>
      (await post('/flags/?v=2', { token, distinct_id: distinctId })).json().flags[`vip-${seq}`].enabled as boolean
    await post('/e/', { api_key: token, event: 'x', distinct_id: distinctId, properties: { $set: { vip: 'no' } } })
    expect(await evaluate()).toBe(false)
    await post('/e/', { api_key: token, event: 'x', distinct_id: distinctId, properties: { $set: { vip: 'yes' } } })
    expect(await evaluate()).toBe(true)
  })

  it('evaluates an anonymous id as the person it was identified into, and a merged-away person as gone', async () => {
    const key = `vip-merge-${seq}`
    const flag = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/feature_flags/`,
      headers: t.auth,
      payload: {
        key,
        filters: {
          groups: [
            {
              properties: [{ key: 'vip', type: 'person', value: ['yes'], operator: 'exact' }],
              rollout_percentage: 100,
            },
          ],
        },
      },
    })
    expect(flag.statusCode).toBe(201)
    const anon = `${distinctId}-anon`
    const evaluate = async (id: string) =>
      (await post('/flags/?v=2', { token, distinct_id: id })).json().flags[key].enabled as boolean
    // Readers have seen the anonymous id with a person of its own, and the identified one with none.
    await post('/e/', { api_key: token, event: 'x', distinct_id: anon, properties: { $set: { vip: 'no' } } })
    expect(await evaluate(anon)).toBe(false)
    expect(await evaluate(distinctId)).toBe(false)
    // In one turn of the event loop, with another project's unrelated traffic alongside.
    const [identify] = await Promise.all([
      post('/e/', {
        api_key: token,
        event: '$identify',
        distinct_id: distinctId,
        properties: { $anon_distinct_id: anon, $set: { vip: 'yes' } },
      }),
      post('/e/', { api_key: token, event: 'x', distinct_id: `${distinctId}-other` }),
    ])
    expect(identify.statusCode).toBe(200)
    expect(await evaluate(distinctId)).toBe(true)
    expect(await evaluate(anon)).toBe(true)
  })
})

describe('hostile identifiers', () => {
  it('stores lone surrogates and NUL bytes in ids as U+FFFD instead of failing the insert', async () => {
    const res = await post('/batch/', {
      api_key: token,
      batch: [
        { event: 'x', distinct_id: `${distinctId}\ud800`, properties: { $set: { a: 1 } } },
        {
          event: '$groupidentify',
          distinct_id: distinctId,
          properties: { $group_type: 'org\u0000x', $group_key: 'k\ud800\u0000', $group_set: { n: 1 } },
        },
        { event: 'y', distinct_id: distinctId, properties: { $groups: { 'co\u0000mp': 'k\ud801' } } },
      ],
    })
    expect(res.statusCode).toBe(200)
    const person = await personOf(`${distinctId}\ufffd`)
    expect(person?.properties).toMatchObject({ a: 1 })
    const types = (await t.burrow.stores.persons.groupTypeMapping(t.creds.project_id)).map((g) => g.group_type)
    expect(types).toContain('org\ufffdx')
  })

  it('does not let one request with a bad id fail the others sharing its insert', async () => {
    const results = await Promise.all([
      post('/e/', { api_key: token, event: 'ok1', distinct_id: `${distinctId}-a` }),
      post('/e/', { api_key: token, event: 'bad', distinct_id: `${distinctId}\udfff`, properties: { $set: { b: 2 } } }),
      post('/e/', { api_key: token, event: 'ok2', distinct_id: `${distinctId}-b` }),
    ])
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200])
  })

  it('keeps $set_once keys named like built-in object members', async () => {
    await post('/e/', {
      api_key: token,
      event: 'x',
      distinct_id: distinctId,
      properties: { $set_once: { constructor: 'c', valueOf: 'v', toString: 't', normal: 'n' } },
    })
    expect((await personOf(distinctId))?.properties).toMatchObject({
      constructor: 'c',
      valueOf: 'v',
      toString: 't',
      normal: 'n',
    })
  })

  it('stores the same uuid sent to two projects in both', async () => {
    const other = await createTenant(t)
    const uuid = crypto.randomUUID()
    const [a, b] = await Promise.all([
      post('/e/', { api_key: token, event: 'twin', distinct_id: distinctId, uuid }),
      post('/e/', { api_key: other.project.api_token, event: 'twin', distinct_id: distinctId, uuid }),
    ])
    expect([a.statusCode, b.statusCode]).toEqual([200, 200])
    const rows = await t.burrow.events.query<[number]>(
      'SELECT team_id FROM events WHERE uuid = {uuid:UUID} ORDER BY team_id',
      { params: { uuid } },
    )
    expect(rows.rows.map((r) => r[0])).toEqual([t.creds.project_id, other.project.id].sort((x, y) => x - y))
  })
})

describe('a failed insert', () => {
  it('after the acknowledgement is retried: the event arrives once, and the persons reach the event store', async () => {
    // Fault injection on the real store under the capture log: the persons mirror insert fails once.
    const store = t.burrow.eventStore
    const original = store.insertJsonEachRow.bind(store)
    let failures = 0
    store.insertJsonEachRow = async (table, rows) => {
      if (table === 'persons' && failures === 0) {
        failures++
        throw new Error('injected failure')
      }
      return original(table, rows)
    }
    const uuid = crypto.randomUUID()
    const body = { api_key: token, event: 'once', distinct_id: distinctId, uuid, properties: { $set: { plan: 'pro' } } }
    try {
      expect((await post('/e/', body)).statusCode).toBe(200)
      // A reader waits for the log to reach the store, which retries the refused insert.
      await t.burrow.events.query('SELECT 1')
    } finally {
      store.insertJsonEachRow = original
    }
    expect(failures).toBe(1)
    // The client retries anyway (say its connection dropped before the answer): still one event.
    expect((await post('/e/', body)).statusCode).toBe(200)
    const events = t.burrow.events
    const stored = await events.query<[number]>('SELECT count() FROM events WHERE uuid = {uuid:UUID}', {
      params: { uuid },
    })
    expect(stored.rows[0][0]).toBe(1)
    const mirrored = await events.query<[string]>(
      `SELECT argMax(properties, version) FROM persons WHERE team_id = {team:Int64} AND id IN (
         SELECT argMax(person_id, version) FROM person_distinct_ids WHERE team_id = {team:Int64} AND distinct_id = {id:String})`,
      { params: { team: t.creds.project_id, id: distinctId } },
    )
    expect(JSON.parse(mirrored.rows[0][0])).toMatchObject({ plan: 'pro' })
  })
})
