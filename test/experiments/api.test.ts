import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKey, createTenant, startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let base: string
type Json = Record<string, any>

beforeAll(async () => {
  t = await startTestApp()
  base = `/api/projects/${t.creds.project_id}`
}, 60_000)
afterAll(() => t?.close())

const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, payload?: unknown, headers = t.auth) =>
  t.burrow.app.inject({
    method,
    url: `${base}/${path}`,
    headers,
    ...(payload === undefined ? {} : { payload: payload as Json }),
  })

let counter = 0
async function create(extra: Json = {}): Promise<Json> {
  counter++
  const res = await call('POST', 'experiments/', {
    name: `Experiment ${counter}`,
    feature_flag_key: `exp-${counter}`,
    ...extra,
  })
  expect(res.statusCode, res.body).toBe(201)
  return res.json()
}
const meanMetric = (extra: Json = {}) => ({
  kind: 'ExperimentMetric',
  metric_type: 'mean',
  source: { kind: 'EventsNode', event: 'purchase' },
  ...extra,
})

describe('create', () => {
  it('creates an inactive 50/50 control/test flag for a draft, with defaults', async () => {
    const body = await create({ name: 'New checkout', feature_flag_key: 'new-checkout' })
    expect(body.feature_flag_key).toBe('new-checkout')
    expect(body.feature_flag).toMatchObject({
      key: 'new-checkout',
      name: 'Feature Flag for Experiment New checkout',
      active: false,
      filters: {
        groups: [{ properties: [], rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'control', name: 'Control Group', rollout_percentage: 50 },
            { key: 'test', name: 'Test Variant', rollout_percentage: 50 },
          ],
        },
      },
    })
    expect(body.status).toBe('draft')
    expect(body.stats_config).toEqual({ method: 'bayesian' })
    expect(body.exposure_criteria).toEqual({ filterTestAccounts: true })
    expect(body.type).toBe('product')
    expect(body.saved_metrics_ids).toBeNull()
    expect(body.created_by.email).toBe(t.creds.email)
    // the flags API sees the flag
    const flag = await call('GET', `feature_flags/${body.feature_flag.id}/`)
    expect(flag.json().key).toBe('new-checkout')
  })

  it('activates the flag when created with a start date, and uses the given variants', async () => {
    const body = await create({
      start_date: '2026-01-01T00:00:00Z',
      parameters: {
        feature_flag_variants: [
          { key: 'control', rollout_percentage: 34 },
          { key: 'a', rollout_percentage: 33 },
          { key: 'b', rollout_percentage: 33 },
        ],
      },
    })
    expect(body.feature_flag.active).toBe(true)
    expect(body.status).toBe('running')
    expect(body.feature_flag.filters.multivariate.variants.map((v: Json) => v.key)).toEqual(['control', 'a', 'b'])
  })

  it('fills metric uuids and fingerprints and the ordering array', async () => {
    const body = await create({ metrics: [meanMetric(), meanMetric({ uuid: 'kept' })] })
    const [first, second] = body.metrics
    expect(first.uuid).toMatch(/^[0-9a-f-]{36}$/)
    expect(second.uuid).toBe('kept')
    expect(first.fingerprint).toMatch(/^[0-9a-f]{64}$/)
    // same metric, same experiment settings → same fingerprint
    expect(second.fingerprint).toBe(first.fingerprint)
    expect(body.primary_metrics_ordered_uuids).toEqual([first.uuid, 'kept'])
    // a start date changes the fingerprint
    const launched = await call('PATCH', `experiments/${body.id}/`, { start_date: '2026-01-02T00:00:00Z' })
    expect(launched.json().metrics[0].fingerprint).not.toBe(first.fingerprint)
    expect(launched.json().feature_flag.active).toBe(true)
  })

  it('reuses an eligible flag and refuses an ineligible one', async () => {
    const flag = await call('POST', 'feature_flags/', {
      key: 'reusable',
      filters: {
        groups: [{ properties: [], rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'control', rollout_percentage: 50 },
            { key: 'x', rollout_percentage: 50 },
          ],
        },
      },
    })
    expect(flag.statusCode, flag.body).toBe(201)
    const body = await create({ feature_flag_key: 'reusable' })
    expect(body.feature_flag.id).toBe(flag.json().id)

    await call('POST', 'feature_flags/', {
      key: 'plain',
      filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
    })
    const plain = await call('POST', 'experiments/', { name: 'P', feature_flag_key: 'plain' })
    expect(plain.statusCode).toBe(400)
    expect(plain.json().detail).toBe('Feature flag is not eligible for experiments.')

    await call('POST', 'feature_flags/', {
      key: 'test-first',
      filters: {
        groups: [{ properties: [], rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'test', rollout_percentage: 50 },
            { key: 'control', rollout_percentage: 50 },
          ],
        },
      },
    })
    const testFirst = await call('POST', 'experiments/', { name: 'T', feature_flag_key: 'test-first' })
    expect(testFirst.json().detail).toBe('Feature flag must have control as the first variant.')
  })

  it.each([
    [{ feature_flag_key: 'k1' }, 'This field is required.', 'name'],
    [{ name: 'x' }, 'This field is required.', 'feature_flag_key'],
    [{ name: 'x', feature_flag_key: 'k2', bogus: 1, other: 2 }, "Can't create keys: bogus, other on Experiment", null],
    [
      { name: 'x', feature_flag_key: 'k3', parameters: { feature_flag_variants: [{ key: 'a' }, { key: 'b' }] } },
      'Feature flag variants must contain a control variant',
      'parameters',
    ],
    [
      { name: 'x', feature_flag_key: 'k4', parameters: { feature_flag_variants: [{ key: 'control' }] } },
      'Feature flag must have at least 2 variants (control and at least one test variant)',
      'parameters',
    ],
    [
      {
        name: 'x',
        feature_flag_key: 'k5',
        parameters: { feature_flag_variants: Array.from({ length: 21 }, (_, i) => ({ key: i ? `v${i}` : 'control' })) },
      },
      'Feature flag variants must be less than 21',
      'parameters',
    ],
    [
      { name: 'x', feature_flag_key: 'k6', start_date: '2026-01-02T00:00:00Z', end_date: '2026-01-01T00:00:00Z' },
      'End date must be after start date',
      null,
    ],
    [
      { name: 'x', feature_flag_key: 'k7', exposure_criteria: { filterTestAccounts: 'yes' } },
      'filterTestAccounts must be a boolean',
      'exposure_criteria',
    ],
    [
      { name: 'x', feature_flag_key: 'k8', metrics: [{ kind: 'ExperimentTrendsQuery' }] },
      "Invalid metric at index 0: legacy metric kind 'ExperimentTrendsQuery' is no longer supported for new experiments. Use 'ExperimentMetric' instead.",
      'metrics',
    ],
    [
      { name: 'x', feature_flag_key: 'k9', filters: { properties: [{ key: 'a', value: 1 }] } },
      'Experiments do not support global filter properties',
      null,
    ],
    [
      { name: 'x', feature_flag_key: 'k10', saved_metrics_ids: [{ id: 999999 }] },
      'Saved metric does not exist or does not belong to this project',
      'saved_metrics_ids',
    ],
  ])('refuses %j', async (payload, detail, attr) => {
    const res = await call('POST', 'experiments/', payload)
    expect(res.statusCode, res.body).toBe(400)
    const body = res.json()
    expect(body.type).toBe('validation_error')
    if (detail !== null) expect(body.detail).toBe(detail)
    expect(body.attr).toBe(attr)
  })

  it('keeps given ordering arrays that already hold every uuid', async () => {
    const body = await create({
      metrics: [meanMetric({ uuid: 'm1' }), meanMetric({ uuid: 'm2' })],
      primary_metrics_ordered_uuids: ['m2', 'm1'],
    })
    expect(body.primary_metrics_ordered_uuids).toEqual(['m2', 'm1'])
  })
})

describe('read, update, delete', () => {
  it('answers 404 for unknown ids, other projects and malformed ids; DELETE is always 405', async () => {
    const body = await create()
    expect((await call('GET', 'experiments/999999/')).statusCode).toBe(404)
    expect((await call('GET', 'experiments/abc/')).statusCode).toBe(404)
    const other = await createTenant(t)
    const foreign = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${other.project.id}/experiments/${body.id}/`,
      headers: { authorization: `Bearer ${other.key}` },
    })
    expect(foreign.statusCode).toBe(404)
    const del = await call('DELETE', `experiments/${body.id}/`)
    expect(del.statusCode).toBe(405)
    expect(del.body).toBe('')
    expect((await call('GET', `experiments/${body.id}/`)).statusCode).toBe(200)
  })

  it('soft-deletes with PATCH deleted: true, and lists exclude it', async () => {
    const body = await create({ name: 'to delete' })
    const res = await call('PATCH', `experiments/${body.id}/`, { deleted: true })
    expect(res.statusCode, res.body).toBe(200)
    expect((await call('GET', `experiments/${body.id}/`)).statusCode).toBe(404)
    const list = await call('GET', 'experiments/?search=to%20delete')
    expect(list.json().count).toBe(0)
  })

  it('refuses unknown update keys, a new flag key, and variant changes once launched', async () => {
    const body = await create({ start_date: '2026-01-01T00:00:00Z' })
    const bad = await call('PATCH', `experiments/${body.id}/`, { nope: 1 })
    expect(bad.json().detail).toBe("Can't update keys: nope on Experiment")
    const key = await call('PATCH', `experiments/${body.id}/`, { feature_flag_key: 'other' })
    expect(key.json().detail).toBe("Can't update keys: feature_flag_key on Experiment")
    const same = await call('PATCH', `experiments/${body.id}/`, { feature_flag_key: body.feature_flag_key, name: 'ok' })
    expect(same.statusCode).toBe(200)
    const variants = await call('PATCH', `experiments/${body.id}/`, {
      parameters: {
        feature_flag_variants: [
          { key: 'control', rollout_percentage: 50 },
          { key: 'other', rollout_percentage: 50 },
        ],
      },
    })
    expect(variants.json().detail).toBe("Can't update feature_flag_variants on Experiment")
  })

  it('rewrites the flag variants of a draft', async () => {
    const body = await create()
    const res = await call('PATCH', `experiments/${body.id}/`, {
      parameters: {
        feature_flag_variants: [
          { key: 'control', rollout_percentage: 20 },
          { key: 'big', rollout_percentage: 80 },
        ],
      },
    })
    expect(res.json().feature_flag.filters.multivariate.variants.map((v: Json) => v.rollout_percentage)).toEqual([
      20, 80,
    ])
  })

  it('refuses an ordering array that lacks a metric', async () => {
    const body = await create({ metrics: [meanMetric({ uuid: 'o1' })] })
    const res = await call('PATCH', `experiments/${body.id}/`, { primary_metrics_ordered_uuids: ['zzz'] })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({
      detail:
        "primary_metrics_ordered_uuids is missing UUIDs: ['o1']. This is likely a frontend bug - please refresh and try again.",
      attr: 'primary_metrics_ordered_uuids',
    })
  })

  it('syncs the ordering array when metrics are added and removed', async () => {
    const body = await create({ metrics: [meanMetric({ uuid: 'a1' })] })
    const res = await call('PATCH', `experiments/${body.id}/`, { metrics: [meanMetric({ uuid: 'b1' })] })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().primary_metrics_ordered_uuids).toEqual(['b1'])
  })

  it('filters the list by status, archived and search', async () => {
    const draft = await create({ name: 'zeta draft' })
    const running = await create({ name: 'zeta running', start_date: '2026-01-01T00:00:00Z' })
    const done = await create({
      name: 'zeta done',
      start_date: '2026-01-01T00:00:00Z',
      end_date: '2026-01-05T00:00:00Z',
    })
    const archived = await create({ name: 'zeta archived', archived: true })
    const names = async (q: string) =>
      (await call('GET', `experiments/?search=zeta&${q}`))
        .json()
        .results.map((r: Json) => r.name)
        .sort()
    expect(await names('status=draft')).toEqual(['zeta draft'])
    expect(await names('status=running')).toEqual(['zeta running'])
    expect(await names('status=complete')).toEqual(['zeta done'])
    expect(await names('archived=true')).toEqual(['zeta archived'])
    expect(await names('')).toEqual(['zeta done', 'zeta draft', 'zeta running'])
    const ordered = (await call('GET', 'experiments/?search=zeta&order=status')).json().results.map((r: Json) => r.id)
    expect(ordered).toEqual([draft.id, running.id, done.id])
    expect(archived.archived).toBe(true)
    expect((await call('GET', 'experiments/?order=bogus')).statusCode).toBe(400)
  })
})

describe('lifecycle', () => {
  it('launches, pauses, resumes, ends, ships a variant, archives and resets', async () => {
    const body = await create()
    const launchRes = await call('POST', `experiments/${body.id}/launch/`)
    expect(launchRes.statusCode, launchRes.body).toBe(200)
    const launched = launchRes.json()
    expect(launched.status).toBe('running')
    expect(launched.feature_flag.active).toBe(true)
    expect((await call('POST', `experiments/${body.id}/launch/`)).statusCode).toBe(400)
    expect((await call('POST', `experiments/${body.id}/pause/`)).json().status).toBe('paused')
    expect((await call('POST', `experiments/${body.id}/resume/`)).json().status).toBe('running')
    expect((await call('POST', `experiments/${body.id}/archive/`)).statusCode).toBe(400)
    const ended = (
      await call('POST', `experiments/${body.id}/end/`, { conclusion: 'won', conclusion_comment: 'yes' })
    ).json()
    expect(ended).toMatchObject({ status: 'stopped', conclusion: 'won', conclusion_comment: 'yes' })
    const shipped = await call('POST', `experiments/${body.id}/ship_variant/`, { variant_key: 'test' })
    expect(shipped.statusCode, shipped.body).toBe(200)
    expect(shipped.json().feature_flag.filters.multivariate.variants).toEqual([
      { key: 'control', name: 'Control Group', rollout_percentage: 0 },
      { key: 'test', name: 'Test Variant', rollout_percentage: 100 },
    ])
    expect((await call('POST', `experiments/${body.id}/ship_variant/`, { variant_key: 'nope' })).statusCode).toBe(400)
    expect((await call('POST', `experiments/${body.id}/archive/`)).json().archived).toBe(true)
    expect((await call('POST', `experiments/${body.id}/unarchive/`)).json().archived).toBe(false)
    const reset = (await call('POST', `experiments/${body.id}/reset/`)).json()
    expect(reset).toMatchObject({ status: 'draft', start_date: null, end_date: null, conclusion: null })
    expect(reset.feature_flag.active).toBe(false)
  })

  it('duplicates with a unique name and the same flag', async () => {
    const body = await create({ name: 'Dup me', metrics: [meanMetric()] })
    const first = await call('POST', `experiments/${body.id}/duplicate/`, {})
    expect(first.statusCode, first.body).toBe(201)
    expect(first.json().name).toBe('Dup me (Copy)')
    expect(first.json().feature_flag.id).toBe(body.feature_flag.id)
    expect(first.json().metrics[0].uuid).not.toBe(body.metrics[0].uuid)
    const second = await call('POST', `experiments/${body.id}/duplicate/`, {})
    expect(second.json().name).toBe('Dup me (Copy) 1')
    const newFlag = await call('POST', `experiments/${body.id}/duplicate/`, { feature_flag_key: 'dup-new-flag' })
    expect(newFlag.json().feature_flag.key).toBe('dup-new-flag')
  })

  it('creates an exposure cohort once, for a launched experiment', async () => {
    const draft = await create()
    const refused = await call('POST', `experiments/${draft.id}/create_exposure_cohort_for_experiment/`)
    expect(refused.json().detail).toBe('Experiment does not have a start date')
    const body = await create({ name: 'Cohort exp', start_date: '2026-01-01T00:00:00Z' })
    const captured = await t.burrow.app.inject({
      method: 'POST',
      url: '/batch/',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({
        api_key: t.creds.project_api_key,
        batch: [
          {
            event: '$feature_flag_called',
            distinct_id: 'cohort-user',
            properties: { $feature_flag: body.feature_flag_key, $feature_flag_response: 'test' },
          },
        ],
      }),
    })
    expect(captured.statusCode).toBe(200)
    await t.burrow.ingest.flushBackground()
    const res = await call('POST', `experiments/${body.id}/create_exposure_cohort_for_experiment/`)
    expect(res.statusCode, res.body).toBe(201)
    const cohort = res.json().cohort
    expect(cohort.name).toBe('Users exposed to experiment "Cohort exp"')
    expect(cohort.is_static).toBe(true)
    const person = await t.burrow.stores.persons.getByDistinctId(t.creds.project_id, 'cohort-user')
    expect(await t.burrow.stores.cohorts.memberCount(cohort.id)).toBe(1)
    expect(await t.burrow.stores.cohorts.staticMemberships(t.creds.project_id, person!.id, [cohort.id])).toEqual([
      cohort.id,
    ])
    expect((await call('GET', `cohorts/${cohort.id}/`)).statusCode).toBe(200)
    expect((await call('GET', `experiments/${body.id}/`)).json().exposure_cohort).toBe(cohort.id)
    const again = await call('POST', `experiments/${body.id}/create_exposure_cohort_for_experiment/`)
    expect(again.json().detail).toBe('Experiment already has an exposure cohort')
  })
})

describe('other routes', () => {
  it("lists eligible flags with paging and PostHog's bad-paging answer", async () => {
    const res = await call('GET', 'experiments/eligible_feature_flags/?limit=2')
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body.results.length).toBeLessThanOrEqual(2)
    expect(body.count).toBeGreaterThan(2)
    for (const f of body.results) expect(f.filters.multivariate.variants[0].key).toBe('control')
    const search = await call('GET', 'experiments/eligible_feature_flags/?search=reusable')
    expect(search.json().results.map((f: Json) => f.key)).toEqual(['reusable'])
    const bad = await call('GET', 'experiments/eligible_feature_flags/?limit=abc')
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toEqual({ error: 'Invalid limit or offset' })
  })

  it('reports velocity stats', async () => {
    const res = await call('GET', 'experiments/stats/')
    expect(res.statusCode, res.body).toBe(200)
    expect(Object.keys(res.json()).sort()).toEqual([
      'active_experiments',
      'completed_last_30d',
      'launched_last_30d',
      'launched_previous_30d',
      'percent_change',
    ])
  })

  it('calculates the running time by hand', async () => {
    const res = await call('POST', 'experiments/calculate_running_time/', {
      metric: { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'x' }] },
      baseline: { number_of_samples: 1000, sum: 100, sum_squares: 100, step_counts: [1000, 100] },
      minimum_detectable_effect: 20,
      number_of_variants: 2,
      exposures_per_day: 500,
    })
    // p = 0.1, σ² = 0.09, d = 0.02 → 16·0.09/0.0004·2 = 7200; 7200/500 → 15 days
    expect(res.json()).toEqual({
      baseline_value: 0.1,
      variance: null,
      recommended_sample_size: 7200,
      recommended_running_time_days: 15,
    })
  })

  it('requires flag implementation when events carry no $feature/ properties', async () => {
    const res = await call(
      'GET',
      `experiments/requires_flag_implementation/?events=${encodeURIComponent('[{"id":"$pageview"}]')}`,
    )
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toEqual({ result: true })
  })

  it('enforces scopes', async () => {
    const readOnly = await createKey(t, ['experiment:read'])
    expect((await call('GET', 'experiments/', undefined, readOnly)).statusCode).toBe(200)
    expect((await call('POST', 'experiments/', { name: 'x', feature_flag_key: 'y' }, readOnly)).statusCode).toBe(403)
    expect((await call('GET', 'experiments/eligible_feature_flags/', undefined, readOnly)).statusCode).toBe(403)
    const flagsRead = await createKey(t, ['feature_flag:read'])
    expect((await call('GET', 'experiments/eligible_feature_flags/', undefined, flagsRead)).statusCode).toBe(200)
  })
})

describe('holdouts and saved metrics', () => {
  it('stamps the holdout variant and writes the holdout into the flag', async () => {
    const bad = await call('POST', 'experiment_holdouts/', { name: 'h', filters: [{ properties: [] }] })
    expect(bad.json().detail).toBe('Rollout percentage must be present.')
    const out = await call('POST', 'experiment_holdouts/', {
      name: 'h',
      filters: [{ properties: [], rollout_percentage: 150 }],
    })
    expect(out.json().detail).toBe('Rollout percentage must be between 0 and 100.')
    const res = await call('POST', 'experiment_holdouts/', {
      name: 'Holdout',
      filters: [{ properties: [], rollout_percentage: 10 }],
    })
    expect(res.statusCode, res.body).toBe(201)
    const holdout = res.json()
    expect(holdout.filters).toEqual([{ properties: [], rollout_percentage: 10, variant: `holdout-${holdout.id}` }])
    const experiment = await create({ holdout_id: holdout.id })
    expect(experiment.holdout.id).toBe(holdout.id)
    expect(experiment.feature_flag.filters.holdout).toEqual({ id: holdout.id, exclusion_percentage: 10 })
    const updated = await call('PATCH', `experiment_holdouts/${holdout.id}/`, {
      filters: [{ properties: [], rollout_percentage: 20 }],
    })
    expect(updated.statusCode, updated.body).toBe(200)
    const after = (await call('GET', `experiments/${experiment.id}/`)).json()
    expect(after.feature_flag.filters.holdout).toEqual({ id: holdout.id, exclusion_percentage: 20 })
    expect((await call('DELETE', `experiment_holdouts/${holdout.id}/`)).statusCode).toBe(204)
    expect((await call('GET', `experiment_holdouts/${holdout.id}/`)).statusCode).toBe(404)
  })

  it('links saved metrics into experiments with their uuid in the ordering array', async () => {
    const bad = await call('POST', 'experiment_saved_metrics/', { name: 'm', query: { kind: 'TrendsQuery' } })
    expect(bad.statusCode).toBe(400)
    const res = await call('POST', 'experiment_saved_metrics/', {
      name: 'Revenue',
      query: meanMetric({ uuid: 'saved-1' }),
    })
    expect(res.statusCode, res.body).toBe(201)
    const saved = res.json()
    const experiment = await create({ saved_metrics_ids: [{ id: saved.id, metadata: { type: 'secondary' } }] })
    expect(experiment.secondary_metrics_ordered_uuids).toEqual(['saved-1'])
    expect(experiment.saved_metrics).toHaveLength(1)
    expect(experiment.saved_metrics[0]).toMatchObject({
      saved_metric: saved.id,
      name: 'Revenue',
      metadata: { type: 'secondary' },
    })
    expect(experiment.saved_metrics[0].query.fingerprint).toMatch(/^[0-9a-f]{64}$/)
    expect((await call('GET', 'experiment_saved_metrics/')).json().count).toBe(1)
  })
})
