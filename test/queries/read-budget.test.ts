/**
 * PostHog's hourly read budget for queries made with a personal API key (posthog/api/test/test_query.py
 * TestQueryCostHeaders): the cost headers on every such answer, the async status carrying the cost once complete,
 * and 429 `api_queries_budget_exceeded` with Retry-After once the budget is spent — cached answers still served,
 * logged-in sessions never charged. The budget here is 1 MB an hour. What a query read is what the engine reports
 * having read, as a ClickHouse server does: `groupArray(number) FROM numbers(n)` reads n UInt64 values, 8 bytes each.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cookieClient } from '../accounts/client.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { hogql } from './fixtures.js'

const MB = 1024 * 1024
let t: TestApp
let url: string
beforeAll(async () => {
  // a fixed instant half way through an hour: the sliding window's arithmetic is then exact
  t = await startTestApp({
    clock: () => new Date('2026-01-10T12:30:00.000Z'),
    env: { QUERY_READ_BUDGET_MB_PER_HOUR: '1', RATE_LIMIT_QUERIES_PER_MINUTE: '0', RATE_LIMIT_QUERIES_PER_HOUR: '0' },
  })
  url = `/api/projects/${t.creds.project_id}/query/`
}, 60_000)
afterAll(() => t?.close())

const withKey = (body: object) => t.burrow.app.inject({ method: 'POST', url, headers: t.auth, payload: body })
const bytesRead = (res: { headers: Record<string, unknown> }) => Number(res.headers['x-posthog-query-bytes-read'])
const remaining = (res: { headers: Record<string, unknown> }) =>
  Number(res.headers['x-posthog-query-budget-remaining-bytes'])

describe('the query read budget', () => {
  it('test_only_api_key_query_responses_carry_cost_headers (api_key, session)', async () => {
    const res = await withKey(hogql('SELECT 1'))
    expect(res.statusCode, res.body).toBe(200)
    expect(bytesRead(res)).toBeGreaterThanOrEqual(0)
    expect(remaining(res)).toBeGreaterThan(0)
    expect(remaining(res)).toBeLessThanOrEqual(MB)

    const session = cookieClient(t.burrow.app)
    expect((await session.post('/api/login', { email: t.creds.email, password: t.creds.password })).statusCode).toBe(
      200,
    )
    const bySession = await session.post(url, hogql('SELECT 2'))
    expect(bySession.statusCode, bySession.body).toBe(200)
    expect(bySession.headers['x-posthog-query-bytes-read']).toBeUndefined()
    expect(bySession.headers['x-posthog-query-budget-remaining-bytes']).toBeUndefined()
  })

  it('debits what the engine read, in whole KiB', async () => {
    const before = remaining(await withKey(hogql('SELECT 3')))
    const res = await withKey(hogql('SELECT groupArray(number) FROM numbers(20000)'))
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().results[0][0]).toHaveLength(20000)
    expect(bytesRead(res)).toBe(160_000)
    // 160,000 bytes are 157 KiB (156.25, rounded up)
    expect(before - remaining(res)).toBe(157 * 1024)
  })

  it('test_async_query_status_carries_the_cost_once_complete', async () => {
    const started = await withKey({ ...hogql('SELECT groupArray(number) FROM numbers(10000)'), refresh: 'force_async' })
    expect(started.statusCode, started.body).toBe(202)
    const id = started.json().query_status.id as string
    let status = started
    for (let i = 0; i < 100 && status.json().query_status.complete !== true; i++) {
      await new Promise((r) => setTimeout(r, 50))
      status = await t.burrow.app.inject({ method: 'GET', url: `${url}${id}/`, headers: t.auth })
    }
    expect(status.statusCode, status.body).toBe(200)
    const body = status.json().query_status
    expect(body.bytes_read).toBe(80_000)
    expect(body.budget_remaining_bytes).toBeGreaterThan(0)
    expect(status.headers['x-posthog-query-bytes-read']).toBe('80000')
    expect(status.headers['x-posthog-query-budget-remaining-bytes']).toBe(String(body.budget_remaining_bytes))
  })

  it('the query that crosses the line still runs; then 429 api_queries_budget_exceeded with Retry-After', async () => {
    const crossing = await withKey(hogql('SELECT groupArray(number) FROM numbers(200000)'))
    expect(crossing.statusCode, crossing.body).toBe(200)
    expect(bytesRead(crossing)).toBe(1_600_000)
    expect(remaining(crossing)).toBe(0)

    const refused = await withKey(hogql('SELECT 4'))
    expect(refused.statusCode).toBe(429)
    expect(refused.json()).toMatchObject({ type: 'throttled_error', code: 'api_queries_budget_exceeded', attr: null })
    // spent this hour: 1 + 1 + 157 + 79 + 1563 = 1801 KiB of 1024. Room comes back next hour, once this hour's
    // share (fading from 1801 KiB) is under 1024 KiB: 30 min + (1 − 1024/1801) × 60 min = 3353.1 s
    expect(refused.headers['retry-after']).toBe('3354')
    expect(refused.headers['x-posthog-query-budget-remaining-bytes']).toBe('0')

    // cached results are served even now
    const cached = await withKey(hogql('SELECT 3'))
    expect(cached.statusCode, cached.body).toBe(200)
    expect(cached.json().is_cached).toBe(true)
    expect(bytesRead(cached)).toBe(0)

    // a logged-in session (the web app) is not charged
    const session = cookieClient(t.burrow.app)
    await session.post('/api/login', { email: t.creds.email, password: t.creds.password })
    expect((await session.post(url, hogql('SELECT 5'))).statusCode).toBe(200)
  })
})
