/**
 * The persons behind one histogram bin of a trends breakdown (`breakdown_histogram_bin_count`): InsightActorsQuery
 * with `breakdown` given as the bin's "[lo,hi]" label. The bins are worked out by hand from the fixture: ClickHouse's
 * `quantiles` interpolates linearly between the sorted values, and PostHog rounds the edges to two decimals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../../helpers/app.js'
import { postQuery } from '../fixtures.js'
import { captureBatch, ev } from './capture.js'

const NULL = '$$_posthog_breakdown_null_$$'
let t: TestApp
const now = new Date('2024-03-10T12:00:00Z')

// one pageview each on March 5 with amounts 10, 20, 30, 40, 50; p6 has none; p7's pageview is outside the range
const EVENTS = [
  ev('$pageview', 'p1', '2024-03-05T10:00:00Z', { amount: 10 }),
  ev('$pageview', 'p2', '2024-03-05T11:00:00Z', { amount: 20 }),
  ev('$pageview', 'p3', '2024-03-05T12:00:00Z', { amount: 30 }),
  ev('$pageview', 'p4', '2024-03-05T13:00:00Z', { amount: 40 }),
  ev('$pageview', 'p5', '2024-03-05T14:00:00Z', { amount: 50 }),
  ev('$pageview', 'p6', '2024-03-05T15:00:00Z'),
  ev('$pageview', 'p7', '2024-02-20T10:00:00Z', { amount: 1000 }),
]

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  await captureBatch(t, EVENTS)
}, 60_000)
afterAll(() => t.close())

const trends = (bins: number) => ({
  kind: 'TrendsQuery',
  series: [{ kind: 'EventsNode', event: '$pageview' }],
  dateRange: { date_from: '2024-03-01', date_to: '2024-03-07' },
  interval: 'day',
  breakdownFilter: { breakdown: 'amount', breakdown_type: 'event', breakdown_histogram_bin_count: bins },
})

async function actors(bins: number, breakdown: unknown, day?: string) {
  const res = await postQuery(t, {
    query: {
      kind: 'ActorsQuery',
      source: { kind: 'InsightActorsQuery', source: trends(bins), series: 0, breakdown, day },
      select: ['actor'],
      orderBy: ['person'],
    },
  })
  return res
}

async function ids(bins: number, breakdown: unknown, day?: string) {
  const res = await actors(bins, breakdown, day)
  expect(res.statusCode, res.body).toBe(200)
  return (res.json().results as [{ distinct_ids: string[] }][]).map((r) => r[0].distinct_ids[0]).sort()
}

describe('InsightActorsQuery on a trends histogram bin', () => {
  it('bins the insight over quantile edges: 2 bins of 10 … 50 are [10,30) and [30,50]', async () => {
    // quantiles(0, 0.5, 1) of 10, 20, 30, 40, 50 = 10, 30, 50 (p7's 1000 is outside the range)
    const res = await postQuery(t, { query: trends(2) })
    expect(res.statusCode, res.body).toBe(200)
    const totals = Object.fromEntries(
      (res.json().results as { breakdown_value: string; count: number }[]).map((r) => [r.breakdown_value, r.count]),
    )
    expect(totals).toEqual({ '[10.0,30.0]': 2, '[30.0,50.0]': 3, [NULL]: 1 })
  })

  it("lists the persons of one bin, the last bin's upper edge included as the insight counts it", async () => {
    expect(await ids(2, '[10.0,30.0]')).toEqual(['p1', 'p2'])
    // PostHog's own actors query takes every bin as [lo, hi) and would leave p5 out of the count of 3 it shows
    expect(await ids(2, '[30.0,50.0]')).toEqual(['p3', 'p4', 'p5'])
    expect(await ids(2, NULL)).toEqual(['p6'])
    // one day of the series: the events of March 5 only
    expect(await ids(2, '[10.0,30.0]', '2024-03-05')).toEqual(['p1', 'p2'])
    expect(await ids(2, '[10.0,30.0]', '2024-03-04')).toEqual([])
  })

  it('matches labels with fractional edges (3 bins: 23.33 and 36.67)', async () => {
    // levels 0, 1/3, 2/3, 1 over 5 sorted values: positions 0, 1.33, 2.67, 4 → 10, 23.33, 36.67, 50
    const res = await postQuery(t, { query: trends(3) })
    expect(res.statusCode, res.body).toBe(200)
    const labels = (res.json().results as { breakdown_value: string }[]).map((r) => r.breakdown_value).sort()
    expect(labels).toEqual([NULL, '[10.0,23.33]', '[23.33,36.67]', '[36.67,50.0]'].sort())
    expect(await ids(3, '[10.0,23.33]')).toEqual(['p1', 'p2'])
    expect(await ids(3, '[23.33,36.67]')).toEqual(['p3'])
    expect(await ids(3, '[36.67,50.0]')).toEqual(['p4', 'p5'])
  })

  it("takes PostHog's every-value placeholder as no breakdown condition", async () => {
    expect(await ids(2, '["",""]')).toEqual(['p1', 'p2', 'p3', 'p4', 'p5', 'p6'])
  })

  it('refuses a breakdown value that is not a bin', async () => {
    for (const bad of ['Chrome', '[a,b]', '[1]', '["1","2"]']) {
      const res = await actors(2, bad)
      expect(res.statusCode, `${bad}: ${res.body}`).toBe(400)
      expect(res.json()).toMatchObject({ type: 'validation_error', attr: 'source__breakdown' })
    }
  })
})
