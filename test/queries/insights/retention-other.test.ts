/**
 * RetentionQuery breakdowns past `breakdown_limit`: PostHog ranks the values by their cohorts' total size (the
 * actors at interval 0 of every cohort), then by value, and folds the rest into `$$_posthog_breakdown_other_$$`;
 * the actors of that bucket are those of the folded values. Every number below is worked out by hand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../../helpers/app.js'
import { postQuery } from '../fixtures.js'
import { captureBatch, ev } from './capture.js'

const OTHER = '$$_posthog_breakdown_other_$$'
let t: TestApp
const now = new Date('2024-05-10T12:00:00Z')
const day = (d: number) => `2024-05-0${d + 1}T10:00:00Z`
const pv = (id: string, d: number, browser?: string) =>
  ev('$pageview', id, day(d), browser ? { $browser: browser } : {})

// days d0 = May 1, d1, d2; every person keeps one browser
//   Chrome  p1 d0 d1 · p2 d0 · p3 d1 d2      cohort sizes 2 + 2 + 1 = 5
//   Firefox p4 d0 d2 · p5 d0                2 + 0 + 1 = 3
//   Safari  p6 d0 d1                        1 + 1     = 2
//   (none)  p8 d0 d1  (value '')            1 + 1     = 2
//   Edge    p7 d2                                   1 = 1
// ranked: Chrome, Firefox, '' (ties with Safari, first by value), Safari, Edge
const EVENTS = [
  pv('p1', 0, 'Chrome'),
  pv('p1', 1, 'Chrome'),
  pv('p2', 0, 'Chrome'),
  pv('p3', 1, 'Chrome'),
  pv('p3', 2, 'Chrome'),
  pv('p4', 0, 'Firefox'),
  pv('p4', 2, 'Firefox'),
  pv('p5', 0, 'Firefox'),
  pv('p6', 0, 'Safari'),
  pv('p6', 1, 'Safari'),
  pv('p7', 2, 'Edge'),
  pv('p8', 0),
  pv('p8', 1),
]

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  await captureBatch(t, EVENTS)
}, 60_000)
afterAll(() => t.close())

const source = (limit: number, filter: Record<string, unknown> = {}) => ({
  kind: 'RetentionQuery',
  dateRange: { date_from: '2024-05-01', date_to: '2024-05-03' },
  retentionFilter: { period: 'Day', totalIntervals: 3, ...filter },
  breakdownFilter: { breakdown: '$browser', breakdown_type: 'event', breakdown_limit: limit },
})

async function rows(limit: number, filter: Record<string, unknown> = {}) {
  const res = await postQuery(t, { query: source(limit, filter) })
  expect(res.statusCode, res.body).toBe(200)
  const results = res.json().results as { breakdown_value: string; label: string; values: { count: number }[] }[]
  // breakdown value → its cohorts' counts
  const out = new Map<string, number[][]>()
  for (const r of results)
    out.set(r.breakdown_value, [...(out.get(r.breakdown_value) ?? []), r.values.map((v) => v.count)])
  return { results, out }
}

async function actors(limit: number, breakdown: unknown, interval?: number) {
  const res = await postQuery(t, {
    query: {
      kind: 'ActorsQuery',
      source: { kind: 'InsightActorsQuery', source: source(limit), breakdown, interval },
      select: ['actor'],
      orderBy: ['person'],
    },
  })
  expect(res.statusCode, res.body).toBe(200)
  return (res.json().results as [{ distinct_ids: string[] }][]).map((r) => r[0].distinct_ids[0]).sort()
}

describe('RetentionQuery other breakdown bucket', () => {
  it('folds the values past breakdown_limit into the other bucket, listed last', async () => {
    const { results, out } = await rows(2)
    expect([...out.keys()]).toEqual(['Chrome', 'Firefox', OTHER])
    expect(results.map((r) => r.label)).toEqual([
      'Day 0',
      'Day 1',
      'Day 2',
      'Day 0',
      'Day 1',
      'Day 2',
      'Day 0',
      'Day 1',
      'Day 2',
    ])
    // Chrome: d0 {p1, p2}, p1 back on d1; d1 {p1, p3}, p3 back on d2; d2 {p3}
    expect(out.get('Chrome')).toEqual([
      [2, 1, 0],
      [2, 1, 0],
      [1, 0, 0],
    ])
    // Firefox: d0 {p4, p5}, p4 back on d2 (k2); d2 {p4}
    expect(out.get('Firefox')).toEqual([
      [2, 0, 1],
      [0, 0, 0],
      [1, 0, 0],
    ])
    // other = '' (p8) + Safari (p6) + Edge (p7): d0 {p6, p8} both back on d1; d1 {p6, p8}; d2 {p7}
    expect(out.get(OTHER)).toEqual([
      [2, 2, 0],
      [2, 0, 0],
      [1, 0, 0],
    ])
  })

  it('breaks a tie of cohort sizes by value', async () => {
    // limit 3 keeps '' (2) before Safari (2); Safari and Edge fold
    const { out } = await rows(3)
    expect([...out.keys()]).toEqual(['Chrome', 'Firefox', '', OTHER])
    expect(out.get(OTHER)).toEqual([
      [1, 1, 0],
      [1, 0, 0],
      [1, 0, 0],
    ])
  })

  it('has no other bucket when every value fits', async () => {
    const { out } = await rows(5)
    expect([...out.keys()]).toEqual(['Chrome', 'Firefox', '', 'Safari', 'Edge'])
    expect(await actors(5, OTHER)).toEqual([])
  })

  it('keeps the other bucket in cumulative retention', async () => {
    // cumulative: an actor counts at every interval up to their last return — p4 (d0, back d2) fills k1 too
    const { out } = await rows(2, { cumulative: true })
    expect(out.get('Firefox')?.[0]).toEqual([2, 1, 1])
    expect(out.get(OTHER)?.[0]).toEqual([2, 2, 0])
  })

  it('lists the actors of the other bucket: those of the folded values', async () => {
    expect(await actors(2, OTHER)).toEqual(['p6', 'p7', 'p8'])
    expect(await actors(2, OTHER, 0)).toEqual(['p6', 'p8'])
    expect(await actors(2, OTHER, 2)).toEqual(['p7'])
    expect(await actors(2, [OTHER], 1)).toEqual(['p6', 'p8'])
    expect(await actors(3, OTHER)).toEqual(['p6', 'p7'])
    // a value shown on its own is still listed by its value
    expect(await actors(2, 'Firefox', 0)).toEqual(['p4', 'p5'])
  })
})
