/**
 * Saved endpoints, after PostHog's products/endpoints/backend/test (test_endpoint.py, test_endpoint_execution.py,
 * test_endpoint_materialization.py): CRUD and the name rule, versions made only by query changes, runs with
 * variables and versions, materialized runs from a table in the event store refreshed on schedule, a failing sync,
 * teardown on delete, every error text, scopes, and both URL prefixes.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createKey, createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { captureBatch, ev } from '../queries/insights/capture.js'

let t: TestApp
let now = new Date('2024-01-10T12:00:00Z')
let other: Awaited<ReturnType<typeof createTenant>>

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'
const api = (
  method: Method,
  path: string,
  payload?: unknown,
  headers: Record<string, string> = t.auth,
  prefix = `/api/projects/${t.creds.project_id}`,
) =>
  t.burrow.app.inject({
    method,
    url: `${prefix}/endpoints/${path}`,
    headers,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  })

const hogql = (query: string, variables?: Record<string, unknown>) => ({
  kind: 'HogQLQuery',
  query,
  ...(variables ? { variables } : {}),
})
const eventVariable = (value: string) => ({
  'var-1': { variableId: 'var-1', code_name: 'event_name', value },
})

async function create(body: Record<string, unknown>) {
  const res = await api('POST', '', body)
  expect(res.statusCode, res.body).toBe(201)
  return res.json()
}

function expectError(res: { statusCode: number; json(): any }, status: number, detail: string, attr?: string | null) {
  expect(res.statusCode).toBe(status)
  const body = res.json()
  expect(body.detail).toBe(detail)
  if (attr !== undefined) expect(body.attr).toBe(attr)
}

async function tableExists(name: string) {
  const result = await t.burrow.eventStore.query<[number]>(
    'SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = {name:String}',
    { params: { name } },
  )
  return Number(result.rows[0][0]) > 0
}

async function waitForStatus(name: string, status: string) {
  await vi.waitFor(
    async () => {
      const res = await api('GET', `${name}/materialization_status/`)
      expect(res.json().status, res.body).toBe(status)
      return res.json()
    },
    { timeout: 20_000, interval: 200 },
  )
  return (await api('GET', `${name}/materialization_status/`)).json()
}

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  other = await createTenant(t)
  // 3 pageviews (2 Chrome, 1 Safari), 1 signup; another project has a pageview of its own
  await captureBatch(t, [
    ev('$pageview', 'anna', '2024-01-08T15:00:00Z', { $browser: 'Chrome' }),
    ev('$pageview', 'anna', '2024-01-09T15:00:00Z', { $browser: 'Chrome' }),
    ev('$pageview', 'bob', '2024-01-09T16:00:00Z', { $browser: 'Safari' }),
    ev('signup', 'bob', '2024-01-09T17:00:00Z'),
  ])
  await captureBatch(t, [ev('$pageview', 'eve', '2024-01-09T15:00:00Z')], other.project.api_token)
}, 60_000)

afterAll(async () => {
  await t?.close()
})

describe('create, read, list', () => {
  it('creates an endpoint with version 1 and PostHog fields', async () => {
    const body = await create({
      name: 'pageviews',
      description: 'All pageviews',
      query: hogql("SELECT count() FROM events WHERE event = '$pageview'"),
    })
    expect(body).toMatchObject({
      name: 'pageviews',
      description: 'All pageviews',
      is_active: true,
      current_version: 1,
      versions_count: 1,
      is_materialized: false,
      cache_age_seconds: null,
      derived_from_insight: null,
      endpoint_path: `/api/environments/${t.creds.project_id}/endpoints/pageviews/run`,
      materialization: { can_materialize: true, reason: null },
    })
    expect(body.query.kind).toBe('HogQLQuery')
    expect(body.created_by.email).toBe(t.creds.email)
    const got = await api('GET', 'pageviews/')
    expect(got.statusCode).toBe(200)
    expect(got.json().id).toBe(body.id)
  })

  it('refuses bad names, duplicates, a missing query, invalid HogQL and a cache age out of range', async () => {
    const query = hogql('SELECT 1')
    const badName =
      'Endpoint name must start with a letter, contain only alphanumeric characters, hyphens, or underscores, and ' +
      'be between 1 and 128 characters long.'
    expectError(await api('POST', '', { name: '1abc', query }), 400, badName, 'name')
    expectError(await api('POST', '', { name: 'has space', query }), 400, badName, 'name')
    expectError(await api('POST', '', { name: `a${'b'.repeat(128)}`, query }), 400, badName, 'name')
    expectError(
      await api('POST', '', { name: 'pageviews', query }),
      400,
      'An endpoint with this name already exists for this team.',
      'name',
    )
    expectError(await api('POST', '', { name: 'noquery' }), 400, 'Must specify query', 'query')
    const invalid = await api('POST', '', { name: 'broken', query: hogql('SELEC 1 FROM') })
    expect(invalid.statusCode).toBe(400)
    expect(invalid.json().attr).toBe('query')
    expect(invalid.json().detail).toMatch(/^Invalid HogQL query: /)
    expectError(
      await api('POST', '', { name: 'young', query, cache_age_seconds: 299 }),
      400,
      'Cache age must be between 300 and 86400 seconds.',
      'cache_age_seconds',
    )
    expectError(
      await api('POST', '', { name: 'mat', query: { kind: 'EventsQuery', select: ['*'] }, is_materialized: true }),
      400,
      "Query type 'EventsQuery' cannot be materialized. Supported types: HogQLQuery, TrendsQuery, FunnelsQuery, " +
        'LifecycleQuery, RetentionQuery, PathsQuery, StickinessQuery',
      'is_materialized',
    )
    const wrongType = await api('POST', '', { name: 5, query })
    expect(wrongType.statusCode).toBe(400)
    expect(wrongType.json().attr).toBe('name')
  })

  it('refuses materialization rules that PostHog refuses', async () => {
    const query = hogql('SELECT 1')
    expectError(
      await api('POST', '', { name: 'off-mat', query, is_active: false, is_materialized: true }),
      400,
      'Cannot enable materialization on inactive endpoint.',
      'is_materialized',
    )
    expectError(
      await api('POST', '', { name: 'freq', query, sync_frequency: 'hourly' }),
      400,
      '"hourly" is not a valid choice.',
      'sync_frequency',
    )
    expectError(
      await api('POST', '', {
        name: 'two-vars',
        query: hogql('SELECT count() FROM events WHERE event = {variables.a} AND distinct_id = {variables.b}'),
        is_materialized: true,
      }),
      400,
      'Variables not supported: only one variable can be materialized.',
      'is_materialized',
    )
    expectError(
      await api('POST', '', {
        name: 'two-breakdowns',
        query: {
          kind: 'TrendsQuery',
          series: [{ kind: 'EventsNode', event: '$pageview' }],
          breakdownFilter: { breakdowns: [{ property: '$browser' }, { property: '$os' }] },
        },
        is_materialized: true,
      }),
      400,
      'Multiple breakdowns not supported for materialization',
      'is_materialized',
    )
    await create({ name: 'sleeping', query, is_active: false })
    expectError(
      await api('PATCH', 'sleeping/', { sync_frequency: '1hour' }),
      400,
      'Cannot set sync_frequency on inactive endpoint.',
      'sync_frequency',
    )
    expect((await api('DELETE', 'sleeping/')).statusCode).toBe(204)
  })

  it('lists with the is_active and created_by filters', async () => {
    await create({ name: 'inactive-one', query: hogql('SELECT 1'), is_active: false })
    const all = (await api('GET', '')).json()
    expect(all.results.map((e: { name: string }) => e.name).sort()).toEqual(['inactive-one', 'pageviews'])
    const active = (await api('GET', '?is_active=true')).json()
    expect(active.results.map((e: { name: string }) => e.name)).toEqual(['pageviews'])
    const userId = all.results[0].created_by.id
    expect((await api('GET', `?created_by=${userId}`)).json().count).toBe(2)
    expect((await api('GET', `?created_by=${userId + 1000}`)).json().count).toBe(0)
  })

  it('answers 404 for unknown names and for another project, and keeps projects apart', async () => {
    expect((await api('GET', 'nope/')).statusCode).toBe(404)
    expect(
      (await api('GET', 'pageviews/', undefined, other.auth, `/api/projects/${other.project.id}`)).statusCode,
    ).toBe(404)
    const foreign = await api('GET', 'pageviews/', undefined, t.auth, `/api/projects/${other.project.id}`)
    expect(foreign.statusCode).toBe(404)
    // the other project may use the same name
    const res = await api(
      'POST',
      '',
      { name: 'pageviews', query: hogql('SELECT 1') },
      other.auth,
      `/api/projects/${other.project.id}`,
    )
    expect(res.statusCode).toBe(201)
  })
})

describe('versions and runs', () => {
  it('runs the latest version, makes a version only when the query changes, and runs version 1', async () => {
    const run1 = await api('POST', 'pageviews/run/', {})
    expect(run1.statusCode, run1.body).toBe(200)
    const body1 = run1.json()
    expect(Object.keys(body1)[0]).toBe('results')
    expect(body1.results).toEqual([[3]])
    expect(body1.endpoint_version).toBe(1)
    expect(body1.hogql).toBeUndefined()
    expect(body1.timings).toBeUndefined()

    const described = await api('PATCH', 'pageviews/', { description: 'Only pageviews', cache_age_seconds: 600 })
    expect(described.statusCode, described.body).toBe(200)
    expect(described.json()).toMatchObject({ current_version: 1, versions_count: 1, description: 'Only pageviews' })
    // same query, keys in another order: no version either
    const same = await api('PATCH', 'pageviews/', {
      query: { query: "SELECT count() FROM events WHERE event = '$pageview'", kind: 'HogQLQuery' },
    })
    expect(same.json().current_version).toBe(1)

    const changed = await api('PATCH', 'pageviews/', { query: hogql('SELECT count() FROM events') })
    expect(changed.json()).toMatchObject({
      current_version: 2,
      versions_count: 2,
      description: 'Only pageviews',
      cache_age_seconds: 600,
    })

    const latest = (await api('GET', 'pageviews/run/')).json()
    expect(latest.results).toEqual([[4]])
    expect(latest.endpoint_version).toBe(2)
    const first = (await api('POST', 'pageviews/run/', { version: 1 })).json()
    expect(first.results).toEqual([[3]])
    expect(first.endpoint_version).toBe(1)
    expect((await api('GET', 'pageviews/run/?version=1')).json().results).toEqual([[3]])

    const versions = (await api('GET', 'pageviews/versions/')).json()
    expect(versions.map((v: { version: number }) => v.version)).toEqual([2, 1])
    const v1 = (await api('GET', 'pageviews/versions/1/')).json()
    expect(v1.query.query).toBe("SELECT count() FROM events WHERE event = '$pageview'")
    expect((await api('GET', 'pageviews/versions/9/')).statusCode).toBe(404)
    const atVersion = (await api('GET', 'pageviews/?version=1')).json()
    expect(atVersion).toMatchObject({ version: 1, current_version: 2, endpoint_is_active: true })

    // null clears the cache age (it was once read as 0 by the body's type coercion and refused)
    const cleared = await api('PATCH', 'pageviews/', { cache_age_seconds: null })
    expect(cleared.statusCode, cleared.body).toBe(200)
    expect(cleared.json().cache_age_seconds).toBeNull()
    expect((await api('GET', 'pageviews/')).json().cache_age_seconds).toBeNull()
  })

  it('serves cached results for cache_age_seconds, then calculates again', async () => {
    await create({
      name: 'cached',
      query: hogql("SELECT count() FROM events WHERE event = 'signup'"),
      cache_age_seconds: 600,
    })
    const first = (await api('POST', 'cached/run/', {})).json()
    expect(first).toMatchObject({ results: [[1]], is_cached: false })
    const second = (await api('POST', 'cached/run/', {})).json()
    expect(second).toMatchObject({ results: [[1]], is_cached: true })
    // force skips the cache
    expect((await api('POST', 'cached/run/', { refresh: 'force' })).json().is_cached).toBe(false)
    const saved = now
    now = new Date(now.getTime() + 601_000)
    try {
      expect((await api('POST', 'cached/run/', {})).json().is_cached).toBe(false)
    } finally {
      now = saved
    }
  })

  it('answers 202 with the query status while a run is still going', async () => {
    const res = await api('POST', 'cached/run/', { refresh: 'force_async', client_query_id: 'endpoint-async-1' })
    expect(res.statusCode, res.body).toBe(202)
    expect(res.json().query_status).toMatchObject({ id: 'endpoint-async-1', complete: false })
    expect(res.json().endpoint_version).toBe(1)
  })

  it('refuses unknown and inactive versions with PostHog bodies', async () => {
    const unknown = await api('POST', 'pageviews/run/', { version: 7 })
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json()).toMatchObject({
      error: "Version 7 not found for endpoint 'pageviews'",
      current_version: 2,
      detail: "Version 7 not found for endpoint 'pageviews'",
    })
    const bad = await api('GET', 'pageviews/run/?version=abc')
    expect(bad.statusCode).toBe(400)
    expect(bad.json().error).toBe('Invalid version parameter: abc')
    const off = await api('PATCH', 'pageviews/?version=1', { is_active: false })
    expect(off.statusCode, off.body).toBe(200)
    expect(off.json()).toMatchObject({ version: 1, is_active: false, endpoint_is_active: true })
    const inactive = await api('POST', 'pageviews/run/', { version: 1 })
    expect(inactive.statusCode).toBe(400)
    expect(inactive.json().detail).toBe('Version 1 is inactive and cannot be executed.')
    // the version may also be named in the body
    const on = await api('PATCH', 'pageviews/', { version: 1, is_active: true })
    expect(on.json()).toMatchObject({ version: 1, is_active: true })
    expect((await api('POST', 'pageviews/run/', { version: 1 })).statusCode).toBe(200)
    const queryOnVersion = await api('PATCH', 'pageviews/?version=1', { query: hogql('SELECT 2') })
    expectError(
      queryOnVersion,
      400,
      'Cannot change query when targeting a specific version. Query changes create a new version.',
      'query',
    )
  })

  it('refuses query_override, direct refresh without materialization, offset without limit and inactive endpoints', async () => {
    expectError(
      await api('POST', 'pageviews/run/', { query_override: { kind: 'HogQLQuery', query: 'SELECT 1' } }),
      400,
      'query_override is not allowed. Use variables instead.',
      'query_override',
    )
    expectError(
      await api('POST', 'pageviews/run/', { refresh: 'direct' }),
      400,
      "'direct' refresh mode is only valid for materialized endpoints. Use 'cache' or 'force' instead, or enable " +
        'materialization on this endpoint.',
      'refresh',
    )
    expectError(await api('POST', 'pageviews/run/', { offset: 5 }), 400, 'offset requires limit to be set', 'offset')
    expectError(
      await api('POST', 'pageviews/run/', { refresh: 'sometimes' }),
      400,
      '"sometimes" is not a valid choice.',
      'refresh',
    )
    expectError(
      await api('POST', 'pageviews/run/', { filters_override: { date_from: '-7d' } }),
      400,
      'filters_override is not supported for HogQL endpoints. Use variables instead.',
      'filters_override',
    )
    expect((await api('POST', 'inactive-one/run/', {})).statusCode).toBe(404)
    expect((await api('POST', 'nope/run/', {})).statusCode).toBe(404)
  })

  it('runs HogQL variables by code name and refuses unknown ones', async () => {
    await create({
      name: 'by-event',
      query: hogql('SELECT count() FROM events WHERE event = {variables.event_name}', eventVariable('$pageview')),
    })
    expect((await api('POST', 'by-event/run/', {})).json().results).toEqual([[3]])
    expect((await api('POST', 'by-event/run/', { variables: { event_name: 'signup' } })).json().results).toEqual([[1]])
    const viaGet = await api('GET', 'by-event/run/?variables[event_name]=signup')
    expect(viaGet.json().results).toEqual([[1]])
    expectError(
      await api('POST', 'by-event/run/', { variables: { other: 1 } }),
      400,
      "Variable 'other' not found in query",
      'variables',
    )
    const spec = (await api('GET', 'by-event/openapi.json')).json()
    expect(spec.openapi).toBe('3.0.3')
    const path = `/api/environments/${t.creds.project_id}/endpoints/by-event/run/`
    expect(
      spec.paths[path].post.requestBody.content['application/json'].schema.properties.variables.properties,
    ).toEqual({
      event_name: { type: 'string', description: 'HogQL variable {variables.event_name}' },
    })
    expect(spec.paths[path].get.parameters.map((p: { name: string }) => p.name)).toContain('variables[event_name]')
  })

  it('runs insight endpoints with a breakdown variable and date variables', async () => {
    await create({
      name: 'browsers',
      query: {
        kind: 'TrendsQuery',
        series: [{ kind: 'EventsNode', event: '$pageview', math: 'total' }],
        dateRange: { date_from: '2024-01-08', date_to: '2024-01-09' },
        interval: 'day',
        breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' },
      },
    })
    const all = (await api('POST', 'browsers/run/', {})).json()
    const totals = Object.fromEntries(all.results.map((r: any) => [r.breakdown_value, r.count]))
    expect(totals).toEqual({ Chrome: 2, Safari: 1 })
    const chrome = (await api('POST', 'browsers/run/', { variables: { $browser: 'Chrome' } })).json()
    expect(chrome.results.map((r: any) => [r.breakdown_value, r.count])).toEqual([['Chrome', 2]])
    const oneDay = (
      await api('POST', 'browsers/run/', { variables: { date_from: '2024-01-09', date_to: '2024-01-09' } })
    ).json()
    expect(Object.fromEntries(oneDay.results.map((r: any) => [r.breakdown_value, r.count]))).toEqual({
      Chrome: 1,
      Safari: 1,
    })
    expectError(
      await api('POST', 'browsers/run/', { variables: { $os: 'Mac' } }),
      400,
      'Unknown variable(s): $os',
      'variables',
    )
  })

  it('records personal-key runs for last_execution_times, with the query_status wrapper', async () => {
    const res = await api(
      'POST',
      'last_execution_times/',
      { names: ['pageviews', 'by-event', 'inactive-one'] },
      t.auth,
      `/api/environments/${t.creds.project_id}`,
    )
    expect(res.statusCode, res.body).toBe(200)
    const status = res.json().query_status
    expect(status).toMatchObject({
      id: '',
      team_id: t.creds.project_id,
      complete: true,
      query_async: true,
      error: false,
    })
    expect(status.results).toEqual([
      ['by-event', now.toISOString()],
      ['pageviews', now.toISOString()],
    ])
    const empty = (await api('POST', 'last_execution_times/', { names: [] })).json()
    expect(empty.query_status.results).toBeNull()
    expectError(
      await api('POST', 'last_execution_times/', { names: ['bad name'] }),
      400,
      'Invalid endpoint name: bad name',
      'names',
    )
  })

  it('logs create, update and delete in the activity log', async () => {
    await create({ name: 'short-lived', query: hogql('SELECT 1') })
    await api('PATCH', 'short-lived/', { description: 'changed' })
    expect((await api('DELETE', 'short-lived/')).statusCode).toBe(204)
    expect((await api('GET', 'short-lived/')).statusCode).toBe(404)
    const rows = await t.burrow.meta.db
      .selectFrom('activity_log')
      .select(['activity', 'scope'])
      .where('scope', '=', 'Endpoint')
      .orderBy('id')
      .execute()
    const activities = rows.map((r) => r.activity)
    expect(activities).toContain('created')
    expect(activities).toContain('updated')
    expect(activities).toContain('deleted')
  })
})

describe('materialization', () => {
  it('materializes with the variable as a column, serves from the table, and refreshes on schedule', async () => {
    const created = await create({
      name: 'mat-events',
      query: hogql('SELECT count() AS n FROM events WHERE event = {variables.event_name}', eventVariable('$pageview')),
      is_materialized: true,
      sync_frequency: '1hour',
    })
    expect(created.is_materialized).toBe(true)
    const status = await waitForStatus('mat-events', 'Completed')
    expect(status).toMatchObject({ can_materialize: true, error: '', sync_frequency: '1hour' })
    expect(status.last_materialized_at).toBe(now.toISOString())

    expectError(
      await api('POST', 'mat-events/run/', {}),
      400,
      "Required variable 'event_name' not provided",
      'variables',
    )
    const run = (await api('POST', 'mat-events/run/', { variables: { event_name: '$pageview' } })).json()
    expect(run.endpoint_materialized).toBe(true)
    expect(run.endpoint_materialized_at).toBe(now.toISOString())
    // the variable column comes last
    expect(run.columns).toEqual(['n', 'event_name'])
    expect(run.results).toEqual([[3, '$pageview']])
    expect((await api('POST', 'mat-events/run/', { variables: { event_name: 'signup' } })).json().results).toEqual([
      [1, 'signup'],
    ])
    // direct skips the table
    const direct = (
      await api('POST', 'mat-events/run/', { variables: { event_name: 'signup' }, refresh: 'direct' })
    ).json()
    expect(direct.endpoint_materialized).toBeUndefined()
    expect(direct.results).toEqual([[1]])

    // new events show after the next sync, an hour later
    await captureBatch(t, [ev('signup', 'carol', '2024-01-10T11:00:00Z'), ev('signup', 'dan', '2024-01-10T11:30:00Z')])
    expect((await api('POST', 'mat-events/run/', { variables: { event_name: 'signup' } })).json().results).toEqual([
      [1, 'signup'],
    ])
    now = new Date('2024-01-10T13:00:01Z')
    await vi.waitFor(
      async () => {
        const res = (await api('GET', 'mat-events/materialization_status/')).json()
        expect(res.last_materialized_at).toBe(now.toISOString())
      },
      { timeout: 20_000, interval: 200 },
    )
    const after = (await api('POST', 'mat-events/run/', { variables: { event_name: 'signup' } })).json()
    expect(after.endpoint_materialized).toBe(true)
    expect(after.results).toEqual([[3, 'signup']])
  })

  it('moves the materialization to a new version and drops the table on delete', async () => {
    const before = await t.burrow.meta.db
      .withTables<{ endpoint_materializations: { table_name: string; endpoint_id: string } }>()
      .selectFrom('endpoint_materializations')
      .select('table_name')
      .execute()
    expect(before).toHaveLength(1)
    const firstTable = before[0].table_name
    expect(await tableExists(firstTable)).toBe(true)

    const changed = await api('PATCH', 'mat-events/', {
      query: hogql('SELECT count() AS c FROM events WHERE event = {variables.event_name}', eventVariable('$pageview')),
    })
    expect(changed.json()).toMatchObject({ current_version: 2, is_materialized: true })
    expect(changed.json().materialization.sync_frequency).toBe('1hour')
    expect(await tableExists(firstTable)).toBe(false)
    await waitForStatus('mat-events', 'Completed')
    const run = (await api('POST', 'mat-events/run/', { variables: { event_name: '$pageview' } })).json()
    expect(run).toMatchObject({ endpoint_materialized: true, endpoint_version: 2, columns: ['c', 'event_name'] })

    const tables = await t.burrow.meta.db
      .withTables<{ endpoint_materializations: { table_name: string } }>()
      .selectFrom('endpoint_materializations')
      .select('table_name')
      .execute()
    expect(tables).toHaveLength(1)
    expect(await tableExists(tables[0].table_name)).toBe(true)
    expect((await api('DELETE', 'mat-events/')).statusCode).toBe(204)
    expect(await tableExists(tables[0].table_name)).toBe(false)
  })

  it('reports a failing sync as Failed with its error and serves the live query meanwhile', async () => {
    await create({
      name: 'mat-broken',
      // division by zero fails in the engine, at every sync and in every live run
      query: hogql(
        'SELECT intDiv(count(), 0) AS b FROM events WHERE event = {variables.event_name}',
        eventVariable('$pageview'),
      ),
      is_materialized: true,
      sync_frequency: '5min',
    })
    const status = await waitForStatus('mat-broken', 'Failed')
    expect(status.error).not.toBe('')
    expect(status.last_materialized_at).toBeNull()
    expect(status.error).toMatch(/ivision by zero/)
    // never served silently from a stale or missing table: the live query runs, and fails the same way
    const run = await api('POST', 'mat-broken/run/', { variables: { event_name: 'signup' } })
    expect(run.statusCode).toBe(400)
    expect(run.json().detail).toMatch(/^Query execution failed: /)
    // retried with backoff: the next attempt is 30 s after the failure
    expect(new Date(status.next_run_at).getTime() - new Date(status.last_run_at).getTime()).toBe(30_000)
  })

  it('materializes an insight and serves one breakdown value from the table', async () => {
    const res = await api('PATCH', 'browsers/', { is_materialized: true, sync_frequency: '24hour' })
    expect(res.statusCode, res.body).toBe(200)
    await waitForStatus('browsers', 'Completed')
    expectError(await api('POST', 'browsers/run/', {}), 400, "Required variable '$browser' not provided", 'variables')
    const safari = (await api('POST', 'browsers/run/', { variables: { $browser: 'Safari' } })).json()
    expect(safari.endpoint_materialized).toBe(true)
    expect(safari.results.map((r: any) => [r.breakdown_value, r.count])).toEqual([['Safari', 1]])
    const off = await api('PATCH', 'browsers/', { is_materialized: false })
    expect(off.json().is_materialized).toBe(false)
    expectError(
      await api('PATCH', 'browsers/', { is_materialized: false, sync_frequency: '1hour' }),
      400,
      'Cannot set sync_frequency when disabling materialization.',
      'sync_frequency',
    )
  })
})

describe('scopes and prefixes', () => {
  it('lets endpoint:read list, read and run, and needs endpoint:write to change', async () => {
    const read = await createKey(t, ['endpoint:read'])
    expect((await api('GET', '', undefined, read)).statusCode).toBe(200)
    expect((await api('GET', 'by-event/', undefined, read)).statusCode).toBe(200)
    expect((await api('POST', 'by-event/run/', {}, read)).statusCode).toBe(200)
    expect((await api('GET', 'by-event/versions/', undefined, read)).statusCode).toBe(200)
    expect((await api('GET', 'by-event/versions/1/', undefined, read)).statusCode).toBe(200)
    expect((await api('GET', 'by-event/materialization_status/', undefined, read)).statusCode).toBe(200)
    expect((await api('GET', 'by-event/openapi.json', undefined, read)).statusCode).toBe(200)
    expect((await api('POST', 'last_execution_times/', { names: [] }, read)).statusCode).toBe(200)
    const refused = await api('POST', '', { name: 'x', query: hogql('SELECT 1') }, read)
    expect(refused.statusCode).toBe(403)
    expect(refused.json().detail).toBe("API key missing required scope 'endpoint:write'")
    expect((await api('PATCH', 'by-event/', { description: 'x' }, read)).statusCode).toBe(403)
    expect((await api('DELETE', 'by-event/', undefined, read)).statusCode).toBe(403)
    const none = await createKey(t, ['query:read'])
    expect((await api('GET', '', undefined, none)).statusCode).toBe(403)
    expect((await api('POST', 'by-event/run/', {}, none)).statusCode).toBe(403)
    expect((await api('GET', '', undefined, {})).statusCode).toBe(401)
  })

  it('serves the same endpoints under /api/environments/', async () => {
    const env = `/api/environments/${t.creds.project_id}`
    expect((await api('GET', 'by-event/', undefined, t.auth, env)).json().name).toBe('by-event')
    const created = await api('POST', '', { name: 'env-made', query: hogql('SELECT 2') }, t.auth, env)
    expect(created.statusCode).toBe(201)
    expect((await api('POST', 'env-made/run/', {}, t.auth, env)).json().results).toEqual([[2]])
    expect((await api('GET', 'env-made/')).statusCode).toBe(200)
  })
})
