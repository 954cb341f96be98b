import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { hogql, insertEvents, postQuery } from './fixtures.js'

let t: TestApp
let other: Awaited<ReturnType<typeof createTenant>>
let now = new Date()
const HOUR = 3_600_000

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  other = await createTenant(t)
  const team = t.creds.project_id
  await insertEvents(t, [
    { team_id: team, event: '$pageview', distinct_id: 'anna', properties: { $browser: 'Chrome', price: 10 }, ago: 300 },
    { team_id: team, event: '$pageview', distinct_id: 'anna', properties: { $browser: 'Firefox', price: 5 }, ago: 200 },
    { team_id: team, event: '$pageview', distinct_id: 'bob', properties: { $browser: 'Chrome' }, ago: 100 },
    { team_id: team, event: 'signup', distinct_id: 'bob', properties: { plan: "it's paid" }, ago: 50 },
    { team_id: team, event: 'signup', distinct_id: 'carl', properties: { plan: 'free' }, ago: 40 },
    { team_id: team, event: 'old', distinct_id: 'carl', timestamp: '2020-01-01 00:00:00' },
    { team_id: other.project.id, event: 'secret', distinct_id: 'eve', properties: { token: 'x' }, ago: 30 },
  ])
  const db = t.burrow.stores.persons.db
  await db
    .insertInto('persons')
    .values({
      id: '0190a000-0000-7000-8000-000000000001',
      team_id: team,
      properties: JSON.stringify({ email: 'anna@example.com' }),
      is_identified: 1,
      version: 0,
      created_at: '2024-01-01T00:00:00.000Z',
    })
    .execute()
  await db
    .insertInto('person_distinct_ids')
    .values({ team_id: team, distinct_id: 'anna', person_id: '0190a000-0000-7000-8000-000000000001', version: 0 })
    .execute()
}, 60_000)
afterAll(() => t.close())

describe('HogQLQuery', () => {
  it('returns rows, columns, ClickHouse types and pagination fields like PostHog', async () => {
    const res = await postQuery(t, hogql('select event, count() from events group by event order by event'))
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.results).toEqual([
      ['$pageview', 3],
      ['old', 1],
      ['signup', 2],
    ])
    expect(body.columns).toEqual(['event', 'count()'])
    expect(body.types).toEqual([
      ['event', 'String'],
      ['count()', 'UInt64'],
    ])
    expect(body).toMatchObject({ hasMore: false, limit: 100, offset: 0, is_cached: false, error: null })
    expect(body.hogql).toContain('LIMIT 100')
    expect(body.clickhouse).toContain('team_id')
    expect(body.cache_key).toMatch(/^cache_/)
    expect(body.timings.at(-1).k).toBe('.')
  })

  it('fetches one row more than the default limit to tell whether there are more rows', async () => {
    const res = await postQuery(t, hogql('select number from numbers(150)'))
    const body = res.json()
    expect(body.results).toHaveLength(100)
    expect(body.hasMore).toBe(true)
    const exact = (await postQuery(t, hogql('select number from numbers(100)'))).json()
    expect(exact.results).toHaveLength(100)
    expect(exact.hasMore).toBe(false)
  })

  it('leaves pagination to a query that has its own LIMIT and clamps it to 50000', async () => {
    const own = (await postQuery(t, hogql('select number from numbers(150) limit 120'))).json()
    expect(own.results).toHaveLength(120)
    expect(own.hasMore).toBeUndefined()
    const huge = (await postQuery(t, hogql('select number from numbers(60000) limit 1000000'))).json()
    expect(huge.results).toHaveLength(50_000)
    expect(huge.hogql).toContain('LIMIT 50000')
  })

  it('binds placeholder values and shows datetimes in the project timezone', async () => {
    const body = (
      await postQuery(t, {
        query: {
          kind: 'HogQLQuery',
          query: 'select count(), min(timestamp) from events where event = {e}',
          values: { e: 'old' },
        },
      })
    ).json()
    expect(body.results).toEqual([[1, '2020-01-01T00:00:00Z']])
  })

  it('reads materialized properties from their columns, with the JSON expression’s values and types', async () => {
    const body = (
      await postQuery(
        t,
        hogql('select properties.$browser as b, properties.plan as p, count() from events group by b, p order by b, p'),
      )
    ).json()
    expect(body.clickhouse).toContain('events.`mat_$browser` AS b')
    expect(body.clickhouse).toContain('JSONExtractRaw(events.properties')
    expect(body.results).toEqual([
      ['Chrome', null, 2],
      ['Firefox', null, 1],
      [null, 'free', 1],
      [null, "it's paid", 1],
      [null, null, 1],
    ])
    expect(body.types).toEqual([
      ['b', 'Nullable(String)'],
      ['p', 'Nullable(String)'],
      ['count()', 'UInt64'],
    ])
  })

  it('applies {filters} from the node and filters_override', async () => {
    const query = {
      kind: 'HogQLQuery',
      query: 'select count() from events where {filters}',
      filters: { properties: [{ type: 'event', key: '$browser', value: 'Chrome', operator: 'exact' }] },
    }
    expect((await postQuery(t, { query })).json().results).toEqual([[2]])
    const overridden = await postQuery(t, {
      query,
      filters_override: { date_from: '2019-12-01', date_to: '2020-02-01' },
    })
    expect(overridden.json().results).toEqual([[0]])
    const all = await postQuery(t, {
      query: { kind: 'HogQLQuery', query: 'select count() from events where {filters}' },
    })
    expect(all.json().results).toEqual([[6]])
  })

  it("never shows another project's events", async () => {
    const mine = (await postQuery(t, hogql("select count() from events where event = 'secret'"))).json()
    expect(mine.results).toEqual([[0]])
    const theirs = (
      await postQuery(t, hogql('select event, distinct_id from events'), {
        projectId: other.project.id,
        auth: other.auth,
      })
    ).json()
    expect(theirs.results).toEqual([['secret', 'eve']])
    const trespass = await postQuery(t, hogql('select 1'), { projectId: t.creds.project_id, auth: other.auth })
    expect(trespass.statusCode).toBe(404)
  })

  it('answers under the environments prefix too', async () => {
    const res = await postQuery(t, hogql('select 1 + 1'), { prefix: 'environments' })
    expect(res.statusCode).toBe(200)
    expect(res.json().results).toEqual([[2]])
  })
})

describe('EventsQuery', () => {
  const events = (extra: Record<string, unknown>) => ({ query: { kind: 'EventsQuery', ...extra } })

  it('lists events newest first with the event object for "*"', async () => {
    const body = (
      await postQuery(t, events({ select: ['*', 'event', 'properties.$browser -- Browser'], event: '$pageview' }))
    ).json()
    expect(body.columns).toEqual(['*', 'event', 'properties.$browser -- Browser'])
    expect(body.results.map((r: unknown[]) => r[2])).toEqual(['Chrome', 'Firefox', 'Chrome'])
    const star = body.results[0][0]
    expect(star).toMatchObject({
      event: '$pageview',
      distinct_id: 'bob',
      team_id: t.creds.project_id,
      properties: { $browser: 'Chrome' },
    })
    expect(body.types[1]).toBe('String')
    expect(body).toMatchObject({ hasMore: false, limit: 100, offset: 0 })
  })

  it('pages with limit and offset and reports hasMore', async () => {
    const first = (await postQuery(t, events({ select: ['event', 'timestamp'], limit: 2 }))).json()
    expect(first.results.map((r: unknown[]) => r[0])).toEqual(['signup', 'signup'])
    expect(first.hasMore).toBe(true)
    const second = (await postQuery(t, events({ select: ['event', 'timestamp'], limit: 2, offset: 4 }))).json()
    expect(second.results.map((r: unknown[]) => r[0])).toEqual(['$pageview'])
    expect(second.hasMore).toBe(false)
  })

  it('filters by properties, where clauses and time bounds', async () => {
    const chrome = await postQuery(
      t,
      events({
        select: ['distinct_id'],
        properties: [{ type: 'event', key: '$browser', value: ['Chrome'], operator: 'exact' }],
      }),
    )
    expect(chrome.json().results).toEqual([['anna'], ['bob']])
    const cheap = await postQuery(t, events({ select: ['properties.price'], where: ['toFloat(properties.price) < 8'] }))
    expect(cheap.json().results).toEqual([['5']])
    const quoted = await postQuery(
      t,
      events({ select: ['distinct_id'], properties: [{ key: 'plan', value: "it's", operator: 'icontains' }] }),
    )
    expect(quoted.json().results).toEqual([['bob']])
    const old = await postQuery(t, events({ select: ['event'], after: '2019-12-31', before: '2020-01-02' }))
    expect(old.json().results).toEqual([['old']])
    const everything = await postQuery(t, events({ select: ['count()'], after: 'all' }))
    expect(everything.json().results).toEqual([[6]])
  })

  it('groups by the plain columns when aggregations are selected, largest count first', async () => {
    const body = (await postQuery(t, events({ select: ['event', 'count()'], where: ['count() > 1'] }))).json()
    expect(body.results).toEqual([
      ['$pageview', 3],
      ['signup', 2],
    ])
    expect(body.hogql).toContain('GROUP BY event')
  })

  it('fills person columns from the person store', async () => {
    const body = (
      await postQuery(
        t,
        events({ select: ['person', 'person_display_name -- Person'], event: '$pageview', orderBy: ['timestamp ASC'] }),
      )
    ).json()
    expect(body.results[0][0]).toMatchObject({ uuid: '0190a000-0000-7000-8000-000000000001', distinct_id: 'anna' })
    expect(body.results[0][1]).toEqual({
      display_name: 'anna@example.com',
      id: '0190a000-0000-7000-8000-000000000001',
      distinct_id: 'anna',
    })
    expect(body.results[2][1]).toEqual({ display_name: 'bob', id: null, distinct_id: 'bob' })
  })
})

describe('errors', () => {
  it.each([
    ['select from where', 'hogql_syntax_error'],
    ['select hamburger(1)', 'hogql_query_error'],
    ['select chipotle from events', 'hogql_query_error'],
  ])('answers 400 for %s with code %s', async (query, code) => {
    const res = await postQuery(t, hogql(query))
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', code, attr: null })
    expect(res.json().detail).toBeTruthy()
  })

  it('passes engine errors the user can fix through with their ClickHouse name', async () => {
    const res = await postQuery(t, hogql("select plus('a', 1)"))
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', code: 'illegal_type_of_argument' })
    expect(res.json().detail).not.toContain('Stack trace')
  })

  it('rejects unknown kinds, bad refresh modes and unsafe client query ids', async () => {
    const kind = await postQuery(t, { query: { kind: 'NoSuchQuery' } })
    expect(kind.statusCode).toBe(400)
    expect(kind.json()).toMatchObject({ code: 'parse_error', attr: null })
    expect((await postQuery(t, hogql('select 1', { refresh: 'sometimes' }))).json().attr).toBe('refresh')
    expect((await postQuery(t, hogql('select 1', { client_query_id: "x'; KILL" }))).json().attr).toBe('client_query_id')
  })

  it('requires the query:read scope', async () => {
    const res = await postQuery(t, hogql('select 1'), { auth: { authorization: 'Bearer phx_nope' } })
    expect(res.statusCode).toBe(401)
  })
})

describe('result cache', () => {
  it('serves a fresh result from cache, recalculates on force_blocking and once stale', async () => {
    const q = 'select count() from events where event = {e}'
    const body = (refresh?: string) => ({ query: { kind: 'HogQLQuery', query: q, values: { e: 'cache-me' } }, refresh })
    const first = (await postQuery(t, body())).json()
    expect(first).toMatchObject({ results: [[0]], is_cached: false })
    await insertEvents(t, [{ team_id: t.creds.project_id, event: 'cache-me' }])
    const second = (await postQuery(t, body('blocking'))).json()
    expect(second).toMatchObject({ results: [[0]], is_cached: true, cache_key: first.cache_key })
    expect(second.last_refresh).toBe(first.last_refresh)
    expect(Date.parse(second.next_allowed_client_refresh) - Date.parse(second.last_refresh)).toBe(15 * 60_000)
    const lazy = (await postQuery(t, body('lazy_async'))).json()
    expect(lazy.is_cached).toBe(true)
    const forced = (await postQuery(t, body('force_blocking'))).json()
    expect(forced).toMatchObject({ results: [[1]], is_cached: false })
    // force_cache is calculated anyway on the query endpoint, like PostHog's.
    const other = (
      await postQuery(t, { ...body('force_cache'), query: { kind: 'HogQLQuery', query: 'select 42' } })
    ).json()
    expect(other).toMatchObject({ results: [[42]], is_cached: false })

    await insertEvents(t, [{ team_id: t.creds.project_id, event: 'cache-me' }])
    now = new Date(now.getTime() + 7 * HOUR)
    const stale = (await postQuery(t, body())).json()
    expect(stale).toMatchObject({ results: [[2]], is_cached: false })
  })

  it('keys the cache by project', async () => {
    const a = (await postQuery(t, hogql('select count() from events'))).json()
    const b = (
      await postQuery(t, hogql('select count() from events'), { projectId: other.project.id, auth: other.auth })
    ).json()
    expect(a.cache_key).not.toBe(b.cache_key)
    expect(b.results).toEqual([[1]])
  })

  it('never serves EventsQuery results with relative time bounds from cache', async () => {
    const body = { query: { kind: 'EventsQuery', select: ['count()'] } }
    await postQuery(t, body)
    expect((await postQuery(t, body)).json().is_cached).toBe(false)
    const absolute = { query: { kind: 'EventsQuery', select: ['count()'], after: '2019-01-01', before: '2021-01-01' } }
    await postQuery(t, absolute)
    expect((await postQuery(t, absolute)).json().is_cached).toBe(true)
  })
})

/** The first row of a query log answer, by column. */
function logRow(body: { columns: string[]; results: unknown[][] }): Record<string, any> {
  return Object.fromEntries(body.columns.map((c, i) => [c, body.results[0][i]]))
}

describe('query log', () => {
  it('records every query and serves it for 24 hours', async () => {
    const res = await postQuery(
      t,
      hogql('select event from events limit 2', { client_query_id: 'log-me-1', name: 'log test' }),
    )
    expect(res.statusCode).toBe(200)
    const log = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${t.creds.project_id}/query/log-me-1/log/`,
      headers: t.auth,
    })
    expect(log.statusCode).toBe(200)
    expect(log.json().results).toHaveLength(1)
    const row = logRow(log.json())
    expect(row).toMatchObject({
      query_id: 'log-me-1',
      hogql_name: 'log test',
      kind: 'HogQLQuery',
      status: 'QueryFinish',
      result_rows: 2,
      exception: '',
      query: 'select event from events limit 2',
    })
    expect(row.read_rows).toBeGreaterThan(0)
    expect(row.query_duration_ms).toBeGreaterThanOrEqual(0)

    const otherProject = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${other.project.id}/query/log-me-1/log/`,
      headers: other.auth,
    })
    expect(otherProject.json().results).toEqual([])

    now = new Date(now.getTime() + 25 * HOUR)
    const expired = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${t.creds.project_id}/query/log-me-1/log/`,
      headers: t.auth,
    })
    expect(expired.json().results).toEqual([])
  })

  it('records failures with their error', async () => {
    await postQuery(t, hogql('select hamburger()', { client_query_id: 'log-fail-1' }))
    const log = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${t.creds.project_id}/query/log-fail-1/log/`,
      headers: t.auth,
    })
    const row = logRow(log.json())
    expect(row.status).toBe('ExceptionWhileProcessing')
    expect(row.exception).toContain('hamburger')
  })
})

describe('helper endpoints', () => {
  it('upgrades nested nodes without running them', async () => {
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/query/upgrade/`,
      headers: t.auth,
      payload: { query: { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ event: '$pageview' }] } } },
    })
    expect(res.statusCode).toBe(200)
    expect(res.json().query.source).toMatchObject({ kind: 'TrendsQuery', version: 5, series: [{ kind: 'EventsNode' }] })
  })

  it('confirms async auth and answers draft_sql', async () => {
    const auth = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/query/check_auth_for_async/`,
      headers: t.auth,
    })
    expect(auth.statusCode).toBe(200)
    expect(auth.json()).toEqual({ user: 'ok' })
    const draft = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${t.creds.project_id}/query/draft_sql/?prompt=count`,
      headers: t.auth,
    })
    expect(draft.statusCode).toBe(200)
  })
})

describe('placeholder values in a request', () => {
  it('never lets a syntax tree in `values` or `variables` reach the SQL (no cross-project read)', async () => {
    await insertEvents(t, [
      { team_id: t.creds.project_id, event: 'secret-of-the-demo-project', properties: { pw: 'hunter2' } },
    ])
    const smuggled = {
      kind: 'Select',
      select: [{ kind: 'Constant', value: 1 }],
      from: { kind: 'JoinExpr', table: { kind: 'Field', chain: ['events'] } },
      arrayJoinOp: 'ARRAY JOIN [1] AS z) UNION ALL SELECT toString(team_id)||event||properties FROM events --',
      arrayJoinList: [{ kind: 'Alias', alias: 'q', expr: { kind: 'Array', exprs: [] } }],
    }
    const asOther = { projectId: other.project.id, auth: other.auth }
    const viaValues = await postQuery(
      t,
      { query: { kind: 'HogQLQuery', query: 'select {x}', values: { x: smuggled } } },
      asOther,
    )
    expect(viaValues.statusCode).toBe(400)
    expect(viaValues.body).not.toContain('hunter2')
    expect(viaValues.json()).toMatchObject({ type: 'validation_error' })
    const viaVariables = await postQuery(
      t,
      {
        query: {
          kind: 'HogQLQuery',
          query: 'select {variables.a}',
          variables: { a: { code_name: 'a', value: smuggled } },
        },
      },
      asOther,
    )
    expect(viaVariables.statusCode).toBe(400)
    expect(viaVariables.body).not.toContain('hunter2')
  })
})
