// PostHog's own capture tests (posthog/api/test/test_capture.py and capture-rs's tests), held over HTTP against a
// real app: each `it` names the PostHog test whose observable assertions it mirrors.
import { gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createUsageStore } from '../../src/ingest/usage-store.js'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { lzBomb } from '../helpers/hostile.js'

let t: TestApp
let token: string
beforeAll(async () => {
  // Many refusals on purpose: the per-address failure limit would turn later ones into 429s.
  t = await startTestApp({ env: { RATE_LIMIT_PUBLIC_FAILURES_PER_MINUTE: '0' } })
  token = t.creds.project_api_key
})
afterAll(() => t.close())

let id: string
beforeEach(() => {
  id = `compat-${Math.random().toString(36).slice(2)}`
})

const send = (
  method: 'GET' | 'POST',
  url: string,
  payload?: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json' },
) =>
  t.burrow.app.inject({
    method,
    url,
    headers,
    payload:
      payload === undefined || typeof payload === 'string' || Buffer.isBuffer(payload)
        ? (payload as string | Buffer | undefined)
        : JSON.stringify(payload),
  })
const post = (url: string, payload: unknown, headers?: Record<string, string>) => send('POST', url, payload, headers)

interface Stored {
  uuid: string
  event: string
  distinctId: string
  properties: Record<string, unknown>
  timestamp: string
}

async function stored(where: string, params: Record<string, unknown>): Promise<Stored[]> {
  const result = await t.burrow.events.query<[string, string, string, string, string]>(
    `SELECT toString(uuid), event, distinct_id, properties, toString(timestamp) FROM events
     WHERE team_id = {team:Int64} AND ${where} ORDER BY timestamp, event`,
    { params: { team: t.creds.project_id, ...params } },
  )
  return result.rows.map(([uuid, event, distinctId, properties, timestamp]) => ({
    uuid,
    event,
    distinctId,
    properties: JSON.parse(properties) as Record<string, unknown>,
    timestamp,
  }))
}
const eventsOf = (distinctId: string) => stored('distinct_id = {id:String}', { id: distinctId })

const validationError = (detail: string, attr: string | null = null) => ({
  type: 'validation_error',
  code: 'invalid_payload',
  detail,
  attr,
})

describe('the project token', () => {
  it.each([
    ['a trailing newline', (k: string) => `${k}\n`],
    ['trailing spaces', (k: string) => `${k}   `],
    ['spaces and a tab around it', (k: string) => ` \t${k} `],
  ])('takes a token with surrounding whitespace as the key (%s), as PostHog trims it', async (_what, wrap) => {
    const res = await post('/batch/', { api_key: wrap(token), batch: [{ event: 'trimmed', distinct_id: id }] })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ status: 1 })
    const inProps = await post('/e/', { event: 'trimmed-props', properties: { distinct_id: id, token: wrap(token) } })
    expect(inProps.statusCode).toBe(200)
    const inQuery = await post(`/e/?token=${encodeURIComponent(wrap(token))}`, { event: 'trimmed-q', distinct_id: id })
    expect(inQuery.statusCode).toBe(200)
    expect((await eventsOf(id)).map((e) => e.event).sort()).toEqual(['trimmed', 'trimmed-props', 'trimmed-q'])
  })

  it('test_batch_incorrect_token_shape', async () => {
    const res = await post('/batch/', {
      api_key: { some: 'object' },
      batch: [{ type: 'capture', event: 'user signed up', distinct_id: id }],
    })
    expect(res.statusCode).toBe(401)
    expect(res.json()).toEqual({
      type: 'authentication_error',
      code: 'not_string',
      detail: 'Provided API key is not valid: not_string',
      attr: null,
    })
    expect(await eventsOf(id)).toEqual([])
  })

  it('test_batch_token_not_set', async () => {
    const res = await post('/batch/', { batch: [{ type: 'capture', event: 'user signed up', distinct_id: id }] })
    expect(res.statusCode).toBe(401)
    expect(res.json()).toEqual({
      type: 'authentication_error',
      code: 'missing_api_key',
      detail: 'API key not provided. You can find your project API key in PostHog project settings.',
      attr: null,
    })
  })

  it('extract_and_verify_token: events carrying different tokens (MultipleTokensError) answer 401', async () => {
    const other = await createTenant(t, { plan: 'paid' })
    const res = await post('/e/', [
      { event: 'one', properties: { distinct_id: id, token } },
      { event: 'two', properties: { distinct_id: id, token: other.project.api_token } },
    ])
    expect(res.statusCode).toBe(401)
    expect(res.json()).toMatchObject({ type: 'authentication_error', attr: null })
    expect(await eventsOf(id)).toEqual([])
    // The same token twice, once with a trailing newline, is one token.
    const same = await post('/e/', [
      { event: 'one', properties: { distinct_id: id, token } },
      { event: 'two', properties: { distinct_id: id, token: `${token}\n` } },
    ])
    expect(same.statusCode).toBe(200)
  })

  it('extract_and_verify_token: the batch token wins over the tokens of its events', async () => {
    const res = await post('/batch/', {
      api_key: token,
      batch: [
        { event: 'one', distinct_id: id, properties: { token: 'phc_something_else' } },
        { event: 'two', distinct_id: id },
      ],
    })
    expect(res.statusCode).toBe(200)
    expect(await eventsOf(id)).toHaveLength(2)
  })
})

describe('historical_migration', () => {
  const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString()

  async function usageNow() {
    await t.burrow.ingest.flushBackground()
    const project = await t.burrow.stores.projects.get(t.creds.project_id)
    const row = await createUsageStore(t.burrow.meta.db).get(
      project!.organization_id,
      new Date().toISOString().slice(0, 7),
    )
    return { billable: Number(row?.billable_events ?? 0), historical: Number(row?.historical_events ?? 0) }
  }

  it('test_capture_historical_analytics_events_opt_in: a batch of events without timestamps is accepted', async () => {
    const res = await post('/batch/', {
      api_key: token,
      historical_migration: true,
      batch: [
        {
          event: '$autocapture',
          properties: {
            distinct_id: id,
            $elements: [
              { tag_name: 'a', nth_child: 1, nth_of_type: 2, attr__class: 'btn btn-sm' },
              { tag_name: 'div', nth_child: 1, nth_of_type: 2, $el_text: '💻' },
            ],
          },
        },
      ],
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ status: 1 })
    expect((await eventsOf(id)).map((e) => e.event)).toEqual(['$autocapture'])
  })

  it('never refuses a historical batch for its recent events: they are ingested as ordinary events', async () => {
    const before = await usageNow()
    const res = await post('/batch/', {
      api_key: token,
      historical_migration: true,
      batch: [
        { event: 'old', distinct_id: id, timestamp: hoursAgo(72) },
        { event: 'borderline-old', distinct_id: id, timestamp: hoursAgo(49) },
        { event: 'recent', distinct_id: id, timestamp: hoursAgo(47) },
        { event: 'now', distinct_id: id },
      ],
    })
    expect(res.statusCode).toBe(200)
    expect((await eventsOf(id)).map((e) => e.event)).toEqual(['old', 'borderline-old', 'recent', 'now'])
    // Two events are at least 48 hours old (imported without the fee); two are ordinary billable events.
    const after = await usageNow()
    expect(after.historical - before.historical).toBe(2)
    expect(after.billable - before.billable).toBe(2)
  })

  it('takes posthog-node historicalMigration traffic of only recent events on the free plan, as ordinary events', async () => {
    const free = await createTenant(t, { plan: 'free' })
    const res = await post('/batch/', {
      api_key: free.project.api_token,
      historical_migration: true,
      batch: [{ event: 'live', distinct_id: id }],
    })
    expect(res.statusCode).toBe(200)
    // An old event still needs the paid plan.
    const old = await post('/batch/', {
      api_key: free.project.api_token,
      historical_migration: true,
      batch: [{ event: 'live', distinct_id: id, timestamp: hoursAgo(100) }],
    })
    expect(old.statusCode).toBe(402)
  })
})

describe('/engage/', () => {
  it('test_engage', async () => {
    const distinctNumber = Math.floor(Math.random() * 1e9)
    const data = {
      $set: { $os: 'Mac OS X' },
      $token: token,
      $distinct_id: distinctNumber,
      $device_id: '16fd4afae9b2d8-0fce8fe900d42b-39637c0e-7e9000-16fd4afae9c395',
      $user_id: distinctNumber,
    }
    const res = await send('GET', `/engage/?data=${encodeURIComponent(JSON.stringify(data))}`, undefined, {
      origin: 'https://localhost',
    })
    expect(res.statusCode).toBe(200)
    const [ev] = await eventsOf(String(distinctNumber))
    expect(ev.event).toBe('$identify')
    const person = await t.burrow.stores.persons.getByDistinctId(t.creds.project_id, String(distinctNumber))
    expect(JSON.parse(person!.properties)).toMatchObject({ $os: 'Mac OS X' })
  })

  const engageFixture = (distinctId: string) => ({
    timestamp: '2025-07-01T11:00:00Z',
    api_key: token,
    distinct_id: distinctId,
    properties: { $anon_distinct_id: `anon-${distinctId}`, $set: { foo: 'bar', baz: 42 } },
  })

  it.each([
    [
      'engage_post-simple-single-event-payload',
      (p: string) => ({ url: '/engage/', body: p, type: 'application/json' }),
    ],
    [
      'engage_post-base64-single-event-payload',
      (p: string) => ({
        url: '/engage/?compression=base64',
        body: Buffer.from(p).toString('base64'),
        type: 'application/json',
      }),
    ],
    [
      'engage_post-gzip-no-hint-single-event-payload',
      (p: string) => ({ url: '/engage/', body: gzipSync(p), type: 'text/plain' }),
    ],
    [
      'engage_post-form-urlencoded-event-payload',
      (p: string) => ({
        url: '/engage/',
        body: new URLSearchParams({ data: p, ver: '1.2.3' }).toString(),
        type: 'application/x-www-form-urlencoded',
      }),
    ],
    [
      'engage_post-form-lz64-urlencoded-event-payload',
      (p: string) => ({
        url: '/engage/?compression=lz64',
        body: new URLSearchParams({ data: LZString.compressToBase64(p), ver: '1.2.3' }).toString(),
        type: 'application/x-www-form-urlencoded',
      }),
    ],
  ])('test_engage_endpoint: %s is stored as $identify', async (_case, shape) => {
    const req = shape(JSON.stringify(engageFixture(id)))
    const res = await post(req.url, req.body, { 'content-type': req.type })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ status: 1 })
    const [ev] = await eventsOf(id)
    expect(ev.event).toBe('$identify')
    expect(ev.timestamp).toBe('2025-07-01 11:00:00.000000')
    expect(ev.properties).toMatchObject({ $anon_distinct_id: `anon-${id}`, $set: { foo: 'bar', baz: 42 } })
    const person = await t.burrow.stores.persons.getByDistinctId(t.creds.project_id, id)
    expect(JSON.parse(person!.properties)).toMatchObject({ foo: 'bar', baz: 42 })
  })

  it('keeps an event name /engage/ is given, and names only the /engage/ path so', async () => {
    expect((await post('/engage/', { api_key: token, event: 'named', distinct_id: id })).statusCode).toBe(200)
    const elsewhere = await post('/e/', { api_key: token, distinct_id: id, properties: {} })
    expect(elsewhere.statusCode).toBe(400)
    expect((await eventsOf(id)).map((e) => e.event)).toEqual(['named'])
  })
})

describe('event fields', () => {
  it('test_custom_uuid', async () => {
    const uuid = '01823e89-f75d-0000-0d4d-3d43e54f6de5'.replace('6de5', Math.random().toString(16).slice(2, 6))
    const res = await post('/e/', { api_key: token, event: 'some_event', distinct_id: id, uuid })
    expect(res.statusCode).toBe(200)
    expect((await eventsOf(id)).map((e) => e.uuid)).toEqual([uuid])
  })

  it('test_custom_uuid_invalid', async () => {
    const res = await post('/e/', { api_key: token, event: 'some_event', distinct_id: id, uuid: 'invalid_uuid' })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual(validationError('Invalid payload: Event field "uuid" is not a valid UUID!', 'uuid'))
    expect(await eventsOf(id)).toEqual([])
  })

  it('refuses a batch with one invalid uuid whole, and takes the forms PostHog parses (simple, braced, urn)', async () => {
    const bad = await post('/batch/', {
      api_key: token,
      batch: [
        { event: 'a', distinct_id: id },
        { event: 'b', distinct_id: id, uuid: 12345 },
      ],
    })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().detail).toBe('Invalid payload: Event field "uuid" is not a valid UUID!')
    expect(await eventsOf(id)).toEqual([])

    const hex = () => Array.from({ length: 32 }, () => Math.floor(Math.random() * 16).toString(16)).join('')
    const dashed = (h: string) =>
      `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
    const [simple, braced, urn] = [hex(), hex(), hex()]
    const ok = await post('/batch/', {
      api_key: token,
      batch: [
        { event: 'simple', distinct_id: id, uuid: simple.toUpperCase() },
        { event: 'braced', distinct_id: id, uuid: `{${dashed(braced)}}` },
        { event: 'urn', distinct_id: id, uuid: `urn:uuid:${dashed(urn)}` },
        { event: 'empty', distinct_id: id, uuid: '' },
      ],
    })
    expect(ok.statusCode).toBe(200)
    const byName = Object.fromEntries((await eventsOf(id)).map((e) => [e.event, e.uuid]))
    expect(byName).toMatchObject({ simple: dashed(simple), braced: dashed(braced), urn: dashed(urn) })
    expect(byName.empty).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/)
  })

  it('extract_distinct_id: an array, object or boolean distinct_id is stringified as JSON, as capture-rs does', async () => {
    const res = await post('/batch/', {
      api_key: token,
      batch: [
        { event: 'array', distinct_id: [id, 'b'] },
        { event: 'object', distinct_id: { id, n: 1 } },
        { event: 'bool', properties: { distinct_id: true }, $set: { tag: id } },
        { event: 'number', distinct_id: 12.5, $set: { tag: id } },
      ],
    })
    expect(res.statusCode).toBe(200)
    expect((await eventsOf(`["${id}","b"]`)).map((e) => e.event)).toEqual(['array'])
    expect((await eventsOf(`{"id":"${id}","n":1}`)).map((e) => e.event)).toEqual(['object'])
    const bool = await stored(
      `distinct_id = 'true' AND event = 'bool' AND JSONExtractString(properties, '$set', 'tag') = {id:String}`,
      { id },
    )
    expect(bool).toHaveLength(1)
  })

  it('test_empty_request_returns_an_error', async () => {
    const emptyGet = await send('GET', '/e/?data=', undefined, { origin: 'https://localhost' })
    expect(emptyGet.statusCode).toBe(400)
    const emptyPost = await post('/e/', {}, { 'content-type': 'application/json', origin: 'https://localhost' })
    expect(emptyPost.statusCode).toBe(400)
    expect(emptyPost.json()).toMatchObject({ type: 'validation_error', code: 'invalid_payload' })
  })

  it('test_handle_lacking_event_name_field', async () => {
    const res = await post('/e/', { distinct_id: 'abc', properties: { cost: 2 }, api_key: token })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual(
      validationError('Invalid payload: All events must have the event name field "event"!', 'event'),
    )
  })

  it('test_batch_distinct_id_not_set', async () => {
    const res = await post('/batch/', { api_key: token, batch: [{ type: 'capture', event: 'user signed up' }] })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({
      type: 'validation_error',
      code: 'invalid_payload',
      detail: 'Invalid payload: All events must have the event field "distinct_id"!',
    })
  })

  it('test_batch_with_invalid_event', async () => {
    const res = await post('/batch/', {
      api_key: token,
      batch: [
        { type: 'capture', event: 'event1', distinct_id: id },
        { type: 'capture', event: 'event2' },
        { type: 'capture', event: 'event3', distinct_id: id },
      ],
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toBe('Invalid payload: All events must have the event field "distinct_id"!')
    expect(await eventsOf(id)).toEqual([])
  })

  it('test_distinct_id_set_but_null', async () => {
    const res = await post('/e/', { api_key: token, type: 'capture', event: 'user signed up', distinct_id: null })
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toBe('Invalid payload: Event field "distinct_id" should not be blank!')
  })

  it('test_null_event_in_batch', async () => {
    const body = new URLSearchParams({
      data: JSON.stringify([
        { event: 'beep', properties: { distinct_id: id, token } },
        null,
        { event: 'boop', properties: { distinct_id: id, token } },
      ]),
      api_key: token,
    }).toString()
    const res = await post('/batch/', body, { 'content-type': 'application/x-www-form-urlencoded' })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'invalid_payload', detail: 'Invalid payload: some events are null' })
    expect(await eventsOf(id)).toEqual([])
  })

  it('test_batch_with_dumped_json_data', async () => {
    const res = await post('/batch/', {
      api_key: token,
      batch: [JSON.stringify({ event: '$groupidentify', distinct_id: '2', properties: {} })],
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toBe("Invalid payload: All events must be dictionaries not 'str'!")
  })

  it('test_long_distinct_id', async () => {
    const long = `${id}${'a'.repeat(250)}`
    const data = { event: 'movie played', properties: { distinct_id: long, token } }
    const res = await send('GET', `/e/?data=${encodeURIComponent(JSON.stringify(data))}`, undefined, {})
    expect(res.statusCode).toBe(200)
    const [ev] = await eventsOf(long.slice(0, 200))
    expect(ev.distinctId).toHaveLength(200)
  })
})

describe('Content-Encoding: lz64', () => {
  it('test_batch_lzstring', async () => {
    const data = { api_key: token, batch: [{ type: 'capture', event: 'user signed up', distinct_id: id }] }
    const res = await post('/batch/', LZString.compressToBase64(JSON.stringify(data)), {
      'content-type': 'application/json',
      'content-encoding': 'lz64',
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ status: 1 })
    const [ev] = await eventsOf(id)
    expect(ev.event).toBe('user signed up')
  })

  it('test_lz64_with_emoji', async () => {
    const data = { api_key: token, batch: [{ event: '🤓', distinct_id: id, properties: { prop: '💻 Writing code' } }] }
    const res = await post('/batch/', LZString.compressToBase64(JSON.stringify(data)), {
      'content-type': 'application/json',
      'content-encoding': 'lz64',
    })
    expect(res.statusCode).toBe(200)
    const [ev] = await eventsOf(id)
    expect(ev.event).toBe('🤓')
    expect(ev.properties.prop).toBe('💻 Writing code')
  })

  it('test_invalid_lz64', async () => {
    const res = await post(`/track?compression=lz64&token=${token}`, 'foo', { 'content-type': 'text/plain' })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual(validationError('Malformed request data: Failed to decompress data.'))
    const header = await post('/batch/', '$$$ not lz64 $$$', { 'content-encoding': 'lz64' })
    expect(header.statusCode).toBe(400)
  })

  it('holds a Content-Encoding lz64 bomb to the size cap (the bounded decoder)', async () => {
    // About 50 Mi characters from 40 KB of input.
    const bomb = lzBomb(10_000)
    const started = performance.now()
    const res = await post('/batch/', bomb, { 'content-encoding': 'lz64' })
    expect(res.statusCode).toBe(413)
    expect(res.json()).toMatchObject({ code: 'request_too_large' })
    expect(performance.now() - started).toBeLessThan(5000)
  })
})

describe('other routes', () => {
  it('test_regular_event_endpoint_with_invalid_json', async () => {
    const res = await post(`/e/?token=${token}`, 'this is not valid json', { 'content-type': 'application/json' })
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe('invalid_payload')
  })

  it('test_regular_event_endpoint_with_csp_content_type', async () => {
    const report = {
      'csp-report': { 'document-uri': 'https://example.com/foo/bar', 'violated-directive': 'default-src self' },
    }
    const res = await post(`/e/?token=${token}`, report, { 'content-type': 'application/csp-report' })
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe('no_data')
  })

  it('test_incorrect_json', async () => {
    const res = await post('/capture/', '{"event": "incorrect json with trailing comma",}')
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', code: 'invalid_payload', attr: null })
    expect(res.json().detail).toMatch(/^Malformed request data: Invalid JSON: /)
  })

  it('test_invalid_gzip', async () => {
    const truncated = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03])
    const res = await post(`/track?compression=gzip&token=${token}`, truncated, { 'content-type': 'text/plain' })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', code: 'invalid_payload', attr: null })
    expect(res.json().detail).toMatch(/^Malformed request data: Failed to decompress data\. /)
  })

  it('test_js_gzip / test_js_gzip_with_no_content_type / test_batch_gzip_header / test_batch_gzip_param', async () => {
    const data = {
      api_key: token,
      batch: [{ type: 'capture', event: 'my-event', distinct_id: id, properties: { prop: '💻 Writing code' } }],
    }
    const gz = gzipSync(JSON.stringify(data))
    const sends = [
      post('/batch/?compression=gzip-js', gz, { 'content-type': 'text/plain' }),
      post('/batch/?compression=gzip-js', gz, { 'content-type': '' }),
      post('/batch/', gz, { 'content-type': 'application/json', 'content-encoding': 'gzip' }),
      post('/batch/?compression=gzip', gz, { 'content-type': 'application/json' }),
    ]
    for (const res of await Promise.all(sends)) expect(res.statusCode).toBe(200)
    // Each request's event has its own uuid: four events.
    const events = await eventsOf(id)
    expect(events).toHaveLength(4)
    expect(events.every((e) => e.event === 'my-event' && e.properties.prop === '💻 Writing code')).toBe(true)
  })
})

// capture-rs integration_legacy_endpoints.rs: /e/, /capture/ and /track/ take every wrapping the SDKs use.
describe('legacy endpoints (capture-rs integration_legacy_endpoints)', () => {
  const single = (distinctId: string) => ({
    token,
    event: '$autocapture',
    distinct_id: distinctId,
    properties: { $os: 'Mac OS X', $lib: 'web', $lib_version: '1.2.3', plus: 'a+b', emoji: '💻' },
  })
  const batch = (distinctId: string) => [single(distinctId), { ...single(distinctId), event: 'second' }]
  const b64 = (text: string) => Buffer.from(text).toString('base64')
  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
  type Case = [string, 'GET' | 'POST', (json: string) => { query: string; body?: string | Buffer; type?: string }]
  const cases: Case[] = [
    ['post-simple', 'POST', (j) => ({ query: '', body: j, type: 'application/json' })],
    ['post-base64', 'POST', (j) => ({ query: 'compression=base64', body: b64(j), type: 'application/json' })],
    ['post-base64-no-hint', 'POST', (j) => ({ query: '', body: b64(j), type: 'text/plain' })],
    ['post-gzip', 'POST', (j) => ({ query: 'compression=gzip', body: gzipSync(j), type: 'application/json' })],
    ['post-gzip-no-hint', 'POST', (j) => ({ query: '', body: gzipSync(j), type: 'text/plain' })],
    [
      'post-form-data-base64',
      'POST',
      (j) => ({ query: '', body: form({ data: b64(j), ver: '1.2.3' }), type: 'application/x-www-form-urlencoded' }),
    ],
    [
      'post-form-urlencoded',
      'POST',
      (j) => ({ query: '', body: form({ data: j, ver: '1.2.3' }), type: 'application/x-www-form-urlencoded' }),
    ],
    [
      'post-form-lz64-urlencoded',
      'POST',
      (j) => ({
        query: 'compression=lz64',
        body: form({ data: LZString.compressToBase64(j), ver: '1.2.3' }),
        type: 'application/x-www-form-urlencoded',
      }),
    ],
    ['get-base64-urlencoded', 'GET', (j) => ({ query: `compression=base64&${form({ data: b64(j) })}` })],
    ['get-urlencoded', 'GET', (j) => ({ query: form({ data: j }) })],
    [
      'get-lz64-urlencoded',
      'GET',
      (j) => ({ query: `compression=lz64&${form({ data: LZString.compressToBase64(j) })}` }),
    ],
  ]
  const paths = ['/e', '/capture', '/track']

  it.each(
    paths.flatMap((path) =>
      cases.map(([name, method, shape]) => [`${path} ${method} ${name}`, path, method, shape] as const),
    ),
  )('test_%s', async (_title, path, method, shape) => {
    const isGet = method === 'GET'
    const payload = isGet ? single(id) : batch(id)
    const req = shape(JSON.stringify(payload))
    const url = `${path}/?_=${Date.now()}${req.query ? `&${req.query}` : ''}`
    const res = await send(method, url, req.body, req.type ? { 'content-type': req.type } : {})
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toEqual({ status: 1 })
    const events = await eventsOf(id)
    expect(events).toHaveLength(isGet ? 1 : 2)
    expect(events[0].properties).toMatchObject({ $os: 'Mac OS X', plus: 'a+b', emoji: '💻', $lib_version: '1.2.3' })
  })
})

describe('form bodies of the older server SDKs', () => {
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64')
  const form = (fields: Record<string, string>) => ({
    body: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  })

  it('test_python_library', async () => {
    const { body, headers } = form({
      data: b64({ event: '$pageview', properties: { distinct_id: id } }),
      api_key: token,
    })
    const res = await post('/track/', body, headers)
    expect(res.statusCode).toBe(200)
    expect((await eventsOf(id)).map((e) => e.event)).toEqual(['$pageview'])
  })

  it('test_base64_decode_variations', async () => {
    // PostHog's own body: its base64 holds a '+', which a form decoder turns into a space when sent raw.
    const data = 'eyJldmVudCI6IiRwYWdldmlldyIsInByb3BlcnRpZXMiOnsiZGlzdGluY3RfaWQiOiJlZWVlZWVlZ8+lZWVlZWUifX0='
    const before = (await eventsOf('eeeeeeegϥeeeee')).length
    for (const variant of [data, data.replace('+', ' ')]) {
      const res = await post('/track/', `data=${variant}&api_key=${token}`, {
        'content-type': 'application/x-www-form-urlencoded',
      })
      expect(res.statusCode).toBe(200)
    }
    expect((await eventsOf('eeeeeeegϥeeeee')).length - before).toBe(2)
  })

  it('test_sent_at_field', async () => {
    const now = Date.now()
    const timestamp = new Date(now + 26 * 3_600_000).toISOString()
    const sentAt = new Date(now + 26 * 3_600_000 + 10 * 60_000).toISOString()
    const { body, headers } = form({
      sent_at: sentAt,
      data: b64({ event: '$pageview', timestamp, properties: { distinct_id: id } }),
      api_key: token,
    })
    const res = await post('/track', body, headers)
    expect(res.statusCode).toBe(200)
    const [ev] = await eventsOf(id)
    // The client's clock runs 26 h 10 min ahead: the event happened 10 minutes before it was sent.
    const stored = Date.parse(`${ev.timestamp.replace(' ', 'T')}Z`)
    expect(Math.abs(stored - (now - 10 * 60_000))).toBeLessThan(5_000)
    expect(ev.properties.$sent_at).toBe(sentAt)
  })

  it('test_js_library_underscore_sent_at', async () => {
    const now = Date.now()
    const timestamp = new Date(now + 26 * 3_600_000).toISOString()
    const sentAtSeconds = Math.floor((now + 26 * 3_600_000 + 10 * 60_000) / 1000)
    const data = { event: 'movie played', timestamp, properties: { distinct_id: id, token } }
    const res = await send(
      'GET',
      `/e/?_=${sentAtSeconds}&data=${encodeURIComponent(JSON.stringify(data))}`,
      undefined,
      {
        origin: 'https://localhost',
      },
    )
    expect(res.statusCode).toBe(200)
    const [ev] = await eventsOf(id)
    expect(Math.abs(Date.parse(String(ev.properties.$sent_at)) - sentAtSeconds * 1000)).toBeLessThan(1000)
  })

  it('test_incorrect_padding', async () => {
    const data = b64({ event: 'whatevefr', properties: { token, distinct_id: id } }).replace(/=+$/, '')
    const res = await send('GET', `/e/?data=${data}`, undefined, { referer: 'https://localhost' })
    expect(res.json().status).toBe(1)
    expect((await eventsOf(id)).map((e) => e.event)).toEqual(['whatevefr'])
  })
})

describe('what capture-rs leaves out or refuses before storing', () => {
  it('test_drops_performance_events', async () => {
    const body = new URLSearchParams({
      data: JSON.stringify([
        { event: '$performance_event', properties: { distinct_id: id, token } },
        { event: 'boop', properties: { distinct_id: id, token } },
      ]),
      api_key: token,
    }).toString()
    const res = await post('/batch/', body, { 'content-type': 'application/x-www-form-urlencoded' })
    expect(res.statusCode).toBe(200)
    expect((await eventsOf(id)).map((e) => e.event)).toEqual(['boop'])
    // A request of nothing else is answered as stored, with nothing stored (capture-rs EmptyPayloadFiltered).
    const only = await post('/e/', { api_key: token, event: '$performance_event', distinct_id: id })
    expect(only.statusCode).toBe(200)
    expect((await eventsOf(id)).map((e) => e.event)).toEqual(['boop'])
  })

  it.each([
    ['an empty batch', { api_key: 'phc_anything', batch: [] }],
    ['an empty array', []],
  ])('EmptyBatch: %s answers 400 "request holds no event"', async (_what, body) => {
    const res = await post('/batch/', body)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual(validationError('Invalid payload: request holds no event'))
  })

  it('RawEvent.offset: a top-level offset that is not an integer answers 400; an integer one dates the event', async () => {
    const bad = await post('/e/', { api_key: token, event: 'e', distinct_id: id, offset: 'should_blow_up' })
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toMatchObject({ code: 'invalid_payload', attr: 'offset' })
    const good = await post('/e/', { api_key: token, event: 'e', distinct_id: id, offset: 60_000 })
    expect(good.statusCode).toBe(200)
    const [ev] = await eventsOf(id)
    const stored = Date.parse(`${ev.timestamp.replace(' ', 'T')}Z`)
    expect(Math.abs(stored - (Date.now() - 60_000))).toBeLessThan(5_000)
  })
})

describe('CORS and the wire cap (capture-rs router.rs, integration_wire_body_limits.rs)', () => {
  const V0_ROUTES = ['/e', '/i/v0/e', '/batch', '/capture', '/track', '/engage']
  const TRACING = ['content-type', 'traceparent', 'tracestate', 'baggage', 'sentry-trace', 'sentry-baggage']

  it.each([...V0_ROUTES, '/e/', '/batch/', '/flags/?v=2', '/decide/'])(
    'a preflight to %s mirrors the origin and the tracing headers posthog-js sends, with credentials',
    async (url) => {
      const res = await t.burrow.app.inject({
        method: 'OPTIONS',
        url,
        headers: {
          origin: 'https://shop.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': TRACING.join(','),
        },
      })
      expect(res.statusCode).toBe(204)
      expect(res.headers['access-control-allow-origin']).toBe('https://shop.example')
      expect(res.headers['access-control-allow-credentials']).toBe('true')
      expect(String(res.headers['access-control-allow-methods']).split(',')).toContain('POST')
      expect(String(res.headers['access-control-allow-headers']).split(',')).toEqual(TRACING)
    },
  )

  it('a credentialed capture from another origin can read its answer (posthog-js XHR withCredentials)', async () => {
    const res = await post(
      '/e/',
      { api_key: token, event: 'xhr', distinct_id: id },
      { 'content-type': 'application/json', origin: 'https://shop.example' },
    )
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example')
    expect(res.headers['access-control-allow-credentials']).toBe('true')
  })

  it('the cookie-reading API still refuses credentials to other origins', async () => {
    const res = await t.burrow.app.inject({
      method: 'OPTIONS',
      url: `/api/projects/${t.creds.project_id}/feature_flags/`,
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET' },
    })
    expect(res.statusCode).toBe(204)
    expect(res.headers['access-control-allow-credentials']).toBeUndefined()
  })

  /** A JSON body of `length` bytes, so nothing but its size can refuse it (body_of_len in capture-rs's test). */
  const bodyOfLength = (length: number) => {
    const envelope = JSON.stringify({ token, event: 'e', distinct_id: id, properties: { big: '' } })
    return JSON.stringify({
      token,
      event: 'e',
      distinct_id: id,
      properties: { big: 'a'.repeat(length - envelope.length) },
    })
  }

  it('every_v0_analytics_route_rejects_a_body_over_the_wire_cap (20 MiB)', async () => {
    const over = bodyOfLength(20 * 1024 * 1024 + 1024)
    for (const path of V0_ROUTES) {
      const res = await post(path, over)
      expect(res.statusCode, path).toBe(413)
      expect(res.json(), path).toMatchObject({ type: 'invalid_request', code: 'request_too_large' })
    }
  })

  it('every_v0_analytics_route_accepts_a_body_under_the_wire_cap (4 MiB, over the old 2 MB event cap)', async () => {
    const under = bodyOfLength(4 * 1024 * 1024)
    expect(under.length).toBe(4 * 1024 * 1024)
    for (const path of V0_ROUTES) {
      const res = await post(path, under)
      expect(res.statusCode, `${path}: ${res.body.slice(0, 200)}`).toBe(200)
    }
  })
})
