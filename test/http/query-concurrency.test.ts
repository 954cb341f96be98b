/**
 * PostHog's answer when a project's queries at once reach the limit: `ConcurrencyLimitExceeded` raised by its
 * per-team API limiter (`posthog/clickhouse/client/limit.py`, key `api:query:per-team:<team id>`) and answered by
 * the query view as DRF's `Throttled(detail=str(c))` — 429, `throttled_error`/`throttled`, the exception's text
 * as the detail, and no Retry-After (DRF sets it only for a throttle that knows its wait).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
beforeAll(async () => {
  t = await startTestApp({
    env: { RATE_LIMIT_QUERY_CONCURRENCY: '3', RATE_LIMIT_QUERIES_PER_MINUTE: '0', RATE_LIMIT_QUERIES_PER_HOUR: '0' },
  })
}, 60_000)
afterAll(() => t.close())

describe('a query over the project’s concurrency limit', () => {
  it('test_api_query_concurrency_limit: answers PostHog’s ConcurrencyLimitExceeded as a 429', async () => {
    const other = await createTenant(t)
    const run = (body: Record<string, unknown>) =>
      t.burrow.app.inject({
        method: 'POST',
        url: `/api/projects/${other.project.id}/query/`,
        headers: other.auth,
        payload: { query: { kind: 'HogQLQuery', query: 'select 1' }, ...body },
      })
    // Three queries of this project are running (held here as the query route holds them).
    const held = await Promise.all([1, 2, 3].map(() => t.burrow.rateLimiter.acquire(`query:${other.project.id}`, 3)))
    expect(held.every(Boolean)).toBe(true)

    const refused = await run({ client_query_id: 'my-dashboard-tile-7' })
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBeUndefined()
    expect(refused.json()).toEqual({
      type: 'throttled_error',
      code: 'throttled',
      detail: `Exceeded maximum concurrency limit: 3 for key: api:query:per-team:${other.project.id} and task: my-dashboard-tile-7`,
      attr: null,
    })

    // Without a client query id the task is named by a short generated id.
    const anonymous = await run({})
    expect(anonymous.statusCode).toBe(429)
    expect(anonymous.json().detail).toMatch(
      new RegExp(
        `^Exceeded maximum concurrency limit: 3 for key: api:query:per-team:${other.project.id} and task: [A-Za-z0-9_-]{8}$`,
      ),
    )

    // A slot given back lets the next query run.
    await held[0]?.()
    const ok = await run({})
    expect(ok.statusCode).toBe(200)
    expect(ok.json().results).toEqual([[1]])
    await Promise.all(held.slice(1).map((release) => release?.()))
  })
})
