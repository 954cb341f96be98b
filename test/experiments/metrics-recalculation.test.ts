// `metrics_recalculation/`, after PostHog's recalculation API tests: one run over every metric (primary, secondary,
// saved) with a pinned window end, idempotent while active, read back by id and as `latest`; a draft refused; a
// failing metric fails the run with its error recorded; before any run, the newest daily point stands in.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMetricsRecalculation } from '../../src/experiments/metrics-recalculation.js'
import { createExperimentStore } from '../../src/experiments/store.js'
import { createExperimentSubjects } from '../../src/experiments/subject.js'
import { createJobLeases } from '../../src/jobs/leases.js'
import { createPersonLookup } from '../../src/queries/person-lookup.js'
import { createHogQLExecutor } from '../../src/queries/runner.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

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
const ev = (event: string, distinct_id: string, timestamp: string, properties: Json = {}) => ({
  event,
  distinct_id,
  timestamp,
  properties,
})
const exposure = (id: string, variant: string, key: string) =>
  ev('$feature_flag_called', id, '2026-01-11T10:00:00Z', { $feature_flag: key, $feature_flag_response: variant })

const revenue = (uuid: string) => ({
  kind: 'ExperimentMetric',
  metric_type: 'mean',
  uuid,
  source: { kind: 'EventsNode', event: 'purchase', math: 'sum', math_property: 'revenue' },
})
const signupFunnel = (uuid: string) => ({
  kind: 'ExperimentMetric',
  metric_type: 'funnel',
  uuid,
  series: [{ kind: 'EventsNode', event: 'signup' }],
})

async function experiment(key: string, extra: Json = {}): Promise<Json> {
  const res = await api('POST', 'experiments/', {
    name: `Experiment ${key}`,
    feature_flag_key: key,
    start_date: '2026-01-10T00:00:00Z',
    exposure_criteria: { filterTestAccounts: false },
    ...extra,
  })
  expect(res.statusCode, res.body).toBe(201)
  return res.json()
}

async function until(path: string, done: (body: Json) => boolean): Promise<Json> {
  let body: Json = {}
  for (let i = 0; i < 150; i++) {
    body = (await api('GET', path)).json()
    if (done(body)) return body
    await new Promise((r) => setTimeout(r, 100))
  }
  return body
}

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  // Both flags: 60 persons per variant; 30 control buyers of 10 and 40 test buyers of 20; 10 and 20 signups.
  const batch: unknown[] = []
  for (const key of ['recalc-exp', 'fallback-exp']) {
    for (let i = 0; i < 60; i++) {
      batch.push(exposure(`${key}-c${i}`, 'control', key), exposure(`${key}-t${i}`, 'test', key))
      if (i < 30) batch.push(ev('purchase', `${key}-c${i}`, '2026-01-12T10:00:00Z', { revenue: 10 }))
      if (i < 40) batch.push(ev('purchase', `${key}-t${i}`, '2026-01-12T10:00:00Z', { revenue: 20 }))
      if (i < 10) batch.push(ev('signup', `${key}-c${i}`, '2026-01-12T11:00:00Z'))
      if (i < 20) batch.push(ev('signup', `${key}-t${i}`, '2026-01-12T11:00:00Z'))
    }
  }
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

describe('metrics_recalculation', () => {
  it('refuses a draft and an unknown trigger; 404 before any run or daily point', async () => {
    const draft = await api('POST', 'experiments/', { name: 'Draft', feature_flag_key: 'draft-recalc' })
    const id = draft.json().id
    const refused = await api('POST', `experiments/${id}/metrics_recalculation/`, {})
    expect(refused.statusCode).toBe(400)
    expect(refused.json().detail).toBe("Cannot recalculate metrics for experiment that hasn't started")
    const launched = await experiment('never-run', { metrics: [revenue('nr')] })
    const badTrigger = await api('POST', `experiments/${launched.id}/metrics_recalculation/`, { trigger: 'cron' })
    expect(badTrigger.statusCode).toBe(400)
    expect(badTrigger.json()).toMatchObject({ attr: 'trigger', code: 'invalid_choice' })
    const latest = await api('GET', `experiments/${launched.id}/metrics_recalculation/latest/`)
    expect(latest.statusCode).toBe(404)
    expect(latest.json().detail).toBe('No completed recalculation found')
    expect((await api('POST', 'experiments/999999/metrics_recalculation/', {})).statusCode).toBe(404)
  })

  it('recalculates every metric in one window and reads the run back by id and as latest', async () => {
    const saved = await api('POST', 'experiment_saved_metrics/', { name: 'Signups', query: signupFunnel('saved-fun') })
    expect(saved.statusCode, saved.body).toBe(201)
    const exp = await experiment('recalc-exp', {
      metrics: [revenue('rev')],
      metrics_secondary: [signupFunnel('fun')],
      saved_metrics_ids: [{ id: saved.json().id, metadata: { type: 'secondary' } }],
    })
    const first = await api('POST', `experiments/${exp.id}/metrics_recalculation/`, {})
    expect(first.statusCode, first.body).toBe(201)
    const run = first.json()
    expect(run).toMatchObject({
      experiment_id: exp.id,
      status: 'pending',
      total_metrics: 3,
      completed_metrics: 0,
      failed_metrics: 0,
      metric_errors: {},
      trigger: 'manual',
      is_existing: false,
      result_source: 'recalculation',
      query_to: null,
      started_at: null,
      completed_at: null,
    })
    expect(run.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(run.results).toBeUndefined()
    // while the run is active, asking again answers it (200); once it has finished, a new run starts (201)
    const again = await api('POST', `experiments/${exp.id}/metrics_recalculation/`, { trigger: 'experiment_update' })
    if (again.statusCode === 200) expect(again.json()).toMatchObject({ id: run.id, is_existing: true })
    else expect(again.statusCode).toBe(201)

    const done = await until(
      `experiments/${exp.id}/metrics_recalculation/${run.id}/`,
      (b) => b.status === 'completed' || b.status === 'failed',
    )
    expect(done.status).toBe('completed')
    expect(done).toMatchObject({ completed_metrics: 3, failed_metrics: 0, query_to: now.toISOString() })
    expect(done.started_at).toBe(now.toISOString())
    const byMetric = new Map<string, Json>(done.results.map((r: Json) => [r.metric_uuid, r]))
    expect([...byMetric.keys()].sort()).toEqual(['fun', 'rev', 'saved-fun'])
    // revenue: control 30 × 10 = 300 over 60, test 40 × 20 = 800 over 60
    expect(byMetric.get('rev')?.result.baseline).toMatchObject({ key: 'control', number_of_samples: 60, sum: 300 })
    expect(byMetric.get('rev')?.result.variant_results[0]).toMatchObject({ key: 'test', sum: 800 })
    // signups: 10 of 60 in control, 20 of 60 in test
    for (const uuid of ['fun', 'saved-fun']) {
      expect(byMetric.get(uuid)?.status).toBe('completed')
      expect(byMetric.get(uuid)?.result.baseline).toMatchObject({ number_of_samples: 60, sum: 10 })
      expect(byMetric.get(uuid)?.result.variant_results[0]).toMatchObject({ number_of_samples: 60, sum: 20 })
    }

    await until(`experiments/${exp.id}/metrics_recalculation/latest/`, (b) => b.status === 'completed')
    const latest = await api('GET', `experiments/${exp.id}/metrics_recalculation/latest/`)
    expect(latest.statusCode).toBe(200)
    expect(latest.json().result_source).toBe('recalculation')
    expect(latest.json().results).toHaveLength(3)

    // the runs' rows are kept apart from the daily timeseries of the same metric
    const metric = (await api('GET', `experiments/${exp.id}/`)).json().metrics[0]
    const series = await api(
      'GET',
      `experiments/${exp.id}/timeseries_results/?metric_uuid=rev&fingerprint=${metric.fingerprint}`,
    )
    expect(series.json().status).toBe('pending')

    const malformed = await api('GET', `experiments/${exp.id}/metrics_recalculation/not-a-uuid/`)
    expect(malformed.statusCode).toBe(404)
    expect(malformed.json().detail).toBe('Recalculation not found')
    const unknown = await api(
      'GET',
      `experiments/${exp.id}/metrics_recalculation/00000000-0000-4000-8000-000000000000/`,
    )
    expect(unknown.statusCode).toBe(404)
  })

  it('fails the run when a metric fails, recording the error by metric', async () => {
    const exp = await experiment('failing-recalc', {
      metrics: [
        revenue('ok'),
        { kind: 'ExperimentMetric', metric_type: 'mean', uuid: 'bad', source: { kind: 'ActionsNode', id: 987654 } },
      ],
    })
    const first = await api('POST', `experiments/${exp.id}/metrics_recalculation/`, { trigger: 'agent_mcp' })
    expect(first.statusCode, first.body).toBe(201)
    const done = await until(
      `experiments/${exp.id}/metrics_recalculation/${first.json().id}/`,
      (b) => b.status === 'completed' || b.status === 'failed',
    )
    expect(done).toMatchObject({ status: 'failed', trigger: 'agent_mcp', completed_metrics: 1, failed_metrics: 1 })
    expect(done.metric_errors.bad).toMatchObject({ step: 'calculation' })
    expect(typeof done.metric_errors.bad.message).toBe('string')
    const bad = done.results.find((r: Json) => r.metric_uuid === 'bad')
    expect(bad).toMatchObject({ status: 'failed', result: null })
    expect(bad.error_message).toBe(done.metric_errors.bad.message)
    // a failed run that ran is still the latest finished one
    expect((await api('GET', `experiments/${exp.id}/metrics_recalculation/latest/`)).json().id).toBe(first.json().id)
  })

  it("stands in with each metric's newest daily point before any run finishes", async () => {
    const exp = await experiment('fallback-exp', { metrics: [revenue('fb')] })
    const metric = exp.metrics[0]
    const ts = await api('POST', `experiments/${exp.id}/recalculate_timeseries/`, {
      metric,
      fingerprint: metric.fingerprint,
    })
    expect(ts.statusCode, ts.body).toBe(201)
    const series = await until(
      `experiments/${exp.id}/timeseries_results/?metric_uuid=fb&fingerprint=${metric.fingerprint}`,
      (b) => b.status === 'completed' && b.recalculation_status === null,
    )
    expect(series.status).toBe('completed')
    const latest = await api('GET', `experiments/${exp.id}/metrics_recalculation/latest/`)
    expect(latest.statusCode, latest.body).toBe(200)
    expect(latest.json()).toMatchObject({
      id: 'timeseries-fallback',
      status: 'completed',
      result_source: 'timeseries_fallback',
      total_metrics: 1,
      completed_metrics: 1,
      failed_metrics: 0,
      // the last day's point ends now (the day is not over)
      query_to: now.toISOString(),
    })
    expect(latest.json().results[0].result.baseline).toMatchObject({ number_of_samples: 60, sum: 300 })
  })

  it('needs experiment:write to start a run and experiment:read to read one', async () => {
    const { createKey } = await import('../helpers/app.js')
    const readOnly = await createKey(t, ['experiment:read'])
    const exp = await experiment('scoped-recalc', { metrics: [revenue('sc')] })
    const post = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/experiments/${exp.id}/metrics_recalculation/`,
      headers: readOnly,
      payload: {},
    })
    expect(post.statusCode).toBe(403)
    const get = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${t.creds.project_id}/experiments/${exp.id}/metrics_recalculation/latest/`,
      headers: readOnly,
    })
    expect(get.statusCode).toBe(404)
  })

  it('takes over a run whose process died, keeping the window it pinned', async () => {
    const exp = await experiment('recalc-exp', { name: 'Takeover', metrics: [revenue('tk')] })
    const db = t.burrow.meta.db
    const store = createExperimentStore(db)
    // Lease time runs ahead of the app's real clock, so the app's own poll sees the dead owner's lease as held.
    let leaseNow = Date.now() + 365 * 86_400_000
    const runId = randomUUID()
    await store.metricsRecalculations.insert({
      id: runId,
      team_id: t.creds.project_id,
      experiment_id: exp.id,
      status: 'in_progress',
      trigger: 'manual',
      total_metrics: 1,
      metric_uuids: JSON.stringify(['tk']),
      metric_errors: '{}',
      query_to: '2026-01-19T00:00:00.000Z',
      created_by: null,
      created_at: now.toISOString(),
      started_at: now.toISOString(),
      completed_at: null,
    })
    const dead = createJobLeases(db, { owner: 'dead', now: () => leaseNow })
    expect(await dead.claim(`experiment-metrics-recalculation:${runId}`, 60_000)).not.toBeNull()
    const other = createMetricsRecalculation({
      store,
      load: async (teamId, id) => (await store.get(teamId, id))!,
      subject: createExperimentSubjects(store, t.burrow.stores.flags),
      timezone: async () => 'UTC',
      testAccountFilters: async () => [],
      execute: createHogQLExecutor({ events: t.burrow.events, persons: createPersonLookup(t.burrow.stores.persons) }),
      leases: createJobLeases(db, { owner: 'other', now: () => leaseNow }),
      clock: () => now,
    })
    await other.process()
    const held = (await api('GET', `experiments/${exp.id}/metrics_recalculation/${runId}/`)).json()
    expect(held).toMatchObject({ status: 'in_progress', completed_metrics: 0 })
    leaseNow += 61_000
    await other.process()
    const done = (await api('GET', `experiments/${exp.id}/metrics_recalculation/${runId}/`)).json()
    expect(done).toMatchObject({ status: 'completed', completed_metrics: 1, query_to: '2026-01-19T00:00:00.000Z' })
    // the window ends on the 19th: the purchases of the 12th count (control 30 × 10)
    expect(done.results[0].result.baseline).toMatchObject({ number_of_samples: 60, sum: 300 })
  })

  it('lets a new run replace one left pending for over 30 minutes, which never shows as latest', async () => {
    const exp = await experiment('recalc-exp', { name: 'Stale', metrics: [revenue('st')] })
    const store = createExperimentStore(t.burrow.meta.db)
    const staleId = randomUUID()
    await store.metricsRecalculations.insert({
      id: staleId,
      team_id: t.creds.project_id,
      experiment_id: exp.id,
      status: 'pending',
      trigger: 'manual',
      total_metrics: 1,
      metric_uuids: JSON.stringify(['st']),
      metric_errors: '{}',
      query_to: null,
      created_by: null,
      created_at: new Date(now.getTime() - 31 * 60_000).toISOString(),
      started_at: null,
      completed_at: null,
    })
    const fresh = await api('POST', `experiments/${exp.id}/metrics_recalculation/`, {})
    expect(fresh.statusCode, fresh.body).toBe(201)
    expect(fresh.json().id).not.toBe(staleId)
    const stale = (await api('GET', `experiments/${exp.id}/metrics_recalculation/${staleId}/`)).json()
    expect(stale).toMatchObject({ status: 'failed', completed_at: null })
    const done = await until(`experiments/${exp.id}/metrics_recalculation/latest/`, (b) => b.status === 'completed')
    expect(done.id).toBe(fresh.json().id)
  })
})
