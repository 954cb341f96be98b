/**
 * Every HogQL query runs within bounds (time, memory per query and for the engine, result size, nesting), and
 * what it answers when it goes past them is PostHog's error body without the engine's text: no row values and
 * no generated SQL reach the caller.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { hogql, insertEvents, postQuery } from './fixtures.js'

let t: TestApp
const MARKER = 'own-marker-7f3a'

beforeAll(async () => {
  t = await startTestApp({
    env: {
      QUERY_MEMORY_LIMIT_MB: '200',
      ENGINE_MEMORY_LIMIT_MB: '1024',
      QUERY_MAX_EXECUTION_SECONDS: '2',
      QUERY_MAX_RESULT_MB: '4',
      RATE_LIMIT_QUERIES_PER_MINUTE: '0',
      RATE_LIMIT_QUERIES_PER_HOUR: '0',
    },
  })
  await insertEvents(t, [
    { team_id: t.creds.project_id, event: MARKER, distinct_id: `${MARKER}-user`, properties: { secret: MARKER } },
  ])
}, 60_000)
afterAll(() => t.close())

const rssMb = () => process.memoryUsage().rss / 1024 / 1024

describe('engine errors', () => {
  it.each([
    ['a conversion', `select _toInt64(event) from events`, 'cannot_parse_text'],
    ['a conversion in WHERE', `select count() from events where _toInt64(concat(event, properties)) > 1`, undefined],
    ['a division by zero', `select intDiv(1, length(event) - length(event)) from events`, 'illegal_division'],
    ['an illegal argument', `select plus(event, 1) from events`, 'illegal_type_of_argument'],
  ])('name the problem for %s without the values or the SQL', async (_what, query, code) => {
    const res = await postQuery(t, hogql(query))
    expect(res.statusCode).toBe(400)
    const body = res.json()
    expect(body).toMatchObject({ type: 'validation_error', attr: null })
    if (code) expect(body.code).toBe(code)
    expect(body.detail).toMatch(/\([A-Z_]+\)$/)
    expect(res.body).not.toContain(MARKER)
    expect(res.body).not.toMatch(/SELECT|__table|hogql_|DB::Exception|Stack trace/)
  })

  it('keeps the engine text out of the query log too', async () => {
    const res = await postQuery(t, { ...hogql('select _toInt64(event) from events'), client_query_id: 'log-check-1' })
    expect(res.statusCode).toBe(400)
    const log = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${t.creds.project_id}/query/log-check-1/log/`,
      headers: t.auth,
    })
    expect(log.statusCode).toBe(200)
    expect(log.body).not.toContain(MARKER)
    expect(log.body).not.toContain('DB::Exception')
  })

  it('answers the next query on the same engine session with its own result after a failure', async () => {
    for (let i = 0; i < 6; i++) {
      expect((await postQuery(t, hogql('select _toInt64(event) from events'))).statusCode).toBe(400)
      const ok = await postQuery(t, hogql(`select ${i} + 1`))
      expect(ok.statusCode).toBe(200)
      expect(ok.json().results).toEqual([[i + 1]])
    }
  })
})

describe('resource bombs answer 4xx/5xx in PostHog’s shape and leave the process under its cap', () => {
  /** whichever limit a bomb meets first: its memory, the time, or the result's size */
  const LIMITS = ['memory_limit_exceeded', 'timeout', 'too_many_rows_or_bytes']
  const before = { rss: 0 }
  beforeAll(() => {
    before.rss = rssMb()
  })

  it.each([
    ['groupArray of everything', 'select length(groupArray(number)) from numbers(100000000)', LIMITS],
    ['a huge range', 'select length(range(1000000000))', undefined],
    ['arrayMap over a huge array', 'select length(arrayMap(x -> x * 2, range(300000000)))', LIMITS],
    ['repeat', "select length(repeat('x', 2000000000))", undefined],
    ['a cross join', 'select count() from numbers(1000000) a, numbers(1000000) b', ['timeout']],
    ['numbers() with a huge argument', 'select sum(number) from numbers(1000000000000)', ['timeout']],
    ['a result too large', "select repeat('x', 10000) from numbers(50000) limit 50000", LIMITS],
  ])('%s', async (_what, query, codes) => {
    const started = performance.now()
    const res = await postQuery(t, hogql(query))
    expect(res.statusCode).toBeGreaterThanOrEqual(400)
    expect(res.statusCode).toBeLessThan(600)
    const body = res.json()
    expect(Object.keys(body).sort()).toEqual(['attr', 'code', 'detail', 'type'])
    if (codes) expect(codes).toContain(body.code)
    expect(res.body).not.toMatch(/DB::Exception|SELECT/)
    // the time limit is 2 s; the engine checks it between blocks
    expect(performance.now() - started).toBeLessThan(10_000)
  })

  it('stays under the engine cap after all of them', () => {
    // the engine may use 1 GiB; Node, the metadata store and the engine's code add a few hundred MB
    expect(rssMb()).toBeLessThan(Math.max(before.rss, 600) + 1024)
  })
})

describe('nesting', () => {
  const deep = 100_000
  it.each([
    ['parentheses', `select ${'('.repeat(deep)}1${')'.repeat(deep)}`],
    ['calls', `select ${'abs('.repeat(deep)}1${')'.repeat(deep)}`],
    ['arrays', `select ${'['.repeat(deep)}1${']'.repeat(deep)}`],
    ['subqueries', `select 1 from ${'(select 1 from '.repeat(deep / 4)}events${')'.repeat(deep / 4)}`],
    ['a chain of additions', `select ${Array(deep).fill('1').join(' + ')}`],
    ['a chain of NOTs', `select ${'not '.repeat(deep)}1`],
    ['a chain of ?? operators', `select ${Array(deep).fill('1').join('??')}`],
    ['a chain of ternaries', `select ${'1?2:'.repeat(deep)}3`],
    ['a field chain', `select properties${'.a'.repeat(deep)} from events`],
    ['array indexes', `select [1]${'[1]'.repeat(deep)}`],
  ])('%s 100k levels deep answer 400 Query too deeply nested', async (_what, query) => {
    const res = await postQuery(t, hogql(query))
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', code: 'hogql_syntax_error' })
    expect(res.json().detail).toContain('Query too deeply nested')
  })

  it('refuses an unreadable query before it costs a query log row', async () => {
    const deepQuery = `select ${'('.repeat(deep)}1${')'.repeat(deep)}`
    const res = await postQuery(t, hogql(deepQuery, { client_query_id: 'too-deep-1' }))
    expect(res.statusCode).toBe(400)
    const log = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${t.creds.project_id}/query/too-deep-1/log/`,
      headers: t.auth,
    })
    // PostHog answers the log of a query it never logged with no rows (posthog/api/query.py get_query_log)
    expect(log.statusCode).toBe(200)
    expect(log.json().results).toEqual([])
  })

  it('still runs queries nested as deeply as people write them', async () => {
    const res = await postQuery(t, hogql(`select ${'('.repeat(100)}1 + 1${')'.repeat(100)}`))
    expect(res.statusCode).toBe(200)
    expect(res.json().results).toEqual([[2]])
  })

  it('refuses a query text over 512 KiB', async () => {
    const res = await postQuery(t, hogql(`select 1 -- ${'x'.repeat(600 * 1024)}`))
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toContain('Query is too long')
  })

  it('refuses a query body over 4 MiB with 413 before reading it, and logs nothing', async () => {
    // 15 MB of `a,` (7.5 million tokens): under the app's 20 MiB body limit this was parsed and lexed whole before
    // its length was checked (1.8 s of the request thread and 1.3 GB of memory).
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/query/`,
      headers: { ...t.auth, 'content-type': 'application/json' },
      payload: JSON.stringify(hogql(`select ${'a,'.repeat(7_500_000)}a`, { client_query_id: 'too-long-1' })),
    })
    expect(res.statusCode).toBe(413)
    expect(res.json()).toEqual({
      type: 'invalid_request',
      code: 'request_too_large',
      detail: 'Request body is too large.',
      attr: null,
    })
    const log = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${t.creds.project_id}/query/too-long-1/log/`,
      headers: t.auth,
    })
    expect(log.json().results).toEqual([])
  })

  it('still takes a query of 512 KiB written as JSON escapes (a body of 3 MiB)', async () => {
    // Every character escaped: 6 bytes a character, the most a body within the text limit can take.
    const text = `select 1 -- ${'x'.repeat(512 * 1024 - 12)}`
    const escaped = Array.from(text, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')
    const payload = `{"query":{"kind":"HogQLQuery","query":"${escaped}"}}`
    expect(payload.length).toBeGreaterThan(3 * 1024 * 1024)
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/query/`,
      headers: { ...t.auth, 'content-type': 'application/json' },
      payload,
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().results).toEqual([[1]])
  })
})

describe('deeply nested JSON bodies on management routes', () => {
  const N = 20_000
  const leaf = '{"key":"a","value":"b","type":"event","operator":"exact"}'
  const group = `${'{"type":"AND","values":['.repeat(N)}${leaf}${']}'.repeat(N)}`
  const wrappers = `${'{"kind":"DataTableNode","source":'.repeat(N)}{"kind":"EventsQuery","select":["event"]}${'}'.repeat(N)}`
  const send = (path: string, payload: string) =>
    t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/${path}`,
      headers: { ...t.auth, 'content-type': 'application/json' },
      payload,
    })

  it.each([
    [
      'property groups of an EventsQuery',
      'query/',
      `{"query":{"kind":"EventsQuery","select":["event"],"properties":[${group}]}}`,
    ],
    ['wrapper nodes', 'query/', `{"query":${wrappers}}`],
    [
      'HogQL placeholder values',
      'query/',
      `{"query":{"kind":"HogQLQuery","query":"select 1","values":{"a":${group}}}}`,
    ],
    [
      'filters_override',
      'query/',
      `{"query":{"kind":"HogQLQuery","query":"select 1"},"filters_override":{"properties":[${group}]}}`,
    ],
    ['a node to upgrade', 'query/upgrade/', `{"query":${wrappers}}`],
    ['feature flag filters', 'feature_flags/', `{"key":"deep","filters":{"groups":[{"properties":[${group}]}]}}`],
  ])('%s 20,000 levels deep answer 400, not a stack overflow', async (_what, path, payload) => {
    const res = await send(path, payload)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', attr: null })
    expect(res.json().detail).toContain('nested too deeply')
  })

  it('still takes a body nested a dozen levels', async () => {
    const twelve = `${'{"type":"AND","values":['.repeat(10)}${leaf}${']}'.repeat(10)}`
    const res = await send('query/', `{"query":{"kind":"EventsQuery","select":["event"],"properties":[${twelve}]}}`)
    expect(res.statusCode).toBe(200)
  })
})
