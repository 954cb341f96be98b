/**
 * SessionsQuery (mirrors of PostHog's test_sessions_query_runner.py behaviours), TrendsQuery cohort breakdowns
 * (with PostHog's "all users" id 0), and cache keys that change when the project's settings, actions or cohorts
 * do. Every expected number is worked out by hand from the fixture below.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../../helpers/app.js'
import { postQuery } from '../fixtures.js'
import { captureBatch, ev } from './capture.js'

let t: TestApp
const now = new Date('2024-01-20T12:00:00Z')

// s1 alice Jan 10 10:00–10:00:30: two pageviews and a purchase; s2 bob Jan 11 09:00: one pageview;
// s3 alice Jan 12 08:00–08:00:05: a pageview and an autocapture; s4 carl Jan 20 11:30 (inside the last 24 h)
const EVENTS = [
  ev('$pageview', 'alice', '2024-01-10T10:00:00Z', {
    $session_id: 's1',
    $current_url: 'https://a.test/home',
    $set: { plan: 'pro' },
  }),
  ev('purchase', 'alice', '2024-01-10T10:00:20Z', { $session_id: 's1', amount: 30 }),
  ev('$pageview', 'alice', '2024-01-10T10:00:30Z', { $session_id: 's1', $current_url: 'https://a.test/pricing' }),
  ev('$pageview', 'bob', '2024-01-11T09:00:00Z', {
    $session_id: 's2',
    $current_url: 'https://a.test/home',
    $set: { plan: 'free' },
  }),
  ev('$pageview', 'alice', '2024-01-12T08:00:00Z', { $session_id: 's3', $current_url: 'https://a.test/blog' }),
  ev('$autocapture', 'alice', '2024-01-12T08:00:05Z', { $session_id: 's3' }),
  ev('$pageview', 'carl', '2024-01-20T11:30:00Z', { $session_id: 's4', $current_url: 'https://a.test/docs' }),
]

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  await captureBatch(t, EVENTS)
}, 60_000)
afterAll(() => t.close())

const sessions = (extra: Record<string, unknown> = {}) => postQuery(t, { query: { kind: 'SessionsQuery', ...extra } })

async function api(method: 'POST' | 'PATCH', url: string, payload: unknown) {
  const res = await t.burrow.app.inject({ method, url, headers: t.auth, payload: payload as Record<string, unknown> })
  expect(res.statusCode, res.body).toBeLessThan(300)
  return res.json()
}

describe('SessionsQuery', () => {
  it('lists the sessions of the last 24 hours by default, as objects for "*"', async () => {
    const res = await sessions()
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body.columns).toEqual(['*'])
    expect(body.results).toHaveLength(1)
    expect(body.results[0][0]).toMatchObject({
      session_id: 's4',
      distinct_id: 'carl',
      $session_duration: 0,
      $entry_current_url: 'https://a.test/docs',
      $end_current_url: 'https://a.test/docs',
      $pageview_count: 1,
      $autocapture_count: 0,
      $screen_count: 0,
      $is_bounce: 1,
    })
    expect(body.results[0][0].$start_timestamp).toBe('2024-01-20T11:30:00Z')
    expect(body).toMatchObject({ hasMore: false, limit: 100, offset: 0 })
  })

  it('selects session fields over a range, ordered and paginated', async () => {
    const select = ['session_id', '$pageview_count', '$session_duration', '$is_bounce']
    const res = await sessions({
      select,
      after: '2024-01-01',
      before: '2024-01-15',
      orderBy: ['$start_timestamp ASC'],
      limit: 2,
    })
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body.columns).toEqual(select)
    // s1: 2 pageviews over 30 s (not a bounce: 0); s2: 1 pageview, 0 s (a bounce: 1); s3 is on the next page
    expect(body.results).toEqual([
      ['s1', 2, 30, 0],
      ['s2', 1, 0, 1],
    ])
    expect(body.hasMore).toBe(true)
    const next = (
      await sessions({
        select,
        after: '2024-01-01',
        before: '2024-01-15',
        orderBy: ['$start_timestamp ASC'],
        offset: 2,
      })
    ).json()
    // s3: 1 pageview and an autocapture over 5 s: not a bounce
    expect(next.results).toEqual([['s3', 1, 5, 0]])
  })

  it('filters on session fields, the person, a contained event, and one person', async () => {
    const base = { select: ['session_id'], after: 'all', orderBy: ['session_id'] }
    const long = await sessions({
      ...base,
      properties: [{ type: 'session', key: '$session_duration', value: 5, operator: 'gte' }],
    })
    expect(long.json().results).toEqual([['s1'], ['s3']])
    const pro = await sessions({ ...base, properties: [{ type: 'person', key: 'plan', value: 'pro' }] })
    expect(pro.json().results).toEqual([['s1'], ['s3']])
    const bought = await sessions({ ...base, event: 'purchase' })
    expect(bought.json().results).toEqual([['s1']])
    const big = await sessions({
      ...base,
      eventProperties: [{ type: 'event', key: 'amount', value: 20, operator: 'gt' }],
    })
    expect(big.json().results).toEqual([['s1']])
    const lookup = await postQuery(t, {
      query: { kind: 'HogQLQuery', query: "SELECT person_id FROM events WHERE distinct_id = 'bob' LIMIT 1" },
    })
    const bob = lookup.json().results[0][0] as string
    const own = await sessions({ ...base, personId: bob })
    expect(own.json().results).toEqual([['s2']])
  })

  it('aggregates with the non-aggregated columns as groups', async () => {
    const res = await sessions({
      select: ['distinct_id', 'count()', 'sum($pageview_count)'],
      after: 'all',
      orderBy: ['distinct_id'],
    })
    expect(res.statusCode, res.body).toBe(200)
    // alice: s1 and s3 (2 + 1 pageviews); bob: s2; carl: s4
    expect(res.json().results).toEqual([
      ['alice', 2, 3],
      ['bob', 1, 1],
      ['carl', 1, 1],
    ])
  })

  it('refuses bad input with the offending attribute', async () => {
    const limit = await sessions({ limit: 0 })
    expect(limit.statusCode).toBe(400)
    expect(limit.json()).toMatchObject({ type: 'validation_error', attr: 'limit' })
    const action = await sessions({ actionId: 987654 })
    expect(action.statusCode).toBe(400)
    expect(action.json().attr).toBe('actionId')
    const after = await sessions({ after: 'not a date' })
    expect(after.statusCode).toBe(400)
    expect(after.json().attr).toBe('after')
    const select = await sessions({ select: [42] })
    expect(select.statusCode).toBe(400)
    expect(select.json().attr).toBe('select')
  })
})

describe('TrendsQuery cohort breakdown', () => {
  it('breaks down by cohorts and by everyone ("all" or id 0), labelled with the cohort names', async () => {
    const cohort = await api('POST', `/api/projects/${t.creds.project_id}/cohorts/`, {
      name: 'Pro plan',
      filters: {
        properties: { type: 'AND', values: [{ type: 'person', key: 'plan', value: 'pro', operator: 'exact' }] },
      },
    })
    const trends = (breakdown: unknown) =>
      postQuery(t, {
        query: {
          kind: 'TrendsQuery',
          series: [{ kind: 'EventsNode', event: '$pageview' }],
          dateRange: { date_from: '2024-01-10', date_to: '2024-01-12' },
          interval: 'day',
          breakdownFilter: { breakdown_type: 'cohort', breakdown },
        },
      })
    const res = await trends([cohort.id, 0])
    expect(res.statusCode, res.body).toBe(200)
    const rows = res.json().results as { label: string; breakdown_value: unknown; data: number[] }[]
    // everyone: Jan 10 alice ×2, Jan 11 bob, Jan 12 alice; the pro cohort: alice's three
    expect(rows.map((r) => [r.breakdown_value, r.label, r.data])).toEqual([
      ['all', '$pageview - all users', [2, 1, 1]],
      [cohort.id, '$pageview - Pro plan', [2, 0, 1]],
    ])
    const same = (await trends(['all', cohort.id])).json().results as typeof rows
    expect(same.map((r) => r.breakdown_value)).toEqual(['all', cohort.id])
  })
})

describe('query cache keys', () => {
  const trends = (extra: Record<string, unknown> = {}) =>
    postQuery(t, {
      query: {
        kind: 'TrendsQuery',
        series: [{ kind: 'EventsNode', event: '$pageview' }],
        dateRange: { date_from: '2024-01-08', date_to: '2024-01-14' },
        interval: 'week',
        filterTestAccounts: true,
        ...extra,
      },
    })

  it('change with the test-account filters and the week start, so no stale answer is served', async () => {
    const first = (await trends()).json()
    const again = (await trends()).json()
    expect(again.is_cached).toBe(true)
    expect(again.cache_key).toBe(first.cache_key)
    // Sunday weeks: Jan 7–13 holds all four of Jan 10–12's pageviews
    expect(first.results[0].data).toEqual([4, 0])

    await api('PATCH', `/api/projects/${t.creds.project_id}/`, {
      test_account_filters: [{ key: '$current_url', value: 'blog', operator: 'not_icontains', type: 'event' }],
    })
    const filtered = (await trends()).json()
    expect(filtered.is_cached).toBe(false)
    expect(filtered.cache_key).not.toBe(first.cache_key)
    // alice's /blog pageview is now a test account's
    expect(filtered.results[0].data).toEqual([3, 0])

    await api('PATCH', `/api/projects/${t.creds.project_id}/`, { week_start_day: 1 })
    const monday = (await trends()).json()
    expect(monday.is_cached).toBe(false)
    expect(monday.cache_key).not.toBe(filtered.cache_key)
    // Monday weeks: Jan 8–14 holds the three pageviews left
    expect(monday.results[0].data).toEqual([3])
  })

  it('change when an action the query uses is edited', async () => {
    const action = await api('POST', `/api/projects/${t.creds.project_id}/actions/`, {
      name: 'Visited home',
      steps: [{ event: '$pageview', url: 'home', url_matching: 'contains' }],
    })
    const query = {
      kind: 'TrendsQuery',
      series: [{ kind: 'ActionsNode', id: action.id }],
      dateRange: { date_from: '2024-01-08', date_to: '2024-01-14' },
      interval: 'day',
      trendsFilter: { display: 'ActionsTable' },
    }
    const before = (await postQuery(t, { query })).json()
    // alice's /home (Jan 10) and bob's (Jan 11)
    expect(before.results[0].aggregated_value).toBe(2)
    await api('PATCH', `/api/projects/${t.creds.project_id}/actions/${action.id}/`, {
      steps: [{ event: '$pageview', url: 'pricing', url_matching: 'contains' }],
    })
    const after = (await postQuery(t, { query })).json()
    expect(after.cache_key).not.toBe(before.cache_key)
    expect(after.results[0].aggregated_value).toBe(1)
  })
})
