/**
 * The HTTP-observable assertions of PostHog's query API tests (`posthog/api/test/test_query.py`, the events and
 * HogQL query-runner tests), each test named after the PostHog test it mirrors.
 */
import crypto from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { eventRow } from '../helpers/events.js'
import { engineTime, hogql, postQuery } from './fixtures.js'

let t: TestApp
/** The app's clock: fixed at a whole second, as PostHog's tests freeze time. */
const now = new Date('2026-01-10T12:14:00.000Z')
let team: number

/** Inserts events with their columns (session id, element chain), as ingestion writes them. */
async function insert(
  rows: { event: string; distinct_id: string; at: string; properties?: object; session?: string; chain?: string }[],
) {
  const lines = rows.map((r) =>
    JSON.stringify(
      eventRow({
        uuid: crypto.randomUUID(),
        team_id: team,
        event: r.event,
        distinct_id: r.distinct_id,
        properties: JSON.stringify(r.properties ?? {}),
        timestamp: engineTime(new Date(r.at)),
        created_at: engineTime(new Date(r.at)),
        $session_id: r.session ?? '',
        elements_chain: r.chain ?? '',
      }),
    ),
  )
  await t.burrow.events.insertJsonEachRow('events', lines.join('\n'))
}

const get = (url: string) => t.burrow.app.inject({ method: 'GET', url, headers: t.auth })
const del = (url: string) => t.burrow.app.inject({ method: 'DELETE', url, headers: t.auth })
const queryUrl = (id: string) => `/api/environments/${team}/query/${id}/`

/** Polls an async query until it completes. */
async function settled(id: string) {
  for (let tries = 0; tries < 400; tries++) {
    const res = await get(queryUrl(id))
    if (res.json().query_status?.complete) return res
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`query ${id} did not complete`)
}

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  team = t.creds.project_id
  await insert([
    { event: '$autocapture', distinct_id: 'd1', at: '2026-01-10T12:00:00Z', chain: 'div:nth-child="1"nth-of-type="1"' },
    {
      event: '$autocapture',
      distinct_id: 'd1',
      at: '2026-01-10T12:01:00Z',
      chain: 'button.btn:nth-child="1"nth-of-type="1"text="Go"',
    },
    {
      event: '$pageview',
      distinct_id: 'd2',
      at: '2026-01-10T12:02:00Z',
      session: 's-a',
      properties: { $current_url: 'https://a.example/x', $session_id: 's-a' },
    },
    {
      event: '$pageview',
      distinct_id: 'd3',
      at: '2026-01-10T12:03:00Z',
      session: 's-b',
      properties: { $current_url: 'https://b.example/y', $session_id: 's-b' },
    },
  ])
}, 60_000)
afterAll(() => t.close())

describe('property filters (posthog/hogql/property.py, test_property.py)', () => {
  it('test_property_to_expr_event_list: $elements_chain filters read the elements_chain column', async () => {
    const run = async (operator: string) =>
      (
        await postQuery(t, {
          query: {
            kind: 'EventsQuery',
            select: ['event', 'timestamp'],
            after: '2026-01-01',
            orderBy: ['timestamp'],
            properties: [{ type: 'event', key: '$elements_chain', value: 'button', operator }],
          },
        })
      ).json()
    const contains = await run('icontains')
    expect(contains.results.map((r: unknown[]) => r[1])).toEqual(['2026-01-10T12:01:00Z'])
    // "does not contain" keeps the div click and the two pageviews (empty chains), not every event
    const without = await run('not_icontains')
    expect(without.results.map((r: unknown[]) => r[1])).toEqual([
      '2026-01-10T12:00:00Z',
      '2026-01-10T12:02:00Z',
      '2026-01-10T12:03:00Z',
    ])
  })
})

describe('{filters} on the sessions table (posthog/hogql/filters.py, test_filters.py)', () => {
  const sessionsQuery = (filters: Record<string, unknown>) => ({
    query: {
      kind: 'HogQLQuery',
      query: 'select session_id from sessions where {filters} order by session_id',
      filters,
    },
  })

  it('test_replace_filters_session_properties: session filters use the sessions scope', async () => {
    const res = await postQuery(
      t,
      sessionsQuery({
        properties: [{ type: 'session', key: '$entry_current_url', value: 'https://a.example/x', operator: 'exact' }],
      }),
    )
    expect(res.statusCode).toBe(200)
    expect(res.json().results).toEqual([['s-a']])
  })

  it('test_replace_filters_date_range_on_sessions: the date range bounds the session start', async () => {
    const res = await postQuery(
      t,
      sessionsQuery({ dateRange: { date_from: '2026-01-10T12:02:30Z', date_to: '2026-01-11' } }),
    )
    expect(res.json().results).toEqual([['s-b']])
  })

  it('refuses other filter types on a SELECT that reads only sessions, with PostHog’s message', async () => {
    const res = await postQuery(
      t,
      sessionsQuery({ properties: [{ type: 'event', key: '$browser', value: 'Chrome', operator: 'exact' }] }),
    )
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toBe(
      'Can only use session properties in a filter when selecting from only the sessions table.',
    )
  })
})

describe('TestQuery (posthog/api/test/test_query.py)', () => {
  it('test_safe_clickhouse_error_passed_through: the types and the function, never values or SQL', async () => {
    const res = await postQuery(t, { query: { kind: 'EventsQuery', select: ["timestamp + 'string'"] } })
    expect(res.statusCode).toBe(400)
    const body = res.json()
    expect(body).toMatchObject({ type: 'validation_error', code: 'illegal_type_of_argument', attr: null })
    expect(body.detail).toContain("Illegal types DateTime64(6, 'UTC') and String of arguments of function plus")
    expect(body.detail).not.toMatch(/SELECT|In scope|'string'/)
  })

  it('test_query_not_supported', async () => {
    const res = await postQuery(t, { query: { kind: 'SavedInsightNode', shortId: '123' } }, { prefix: 'environments' })
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toBe('Unsupported query kind: SavedInsightNode')
  })

  it('test_invalid_query_kind', async () => {
    const res = await postQuery(t, { query: { kind: 'Tomato Soup' } }, { prefix: 'environments' })
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe('parse_error')
    expect(res.json().detail).toContain('1 validation error for QueryRequest')
    expect(res.json().detail).toContain(
      "Input tag 'Tomato Soup' found using 'kind' does not match any of the expected tags",
    )
  })

  it('test_missing_query', async () => {
    expect((await postQuery(t, { query: {} })).statusCode).toBe(400)
  })

  it('test_missing_body', async () => {
    const res = await t.burrow.app.inject({ method: 'POST', url: `/api/environments/${team}/query/`, headers: t.auth })
    expect(res.statusCode).toBe(400)
  })

  it('test_query_limit_context_invalid_value', async () => {
    const res = await postQuery(t, hogql('select 1', { limit_context: 'export' }), { prefix: 'environments' })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'parse_error', attr: null })
    expect(res.json().detail).toContain('limit_context')
  })

  it('test_query_limit_context_posthog_ai: the one value the request schema allows', async () => {
    const res = await postQuery(t, hogql('select 1', { limit_context: 'posthog_ai' }), { prefix: 'environments' })
    expect(res.statusCode).toBe(200)
    expect(res.json().results).toEqual([[1]])
  })

  it('test_full_hogql_query_async: the status keys of current PostHog, pickup_time null until picked up', async () => {
    const res = await postQuery(t, hogql('select * from events', { refresh: 'force_async' }), {
      prefix: 'environments',
    })
    expect(res.statusCode).toBe(202)
    const status = res.json().query_status
    expect(status).toEqual({
      complete: false,
      pickup_time: null,
      end_time: null,
      error: false,
      error_message: null,
      error_code: null,
      bytes_read: null,
      budget_remaining_bytes: null,
      expiration_time: null,
      id: expect.any(String),
      query_async: true,
      results: null,
      start_time: '2026-01-10T12:14:00Z',
      task_id: expect.any(String),
      team_id: team,
      insight_id: null,
      dashboard_id: null,
      query_progress: null,
      labels: null,
      cache_key: null,
      query_scan: null,
    })
    const done = await settled(status.id)
    expect(done.statusCode).toBe(200)
    expect(done.json().query_status).toMatchObject({
      complete: true,
      error: false,
      pickup_time: '2026-01-10T12:14:00Z',
      end_time: '2026-01-10T12:14:00Z',
      expiration_time: '2026-01-10T12:24:00Z',
    })
    expect(done.json().query_status.bytes_read).toBeGreaterThan(0)
  })

  it('gives a failed async query its error code next to the message', async () => {
    const res = await postQuery(t, hogql('select nosuchfunction()', { refresh: 'force_async' }))
    const id = res.json().query_status.id
    const failed = await settled(id)
    expect(failed.statusCode).toBe(400)
    expect(failed.json().query_status).toMatchObject({
      complete: true,
      error: true,
      error_code: 'hogql_query_error',
      bytes_read: null,
    })
  })
})

describe('EventsQuery (posthog/api/test/test_query.py)', () => {
  it('test_select_event_person: the person as PostHog renders it, created_at without .000', async () => {
    const id = '0190a000-0000-7000-8000-00000000a0a0'
    const db = t.burrow.stores.persons.db
    await db
      .insertInto('persons')
      .values({
        id,
        team_id: team,
        properties: JSON.stringify({ name: 'Tom', email: 'tom@posthog.com' }),
        is_identified: 1,
        version: 0,
        created_at: '2026-01-10T12:00:00.000Z',
      })
      .execute()
    await db
      .insertInto('person_distinct_ids')
      .values({ team_id: team, distinct_id: 'd2', person_id: id, version: 0 })
      .execute()
    const res = await postQuery(t, {
      query: {
        kind: 'EventsQuery',
        select: ['event', 'person', 'person -- P'],
        where: ["event = '$pageview'"],
        orderBy: ['timestamp DESC'],
        after: '2026-01-01',
      },
    })
    expect(res.statusCode).toBe(200)
    const { results } = res.json()
    expect(results).toHaveLength(2)
    expect(results[0][1]).toEqual({ distinct_id: 'd3' })
    const expected = {
      uuid: id,
      properties: { name: 'Tom', email: 'tom@posthog.com' },
      distinct_id: 'd2',
      created_at: '2026-01-10T12:00:00Z',
    }
    expect(results[1][1]).toEqual(expected)
    expect(results[1][2]).toEqual(expected)
  })
})

describe('EventsQuery person_display_name (test_events_query_runner.py)', () => {
  const patchProject = (payload: object) =>
    t.burrow.app.inject({ method: 'PATCH', url: `/api/projects/${team}/`, headers: t.auth, payload })
  const names = async () => {
    const res = await postQuery(t, {
      query: {
        kind: 'EventsQuery',
        select: ['event', 'person_display_name -- Person'],
        where: ["event = 'shown'"],
        orderBy: ['timestamp ASC'],
        after: '2026-01-01',
        before: '2026-01-11',
      },
    })
    expect(res.statusCode, res.body).toBe(200)
    return res.json().results.map((row: [string, { display_name: string }]) => row[1].display_name)
  }

  beforeAll(async () => {
    const id = '0190a000-0000-7000-8000-00000000b0b0'
    const db = t.burrow.stores.persons.db
    await db
      .insertInto('persons')
      .values({
        id,
        team_id: team,
        properties: JSON.stringify({
          email: 'user@email.com',
          name: 'Test User',
          'Property With Spaces': 'Test User With Spaces',
        }),
        is_identified: 1,
        version: 0,
        created_at: '2026-01-09T00:00:00.000Z',
      })
      .execute()
    await db
      .insertInto('person_distinct_ids')
      .values([
        { team_id: team, distinct_id: 'id_email', person_id: id, version: 0 },
        { team_id: team, distinct_id: 'id_anon', person_id: id, version: 0 },
      ])
      .execute()
    await insert([
      { event: 'shown', distinct_id: 'id_email', at: '2026-01-10T11:00:00Z' },
      { event: 'shown', distinct_id: 'id_anon', at: '2026-01-10T11:01:00Z' },
      { event: 'shown', distinct_id: 'nobody', at: '2026-01-10T11:02:00Z' },
    ])
  })

  it('test_person_display_name_field: the default properties (email first)', async () => {
    await patchProject({ person_display_name_properties: null })
    expect(await names()).toEqual(['user@email.com', 'user@email.com', 'nobody'])
  })

  it('test_person_display_name_field_2: the project’s own properties', async () => {
    await patchProject({ person_display_name_properties: ['name'] })
    expect(await names()).toEqual(['Test User', 'Test User', 'nobody'])
  })

  it('test_person_display_name_field_fallback: the distinct id when none of them is set', async () => {
    await patchProject({ person_display_name_properties: ['nonexistent'] })
    expect(await names()).toEqual(['id_email', 'id_anon', 'nobody'])
  })

  it('test_person_display_name_field_with_spaces_in_property_name', async () => {
    await patchProject({ person_display_name_properties: ['Property With Spaces'] })
    expect(await names()).toEqual(['Test User With Spaces', 'Test User With Spaces', 'nobody'])
    await patchProject({ person_display_name_properties: null })
  })
})

describe('TestHogQLQueryRunner (test_hogql_query_runner.py)', () => {
  const withVariable = (query: string, code_name: string, value: unknown) => ({
    query: { kind: 'HogQLQuery', query, variables: { '7': { variableId: '7', code_name, value } } },
  })

  it('test_variables_in_hog_expression', async () => {
    const yes = await postQuery(t, withVariable("select {variables.foo ? 'exists' : 'does not'}", 'foo', true))
    expect(yes.statusCode, yes.body).toBe(200)
    expect(yes.json().results[0][0]).toBe('exists')
    const no = await postQuery(t, withVariable("select {variables.foo ? 'exists' : 'does not'}", 'foo', false))
    expect(no.json().results[0][0]).toBe('does not')
  })

  it('test_variables_in_hog_expression_sql', async () => {
    const query =
      "select count() from events where {variables.bar ? sql(event = '$autocapture') : sql(event = 'nothing')}"
    const autocaptures = await postQuery(t, withVariable(query, 'bar', true))
    expect(autocaptures.statusCode, autocaptures.body).toBe(200)
    expect(autocaptures.json().results[0][0]).toBe(2)
    expect((await postQuery(t, withVariable(query, 'bar', false))).json().results[0][0]).toBe(0)
    const compare = await postQuery(t, withVariable('select {variables.n > 2 and variables.n != 5}', 'n', 3))
    expect(compare.json().results[0][0]).toBe(true)
    expect((await postQuery(t, hogql('select {1 + 2}'))).json().results[0][0]).toBe(3)
  })

  it('refuses what a placeholder expression cannot hold', async () => {
    const res = await postQuery(t, withVariable('select {variables.foo ? now() : 1}', 'foo', true))
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toContain('Unsupported expression in a placeholder')
    const missing = await postQuery(t, hogql("select {variables.nope ? 'a' : 'b'}"))
    expect(missing.statusCode).toBe(400)
  })
})

describe('TestQueryLLMFormatting and the kind in the path (posthog/api/test/test_query.py)', () => {
  const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
    t.burrow.app.inject({ method: 'POST', url, headers: { ...t.auth, ...headers }, payload })
  const events =
    "select event, count() from events where event in ('$pageview', '$autocapture') group by event order by event"

  it('test_hogql_query_includes_formatted_results', async () => {
    const res = await post(`/api/environments/${team}/query/`, hogql(events), { 'x-posthog-client': 'mcp' })
    expect(res.statusCode).toBe(200)
    expect(res.json().formatted_results).toBe('event|count()\n$autocapture|2\n$pageview|2')
  })

  it('test_no_formatted_results_without_header', async () => {
    const res = await post(`/api/environments/${team}/query/`, hogql(events))
    expect(res.json().results).toBeDefined()
    expect(res.json()).not.toHaveProperty('formatted_results')
  })

  it('test_unsupported_query_type_omits_formatted_results', async () => {
    const res = await post(
      `/api/environments/${team}/query/`,
      { query: { kind: 'EventsQuery', select: ['event'] } },
      { 'x-posthog-client': 'mcp' },
    )
    expect(res.json().results).toBeDefined()
    expect(res.json()).not.toHaveProperty('formatted_results')
  })

  it('runs POST /query/{kind}/ when the body has that kind, refuses another', async () => {
    const ok = await post(`/api/environments/${team}/query/HogQLQuery/`, hogql('select 1'))
    expect(ok.statusCode).toBe(200)
    expect(ok.json().results).toEqual([[1]])
    const mismatch = await post(`/api/environments/${team}/query/EventsQuery/`, hogql('select 1'))
    expect(mismatch.statusCode).toBe(400)
    expect(mismatch.json().detail).toBe(
      'Query kind mismatch: path kind "EventsQuery" does not match body kind "HogQLQuery".',
    )
    // the fixed routes beside it keep working
    const upgraded = await post(`/api/environments/${team}/query/upgrade/`, {
      query: { kind: 'HogQLQuery', query: 'select 1' },
    })
    expect(upgraded.statusCode).toBe(200)
  })
})

describe('errors (posthog/api/test/test_query.py)', () => {
  it('test_hogql_error_is_enriched_with_metadata', async () => {
    const res = await postQuery(t, hogql('SELECT user_id FROM events LIMIT 1'), { prefix: 'environments' })
    expect(res.statusCode).toBe(400)
    const body = res.json()
    expect(body.type).toBe('validation_error')
    expect(body.detail).toContain('Tables referenced: events')
    const metadata = body.extra.hogql_metadata
    expect(metadata.isValid).toBe(false)
    expect(metadata.table_names).toEqual(['events'])
    expect(metadata.errors.length).toBeGreaterThan(0)
    const [first] = metadata.errors
    expect(first.message).toContain('user_id')
    expect(first.message).toContain('Did you mean')
    // `user_id` starts after `SELECT ` and is 7 characters long
    expect(first.start).toBe(7)
    expect(first.end).toBe(14)
  })

  it('suggests the closest field and names every table a failing query reads', async () => {
    const res = await postQuery(
      t,
      hogql('select evnt from events e join (select 1 as x from persons) p on 1 = 1 limit 1'),
    )
    expect(res.json().detail).toContain("Unable to resolve field: evnt. Did you mean 'event'?")
    expect(res.json().detail).toContain('Tables referenced: events, persons')
    expect(res.json().extra.hogql_metadata.table_names).toEqual(['events', 'persons'])
  })

  it('gives syntax errors the same metadata, without tables it cannot read', async () => {
    const res = await postQuery(t, hogql('select from where'))
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe('hogql_syntax_error')
    expect(res.json().extra.hogql_metadata).toMatchObject({ isValid: false, table_names: [] })
  })
})

describe('TestQueryRetrieve (posthog/api/test/test_query.py)', () => {
  it('test_destroy: answers 200 with PostHog’s message', async () => {
    const res = await postQuery(t, hogql('select 1', { refresh: 'force_async', client_query_id: 'destroy-1' }))
    expect(res.statusCode).toBe(202)
    await settled('destroy-1')
    const done = await del(queryUrl('destroy-1'))
    expect(done.statusCode).toBe(200)
    expect(done.json()).toEqual({ message: 'Query already complete' })
  })

  it('test_destroy with dequeue_only: leaves the engine alone and says so', async () => {
    await postQuery(t, hogql('select 2', { refresh: 'force_async', client_query_id: 'destroy-2' }))
    await settled('destroy-2')
    const res = await del(`${queryUrl('destroy-2')}?dequeue_only=true`)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ message: 'Only tried to dequeue, not cancelling query on clickhouse' })
  })

  it('test_with_invalid_query_id', async () => {
    expect((await get(queryUrl('invalid-query-id'))).statusCode).toBe(404)
    expect((await del(queryUrl('invalid-query-id'))).statusCode).toBe(404)
  })
})

describe('GET /query/{id}/log/ (posthog/api/query.py get_query_log)', () => {
  it('answers a HogQL response over the query log row', async () => {
    const ran = await postQuery(t, hogql('select 1 as one', { client_query_id: 'logged-1', name: 'one' }))
    expect(ran.statusCode).toBe(200)
    const res = await get(`${queryUrl('logged-1')}log/`)
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.columns).toContain('query_id')
    expect(body.types).toContainEqual(['query_id', 'String'])
    expect(body.results).toHaveLength(1)
    const row = Object.fromEntries(body.columns.map((c: string, i: number) => [c, body.results[0][i]]))
    expect(row).toMatchObject({
      query_id: 'logged-1',
      query: 'select 1 as one',
      hogql_name: 'one',
      status: 'QueryFinish',
      result_rows: 1,
      event_date: '2026-01-10',
      query_start_time: '2026-01-10T12:14:00Z',
      kind: 'HogQLQuery',
      exception: '',
    })
  })

  it('answers no rows for a query it has not logged', async () => {
    const res = await get(`${queryUrl('never-logged')}log/`)
    expect(res.statusCode).toBe(200)
    expect(res.json().results).toEqual([])
  })
})

describe('project settings (posthog/api/test/test_team.py)', () => {
  const patch = (url: string, payload: object) =>
    t.burrow.app.inject({ method: 'PATCH', url, headers: t.auth, payload })

  it('test_write_field_parity: person_display_name_properties is stored and read back on both prefixes', async () => {
    expect((await get(`/api/projects/${team}/`)).json().person_display_name_properties).toBeNull()
    const res = await patch(`/api/environments/${team}/`, { person_display_name_properties: ['email'] })
    expect(res.statusCode).toBe(200)
    expect(res.json().person_display_name_properties).toEqual(['email'])
    expect((await get(`/api/environments/${team}/`)).json().person_display_name_properties).toEqual(['email'])
    const viaProjects = await patch(`/api/projects/${team}/`, { person_display_name_properties: ['name', 'email'] })
    expect(viaProjects.json().person_display_name_properties).toEqual(['name', 'email'])
    expect((await get(`/api/projects/${team}/`)).json().person_display_name_properties).toEqual(['name', 'email'])
    // other settings leave it as it is; null puts PostHog's defaults back
    await patch(`/api/projects/${team}/`, { name: 'Renamed' })
    expect((await get(`/api/projects/${team}/`)).json().person_display_name_properties).toEqual(['name', 'email'])
    await patch(`/api/projects/${team}/`, { person_display_name_properties: null })
    expect((await get(`/api/projects/${team}/`)).json().person_display_name_properties).toBeNull()
  })

  it('refuses a person_display_name_properties that is not a list of names', async () => {
    for (const bad of [[''], [null], [{ name: 'email' }], { email: true }]) {
      const res = await patch(`/api/projects/${team}/`, { person_display_name_properties: bad })
      expect(res.statusCode, `${JSON.stringify(bad)}: ${res.body}`).toBe(400)
      expect(res.json()).toMatchObject({ type: 'validation_error' })
    }
  })
})
