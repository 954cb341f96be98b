/**
 * LifecycleQuery over persons known by several distinct ids (the activity of all of them is one person's) and events
 * sent without a person profile; every expected number is worked out by hand from the fixture below.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../../helpers/app.js'
import { postQuery } from '../fixtures.js'
import { captureBatch, ev } from './capture.js'

let t: TestApp
const now = new Date('2024-02-10T12:00:00Z')

const byStatus = (results: { status: string; data: number[] }[]) =>
  Object.fromEntries(results.map((r) => [r.status, r.data]))

describe('LifecycleQuery over persons with several distinct ids', () => {
  beforeAll(async () => {
    t = await startTestApp({ clock: () => now })
    await captureBatch(t, [
      // eve browses anonymously on her phone (Feb 1: created then), identifies as 'eve' on Feb 2, and comes back
      // under either id: one person, active Feb 1, 2, 3 and 5
      ev('$pageview', 'eve-phone', '2024-02-01T10:00:00Z'),
      {
        event: '$identify',
        timestamp: '2024-02-02T09:00:00Z',
        properties: { distinct_id: 'eve', $anon_distinct_id: 'eve-phone' },
      },
      ev('$pageview', 'eve', '2024-02-02T10:00:00Z'),
      ev('$pageview', 'eve-phone', '2024-02-03T10:00:00Z'),
      ev('$pageview', 'eve', '2024-02-05T10:00:00Z'),
      // fay (created Feb 2) sends one more pageview on Feb 3 without a person profile: it does not count
      ev('$pageview', 'fay', '2024-02-02T11:00:00Z'),
      ev('$pageview', 'fay', '2024-02-03T11:00:00Z', { $process_person_profile: false }),
    ])
  }, 60_000)
  afterAll(() => t.close())

  const source = {
    kind: 'LifecycleQuery',
    series: [{ kind: 'EventsNode', event: '$pageview' }],
    dateRange: { date_from: '2024-02-02', date_to: '2024-02-06' },
    interval: 'day',
  }

  it("merges the activity of all of a person's distinct ids and skips events without a person profile", async () => {
    const res = await postQuery(t, { query: source })
    expect(res.statusCode, res.body).toBe(200)
    // days Feb 2 … Feb 6, read from Feb 1:
    // eve [1, 2, 3, 5], created Feb 1: new 1 (before the range), returning 2 and 3, dormant 4, resurrecting 5,
    //   dormant 6 — were her two ids two actors, 'eve' [2, 5] would be resurrecting on the 2nd and 'eve-phone'
    //   [1, 3] resurrecting on the 3rd
    // fay [2] (her Feb 3 pageview has no person profile), created Feb 2: new 2, dormant 3
    expect(byStatus(res.json().results)).toEqual({
      new: [1, 0, 0, 0, 0],
      returning: [1, 1, 0, 0, 0],
      resurrecting: [0, 0, 0, 1, 0],
      dormant: [0, -1, -1, 0, -1],
    })
  })

  it('gives the same statuses over a range too long for the bit masks (75 days read)', async () => {
    const res = await postQuery(t, {
      query: { ...source, dateRange: { date_from: '2023-11-25', date_to: '2024-02-06' } },
    })
    expect(res.statusCode, res.body).toBe(200)
    const { results } = res.json()
    // Nov 25 … Feb 6 is 74 days, read from Nov 24; nothing happens before Feb 1, then Feb 1 … 6 as above, with
    // eve's creation day now shown: new on Feb 1
    expect(results[0].days).toHaveLength(74)
    expect(results[0].days.slice(-6)).toEqual([
      '2024-02-01',
      '2024-02-02',
      '2024-02-03',
      '2024-02-04',
      '2024-02-05',
      '2024-02-06',
    ])
    const zeros = new Array(68).fill(0)
    expect(byStatus(results)).toEqual({
      new: [...zeros, 1, 1, 0, 0, 0, 0],
      returning: [...zeros, 0, 1, 1, 0, 0, 0],
      resurrecting: [...zeros, 0, 0, 0, 0, 1, 0],
      dormant: [...zeros, 0, 0, -1, -1, 0, -1],
    })
  })

  it('monthly: both new in February, dormant in March', async () => {
    const res = await postQuery(t, {
      query: { ...source, interval: 'month', dateRange: { date_from: '2024-01-01', date_to: '2024-03-31' } },
    })
    expect(res.statusCode, res.body).toBe(200)
    const { results } = res.json()
    // months Jan, Feb, Mar, read from Dec 2023: eve and fay were created in February and active only then
    expect(results[0].days).toEqual(['2024-01-01', '2024-02-01', '2024-03-01'])
    expect(byStatus(results)).toEqual({
      new: [0, 2, 0],
      returning: [0, 0, 0],
      resurrecting: [0, 0, 0],
      dormant: [0, 0, -2],
    })
  })

  it('gives the one person behind a data point, with both distinct ids', async () => {
    const res = await postQuery(t, {
      query: {
        kind: 'ActorsQuery',
        source: { kind: 'InsightActorsQuery', source, day: '2024-02-03', status: 'returning' },
        select: ['actor'],
      },
    })
    expect(res.statusCode, res.body).toBe(200)
    const rows = res.json().results as { distinct_ids: string[] }[][]
    expect(rows).toHaveLength(1)
    expect([...rows[0][0].distinct_ids].sort()).toEqual(['eve', 'eve-phone'])
  })
})
