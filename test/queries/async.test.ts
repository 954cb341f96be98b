import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { engineIdOf } from '../../src/queries/service.js'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { hogql, insertEvents, postQuery } from './fixtures.js'

let t: TestApp
let other: Awaited<ReturnType<typeof createTenant>>

/** Hashes 10^11 numbers: runs for minutes on the embedded engine unless stopped. */
const SLOW = 'select count() from numbers(100000000000) where cityHash64(number) = 7'

beforeAll(async () => {
  t = await startTestApp()
  other = await createTenant(t)
  await insertEvents(t, [
    { team_id: t.creds.project_id, event: 'a' },
    { team_id: t.creds.project_id, event: 'b' },
  ])
}, 60_000)
afterAll(() => t.close())

const statusUrl = (id: string, projectId = t.creds.project_id) => `/api/projects/${projectId}/query/${id}/`
const getStatus = (id: string, auth = t.auth, projectId = t.creds.project_id) =>
  t.burrow.app.inject({ method: 'GET', url: statusUrl(id, projectId), headers: auth })

async function pollUntil(id: string, done: (status: Record<string, unknown>) => boolean, timeoutMs = 20_000) {
  const until = Date.now() + timeoutMs
  for (;;) {
    const res = await getStatus(id)
    const status = res.json().query_status
    if (status && done(status)) return { res, status }
    if (Date.now() > until) throw new Error(`timed out waiting for query ${id}: ${res.body}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe('asynchronous queries', () => {
  it('answers at once with a status, then serves the result when polled', async () => {
    const res = await postQuery(
      t,
      hogql('select event from events order by event', { async: true, client_query_id: 'async-1' }),
    )
    expect(res.statusCode).toBe(202)
    const body = res.json()
    expect(body.cache_key).toMatch(/^cache_/)
    expect(body.query_status).toMatchObject({
      id: 'async-1',
      query_async: true,
      team_id: t.creds.project_id,
      complete: false,
      error: false,
      error_message: null,
    })
    const { res: done, status } = await pollUntil('async-1', (s) => s.complete === true)
    expect(done.statusCode).toBe(200)
    expect(status.error).toBe(false)
    expect(status.end_time).toBeTruthy()
    expect((status.results as { results: unknown }).results).toEqual([['a'], ['b']])
    // The calculation filled the cache: the same query now answers from it.
    const again = await postQuery(t, hogql('select event from events order by event', { refresh: 'async' }))
    expect(again.statusCode).toBe(200)
    expect(again.json()).toMatchObject({ is_cached: true, results: [['a'], ['b']] })
  })

  it('always enqueues with force_async and hides the status from other projects', async () => {
    const res = await postQuery(t, hogql('select 1', { refresh: 'force_async', client_query_id: 'async-2' }))
    expect(res.statusCode).toBe(202)
    expect(Object.keys(res.json())).toEqual(['query_status'])
    await pollUntil('async-2', (s) => s.complete === true)
    const foreign = await getStatus('async-2', other.auth, other.project.id)
    expect(foreign.statusCode).toBe(404)
    expect((await getStatus('no-such-query')).statusCode).toBe(404)
  })

  it('marks a failed query with error and error_message', async () => {
    await postQuery(t, hogql("select plus('a', 1)", { refresh: 'force_async', client_query_id: 'async-fail' }))
    const { res, status } = await pollUntil('async-fail', (s) => s.complete === true)
    expect(res.statusCode).toBe(400)
    expect(status.error).toBe(true)
    // the engine's types and function name pass through (PostHog's safe ClickHouse errors), nothing else
    expect(status.error_message).toBe(
      'A function was given an argument of a type it does not accept. ' +
        'Illegal types String and UInt8 of arguments of function plus (ILLEGAL_TYPE_OF_ARGUMENT)',
    )
  })
})

describe('cancellation', () => {
  it('stops a running async query in the engine', async () => {
    const engineId = engineIdOf(t.creds.project_id, 'slow-1')
    const res = await postQuery(t, hogql(SLOW, { refresh: 'force_async', client_query_id: 'slow-1' }))
    expect(res.statusCode).toBe(202)
    // Wait until the engine runs it and reports progress through the status.
    const { status } = await pollUntil('slow-1', (s) => s.query_progress !== null)
    expect(status.complete).toBe(false)
    expect((status.query_progress as { rows_read: number }).rows_read).toBeGreaterThanOrEqual(0)
    expect(await t.burrow.events.progress(engineId)).toBeDefined()

    const foreign = await t.burrow.app.inject({
      method: 'DELETE',
      url: statusUrl('slow-1', other.project.id),
      headers: other.auth,
    })
    expect(foreign.statusCode).toBe(404)

    const started = Date.now()
    const cancel = await t.burrow.app.inject({ method: 'DELETE', url: statusUrl('slow-1'), headers: t.auth })
    expect(cancel.statusCode).toBe(200)
    expect(cancel.json()).toEqual({ message: 'Cancelled query on clickhouse' })
    expect(Date.now() - started).toBeLessThan(10_000)
    const after = (await getStatus('slow-1')).json().query_status
    expect(after).toMatchObject({ complete: true, error: true, error_message: 'Query was cancelled.' })
    const until = Date.now() + 10_000
    while ((await t.burrow.events.progress(engineId)) !== undefined && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(await t.burrow.events.progress(engineId)).toBeUndefined()

    const log = await t.burrow.app.inject({ method: 'GET', url: `${statusUrl('slow-1')}log/`, headers: t.auth })
    const { columns, results } = log.json()
    expect(results[0][columns.indexOf('status')]).toBe('ExceptionWhileProcessing')
    expect(results[0][columns.indexOf('exception')]).toBe('Query was cancelled.')
  }, 30_000)

  it('stops a blocking query from another request', async () => {
    const engineId = engineIdOf(t.creds.project_id, 'slow-2')
    const pending = postQuery(t, hogql(SLOW, { client_query_id: 'slow-2' }))
    const until = Date.now() + 10_000
    while ((await t.burrow.events.progress(engineId)) === undefined) {
      if (Date.now() > until) throw new Error('the slow query never started')
      await new Promise((r) => setTimeout(r, 50))
    }
    const cancel = await t.burrow.app.inject({ method: 'DELETE', url: statusUrl('slow-2'), headers: t.auth })
    expect(cancel.statusCode).toBe(200)
    const res = await pending
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', code: 'query_cancelled' })
    expect(await t.burrow.events.progress(engineId)).toBeUndefined()
  }, 30_000)

  it('answers 404 for a query that does not exist', async () => {
    const res = await t.burrow.app.inject({ method: 'DELETE', url: statusUrl('never-ran'), headers: t.auth })
    expect(res.statusCode).toBe(404)
  })
})
