// `copy_to_project/`, after PostHog's test_copy_to_project cases: a new draft in another project of the same
// organization, the flag reused or created there, metrics carried over, saved metric links left behind, and
// PostHog's answers for a missing target, a target in another organization and a key that cannot write there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKey, createTenant, startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
type Json = Record<string, any>

beforeAll(async () => {
  t = await startTestApp()
}, 60_000)
afterAll(() => t?.close())

const call = (method: 'GET' | 'POST', url: string, payload?: unknown, headers = t.auth) =>
  t.burrow.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Json }) })
const home = () => `/api/projects/${t.creds.project_id}`

async function projectInDemoOrg(name: string): Promise<number> {
  const res = await call('POST', '/api/projects/', { name })
  expect(res.statusCode, res.body).toBe(201)
  return res.json().id
}

const mean = (uuid: string) => ({
  kind: 'ExperimentMetric',
  metric_type: 'mean',
  uuid,
  source: { kind: 'EventsNode', event: 'purchase', math: 'sum', math_property: 'revenue' },
})

async function source(extra: Json = {}): Promise<Json> {
  const res = await call('POST', `${home()}/experiments/`, {
    name: 'Checkout test',
    feature_flag_key: 'checkout-test',
    description: 'Does the new checkout sell more?',
    parameters: {
      feature_flag_variants: [
        { key: 'control', rollout_percentage: 34 },
        { key: 'a', rollout_percentage: 33 },
        { key: 'b', rollout_percentage: 33 },
      ],
      minimum_detectable_effect: 20,
    },
    metrics: [mean('primary-1')],
    metrics_secondary: [mean('secondary-1')],
    stats_config: { method: 'frequentist' },
    exposure_criteria: { filterTestAccounts: false },
    start_date: '2026-11-01T00:00:00Z',
    ...extra,
  })
  expect(res.statusCode, res.body).toBe(201)
  return res.json()
}

describe('copy_to_project', () => {
  it('copies as a draft into another project, creating the flag there with the same variants', async () => {
    const original = await source()
    const target = await projectInDemoOrg('Copy target')
    const res = await call('POST', `${home()}/experiments/${original.id}/copy_to_project/`, { target_team_id: target })
    expect(res.statusCode, res.body).toBe(201)
    const copy = res.json()
    expect(copy.id).not.toBe(original.id)
    expect(copy.name).toBe('Checkout test (Copy)')
    expect(copy.description).toBe('Does the new checkout sell more?')
    // a draft: no dates, and its new flag is off
    expect(copy.start_date).toBeNull()
    expect(copy.end_date).toBeNull()
    expect(copy.status).toBe('draft')
    expect(copy.feature_flag.team_id).toBe(target)
    expect(copy.feature_flag.id).not.toBe(original.feature_flag.id)
    expect(copy.feature_flag.key).toBe('checkout-test')
    expect(copy.feature_flag.active).toBe(false)
    expect(copy.feature_flag.filters.multivariate.variants.map((v: Json) => v.key)).toEqual(['control', 'a', 'b'])
    expect(copy.parameters.minimum_detectable_effect).toBe(20)
    expect(copy.stats_config).toEqual({ method: 'frequentist' })
    expect(copy.exposure_criteria).toEqual({ filterTestAccounts: false })
    expect(copy.metrics.map((m: Json) => m.uuid)).toEqual(['primary-1'])
    expect(copy.metrics_secondary.map((m: Json) => m.uuid)).toEqual(['secondary-1'])
    expect(copy.primary_metrics_ordered_uuids).toEqual(['primary-1'])
    expect(copy.secondary_metrics_ordered_uuids).toEqual(['secondary-1'])
    // the copy is a draft, so its fingerprint (start date null) differs from the launched original's
    expect(copy.metrics[0].fingerprint).toMatch(/^[0-9a-f]{64}$/)
    expect(copy.metrics[0].fingerprint).not.toBe(original.metrics[0].fingerprint)

    // it lives in the target project, not in the source one
    const there = await call('GET', `/api/projects/${target}/experiments/${copy.id}/`)
    expect(there.statusCode).toBe(200)
    expect((await call('GET', `${home()}/experiments/${copy.id}/`)).statusCode).toBe(404)
    const flag = await call('GET', `/api/projects/${target}/feature_flags/${copy.feature_flag.id}/`)
    expect(flag.json().key).toBe('checkout-test')
    // a second copy into the same project gets the next free name and reuses the flag made by the first
    const again = await call('POST', `${home()}/experiments/${original.id}/copy_to_project/`, {
      target_team_id: target,
    })
    expect(again.statusCode, again.body).toBe(201)
    expect(again.json().name).toBe('Checkout test (Copy) 1')
    expect(again.json().feature_flag.id).toBe(copy.feature_flag.id)
  })

  it("reuses the target project's flag with that key, taking its variants", async () => {
    const original = await source({ feature_flag_key: 'reuse-me', name: 'Reuse' })
    const target = await projectInDemoOrg('Has the flag')
    const made = await call('POST', `/api/projects/${target}/feature_flags/`, {
      key: 'reuse-me',
      name: 'Existing',
      filters: {
        groups: [{ properties: [], rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'control', rollout_percentage: 50 },
            { key: 'treatment', rollout_percentage: 50 },
          ],
        },
      },
    })
    expect(made.statusCode, made.body).toBe(201)
    const res = await call('POST', `${home()}/experiments/${original.id}/copy_to_project/`, {
      target_team_id: target,
      name: 'Named copy',
    })
    expect(res.statusCode, res.body).toBe(201)
    const copy = res.json()
    expect(copy.name).toBe('Named copy')
    expect(copy.feature_flag.id).toBe(made.json().id)
    expect(copy.parameters.feature_flag_variants.map((v: Json) => v.key)).toEqual(['control', 'treatment'])
  })

  it('copies under another flag key when asked', async () => {
    const original = await source({ feature_flag_key: 'key-one', name: 'Rekey' })
    const target = await projectInDemoOrg('Rekeyed')
    const res = await call('POST', `${home()}/experiments/${original.id}/copy_to_project/`, {
      target_team_id: target,
      feature_flag_key: 'key-two',
    })
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json().feature_flag_key).toBe('key-two')
    expect(res.json().feature_flag.team_id).toBe(target)
  })

  it('leaves saved metric links behind (saved metrics belong to their project)', async () => {
    const saved = await call('POST', `${home()}/experiment_saved_metrics/`, { name: 'Revenue', query: mean('saved-9') })
    expect(saved.statusCode, saved.body).toBe(201)
    const original = await source({
      feature_flag_key: 'with-saved',
      name: 'With saved',
      saved_metrics_ids: [{ id: saved.json().id, metadata: { type: 'primary' } }],
    })
    expect(original.saved_metrics).toHaveLength(1)
    const target = await projectInDemoOrg('No saved metrics')
    const res = await call('POST', `${home()}/experiments/${original.id}/copy_to_project/`, { target_team_id: target })
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json().saved_metrics).toEqual([])
    expect(res.json().metrics.map((m: Json) => m.uuid)).toEqual(['primary-1'])
  })

  it('refuses a missing or malformed target, and a project of another organization with 404', async () => {
    const original = await source({ feature_flag_key: 'refusals', name: 'Refusals' })
    const url = `${home()}/experiments/${original.id}/copy_to_project/`
    const missing = await call('POST', url, {})
    expect(missing.statusCode).toBe(400)
    expect(missing.json()).toMatchObject({ type: 'validation_error', attr: 'target_team_id' })
    const malformed = await call('POST', url, { target_team_id: 'abc' })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().attr).toBe('target_team_id')
    const other = await createTenant(t)
    const foreign = await call('POST', url, { target_team_id: other.project.id })
    expect(foreign.statusCode).toBe(404)
    expect(foreign.json()).toMatchObject({
      type: 'invalid_request',
      code: 'not_found',
      detail: 'Target team not found.',
    })
    expect((await call('POST', url, { target_team_id: 987654321 })).statusCode).toBe(404)
    // nothing was created in the other organization's project
    const list = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${other.project.id}/experiments/`,
      headers: { authorization: `Bearer ${other.key}` },
    })
    expect(list.json().count).toBe(0)
    // an unknown source experiment is a 404 of its own
    expect(
      (await call('POST', `${home()}/experiments/999999/copy_to_project/`, { target_team_id: 1 })).statusCode,
    ).toBe(404)
  })

  it('answers 403 when the key cannot write in the target project, and needs experiment:write', async () => {
    const original = await source({ feature_flag_key: 'perm', name: 'Permissions' })
    const target = await projectInDemoOrg('Out of reach')
    const url = `${home()}/experiments/${original.id}/copy_to_project/`
    const homeOnly = await createKey(t, ['experiment:write'], [t.creds.project_id])
    const denied = await call('POST', url, { target_team_id: target }, homeOnly)
    expect(denied.statusCode).toBe(403)
    expect(denied.json()).toMatchObject({
      type: 'authentication_error',
      code: 'permission_denied',
      detail: 'You do not have write access to the target project.',
    })
    expect((await call('GET', `/api/projects/${target}/experiments/`)).json().count).toBe(0)
    const readOnly = await createKey(t, ['experiment:read'])
    expect((await call('POST', url, { target_team_id: target }, readOnly)).statusCode).toBe(403)
    const both = await createKey(t, ['experiment:write'], [t.creds.project_id, target])
    expect((await call('POST', url, { target_team_id: target }, both)).statusCode).toBe(201)
  })
})
