/**
 * TrendsQuery through the query API over events captured with fixed timestamps; every expected number is worked
 * out by hand from the fixture below (mirrors of PostHog's test_trends_query_runner.py behaviours).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../../helpers/app.js'
import { postQuery } from '../fixtures.js'
import { ev } from './capture.js'

let t: TestApp
// Wednesday 2024-01-10 12:00 UTC; `-7d` by day covers 2024-01-03 … 2024-01-10 (8 buckets)
const now = new Date('2024-01-10T12:00:00Z')

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: '/batch/',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({
      api_key: t.creds.project_api_key,
      batch: [
        ev('$pageview', 'carl', '2023-12-31T23:00:00Z'),
        ev('$pageview', 'bob', '2024-01-02T12:00:00Z'),
        ev('$pageview', 'anna', '2024-01-04T10:00:00Z', { $browser: 'Chrome', price: 10 }),
        ev('$pageview', 'anna', '2024-01-04T11:00:00Z', { $browser: 'Chrome', price: 20 }),
        ev('$pageview', 'bob', '2024-01-05T09:00:00Z', { $browser: 'Firefox', price: 5 }),
        ev('$pageview', 'anna', '2024-01-09T08:00:00Z', { $browser: 'Safari' }),
        ev('signup', 'carl', '2024-01-09T09:00:00Z', { plan: 'pro' }),
      ],
    }),
  })
  expect(res.statusCode, res.body).toBe(200)
  await t.burrow.ingest.flushBackground()
}, 60_000)
afterAll(() => t.close())

const trends = (
  extra: Record<string, unknown> = {},
  series: unknown[] = [{ kind: 'EventsNode', event: '$pageview' }],
) => postQuery(t, { query: { kind: 'TrendsQuery', series, dateRange: { date_from: '-7d' }, ...extra } })

const DAYS = [
  '2024-01-03',
  '2024-01-04',
  '2024-01-05',
  '2024-01-06',
  '2024-01-07',
  '2024-01-08',
  '2024-01-09',
  '2024-01-10',
]

describe('TrendsQuery', () => {
  it('test_trends_query_formula-like basics: counts per day with PostHog labels and days', async () => {
    const res = await trends()
    expect(res.statusCode, res.body).toBe(200)
    const [row] = res.json().results
    // in range: anna ×2 on the 4th, bob on the 5th, anna on the 9th (bob on the 2nd and carl on Dec 31 are before)
    expect(row.data).toEqual([0, 2, 1, 0, 0, 0, 1, 0])
    expect(row.count).toBe(4)
    expect(row.days).toEqual(DAYS)
    expect(row.labels[0]).toBe('3-Jan-2024')
    expect(row.label).toBe('$pageview')
    expect(row.action).toMatchObject({ id: '$pageview', type: 'events', order: 0, name: '$pageview', math: 'total' })
  })

  it('counts distinct persons per day with dau', async () => {
    const res = await trends({}, [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }])
    // the 4th: anna (twice) = 1; the 5th: bob; the 9th: anna
    expect(res.json().results[0].data).toEqual([0, 1, 1, 0, 0, 0, 1, 0])
  })

  it('sums a property with math sum', async () => {
    const res = await trends({}, [{ kind: 'EventsNode', event: '$pageview', math: 'sum', math_property: 'price' }])
    // 10 + 20 on the 4th, 5 on the 5th, no price on the 9th
    expect(res.json().results[0].data).toEqual([0, 30, 5, 0, 0, 0, 0, 0])
  })

  it('counts each person once, on their first-ever event, with first_time_for_user', async () => {
    const res = await trends({}, [{ kind: 'EventsNode', event: '$pageview', math: 'first_time_for_user' }])
    // anna's first pageview is on the 4th; bob's (Jan 2) and carl's (Dec 31) are before the range
    expect(res.json().results[0].data).toEqual([0, 1, 0, 0, 0, 0, 0, 0])
  })

  it('breaks down by a property, folding values past breakdown_limit into the other bucket', async () => {
    const res = await trends({ breakdownFilter: { breakdown: '$browser', breakdown_limit: 1 } })
    const body = res.json()
    // totals: Chrome 2, Firefox 1, Safari 1 → Chrome kept; Firefox (5th) and Safari (9th) become "other"
    expect(body.results.map((r: { breakdown_value: string }) => r.breakdown_value)).toEqual([
      'Chrome',
      '$$_posthog_breakdown_other_$$',
    ])
    expect(body.results[0].data).toEqual([0, 2, 0, 0, 0, 0, 0, 0])
    expect(body.results[1].data).toEqual([0, 0, 1, 0, 0, 0, 1, 0])
    expect(body.hasMore).toBe(true)
  })

  it('puts events without the property in the null bucket', async () => {
    const res = await trends({ breakdownFilter: { breakdown: 'price' } })
    const values = res
      .json()
      .results.map((r: { breakdown_value: string; count: number }) => [r.breakdown_value, r.count])
    // prices 10, 20, 5 once each (ordered by count then value as text), then the Safari pageview without a price
    expect(values).toEqual([
      ['10', 1],
      ['20', 1],
      ['5', 1],
      ['$$_posthog_breakdown_null_$$', 1],
    ])
  })

  it('compares with the previous period', async () => {
    const res = await trends({ compareFilter: { compare: true } })
    const [current, previous] = res.json().results
    expect(current).toMatchObject({ compare: true, compare_label: 'current', count: 4 })
    // previous period: Dec 26 … Jan 2; carl on Dec 31 (index 5), bob on Jan 2 (index 7)
    expect(previous.compare_label).toBe('previous')
    expect(previous.days[0]).toBe('2023-12-26')
    expect(previous.data).toEqual([0, 0, 0, 0, 0, 1, 0, 1])
  })

  it('evaluates formulas over series', async () => {
    const res = await trends({ trendsFilter: { formula: 'A+B' } }, [
      { kind: 'EventsNode', event: '$pageview' },
      { kind: 'EventsNode', event: 'signup' },
    ])
    const [row] = res.json().results
    // pageviews [0,2,1,0,0,0,1,0] + signups (carl on the 9th)
    expect(row.data).toEqual([0, 2, 1, 0, 0, 0, 2, 0])
    expect(row.label).toBe('Formula (A+B)')
    expect(row.action).toBeNull()
  })

  it('gives one aggregated value on BoldNumber and running totals on cumulative graphs', async () => {
    const bold = await trends({ trendsFilter: { display: 'BoldNumber' } })
    expect(bold.json().results[0].aggregated_value).toBe(4)
    const cumulative = await trends({ trendsFilter: { display: 'ActionsLineGraphCumulative' } })
    expect(cumulative.json().results[0].data).toEqual([0, 2, 3, 3, 3, 3, 4, 4])
  })

  it('filters by global properties', async () => {
    const res = await trends({ properties: [{ type: 'event', key: '$browser', value: 'Chrome', operator: 'exact' }] })
    expect(res.json().results[0].count).toBe(2)
  })

  it('refuses an unknown math, a malformed series and an interval too fine for the range', async () => {
    const math = await trends({}, [{ kind: 'EventsNode', event: '$pageview', math: 'nope' }])
    expect(math.statusCode).toBe(400)
    expect(math.json()).toMatchObject({ type: 'validation_error', attr: 'series__0__math' })
    const series = await trends({}, [{ kind: 'Nope' }])
    expect(series.json()).toMatchObject({ attr: 'series__0__kind' })
    const fine = await postQuery(t, {
      query: {
        kind: 'TrendsQuery',
        series: [{ kind: 'EventsNode', event: 'x' }],
        interval: 'minute',
        dateRange: { date_from: '-30d' },
      },
    })
    // 30 days by minute = 43,200 points, more than the 10,000 allowed
    expect(fine.statusCode).toBe(400)
    expect(fine.json().attr).toBe('interval')
  })
})

describe('StickinessQuery', () => {
  it('test_stickiness_runs-like: counts persons by the number of days they were active', async () => {
    const res = await postQuery(t, {
      query: {
        kind: 'StickinessQuery',
        series: [{ kind: 'EventsNode', event: '$pageview' }],
        dateRange: { date_from: '-7d' },
      },
    })
    expect(res.statusCode, res.body).toBe(200)
    const [row] = res.json().results
    // in Jan 3–10: anna active on 2 days (4th, 9th), bob on 1 day (5th)
    expect(row.data).toEqual([1, 1, 0, 0, 0, 0, 0, 0])
    expect(row.count).toBe(2)
    expect(row.days).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    expect(row.labels.slice(0, 2)).toEqual(['1 day', '2 days'])
    const cumulative = await postQuery(t, {
      query: {
        kind: 'StickinessQuery',
        series: [{ kind: 'EventsNode', event: '$pageview' }],
        dateRange: { date_from: '-7d' },
        stickinessFilter: { computedAs: 'cumulative' },
      },
    })
    // 1 or more days: both; 2 or more: anna
    expect(cumulative.json().results[0].data.slice(0, 3)).toEqual([2, 1, 0])
    expect(cumulative.json().results[0].labels[0]).toBe('1 day or more')
  })
})
