// The HTTP-observable assertions of PostHog's test_feature_flag.py that Burrow holds, each test named after the one
// it mirrors; expected values worked out by hand from the requests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMember, startTestApp, type TestApp } from '../../helpers/app.js'

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
