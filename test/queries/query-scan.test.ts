/**
 * `query_status.query_scan`: PostHog's summary of what a run read (`QueryScanSummary`: mode, rows_read,
 * duration_ms, status, killed), null while the query runs, filled from what the engine reported once it ends —
 * on a finished run and on one the engine stopped at a limit, where it is the only account of the work done.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { hogql, postQuery } from './fixtures.js'

let t: TestApp

beforeAll(async () => {
  t = await startTestApp({
    env: {
      QUERY_MAX_EXECUTION_SECONDS: '2',
      RATE_LIMIT_QUERIES_PER_MINUTE: '0',
      RATE_LIMIT_QUERIES_PER_HOUR: '0',
    },
  })
}, 60_000)
afterAll(() => t.close())

const statusOf = (id: string) =>
  t.burrow.app.inject({ method: 'GET', url: `/api/projects/${t.creds.project_id}/query/${id}/`, headers: t.auth })

/** Polls an async query until it has ended, keeping every status seen on the way. */
async function settle(id: string) {
  const seen: Record<string, unknown>[] = []
  for (let tries = 0; tries < 600; tries++) {
    const res = await statusOf(id)
    const status = res.json().query_status
    seen.push(status)
    if (status.complete) return { res, status, seen }
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`query ${id} did not end`)
}

describe('query_scan on an async query status', () => {
  it('is null while the query runs and summarises what the engine read once it has finished', async () => {
    const started = await postQuery(t, hogql('select count() from numbers(1000)', { refresh: 'force_async' }))
    expect(started.statusCode).toBe(202)
    expect(started.json().query_status.query_scan).toBeNull()
    const { res, status, seen } = await settle(started.json().query_status.id)
    expect(res.statusCode).toBe(200)
    expect(status.results.results).toEqual([[1000]])
    for (const running of seen.filter((s) => !s.complete)) expect(running.query_scan).toBeNull()
    expect(status.query_scan).toEqual({
      mode: 'show',
      rows_read: expect.any(Number),
      duration_ms: expect.any(Number),
      status: null,
      killed: false,
    })
    // What the engine read: the 1,000 rows numbers() produced, one UInt64 column, 8 bytes a row.
    expect(status.query_scan.rows_read).toBe(1000)
    expect(status.bytes_read).toBe(8000)
    expect(Number.isInteger(status.query_scan.duration_ms)).toBe(true)
    expect(status.query_scan.duration_ms).toBeGreaterThanOrEqual(0)
    expect(status.query_scan.duration_ms).toBeLessThan(10_000)
  })

  it('says that the engine stopped a run at its time limit, with what it had read by then', async () => {
    const started = await postQuery(
      t,
      hogql('select sum(number) from numbers(1000000000000)', { refresh: 'force_async' }),
    )
    const { res, status } = await settle(started.json().query_status.id)
    expect(res.statusCode).toBe(400)
    expect(status).toMatchObject({ error: true, error_code: 'timeout', results: null })
    expect(status.query_scan).toMatchObject({ mode: 'show', status: null, killed: true })
    // The limit is 2 s; the engine checks it between blocks, so it ran at least most of that.
    expect(status.query_scan.duration_ms).toBeGreaterThanOrEqual(1500)
    expect(status.query_scan.duration_ms).toBeLessThan(10_000)
    // The heartbeat (every second) saw the engine's progress before the stop.
    expect(status.query_scan.rows_read).toBeGreaterThan(0)
  })

  it('stays null for a run the HogQL compiler refused before it reached the engine', async () => {
    const started = await postQuery(t, hogql('select nosuchfunction()', { refresh: 'force_async' }))
    const { res, status } = await settle(started.json().query_status.id)
    expect(res.statusCode).toBe(400)
    expect(status.error_code).toBe('hogql_query_error')
    expect(status.query_scan).toBeNull()
  })
})
