/**
 * RetentionQuery through the query API over events captured with fixed timestamps; every expected number is worked
 * out by hand from the fixture below (mirrors of PostHog's test_retention_query_runner.py behaviours).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../../helpers/app.js'
import { postQuery } from '../fixtures.js'
import { captureBatch, ev } from './capture.js'

let t: TestApp
const now = new Date('2024-03-10T12:00:00Z')

// Sunday weeks (UTC) from Jan 7: w0 Jan 7, w1 Jan 14, w2 Jan 21, w3 Jan 28, w4 Feb 4, w5 Feb 11, w6 Feb 18, w7 Feb 25
// pageviews by week:
//   anna w0 (Chrome), w1, w3 (twice), w7
//   bob  before the range (Jan 6), w0 (Sat Jan 13 23:00), w1 (Sun Jan 14 00:30: the next week)
//   carl w2, w4 (Chrome), after the range (Mar 3)
//   dave signup w0, pageview w1
const EVENTS = [
  ev('$pageview', 'bob', '2024-01-06T12:00:00Z'),
  ev('$pageview', 'anna', '2024-01-08T10:00:00Z', { $browser: 'Chrome' }),
  ev('signup', 'dave', '2024-01-09T10:00:00Z'),
  ev('$pageview', 'bob', '2024-01-13T23:00:00Z'),
  ev('$pageview', 'bob', '2024-01-14T00:30:00Z'),
  ev('$pageview', 'anna', '2024-01-16T10:00:00Z'),
  ev('$pageview', 'dave', '2024-01-20T10:00:00Z'),
  ev('$pageview', 'carl', '2024-01-22T10:00:00Z'),
  ev('$pageview', 'anna', '2024-01-30T10:00:00Z'),
  ev('$pageview', 'anna', '2024-02-01T10:00:00Z'),
  ev('$pageview', 'carl', '2024-02-05T10:00:00Z', { $browser: 'Chrome' }),
  ev('$pageview', 'anna', '2024-02-27T10:00:00Z'),
  ev('$pageview', 'carl', '2024-03-03T10:00:00Z'),
]

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  await captureBatch(t, EVENTS)
}, 60_000)
afterAll(() => t.close())

const retention = (filter: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  postQuery(t, {
    query: {
      kind: 'RetentionQuery',
      dateRange: { date_from: '2024-01-07', date_to: '2024-02-25' },
      retentionFilter: { period: 'Week', totalIntervals: 8, ...filter },
      ...extra,
    },
  })

const grid = (results: { values: { count: number }[] }[]) => results.map((r) => r.values.map((v) => v.count))
const zeros = [0, 0, 0, 0, 0, 0, 0, 0]
const only = (n: number) => [n, 0, 0, 0, 0, 0, 0, 0]

describe('RetentionQuery', () => {
  it('test_retention_period_weekly-like: 8 weekly cohorts of recurring pageviews', async () => {
    const res = await retention({ retentionType: 'retention_recurring' })
    expect(res.statusCode, res.body).toBe(200)
    const { results } = res.json()
    // each actor is in the cohort of every week they were active, and returns k weeks later when active then:
    // w0 {anna, bob}: both back in w1 (k1), anna in w3 (k3) and w7 (k7)
    // w1 {anna, bob, dave}: anna in w3 (k2) and w7 (k6)
    // w2 {carl}: back in w4 (k2); carl's Mar 3 pageview is after the range
    // w3 {anna}: w7 (k4); w4 {carl}; w5, w6 nobody; w7 {anna}
    expect(grid(results)).toEqual([
      [2, 2, 0, 1, 0, 0, 0, 1],
      [3, 0, 1, 0, 0, 0, 1, 0],
      [1, 0, 1, 0, 0, 0, 0, 0],
      [1, 0, 0, 0, 1, 0, 0, 0],
      only(1),
      zeros,
      zeros,
      only(1),
    ])
    expect(results[0]).toMatchObject({ label: 'Week 0', date: '2024-01-07T00:00:00Z', breakdown_value: null })
    expect(results[7].date).toBe('2024-02-25T00:00:00Z')
    expect(results[0].values[3]).toEqual({ count: 1, label: 'Week 3' })
  })

  it('takes the last totalIntervals periods ending with date_to when there is no date_from', async () => {
    const res = await retention({}, { dateRange: { date_to: '2024-02-25' } })
    // a missing retentionType is recurring; the 8 weeks ending with Feb 25's are the same w0 … w7
    expect(res.json().results[0].date).toBe('2024-01-07T00:00:00Z')
    expect(grid(res.json().results)[1]).toEqual([3, 0, 1, 0, 0, 0, 1, 0])
  })

  it('test_day_interval-like: daily cohorts across midnight', async () => {
    const res = await retention(
      { period: 'Day', totalIntervals: 3 },
      { dateRange: { date_from: '2024-01-13', date_to: '2024-01-14' } },
    )
    const { results } = res.json()
    // bob's pageviews at 23:00 on the 13th and 00:30 on the 14th: cohort Jan 13 {bob} back on day 1;
    // cohort Jan 14 {bob}; nobody else views a page on those days
    expect(grid(results)).toEqual([
      [1, 1, 0],
      [1, 0, 0],
    ])
    expect(results[1]).toMatchObject({ label: 'Day 1', date: '2024-01-14T00:00:00Z' })
    expect(results[0].values.map((v: { label: string }) => v.label)).toEqual(['Day 0', 'Day 1', 'Day 2'])
  })

  it('starts at the first event with date_from "all"', async () => {
    const res = await retention({ totalIntervals: 2 }, { dateRange: { date_from: 'all', date_to: '2024-01-13' } })
    // the first event (bob, Sat Jan 6) is in the week of Dec 31; weeks Dec 31 and Jan 7 up to Jan 13:
    // Dec 31 {bob} back in the week of Jan 7 (Jan 13 23:00); Jan 7 {anna, bob}, no later week in the range
    expect(res.json().results.map((r: { date: string }) => r.date)).toEqual([
      '2023-12-31T00:00:00Z',
      '2024-01-07T00:00:00Z',
    ])
    expect(grid(res.json().results)).toEqual([
      [1, 1],
      [2, 0],
    ])
  })

  it('test_first_time_retention-like: actors in the cohort of their first-ever target event', async () => {
    const res = await retention({ retentionType: 'retention_first_time' })
    // anna first w0; dave first w1; carl first w2; bob's first pageview (Jan 6) is before the range: no cohort
    expect(grid(res.json().results)).toEqual([
      [1, 1, 0, 1, 0, 0, 0, 1],
      only(1),
      [1, 0, 1, 0, 0, 0, 0, 0],
      zeros,
      zeros,
      zeros,
      zeros,
      zeros,
    ])
  })

  it('first time vs first-ever occurrence with a filtered target entity', async () => {
    const chrome = [{ type: 'event', key: '$browser', value: 'Chrome', operator: 'exact' }]
    const targetEntity = { id: '$pageview', type: 'events', properties: chrome }
    const firstTime = await retention({ retentionType: 'retention_first_time', targetEntity })
    // first Chrome pageview: anna w0 (back w1, w3, w7), carl w4 (his Mar 3 return is out of range)
    const ft = grid(firstTime.json().results)
    expect(ft[0]).toEqual([1, 1, 0, 1, 0, 0, 0, 1])
    expect(ft[4]).toEqual(only(1))
    const firstEver = await retention({ retentionType: 'retention_first_ever_occurrence', targetEntity })
    // carl's first-ever pageview (w2) is not on Chrome, so carl has no cohort; anna's (w0) is
    const fe = grid(firstEver.json().results)
    expect(fe[0]).toEqual([1, 1, 0, 1, 0, 0, 0, 1])
    expect(fe[4]).toEqual(zeros)
  })

  it('test_retention_with_different_target_and_returning_entities-like', async () => {
    const res = await retention({
      targetEntity: { id: 'signup', type: 'events' },
      returningEntity: { id: '$pageview', type: 'events' },
    })
    // dave signs up in w0 and views a page in w1
    expect(grid(res.json().results)[0]).toEqual([1, 1, 0, 0, 0, 0, 0, 0])
    expect(grid(res.json().results)[1]).toEqual(zeros)
  })

  it('test_retention_action_start_point-like: an action as the target entity', async () => {
    const created = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/actions/`,
      headers: t.auth,
      payload: { name: 'Signed up', steps: [{ event: 'signup' }] },
    })
    expect(created.statusCode, created.body).toBe(201)
    const res = await retention({ targetEntity: { id: created.json().id, type: 'actions' } })
    // the action matches dave's w0 signup; dave views a page in w1
    expect(grid(res.json().results)[0]).toEqual([1, 1, 0, 0, 0, 0, 0, 0])
    const missing = await retention({ targetEntity: { id: 999_999, type: 'actions' } })
    expect(missing.json()).toMatchObject({ attr: 'retentionFilter__targetEntity__id' })
  })

  it('counts returns with minimumOccurrences and cumulatively', async () => {
    const min2 = grid((await retention({ minimumOccurrences: 2 })).json().results)
    // only anna's w3 has two pageviews: w0 {anna, bob} → k3; w1 {anna, bob, dave} → k2
    expect(min2[0]).toEqual([2, 0, 0, 1, 0, 0, 0, 0])
    expect(min2[1]).toEqual([3, 0, 1, 0, 0, 0, 0, 0])
    const cumulative = grid((await retention({ cumulative: true })).json().results)
    // w0: anna's last return is k7 (counted at k0 … k7), bob's k1 (k0, k1)
    expect(cumulative[0]).toEqual([2, 2, 1, 1, 1, 1, 1, 1])
  })

  it('test_retention_breakdown-like: cohorts per event property value, with the other bucket', async () => {
    const res = await retention({}, { breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } })
    const { results } = res.json()
    // (actor, value) pairs: '' holds bob w0/w1, anna w1/w3/w7, dave w1, carl w2; Chrome holds anna w0, carl w4
    // cohort sizes: '' 1 + 3 + 1 + 1 + 1 = 7, Chrome 2 → '' first
    expect(results).toHaveLength(16)
    expect(results[0]).toMatchObject({ breakdown_value: '', label: 'Week 0' })
    // '' w0 {bob}: back in w1; '' w1 {anna, bob, dave}: anna in w3 (k2), w7 (k6)
    expect(grid(results.slice(0, 2))).toEqual([
      [1, 1, 0, 0, 0, 0, 0, 0],
      [3, 0, 1, 0, 0, 0, 1, 0],
    ])
    expect(results[8].breakdown_value).toBe('Chrome')
    expect(grid(results.slice(8))[4]).toEqual(only(1))
    const limited = await retention({}, { breakdownFilter: { breakdown: '$browser', breakdown_limit: 1 } })
    expect(limited.json().results[8].breakdown_value).toBe('$$_posthog_breakdown_other_$$')
  })

  it('refuses an unknown period and retention type', async () => {
    const period = await retention({ period: 'Year' })
    expect(period.statusCode).toBe(400)
    expect(period.json()).toMatchObject({ type: 'validation_error', attr: 'retentionFilter__period' })
    const type = await retention({ retentionType: 'nope' })
    expect(type.json().attr).toBe('retentionFilter__retentionType')
  })
})
