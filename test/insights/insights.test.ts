/**
 * Saved insights API, after PostHog's posthog/api/test/test_insight.py: CRUD with PostHog's shapes, list filters,
 * the activity log, soft delete, and results through the query service with `?refresh=`.
 */
import type { Kysely } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { QueryLogTable } from '../../src/queries/query-log.js'
import { createKey, createMember, createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { ev } from '../queries/insights/capture.js'

let t: TestApp
let now = new Date('2024-01-10T12:00:00Z')
let other: Awaited<ReturnType<typeof createTenant>>

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'
const api = (method: Method, path: string, payload?: unknown, headers = t.auth, projectId = t.creds.project_id) =>
  t.burrow.app.inject({
    method,
    url: `/api/projects/${projectId}/${path}`,
    headers,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  })

async function capture(apiKey: string, batch: unknown[]) {
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: '/batch/',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ api_key: apiKey, batch }),
  })
  expect(res.statusCode, res.body).toBe(200)
}

async function createInsight(body: Record<string, unknown>) {
  const res = await api('POST', 'insights/', body)
  expect(res.statusCode, res.body).toBe(201)
  return res.json()
}

const pageviewTrends = {
  kind: 'InsightVizNode',
  source: {
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: '$pageview', math: 'total' }],
    dateRange: { date_from: '-7d' },
    interval: 'day',
  },
}

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  other = await createTenant(t)
  await capture(t.creds.project_api_key, [
    ev('$pageview', 'anna', '2024-01-08T15:00:00Z', { $browser: 'Chrome' }),
    ev('$pageview', 'anna', '2024-01-09T15:00:00Z', { $browser: 'Chrome' }),
    ev('$pageview', 'bob', '2024-01-09T16:00:00Z', { $browser: 'Safari' }),
    ev('signup', 'bob', '2024-01-09T17:00:00Z'),
  ])
  await capture(other.project.api_token, [ev('$pageview', 'eve', '2024-01-09T15:00:00Z')])
  await t.burrow.ingest.flushBackground()
}, 60_000)
afterAll(() => t.close())

describe('insights CRUD', () => {
  it('test_create_insight_items: creates with PostHog defaults, an 8-character short id and a "created" entry', async () => {
    const insight = await createInsight({ name: 'a created insight', query: pageviewTrends })
    expect(insight).toMatchObject({
      name: 'a created insight',
      derived_name: null,
      description: null,
      tags: [],
      favorited: false,
      saved: false,
      deleted: false,
      dashboards: [],
      dashboard_tiles: [],
      result: null,
      last_refresh: null,
      created_at: now.toISOString(),
      last_modified_at: now.toISOString(),
      created_by: { email: t.creds.email },
      last_modified_by: { email: t.creds.email },
    })
    expect(insight.short_id).toMatch(/^[0-9A-Za-z]{8}$/)
    expect(insight.query).toMatchObject({ kind: 'InsightVizNode', source: { kind: 'TrendsQuery' } })

    const activity = (await api('GET', `insights/${insight.id}/activity/`)).json()
    expect(activity.results).toEqual([
      {
        id: expect.any(Number),
        user: { first_name: expect.any(String), email: t.creds.email },
        activity: 'created',
        scope: 'Insight',
        item_id: String(insight.id),
        created_at: now.toISOString(),
        detail: { changes: null, trigger: null, type: null, name: 'a created insight', short_id: insight.short_id },
      },
    ])
  })

  it('test_create_insight_with_no_names_logs_no_activity', async () => {
    const insight = await createInsight({ query: pageviewTrends })
    expect(insight.name).toBeNull()
    expect(insight.derived_name).toBeNull()
    expect((await api('GET', `insights/${insight.id}/activity/`)).json().results).toEqual([])
  })

  it('test_create_insight_logs_derived_name_if_there_is_no_name', async () => {
    const insight = await createInsight({ derived_name: 'pageview unique users', query: pageviewTrends })
    expect(insight.derived_name).toBe('pageview unique users')
    const [entry] = (await api('GET', `insights/${insight.id}/activity/`)).json().results
    expect(entry.detail).toMatchObject({ name: 'pageview unique users', short_id: insight.short_id })
  })

  it('stores the query upgraded to the latest node version', async () => {
    const insight = await createInsight({
      name: 'legacy legend',
      query: {
        kind: 'TrendsQuery',
        series: [{ kind: 'EventsNode', event: '$pageview' }],
        trendsFilter: { hiddenLegendIndexes: [0] },
      },
    })
    expect(insight.query.trendsFilter).toEqual({
      resultCustomizationBy: 'position',
      resultCustomizations: { '0': { assignmentBy: 'position', hidden: true } },
    })
  })

  it('test_created_updated_and_last_modified: only material changes move last_modified_at/by', async () => {
    now = new Date('2021-08-23T12:00:00Z')
    const created = await createInsight({ name: 'test' })
    now = new Date('2021-09-20T12:00:00Z')
    const favorited = (await api('PATCH', `insights/${created.id}/`, { favorited: true })).json()
    expect(favorited).toMatchObject({
      created_at: '2021-08-23T12:00:00.000Z',
      updated_at: '2021-09-20T12:00:00.000Z',
      last_modified_at: '2021-08-23T12:00:00.000Z',
      favorited: true,
    })
    now = new Date('2021-12-23T12:00:00Z')
    const renamed = (await api('PATCH', `insights/${created.id}/`, { name: 'XYZ' })).json()
    expect(renamed).toMatchObject({ updated_at: now.toISOString(), last_modified_at: now.toISOString() })

    const alt = await createMember(t, 1)
    now = new Date('2022-01-01T12:00:00Z')
    const res = await api('PATCH', `insights/${created.id}/`, { description: 'Lorem ipsum.' }, alt.auth)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({
      created_by: { email: t.creds.email },
      last_modified_at: now.toISOString(),
      last_modified_by: { id: alt.user.id, email: alt.user.email },
    })
    now = new Date('2024-01-10T12:00:00Z')
  })

  it('test_update_insight: logs the changed fields', async () => {
    const insight = await createInsight({ name: 'insight name' })
    const res = await api('PATCH', `insights/${insight.id}/`, {
      name: 'insight new name',
      tags: ['add', 'these', 'tags'],
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ name: 'insight new name', tags: ['add', 'tags', 'these'] })
    expect((await api('GET', `insights/${insight.id}/`)).json().name).toBe('insight new name')
    const [updated, created] = (await api('GET', `insights/${insight.id}/activity/`)).json().results
    expect(created.activity).toBe('created')
    expect(updated).toMatchObject({ activity: 'updated', scope: 'Insight', item_id: String(insight.id) })
    expect(updated.detail).toMatchObject({ name: 'insight new name', short_id: insight.short_id, trigger: null })
    expect(updated.detail.changes).toEqual(
      expect.arrayContaining([
        { type: 'Insight', action: 'changed', field: 'tags', before: [], after: ['add', 'tags', 'these'] },
        { type: 'Insight', action: 'changed', field: 'name', before: 'insight name', after: 'insight new name' },
      ]),
    )
    expect(updated.detail.changes).toHaveLength(2)
  })

  it('soft-deletes through PATCH deleted: the insight disappears, DELETE is not allowed', async () => {
    const insight = await createInsight({ name: 'to delete' })
    expect((await api('DELETE', `insights/${insight.id}/`)).statusCode).toBe(405)
    const res = await api('PATCH', `insights/${insight.id}/`, { deleted: true })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().deleted).toBe(true)
    expect((await api('GET', `insights/${insight.id}/`)).statusCode).toBe(404)
    const list = (await api('GET', 'insights/?limit=1000')).json()
    expect(list.results.map((i: { id: number }) => i.id)).not.toContain(insight.id)
    const [entry] = (await api('GET', 'insights/activity/')).json().results
    expect(entry).toMatchObject({ activity: 'deleted', item_id: String(insight.id) })
    // and it can be restored
    const restored = await api('PATCH', `insights/${insight.id}/`, { deleted: false })
    expect(restored.statusCode, restored.body).toBe(200)
    expect((await api('GET', `insights/${insight.id}/`)).statusCode).toBe(200)
  })

  it('needs insight:write to change and insight:read to read', async () => {
    const reader = await createKey(t, ['insight:read'])
    expect((await api('GET', 'insights/', undefined, reader)).statusCode).toBe(200)
    expect((await api('POST', 'insights/', { name: 'nope' }, reader)).statusCode).toBe(403)
    const other = await createKey(t, ['dashboard:read'])
    expect((await api('GET', 'insights/', undefined, other)).statusCode).toBe(403)
  })

  it('answers 404 for unknown and foreign insights, 400 with attr for bad input', async () => {
    expect((await api('GET', 'insights/999999/')).json()).toEqual({
      type: 'invalid_request',
      code: 'not_found',
      detail: 'Not found.',
      attr: null,
    })
    const theirs = (await api('POST', 'insights/', { name: 'theirs' }, other.auth, other.project.id)).json()
    expect((await api('GET', `insights/${theirs.id}/`)).statusCode).toBe(404)
    expect((await api('PATCH', `insights/${theirs.id}/`, { name: 'mine' })).statusCode).toBe(404)
    expect((await api('GET', 'insights/', undefined, other.auth, t.creds.project_id)).statusCode).toBe(404)

    const badQuery = await api('POST', 'insights/', { query: 'select 1' })
    expect(badQuery.statusCode).toBe(400)
    expect(badQuery.json()).toMatchObject({ type: 'validation_error', attr: 'query' })
    const badFlag = await api('POST', 'insights/', { favorited: 'maybe' })
    expect(badFlag.json()).toMatchObject({ type: 'validation_error', attr: 'favorited' })
    const badDashboard = await api('POST', 'insights/', { name: 'x', dashboards: [999999] })
    expect(badDashboard.statusCode).toBe(400)
    expect(badDashboard.json()).toMatchObject({ type: 'validation_error', attr: 'dashboards' })
  })
})

describe('listing insights', () => {
  let mine: { id: number; short_id: string }[]
  beforeAll(async () => {
    mine = [
      await createInsight({ name: 'Listed saved', saved: true, query: pageviewTrends }),
      await createInsight({ name: 'Listed favorite', favorited: true, description: 'needle in here' }),
      await createInsight({
        name: 'Listed SQL',
        query: { kind: 'DataVisualizationNode', source: { kind: 'HogQLQuery', query: 'select 1' } },
      }),
    ]
  })

  it('test_get_saved_insight_items and test_get_favorited_insight_items', async () => {
    const saved = (await api('GET', 'insights/?saved=true')).json()
    expect(saved.results.every((i: { saved: boolean }) => i.saved)).toBe(true)
    expect(saved.results.map((i: { id: number }) => i.id)).toContain(mine[0].id)
    expect(saved.results[0].short_id).toHaveLength(8)
    const favorited = (await api('GET', 'insights/?favorited=true')).json()
    expect(favorited.results.every((i: { favorited: boolean }) => i.favorited)).toBe(true)
    expect(favorited.results.map((i: { id: number }) => i.id)).toContain(mine[1].id)
    expect(favorited.results.map((i: { id: number }) => i.id)).not.toContain(mine[0].id)
  })

  it('test_get_insight_items: user=true lists only my insights', async () => {
    const alt = await createMember(t, 1)
    const theirs = (await api('POST', 'insights/', { name: 'by someone else' }, alt.auth)).json()
    const ids = (await api('GET', 'insights/?user=true&limit=1000')).json().results.map((i: { id: number }) => i.id)
    expect(ids).toContain(mine[0].id)
    expect(ids).not.toContain(theirs.id)
    const byCreator = (await api('GET', `insights/?created_by=[${alt.user.id}]`)).json()
    expect(byCreator.results.map((i: { id: number }) => i.id)).toEqual([theirs.id])
  })

  it('test_get_insight_by_short_id: only this project is searched', async () => {
    const res = await api('GET', `insights/?short_id=${mine[1].short_id}`)
    expect(res.statusCode).toBe(200)
    expect(res.json().results.map((i: { id: number }) => i.id)).toEqual([mine[1].id])
    const theirs = (await api('POST', 'insights/', { name: 'red herring' }, other.auth, other.project.id)).json()
    expect((await api('GET', `insights/?short_id=${theirs.short_id}`)).json().results).toEqual([])
  })

  it('test_listing_insights_shows_legacy_and_hogql_ones: insight=TRENDS and insight=SQL', async () => {
    const trends = (await api('GET', 'insights/?insight=TRENDS&limit=1000')).json().results
    expect(trends.map((i: { id: number }) => i.id)).toContain(mine[0].id)
    expect(trends.map((i: { id: number }) => i.id)).not.toContain(mine[2].id)
    const sql = (await api('GET', 'insights/?insight=SQL')).json().results
    expect(sql.map((i: { id: number }) => i.id)).toEqual([mine[2].id])
    const bad = await api('GET', 'insights/?insight=NOPE')
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toMatchObject({ attr: 'insight', code: 'invalid_choice' })
  })

  it('searches names and descriptions', async () => {
    const found = (await api('GET', 'insights/?search=NEEDLE')).json()
    expect(found.results.map((i: { id: number }) => i.id)).toEqual([mine[1].id])
  })

  it('test_basic_results: basic=true lists PostHog basic fields only', async () => {
    const res = await api('GET', 'insights/?basic=true&limit=1')
    expect(res.statusCode).toBe(200)
    expect(new Set(Object.keys(res.json().results[0]))).toEqual(
      new Set([
        'id',
        'short_id',
        'name',
        'derived_name',
        'favorited',
        'filters',
        'query',
        'dashboards',
        'dashboard_tiles',
        'description',
        'last_refresh',
        'refreshing',
        'saved',
        'updated_at',
        'created_by',
        'created_at',
        'last_modified_at',
        'tags',
        'user_access_level',
        'last_viewed_at',
      ]),
    )
  })

  it('paginates with limit and offset, next and previous keep the filters', async () => {
    const first = (await api('GET', 'insights/?search=Listed&limit=2')).json()
    expect(first.count).toBe(3)
    expect(first.results).toHaveLength(2)
    expect(first.previous).toBeNull()
    const next = new URL(first.next)
    expect(next.searchParams.get('search')).toBe('Listed')
    expect(next.searchParams.get('offset')).toBe('2')
    const second = (await api('GET', `insights/${next.search}`)).json()
    expect(second.results).toHaveLength(1)
    expect(second.next).toBeNull()
    expect(second.previous).not.toBeNull()
  })
})

describe('insight results', () => {
  it('calculates with refresh=blocking, then serves the cache; force_cache never calculates', async () => {
    const insight = await createInsight({
      name: 'count',
      query: { kind: 'HogQLQuery', query: "select count() from events where event = '$pageview'" },
    })
    expect(insight.result).toBeNull()
    const cold = (await api('GET', `insights/${insight.id}/?refresh=force_cache`)).json()
    expect(cold.result).toBeNull()

    const fresh = await api('GET', `insights/${insight.id}/?refresh=blocking`)
    expect(fresh.statusCode, fresh.body).toBe(200)
    expect(fresh.json()).toMatchObject({ result: [[3]], columns: ['count()'], is_cached: false, timezone: 'UTC' })
    expect(fresh.json().last_refresh).toBe(now.toISOString())

    const cached = (await api('GET', `insights/${insight.id}/`)).json()
    expect(cached).toMatchObject({ result: [[3]], is_cached: true })
    const forced = (await api('GET', `insights/${insight.id}/?refresh=force_blocking`)).json()
    expect(forced).toMatchObject({ result: [[3]], is_cached: false })
    const listed = (await api('GET', `insights/?short_id=${insight.short_id}`)).json()
    expect(listed.results[0]).toMatchObject({ result: [[3]], is_cached: true })
    // both calculations went through the query service's log; the cached reads did not
    const db = t.burrow.meta.db as unknown as Kysely<{ query_log: QueryLogTable }>
    const logged = await db
      .selectFrom('query_log')
      .select(['status', 'kind'])
      .where('team_id', '=', t.creds.project_id)
      .where('query', 'like', "%select count() from events where event = '$pageview'%")
      .execute()
    expect(logged).toEqual([
      { status: 'completed', kind: 'HogQLQuery' },
      { status: 'completed', kind: 'HogQLQuery' },
    ])
  })

  it('runs a TrendsQuery insight and keeps other projects out', async () => {
    const insight = await createInsight({ name: 'pageviews', query: pageviewTrends })
    const res = await api('GET', `insights/${insight.id}/?refresh=true`)
    expect(res.statusCode, res.body).toBe(200)
    const [series] = res.json().result
    expect(series.count).toBe(3)
    expect(series.data.slice(-3)).toEqual([1, 2, 0])

    const theirs = (
      await api(
        'POST',
        'insights/',
        { name: 'their count', query: { kind: 'HogQLQuery', query: 'select count() from events' } },
        other.auth,
        other.project.id,
      )
    ).json()
    const their = await api('GET', `insights/${theirs.id}/?refresh=blocking`, undefined, other.auth, other.project.id)
    expect(their.json().result).toEqual([[1]])
  })

  it('starts an asynchronous calculation with refresh=force_async', async () => {
    const insight = await createInsight({ name: 'async', query: { kind: 'HogQLQuery', query: 'select 42' } })
    const res = await api('GET', `insights/${insight.id}/?refresh=force_async`)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().query_status).toMatchObject({ id: expect.any(String) })
  })

  it('answers a query error as 400 in PostHog shape', async () => {
    const insight = await createInsight({ name: 'broken', query: { kind: 'HogQLQuery', query: 'select nope(' } })
    const res = await api('GET', `insights/${insight.id}/?refresh=blocking`)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error' })
  })
})
