import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { normalCdf, normalQuantile, studentTCdf, studentTQuantile } from './reference.js'

let t: TestApp
const now = new Date('2026-01-20T12:00:00Z')
type Json = Record<string, any>

const api = (method: 'GET' | 'POST' | 'PATCH', path: string, payload?: unknown) =>
  t.burrow.app.inject({
    method,
    url: `/api/projects/${t.creds.project_id}/${path}`,
    headers: t.auth,
    ...(payload === undefined ? {} : { payload: payload as Json }),
  })

async function capture(batch: unknown[]) {
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: '/batch/',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ api_key: t.creds.project_api_key, batch }),
  })
  expect(res.statusCode, res.body).toBe(200)
}
const ev = (event: string, distinct_id: string, timestamp: string, properties: Json = {}) => ({
  event,
  distinct_id,
  timestamp,
  properties,
})
const exposure = (id: string, variant: string, at = '2026-01-11T10:00:00Z', key = 'checkout-exp') =>
  ev('$feature_flag_called', id, at, { $feature_flag: key, $feature_flag_response: variant })

async function query(experimentId: number, metric: Json) {
  const res = await api('POST', 'query/', {
    query: { kind: 'ExperimentQuery', experiment_id: experimentId, metric },
    refresh: 'force_blocking',
  })
  return res
}

let experimentId: number
const revenue = {
  kind: 'ExperimentMetric',
  metric_type: 'mean',
  source: { kind: 'EventsNode', event: 'purchase', math: 'sum', math_property: 'revenue' },
}

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  const created = await api('POST', 'experiments/', {
    name: 'Checkout',
    feature_flag_key: 'checkout-exp',
    start_date: '2026-01-10T00:00:00Z',
    exposure_criteria: { filterTestAccounts: false },
  })
  expect(created.statusCode, created.body).toBe(201)
  experimentId = created.json().id
  const batch: unknown[] = []
  for (let i = 0; i < 60; i++) {
    batch.push(exposure(`c${i}`, 'control'))
    batch.push(exposure(`t${i}`, 'test'))
    if (i < 30) batch.push(ev('purchase', `c${i}`, '2026-01-12T10:00:00Z', { revenue: 10 }))
    if (i < 40) batch.push(ev('purchase', `t${i}`, '2026-01-12T10:00:00Z', { revenue: 20 }))
    if (i < 10) batch.push(ev('signup', `c${i}`, '2026-01-12T11:00:00Z'))
    if (i < 20) batch.push(ev('signup', `t${i}`, '2026-01-12T11:00:00Z'))
  }
  // saw both variants: `$multiple`, left out
  batch.push(exposure('both', 'control'), exposure('both', 'test', '2026-01-11T11:00:00Z'))
  batch.push(ev('purchase', 'both', '2026-01-12T10:00:00Z', { revenue: 1000 }))
  // before the exposure, and never exposed: not counted
  batch.push(ev('purchase', 'c50', '2026-01-10T10:00:00Z', { revenue: 500 }))
  batch.push(ev('purchase', 'stranger', '2026-01-12T10:00:00Z', { revenue: 500 }))
  // another flag's exposure and an unknown variant: not counted
  batch.push(exposure('x1', 'control', '2026-01-11T10:00:00Z', 'other-flag'), exposure('x2', 'nope'))
  await capture(batch)
  await t.burrow.ingest.flushBackground()
}, 60_000)
afterAll(() => t?.close())

describe('ExperimentQuery', () => {
  it('computes a mean metric per variant and the Bayesian result', async () => {
    const res = await query(experimentId, revenue)
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body.baseline).toMatchObject({ key: 'control', number_of_samples: 60, sum: 300, sum_squares: 3000 })
    const [test] = body.variant_results
    expect(test).toMatchObject({ key: 'test', number_of_samples: 60, sum: 800, sum_squares: 16000, method: 'bayesian' })
    // by hand: means 5 and 40/3; sample variances (Σx² − (Σx)²/n)/(n−1)
    const mc = 5
    const mt = 800 / 60
    const vc = (3000 - 300 ** 2 / 60) / 59
    const vt = (16000 - 800 ** 2 / 60) / 59
    const effect = (mt - mc) / mc
    const variance = vt / 60 / mc ** 2 + (mt ** 2 * (vc / 60)) / mc ** 4
    const sd = Math.sqrt(variance)
    expect(test.chance_to_win).toBeCloseTo(1 - normalCdf(-effect / sd), 6)
    expect(test.credible_interval[0]).toBeCloseTo(effect + sd * normalQuantile(0.025), 6)
    expect(test.credible_interval[1]).toBeCloseTo(effect + sd * normalQuantile(0.975), 6)
    expect(test.significant).toBe(true)
    expect(body.baseline.validation_failures).toEqual([])
  })

  it('computes a funnel metric with the exposure as step 0, and the frequentist result', async () => {
    await api('PATCH', `experiments/${experimentId}/`, { stats_config: { method: 'frequentist' } })
    const res = await query(experimentId, {
      kind: 'ExperimentMetric',
      metric_type: 'funnel',
      series: [
        { kind: 'EventsNode', event: 'purchase' },
        { kind: 'EventsNode', event: 'signup' },
      ],
    })
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body.baseline).toMatchObject({ key: 'control', number_of_samples: 60, sum: 10, step_counts: [60, 30, 10] })
    const [test] = body.variant_results
    expect(test).toMatchObject({ key: 'test', number_of_samples: 60, sum: 20, step_counts: [60, 40, 20] })
    const pc = 10 / 60
    const pt = 20 / 60
    const a = (pt * (1 - pt)) / 60
    const b = (pc * (1 - pc)) / 60
    const estimate = (pt - pc) / pc
    const variance = a / pc ** 2 + (pt ** 2 * b) / pc ** 4
    const df = (a + b) ** 2 / (a ** 2 / 59 + b ** 2 / 59)
    const tStat = estimate / Math.sqrt(variance)
    expect(test.method).toBe('frequentist')
    expect(test.p_value).toBeCloseTo(2 * (1 - studentTCdf(Math.abs(tStat), df)), 6)
    const half = studentTQuantile(0.975, df) * Math.sqrt(variance)
    expect(test.confidence_interval[0]).toBeCloseTo(estimate - half, 6)
    expect(test.confidence_interval[1]).toBeCloseTo(estimate + half, 6)
    await api('PATCH', `experiments/${experimentId}/`, { stats_config: { method: 'bayesian' } })
  })

  it('computes ratio sufficient statistics per variant', async () => {
    const res = await query(experimentId, {
      kind: 'ExperimentMetric',
      metric_type: 'ratio',
      numerator: { kind: 'EventsNode', event: 'purchase', math: 'sum', math_property: 'revenue' },
      denominator: { kind: 'EventsNode', event: 'purchase' },
    })
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body.baseline).toMatchObject({
      number_of_samples: 60,
      sum: 300,
      sum_squares: 3000,
      denominator_sum: 30,
      denominator_sum_squares: 30,
      numerator_denominator_sum_product: 300,
    })
    expect(body.variant_results[0]).toMatchObject({
      sum: 800,
      denominator_sum: 40,
      numerator_denominator_sum_product: 800,
    })
  })

  it('models retention as a ratio of completers to starters', async () => {
    const res = await query(experimentId, {
      kind: 'ExperimentMetric',
      metric_type: 'retention',
      start_event: { kind: 'EventsNode', event: 'purchase' },
      completion_event: { kind: 'EventsNode', event: 'signup' },
      retention_window_start: 0,
      retention_window_end: 1,
      retention_window_unit: 'day',
    })
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body.baseline).toMatchObject({ number_of_samples: 60, sum: 10, denominator_sum: 30 })
    expect(body.variant_results[0]).toMatchObject({ number_of_samples: 60, sum: 20, denominator_sum: 40 })
  })

  it('counts metric events only within the conversion window', async () => {
    const res = await query(experimentId, { ...revenue, conversion_window: 1, conversion_window_unit: 'hour' })
    expect(res.json().baseline).toMatchObject({ number_of_samples: 60, sum: 0 })
    const day = await query(experimentId, { ...revenue, conversion_window: 2, conversion_window_unit: 'day' })
    expect(day.json().baseline).toMatchObject({ sum: 300 })
  })

  it('refuses an unknown experiment and a bad metric', async () => {
    const missing = await query(999999, revenue)
    expect(missing.statusCode).toBe(400)
    expect(missing.json().detail).toBe('Experiment with id 999999 not found')
    const bad = await query(experimentId, { kind: 'ExperimentMetric', metric_type: 'median' })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().attr).toBe('metric__metric_type')
  })

  it('computes the daily timeseries in the background, once per metric at a time', async () => {
    const detail = (await api('GET', `experiments/${experimentId}/`)).json()
    const metric = { ...revenue, uuid: 'ts-metric' }
    const fingerprint = 'f'.repeat(64)
    const missing = await api('GET', `experiments/${experimentId}/timeseries_results/?metric_uuid=ts-metric`)
    expect(missing.json().detail).toBe('fingerprint query parameter is required')
    const first = await api('POST', `experiments/${experimentId}/recalculate_timeseries/`, { metric, fingerprint })
    expect(first.statusCode, first.body).toBe(201)
    const again = await api('POST', `experiments/${experimentId}/recalculate_timeseries/`, { metric, fingerprint })
    if (again.statusCode === 200) expect(again.json().id).toBe(first.json().id)
    else expect(again.statusCode).toBe(201)
    let result: Json = {}
    for (let i = 0; i < 100; i++) {
      result = (
        await api(
          'GET',
          `experiments/${experimentId}/timeseries_results/?metric_uuid=ts-metric&fingerprint=${fingerprint}`,
        )
      ).json()
      if (result.status === 'completed' && result.recalculation_status === null) break
      await new Promise((r) => setTimeout(r, 200))
    }
    expect(detail.start_date).toBe('2026-01-10T00:00:00.000Z')
    expect(result.status).toBe('completed')
    expect(Object.keys(result.timeseries)).toHaveLength(11)
    expect(result.timeseries['2026-01-10'].baseline.number_of_samples).toBe(0)
    expect(result.timeseries['2026-01-11'].baseline).toMatchObject({ number_of_samples: 60, sum: 0 })
    expect(result.timeseries['2026-01-20'].baseline).toMatchObject({ number_of_samples: 60, sum: 300 })
    expect(result.timeseries['2026-01-20'].variant_results[0]).toMatchObject({ sum: 800 })
  })

  it('winsorizes at the pooled percentile, leaving zeros out of the upper bound with ignore_zeros', async () => {
    // 120 entity values: 50 zeros, 30 tens, 40 twenties; quantileExact(0.5) takes the 61st → 10
    const capped = await query(experimentId, { ...revenue, upper_bound_percentile: 0.5 })
    expect(capped.json().baseline).toMatchObject({ sum: 300, sum_squares: 3000 })
    expect(capped.json().variant_results[0]).toMatchObject({ sum: 400, sum_squares: 4000 })
    // without zeros: 70 values, the 36th → 20, nothing capped
    const nonZero = await query(experimentId, { ...revenue, upper_bound_percentile: 0.5, ignore_zeros: true })
    expect(nonZero.statusCode, nonZero.body).toBe(200)
    expect(nonZero.json().variant_results[0]).toMatchObject({ sum: 800, sum_squares: 16000 })
  })

  it('assigns an entity that saw both variants to its first one with first_seen', async () => {
    const patched = await api('PATCH', `experiments/${experimentId}/`, {
      exposure_criteria: { filterTestAccounts: false, multiple_variant_handling: 'first_seen' },
    })
    expect(patched.statusCode, patched.body).toBe(200)
    const res = await query(experimentId, revenue)
    expect(res.json().baseline).toMatchObject({ number_of_samples: 61, sum: 1300 })
    expect(res.json().variant_results[0]).toMatchObject({ number_of_samples: 60, sum: 800 })
    await api('PATCH', `experiments/${experimentId}/`, { exposure_criteria: { filterTestAccounts: false } })
  })
})
