/**
 * RetentionQuery broken down by cohorts and by several breakdowns, as PostHog's retention runner does it: each
 * cohort (from `breakdown_type: "cohort"` or the cohort entries of `breakdowns`) is one breakdown value, its id as
 * text ("0" for all users), the activity of its members only (an actor may be in several); of several property
 * breakdowns only the first is used. Values are ranked by their cohorts' total size, then by value, past
 * `breakdown_limit` into the other bucket. Every expected number is worked out by hand from the fixture below.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../../helpers/app.js'
import { postQuery } from '../fixtures.js'
import { captureBatch, ev } from './capture.js'

let t: TestApp
const now = new Date('2024-01-10T12:00:00Z')

// daily pageviews, d0 = Jan 1 … d3 = Jan 4 (UTC); persons' properties:
//   p1 plan pro,  country DE: d0 d1 d3
//   p2 plan pro,  country US: d1 d2
//   p3 plan free, country DE: d0 d2
//   p4 (no plan), country US: d3
const day = (d: number) => `2024-01-0${d + 1}T10:00:00Z`
const EVENTS = [
  ev('$pageview', 'p1', day(0), { $set: { plan: 'pro', country: 'DE' } }),
  ev('$pageview', 'p3', day(0), { $set: { plan: 'free', country: 'DE' } }),
  ev('$pageview', 'p1', day(1)),
  ev('$pageview', 'p2', day(1), { $set: { plan: 'pro', country: 'US' } }),
  ev('$pageview', 'p2', day(2)),
  ev('$pageview', 'p3', day(2)),
  ev('$pageview', 'p1', day(3)),
  ev('$pageview', 'p4', day(3), { $set: { country: 'US' } }),
]

let pro: number
let de: number

async function cohort(name: string, key: string, value: string): Promise<number> {
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: `/api/projects/${t.creds.project_id}/cohorts/`,
    headers: t.auth,
    payload: {
      name,
      filters: { properties: { type: 'AND', values: [{ type: 'person', key, value, operator: 'exact' }] } },
    },
  })
  expect(res.statusCode, res.body).toBe(201)
  return res.json().id as number
}

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  await captureBatch(t, EVENTS)
  pro = await cohort('Pro plan', 'plan', 'pro')
  de = await cohort('Germany', 'country', 'DE')
}, 60_000)
afterAll(() => t.close())

const retention = (breakdownFilter: Record<string, unknown>) =>
  postQuery(t, {
    query: {
      kind: 'RetentionQuery',
      dateRange: { date_from: '2024-01-01', date_to: '2024-01-04' },
      retentionFilter: { period: 'Day', totalIntervals: 4, retentionType: 'retention_recurring' },
      breakdownFilter,
    },
  })

type Row = { breakdown_value: unknown; label: string; values: { count: number }[] }
/** breakdown value → its four daily cohorts' counts, in the order of the results */
function byValue(rows: Row[]): [unknown, number[][]][] {
  const out: [unknown, number[][]][] = []
  for (const row of rows) {
    const last = out[out.length - 1]
    const counts = row.values.map((v) => v.count)
    if (last && last[0] === row.breakdown_value) last[1].push(counts)
    else out.push([row.breakdown_value, [counts]])
  }
  return out
}

// everyone: d0 {p1, p3} → p1 back d1, d3, p3 back d2; d1 {p1, p2} → p2 d2, p1 d3; d2 {p2, p3}; d3 {p1, p4}
const EVERYONE = [
  [2, 1, 1, 1],
  [2, 1, 1, 0],
  [2, 0, 0, 0],
  [2, 0, 0, 0],
]
// Pro plan {p1, p2}: d0 {p1} → d1, d3; d1 {p1, p2} → p2 d2, p1 d3; d2 {p2}; d3 {p1} — cohort sizes 5
const PRO = [
  [1, 1, 0, 1],
  [2, 1, 1, 0],
  [1, 0, 0, 0],
  [1, 0, 0, 0],
]
// Germany {p1, p3}: d0 {p1, p3} as everyone's; d1 {p1} → d3; d2 {p3}; d3 {p1} — cohort sizes 5
const GERMANY = [
  [2, 1, 1, 1],
  [1, 0, 1, 0],
  [1, 0, 0, 0],
  [1, 0, 0, 0],
]

describe('RetentionQuery cohort breakdown', () => {
  it('counts each cohort on its members only, everyone as "0", ranked by cohort size then id', async () => {
    const res = await retention({ breakdown_type: 'cohort', breakdown: [pro, de, 'all'] })
    expect(res.statusCode, res.body).toBe(200)
    const rows = res.json().results as Row[]
    expect(rows).toHaveLength(12)
    expect(rows.slice(0, 4).map((r) => r.label)).toEqual(['Day 0', 'Day 1', 'Day 2', 'Day 3'])
    // everyone 8, then the two cohorts of 5 by their ids as text
    const [first, second] = [String(pro), String(de)].sort()
    const grids: Record<string, number[][]> = { [String(pro)]: PRO, [String(de)]: GERMANY }
    expect(byValue(rows)).toEqual([
      ['0', EVERYONE],
      [first, grids[first]],
      [second, grids[second]],
    ])
  })

  it('takes a single cohort id, and cohorts listed in breakdowns (other entries then ignored)', async () => {
    const single = await retention({ breakdown_type: 'cohort', breakdown: pro })
    expect(single.statusCode, single.body).toBe(200)
    expect(byValue(single.json().results)).toEqual([[String(pro), PRO]])
    const listed = await retention({
      breakdowns: [
        { type: 'person', property: 'country' },
        { type: 'cohort', property: de },
      ],
    })
    expect(listed.statusCode, listed.body).toBe(200)
    expect(byValue(listed.json().results)).toEqual([[String(de), GERMANY]])
  })

  it('folds the cohorts past breakdown_limit into the other bucket', async () => {
    const res = await retention({ breakdown_type: 'cohort', breakdown: [pro, de, 'all'], breakdown_limit: 1 })
    expect(res.statusCode, res.body).toBe(200)
    // everyone (8) kept; Pro plan + Germany summed cell by cell
    expect(byValue(res.json().results)).toEqual([
      ['0', EVERYONE],
      [
        '$$_posthog_breakdown_other_$$',
        [
          [3, 2, 1, 2],
          [3, 1, 2, 0],
          [2, 0, 0, 0],
          [2, 0, 0, 0],
        ],
      ],
    ])
  })

  it('lists the actors of one cohort value', async () => {
    const res = await postQuery(t, {
      query: {
        kind: 'ActorsQuery',
        select: ['actor', 'appearances'],
        orderBy: ['person'],
        source: {
          kind: 'InsightActorsQuery',
          interval: 1,
          breakdown: [String(pro)],
          source: {
            kind: 'RetentionQuery',
            dateRange: { date_from: '2024-01-01', date_to: '2024-01-04' },
            retentionFilter: { period: 'Day', totalIntervals: 4 },
            breakdownFilter: { breakdown_type: 'cohort', breakdown: [pro, 'all'] },
          },
        },
      },
    })
    expect(res.statusCode, res.body).toBe(200)
    const rows = res.json().results as [{ distinct_ids: string[] }, number[]][]
    // Pro plan's d1 cohort: p1 (back 2 days later, d3), p2 (back the next day, d2). `orderBy: ['person']` orders by
    // the person's id (a random uuid), so the rows are compared in distinct-id order.
    const byDistinctId = rows.map((r) => [r[0].distinct_ids[0], r[1]] as const).sort((a, b) => a[0].localeCompare(b[0]))
    expect(byDistinctId).toEqual([
      ['p1', [0, 2]],
      ['p2', [0, 1]],
    ])
  })

  it('refuses a cohort breakdown that is not a cohort id', async () => {
    const res = await retention({ breakdown_type: 'cohort', breakdown: ['pro'] })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', attr: 'breakdownFilter__breakdown' })
    const listed = await retention({ breakdowns: [{ type: 'cohort', property: { id: 1 } }] })
    expect(listed.statusCode).toBe(400)
    expect(listed.json().type).toBe('validation_error')
  })
})

describe('RetentionQuery with several breakdowns', () => {
  it('breaks down by the first one only, as PostHog does', async () => {
    const res = await retention({
      breakdowns: [
        { type: 'person', property: 'country' },
        { type: 'person', property: 'plan' },
      ],
    })
    expect(res.statusCode, res.body).toBe(200)
    // DE {p1, p3} as the Germany cohort (sizes 5); US {p2, p4}: d1 {p2} → d2, d2 {p2}, d3 {p4} (sizes 3)
    expect(byValue(res.json().results)).toEqual([
      ['DE', GERMANY],
      [
        'US',
        [
          [0, 0, 0, 0],
          [1, 1, 0, 0],
          [1, 0, 0, 0],
          [1, 0, 0, 0],
        ],
      ],
    ])
  })

  it('refuses more than three breakdowns and a breakdown without a property', async () => {
    const four = await retention({
      breakdowns: ['a', 'b', 'c', 'd'].map((property) => ({ type: 'event', property })),
    })
    expect(four.statusCode).toBe(400)
    expect(four.json()).toMatchObject({ type: 'validation_error', attr: 'breakdownFilter__breakdowns' })
    const bare = await retention({ breakdowns: [{ type: 'event' }] })
    expect(bare.statusCode).toBe(400)
    expect(bare.json().attr).toBe('breakdownFilter__breakdowns__0')
  })
})
