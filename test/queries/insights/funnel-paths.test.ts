/**
 * PathsQuery with `funnelPathsFilter` (the paths of a funnel's actors before, after or between its steps) through
 * the query API. The fixtures are a smaller copy of PostHog's `_create_sample_data_multiple_dropoffs` and of its
 * session- and group-aggregated funnel sources; every expected edge is worked out by hand below.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../../helpers/app.js'
import { postQuery } from '../fixtures.js'
import { captureBatch, ev } from './capture.js'

let t: TestApp
const now = new Date('2021-06-10T00:00:00Z')
const at = (time: string) => `2021-05-01T${time}Z`

// full funnel (a0, a1): step one 00:00, three events a minute apart, step two 00:04, step three 00:05
const full = (id: string) => [
  ev('step one', id, at('00:00:00')),
  ev('between_step_1_a', id, at('00:01:00')),
  ev('between_step_1_b', id, at('00:02:00')),
  ev('between_step_1_c', id, at('00:03:00')),
  ev('step two', id, at('00:04:00')),
  ev('step three', id, at('00:05:00')),
]
// two steps (b0, b1, b2): step two at 00:03, then two events 80 s apart
const twoSteps = (id: string) => [
  ev('step one', id, at('00:00:00')),
  ev('between_step_1_a', id, at('00:01:00')),
  ev('between_step_1_b', id, at('00:02:00')),
  ev('step two', id, at('00:03:00')),
  ev('between_step_2_a', id, at('00:04:20')),
  ev('between_step_2_b', id, at('00:05:40')),
]
// dropping off after step one (c0..c3), c0 and c2 branching; c0 comes back eight days later
const dropoff = (id: string, branch: boolean) => [
  ev('step one', id, at('00:00:00')),
  ev('step dropoff1', id, at('00:01:00')),
  ev('step dropoff2', id, at('00:02:00')),
  ...(branch ? [ev('step branch', id, at('00:03:00'))] : []),
]
const EVENTS = [
  ...full('a0'),
  ...full('a1'),
  ...twoSteps('b0'),
  ...twoSteps('b1'),
  ...twoSteps('b2'),
  ...dropoff('c0', true),
  ...dropoff('c1', false),
  ...dropoff('c2', true),
  ...dropoff('c3', false),
  ev('came back', 'c0', '2021-05-09T00:00:00Z'),
  ev('left', 'c0', '2021-05-09T00:01:00Z'),
]

// PostHog's TestClickhousePathsFunnelSource, on June 1: a completing and an incomplete session / organisation
const june = (time: string) => `2021-06-01T${time}Z`
const groupType = {
  event: '$groupidentify',
  timestamp: june('00:00:00'),
  properties: { distinct_id: 'user_completed', $group_type: 'organization', $group_key: 'org:done', $group_set: {} },
}
const AGGREGATED = [
  groupType,
  ev('$pageview', 'user_completed', june('01:00:00'), {
    $current_url: '/before',
    $session_id: 's-done',
    $groups: { organization: 'org:done' },
  }),
  ev('step one', 'user_completed', june('01:01:00'), { $session_id: 's-done', $groups: { organization: 'org:done' } }),
  ev('$pageview', 'user_completed', june('01:02:00'), {
    $current_url: '/between',
    $session_id: 's-done',
    $groups: { organization: 'org:done' },
  }),
  ev('step two', 'user_completed', june('01:03:00'), { $session_id: 's-done', $groups: { organization: 'org:done' } }),
  ev('$pageview', 'user_completed', june('01:04:00'), {
    $current_url: '/after',
    $session_id: 's-done',
    $groups: { organization: 'org:done' },
  }),
  ev('$pageview', 'user_incomplete', june('03:00:00'), {
    $current_url: '/before',
    $session_id: 's-half',
    $groups: { organization: 'org:half' },
  }),
  ev('step one', 'user_incomplete', june('03:01:00'), { $session_id: 's-half', $groups: { organization: 'org:half' } }),
  ev('$pageview', 'user_incomplete', june('03:02:00'), {
    $current_url: '/after',
    $session_id: 's-half',
    $groups: { organization: 'org:half' },
  }),
]

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  await captureBatch(t, [...EVENTS, ...AGGREGATED])
}, 60_000)
afterAll(() => t.close())

const funnel = (steps: string[], extra: Record<string, unknown> = {}, dates = ['2021-05-01', '2021-05-07']) => ({
  kind: 'FunnelsQuery',
  series: steps.map((event) => ({ kind: 'EventsNode', event })),
  dateRange: { date_from: dates[0], date_to: dates[1] },
  funnelsFilter: { funnelWindowInterval: 7, funnelWindowIntervalUnit: 'day' },
  ...extra,
})
const THREE_STEPS = funnel(['step one', 'step two', 'step three'])

const pathsQuery = (
  funnelPathsFilter: unknown,
  pathsFilter: Record<string, unknown> = {},
  dates = ['2021-05-01', '2021-05-10'],
) => ({
  kind: 'PathsQuery',
  dateRange: { date_from: dates[0], date_to: dates[1] },
  pathsFilter: { includeEventTypes: ['custom_event'], ...pathsFilter },
  funnelPathsFilter,
})

async function edges(funnelPathType: string, funnelStep: number, source = THREE_STEPS) {
  const res = await postQuery(t, { query: pathsQuery({ funnelPathType, funnelStep, funnelSource: source }) })
  expect(res.statusCode, res.body).toBe(200)
  return (
    res.json().results as { source: string; target: string; value: number; average_conversion_time: number }[]
  ).map((e) => [e.source, e.target, e.value, e.average_conversion_time / 1000])
}

describe('PathsQuery with funnelPathsFilter', () => {
  it('test_path_by_funnel_after_step-like: from the step onwards, for those who reached it', async () => {
    // a0, a1: step two 00:04 → step three 00:05;  b0..b2: step two 00:03 → 2_a 00:04:20 → 2_b 00:05:40
    expect(await edges('funnel_path_after_step', 2)).toEqual([
      ['1_step two', '2_between_step_2_a', 3, 80],
      ['2_between_step_2_a', '3_between_step_2_b', 3, 80],
      ['1_step two', '2_step three', 2, 60],
    ])
  })

  it('after a drop-off the path starts one conversion window after the last step done', async () => {
    // c0..c3 did step one (May 1, 00:00) but not step two; their paths start at May 8 00:00: only c0's return
    expect(await edges('funnel_path_after_step', -2)).toEqual([['1_came back', '2_left', 1, 60]])
  })

  it('test_path_by_funnel_before_step-like: up to the step, for those who reached it', async () => {
    // a0, a1: one, 1_a, 1_b, 1_c, two;  b0..b2: one, 1_a, 1_b, two (a minute apart each)
    expect(await edges('funnel_path_before_step', 2)).toEqual([
      ['1_step one', '2_between_step_1_a', 5, 60],
      ['2_between_step_1_a', '3_between_step_1_b', 5, 60],
      ['3_between_step_1_b', '4_step two', 3, 60],
      ['3_between_step_1_b', '4_between_step_1_c', 2, 60],
      ['4_between_step_1_c', '5_step two', 2, 60],
    ])
  })

  it('before a drop-off: up to the last step done, for those who did not reach the next one', async () => {
    // dropped off before step three: b0..b2, up to step two (their events after it are not on the path)
    expect(await edges('funnel_path_before_step', -3)).toEqual([
      ['1_step one', '2_between_step_1_a', 3, 60],
      ['2_between_step_1_a', '3_between_step_1_b', 3, 60],
      ['3_between_step_1_b', '4_step two', 3, 60],
    ])
  })

  it('test_path_by_funnel_between_steps-like: from the step before to the step', async () => {
    // reached step three: a0, a1, between step two (00:04) and step three (00:05)
    expect(await edges('funnel_path_between_steps', 3)).toEqual([['1_step two', '2_step three', 2, 60]])
    // reached step two: the five of a and b, between step one and step two (the before-step 2 paths here)
    expect(await edges('funnel_path_between_steps', 2)).toEqual(await edges('funnel_path_before_step', 2))
  })

  it('lists the persons behind a funnel path edge', async () => {
    const res = await postQuery(t, {
      query: {
        kind: 'ActorsQuery',
        source: {
          kind: 'InsightActorsQuery',
          source: {
            ...pathsQuery(
              { funnelPathType: 'funnel_path_before_step', funnelStep: 2, funnelSource: THREE_STEPS },
              { pathStartKey: '3_between_step_1_b', pathEndKey: '4_between_step_1_c' },
            ),
          },
        },
        select: ['actor'],
        orderBy: ['person'],
      },
    })
    expect(res.statusCode, res.body).toBe(200)
    const ids = (res.json().results as [{ distinct_ids: string[] }][]).map((r) => r[0].distinct_ids[0]).sort()
    expect(ids).toEqual(['a0', 'a1'])
  })

  // PostHog's TestClickhousePathsFunnelSource: (type, step, expected edges) for session and group funnels
  const CASES: [string, number, [string, string, number][]][] = [
    ['funnel_path_after_step', 2, [['1_step two', '2_/after', 1]]],
    // both actors did step one: the incomplete one counts too
    ['funnel_path_before_step', 1, [['1_/before', '2_step one', 2]]],
    [
      'funnel_path_between_steps',
      2,
      [
        ['1_step one', '2_/between', 1],
        ['2_/between', '3_step two', 1],
      ],
    ],
  ]
  const junePaths = async (type: string, step: number, source: Record<string, unknown>) => {
    const res = await postQuery(t, {
      query: pathsQuery(
        { funnelPathType: type, funnelStep: step, funnelSource: source },
        { includeEventTypes: ['$pageview', 'custom_event'] },
        ['2021-06-01', '2021-06-07'],
      ),
    })
    expect(res.statusCode, res.body).toBe(200)
    return (res.json().results as { source: string; target: string; value: number }[]).map((e) => [
      e.source,
      e.target,
      e.value,
    ])
  }

  it.each(CASES)('test_funnel_paths_session_aggregation: %s %s', async (type, step, expected) => {
    const source = funnel(['step one', 'step two'], {}, ['2021-06-01', '2021-06-07'])
    source.funnelsFilter = {
      ...source.funnelsFilter,
      funnelAggregateByHogQL: 'properties.$session_id',
    } as typeof source.funnelsFilter
    expect(await junePaths(type, step, source)).toEqual(expected)
  })

  it.each(CASES)('test_funnel_paths_group_aggregation: %s %s', async (type, step, expected) => {
    const source = funnel(['step one', 'step two'], { aggregation_group_type_index: 0 }, ['2021-06-01', '2021-06-07'])
    expect(await junePaths(type, step, source)).toEqual(expected)
  })

  it('refuses a malformed funnelPathsFilter with the offending attr', async () => {
    const bad = async (filter: unknown, attr: string) => {
      const res = await postQuery(t, { query: pathsQuery(filter) })
      expect(res.statusCode, res.body).toBe(400)
      expect(res.json()).toMatchObject({ type: 'validation_error', attr })
    }
    await bad(
      { funnelPathType: 'funnel_path_around', funnelStep: 1, funnelSource: THREE_STEPS },
      'funnelPathsFilter__funnelPathType',
    )
    await bad({ funnelPathType: 'funnel_path_after_step', funnelSource: THREE_STEPS }, 'funnelPathsFilter__funnelStep')
    await bad(
      { funnelPathType: 'funnel_path_after_step', funnelStep: -1, funnelSource: THREE_STEPS },
      'funnelPathsFilter__funnelStep',
    )
    await bad(
      { funnelPathType: 'funnel_path_after_step', funnelStep: 4, funnelSource: THREE_STEPS },
      'funnelPathsFilter__funnelStep',
    )
    await bad(
      { funnelPathType: 'funnel_path_between_steps', funnelStep: 1, funnelSource: THREE_STEPS },
      'funnelPathsFilter__funnelStep',
    )
    await bad(
      { funnelPathType: 'funnel_path_after_step', funnelStep: 1, funnelSource: { kind: 'TrendsQuery' } },
      'funnelPathsFilter__funnelSource',
    )
  })
})
