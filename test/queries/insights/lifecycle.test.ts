/**
 * LifecycleQuery through the query API over events captured with fixed timestamps (oldest first, so a person's
 * created_at is their first event); every expected number is worked out by hand from the fixture below (mirrors
 * of PostHog's test_lifecycle_query_runner.py behaviours).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../../helpers/app.js'
import { postQuery } from '../fixtures.js'
import { captureBatch, ev } from './capture.js'

let t: TestApp
const now = new Date('2024-01-10T12:00:00Z')

// bob is created on Jan 1, before the window read for Jan 3–7 (which starts one day earlier, on Jan 2)
// carl is created on Jan 2 (inside the window, before the range), active again on Jan 3
// anna is created on Jan 3, active on the 4th, skips the 5th, back on the 6th
// dave's two pageviews straddle midnight UTC (23:30 on the 4th, 00:30 on the 5th): both on the 4th in New York
const EVENTS = [
  ev('$pageview', 'bob', '2024-01-01T12:00:00Z'),
  ev('$pageview', 'carl', '2024-01-02T10:00:00Z'),
  ev('$pageview', 'anna', '2024-01-03T10:00:00Z'),
  ev('$pageview', 'carl', '2024-01-03T11:00:00Z'),
  ev('$pageview', 'anna', '2024-01-04T10:00:00Z'),
  ev('$pageview', 'dave', '2024-01-04T23:30:00Z'),
  ev('$pageview', 'dave', '2024-01-05T00:30:00Z'),
  ev('$pageview', 'bob', '2024-01-05T09:00:00Z'),
  ev('$pageview', 'anna', '2024-01-06T10:00:00Z'),
  ev('signup', 'anna', '2024-01-06T10:05:00Z'),
]

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  await captureBatch(t, EVENTS)
}, 60_000)
afterAll(() => t.close())

const lifecycle = (extra: Record<string, unknown> = {}) =>
  postQuery(t, {
    query: {
      kind: 'LifecycleQuery',
      series: [{ kind: 'EventsNode', event: '$pageview' }],
      dateRange: { date_from: '2024-01-03', date_to: '2024-01-07' },
      interval: 'day',
      ...extra,
    },
  })

const byStatus = (results: { status: string; data: number[] }[]) =>
  Object.fromEntries(results.map((r) => [r.status, r.data]))

describe('LifecycleQuery', () => {
  it('test_lifecycle_trend-like: new, returning, resurrecting and dormant per day with PostHog rows', async () => {
    const res = await lifecycle()
    expect(res.statusCode, res.body).toBe(200)
    const { results } = res.json()
    // UTC, days Jan 3 … Jan 7:
    // anna [3, 4, 6]: new 3, returning 4, dormant 5, resurrecting 6, dormant 7
    // bob [5] (Jan 1 is before the window; created Jan 1 ≠ Jan 5, and a first activity is never returning):
    //   resurrecting 5, dormant 6
    // carl [2, 3]: new 2 (before the range), returning 3, dormant 4
    // dave [4, 5]: new 4, returning 5, dormant 6
    expect(byStatus(results)).toEqual({
      new: [1, 1, 0, 0, 0],
      returning: [1, 1, 1, 0, 0],
      resurrecting: [0, 0, 1, 1, 0],
      dormant: [0, -1, -1, -2, -1],
    })
    expect(results.map((r: { status: string }) => r.status)).toEqual(['new', 'returning', 'resurrecting', 'dormant'])
    const [first] = results
    expect(first).toMatchObject({
      label: '$pageview - new',
      status: 'new',
      count: 2,
      days: ['2024-01-03', '2024-01-04', '2024-01-05', '2024-01-06', '2024-01-07'],
      labels: ['3-Jan-2024', '4-Jan-2024', '5-Jan-2024', '6-Jan-2024', '7-Jan-2024'],
      action: { id: '$pageview', name: '$pageview', type: 'events', order: 0, math: 'total' },
    })
    // dormant counts are negative: 0 - 1 - 1 - 2 - 1
    expect(results[3].count).toBe(-5)
  })

  it('returns only the toggled lifecycles', async () => {
    const res = await lifecycle({ lifecycleFilter: { toggledLifecycles: ['dormant', 'new'] } })
    expect(res.json().results.map((r: { status: string }) => r.status)).toEqual(['new', 'dormant'])
  })

  it('test_lifecycle_trend_weeks-like: weekly lifecycles', async () => {
    const res = await lifecycle({ interval: 'week', dateRange: { date_from: '2024-01-07', date_to: '2024-01-20' } })
    const { results } = res.json()
    // Sunday weeks Jan 7 and Jan 14, read from Dec 31: everyone's activity (Jan 1 … 6) is in the week of Dec 31,
    // where they were all created → new there; nobody is active in the week of Jan 7 → all four dormant on Jan 7
    expect(results[0].days).toEqual(['2024-01-07', '2024-01-14'])
    expect(byStatus(results)).toEqual({
      new: [0, 0],
      returning: [0, 0],
      resurrecting: [0, 0],
      dormant: [-4, 0],
    })
  })

  it('refuses a minute interval and an unknown lifecycle', async () => {
    const minute = await lifecycle({ interval: 'minute' })
    expect(minute.statusCode).toBe(400)
    expect(minute.json()).toMatchObject({ type: 'validation_error', attr: 'interval' })
    const toggle = await lifecycle({ lifecycleFilter: { toggledLifecycles: ['gone'] } })
    expect(toggle.json()).toMatchObject({ attr: 'lifecycleFilter__toggledLifecycles' })
  })

  it('test_lifecycle_hogql_query_hour-like: hourly lifecycles with hour labels', async () => {
    const res = await lifecycle({
      interval: 'hour',
      dateRange: { date_from: '2024-01-03T09:00:00', date_to: '2024-01-03T11:00:00' },
    })
    const { results } = res.json()
    // hours 09, 10, 11 on Jan 3, read from 08:00: anna's first pageview at 10:00 (new, dormant at 11:00);
    // carl's 11:00 pageview follows his Jan 2 one, which is before the window → resurrecting
    expect(results[0].days).toEqual(['2024-01-03 09:00:00', '2024-01-03 10:00:00', '2024-01-03 11:00:00'])
    expect(results[0].labels).toEqual(['3-Jan-2024 09:00', '3-Jan-2024 10:00', '3-Jan-2024 11:00'])
    expect(byStatus(results)).toEqual({
      new: [0, 1, 0],
      returning: [0, 0, 0],
      resurrecting: [0, 0, 1],
      dormant: [0, 0, -1],
    })
  })

  it('test_lifecycle_query_group_aggregation-like: lifecycles of groups, new when the group was created', async () => {
    const batch = [
      {
        event: '$groupidentify',
        timestamp: '2023-12-10T09:00:00Z',
        properties: { distinct_id: 'gx1', $group_type: 'company', $group_key: 'acme', $group_set: {} },
      },
      ev('$pageview', 'gx1', '2023-12-10T10:00:00Z', { $groups: { company: 'acme' } }),
      {
        event: '$groupidentify',
        timestamp: '2023-12-11T09:00:00Z',
        properties: { distinct_id: 'gx3', $group_type: 'company', $group_key: 'globex', $group_set: {} },
      },
      ev('$pageview', 'gx2', '2023-12-11T10:00:00Z', { $groups: { company: 'acme' } }),
      ev('$pageview', 'gx3', '2023-12-12T10:00:00Z', { $groups: { company: 'globex' } }),
    ]
    const ingested = await t.burrow.app.inject({
      method: 'POST',
      url: '/batch/',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ api_key: t.creds.project_api_key, batch }),
    })
    expect(ingested.statusCode, ingested.body).toBe(200)
    await t.burrow.ingest.flushBackground()
    const res = await lifecycle({
      dateRange: { date_from: '2023-12-10', date_to: '2023-12-12' },
      aggregation_group_type_index: 0,
    })
    expect(res.statusCode, res.body).toBe(200)
    // acme (created Dec 10) active Dec 10 and 11: new, returning, then dormant on the 12th
    // globex (created Dec 11) first active Dec 12, not its creation day: resurrecting
    expect(byStatus(res.json().results)).toEqual({
      new: [1, 0, 0],
      returning: [0, 1, 0],
      resurrecting: [0, 0, 1],
      dormant: [0, 0, -1],
    })
  })

  it('test_timezones-like: buckets and created_at by the project timezone (America/New_York)', async () => {
    const patched = await t.burrow.app.inject({
      method: 'PATCH',
      url: `/api/projects/${t.creds.project_id}/`,
      headers: t.auth,
      payload: { timezone: 'America/New_York' },
    })
    expect(patched.statusCode, patched.body).toBe(200)
    const res = await lifecycle()
    // New York is UTC−5: every event but dave's keeps its day; dave's 23:30 and 00:30 UTC are both on Jan 4
    // (18:30 and 19:30), so dave is new on the 4th and dormant on the 5th (no longer returning on the 5th)
    // anna: new 3, returning 4, dormant 5, resurrecting 6, dormant 7; bob: resurrecting 5, dormant 6;
    // carl: returning 3, dormant 4
    expect(byStatus(res.json().results)).toEqual({
      new: [1, 1, 0, 0, 0],
      returning: [1, 1, 0, 0, 0],
      resurrecting: [0, 0, 1, 1, 0],
      dormant: [0, -1, -2, -1, -1],
    })
    expect(res.json().results[0].days[0]).toBe('2024-01-03')
  })
})
