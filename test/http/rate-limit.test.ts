import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Burrow, buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { createRateLimiter } from '../../src/http/rate-limit.js'
import { createRateLimitStore } from '../../src/http/rate-limit-store.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { lzBomb } from '../helpers/hostile.js'

const LIMITS = {
  RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '5',
  RATE_LIMIT_PUBLIC_FAILURES_PER_MINUTE: '4',
  RATE_LIMIT_QUERIES_PER_MINUTE: '3',
  RATE_LIMIT_QUERY_CONCURRENCY: '2',
}

// The app's clock starts a second into a minute, so that no counting window turns over while this file runs.
const startedAt = Date.now()
const minuteStart = Math.ceil(startedAt / 60_000) * 60_000 + 1_000
const clock = () => new Date(minuteStart + (Date.now() - startedAt))

let t: TestApp
beforeAll(async () => {
  t = await startTestApp({ env: LIMITS, clock })
})
afterAll(() => t.close())

const BAD_KEY = { authorization: 'Bearer phx_not_a_real_key_at_all' }
const projects = (headers: Record<string, string>, remoteAddress: string, app = t.burrow.app) =>
  app.inject({ method: 'GET', url: '/api/projects/', headers, remoteAddress })

function expectThrottled(res: { statusCode: number; headers: Record<string, unknown>; json(): unknown }) {
  expect(res.statusCode).toBe(429)
  const retryAfter = Number(res.headers['retry-after'])
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(60)
  expect(res.json()).toEqual({
    type: 'throttled_error',
    code: 'throttled',
    detail: `Request was throttled. Expected available in ${retryAfter} seconds.`,
    attr: null,
  })
}

describe('failed personal API keys', () => {
  it('refuses an address after too many bad keys, even with a good key, and leaves other addresses alone', async () => {
    for (let i = 0; i < 5; i++) expect((await projects(BAD_KEY, '10.1.0.1')).statusCode).toBe(401)
    expectThrottled(await projects(BAD_KEY, '10.1.0.1'))
    expectThrottled(await projects(t.auth, '10.1.0.1'))

    const elsewhere = await projects(t.auth, '10.1.0.2')
    expect(elsewhere.statusCode).toBe(200)
    expect((await projects(BAD_KEY, '10.1.0.2')).statusCode).toBe(401)
  })

  it('does not count requests that bring no key, or good keys', async () => {
    for (let i = 0; i < 8; i++) {
      expect((await projects({}, '10.1.1.1')).statusCode).toBe(401)
      expect((await projects(t.auth, '10.1.1.1')).statusCode).toBe(200)
    }
  })
})

describe('public endpoints', () => {
  const capture = (payload: unknown, remoteAddress: string) =>
    t.burrow.app.inject({
      method: 'POST',
      url: '/i/v0/e/',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(payload),
      remoteAddress,
    })
  const event = (token: string, n: number) => ({ api_key: token, event: 'e', distinct_id: `rl-${n}` })

  it('never counts successful capture and /flags', async () => {
    for (let i = 0; i < 12; i++) {
      expect((await capture(event(t.creds.project_api_key, i), '10.2.0.1')).statusCode).toBe(200)
      const flags = await t.burrow.app.inject({
        method: 'POST',
        url: '/flags/?v=2',
        payload: { token: t.creds.project_api_key, distinct_id: `rl-${i}` },
        remoteAddress: '10.2.0.1',
      })
      expect(flags.statusCode).toBe(200)
    }
  })

  it('refuses an address after too many bad project keys on capture and /flags', async () => {
    for (let i = 0; i < 2; i++) expect((await capture(event('phc_wrong', i), '10.2.1.1')).statusCode).toBe(401)
    for (let i = 0; i < 2; i++) {
      const res = await t.burrow.app.inject({
        method: 'POST',
        url: '/flags/?v=2',
        payload: { token: 'phc_wrong', distinct_id: 'x' },
        remoteAddress: '10.2.1.1',
      })
      expect(res.statusCode).toBe(401)
    }
    expectThrottled(await capture(event('phc_wrong', 9), '10.2.1.1'))
    expectThrottled(await capture(event(t.creds.project_api_key, 10), '10.2.1.1'))
    expect((await capture(event(t.creds.project_api_key, 11), '10.2.1.2')).statusCode).toBe(200)
  })

  it('refuses an address sooner after oversized payloads (a sixtieth of the failure limit, at least 1)', async () => {
    // 8,000 codes decompress to ~32 million characters, past the 20 MiB cap
    const bomb = () =>
      t.burrow.app.inject({
        method: 'POST',
        url: '/i/v0/e/?compression=lz64',
        headers: { 'content-type': 'text/plain' },
        payload: lzBomb(8_000),
        remoteAddress: '10.2.2.1',
      })
    expect((await bomb()).statusCode).toBe(413)
    expectThrottled(await bomb())
    expectThrottled(await capture(event(t.creds.project_api_key, 12), '10.2.2.1'))
    expect((await capture(event(t.creds.project_api_key, 13), '10.2.2.2')).statusCode).toBe(200)
  })
})

describe('query API', () => {
  const query = (remoteAddress = '10.3.0.1') =>
    t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/query/`,
      headers: t.auth,
      payload: { query: { kind: 'HogQLQuery', query: 'select 1' } },
      remoteAddress,
    })

  it('limits queries per key and minute, from any address', async () => {
    for (let i = 0; i < 3; i++) expect((await query(`10.3.0.${i + 1}`)).statusCode).toBe(200)
    expectThrottled(await query('10.3.0.9'))
    // Once over its limit, the key is refused as the request arrives: a body that would not even parse (and
    // would cost its parse, 400) answers 429 too. Other routes still take the key.
    expectThrottled(
      await t.burrow.app.inject({
        method: 'POST',
        url: `/api/projects/${t.creds.project_id}/query/`,
        headers: { ...t.auth, 'content-type': 'application/json' },
        payload: '{"query": {"kind": "HogQLQuery", "query": "select 1"',
        remoteAddress: '10.3.0.10',
      }),
    )
    expect((await projects(t.auth, '10.3.0.10')).statusCode).toBe(200)
  })

  it('limits queries running at once per project', async () => {
    const { createTenant } = await import('../helpers/app.js')
    const other = await createTenant(t)
    const run = (headers = other.auth) =>
      t.burrow.app.inject({
        method: 'POST',
        url: `/api/projects/${other.project.id}/query/`,
        headers,
        payload: { query: { kind: 'HogQLQuery', query: 'select 1' } },
      })
    // Two queries of this project are running (held here as the query route holds them).
    const first = await t.burrow.rateLimiter.acquire(`query:${other.project.id}`, 2)
    const second = await t.burrow.rateLimiter.acquire(`query:${other.project.id}`, 2)
    expect(first && second).toBeTruthy()
    const refused = await run()
    expect(refused.statusCode).toBe(429)
    // PostHog's ConcurrencyLimitExceeded wording (test/http/query-concurrency.test.ts has the whole answer).
    expect(refused.json()).toMatchObject({
      type: 'throttled_error',
      code: 'throttled',
      detail: expect.stringMatching(
        `^Exceeded maximum concurrency limit: 2 for key: api:query:per-team:${other.project.id} `,
      ),
      attr: null,
    })
    await first?.()
    const ok = await run()
    expect(ok.statusCode).toBe(200)
    // The finished query gave its slot back.
    expect((await run()).statusCode).toBe(200)
    await second?.()
  })
})

describe('query slots', () => {
  it('frees the slot of a holder that stopped renewing its lease (a process that died)', async () => {
    const store = createRateLimitStore(t.burrow.meta.db)
    const onError = (err: unknown) => {
      throw err
    }
    const held = await t.burrow.rateLimiter.acquire('query:abandoned', 1)
    expect(held).toBeDefined()
    expect(await t.burrow.rateLimiter.acquire('query:abandoned', 1)).toBeUndefined()
    // Another process, two minutes on, without the holder's renewals: the lease has run out.
    const later = createRateLimiter({ store, clock: () => new Date(clock().getTime() + 120_000), onError })
    const taken = await later.acquire('query:abandoned', 1)
    expect(taken).toBeDefined()
    // The first holder's release no longer touches a slot that is someone else's now.
    await held?.()
    expect(await later.acquire('query:abandoned', 1)).toBeUndefined()
    await taken?.()
    later.close()
  })
})

describe.skipIf(!process.env.DATABASE_URL?.startsWith('postgres'))('several processes', () => {
  let second: Burrow
  let secondDir: string
  beforeAll(async () => {
    secondDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-test-second-'))
    const config = loadConfig({
      ...LIMITS,
      DATA_DIR: secondDir,
      LOG_LEVEL: 'silent',
      DATABASE_URL: t.burrow.config.databaseUrl,
      // Both instances' events in one engine directory: the shared metadata store is what is under test.
      CLICKHOUSE_URL: t.burrow.config.clickhouseUrl,
    })
    second = await buildApp(config, { logger: false, clock })
    await second.app.ready()
  })
  afterAll(async () => {
    await second?.close()
    fs.rmSync(secondDir, { recursive: true, force: true })
  })

  it('shares the failed-key counter between two instances on one PostgreSQL database', async () => {
    for (let i = 0; i < 3; i++) expect((await projects(BAD_KEY, '10.4.0.1')).statusCode).toBe(401)
    for (let i = 0; i < 2; i++) expect((await projects(BAD_KEY, '10.4.0.1', second.app)).statusCode).toBe(401)
    // The fifth failure was counted by the second instance; the first refuses the address all the same.
    expectThrottled(await projects(t.auth, '10.4.0.1'))
    expectThrottled(await projects(t.auth, '10.4.0.1', second.app))
    expect((await projects(t.auth, '10.4.0.2', second.app)).statusCode).toBe(200)
  })

  it('shares query slots between two instances', async () => {
    const held = [
      await t.burrow.rateLimiter.acquire('query:shared-test', 2),
      await second.rateLimiter.acquire('query:shared-test', 2),
    ]
    expect(held.every(Boolean)).toBe(true)
    expect(await second.rateLimiter.acquire('query:shared-test', 2)).toBeUndefined()
    await held[0]?.()
    const again = await second.rateLimiter.acquire('query:shared-test', 2)
    expect(again).toBeDefined()
    await again?.()
    await held[1]?.()
  })
})
