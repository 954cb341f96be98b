// Hostile bodies on the public endpoints (no credentials needed) and the management API: each is refused with a
// 4xx in PostHog's shape, cheaply, and leaves nothing behind; what is good in the same batch is still stored.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { footprint, lzBomb, lzBombOutput, measured, nestedArrays, nestedObjects } from '../helpers/hostile.js'

let t: TestApp
let token: string
beforeAll(async () => {
  // Every refused request counts as a failure against the client's address; this file sends many on purpose.
  t = await startTestApp({ env: { RATE_LIMIT_PUBLIC_FAILURES_PER_MINUTE: '0' } })
  token = t.creds.project_api_key
})
afterAll(() => t.close())

const CPU_LIMIT_MS = 1000
const MiB = 1024 * 1024

interface Sent {
  method?: 'GET' | 'POST'
  url: string
  body?: string | Buffer
  headers?: Record<string, string>
}

/** Sends one request; reports its answer and what it cost. */
async function send(request: Sent) {
  const {
    result: res,
    cpuMs,
    wallMs,
  } = await measured(() =>
    t.burrow.app.inject({
      method: request.method ?? 'POST',
      url: request.url,
      headers: request.headers,
      payload: request.body,
    }),
  )
  return { status: res.statusCode, body: res.json() as Record<string, unknown>, cpuMs, wallMs }
}

/** Sends a request that must be refused: the status, PostHog's error body, the cost, and no write anywhere. */
async function expectRefused(request: Sent, status: number, code?: string) {
  const before = await footprint(t)
  const res = await send(request)
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.body).toEqual({
    type: status === 413 ? 'invalid_request' : 'validation_error',
    code: code ?? expect.any(String),
    detail: expect.any(String),
    attr: res.body.attr === null ? null : expect.any(String),
  })
  expect(res.cpuMs).toBeLessThan(CPU_LIMIT_MS)
  expect(await footprint(t)).toEqual(before)
  return res
}

async function eventsOf(distinctId: string) {
  const result = await t.burrow.events.query<[string, string]>(
    'SELECT event, properties FROM events WHERE team_id = {team:Int64} AND distinct_id = {id:String} ORDER BY event',
    { params: { team: t.creds.project_id, id: distinctId } },
  )
  return result.rows.map(([event, properties]) => ({ event, properties: JSON.parse(properties) }))
}

const personOf = (distinctId: string) => t.burrow.stores.persons.getByDistinctId(t.creds.project_id, distinctId)

async function eventDefinitionNames(search: string): Promise<string[]> {
  const res = await t.burrow.app.inject({
    method: 'GET',
    url: `/api/projects/${t.creds.project_id}/event_definitions/?search=${encodeURIComponent(search)}`,
    headers: t.auth,
  })
  return (res.json().results as { name: string }[]).map((d) => d.name)
}

describe('lz64 bombs', () => {
  // 23 KB that lz-string would inflate to 50 million characters (the 44 KB body took 1.6 s and 470 MB).
  const bomb = lzBomb(10_000)
  const form = `data=${encodeURIComponent(bomb)}&compression=lz64`
  const paths = ['/i/v0/e/', '/e/', '/batch/', '/flags?v=2', '/decide?v=3']
  const withQuery = (path: string, query: string) => `${path}${path.includes('?') ? '&' : '?'}${query}`

  it('is what the issue describes: tens of megabytes from a few kilobytes', () => {
    expect(bomb.length).toBeLessThan(25_000)
    expect(lzBombOutput(10_000)).toBeGreaterThan(50_000_000)
  })

  const cases: [string, (path: string) => Sent][] = [
    [
      '?compression=lz64 with a raw body',
      (path) => ({ url: withQuery(path, 'compression=lz64'), body: bomb, headers: { 'content-type': 'text/plain' } }),
    ],
    [
      'a form with compression=lz64 in it',
      (path) => ({ url: path, body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
    ],
    [
      'a form inside an unannounced gzip body',
      (path) => ({ url: path, body: gzipSync(form), headers: { 'content-type': 'text/plain' } }),
    ],
    [
      'a raw body inside Content-Encoding: gzip with ?compression=lz64',
      (path) => ({
        url: withQuery(path, 'compression=lz64'),
        body: gzipSync(bomb),
        headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' },
      }),
    ],
  ]
  for (const path of paths) {
    it.each(cases)(`${path}: %s answers 413 at once`, async (_name, build) => {
      const res = await expectRefused(build(path), 413, 'request_too_large')
      expect(res.body.detail).toMatch(/lz64 payload decompresses past \d+ characters/)
    })
  }

  it.each(['/i/v0/e/', '/flags?v=2'])('%s: a GET with the bomb in the query string answers 413', async (path) => {
    // Small enough for a URL (14 KB) and still past the 20 MiB cap.
    const small = lzBomb(6600)
    expect(lzBombOutput(6600)).toBeGreaterThan(20 * MiB)
    await expectRefused(
      { method: 'GET', url: withQuery(path, `compression=lz64&data=${encodeURIComponent(small)}`) },
      413,
      'request_too_large',
    )
  })

  it('leaves the process as it was: ten bombs in a row grow its memory by less than 100 MB', async () => {
    const rss = process.memoryUsage().rss
    for (let i = 0; i < 10; i++) {
      const res = await send(cases[i % cases.length][1](paths[i % paths.length]))
      expect(res.status).toBe(413)
    }
    expect(process.memoryUsage().rss - rss).toBeLessThan(100 * MiB)
  })

  it('still decodes a real lz64 batch on every path that takes one', async () => {
    const distinctId = `lz-ok-${Date.now()}`
    const { compressToBase64 } = await import('lz-string')
    const body = compressToBase64(JSON.stringify([{ event: 'lz-ok', distinct_id: distinctId, properties: { token } }]))
    const res = await send({ url: '/e/?compression=lz64', body, headers: { 'content-type': 'text/plain' } })
    expect(res.status).toBe(200)
    expect((await eventsOf(distinctId)).map((e) => e.event)).toEqual(['lz-ok'])
  })
})

describe('bombs that held before (kept so)', () => {
  const zeros = Buffer.alloc(30 * MiB, 0x20)
  it.each([
    ['gzip announced', gzipSync(zeros), { 'content-encoding': 'gzip' }],
    ['gzip unannounced (posthog-js)', gzipSync(zeros), { 'content-type': 'text/plain' }],
    ['deflate', deflateSync(zeros), { 'content-encoding': 'deflate' }],
    ['brotli', brotliCompressSync(zeros), { 'content-encoding': 'br' }],
  ])('a %s bomb answers 413 at once', async (_name, body, headers) => {
    expect(body.length).toBeLessThan(MiB)
    for (const url of ['/batch/', '/flags?v=2']) {
      const res = await expectRefused(
        { url, body, headers: headers as Record<string, string> },
        413,
        'request_too_large',
      )
      expect(res.body.detail).toMatch(/decompresses past the \d+ byte limit/)
    }
  })

  it('a 100 MB body answers 413 before it is read', async () => {
    await t.burrow.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = t.burrow.app.server.address() as AddressInfo
    const started = performance.now()
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/batch/',
          headers: { 'content-type': 'application/json', 'content-length': String(100 * MiB) },
        },
        (res) => {
          let body = ''
          res.on('data', (chunk) => {
            body += chunk
          })
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
        },
      )
      req.on('error', reject)
      // Only the first megabyte is ever sent: the answer must not wait for the rest.
      req.write(Buffer.alloc(MiB, 0x20))
    })
    expect(answer.status).toBe(413)
    expect(JSON.parse(answer.body)).toMatchObject({ type: 'invalid_request', attr: null })
    expect(performance.now() - started).toBeLessThan(5000)
  })
})

describe('JSON nested too deep', () => {
  const deep = nestedObjects(7000)

  it('refuses a single event with 400 before its $set or definitions are written', async () => {
    const distinctId = `deep-single-${Date.now()}`
    const res = await expectRefused(
      {
        url: '/i/v0/e/',
        headers: { 'content-type': 'application/json' },
        body: `{"api_key":"${token}","event":"deep-single","distinct_id":"${distinctId}","properties":{"$set":{"email":"a@b.c"},"x":${deep}}}`,
      },
      400,
      'invalid_payload',
    )
    expect(res.body.detail).toBe('Malformed request data: payload nests deeper than 128 levels')
    expect(await personOf(distinctId)).toBeUndefined()
    expect(await eventsOf(distinctId)).toEqual([])
    expect(await eventDefinitionNames('deep-single')).toEqual([])
  })

  it('leaves an over-deep event of a batch out alone and stores the good ones, naming it in a 200', async () => {
    const stamp = Date.now()
    const good = (n: number) => ({ event: `deep-batch-good-${stamp}`, distinct_id: `good-${stamp}-${n}` })
    const bad = `{"event":"deep-batch-bad-${stamp}","distinct_id":"bad-${stamp}","properties":{"$set":{"email":"x@y.z"},"x":${deep}}}`
    const body = `{"api_key":"${token}","batch":[${JSON.stringify({ ...good(0), properties: { $set: { plan: 'pro' } } })},${bad},${JSON.stringify(good(2))}]}`
    const res = await send({ url: '/batch/', headers: { 'content-type': 'application/json' }, body: gzipSync(body) })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      status: 1,
      rejected: [
        {
          index: 1,
          type: 'validation_error',
          code: 'too_deep',
          detail: 'Event 1 nests deeper than 128 levels and was not stored.',
          attr: 'batch__1',
        },
      ],
    })
    expect(res.cpuMs).toBeLessThan(CPU_LIMIT_MS)
    expect((await eventsOf(`good-${stamp}-0`)).map((e) => e.event)).toEqual([`deep-batch-good-${stamp}`])
    expect((await eventsOf(`good-${stamp}-2`)).map((e) => e.event)).toEqual([`deep-batch-good-${stamp}`])
    expect(JSON.parse((await personOf(`good-${stamp}-0`))?.properties ?? '{}')).toMatchObject({ plan: 'pro' })
    expect(await eventsOf(`bad-${stamp}`)).toEqual([])
    expect(await personOf(`bad-${stamp}`)).toBeUndefined()
    await t.burrow.ingest.flushBackground()
    expect(await eventDefinitionNames(`deep-batch-good-${stamp}`)).toEqual([`deep-batch-good-${stamp}`])
    expect(await eventDefinitionNames(`deep-batch-bad-${stamp}`)).toEqual([])
  })

  it('names the right position in a bare array of events, whatever else fails later', async () => {
    const stamp = Date.now()
    const body = `[${nestedArrays(10_000)},{"event":"after-deep","distinct_id":"arr-${stamp}","properties":{"token":"${token}"}}]`
    const res = await send({ url: '/e/', headers: { 'content-type': 'text/plain' }, body })
    expect(res.status).toBe(200)
    expect(res.body.rejected).toMatchObject([{ index: 0, attr: 'batch__0' }])
    expect((await eventsOf(`arr-${stamp}`)).map((e) => e.event)).toEqual(['after-deep'])
  })

  it('refuses a batch whose every event is too deep with 400', async () => {
    const bad = `{"event":"all-deep","distinct_id":"all-deep","properties":{"x":${deep}}}`
    await expectRefused(
      {
        url: '/batch/',
        headers: { 'content-type': 'application/json' },
        body: `{"api_key":"${token}","batch":[${bad},${bad}]}`,
      },
      400,
      'too_deep',
    )
  })

  it('refuses 10 million levels of brackets (20 MB) without building them', async () => {
    const headers = { 'content-type': 'application/json' }
    const single = `{"event":"x","distinct_id":"y","properties":{"p":${nestedArrays(10_000_000)}}}`
    const res = await expectRefused({ url: '/i/v0/e/', headers, body: single }, 400, 'invalid_payload')
    expect(res.body.detail).toMatch(/nests deeper than 128 levels/)
    // As a bare array, the brackets are one over-deep event: the batch has nothing else.
    await expectRefused({ url: '/batch/', headers, body: nestedArrays(10_000_000) }, 400, 'too_deep')
  })

  it('refuses deep /flags and /decide bodies with 400', async () => {
    for (const url of ['/flags?v=2', '/decide?v=3']) {
      const body = `{"token":"${token}","distinct_id":"d","person_properties":{"p":${deep}}}`
      await expectRefused({ url, headers: { 'content-type': 'application/json' }, body }, 400, 'invalid_payload')
      const form = `data=${encodeURIComponent(Buffer.from(body).toString('base64'))}`
      await expectRefused(
        {
          url: `${url}&compression=base64`,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: form,
        },
        400,
        'invalid_payload',
      )
    }
  })

  it('refuses deep flag and cohort definitions with 400 and creates nothing', async () => {
    const headers = { ...t.auth, 'content-type': 'application/json' }
    const base = `/api/projects/${t.creds.project_id}`
    await expectRefused(
      {
        url: `${base}/feature_flags/`,
        headers,
        body: `{"key":"deep-flag","filters":{"groups":[{"properties":[],"rollout_percentage":100}],"payloads":{"true":${deep}}}}`,
      },
      400,
    )
    await expectRefused(
      {
        url: `${base}/cohorts/`,
        headers,
        body: `{"name":"deep","filters":{"properties":{"type":"AND","values":[{"type":"person","key":"k","value":${deep}}]}}}`,
      },
      400,
    )
    const nestedGroups = `${'{"type":"AND","values":['.repeat(5000)}${']}'.repeat(5000)}`
    await expectRefused(
      { url: `${base}/cohorts/`, headers, body: `{"name":"deep","filters":{"properties":${nestedGroups}}}` },
      400,
    )
  })
})

describe('__proto__ keys', () => {
  it('stay ordinary keys of event and person properties, as PostHog keeps them', async () => {
    const distinctId = `proto-${Date.now()}`
    // $elements_chain makes the normalizer copy the properties (it drops that key), the path that lost them.
    const body = `{"api_key":"${token}","event":"proto","distinct_id":"${distinctId}","properties":{"__proto__":{"x":1},"a":1,"$elements_chain":"div:nth-child=\\"1\\"","$set":{"__proto__":{"y":2},"b":2},"$set_once":{"__proto__":{"z":3}}}}`
    const res = await send({ url: '/i/v0/e/', headers: { 'content-type': 'application/json' }, body })
    expect(res.status).toBe(200)
    const [stored] = await eventsOf(distinctId)
    expect(Object.hasOwn(stored.properties, '__proto__')).toBe(true)
    expect(Object.getOwnPropertyDescriptor(stored.properties, '__proto__')?.value).toEqual({ x: 1 })
    expect(stored.properties.a).toBe(1)
    expect(stored.properties.$set).toEqual(JSON.parse('{"__proto__":{"y":2},"b":2}'))
    const person = JSON.parse((await personOf(distinctId))?.properties ?? '{}')
    expect(Object.hasOwn(person, '__proto__')).toBe(true)
    // $set wins over $set_once for the same key.
    expect(Object.getOwnPropertyDescriptor(person, '__proto__')?.value).toEqual({ y: 2 })
    expect(person.b).toBe(2)
    expect(Object.getPrototypeOf(person)).toBe(Object.prototype)

    const query = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/query/`,
      headers: t.auth,
      payload: {
        query: {
          kind: 'HogQLQuery',
          query: `SELECT properties.__proto__.x, person.properties.__proto__.y FROM events WHERE distinct_id = '${distinctId}'`,
        },
      },
    })
    expect(query.statusCode).toBe(200)
    // HogQL reads a property as text, as PostHog's does.
    expect(query.json().results).toEqual([['1', '2']])
  })
})
