// Each entity's metric value as the maths of a metric define it (avg, min, max, distinct days and sessions, event
// counts, unordered and ordered funnels, retention from the first or last start event), over a handful of
// persons whose expected values are worked out below by hand.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
const now = new Date('2026-01-20T12:00:00Z')
type Json = Record<string, any>

const api = (method: 'POST', path: string, payload: unknown) =>
  t.burrow.app.inject({
    method,
    url: `/api/projects/${t.creds.project_id}/${path}`,
    headers: t.auth,
    payload: payload as Json,
  })

const ev = (event: string, distinct_id: string, timestamp: string, properties: Json = {}) => ({
  event,
  distinct_id,
  timestamp,
  properties,
})
const exposure = (id: string, variant: string) =>
  ev('$feature_flag_called', id, '2026-01-11T10:00:00Z', {
    $feature_flag: 'values-exp',
    $feature_flag_response: variant,
  })
const purchase = (id: string, at: string, amount: number, session?: string) =>
  ev('purchase', id, at, session ? { amount, $session_id: session } : { amount })

let experimentId: number

async function counts(metric: Json) {
  const res = await api('POST', 'query/', {
    query: { kind: 'ExperimentQuery', experiment_id: experimentId, metric: { kind: 'ExperimentMetric', ...metric } },
    refresh: 'force_blocking',
  })
  expect(res.statusCode, res.body).toBe(200)
  const body = res.json()
  return { control: body.baseline, test: body.variant_results[0] }
}

const mean = (math: string, extra: Json = {}) =>
  counts({ metric_type: 'mean', source: { kind: 'EventsNode', event: 'purchase', math, ...extra } })

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  const created = await api('POST', 'experiments/', {
    name: 'Values',
    feature_flag_key: 'values-exp',
    start_date: '2026-01-10T00:00:00Z',
    exposure_criteria: { filterTestAccounts: false },
  })
  expect(created.statusCode, created.body).toBe(201)
  experimentId = created.json().id
  const batch = [
    exposure('a1', 'control'),
    exposure('a2', 'control'),
    exposure('b1', 'test'),
    exposure('b2', 'test'),
    // a1: one purchase before the exposure (never counted), three after over two days and two sessions, then a
    // signup
    purchase('a1', '2026-01-10T09:00:00Z', 100, 's0'),
    purchase('a1', '2026-01-11T12:00:00Z', 10, 's1'),
    purchase('a1', '2026-01-12T12:00:00Z', 30, 's1'),
    purchase('a1', '2026-01-12T13:00:00Z', 20, 's2'),
    ev('signup', 'a1', '2026-01-13T00:00:00Z'),
    // a2: nothing after the exposure
    // b1: a signup before the exposure (not counted), one purchase after
    ev('signup', 'b1', '2026-01-10T12:00:00Z'),
    purchase('b1', '2026-01-11T11:00:00Z', 5, 's3'),
    // b2: a signup, then two purchases without a session
    ev('signup', 'b2', '2026-01-13T09:00:00Z'),
    purchase('b2', '2026-01-13T10:00:00Z', 7),
    purchase('b2', '2026-01-13T11:00:00Z', 9),
  ]
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: '/batch/',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ api_key: t.creds.project_api_key, batch }),
  })
  expect(res.statusCode, res.body).toBe(200)
  await t.burrow.ingest.flushBackground()
}, 60_000)
afterAll(() => t?.close())

describe('ExperimentQuery per-entity values', () => {
  it('averages, and takes the least and the greatest of, the amounts after the exposure (0 without any)', async () => {
    // avg: a1 (10+30+20)/3 = 20, a2 0; b1 5, b2 (7+9)/2 = 8
    const avg = await mean('avg', { math_property: 'amount' })
    expect(avg.control).toMatchObject({ number_of_samples: 2, sum: 20, sum_squares: 400 })
    expect(avg.test).toMatchObject({ number_of_samples: 2, sum: 13, sum_squares: 89 })
    // min: a1 10, a2 0; b1 5, b2 7
    const min = await mean('min', { math_property: 'amount' })
    expect(min.control).toMatchObject({ sum: 10, sum_squares: 100 })
    expect(min.test).toMatchObject({ sum: 12, sum_squares: 74 })
    // max: a1 30, a2 0; b1 5, b2 9
    const max = await mean('max', { math_property: 'amount' })
    expect(max.control).toMatchObject({ sum: 30, sum_squares: 900 })
    expect(max.test).toMatchObject({ sum: 14, sum_squares: 106 })
    // a HogQL aggregate is the same per-entity aggregate
    const hogql = await mean('hogql', { math_hogql: 'avg(properties.amount)' })
    expect(hogql.control).toMatchObject({ sum: 20, sum_squares: 400 })
    expect(hogql.test).toMatchObject({ sum: 13, sum_squares: 89 })
  })

  it('counts events, distinct days and distinct non-empty sessions per entity', async () => {
    // a1 3, a2 0; b1 1, b2 2
    const total = await mean('total')
    expect(total.control).toMatchObject({ sum: 3, sum_squares: 9 })
    expect(total.test).toMatchObject({ sum: 3, sum_squares: 5 })
    // days: a1 Jan 11 and 12, a2 none; b1 Jan 11, b2 Jan 13
    const days = await mean('dau')
    expect(days.control).toMatchObject({ sum: 2, sum_squares: 4 })
    expect(days.test).toMatchObject({ sum: 2, sum_squares: 2 })
    // sessions: a1 s1 and s2 (s0 was before the exposure), a2 none; b1 s3, b2 none
    const sessions = await mean('unique_session')
    expect(sessions.control).toMatchObject({ sum: 2, sum_squares: 4 })
    expect(sessions.test).toMatchObject({ sum: 1, sum_squares: 1 })
  })

  it('reaches a funnel step in any order when unordered, only after the previous step when ordered', async () => {
    const series = [
      { kind: 'EventsNode', event: 'purchase' },
      { kind: 'EventsNode', event: 'signup' },
    ]
    // unordered: a1 both, a2 none; b1 a purchase only (its signup came before the exposure), b2 both
    const unordered = await counts({ metric_type: 'funnel', funnel_order_type: 'unordered', series })
    expect(unordered.control).toMatchObject({ number_of_samples: 2, sum: 1, step_counts: [2, 1, 1] })
    expect(unordered.test).toMatchObject({ number_of_samples: 2, sum: 1, step_counts: [2, 2, 1] })
    // ordered: b2 signed up before purchasing, so stops at the purchase
    const ordered = await counts({ metric_type: 'funnel', funnel_order_type: 'ordered', series })
    expect(ordered.control).toMatchObject({ sum: 1, step_counts: [2, 1, 1] })
    expect(ordered.test).toMatchObject({ sum: 0, step_counts: [2, 2, 0] })
  })

  it('starts the retention window at the first start event, or at the last with last_seen', async () => {
    const retention = {
      metric_type: 'retention',
      start_event: { kind: 'EventsNode', event: 'purchase' },
      completion_event: { kind: 'EventsNode', event: 'signup' },
      retention_window_start: 0,
      retention_window_end: 1,
      retention_window_unit: 'day',
    }
    // first purchases: a1 Jan 11 12:00 (signup Jan 13 00:00 is outside the day after), b1 Jan 11 11:00, b2 Jan 13
    // 10:00 (its signup came before): nobody completes; starters a1; b1 and b2
    const first = await counts(retention)
    expect(first.control).toMatchObject({ number_of_samples: 2, sum: 0, denominator_sum: 1 })
    expect(first.test).toMatchObject({ number_of_samples: 2, sum: 0, denominator_sum: 2 })
    // last purchases: a1 Jan 12 13:00, so the signup at Jan 13 00:00 is within the day after
    const last = await counts({ ...retention, start_handling: 'last_seen' })
    expect(last.control).toMatchObject({ sum: 1, denominator_sum: 1, numerator_denominator_sum_product: 1 })
    expect(last.test).toMatchObject({ sum: 0, denominator_sum: 2, numerator_denominator_sum_product: 0 })
  })
})
