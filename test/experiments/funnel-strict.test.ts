// Funnel metrics with `funnel_order_type: strict`, as PostHog computes them (its funnel UDF in strict mode with the
// exposure as step 0): only exposure and step events make up the sequence, and any of them out of turn — another
// exposure, a later step, a step before its predecessor — breaks the attempt. Each person's level is worked out by
// hand below, beside what the sequential ("ordered") funnel gives for the same events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let experimentId: number
type Json = Record<string, any>
const KEY = 'strict-exp'

const api = (method: 'GET' | 'POST', path: string, payload?: unknown) =>
  t.burrow.app.inject({
    method,
    url: `/api/projects/${t.creds.project_id}/${path}`,
    headers: t.auth,
    ...(payload === undefined ? {} : { payload: payload as Json }),
  })
const at = (minute: number, day = 11) => `2026-01-${day}T10:${String(minute).padStart(2, '0')}:00Z`
const ev = (event: string, distinct_id: string, timestamp: string, properties: Json = {}) => ({
  event,
  distinct_id,
  timestamp,
  properties,
})
const exposure = (id: string, variant: string, timestamp: string) =>
  ev('$feature_flag_called', id, timestamp, { $feature_flag: KEY, $feature_flag_response: variant })
const funnel = (extra: Json = {}) => ({
  kind: 'ExperimentMetric',
  metric_type: 'funnel',
  series: [
    { kind: 'EventsNode', event: 'signup' },
    { kind: 'EventsNode', event: 'purchase' },
  ],
  ...extra,
})
const run = async (metric: Json) => {
  const res = await api('POST', 'query/', {
    query: { kind: 'ExperimentQuery', experiment_id: experimentId, metric },
    refresh: 'force_blocking',
  })
  return res
}

beforeAll(async () => {
  t = await startTestApp({ clock: () => new Date('2026-01-20T12:00:00Z') })
  const created = await api('POST', 'experiments/', {
    name: 'Strict',
    feature_flag_key: KEY,
    start_date: '2026-01-10T00:00:00Z',
    exposure_criteria: { filterTestAccounts: false },
  })
  expect(created.statusCode, created.body).toBe(201)
  experimentId = created.json().id
  const batch = [
    // c0: exposure, signup, purchase — strict 2 (ordered 2)
    exposure('c0', 'control', at(0)),
    ev('signup', 'c0', at(5)),
    ev('purchase', 'c0', at(10)),
    // c1: a pageview between the steps is no step: strict 2 (ordered 2)
    exposure('c1', 'control', at(0)),
    ev('signup', 'c1', at(5)),
    ev('$pageview', 'c1', at(7)),
    ev('purchase', 'c1', at(10)),
    // c2: a second exposure between the steps restarts the attempt: strict 1 (ordered 2)
    exposure('c2', 'control', at(0)),
    ev('signup', 'c2', at(5)),
    exposure('c2', 'control', at(7)),
    ev('purchase', 'c2', at(10)),
    // c3: purchase before signup breaks the attempt at once: strict 0 (ordered 1)
    exposure('c3', 'control', at(0)),
    ev('purchase', 'c3', at(5)),
    ev('signup', 'c3', at(10)),
    // c4: signup twice, then purchase — the repeated step keeps its place: strict 2 (ordered 2)
    exposure('c4', 'control', at(0)),
    ev('signup', 'c4', at(5)),
    ev('signup', 'c4', at(7)),
    ev('purchase', 'c4', at(10)),
    // c5: exposed only: 0
    exposure('c5', 'control', at(0)),
    // t0: exposure, signup, purchase: strict 2 (ordered 2)
    exposure('t0', 'test', at(0)),
    ev('signup', 't0', at(5)),
    ev('purchase', 't0', at(10)),
    // t1: signup the day before the exposure, purchase after it: strict 0 (ordered 0)
    ev('signup', 't1', at(5, 10)),
    exposure('t1', 'test', at(0)),
    ev('purchase', 't1', at(10)),
    // t2: exposure, signup, purchase two days later: strict 2 without a window, 1 within a one-day window
    exposure('t2', 'test', at(0)),
    ev('signup', 't2', at(5)),
    ev('purchase', 't2', at(10, 13)),
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

describe('strict-order funnel metrics', () => {
  it('counts a step only when it follows the previous one with no exposure or step event between', async () => {
    const res = await run(funnel({ funnel_order_type: 'strict' }))
    expect(res.statusCode, res.body).toBe(200)
    // control levels 2, 2, 1, 0, 2, 0: 6 exposed, 4 past signup, 3 converted
    expect(res.json().baseline).toMatchObject({ key: 'control', number_of_samples: 6, sum: 3, step_counts: [6, 4, 3] })
    // test levels 2, 0, 2
    expect(res.json().variant_results[0]).toMatchObject({
      key: 'test',
      number_of_samples: 3,
      sum: 2,
      step_counts: [3, 2, 2],
    })
  })

  it('differs from the sequential funnel on the same events', async () => {
    const res = await run(funnel({ funnel_order_type: 'ordered' }))
    expect(res.statusCode, res.body).toBe(200)
    // control levels 2, 2, 2, 1, 2, 0
    expect(res.json().baseline).toMatchObject({ number_of_samples: 6, sum: 4, step_counts: [6, 5, 4] })
  })

  it('measures the conversion window from the exposure that started the attempt', async () => {
    const res = await run(funnel({ funnel_order_type: 'strict', conversion_window: 1, conversion_window_unit: 'day' }))
    expect(res.statusCode, res.body).toBe(200)
    // t2's purchase comes two days after its exposure: level 1
    expect(res.json().variant_results[0]).toMatchObject({ number_of_samples: 3, sum: 1, step_counts: [3, 2, 1] })
    expect(res.json().baseline).toMatchObject({ sum: 3 })
  })

  it('refuses an unknown order type', async () => {
    const res = await run(funnel({ funnel_order_type: 'backwards' }))
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({
      attr: 'metric__funnel_order_type',
      detail: 'funnel_order_type must be ordered, unordered or strict.',
    })
  })
})
