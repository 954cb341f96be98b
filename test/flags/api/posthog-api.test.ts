// The HTTP-observable assertions of PostHog's test_feature_flag.py that Burrow holds, each test named after the one
// it mirrors; expected values worked out by hand from the requests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMember, createTenant, startTestApp, type TestApp } from '../../helpers/app.js'
import { insertGroup, insertGroupType, insertPerson } from '../fixtures.js'

let t: TestApp
let base: string

beforeAll(async () => {
  t = await startTestApp()
  base = `/api/projects/${t.creds.project_id}/feature_flags`
}, 180_000)
afterAll(() => t?.close())

const post = (payload: Record<string, unknown>) =>
  t.burrow.app.inject({ method: 'POST', url: `${base}/`, headers: t.auth, payload })
const patch = (id: number, payload: Record<string, unknown>, headers = t.auth) =>
  t.burrow.app.inject({ method: 'PATCH', url: `${base}/${id}/`, headers, payload })
const get = (url: string) => t.burrow.app.inject({ url, headers: t.auth })

async function created(payload: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await post(payload)
  expect(res.statusCode, res.body).toBe(201)
  return res.json()
}

/** A cohort in PostHog's legacy `groups` form (one person property on `email`), as PostHog's tests make them. */
async function legacyCohort(name: string, email: string): Promise<number> {
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: `/api/projects/${t.creds.project_id}/cohorts/`,
    headers: t.auth,
    payload: { name, groups: [{ properties: [{ key: 'email', value: email, type: 'person' }] }] },
  })
  expect(res.statusCode, res.body).toBe(201)
  return res.json().id as number
}

const withProperty = (key: string, property: Record<string, unknown>) =>
  post({ key, filters: { groups: [{ properties: [{ type: 'person', ...property }], rollout_percentage: 100 }] } })

describe('concurrent edits', () => {
  it('test_feature_flag_update_conflict: a stale edit of a field someone else changed answers 409', async () => {
    const flag = await created({ key: 'conflicted', name: 'Original' })
    const original = { ...flag }
    const other = await createMember(t, 8)
    const first = await patch(
      flag.id,
      { name: 'Changed by the other', version: 1, original_flag: original },
      other.auth,
    )
    expect(first.statusCode, first.body).toBe(200)
    expect(first.json().version).toBe(2)
    const stale = await patch(flag.id, { name: 'Mine', version: 1, original_flag: original })
    expect(stale.statusCode).toBe(409)
    expect(stale.json()).toEqual({
      type: 'invalid_request',
      code: 'conflict',
      detail: `The feature flag was updated by ${other.user.email} since you started editing it. Please refresh and try again.`,
      attr: null,
    })
    expect((await get(`${base}/${flag.id}/`)).json()).toMatchObject({ name: 'Changed by the other', version: 2 })
  })

  it('test_feature_flag_update_no_conflict_on_other_fields: a stale edit of another field is merged', async () => {
    const flag = await created({ key: 'merged', name: 'Original' })
    const original = { ...flag }
    expect((await patch(flag.id, { name: 'Renamed', version: 1, original_flag: original })).statusCode).toBe(200)
    const stale = await patch(flag.id, { active: false, version: 1, original_flag: original })
    expect(stale.statusCode, stale.body).toBe(200)
    expect(stale.json()).toMatchObject({ name: 'Renamed', active: false, version: 3 })
    // without original_flag PostHog cannot tell what changed and applies the edit
    const blind = await patch(flag.id, { name: 'Blind', version: 1 })
    expect(blind.statusCode).toBe(200)
    expect(blind.json()).toMatchObject({ name: 'Blind', version: 4 })
  })

  it('test_feature_flag_activity_includes_version', async () => {
    const flag = await created({ key: 'versioned-activity' })
    await patch(flag.id, { name: 'One' })
    const log = (await get(`${base}/${flag.id}/activity/`)).json()
    expect(log.results[0].detail.changes).toEqual([
      { type: 'FeatureFlag', action: 'changed', field: 'name', before: '', after: 'One' },
      { type: 'FeatureFlag', action: 'changed', field: 'version', before: 1, after: 2 },
    ])
  })
})

describe('release condition validation', () => {
  it.each([
    ['icontains', ['a', 'b'], "Invalid value for operator icontains: ['a', 'b']"],
    ['regex', ['^a'], "Invalid value for operator regex: ['^a']"],
    ['gt', [5], 'Invalid value for operator gt: [5]'],
    ['lt', null, 'Invalid value for operator lt: None'],
    ['not_icontains', { a: 1 }, "Invalid value for operator not_icontains: {'a': 1}"],
  ])('test_create_flag_with_invalid_value_for_%s', async (operator, value, detail) => {
    const res = await withProperty(`bad-${operator}`, { key: 'email', operator, value })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ type: 'validation_error', code: 'invalid_value', detail, attr: 'filters' })
  })

  it('accepts a text or a number for the comparison operators', async () => {
    expect((await withProperty('num-gt', { key: 'age', operator: 'gt', value: 40 })).statusCode).toBe(201)
    expect((await withProperty('text-gt', { key: 'age', operator: 'gt', value: '40' })).statusCode).toBe(201)
  })

  it('test_create_flag_with_invalid_date', async () => {
    const res = await withProperty('bad-date', { key: 'signed_up', operator: 'is_date_before', value: 'not a date' })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({
      type: 'validation_error',
      code: 'invalid_date',
      detail: 'Invalid date value: not a date',
      attr: 'filters',
    })
    const relative = await withProperty('bad-relative', {
      key: 'signed_up',
      operator: 'is_date_after',
      value: '-3fortnights',
    })
    expect(relative.json().code).toBe('invalid_date')
    expect(
      (await withProperty('good-relative', { key: 'signed_up', operator: 'is_date_after', value: '-30d' })).statusCode,
    ).toBe(201)
    expect(
      (await withProperty('good-absolute', { key: 'signed_up', operator: 'is_date_before', value: '2026-01-31' }))
        .statusCode,
    ).toBe(201)
  })

  it('test_create_flag_with_invalid_regex', async () => {
    const res = await withProperty('bad-regex', { key: 'email', operator: 'regex', value: '(unclosed' })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'invalid_regex', attr: 'filters' })
  })

  it.each(['in', 'not_in'])('test_cant_create_flag_with_in_operator_for_person_properties: %s', async (operator) => {
    const res = await withProperty(`beta-person-${operator}`, {
      key: 'email',
      operator,
      value: ['user1@example.com', 'user2@example.com'],
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({
      type: 'validation_error',
      code: 'invalid_operator',
      detail: `The '${operator}' operator is only valid for cohort properties, not 'person' properties.`,
      attr: 'filters',
    })
  })

  it.each(['foo?bar=baz', 'foo/bar', 'foo\\bar', 'foo.bar', 'foo bar'])(
    'test_cant_create_flag_with_key_with_invalid_characters: %s',
    async (key) => {
      const res = await post({ name: 'Beta feature', key })
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual({
        type: 'validation_error',
        code: 'invalid_key',
        detail: 'Only letters, numbers, hyphens (-) & underscores (_) are allowed.',
        attr: 'key',
      })
    },
  )

  it('test_validation_group_properties: a property of another kind than the aggregation is refused first', async () => {
    const refused = {
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'Filters are not valid (can only use group properties)',
      attr: 'filters',
    }
    const industry = { key: 'industry', value: 'finance', type: 'group', group_type_index: 0 }
    const illegal = await post({
      key: 'illegal-groups-flag',
      filters: { aggregation_group_type_index: 3, groups: [{ properties: [industry] }] },
    })
    expect(illegal.json()).toEqual(refused)
    const person = await post({
      key: 'person-flag',
      filters: {
        aggregation_group_type_index: 0,
        groups: [{ properties: [{ key: 'email', type: 'person', value: '@posthog.com', operator: 'icontains' }] }],
      },
    })
    expect(person.json()).toEqual(refused)
  })

  it('test_create_flag_with_in_operator_on_person_property', async () => {
    const res = await withProperty('in-on-person', { key: 'plan', operator: 'in', value: ['pro'] })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'invalid_operator', attr: 'filters' })
    const unknown = await withProperty('unknown-op', { key: 'plan', operator: 'roughly', value: 'pro' })
    expect(unknown.json()).toMatchObject({ code: 'invalid_operator', attr: 'filters' })
  })

  it('test_create_flag_with_nonexistent_cohort', async () => {
    const res = await post({
      key: 'ghost-cohort',
      filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: 98765 }] }] },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({
      type: 'validation_error',
      code: 'cohort_does_not_exist',
      detail: 'Cohort with id 98765 does not exist',
      attr: 'filters',
    })
  })

  it('test_device_id_bucketing_with_experience_continuity is refused', async () => {
    const res = await post({
      key: 'device-continuity',
      bucketing_identifier: 'device_id',
      ensure_experience_continuity: true,
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().attr).toBe('ensure_experience_continuity')
    const flag = await created({ key: 'device-later', bucketing_identifier: 'device_id' })
    expect((await patch(flag.id, { ensure_experience_continuity: true })).statusCode).toBe(400)
  })
})

describe('condition sets on create (PostHog PR #38931, issue #49715)', () => {
  const noConditions = {
    type: 'validation_error',
    code: 'invalid_input',
    detail: 'Feature flags must have at least one condition set (group).',
    attr: 'filters',
  }

  it.each([
    ['filters {}', {}],
    ['groups []', { groups: [] }],
    ['properties but no groups', { properties: [{ key: 'email', value: 'a@b.c', type: 'person' }] }],
    ['a multivariate flag without groups', { multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] } }],
  ])('test_create_flag_with_empty_groups_fails: %s answers 400 and stores nothing', async (label, filters) => {
    const key = `no-conditions-${label.replace(/\W+/g, '-')}`
    const res = await post({ key, filters })
    expect(res.statusCode, res.body).toBe(400)
    expect(res.json()).toEqual(noConditions)
    const listed = (await get(`${base}/?search=${key}`)).json()
    expect(listed.results).toEqual([])
  })

  it('test_create_flag_with_rollout_only_condition: a group with no properties is a condition set', async () => {
    const flag = await created({
      key: 'rollout-only',
      filters: { groups: [{ properties: [], rollout_percentage: 0 }] },
    })
    expect(flag.filters.groups).toEqual([expect.objectContaining({ properties: [], rollout_percentage: 0 })])
  })

  it('a flag created without filters reads as one condition for everyone, as PostHog’s legacy default', async () => {
    const flag = await created({ key: 'no-filters-at-all' })
    expect(flag.filters.groups).toEqual([expect.objectContaining({ properties: [], rollout_percentage: null })])
    const flags = await t.burrow.app.inject({
      method: 'POST',
      url: '/flags/?v=2',
      payload: { token: t.creds.project_api_key, distinct_id: 'anyone' },
    })
    expect(flags.statusCode, flags.body).toBe(200)
    expect(flags.json().flags['no-filters-at-all']).toMatchObject({ key: 'no-filters-at-all', enabled: true })
  })

  it('an update may leave a flag without conditions; filters without groups on PATCH keep the current ones', async () => {
    const flag = await created({
      key: 'update-conditions',
      filters: { groups: [{ properties: [{ key: 'plan', value: ['pro'], type: 'person' }], rollout_percentage: 50 }] },
    })
    const kept = await patch(flag.id, { filters: {} })
    expect(kept.statusCode, kept.body).toBe(200)
    expect(kept.json().filters.groups).toEqual(flag.filters.groups)
    const cleared = await patch(flag.id, { filters: { groups: [] } })
    expect(cleared.statusCode, cleared.body).toBe(200)
    expect(cleared.json().filters.groups).toEqual([])
  })
})

describe('payloads', () => {
  it('test_multivariate_payload_keys_must_match_variants', async () => {
    const res = await post({
      key: 'mv-payloads',
      filters: {
        groups: [{ properties: [], rollout_percentage: 100 }],
        multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] },
        payloads: { b: '{"x": 1}' },
      },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toBe('Payload keys must match a variant key for multivariate flags')
  })

  it("test_boolean_payload_keys_must_be_'true'", async () => {
    const res = await post({
      key: 'bool-payloads',
      filters: { groups: [{ properties: [] }], payloads: { false: '1' } },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toBe("Payload keys must be 'true' for boolean flags")
  })

  it('test_payload_value_is_not_valid_json and non-string payloads stored as JSON text', async () => {
    const bad = await post({ key: 'bad-json', filters: { groups: [{ properties: [] }], payloads: { true: '{nope' } } })
    expect(bad.json().detail).toBe('Payload value is not valid JSON')
    const flag = await created({
      key: 'json-payload',
      filters: { groups: [{ properties: [] }], payloads: { true: { a: [1, 2] } } },
    })
    expect(flag.filters.payloads).toEqual({ true: '{"a":[1,2]}' })
  })
})

describe('lists and activity', () => {
  it('test_search_with_underscore: "_" is a literal on SQLite and PostgreSQL', async () => {
    await created({ key: 'under_score_flag' })
    await created({ key: 'underxscore-flag' })
    const res = (await get(`${base}/?search=under_score`)).json()
    expect(res.results.map((f: { key: string }) => f.key)).toEqual(['under_score_flag'])
    const percent = (await get(`${base}/?search=${encodeURIComponent('%')}`)).json()
    expect(percent.results).toEqual([])
  })

  it('test_feature_flag_activity_pagination: 10 a page with next and previous', async () => {
    const flag = await created({ key: 'busy-flag' })
    for (let i = 1; i <= 11; i++) expect((await patch(flag.id, { name: `Name ${i}` })).statusCode).toBe(200)
    // 12 entries: created + 11 updates
    const first = (await get(`${base}/${flag.id}/activity/`)).json()
    expect(first.results).toHaveLength(10)
    expect(first.results[0].detail.changes[0].after).toBe('Name 11')
    expect(first.previous).toBeNull()
    expect(first.next).toContain('page=2')
    const second = (await get(first.next)).json()
    expect(second.results.map((e: { activity: string }) => e.activity)).toEqual(['updated', 'created'])
    expect(second.next).toBeNull()
    expect(second.previous).toContain('page=1')
    const small = (await get(`${base}/${flag.id}/activity/?limit=5&page=3`)).json()
    expect(small.results).toHaveLength(2)
  })

  it('test_cohort_name_on_flag_conditions', async () => {
    const cohortRes = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/cohorts/`,
      headers: t.auth,
      payload: {
        name: 'Paying customers',
        filters: {
          properties: { type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'person', operator: 'exact' }] },
        },
      },
    })
    const cohort = cohortRes.json()
    const flag = await created({
      key: 'named-cohort',
      filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohort.id }], rollout_percentage: 100 }] },
    })
    expect(flag.filters.groups[0].properties[0]).toMatchObject({ value: cohort.id, cohort_name: 'Paying customers' })
    const listed = (await get(`${base}/?search=named-cohort`)).json()
    expect(listed.results[0].filters.groups[0].properties[0].cohort_name).toBe('Paying customers')
  })
})

describe('deleting and remote config', () => {
  it('test_soft_delete_flag_blocked_with_active_experiment', async () => {
    const flag = await created({
      key: 'flag2',
      filters: {
        groups: [{ properties: [], rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'control', rollout_percentage: 50 },
            { key: 'test', rollout_percentage: 50 },
          ],
        },
      },
    })
    const experiment = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/experiments/`,
      headers: t.auth,
      payload: { name: 'uses flag2', feature_flag_key: 'flag2', parameters: {} },
    })
    expect(experiment.statusCode, experiment.body).toBe(201)
    const res = await patch(flag.id, { deleted: true })
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toBe(
      `Cannot delete a feature flag that is linked to active experiment(s) with ID(s): ${experiment.json().id}. Please delete the experiment(s) before deleting the flag.`,
    )
    expect((await get(`${base}/${flag.id}/`)).json().deleted).toBe(false)
  })

  it('test_remote_config_with_personal_api_key, test_remote_config_returns_not_found_for_unknown_flag', async () => {
    const flag = await created({
      key: 'my-remote-config-flag',
      is_remote_configuration: true,
      filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"test": true}' } },
    })
    for (const idOrKey of ['my-remote-config-flag', String(flag.id)]) {
      const res = await get(`${base}/${idOrKey}/remote_config`)
      expect(res.statusCode).toBe(200)
      expect(res.json()).toBe('{"test": true}')
    }
    expect((await get(`${base}/nonexistent_key/remote_config`)).statusCode).toBe(404)
  })
})

describe('list filters (a project of its own)', () => {
  let l: TestApp
  let listBase: string
  const keys = async (query: string) =>
    (await l.burrow.app.inject({ url: `${listBase}/?${query}`, headers: l.auth }))
      .json()
      .results.map((f: { key: string }) => f.key)
  const make = async (payload: Record<string, unknown>) => {
    const res = await l.burrow.app.inject({ method: 'POST', url: `${listBase}/`, headers: l.auth, payload })
    expect(res.statusCode, res.body).toBe(201)
  }
  const twoVariants = {
    groups: [{ properties: [], rollout_percentage: 100 }],
    multivariate: {
      variants: [
        { key: 'control', rollout_percentage: 50 },
        { key: 'test', rollout_percentage: 50 },
      ],
    },
  }

  beforeAll(async () => {
    l = await startTestApp()
    listBase = `/api/projects/${l.creds.project_id}/feature_flags`
    await make({ key: 'red_button' })
    await make({ key: 'green_button', active: false })
    await make({ key: 'purple_button', filters: twoVariants })
    await make({ key: 'experiment_flag', filters: twoVariants })
    await make({ key: 'deleted_experiment_flag', filters: twoVariants })
    for (const [name, key] of [
      ['unique_experiment_name', 'experiment_flag'],
      ['deleted_unique_experiment', 'deleted_experiment_flag'],
    ]) {
      const res = await l.burrow.app.inject({
        method: 'POST',
        url: `/api/projects/${l.creds.project_id}/experiments/`,
        headers: l.auth,
        payload: { name, feature_flag_key: key, parameters: {} },
      })
      expect(res.statusCode, res.body).toBe(201)
      if (name.startsWith('deleted')) {
        const gone = await l.burrow.app.inject({
          method: 'PATCH',
          url: `/api/projects/${l.creds.project_id}/experiments/${res.json().id}/`,
          headers: l.auth,
          payload: { deleted: true },
        })
        expect(gone.statusCode).toBe(200)
      }
    }
  }, 180_000)
  afterAll(() => l?.close())

  it('test_get_flags_with_type_filters', async () => {
    // newest first: boolean flags have no variants; an experiment counts only while it is not deleted
    expect(await keys('type=boolean')).toEqual(['green_button', 'red_button'])
    expect(await keys('type=multivariant')).toEqual(['deleted_experiment_flag', 'experiment_flag', 'purple_button'])
    expect(await keys('type=experiment')).toEqual(['experiment_flag'])
  })

  it('test_get_flags_with_search: by key, and by the name of an experiment that is not deleted', async () => {
    expect(await keys('active=true&search=_button')).toEqual(['purple_button', 'red_button'])
    expect(await keys('search=unique_experiment_name')).toEqual(['experiment_flag'])
    expect(await keys('search=deleted_unique_experiment')).toEqual([])
  })

  it('test_get_flags_with_active_and_created_by_id_filters', async () => {
    const me = await l.burrow.stores.users.getByEmail(l.creds.email)
    expect(await keys(`created_by_id=${me?.id}&active=false`)).toEqual(['green_button'])
    expect(await keys(`created_by_id=${(me?.id ?? 0) + 1000}`)).toEqual([])
  })
})

describe('flag details past the list (test_feature_flag.py from the static cohort tests on)', () => {
  const experiment = async (name: string, key: string) => {
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/experiments/`,
      headers: t.auth,
      payload: { name, feature_flag_key: key, parameters: {} },
    })
    expect(res.statusCode, res.body).toBe(201)
    return res.json().id as number
  }

  it('test_feature_flag_includes_cohort_names: the condition as sent, with the cohort name', async () => {
    const cohortId = await legacyCohort('test_cohort', '@posthog.com')
    const flag = await created({
      name: 'Alpha feature',
      key: 'alpha-feature',
      filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohortId }] }] },
    })
    const res = await get(`${base}/${flag.id}/`)
    expect(res.json().filters.groups[0].properties[0]).toEqual({
      key: 'id',
      type: 'cohort',
      value: cohortId,
      cohort_name: 'test_cohort',
    })
  })

  it('test_updating_feature_flag_key_updates_super_groups', async () => {
    const flag = await created({
      key: 'old-key',
      name: 'Test Flag',
      filters: {
        groups: [{ properties: [], rollout_percentage: 0 }],
        super_groups: [
          {
            properties: [{ key: '$feature_enrollment/old-key', type: 'person', value: ['true'], operator: 'exact' }],
            rollout_percentage: 100,
          },
        ],
      },
    })
    expect((await patch(flag.id, { key: 'new-key' })).statusCode).toBe(200)
    const filters = (await get(`${base}/${flag.id}/`)).json().filters
    expect(filters.super_groups[0].properties[0].key).toBe('$feature_enrollment/new-key')
    expect(JSON.stringify(filters)).not.toContain('$feature_enrollment/old-key')
  })

  it('test_feature_flag_experiment_set: the experiments that are not deleted, oldest first', async () => {
    const flag = await created({
      key: 'test-flag',
      filters: {
        groups: [{ properties: [], rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'control', rollout_percentage: 50 },
            { key: 'test', rollout_percentage: 50 },
          ],
        },
      },
    })
    expect((await get(`${base}/${flag.id}/`)).json().experiment_set).toEqual([])
    const first = await experiment('Test Experiment', 'test-flag')
    expect((await get(`${base}/${flag.id}/`)).json().experiment_set).toEqual([first])
    const second = await experiment('Another Experiment', 'test-flag')
    expect((await get(`${base}/${flag.id}/`)).json().experiment_set).toEqual([first, second])
    const listed = (await get(`${base}/?search=test-flag`)).json().results
    expect(listed.find((f: { key: string }) => f.key === 'test-flag').experiment_set).toEqual([first, second])
    for (const id of [first, second]) {
      const gone = await t.burrow.app.inject({
        method: 'PATCH',
        url: `/api/projects/${t.creds.project_id}/experiments/${id}/`,
        headers: t.auth,
        payload: { deleted: true },
      })
      expect(gone.statusCode, gone.body).toBe(200)
    }
    expect((await get(`${base}/${flag.id}/`)).json().experiment_set).toEqual([])
  })

  it('test_cannot_delete_flag_with_dependents, test_can_delete_flag_with_no_dependents', async () => {
    const baseFlag = await created({
      key: 'base_flag',
      filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
    })
    const dependent = await created({
      key: 'dependent_flag',
      filters: {
        groups: [
          {
            properties: [{ key: String(baseFlag.id), type: 'flag', value: true, operator: 'flag_evaluates_to' }],
            rollout_percentage: 100,
          },
        ],
      },
    })
    const refused = await patch(baseFlag.id, { deleted: true })
    expect(refused.statusCode).toBe(400)
    expect(refused.json().detail).toContain('Cannot delete this feature flag because other flags depend on it')
    expect(refused.json().detail).toContain(`dependent_flag (ID: ${dependent.id})`)
    expect((await patch(dependent.id, { deleted: true })).statusCode).toBe(200)
    expect((await patch(baseFlag.id, { deleted: true })).statusCode).toBe(200)
  })
})

describe('local evaluation ETags (test_local_evaluation_*)', () => {
  const local = (query = '', headers: Record<string, string> = {}) =>
    t.burrow.app.inject({ url: `/api/feature_flag/local_evaluation${query}`, headers: { ...t.auth, ...headers } })

  it('test_local_evaluation_returns_etag_header, _returns_304_when_etag_matches, _304_response_has_empty_body', async () => {
    const first = await local()
    expect(first.statusCode).toBe(200)
    const etag = first.headers.etag as string
    expect(etag.startsWith('W/"')).toBe(true)
    expect(etag.endsWith('"')).toBe(true)
    expect(first.headers['cache-control']).toBe('private, must-revalidate')
    for (let i = 0; i < 3; i++) {
      const again = await local('', { 'if-none-match': etag })
      expect(again.statusCode).toBe(304)
      expect(again.headers.etag).toBe(etag)
      expect(again.body).toBe('')
    }
    // test_local_evaluation_etag_header_parsing_unquoted
    const bare = etag.slice(3, -1)
    expect((await local('', { 'if-none-match': bare })).statusCode).toBe(304)
    // test_local_evaluation_returns_200_when_etag_does_not_match
    const wrong = await local('', { 'if-none-match': '"wrong-etag"' })
    expect(wrong.statusCode).toBe(200)
    expect(wrong.json()).toHaveProperty('flags')
  })

  it('test_local_evaluation_etag_works_with_send_cohorts, _transformation_with_send_cohorts_true/false', async () => {
    const cohortId = await legacyCohort('Test Cohort', 'test@example.com')
    await created({
      key: 'test-flag-cohort',
      filters: { groups: [{ properties: [{ key: 'id', value: cohortId, type: 'cohort' }], rollout_percentage: 100 }] },
    })
    const withCohorts = await local('?send_cohorts')
    expect(withCohorts.statusCode).toBe(200)
    // the cohort as its filters hold it (PostHog's test_local_evaluation_with_cohorts shows the legacy property
    // without an operator; Burrow's cohorts store the legacy form with `operator: "exact"`)
    expect(withCohorts.json().cohorts[String(cohortId)]).toMatchObject({
      type: 'OR',
      values: [{ type: 'AND', values: [{ key: 'email', value: 'test@example.com', type: 'person' }] }],
    })
    const sent = withCohorts.json().flags.find((f: { key: string }) => f.key === 'test-flag-cohort')
    expect(sent.filters.groups[0].properties[0]).toMatchObject({ type: 'cohort', value: cohortId })
    const etagWith = withCohorts.headers.etag as string
    expect((await local('?send_cohorts', { 'if-none-match': etagWith })).statusCode).toBe(304)

    const without = await local()
    expect(without.statusCode).toBe(200)
    expect(without.headers.etag).not.toBe(etagWith)
    expect(without.json().cohorts).toEqual({})
    const inlined = without.json().flags.find((f: { key: string }) => f.key === 'test-flag-cohort')
    expect(inlined.filters.groups).toHaveLength(1)
    expect(inlined.filters.groups[0].rollout_percentage).toBe(100)
    expect(inlined.filters.groups[0].properties).toHaveLength(1)
    expect(inlined.filters.groups[0].properties[0]).toMatchObject({
      key: 'email',
      value: 'test@example.com',
      type: 'person',
    })
  })
})

describe('bulk actions, matching ids and status (a project of its own)', () => {
  let b: TestApp
  let bBase: string
  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
    b.burrow.app.inject({ method, url: `${bBase}/${url}`, headers: b.auth, payload: payload as never })
  const make = async (key: string, extra: Record<string, unknown> = {}) => {
    const res = await call('POST', '', {
      key,
      filters: { groups: [{ rollout_percentage: 50, properties: [] }] },
      ...extra,
    })
    expect(res.statusCode, res.body).toBe(201)
    return res.json() as { id: number; key: string }
  }
  const experimentOn = async (key: string) => {
    const res = await b.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${b.creds.project_id}/experiments/`,
      headers: b.auth,
      payload: { name: `Experiment on ${key}`, feature_flag_key: key, parameters: {} },
    })
    expect(res.statusCode, res.body).toBe(201)
    return res.json().id as number
  }
  const twoVariants = {
    groups: [{ rollout_percentage: 50, properties: [] }],
    multivariate: {
      variants: [
        { key: 'control', rollout_percentage: 50 },
        { key: 'test', rollout_percentage: 50 },
      ],
    },
  }

  // days added to the clock, for flags that have grown old
  let daysLater = 0

  beforeAll(async () => {
    b = await startTestApp({ clock: () => new Date(Date.now() + daysLater * 24 * 3600 * 1000) })
    bBase = `/api/projects/${b.creds.project_id}/feature_flags`
  }, 180_000)
  afterAll(() => b?.close())

  it('test_cant_create_flag_with_data_that_fails_to_query, test_cant_create_flag_with_group_data_that_fails_to_query', async () => {
    const refused = {
      type: 'validation_error',
      code: 'invalid_input',
      detail: "Can't evaluate flag - please check release conditions",
      attr: null,
    }
    const person = await call('POST', '', {
      name: 'Beta feature',
      key: 'beta-x',
      filters: {
        groups: [
          {
            rollout_percentage: 65,
            properties: [{ key: 'email', type: 'person', value: '2.3.9{0-9}{1}', operator: 'regex' }],
          },
        ],
      },
    })
    expect(person.statusCode).toBe(400)
    expect(person.json()).toEqual(refused)
    await insertGroupType(b, 'organization', 0)
    await insertGroupType(b, 'xyz', 1)
    const group = await call('POST', '', {
      name: 'Beta feature',
      key: 'beta-x',
      filters: {
        aggregation_group_type_index: 1,
        groups: [
          {
            rollout_percentage: 65,
            properties: [
              { key: 'email', type: 'group', group_type_index: 1, value: '2.3.9{0-9}{1 ef}', operator: 'regex' },
            ],
          },
        ],
      },
    })
    expect(group.statusCode).toBe(400)
    expect(group.json()).toEqual(refused)
    // bounds PostgreSQL reads, and braces that open no bound, are fine
    for (const value of ['^v{1,3}$', 'a{2}', '[{0-9}]', '\\{0-9}', 'x{y}']) {
      const ok = await call('POST', '', {
        key: `regex-ok-${value.length}-${value.charCodeAt(0)}`,
        filters: { groups: [{ properties: [{ key: 'email', type: 'person', value, operator: 'regex' }] }] },
      })
      expect(ok.statusCode, `${value}: ${ok.body}`).toBe(201)
    }
  })

  it('test_get_flags_with_evaluation_runtime_filter', async () => {
    await make('server_flag', { evaluation_runtime: 'server' })
    await make('client_flag', { evaluation_runtime: 'client' })
    await make('both_flag', { evaluation_runtime: 'all' })
    const keys = async (runtime: string) =>
      (await call('GET', `?evaluation_runtime=${runtime}`)).json().results.map((f: { key: string }) => f.key)
    expect(await keys('server')).toEqual(['server_flag'])
    expect(await keys('client')).toEqual(['client_flag'])
    const all = await keys('all')
    expect(all).toContain('both_flag')
    expect(all).not.toContain('server_flag')
    expect(all).not.toContain('client_flag')
  })

  it('test_bulk_keys_*: valid, string, mixed, invalid, nonexistent, deleted, empty and missing ids', async () => {
    const flag1 = await make('test-flag-1')
    const flag2 = await make('test-flag-2')
    const gone = await make('deleted-flag')
    expect((await call('PATCH', `${gone.id}/`, { deleted: true })).statusCode).toBe(200)
    const keys = async (payload: unknown) => {
      const res = await call('POST', 'bulk_keys/', payload)
      return { status: res.statusCode, body: res.json() }
    }
    expect(await keys({ ids: [flag1.id, flag2.id] })).toEqual({
      status: 200,
      body: { keys: { [flag1.id]: 'test-flag-1', [flag2.id]: 'test-flag-2' } },
    })
    expect((await keys({ ids: [String(flag1.id)] })).body).toEqual({ keys: { [flag1.id]: 'test-flag-1' } })
    const mixed = await keys({ ids: [flag1.id, 'invalid', 99999] })
    expect(mixed.status).toBe(200)
    expect(mixed.body.keys).toEqual({ [flag1.id]: 'test-flag-1' })
    expect(mixed.body.warning).toContain("Invalid flag IDs ignored: ['invalid']")
    const invalid = await keys({ ids: ['invalid', 'not-a-number'] })
    expect(invalid.status).toBe(400)
    expect(invalid.body.error).toContain('Invalid flag IDs provided')
    expect(await keys({ ids: [99999, 88888] })).toEqual({ status: 200, body: { keys: {} } })
    expect((await keys({ ids: [flag1.id, gone.id] })).body.keys).toEqual({ [flag1.id]: 'test-flag-1' })
    expect(await keys({ ids: [] })).toEqual({ status: 200, body: { keys: {} } })
    expect(await keys({})).toEqual({ status: 200, body: { keys: {} } })
  })

  it('test_bulk_keys_team_isolation, test_bulk_delete_cross_project_isolation', async () => {
    const mine = await make('current-team-flag')
    const other = await createTenant(b)
    const theirs = await b.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${other.project.id}/feature_flags/`,
      headers: other.auth,
      payload: { key: 'other-team-flag' },
    })
    expect(theirs.statusCode, theirs.body).toBe(201)
    const keys = await call('POST', 'bulk_keys/', { ids: [mine.id, theirs.json().id] })
    expect(keys.json().keys).toEqual({ [mine.id]: 'current-team-flag' })
    const deleted = (await call('POST', 'bulk_delete/', { ids: [mine.id, theirs.json().id] })).json()
    expect(deleted.deleted.map((d: { id: number }) => d.id)).toEqual([mine.id])
    expect(deleted.errors).toHaveLength(1)
    expect(deleted.errors[0]).toMatchObject({ id: theirs.json().id, reason: 'Flag not found' })
    const still = await b.burrow.app.inject({
      url: `/api/projects/${other.project.id}/feature_flags/${theirs.json().id}/`,
      headers: other.auth,
    })
    expect(still.json().deleted).toBe(false)
  })

  it('test_matching_ids_*: all, search, active, type, deleted left out', async () => {
    const a = await make('mi_test_feature_a')
    const bFlag = await make('mi_test_feature_b')
    const other = await make('mi_other_flag', { active: false })
    const multi = await make('mi_multivariate_flag', { filters: twoVariants })
    const gone = await make('mi_deleted_flag')
    expect((await call('PATCH', `${gone.id}/`, { deleted: true })).statusCode).toBe(200)
    const ids = async (query: string) => (await call('GET', `matching_ids/?${query}`)).json()
    const all = await ids('search=mi_')
    expect(all.total).toBe(4)
    expect(new Set(all.ids)).toEqual(new Set([a.id, bFlag.id, other.id, multi.id]))
    const search = await ids('search=mi_test_feature')
    expect(search.total).toBe(2)
    expect(new Set(search.ids)).toEqual(new Set([a.id, bFlag.id]))
    expect(await ids('search=mi_&active=false')).toEqual({ ids: [other.id], total: 1 })
    const boolean = await ids('search=mi_&type=boolean')
    expect(new Set(boolean.ids)).toEqual(new Set([a.id, bFlag.id, other.id]))
    expect(await ids('search=mi_&type=multivariant')).toEqual({ ids: [multi.id], total: 1 })
  })

  it('test_bulk_delete_by_filter_with_search, _with_active_status, _with_type', async () => {
    const f1 = await make('bd_test_feature_a')
    const f2 = await make('bd_test_feature_b')
    const keep = await make('bd_other_flag')
    const bySearch = (await call('POST', 'bulk_delete/', { filters: { search: 'bd_test_feature' } })).json()
    expect(new Set(bySearch.deleted.map((d: { id: number }) => d.id))).toEqual(new Set([f1.id, f2.id]))
    expect(bySearch.errors).toEqual([])
    expect((await call('GET', `${f1.id}/`)).json().deleted).toBe(true)
    expect((await call('GET', `${keep.id}/`)).json().deleted).toBe(false)

    const active = await make('bda_active_flag')
    const inactive = await make('bda_inactive_flag', { active: false })
    const byActive = (await call('POST', 'bulk_delete/', { filters: { search: 'bda_', active: 'false' } })).json()
    expect(byActive.deleted.map((d: { id: number }) => d.id)).toEqual([inactive.id])
    expect((await call('GET', `${active.id}/`)).json().deleted).toBe(false)

    const boolean = await make('bdt_boolean_flag')
    const multi = await make('bdt_multivariate_flag', { filters: twoVariants })
    const byType = (await call('POST', 'bulk_delete/', { filters: { search: 'bdt_', type: 'boolean' } })).json()
    expect(byType.deleted.map((d: { id: number }) => d.id)).toEqual([boolean.id])
    expect((await call('GET', `${multi.id}/`)).json().deleted).toBe(false)
    // the deletes are in the activity log, as PATCH deleted: true writes them
    const log = (await call('GET', `${boolean.id}/activity/`)).json()
    expect(log.results[0].activity).toBe('deleted')
  })

  it('test_bulk_delete_by_ids_no_limit', async () => {
    const ids: number[] = []
    for (let i = 0; i < 150; i++) ids.push((await make(`many_${i}`)).id)
    const res = (await call('POST', 'bulk_delete/', { ids })).json()
    expect(res.deleted).toHaveLength(150)
    expect(res.errors).toHaveLength(0)
  }, 120_000)

  it('test_bulk_delete_requires_filters_or_ids, _rejects_both_filters_and_ids, _rejects_unknown_filter_keys', async () => {
    const none = await call('POST', 'bulk_delete/', {})
    expect(none.statusCode).toBe(400)
    expect(none.json().error).toContain('Must provide either filters or ids')
    const flag = await make('test_flag_both')
    const both = await call('POST', 'bulk_delete/', { filters: { search: 'test' }, ids: [flag.id] })
    expect(both.statusCode).toBe(400)
    expect(both.json().error).toContain('either filters or ids, not both')
    const unknown = await call('POST', 'bulk_delete/', { filters: { invalid_key: 'value', another_bad_key: 'test' } })
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json().error).toContain('Unknown filter keys')
    expect(unknown.json().error).toContain('another_bad_key')
    expect(unknown.json().error).toContain('invalid_key')
    expect((await call('GET', `${flag.id}/`)).json().deleted).toBe(false)
  })

  it('test_bulk_delete_validates_experiments, _with_dependent_flags, _renames_key_with_soft_deleted_experiment', async () => {
    const withExperiment = await make('experiment_flag', { filters: twoVariants })
    await experimentOn('experiment_flag')
    const refused = (await call('POST', 'bulk_delete/', { ids: [withExperiment.id] })).json()
    expect(refused.deleted).toHaveLength(0)
    expect(refused.errors).toHaveLength(1)
    expect(refused.errors[0].reason.toLowerCase()).toContain('experiment')
    expect((await call('GET', `${withExperiment.id}/`)).json().deleted).toBe(false)

    const baseFlag = await make('bulk_base_flag', {
      filters: { groups: [{ rollout_percentage: 100, properties: [] }] },
    })
    await make('bulk_dependent_flag', {
      filters: {
        groups: [
          {
            rollout_percentage: 100,
            properties: [{ key: String(baseFlag.id), type: 'flag', value: 'true', operator: 'flag_evaluates_to' }],
          },
        ],
      },
    })
    const dependents = (await call('POST', 'bulk_delete/', { ids: [baseFlag.id] })).json()
    expect(dependents.deleted).toHaveLength(0)
    expect(dependents.errors[0].reason).toContain('other flags depend on it')
    expect((await call('GET', `${baseFlag.id}/`)).json().deleted).toBe(false)

    const renamed = await make('flag_with_deleted_exp', { filters: twoVariants })
    const exp = await experimentOn('flag_with_deleted_exp')
    const gone = await b.burrow.app.inject({
      method: 'PATCH',
      url: `/api/projects/${b.creds.project_id}/experiments/${exp}/`,
      headers: b.auth,
      payload: { deleted: true },
    })
    expect(gone.statusCode).toBe(200)
    expect((await call('POST', 'bulk_delete/', { ids: [renamed.id] })).json().deleted).toHaveLength(1)
    const after = (await call('GET', `${renamed.id}/`)).json()
    expect(after.deleted).toBe(true)
    expect(after.key).toBe(`flag_with_deleted_exp:deleted:${renamed.id}`)
    // the key is free again
    await make('flag_with_deleted_exp')
  })

  it('test_bulk_delete_includes_rollout_state', async () => {
    const full = await make('fully_rolled_out', { filters: { groups: [{ rollout_percentage: 100, properties: [] }] } })
    const zero = await make('zero_rollout', { filters: { groups: [{ rollout_percentage: 0, properties: [] }] } })
    const partial = await make('partial_rollout')
    const multi = await make('multivariate_full', {
      filters: {
        groups: [{ rollout_percentage: 100, properties: [], variant: 'winner' }],
        multivariate: {
          variants: [
            { key: 'winner', rollout_percentage: 100 },
            { key: 'loser', rollout_percentage: 0 },
          ],
        },
      },
    })
    const res = (await call('POST', 'bulk_delete/', { ids: [full.id, zero.id, partial.id, multi.id] })).json()
    expect(res.deleted).toHaveLength(4)
    const byKey = Object.fromEntries(res.deleted.map((d: { key: string }) => [d.key, d]))
    expect(byKey.fully_rolled_out).toMatchObject({ rollout_state: 'fully_rolled_out', active_variant: null })
    expect(byKey.zero_rollout).toMatchObject({ rollout_state: 'not_rolled_out', active_variant: null })
    expect(byKey.partial_rollout).toMatchObject({ rollout_state: 'partial', active_variant: null })
    expect(byKey.multivariate_full).toMatchObject({ rollout_state: 'fully_rolled_out', active_variant: 'winner' })
  })

  it('test_flag_status_reasons (unknown, deleted), test_flag_status_new_flag_without_calls_not_stale', async () => {
    const unknown = await call('GET', '999999/status')
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json()).toMatchObject({ status: 'unknown', reason: 'Flag could not be found' })
    const deleted = await make('deleted-feature-flag')
    expect((await call('PATCH', `${deleted.id}/`, { deleted: true })).statusCode).toBe(200)
    const res = await call('GET', `${deleted.id}/status`)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ status: 'deleted', reason: 'Flag has been deleted' })
    // a flag younger than 30 days is active whatever its rollout
    const fresh = await make('new-flag', { filters: { groups: [{ rollout_percentage: 100, properties: [] }] } })
    expect((await call('GET', `${fresh.id}/status`)).json().status).toBe('active')
  })

  it('test_flag_status_reasons (stale by configuration), test_flag_status_old_flag_no_usage_data_not_fully_rolled_out_is_active', async () => {
    const boolean = await make('boolean-rolled-out-release-condition-flag', {
      filters: {
        groups: [
          {
            properties: [{ key: 'name', type: 'person', value: ['Smith'], operator: 'exact' }],
            rollout_percentage: 50,
          },
          { properties: [], rollout_percentage: 100 },
        ],
      },
    })
    const override = await make('multivariate-rolled-out-release-condition-and-override-flag', {
      filters: {
        groups: [{ variant: 'test', properties: [], rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'test', rollout_percentage: 60 },
            { key: 'control', rollout_percentage: 40 },
          ],
        },
      },
    })
    const variant = await make('multivariate-rolled-out-variant-flag', {
      filters: {
        groups: [{ variant: null, properties: [], rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'test', rollout_percentage: 100 },
            { key: 'control', rollout_percentage: 0 },
          ],
        },
      },
    })
    const half = await make('never-called-flag')
    const halfVariants = await make('multivariate-rolled-out-release-half-variant-flag', {
      filters: {
        groups: [{ variant: null, properties: [], rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'var1key', rollout_percentage: 50 },
            { key: 'var2key', rollout_percentage: 50 },
          ],
        },
      },
    })
    daysLater = 31
    const status = async (id: number) => (await call('GET', `${id}/status`)).json()
    expect(await status(boolean.id)).toEqual({
      status: 'stale',
      reason: 'This boolean flag will always evaluate to "true"',
    })
    expect(await status(override.id)).toEqual({
      status: 'stale',
      reason: 'This flag will always use the variant "test"',
    })
    expect(await status(variant.id)).toEqual({
      status: 'stale',
      reason: 'This flag will always use the variant "test"',
    })
    expect((await status(half.id)).status).toBe('active')
    expect((await status(halfVariants.id)).status).toBe('active')
    // test_get_flags_with_stale_filter*: the list's active=STALE, every live flag of this project that is 31 days
    // old and serves one answer to everyone (the earlier tests left two such flags: bulk_base_flag and new-flag)
    const stale = (await call('GET', '?active=STALE')).json()
    expect(new Set(stale.results.map((f: { key: string }) => f.key))).toEqual(
      new Set([
        'bulk_base_flag',
        'new-flag',
        'boolean-rolled-out-release-condition-flag',
        'multivariate-rolled-out-release-condition-and-override-flag',
        'multivariate-rolled-out-variant-flag',
      ]),
    )
    expect(stale.count).toBe(5)
    expect(stale.results.every((f: { status: string }) => f.status === 'STALE')).toBe(true)
  })
})

describe('user_blast_radius (TestBlastRadius; each test in a project of its own)', () => {
  type Project = Awaited<ReturnType<typeof createTenant>>
  const project = async () => createTenant(t)
  const person = (p: Project, distinctId: string, properties: Record<string, unknown>) =>
    insertPerson(t, [distinctId], properties, p.project.id)
  const group = (p: Project, index: number, key: string, properties: Record<string, unknown>) =>
    insertGroup(t, index, key, properties, p.project.id)
  const radius = async (p: Project, body: Record<string, unknown>) => {
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${p.project.id}/feature_flags/user_blast_radius`,
      headers: p.auth,
      payload: body,
    })
    return { status: res.statusCode, body: res.json() }
  }
  const personCondition = (properties: unknown[], rollout = 100) => ({
    condition: { properties, rollout_percentage: rollout },
  })
  const groupCondition = (properties: unknown[], index: number, rollout = 100) => ({
    condition: { properties, rollout_percentage: rollout },
    group_type_index: index,
  })
  const cohortIn = async (p: Project, name: string, properties: unknown) => {
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${p.project.id}/cohorts/`,
      headers: p.auth,
      payload: { name, filters: { properties } },
    })
    expect(res.statusCode, res.body).toBe(201)
    return res.json().id as number
  }

  it('test_user_blast_radius, _with_zero_users, _with_zero_selected_users, _with_all_selected_users', async () => {
    const p = await project()
    const exact = (value: unknown) => [{ key: 'group', type: 'person', value, operator: 'exact' }]
    expect((await radius(p, personCondition(exact([0, 1, 2, 3]), 25))).body).toEqual({
      users_affected: 0,
      total_users: 0,
    })
    for (let i = 0; i < 10; i++) await person(p, `person${i}`, { group: `${i}` })
    expect(await radius(p, personCondition(exact([0, 1, 2, 3]), 25))).toEqual({
      status: 200,
      body: { users_affected: 4, total_users: 10 },
    })
    expect((await radius(p, personCondition(exact([8]), 25))).body.users_affected).toBe(1)
    expect((await radius(p, personCondition(exact([18]), 25))).body).toEqual({ users_affected: 0, total_users: 10 })
    expect((await radius(p, personCondition([]))).body).toEqual({ users_affected: 10, total_users: 10 })
    const missing = await radius(p, {})
    expect(missing.status).toBe(400)
    expect(missing.body.detail).toBe('Missing condition for which to get blast radius')
  })

  it('test_user_blast_radius_with_single_cohort, _with_dynamic_cohort, _with_integer_property_values', async () => {
    const p = await project()
    for (let i = 0; i < 10; i++) await person(p, `person${i}`, { group: i })
    const cohort1 = await cohortIn(p, 'cohort1', {
      type: 'OR',
      values: [
        {
          type: 'OR',
          values: [
            { key: 'group', value: 'none', type: 'person', operator: 'exact' },
            { key: 'group', value: ['1', '2', '3'], type: 'person', operator: 'exact' },
          ],
        },
      ],
    })
    expect((await radius(p, personCondition([{ key: 'id', type: 'cohort', value: cohort1 }], 50))).body).toEqual({
      users_affected: 3,
      total_users: 10,
    })

    const q = await project()
    await person(q, 'p1', { email: 'user@posthog.com' })
    await person(q, 'p2', { email: 'user@example.com' })
    const dynamic = await cohortIn(q, 'Dynamic cohort', {
      type: 'OR',
      values: [{ key: 'email', type: 'person', value: '@posthog.com', operator: 'icontains' }],
    })
    expect((await radius(q, personCondition([{ key: 'id', type: 'cohort', value: dynamic }]))).body).toEqual({
      users_affected: 1,
      total_users: 2,
    })

    const r = await project()
    await person(r, 'p1', { age: 25, score: 100 })
    await person(r, 'p2', { age: '25', score: '100' })
    await person(r, 'p3', { age: 30, score: 200 })
    expect(
      (await radius(r, personCondition([{ key: 'age', type: 'person', value: [25], operator: 'exact' }]))).body,
    ).toEqual({ users_affected: 2, total_users: 3 })
  })

  it('test_user_blast_radius_with_multiple_static_cohorts: a static and a dynamic cohort, both', async () => {
    const p = await project()
    for (let i = 0; i < 10; i++) await person(p, `person${i}`, { group: `${i}` })
    const staticCohort = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${p.project.id}/cohorts/`,
      headers: p.auth,
      payload: { name: 'static', is_static: true, distinct_ids: ['person0', 'person1', 'person2'] },
    })
    expect(staticCohort.statusCode, staticCohort.body).toBe(201)
    const cohort2 = await cohortIn(p, 'cohort2', {
      type: 'OR',
      values: [
        {
          type: 'OR',
          values: [{ key: 'group', value: ['1', '2', '4', '5', '6'], type: 'person', operator: 'exact' }],
        },
      ],
    })
    const both = [
      { key: 'id', type: 'cohort', value: staticCohort.json().id },
      { key: 'id', type: 'cohort', value: cohort2 },
    ]
    expect((await radius(p, personCondition(both, 50))).body).toEqual({ users_affected: 2, total_users: 10 })
  })

  it('test_user_blast_radius_with_groups, _zero_selected, _all_selected, _multiple_queries, _incorrect_group_type', async () => {
    const p = await project()
    await insertGroupType(t, 'organization', 0, p.project.id)
    await insertGroupType(t, 'company', 1, p.project.id)
    for (let i = 0; i < 10; i++) await group(p, 0, `org:${i}`, { industry: `${i}` })
    for (let i = 0; i < 5; i++) await group(p, 1, `org:${i}`, { industry: `${i}` })
    const industry = (value: unknown[]) => ({
      key: 'industry',
      type: 'group',
      value,
      operator: 'exact',
      group_type_index: 0,
    })
    expect((await radius(p, groupCondition([industry([0, 1, 2, 3])], 0, 25))).body).toEqual({
      users_affected: 4,
      total_users: 10,
    })
    expect((await radius(p, groupCondition([industry([18])], 0, 25))).body).toEqual({
      users_affected: 0,
      total_users: 10,
    })
    expect((await radius(p, groupCondition([], 1, 25))).body).toEqual({ users_affected: 5, total_users: 5 })
    const both = [industry([0, 1, 2, 3, 4]), industry([2, 3, 4, 5, 6])]
    expect((await radius(p, groupCondition(both, 0, 25))).body).toEqual({ users_affected: 3, total_users: 10 })
    const wrong = await radius(p, groupCondition(both, 1, 25))
    expect(wrong.status).toBe(400)
    expect(wrong.body).toMatchObject({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'Invalid group type index for feature flag condition.',
    })
  })

  it('test_user_blast_radius_with_group_key_*: exact, icontains, regex, not_regex, not_icontains, lists, refusals', async () => {
    const p = await project()
    await insertGroupType(t, 'organization', 0, p.project.id)
    for (let i = 0; i < 10; i++) await group(p, 0, `org:${i}`, { industry: `tech-${i}` })
    await group(p, 0, 'special-workspace', { industry: 'special' })
    const key = (value: unknown, operator: string) => ({
      key: '$group_key',
      type: 'group',
      value,
      operator,
      group_type_index: 0,
    })
    expect((await radius(p, groupCondition([key('special-workspace', 'exact')], 0))).body).toEqual({
      users_affected: 1,
      total_users: 11,
    })
    expect((await radius(p, groupCondition([key('org:', 'icontains')], 0))).body).toEqual({
      users_affected: 10,
      total_users: 11,
    })

    const q = await project()
    await insertGroupType(t, 'organization', 0, q.project.id)
    for (const k of ['org-prod-001', 'org-staging-002', 'workspace-test-003']) await group(q, 0, k, {})
    const pattern = '^org-(prod|staging)-\\d+$'
    expect((await radius(q, groupCondition([key(pattern, 'regex')], 0))).body).toEqual({
      users_affected: 2,
      total_users: 3,
    })
    expect((await radius(q, groupCondition([key(pattern, 'not_regex')], 0))).body.users_affected).toBe(1)
    expect((await radius(q, groupCondition([key('ORG', 'not_icontains')], 0))).body.users_affected).toBe(1)
    const gt = await radius(q, groupCondition([key('5', 'gt')], 0))
    expect(gt.status).toBe(400)
    expect(gt.body.detail.toLowerCase()).toContain('not supported')

    const r = await project()
    await insertGroupType(t, 'organization', 0, r.project.id)
    for (const k of ['org-alpha', 'org-beta', 'org-gamma']) await group(r, 0, k, {})
    expect((await radius(r, groupCondition([key(['org-alpha', 'org-beta'], 'exact')], 0))).body).toEqual({
      users_affected: 2,
      total_users: 3,
    })
    expect((await radius(r, groupCondition([key(['org-alpha', 'org-beta'], 'is_not')], 0))).body).toEqual({
      users_affected: 1,
      total_users: 3,
    })
    const list = await radius(r, groupCondition([key(['alpha', 'beta'], 'icontains')], 0))
    expect(list.status).toBe(400)
    expect(list.body.detail.toLowerCase()).toContain('does not support list values')

    const s = await project()
    await insertGroupType(t, 'organization', 0, s.project.id)
    await group(s, 0, 'org:premium', { plan: 'enterprise' })
    await group(s, 0, 'org:free', { plan: 'free' })
    await group(s, 0, 'workspace:premium', { plan: 'enterprise' })
    const plan = { key: 'plan', type: 'group', value: 'enterprise', operator: 'exact', group_type_index: 0 }
    expect((await radius(s, groupCondition([key('org:', 'icontains'), plan], 0))).body).toEqual({
      users_affected: 1,
      total_users: 3,
    })
  })

  it('test_user_blast_radius_with_semver_operators, _semver_caret_0x_versions, _semver_operators_on_groups', async () => {
    const p = await project()
    for (const v of ['0.9.0', '1.0.0', '1.2.0', '1.2.3', '1.2.5', '1.3.0', '2.0.0', '2.1.0']) {
      await person(p, `person_${v}`, { app_version: v })
    }
    const affected = async (q: Project, operator: string, value: string) =>
      (await radius(q, personCondition([{ key: 'app_version', type: 'person', value, operator }]))).body
    expect(await affected(p, 'semver_eq', '1.2.3')).toEqual({ users_affected: 1, total_users: 8 })
    expect((await affected(p, 'semver_gt', '1.2.3')).users_affected).toBe(4)
    expect((await affected(p, 'semver_gte', '1.2.3')).users_affected).toBe(5)
    expect((await affected(p, 'semver_lt', '1.2.3')).users_affected).toBe(3)
    expect((await affected(p, 'semver_lte', '1.2.3')).users_affected).toBe(4)
    expect((await affected(p, 'semver_tilde', '1.2.3')).users_affected).toBe(2)
    expect((await affected(p, 'semver_caret', '1.2.3')).users_affected).toBe(3)
    expect((await affected(p, 'semver_wildcard', '1.2.*')).users_affected).toBe(3)
    expect((await affected(p, 'semver_wildcard', '1.*')).users_affected).toBe(5)

    const q = await project()
    for (const v of ['0.0.1', '0.0.3', '0.0.5', '0.1.0', '0.2.3', '0.2.5', '0.3.0', '1.0.0']) {
      await person(q, `person_${v}`, { app_version: v })
    }
    expect(await affected(q, 'semver_caret', '0.2.3')).toEqual({ users_affected: 2, total_users: 8 })
    expect((await affected(q, 'semver_caret', '0.0.3')).users_affected).toBe(1)

    const r = await project()
    await insertGroupType(t, 'organization', 0, r.project.id)
    const versions = ['1.0.0', '1.5.0', '2.0.0', '2.5.0', '3.0.0']
    for (const [i, v] of versions.entries()) {
      await group(r, 0, `org-${v}`, { min_version: v })
      await person(r, `person_${i}`, { $group_0: `org-${v}` })
    }
    const minVersion = {
      key: 'min_version',
      type: 'group',
      value: '2.0.0',
      operator: 'semver_gte',
      group_type_index: 0,
    }
    expect((await radius(r, groupCondition([minVersion], 0))).body).toEqual({ users_affected: 3, total_users: 5 })
  })
})

describe('create_static_cohort_for_flag (a project of its own)', () => {
  it('test_creating_static_cohort: the persons the flag is enabled for now', async () => {
    const p = await createTenant(t)
    const flags = `/api/projects/${p.project.id}/feature_flags`
    const flag = await t.burrow.app.inject({
      method: 'POST',
      url: `${flags}/`,
      headers: p.auth,
      payload: {
        name: 'some feature',
        key: 'some-feature',
        filters: { groups: [{ properties: [{ key: 'key', value: 'value', type: 'person' }] }], multivariate: null },
      },
    })
    expect(flag.statusCode, flag.body).toBe(201)
    // persons as capture makes them (the cohort's persons list reads them from the events store)
    const captured = await t.burrow.app.inject({
      method: 'POST',
      url: '/batch/',
      payload: {
        api_key: p.project.api_token,
        batch: [
          { event: 'seen', distinct_id: 'person1', properties: { $set: { key: 'value' } } },
          { event: 'seen', distinct_id: 'person2', properties: { $set: { key: 'value2' } } },
          { event: 'seen', distinct_id: 'person3', properties: { $set: { key2: 'value3' } } },
        ],
      },
    })
    expect(captured.statusCode).toBe(200)
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: `${flags}/${flag.json().id}/create_static_cohort_for_flag`,
      headers: p.auth,
      payload: {},
    })
    expect(res.statusCode, res.body).toBe(201)
    const cohort = res.json().cohort
    expect(cohort.name).toMatch(/^Users with feature flag some-feature enabled at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
    expect(cohort.is_static).toBe(true)
    const stored = await t.burrow.app.inject({
      url: `/api/projects/${p.project.id}/cohorts/${cohort.id}/`,
      headers: p.auth,
    })
    expect(stored.json().count).toBe(1)
    const persons = await t.burrow.app.inject({
      url: `/api/projects/${p.project.id}/cohorts/${cohort.id}/persons/`,
      headers: p.auth,
    })
    expect(persons.statusCode, persons.body).toBe(200)
    expect(persons.json().results).toHaveLength(1)
    // a deleted flag has no audience to save
    expect(
      (
        await t.burrow.app.inject({
          method: 'PATCH',
          url: `${flags}/${flag.json().id}/`,
          headers: p.auth,
          payload: { deleted: true },
        })
      ).statusCode,
    ).toBe(200)
    const gone = await t.burrow.app.inject({
      method: 'POST',
      url: `${flags}/${flag.json().id}/create_static_cohort_for_flag`,
      headers: p.auth,
      payload: {},
    })
    expect(gone.statusCode).toBe(404)
  })
})

describe('evaluation tags (TestFeatureFlagEvaluationTags)', () => {
  it('test_evaluation_tags_validation: evaluation tags must be among the tags', async () => {
    const base = { filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }
    const valid = await post({
      ...base,
      name: 'Valid evaluation tags',
      key: 'valid-eval-tags',
      tags: ['app', 'marketing', 'docs'],
      evaluation_tags: ['app', 'docs'],
    })
    expect(valid.statusCode, valid.body).toBe(201)
    expect(valid.json().evaluation_tags).toEqual(['app', 'docs'])
    const invalid = await post({
      ...base,
      name: 'Invalid evaluation tags',
      key: 'invalid-eval-tags',
      tags: ['app', 'docs'],
      evaluation_tags: ['app', 'marketing'],
    })
    expect(invalid.statusCode).toBe(400)
    expect(invalid.json().detail).toContain('Evaluation tags must be a subset of tags')
    expect(invalid.json().detail).toContain('marketing')
    const none = await post({ ...base, key: 'no-tags-eval-tags', tags: [], evaluation_tags: ['app'] })
    expect(none.statusCode).toBe(400)
    expect(none.json().detail).toContain('Evaluation tags must be a subset of tags')
  })

  it('test_update_feature_flag_evaluation_tags, test_remove_all_evaluation_tags', async () => {
    const flag = await created({
      key: 'eval-tags-update',
      filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
    })
    const first = await patch(flag.id, { tags: ['app', 'marketing'], evaluation_tags: ['app'] })
    expect(first.statusCode, first.body).toBe(200)
    expect(first.json().evaluation_tags).toEqual(['app'])
    const second = await patch(flag.id, { tags: ['app', 'marketing', 'docs'], evaluation_tags: ['marketing', 'docs'] })
    expect(second.statusCode, second.body).toBe(200)
    expect([...second.json().evaluation_tags].sort()).toEqual(['docs', 'marketing'])
    const cleared = await patch(flag.id, { tags: ['app', 'marketing'], evaluation_tags: [] })
    expect(cleared.statusCode).toBe(200)
    expect(cleared.json().evaluation_tags).toEqual([])
    expect(cleared.json().tags).toEqual(['app', 'marketing'])
  })
})

describe('fields Burrow has no use for', () => {
  it('test_create_feature_flag_without_usage_dashboard, test_create_feature_flag_in_specific_folder', async () => {
    const plain = await post({ key: 'no-usage-dashboard', _should_create_usage_dashboard: false })
    expect(plain.statusCode, plain.body).toBe(201)
    expect(plain.json()).toMatchObject({ key: 'no-usage-dashboard', name: '' })
    const foldered = await post({
      key: 'my-test-flag-in-folder',
      name: 'Test Flag in Folder',
      filters: { groups: [{ properties: [], rollout_percentage: 50 }] },
      _create_in_folder: 'Special Folder/Flags',
    })
    expect(foldered.statusCode, foldered.body).toBe(201)
    expect(foldered.json().id).toEqual(expect.any(Number))
  })
})
