/**
 * Dashboards API, after PostHog's posthog/api/test/dashboards/test_dashboard.py and the dashboard parts of
 * test_insight.py: CRUD, tiles of insights (through the insight's `dashboards`) and text, soft delete with and
 * without its insights, dashboard filters and variables applied to every tile's query, and the activity log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { ev } from '../queries/insights/capture.js'

let t: TestApp
const now = new Date('2024-01-10T12:00:00Z')
let other: Awaited<ReturnType<typeof createTenant>>

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE'
const api = (method: Method, path: string, payload?: unknown, headers = t.auth, projectId = t.creds.project_id) =>
  t.burrow.app.inject({
    method,
    url: `/api/projects/${projectId}/${path}`,
    headers,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  })

async function create(kind: 'dashboards' | 'insights', body: Record<string, unknown>) {
  const res = await api('POST', `${kind}/`, body)
  expect(res.statusCode, res.body).toBe(201)
  return res.json()
}

const trends = {
  kind: 'InsightVizNode',
  source: {
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: '$pageview', math: 'total' }],
    dateRange: { date_from: '-7d' },
    interval: 'day',
  },
}
const pageviewCount = { kind: 'HogQLQuery', query: "select count() from events where event = '$pageview'" }

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  other = await createTenant(t)
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: '/batch/',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({
      api_key: t.creds.project_api_key,
      batch: [
        // 20 days ago: outside a -7d insight, inside a -30d dashboard
        ev('$pageview', 'anna', '2023-12-21T15:00:00Z', { $browser: 'Chrome' }),
        ev('$pageview', 'anna', '2024-01-08T15:00:00Z', { $browser: 'Chrome' }),
        ev('$pageview', 'bob', '2024-01-09T15:00:00Z', { $browser: 'Safari' }),
        ev('$pageview', 'bob', '2024-01-09T16:00:00Z', { $browser: 'Safari' }),
      ],
    }),
  })
  expect(res.statusCode, res.body).toBe(200)
  await t.burrow.ingest.flushBackground()
}, 60_000)
afterAll(() => t.close())

describe('dashboards CRUD', () => {
  it('test_create_basic_dashboard and test_retrieve_dashboard', async () => {
    const created = await create('dashboards', { name: 'My new dashboard', description: '' })
    expect(created).toMatchObject({
      name: 'My new dashboard',
      description: '',
      tags: [],
      pinned: false,
      deleted: false,
      creation_mode: 'default',
      restriction_level: 21,
      effective_privilege_level: 37,
      filters: {},
      variables: {},
      tiles: [],
      created_by: { email: t.creds.email },
      created_at: now.toISOString(),
    })
    const read = (await api('GET', `dashboards/${created.id}/`)).json()
    expect(read).toMatchObject({ name: 'My new dashboard', last_accessed_at: now.toISOString() })
    const [entry] = (await api('GET', `dashboards/${created.id}/activity/`)).json().results
    expect(entry).toMatchObject({
      activity: 'created',
      scope: 'Dashboard',
      item_id: String(created.id),
      detail: { name: 'My new dashboard', changes: null },
    })
  })

  it('test_retrieve_dashboard_list and test_listing_dashboards_does_not_include_tiles', async () => {
    const a = await create('dashboards', { name: 'a listed dashboard' })
    const b = await create('dashboards', { name: 'b listed dashboard' })
    await create('insights', { name: 'on both', dashboards: [a.id, b.id] })
    const list = (await api('GET', 'dashboards/?search=listed')).json()
    expect(list.results.map((d: { name: string }) => d.name)).toEqual(['a listed dashboard', 'b listed dashboard'])
    expect(list.results.map((d: Record<string, unknown>) => d.tiles)).toEqual([undefined, undefined])
    expect((await api('GET', `dashboards/${a.id}/`)).json().tiles).toHaveLength(1)
  })

  it('test_update_dashboard: logs the change', async () => {
    const dashboard = await create('dashboards', { name: 'private dashboard' })
    const res = await api('PATCH', `dashboards/${dashboard.id}/`, { name: 'dashboard new name', pinned: true })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ name: 'dashboard new name', pinned: true, creation_mode: 'default' })
    const [updated] = (await api('GET', `dashboards/${dashboard.id}/activity/`)).json().results
    expect(updated.activity).toBe('updated')
    expect(updated.detail.changes).toEqual(
      expect.arrayContaining([
        {
          type: 'Dashboard',
          action: 'changed',
          field: 'name',
          before: 'private dashboard',
          after: 'dashboard new name',
        },
        { type: 'Dashboard', action: 'changed', field: 'pinned', before: false, after: true },
      ]),
    )
  })

  it('test_cannot_update_dashboard_with_invalid_filters', async () => {
    const dashboard = await create('dashboards', { name: 'filters' })
    const asList = await api('PATCH', `dashboards/${dashboard.id}/`, {
      filters: [{ key: 'brand', value: ['1'], operator: 'exact', type: 'event' }],
    })
    expect(asList.statusCode).toBe(400)
    expect(asList.json()).toMatchObject({ type: 'validation_error', attr: 'filters' })
    const badDate = await api('PATCH', `dashboards/${dashboard.id}/`, { filters: { date_from: 'yesterday-ish' } })
    expect(badDate.statusCode).toBe(400)
    expect(badDate.json()).toMatchObject({ type: 'validation_error', attr: 'filters' })
    expect((await api('GET', `dashboards/${dashboard.id}/`)).json().filters).toEqual({})
  })

  it('answers 404 for unknown and foreign dashboards; DELETE is not allowed', async () => {
    expect((await api('GET', 'dashboards/999999/')).json()).toMatchObject({ code: 'not_found', attr: null })
    const theirs = (await api('POST', 'dashboards/', { name: 'theirs' }, other.auth, other.project.id)).json()
    expect((await api('GET', `dashboards/${theirs.id}/`)).statusCode).toBe(404)
    expect((await api('PATCH', `dashboards/${theirs.id}/`, { name: 'mine' })).statusCode).toBe(404)
    const insight = await api('POST', 'insights/', { name: 'sneaky', dashboards: [theirs.id] })
    expect(insight.statusCode).toBe(400)
    expect(insight.json()).toMatchObject({ attr: 'dashboards' })
    expect((await api('DELETE', `dashboards/${theirs.id}/`)).statusCode).toBe(405)
  })
})

describe('tiles', () => {
  it('test_create_insight_items_on_a_dashboard and test_dashboards_relation_is_tile_soft_deletion_aware', async () => {
    const one = await create('dashboards', { name: 'dash 1' })
    const two = await create('dashboards', { name: 'dash 2' })
    const insight = await create('insights', { name: 'start with two dashboards', dashboards: [one.id, two.id] })
    expect(insight.dashboards).toEqual([one.id, two.id])

    const updated = (await api('PATCH', `insights/${insight.id}/`, { dashboards: [one.id] })).json()
    expect(updated.dashboards).toEqual([one.id])
    expect(updated.dashboard_tiles).toEqual([{ id: expect.any(Number), deleted: null, dashboard_id: one.id }])
    expect((await api('GET', `dashboards/${two.id}/`)).json().tiles).toEqual([])

    const listed = (await api('GET', `insights/?short_id=${insight.short_id}`)).json()
    expect(listed.results[0].dashboards).toEqual([one.id])

    // put back: the same tile, now deleted: false
    const back = (await api('PATCH', `insights/${insight.id}/`, { dashboards: [one.id, two.id] })).json()
    expect(back.dashboard_tiles).toEqual([
      { id: expect.any(Number), deleted: null, dashboard_id: one.id },
      { id: expect.any(Number), deleted: false, dashboard_id: two.id },
    ])
  })

  it('test_adding_insight_to_dashboard_updates_activity_log', async () => {
    const one = await create('dashboards', { name: 'dash 1' })
    const two = await create('dashboards', { name: 'dash 2' })
    const insight = await create('insights', {
      name: 'have to have a name to hit the activity log',
      dashboards: [one.id, two.id],
    })
    await api('PATCH', `insights/${insight.id}/`, { dashboards: [one.id] })
    await api('PATCH', `insights/${insight.id}/`, { dashboards: [one.id, two.id] })
    const entries = (await api('GET', `insights/${insight.id}/activity/`)).json().results
    expect(entries.map((e: { activity: string }) => e.activity)).toEqual(['updated', 'updated', 'created'])
    expect(entries[0].detail.changes).toEqual([
      {
        type: 'Insight',
        action: 'changed',
        field: 'dashboards',
        before: [{ id: one.id, name: 'dash 1' }],
        after: [
          { id: one.id, name: 'dash 1' },
          { id: two.id, name: 'dash 2' },
        ],
      },
    ])
    expect(entries[1].detail.changes[0]).toMatchObject({ field: 'dashboards', after: [{ id: one.id, name: 'dash 1' }] })
  })

  it('test_can_list_insights_by_which_dashboards_they_are_in (AND)', async () => {
    const one = await create('dashboards', { name: 'and 1' })
    const two = await create('dashboards', { name: 'and 2' })
    const first = await create('insights', { name: 'i1', dashboards: [one.id] })
    const second = await create('insights', { name: 'i2', dashboards: [one.id, two.id] })
    const onOne = (await api('GET', `insights/?dashboards=[${one.id}]`)).json().results
    expect(onOne.map((i: { id: number }) => i.id).sort()).toEqual([first.id, second.id].sort())
    const onBoth = (await api('GET', `insights/?dashboards=[${one.id},${two.id}]`)).json().results
    expect(onBoth.map((i: { id: number }) => i.id)).toEqual([second.id])
  })

  it('PATCH tiles: text cards, layouts and colours, removal; unknown tiles are 400', async () => {
    const dashboard = await create('dashboards', { name: 'with text' })
    const insight = await create('insights', { name: 'tiled', dashboards: [dashboard.id] })
    let res = await api('PATCH', `dashboards/${dashboard.id}/`, { tiles: [{ text: { body: 'Hello **world**' } }] })
    expect(res.statusCode, res.body).toBe(200)
    const [insightTile, textTile] = res.json().tiles
    expect(insightTile.insight.id).toBe(insight.id)
    expect(textTile).toMatchObject({
      insight: null,
      text: { body: 'Hello **world**', created_by: { email: t.creds.email } },
    })

    const layouts = { sm: { h: 5, w: 6, x: 0, y: 0 } }
    res = await api('PATCH', `dashboards/${dashboard.id}/`, {
      tiles: [
        { id: insightTile.id, layouts, color: 'blue' },
        { id: textTile.id, text: { body: 'Changed' } },
      ],
    })
    expect(res.json().tiles.map((tile: Record<string, unknown>) => [tile.layouts, tile.color])).toEqual([
      [layouts, 'blue'],
      [{}, null],
    ])
    expect(res.json().tiles[1].text.body).toBe('Changed')

    res = await api('PATCH', `dashboards/${dashboard.id}/`, { tiles: [{ id: textTile.id, deleted: true }] })
    expect(res.json().tiles.map((tile: { id: number }) => tile.id)).toEqual([insightTile.id])

    const unknown = await api('PATCH', `dashboards/${dashboard.id}/`, { tiles: [{ id: 999999, color: 'red' }] })
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json()).toMatchObject({ type: 'validation_error', attr: 'tiles__0__id' })
  })

  it('duplicates a dashboard with use_dashboard: the same insights on new tiles', async () => {
    const source = await create('dashboards', { name: 'source', filters: { date_from: '-30d' } })
    const insight = await create('insights', { name: 'shared', dashboards: [source.id] })
    const copy = await create('dashboards', { name: 'copy', use_dashboard: source.id })
    expect(copy.filters).toEqual({ date_from: '-30d' })
    expect(copy.tiles.map((tile: { insight: { id: number } }) => tile.insight.id)).toEqual([insight.id])
    expect(copy.tiles[0].id).not.toBe(source.id)
  })
})

describe('deleting dashboards', () => {
  it('test_insight_items_on_a_dashboard_ignore_deleted_dashboards; the insights stay', async () => {
    const kept = await create('dashboards', { name: 'kept' })
    const gone = await create('dashboards', { name: 'gone' })
    const insight = await create('insights', { name: 'survivor', dashboards: [kept.id, gone.id] })
    const res = await api('PATCH', `dashboards/${gone.id}/`, { deleted: true })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().deleted).toBe(true)
    expect((await api('GET', `dashboards/${gone.id}/`)).statusCode).toBe(404)
    expect((await api('GET', 'dashboards/?limit=1000')).json().results.map((d: { id: number }) => d.id)).not.toContain(
      gone.id,
    )
    const read = (await api('GET', `insights/${insight.id}/`)).json()
    expect(read.dashboards).toEqual([kept.id])
    expect(read.dashboard_tiles).toEqual([{ id: expect.any(Number), deleted: null, dashboard_id: kept.id }])

    const accidental = await api('PATCH', `insights/${insight.id}/`, { dashboards: [kept.id, gone.id] })
    expect(accidental.statusCode).toBe(400)
    expect(accidental.json()).toMatchObject({ attr: 'dashboards' })
    expect((await api('GET', `insights/${insight.id}/`)).json().dashboards).toEqual([kept.id])

    const [entry] = (await api('GET', `dashboards/${gone.id}/activity/`.replace(`${gone.id}/`, ''))).json().results
    expect(entry).toMatchObject({ activity: 'deleted', item_id: String(gone.id) })
  })

  it('delete_insights=true deletes the insights that are on no other dashboard', async () => {
    const doomed = await create('dashboards', { name: 'doomed' })
    const elsewhere = await create('dashboards', { name: 'elsewhere' })
    const lonely = await create('insights', { name: 'lonely', dashboards: [doomed.id] })
    const shared = await create('insights', { name: 'shared', dashboards: [doomed.id, elsewhere.id] })
    const res = await api('PATCH', `dashboards/${doomed.id}/`, { deleted: true, delete_insights: true })
    expect(res.statusCode, res.body).toBe(200)
    expect((await api('GET', `insights/${lonely.id}/`)).statusCode).toBe(404)
    expect((await api('GET', `insights/${shared.id}/`)).json().dashboards).toEqual([elsewhere.id])
  })
})

describe('tile results with dashboard filters', () => {
  it('test_return_cached_results: tiles show what the insight cached, without calculating', async () => {
    const dashboard = await create('dashboards', { name: 'cached' })
    const insight = await create('insights', { name: 'count', query: pageviewCount, dashboards: [dashboard.id] })
    expect((await api('GET', `dashboards/${dashboard.id}/`)).json().tiles[0].insight.result).toBeNull()
    await api('GET', `insights/${insight.id}/?refresh=true`)
    const [tile] = (await api('GET', `dashboards/${dashboard.id}/`)).json().tiles
    expect(tile).toMatchObject({ is_cached: true, insight: { result: [[4]], is_cached: true } })
  })

  it('applies the dashboard date range and properties to every insight tile', async () => {
    const dashboard = await create('dashboards', {
      name: 'filtered',
      filters: {
        date_from: '-30d',
        properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }],
      },
    })
    const trendsInsight = await create('insights', { name: 'trend', query: trends, dashboards: [dashboard.id] })
    const alone = (await api('GET', `insights/${trendsInsight.id}/?refresh=blocking`)).json()
    expect(alone.result[0].count).toBe(3)

    const res = await api('GET', `dashboards/${dashboard.id}/?refresh=blocking`)
    expect(res.statusCode, res.body).toBe(200)
    const tiles = res.json().tiles
    const trendTile = tiles.find((tile: { insight: { id: number } }) => tile.insight.id === trendsInsight.id)
    // Chrome only, over 30 days: anna's two pageviews
    expect(trendTile.insight.result[0].count).toBe(2)
    expect(trendTile.insight.result[0].days).toHaveLength(31)

    const onDashboard = (
      await api('GET', `insights/${trendsInsight.id}/?refresh=blocking&from_dashboard=${dashboard.id}`)
    ).json()
    expect(onDashboard.result[0].count).toBe(2)

    const override = encodeURIComponent(JSON.stringify({ date_from: '-3d' }))
    const overridden = await api('GET', `dashboards/${dashboard.id}/?refresh=blocking&filters_override=${override}`)
    expect(overridden.statusCode, overridden.body).toBe(200)
    expect(overridden.json().filters).toEqual({ date_from: '-3d' })
    expect(overridden.json().persisted_filters).toMatchObject({ date_from: '-30d' })
    const overriddenTrend = overridden
      .json()
      .tiles.find((tile: { insight: { id: number } }) => tile.insight.id === trendsInsight.id)
    expect(overriddenTrend.insight.result[0].count).toBe(3)

    // HogQL takes dashboard filters where it says {filters}, as in PostHog (absolute dates: the engine's now()
    // is the real clock)
    const absolute = await create('dashboards', {
      name: 'absolute',
      filters: {
        date_from: '2023-12-01',
        date_to: '2024-01-31',
        properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }],
      },
    })
    await create('insights', {
      name: 'count',
      query: { kind: 'HogQLQuery', query: "select count() from events where event = '$pageview' and {filters}" },
      dashboards: [absolute.id],
    })
    const [countTile] = (await api('GET', `dashboards/${absolute.id}/?refresh=blocking`)).json().tiles
    expect(countTile.insight.result).toEqual([[2]])

    const bad = await api('GET', `dashboards/${dashboard.id}/?filters_override=nope`)
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toMatchObject({ attr: 'filters_override' })
  })

  it('applies dashboard variables to HogQL tiles', async () => {
    const dashboard = await create('dashboards', {
      name: 'variables',
      variables: { v1: { variableId: 'v1', code_name: 'event_name', value: 'signup' } },
    })
    await create('insights', {
      name: 'by variable',
      dashboards: [dashboard.id],
      query: {
        kind: 'HogQLQuery',
        query: 'select {variables.event_name}',
        variables: { v1: { variableId: 'v1', code_name: 'event_name', value: '$pageview' } },
      },
    })
    const res = await api('GET', `dashboards/${dashboard.id}/?refresh=blocking`)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().tiles[0].insight.result).toEqual([['signup']])
  })

  it('a tile whose query fails shows its error and the other tiles still load', async () => {
    const dashboard = await create('dashboards', { name: 'partly broken' })
    await create('insights', {
      name: 'broken',
      query: { kind: 'HogQLQuery', query: 'select nope(' },
      dashboards: [dashboard.id],
    })
    await create('insights', {
      name: 'fine',
      query: { kind: 'HogQLQuery', query: 'select 1' },
      dashboards: [dashboard.id],
    })
    const res = await api('GET', `dashboards/${dashboard.id}/?refresh=blocking`)
    expect(res.statusCode, res.body).toBe(200)
    const [broken, fine] = res.json().tiles
    expect(broken.insight.result).toBeNull()
    expect(broken.error).toMatchObject({ type: 'validation_error' })
    expect(fine.insight.result).toEqual([[1]])
    expect(fine.error).toBeNull()
  })
})
