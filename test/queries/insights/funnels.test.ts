/**
 * FunnelsQuery through the query API over events captured with fixed timestamps; every expected number is worked
 * out by hand from the fixture below (mirrors of PostHog's test_funnel.py, test_funnel_strict.py,
 * test_funnel_unordered.py, test_funnel_time_to_convert.py and test_funnel_trends.py behaviours).
 */

import crypto from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../../helpers/app.js'
import { eventRow } from '../../helpers/events.js'
import { postQuery } from '../fixtures.js'
import { captureBatch, ev } from './capture.js'

let t: TestApp
const now = new Date('2024-01-20T12:00:00Z')

// Funnel signup → view → buy, range Jan 1 … Jan 14 (UTC):
// u1 converts: signup 10:00 (Chrome), view 10:10 (+600 s, ingested last: a late event), buy 11:10 (+3600 s, Safari)
// u2 out of order: view 09:00 before signup 10:00, then buy 12:00
// u3 concurrent: signup and view at the same instant 10:00:00, buy 10:30 (+1800 s); signup on Firefox
// u4 slow: signup Jan 5 10:00, view 11:00 (+3600 s), buy Jan 7 10:00 (+169200 s, two days after signup)
// u5 with another event between the steps: signup 10:00, noise 10:05, view 10:10 (+600 s), buy 10:20 (+600 s)
// u6 cancels: signup 10:00, cancel 10:05, view 10:10 (+600 s), buy 10:20 (+600 s)
const EVENTS = [
  ev('signup', 'u1', '2024-01-02T10:00:00Z', { $browser: 'Chrome' }),
  ev('buy', 'u1', '2024-01-02T11:10:00Z', { $browser: 'Safari' }),
  ev('view', 'u2', '2024-01-03T09:00:00Z'),
  ev('signup', 'u2', '2024-01-03T10:00:00Z'),
  ev('buy', 'u2', '2024-01-03T12:00:00Z'),
  ev('signup', 'u3', '2024-01-04T10:00:00Z', { $browser: 'Firefox' }),
  ev('view', 'u3', '2024-01-04T10:00:00Z'),
  ev('buy', 'u3', '2024-01-04T10:30:00Z'),
  ev('signup', 'u4', '2024-01-05T10:00:00Z'),
  ev('view', 'u4', '2024-01-05T11:00:00Z'),
  ev('buy', 'u4', '2024-01-07T10:00:00Z'),
  ev('signup', 'u5', '2024-01-06T10:00:00Z'),
  ev('noise', 'u5', '2024-01-06T10:05:00Z'),
  ev('view', 'u5', '2024-01-06T10:10:00Z'),
  ev('buy', 'u5', '2024-01-06T10:20:00Z'),
  ev('signup', 'u6', '2024-01-08T10:00:00Z'),
  ev('cancel', 'u6', '2024-01-08T10:05:00Z'),
  ev('view', 'u6', '2024-01-08T10:10:00Z'),
  ev('buy', 'u6', '2024-01-08T10:20:00Z'),
  ev('view', 'u1', '2024-01-02T10:10:00Z'),
]

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  await captureBatch(t, EVENTS)
}, 60_000)
afterAll(() => t.close())

const STEPS = [
  { kind: 'EventsNode', event: 'signup' },
  { kind: 'EventsNode', event: 'view' },
  { kind: 'EventsNode', event: 'buy' },
]

const funnel = (funnelsFilter: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  postQuery(t, {
    query: {
      kind: 'FunnelsQuery',
      series: STEPS,
      dateRange: { date_from: '2024-01-01', date_to: '2024-01-14' },
      funnelsFilter,
      ...extra,
    },
  })

const counts = (steps: { count: number }[]) => steps.map((s) => s.count)

describe('FunnelsQuery steps', () => {
  it('test_basic_funnel-like: ordered steps with counts and conversion times in PostHog rows', async () => {
    const res = await funnel()
    expect(res.statusCode, res.body).toBe(200)
    const steps = res.json().results
    // everyone signs up; u2's view came before the signup, so u2 stops at step 1; the other five convert
    expect(counts(steps)).toEqual([6, 5, 5])
    expect(steps[0]).toEqual({
      action_id: 'signup',
      name: 'signup',
      custom_name: null,
      order: 0,
      people: [],
      count: 6,
      type: 'events',
      average_conversion_time: null,
      median_conversion_time: null,
    })
    // signup → view: u1 600, u3 0 (same instant: left out, only positive times count), u4 3600, u5 600, u6 600
    // → average 5400 / 4 = 1350, median of [600, 600, 600, 3600] = 600
    expect(steps[1]).toMatchObject({ order: 1, average_conversion_time: 1350, median_conversion_time: 600 })
    // view → buy: u1 3600, u3 1800, u4 169200, u5 600, u6 600 → average 175800 / 5 = 35160, median 1800
    expect(steps[2]).toMatchObject({ average_conversion_time: 35160, median_conversion_time: 1800 })
  })

  it('test_funnel_conversion_window-like: a one-day window drops the slow buyer', async () => {
    const res = await funnel({ funnelWindowInterval: 1, funnelWindowIntervalUnit: 'day' })
    // u4 bought 48 h after signing up: past the 24 h window, so u4 stops at view
    expect(counts(res.json().results)).toEqual([6, 5, 4])
  })

  it('test_funnel_exclusions-like: an exclusion between steps removes the actor from the whole funnel', async () => {
    const res = await funnel({
      exclusions: [{ kind: 'EventsNode', event: 'cancel', funnelFromStep: 0, funnelToStep: 1 }],
    })
    // u6 cancelled between signup and view: gone from every step, step 1 included
    expect(counts(res.json().results)).toEqual([5, 4, 4])
    const later = await funnel({
      exclusions: [{ kind: 'EventsNode', event: 'noise', funnelFromStep: 1, funnelToStep: 2 }],
    })
    // u5's noise (10:05) came before the view (10:10): outside the view → buy span, so nobody is excluded
    expect(counts(later.json().results)).toEqual([6, 5, 5])
  })

  it('test_basic_strict_funnel-like: any other event between steps breaks a strict funnel', async () => {
    const res = await funnel({ funnelOrderType: 'strict' })
    // u1, u3 (same-instant steps), u4 convert; u2 (view first), u5 (noise) and u6 (cancel) stop at signup
    expect(counts(res.json().results)).toEqual([6, 3, 3])
  })

  it('test_basic_unordered_funnel-like: steps in any order, named by how many were completed', async () => {
    const res = await funnel({ funnelOrderType: 'unordered' })
    const steps = res.json().results
    // all six did the three events within 14 days, u2 in another order
    expect(counts(steps)).toEqual([6, 6, 6])
    expect(steps.map((s: { name: string }) => s.name)).toEqual([
      'Completed 1 step',
      'Completed 2 steps',
      'Completed 3 steps',
    ])
    expect(steps[0]).toMatchObject({ action_id: null, custom_name: null, type: 'events' })
  })

  it('test_funnel_unordered_with_exclusions-like: only whole-funnel exclusions, inside the best window', async () => {
    const res = await funnel({
      funnelOrderType: 'unordered',
      exclusions: [{ kind: 'EventsNode', event: 'cancel', funnelFromStep: 0, funnelToStep: 2 }],
    })
    // u6's cancel (10:05) lies between its signup (10:00) and its buy (10:20): u6 is left out
    expect(counts(res.json().results)).toEqual([5, 5, 5])
    const partial = await funnel({
      funnelOrderType: 'unordered',
      exclusions: [{ kind: 'EventsNode', event: 'cancel', funnelFromStep: 0, funnelToStep: 1 }],
    })
    expect(partial.statusCode).toBe(400)
    expect(partial.json().attr).toBe('funnelsFilter__exclusions__0')
  })

  it('test_funnel_with_optional_steps-like: an optional step may be skipped', async () => {
    const res = await postQuery(t, {
      query: {
        kind: 'FunnelsQuery',
        series: [STEPS[0], { ...STEPS[1], optionalInFunnel: true }, STEPS[2]],
        dateRange: { date_from: '2024-01-01', date_to: '2024-01-14' },
      },
    })
    // u2 goes signup → buy without a view after signing up: counted at signup and buy, not at view
    expect(counts(res.json().results)).toEqual([6, 5, 6])
  })

  it('test_funnel_breakdown-like: first touch, last touch and step attribution', async () => {
    const shaped = (results: { breakdown_value: string; count: number }[][]) =>
      results.map((steps) => [steps[0].breakdown_value, counts(steps)])
    const first = await funnel({}, { breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } })
    // first touch: u1 Chrome (signup), u3 Firefox, the rest '' (u2 at step 1 only); ranked by conversions
    // ('' 3, Chrome 1, Firefox 1; ties by value)
    expect(shaped(first.json().results)).toEqual([
      ['', [4, 3, 3]],
      ['Chrome', [1, 1, 1]],
      ['Firefox', [1, 1, 1]],
    ])
    expect(first.json().results[1][0]).toMatchObject({ breakdown: 'Chrome', breakdown_value: 'Chrome' })
    const last = await funnel(
      { breakdownAttributionType: 'last_touch' },
      { breakdownFilter: { breakdown: '$browser' } },
    )
    // last touch: u1's last event with a browser is the Safari buy
    expect(shaped(last.json().results)).toEqual([
      ['', [4, 3, 3]],
      ['Firefox', [1, 1, 1]],
      ['Safari', [1, 1, 1]],
    ])
    const step = await funnel(
      { breakdownAttributionType: 'step', breakdownAttributionValue: 2 },
      { breakdownFilter: { breakdown: '$browser' } },
    )
    // the value of the buy event: Safari for u1, '' for everyone else (u2 stops at signup)
    expect(shaped(step.json().results)).toEqual([
      ['', [5, 4, 4]],
      ['Safari', [1, 1, 1]],
    ])
    const limited = await funnel({}, { breakdownFilter: { breakdown: '$browser', breakdown_limit: 1 } })
    // Chrome and Firefox fall into "Other"
    expect(shaped(limited.json().results)).toEqual([
      ['', [4, 3, 3]],
      ['Other', [2, 2, 2]],
    ])
  })

  it('test_funnel_breakdown_multi-like: several breakdown properties give array values', async () => {
    const breakdowns = [
      { type: 'event', property: '$browser' },
      { type: 'hogql', property: "'all'" },
    ]
    const res = await funnel({ breakdownAttributionType: 'last_touch' }, { breakdownFilter: { breakdowns } })
    const shaped = res
      .json()
      .results.map((steps: { breakdown_value: string[]; count: number }[]) => [steps[0].breakdown_value, counts(steps)])
    // last touch: each actor's last event; only u1's (the Safari buy) has a browser
    expect(shaped).toEqual([
      [
        ['', 'all'],
        [5, 4, 4],
      ],
      [
        ['Safari', 'all'],
        [1, 1, 1],
      ],
    ])
    const limited = await funnel(
      { breakdownAttributionType: 'last_touch' },
      { breakdownFilter: { breakdowns, breakdown_limit: 1 } },
    )
    expect(limited.json().results[1][0].breakdown_value).toEqual(['Other'])
  })

  it('test_funnel_with_actions-like: an action as a step, named after the action', async () => {
    const created = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/actions/`,
      headers: t.auth,
      payload: { name: 'Bought', steps: [{ event: 'buy' }] },
    })
    expect(created.statusCode, created.body).toBe(201)
    const id = created.json().id
    const res = await postQuery(t, {
      query: {
        kind: 'FunnelsQuery',
        series: [STEPS[0], { kind: 'ActionsNode', id, custom_name: 'Paid' }],
        dateRange: { date_from: '2024-01-01', date_to: '2024-01-14' },
      },
    })
    const steps = res.json().results
    // signup → buy: all six bought after signing up (u2 at 12:00 after the 10:00 signup)
    expect(counts(steps)).toEqual([6, 6])
    expect(steps[1]).toMatchObject({ action_id: id, name: 'Bought', custom_name: 'Paid', type: 'actions' })
  })

  it('test_funnel_breakdown_correct_breakdown_props_are_chosen (and _for_step)', async () => {
    // PostHog's fixture: buy counts only with $version = xyz
    const batch = [
      ev('sign up', 'p1', '2020-01-01T12:00:00Z', { $browser: 'Chrome', $version: 'xyz' }),
      ev('buy', 'p1', '2020-01-01T13:00:00Z', { $browser: 'Chrome' }),
      ev('sign up', 'p2', '2020-01-01T13:00:00Z'),
      ev('buy', 'p2', '2020-01-02T13:00:00Z', { $browser: 'Safari', $version: 'xyz' }),
      ev('sign up', 'p3', '2020-01-02T14:00:00Z', { $browser: 'Mac' }),
      ev('buy', 'p3', '2020-01-02T15:00:00Z', { $version: 'xyz', $browser: 'Mac' }),
      ev('sign up', 'p5', '2020-01-02T15:00:00Z'),
      ev('buy', 'p5', '2020-01-02T16:00:00Z'),
    ]
    const ingested = await t.burrow.app.inject({
      method: 'POST',
      url: '/batch/',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ api_key: t.creds.project_api_key, batch }),
    })
    expect(ingested.statusCode, ingested.body).toBe(200)
    await t.burrow.ingest.flushBackground()
    const query = (funnelsFilter: Record<string, unknown>) =>
      postQuery(t, {
        query: {
          kind: 'FunnelsQuery',
          series: [
            { kind: 'EventsNode', event: 'sign up' },
            {
              kind: 'EventsNode',
              event: 'buy',
              properties: [{ type: 'event', key: '$version', value: 'xyz', operator: 'exact' }],
            },
          ],
          dateRange: { date_from: '2020-01-01', date_to: '2020-01-08' },
          breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' },
          funnelsFilter: { funnelWindowInterval: 7, ...funnelsFilter },
        },
      })
    const shaped = (results: { breakdown_value: string; count: number }[][]) =>
      results.map((steps) => [steps[0].breakdown_value, counts(steps)])
    // first touch, the first event with a browser: p1 Chrome (its buy lacks the version: stops at sign up),
    // p2 Safari (sign up has no browser), p3 Mac, p5 '' (no browser anywhere; its buy lacks the version)
    // ranked by conversions (Mac, Safari), then by sign-ups ('' before Chrome by value)
    const first = await query({ breakdownAttributionType: 'first_touch' })
    expect(shaped(first.json().results)).toEqual([
      ['Mac', [1, 1]],
      ['Safari', [1, 1]],
      ['', [1, 0]],
      ['Chrome', [1, 0]],
    ])
    // step 1 (buy): only p2 and p3 have a matching buy; p1 and p5 have none and are left out entirely
    const step = await query({ breakdownAttributionType: 'step', breakdownAttributionValue: 1 })
    expect(shaped(step.json().results)).toEqual([
      ['Mac', [1, 1]],
      ['Safari', [1, 1]],
    ])
  })

  it("test_funnel_first_time_for_user-like: a step counts only the actor's first-ever event", async () => {
    // ft1 signed up before the range (Mar 1) and again inside it (Mar 5, on the pro plan), then bought;
    // ft2 signed up for the first time inside it (Mar 3) and bought
    const batch = [
      ev('sign up', 'ft1', '2021-03-01T10:00:00Z'),
      ev('sign up', 'ft2', '2021-03-03T10:00:00Z'),
      ev('buy', 'ft2', '2021-03-03T12:00:00Z'),
      ev('sign up', 'ft1', '2021-03-05T10:00:00Z', { plan: 'pro' }),
      ev('buy', 'ft1', '2021-03-05T11:00:00Z'),
    ]
    const ingested = await t.burrow.app.inject({
      method: 'POST',
      url: '/batch/',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ api_key: t.creds.project_api_key, batch }),
    })
    expect(ingested.statusCode, ingested.body).toBe(200)
    await t.burrow.ingest.flushBackground()
    const who = async (first: Record<string, unknown>) => {
      const res = await postQuery(t, {
        query: {
          kind: 'FunnelsQuery',
          series: [
            { kind: 'EventsNode', event: 'sign up', ...first },
            { kind: 'EventsNode', event: 'buy' },
          ],
          dateRange: { date_from: '2021-03-02', date_to: '2021-03-10' },
          breakdownFilter: { breakdown: 'distinct_id', breakdown_type: 'event_metadata' },
        },
      })
      expect(res.statusCode, res.body).toBe(200)
      return res
        .json()
        .results.map((steps: { breakdown_value: string; count: number }[]) => [steps[0].breakdown_value, counts(steps)])
    }
    // every sign up in the range: both convert
    expect(await who({})).toEqual([
      ['ft1', [1, 1]],
      ['ft2', [1, 1]],
    ])
    // ft1's first-ever sign up (Mar 1) is before the range: only ft2
    expect(await who({ math: 'first_time_for_user' })).toEqual([['ft2', [1, 1]]])
    // the first sign up on the pro plan: ft1's Mar 5 one; ft2 never signed up on it
    const pro = [{ type: 'event', key: 'plan', value: 'pro', operator: 'exact' }]
    expect(await who({ math: 'first_time_for_user_with_filters', properties: pro })).toEqual([['ft1', [1, 1]]])
  })

  it('test_funnel_aggregate_by_groups-like: steps done by different persons of one group', async () => {
    const group = (key: string, who: string, at: string) => ({
      event: '$groupidentify',
      timestamp: at,
      properties: { distinct_id: who, $group_type: 'company', $group_key: key, $group_set: {} },
    })
    const batch = [
      group('acme', 'ga1', '2024-01-15T08:00:00Z'),
      group('globex', 'gb1', '2024-01-15T08:00:00Z'),
      ev('signup', 'ga1', '2024-01-15T09:00:00Z', { $groups: { company: 'acme' } }),
      ev('buy', 'ga2', '2024-01-15T10:00:00Z', { $groups: { company: 'acme' } }),
      ev('signup', 'gb1', '2024-01-15T09:00:00Z', { $groups: { company: 'globex' } }),
    ]
    const ingested = await t.burrow.app.inject({
      method: 'POST',
      url: '/batch/',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ api_key: t.creds.project_api_key, batch }),
    })
    expect(ingested.statusCode, ingested.body).toBe(200)
    await t.burrow.ingest.flushBackground()
    const query = (extra: Record<string, unknown>) =>
      postQuery(t, {
        query: {
          kind: 'FunnelsQuery',
          series: [STEPS[0], STEPS[2]],
          dateRange: { date_from: '2024-01-15', date_to: '2024-01-16' },
          ...extra,
        },
      })
    // by person: ga1 and gb1 sign up, ga2 only buys → nobody converts
    expect(counts((await query({})).json().results)).toEqual([2, 0])
    // by company: acme signs up (ga1) and buys (ga2) an hour later; globex only signs up
    const byGroup = (await query({ aggregation_group_type_index: 0 })).json().results
    expect(counts(byGroup)).toEqual([2, 1])
    expect(byGroup[1].average_conversion_time).toBe(3600)
  })

  it('returns no steps when nobody entered the funnel', async () => {
    const res = await postQuery(t, {
      query: {
        kind: 'FunnelsQuery',
        series: [
          { kind: 'EventsNode', event: 'never' },
          { kind: 'EventsNode', event: 'buy' },
        ],
        dateRange: { date_from: '2024-01-01', date_to: '2024-01-14' },
      },
    })
    expect(res.json().results).toEqual([])
  })
})

describe('FunnelsQuery time to convert and trends', () => {
  it('test_auto_bin_count_total-like: bins the signup → buy times', async () => {
    const res = await funnel({ funnelVizType: 'time_to_convert' })
    // signup → buy: u1 4200, u3 1800, u4 172800, u5 1200, u6 1200 (u2 never bought after signing up)
    // 5 values → ceil(cbrt(5)) = 2 bins; min 1200, max 172800, width ceil(171600 / 2) = 85800
    // → bins start at 1200, 87000, 172800: four in the first, u4 in the last; average 181200 / 5 = 36240
    expect(res.json().results).toEqual({
      average_conversion_time: 36240,
      bins: [
        [1200, 4],
        [87000, 0],
        [172800, 1],
      ],
    })
  })

  it('test_only_one_user_reached_one_step-like: conversion rates by the day of entrance', async () => {
    const res = await funnel({ funnelVizType: 'trends' }, { interval: 'day' })
    const [row] = res.json().results
    // entrances: u1 Jan 2 (converts), u2 Jan 3 (does not), u3 Jan 4, u4 Jan 5, u5 Jan 6, u6 Jan 8 (convert)
    expect(row.data).toEqual([0, 100, 0, 100, 100, 100, 0, 100, 0, 0, 0, 0, 0, 0])
    expect(row.count).toBe(14)
    expect(row.days[0]).toBe('2024-01-01')
    expect(row.labels[1]).toBe('2-Jan-2024')
  })

  it('test_basic_funnel_with_custom_bin_count-like: one bin between two later steps', async () => {
    const res = await funnel({ funnelVizType: 'time_to_convert', funnelFromStep: 1, funnelToStep: 2, binCount: 1 })
    // view → buy: u1 3600, u3 1800, u4 169200, u5 600, u6 600; one bin from 600, width 168600
    // → [600, 169200]: u4 alone lands on the upper edge; average 175800 / 5 = 35160
    expect(res.json().results).toEqual({
      average_conversion_time: 35160,
      bins: [
        [600, 4],
        [169200, 1],
      ],
    })
  })

  it('test_funnel_trend_breakdown-like: one row per breakdown value, listed by value', async () => {
    const res = await funnel({ funnelVizType: 'trends' }, { breakdownFilter: { breakdown: '$browser' } })
    const rows = res
      .json()
      .results.map((r: { breakdown_value: string; data: number[] }) => [r.breakdown_value, r.data.slice(0, 8)])
    // first touch: '' holds u2 (Jan 3, no conversion), u4 (Jan 5), u5 (Jan 6), u6 (Jan 8); Chrome u1 (Jan 2);
    // Firefox u3 (Jan 4)
    expect(rows).toEqual([
      ['', [0, 0, 0, 0, 100, 100, 0, 100]],
      ['Chrome', [0, 100, 0, 0, 0, 0, 0, 0]],
      ['Firefox', [0, 0, 0, 100, 0, 0, 0, 0]],
    ])
  })

  it('refuses an unknown order type and an inverted exclusion range', async () => {
    const order = await funnel({ funnelOrderType: 'sideways' })
    expect(order.statusCode).toBe(400)
    expect(order.json()).toMatchObject({ type: 'validation_error', attr: 'funnelsFilter__funnelOrderType' })
    const exclusion = await funnel({
      exclusions: [{ kind: 'EventsNode', event: 'cancel', funnelFromStep: 1, funnelToStep: 1 }],
    })
    expect(exclusion.json().attr).toBe('funnelsFilter__exclusions__0__funnelToStep')
  })
})

describe('FunnelsQuery over many actors', () => {
  it('reads actors in pages and aggregates by a HogQL expression (funnelAggregateByHogQL)', async () => {
    // 10,050 distinct ids, each with bulk_a then bulk_b a minute later; every third one also has a bulk_b before
    // its bulk_a (ignored: out of order) — more actors than one page holds, so they are read in two pages
    const rows: string[] = []
    for (let i = 0; i < 10_050; i++) {
      const row = (event: string, timestamp: string) =>
        JSON.stringify(
          eventRow({
            uuid: crypto.randomUUID(),
            team_id: t.creds.project_id,
            event,
            distinct_id: `bulk-${i}`,
            timestamp,
            created_at: timestamp,
          }),
        )
      rows.push(row('bulk_a', '2023-06-10 10:00:00.000000'))
      if (i % 3 === 0) rows.push(row('bulk_b', '2023-06-10 09:00:00.000000'))
      else rows.push(row('bulk_b', '2023-06-10 10:01:00.000000'))
    }
    await t.burrow.events.insertJsonEachRow('events', rows.join('\n'))
    const res = await postQuery(t, {
      query: {
        kind: 'FunnelsQuery',
        series: [
          { kind: 'EventsNode', event: 'bulk_a' },
          { kind: 'EventsNode', event: 'bulk_b' },
        ],
        dateRange: { date_from: '2023-06-01', date_to: '2023-06-30' },
        funnelsFilter: { funnelAggregateByHogQL: 'distinct_id' },
      },
    })
    expect(res.statusCode, res.body).toBe(200)
    // i % 3 = 0 for 3,350 of the 10,050 ids (0, 3, …, 10,047): they never do bulk_b after bulk_a
    expect(counts(res.json().results)).toEqual([10_050, 6_700])
    expect(res.json().results[1].average_conversion_time).toBe(60)
  }, 120_000)
})
