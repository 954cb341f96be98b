/**
 * Ordered and strict funnels matched inside the engine (src/queries/insights/funnel-engine.ts): the edges of the
 * per-actor walk — the conversion window to the second, a later step-1 event restarting the attempt, events at
 * one instant, an event that matches two steps, out-of-order and late-ingested events, strictness, exclusions and
 * optional steps. Every expected number is worked out by hand from the fixture below.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../../helpers/app.js'
import { postQuery } from '../fixtures.js'
import { captureBatch, ev } from './capture.js'

let t: TestApp
const now = new Date('2024-01-20T12:00:00Z')

// Funnel a → b → c with a one-hour window; each person on a day of their own (January 2024, UTC):
// w1 (2nd)  a 10:00, b 10:30, c 11:00:00 — c exactly 3600 s after a: inside the window
// w2 (3rd)  a 10:00, b 10:30, c 11:00:01 — one second late: stops at b
// w3 (4th)  a 10:00, a 10:50, b 11:20, c 11:40 — the 10:00 attempt cannot finish; the 10:50 one does
// w4 (5th)  a, b and c all at 10:00:00 — one instant, taken in step order
// w6 (6th)  b 09:00, a 10:00, c 10:30 — b before a does not count
// w7 (7th)  a 10:00, c 10:40, and b 10:20 sent in a later batch (late ingestion; its time is what counts)
// w8 (8th)  a 10:00, x 10:10, b 10:20 — another event between a and b
// w5a (9th) a 10:00, a 10:10, c 10:20;  w5b (10th) a 10:00, c 10:20 — for the funnel a → a → c
const EVENTS = [
  ev('a', 'w1', '2024-01-02T10:00:00Z'),
  ev('b', 'w1', '2024-01-02T10:30:00Z'),
  ev('c', 'w1', '2024-01-02T11:00:00Z'),
  ev('a', 'w2', '2024-01-03T10:00:00Z'),
  ev('b', 'w2', '2024-01-03T10:30:00Z'),
  ev('c', 'w2', '2024-01-03T11:00:01Z'),
  ev('a', 'w3', '2024-01-04T10:00:00Z'),
  ev('a', 'w3', '2024-01-04T10:50:00Z'),
  ev('b', 'w3', '2024-01-04T11:20:00Z'),
  ev('c', 'w3', '2024-01-04T11:40:00Z'),
  ev('c', 'w4', '2024-01-05T10:00:00Z'),
  ev('b', 'w4', '2024-01-05T10:00:00Z'),
  ev('a', 'w4', '2024-01-05T10:00:00Z'),
  ev('b', 'w6', '2024-01-06T09:00:00Z'),
  ev('a', 'w6', '2024-01-06T10:00:00Z'),
  ev('c', 'w6', '2024-01-06T10:30:00Z'),
  ev('a', 'w7', '2024-01-07T10:00:00Z'),
  ev('c', 'w7', '2024-01-07T10:40:00Z'),
  ev('a', 'w8', '2024-01-08T10:00:00Z'),
  ev('x', 'w8', '2024-01-08T10:10:00Z'),
  ev('b', 'w8', '2024-01-08T10:20:00Z'),
  ev('a', 'w5a', '2024-01-09T10:00:00Z'),
  ev('a', 'w5a', '2024-01-09T10:10:00Z'),
  ev('c', 'w5a', '2024-01-09T10:20:00Z'),
  ev('a', 'w5b', '2024-01-10T10:00:00Z'),
  ev('c', 'w5b', '2024-01-10T10:20:00Z'),
]
const LATE = [ev('b', 'w7', '2024-01-07T10:20:00Z')]

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  await captureBatch(t, EVENTS)
  await captureBatch(t, LATE)
}, 60_000)
afterAll(() => t.close())

const step = (event: string, extra: Record<string, unknown> = {}) => ({ kind: 'EventsNode', event, ...extra })
const ABC = [step('a'), step('b'), step('c')]
const HOUR = { funnelWindowInterval: 1, funnelWindowIntervalUnit: 'hour' }

async function funnel(funnelsFilter: Record<string, unknown>, series = ABC, extra: Record<string, unknown> = {}) {
  const res = await postQuery(t, {
    query: {
      kind: 'FunnelsQuery',
      series,
      dateRange: { date_from: '2024-01-01', date_to: '2024-01-10' },
      funnelsFilter: { ...HOUR, ...funnelsFilter },
      ...extra,
    },
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json().results
}

const counts = (steps: { count: number }[]) => steps.map((s) => s.count)

describe('ordered funnel edges in the engine', () => {
  it('counts the window to the second, restarts from a later a, and takes one instant in step order', async () => {
    const steps = await funnel({})
    // a → b → c (w5a, w5b never do b): w1 3, w2 2, w3 3, w4 3, w6 1, w7 3, w8 2; w5a 1, w5b 1
    expect(counts(steps)).toEqual([9, 6, 4])
    // a → b (over 0 s only): w1 1800, w2 1800, w3 1800 (10:50 → 11:20), w7 1200, w8 1200 (w4: 0 s, not counted)
    // → average 7800 / 5 = 1560, median of 1200 1200 1800 1800 1800 = 1800
    expect(steps[1].average_conversion_time).toBe(1560)
    expect(steps[1].median_conversion_time).toBe(1800)
    // b → c: w1 1800, w3 1200, w7 1200 → average 1400, median 1200
    expect(steps[2].average_conversion_time).toBe(1400)
    expect(steps[2].median_conversion_time).toBe(1200)
    expect(steps[0].average_conversion_time).toBeNull()
  })

  it('uses an event once: a → a → c needs two a events', async () => {
    const steps = await funnel({}, [step('a'), step('a'), step('c')])
    // w5a: a, a, c (3); w3: a 10:00 then a 10:50 (2; c at 11:40 is 100 min after the first a); w4's single a at
    // the shared instant cannot be both steps (1); everyone else has one a (1)
    expect(counts(steps)).toEqual([9, 2, 1])
    // a → a: w3 3000, w5a 600; a → c: w5a 600
    expect(steps[1].average_conversion_time).toBe(1800)
    expect(steps[2].median_conversion_time).toBe(600)
  })

  it('a → b → a: at w4’s instant a is step 1, b step 2, and the same a cannot also be step 3', async () => {
    const steps = await funnel({}, [step('a'), step('b'), step('a')])
    // a then b: w1 w2 w3 (10:50 → 11:20) w7 w8, and w4 (a and b at one instant, taken in step order); w6's b came
    // before its a, w5a and w5b have no b; nobody has an a after their b
    expect(counts(steps)).toEqual([9, 6, 0])
    // a → b: w1 1800, w2 1800, w3 1800, w7 1200, w8 1200 (w4: 0 s, not counted) → average 1560, median 1800
    expect(steps[1].average_conversion_time).toBe(1560)
    expect(steps[1].median_conversion_time).toBe(1800)
    expect(steps[2].average_conversion_time).toBeNull()
  })

  it('an exclusion between a and b removes w8 from every step', async () => {
    const steps = await funnel({ exclusions: [step('x', { funnelFromStep: 0, funnelToStep: 1 })] })
    expect(counts(steps)).toEqual([8, 5, 4])
    // an exclusion between b and c does not: x came before w8's b
    const later = await funnel({ exclusions: [step('x', { funnelFromStep: 1, funnelToStep: 2 })] })
    expect(counts(later)).toEqual([9, 6, 4])
  })

  it('an optional b may be skipped, inside the window from a', async () => {
    const steps = await funnel({}, [step('a'), step('b', { optionalInFunnel: true }), step('c')])
    // c counts after a alone for w6 (b came first) and w5a, w5b (no b); w2's c is still one second late
    // step 2: w1 w2 w3 w4 w7 w8; step 3: w1 w3 w4 w6 w7 w5a w5b
    expect(counts(steps)).toEqual([9, 6, 7])
  })

  it('time to convert a → c and daily conversion rates', async () => {
    const ttc = await funnel({ funnelVizType: 'time_to_convert' })
    // converted: w1 3600, w3 3000 (10:50 → 11:40), w4 0, w7 2400 → average 9000 / 4 = 2250
    // ceil(cbrt(4)) = 2 bins from 0, width 1800: 0 → first; 2400, 3000 → second; 3600 → the upper edge
    expect(ttc).toEqual({
      average_conversion_time: 2250,
      bins: [
        [0, 1],
        [1800, 2],
        [3600, 1],
      ],
    })
    const [row] = await funnel({ funnelVizType: 'trends' }, ABC, { interval: 'day' })
    // entrances Jan 2 … Jan 10, one person a day: w1 w3 w4 w7 convert
    expect(row.data).toEqual([0, 100, 0, 100, 100, 0, 100, 0, 0, 0])
    // up to b only: everyone but w6, w5a, w5b converts
    const [toB] = await funnel({ funnelVizType: 'trends', funnelToStep: 1 }, ABC, { interval: 'day' })
    expect(toB.data).toEqual([0, 100, 100, 100, 100, 0, 100, 100, 0, 0])
  })
})

describe('strict funnel edges in the engine', () => {
  it('any other event between steps ends the attempt; one instant still counts in step order', async () => {
    const steps = await funnel({ funnelOrderType: 'strict' })
    // w1 3, w2 2, w3 3 (the second a restarts), w4 3, w6 1 (b, a, c: c does not follow a), w7 3 (a, b, c once
    // sorted by time), w8 1 (x between a and b), w5a 1 (a, a, c), w5b 1
    expect(counts(steps)).toEqual([9, 5, 4])
  })

  it('a → a → c strictly: w5a only', async () => {
    const steps = await funnel({ funnelOrderType: 'strict' }, [step('a'), step('a'), step('c')])
    // w3: a 10:00, a 10:50 (2), then b breaks it; w5a: a, a, c (3)
    expect(counts(steps)).toEqual([9, 2, 1])
  })
})
