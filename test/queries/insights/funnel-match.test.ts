/** The funnel matcher over hand-written event sequences (times in seconds; steps are 1-based). */
import { describe, expect, it } from 'vitest'
import {
  type FunnelEvent,
  type FunnelOptions,
  matchActor,
  median,
  timeToConvertBins,
} from '../../../src/queries/insights/funnel-match.js'

const DAY = 86_400
let uuid = 0
const e = (ts: number, steps: number[], breakdown = ''): FunnelEvent => ({
  ts,
  uuid: `u${uuid++}`,
  steps,
  breakdown,
  hasBreakdown: breakdown !== '',
})
const options = (extra: Partial<FunnelOptions> = {}): FunnelOptions => ({
  steps: 3,
  order: 'ordered',
  window: 14 * DAY,
  optional: new Set(),
  attribution: 'first_touch',
  ...extra,
})
const reached = (events: FunnelEvent[], extra: Partial<FunnelOptions> = {}, hasBreakdown = false) =>
  matchActor(events, options(extra), hasBreakdown).map((p) => [p.breakdown, p.reached, p.times])

describe('matchActor', () => {
  it.each([
    ['in order', [e(0, [1]), e(10, [2]), e(30, [3])], {}, [['', 3, [0, 10, 30]]]],
    ['step 2 before step 1 does not count', [e(0, [2]), e(10, [1]), e(30, [3])], {}, [['', 1, [10]]]],
    ['events of one instant are taken in step order', [e(5, [2]), e(5, [1]), e(9, [3])], {}, [['', 3, [5, 5, 9]]]],
    ['the window is measured from step 1', [e(0, [1]), e(DAY, [2]), e(15 * DAY, [3])], {}, [['', 2, [0, DAY]]]],
    // a later step-1 event restarts the attempt, so the conversion fits in the window from it
    ['the latest step 1 wins', [e(0, [1]), e(10 * DAY, [1]), e(20 * DAY, [2])], {}, [['', 2, [10 * DAY, 20 * DAY]]]],
    ['nobody without step 1', [e(0, [2]), e(1, [3])], {}, []],
    // an exclusion (-2: between step 0 and step 1) after step 1 drops the actor
    ['an exclusion in its span excludes', [e(0, [1]), e(1, [-2]), e(2, [2]), e(3, [3])], {}, []],
    ['an exclusion before step 1 does not', [e(0, [-2]), e(1, [1]), e(2, [2]), e(3, [3])], {}, [['', 3, [1, 2, 3]]]],
    ['strict: another event breaks the run', [e(0, [1]), e(1, []), e(2, [2])], { order: 'strict' }, [['', 1, [0]]]],
    ['strict: consecutive steps', [e(0, [1]), e(1, [2]), e(2, [3])], { order: 'strict' }, [['', 3, [0, 1, 2]]]],
    [
      'an optional step may be skipped',
      [e(0, [1]), e(5, [3])],
      { optional: new Set([2]) },
      [['', 3, [0, undefined, 5]]],
    ],
    [
      'unordered: any order inside the window',
      [e(0, [3]), e(4, [1]), e(9, [2])],
      { order: 'unordered' },
      [['', 3, [0, 4, 9]]],
    ],
  ] as [string, FunnelEvent[], Partial<FunnelOptions>, unknown[]][])('%s', (_name, events, extra, expected) => {
    expect(reached(events, extra)).toEqual(expected)
  })

  it('attributes breakdowns by first touch, last touch, every value, or a step', () => {
    const events = [e(0, [1], 'a'), e(1, [2], 'b'), e(2, [3], 'c')]
    expect(reached(events, {}, true)).toEqual([['a', 3, [0, 1, 2]]])
    expect(reached(events, { attribution: 'last_touch' }, true)).toEqual([['c', 3, [0, 1, 2]]])
    // every value on its own: only the 'a' events exist in the 'a' funnel, and so on
    // every value on its own: the 'a' funnel holds only the step-1 event; 'b' and 'c' have no step 1
    expect(reached(events, { attribution: 'all_events' }, true)).toEqual([['a', 1, [0]]])
    expect(reached(events, { attribution: 'step', attributionStep: 1 }, true)).toEqual([['b', 3, [0, 1, 2]]])
    // no event of the attribution step: no value to count the actor under
    expect(reached([e(0, [1], 'a')], { attribution: 'step', attributionStep: 1 }, true)).toEqual([])
  })
})

describe('conversion time helpers', () => {
  it('takes the mean of the middle values for an even count', () => {
    expect(median([600, 3600, 600, 600])).toBe(600)
    expect(median([10, 20])).toBe(15)
    expect(median([])).toBeNull()
  })

  it('bins like PostHog: cbrt(n) bins from floor(min), width ceil(span / bins), 60 s when flat', () => {
    // 8 values → 2 bins; span 100 → width 50: starts 0, 50, 100
    expect(timeToConvertBins([0, 10, 20, 30, 60, 70, 90, 100])).toEqual([
      [0, 4],
      [50, 3],
      [100, 1],
    ])
    expect(timeToConvertBins([5])).toEqual([
      [5, 1],
      [65, 0],
    ])
    expect(timeToConvertBins([], 3)).toEqual([
      [0, 0],
      [60, 0],
      [120, 0],
      [180, 0],
    ])
  })
})
