import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKey, createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { createCohort, createFlag, insertGroupType } from './fixtures.js'

let t: TestApp
let base: string

beforeAll(async () => {
  t = await startTestApp()
  base = `/api/projects/${t.creds.project_id}/feature_flags`
  await insertGroupType(t, 'organization', 0)
}, 60_000)
afterAll(() => t?.close())

const post = (payload: Record<string, unknown>, headers = t.auth) =>
  t.burrow.app.inject({ method: 'POST', url: `${base}/`, headers, payload })
const patch = (id: number, payload: Record<string, unknown>) =>
  t.burrow.app.inject({ method: 'PATCH', url: `${base}/${id}/`, headers: t.auth, payload })

describe('creating flags', () => {
  it('creates a flag with version 1 and the rollout shortcut', async () => {
    const res = await post({ key: 'new-checkout', name: 'New checkout', rollout_percentage: 30 })
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject({
      key: 'new-checkout',
      name: 'New checkout',
      active: true,
      deleted: false,
      version: 1,
      is_simple_flag: true,
      rollout_percentage: 30,
      evaluation_runtime: 'all',
      filters: { groups: [{ properties: [], rollout_percentage: 30 }], multivariate: null, payloads: {} },
      created_by: { email: t.creds.email },
    })
  })

  it('stores non-string payloads as JSON text', async () => {
    const res = await post({
      key: 'with-payload',
      filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: { a: 1 } } },
    })
    expect(res.json().filters.payloads).toEqual({ true: '{"a":1}' })
  })

  it.each([
    ['a key with spaces', { key: 'bad key' }, 'key', 'invalid_key'],
    ['an empty key', { key: '' }, 'key', 'blank'],
    ['a missing key', { name: 'x' }, 'key', 'required'],
    [
      'variants not summing to 100',
      {
        key: 'mv',
        filters: {
          groups: [{ properties: [], rollout_percentage: 100 }],
          multivariate: {
            variants: [
              { key: 'a', rollout_percentage: 50 },
              { key: 'b', rollout_percentage: 40 },
            ],
          },
        },
      },
      'filters',
      'invalid_input',
    ],
    [
      'an unknown operator',
      {
        key: 'op',
        filters: { groups: [{ properties: [{ key: 'x', value: 1, type: 'person', operator: 'nearly' }] }] },
      },
      'filters',
      'invalid_operator',
    ],
    [
      'a property without a key',
      { key: 'nokey', filters: { groups: [{ properties: [{ value: 1, type: 'person' }] }] } },
      'filters',
      'invalid_input',
    ],
    [
      'an unknown group type',
      { key: 'grp', filters: { aggregation_group_type_index: 3, groups: [{ properties: [] }] } },
      'filters',
      'invalid_input',
    ],
    [
      'a missing cohort',
      { key: 'coh', filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: 999 }] }] } },
      'filters',
      'cohort_does_not_exist',
    ],
    [
      'a variant override that is not a variant',
      {
        key: 'ovr',
        filters: {
          groups: [{ properties: [], variant: 'nope' }],
          multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] },
        },
      },
      'filters',
      'invalid_input',
    ],
    [
      'a rollout above 100',
      { key: 'r', filters: { groups: [{ properties: [], rollout_percentage: 120 }] } },
      'filters',
      'invalid_input',
    ],
    ['an unknown runtime', { key: 'rt', evaluation_runtime: 'edge' }, 'evaluation_runtime', 'invalid_choice'],
  ])('rejects %s', async (_name, body, attr, code) => {
    const res = await post(body)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', attr, code })
  })

  it('accepts group flags on an existing group type and cohort targeting', async () => {
    const group = await post({
      key: 'org-flag',
      filters: {
        aggregation_group_type_index: 0,
        groups: [{ properties: [{ key: 'size', value: 10, operator: 'gt', type: 'group', group_type_index: 0 }] }],
      },
    })
    expect(group.statusCode, group.body).toBe(201)
    const cohort = await createCohort(t, {
      name: 'Pros',
      filters: {
        properties: { type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'person', operator: 'exact' }] },
      },
    })
    const targeted = await post({
      key: 'cohort-flag',
      filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohort.id }] }] },
    })
    expect(targeted.statusCode, targeted.body).toBe(201)
    // stored as sent: no operator means `in` (PostHog's test_feature_flag_includes_cohort_names)
    expect(targeted.json().filters.groups[0].properties[0]).toEqual({
      key: 'id',
      type: 'cohort',
      value: cohort.id,
      cohort_name: 'Pros',
    })
  })

  it('keeps keys unique among live flags only', async () => {
    const first = await createFlag(t, { key: 'unique-key' })
    const clash = await post({ key: 'unique-key' })
    expect(clash.statusCode).toBe(400)
    expect(clash.json()).toMatchObject({ attr: 'key', code: 'unique' })
    await patch(first.id, { deleted: true })
    expect((await post({ key: 'unique-key' })).statusCode).toBe(201)
    const undelete = await patch(first.id, { deleted: false })
    expect(undelete.statusCode).toBe(400)
    expect(undelete.json().code).toBe('unique')
  })
})

describe('listing and changing flags', () => {
  it('lists with pagination, search and the active filter', async () => {
    for (const key of ['list-a', 'list-b', 'list-c']) await createFlag(t, { key, active: key !== 'list-b' })
    const page = (await t.burrow.app.inject({ url: `${base}/?search=list-&limit=2`, headers: t.auth })).json()
    expect(page.count).toBe(3)
    expect(page.results.map((f: { key: string }) => f.key)).toEqual(['list-c', 'list-b'])
    expect(page.next).toContain('offset=2')
    const inactive = (await t.burrow.app.inject({ url: `${base}/?search=list-&active=false`, headers: t.auth })).json()
    expect(inactive.results.map((f: { key: string }) => f.key)).toEqual(['list-b'])
  })

  it('increments the version on every change and records each change in the activity log', async () => {
    const flag = await createFlag(t, { key: 'versioned', rollout_percentage: 10 })
    const renamed = await patch(flag.id, { name: 'Renamed' })
    expect(renamed.json().version).toBe(2)
    const rolled = await patch(flag.id, { filters: { groups: [{ properties: [], rollout_percentage: 50 }] } })
    expect(rolled.json()).toMatchObject({ version: 3, rollout_percentage: 50 })
    const deleted = await patch(flag.id, { deleted: true })
    expect(deleted.json()).toMatchObject({ version: 4, deleted: true })

    const log = (await t.burrow.app.inject({ url: `${base}/${flag.id}/activity/`, headers: t.auth })).json()
    expect(log.results.map((e: { activity: string }) => e.activity)).toEqual([
      'deleted',
      'updated',
      'updated',
      'created',
    ])
    expect(log.results[2].detail.changes).toEqual([
      { type: 'FeatureFlag', action: 'changed', field: 'name', before: '', after: 'Renamed' },
      { type: 'FeatureFlag', action: 'changed', field: 'version', before: 1, after: 2 },
    ])
    expect(log.results[0].user).toMatchObject({ email: t.creds.email })
    const fetched = (await t.burrow.app.inject({ url: `${base}/${flag.id}/`, headers: t.auth })).json()
    expect(fetched.deleted).toBe(true)
    const listed = (await t.burrow.app.inject({ url: `${base}/?search=versioned`, headers: t.auth })).json()
    expect(listed.count).toBe(0)
  })

  it('answers DELETE with 405 as PostHog does (soft delete via PATCH)', async () => {
    const flag = await createFlag(t, { key: 'no-hard-delete' })
    const res = await t.burrow.app.inject({ method: 'DELETE', url: `${base}/${flag.id}/`, headers: t.auth })
    expect(res.statusCode).toBe(405)
    expect(res.json()).toMatchObject({ code: 'method_not_allowed' })
  })

  it('serves the same flags under /api/environments/', async () => {
    const flag = await createFlag(t, { key: 'env-path' })
    const res = await t.burrow.app.inject({
      url: `/api/environments/${t.creds.project_id}/feature_flags/${flag.id}/`,
      headers: t.auth,
    })
    expect(res.json().key).toBe('env-path')
  })
})

describe('access', () => {
  it('needs feature_flag:write to create and feature_flag:read to list', async () => {
    const reader = await createKey(t, ['feature_flag:read'])
    expect((await post({ key: 'by-reader' }, reader)).statusCode).toBe(403)
    expect((await t.burrow.app.inject({ url: `${base}/`, headers: reader })).statusCode).toBe(200)
    const other = await createKey(t, ['cohort:read'])
    expect((await t.burrow.app.inject({ url: `${base}/`, headers: other })).statusCode).toBe(403)
    expect((await t.burrow.app.inject({ url: `${base}/` })).statusCode).toBe(401)
  })

  it("hides another organization's flags", async () => {
    const tenant = await createTenant(t)
    const flag = await createFlag(t, { key: 'theirs' }, { id: tenant.project.id, auth: tenant.auth })
    const res = await t.burrow.app.inject({
      url: `/api/projects/${tenant.project.id}/feature_flags/${flag.id}/`,
      headers: t.auth,
    })
    // Another organization's project answers as a missing one would, so its id cannot be probed.
    expect(res.statusCode).toBe(404)
    const mine = await t.burrow.app.inject({ url: `${base}/${flag.id}/`, headers: t.auth })
    expect(mine.statusCode).toBe(404)
  })
})

describe('pagination parameters', () => {
  it.each(['feature_flags', 'cohorts'])(
    'answers 400, not 500, for an offset beyond any integer on %s',
    async (resource) => {
      const res = await t.burrow.app.inject({
        method: 'GET',
        url: `/api/projects/${t.creds.project_id}/${resource}/?offset=1e400`,
        headers: t.auth,
      })
      expect(res.statusCode).toBe(400)
      expect(res.json()).toMatchObject({ type: 'validation_error', attr: 'offset' })
    },
  )
})
