import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { hash01 } from '../../src/flags/hash.js'
import { derivePersonProperties, evaluateFlag, evaluateFlagSet, evaluateFlags } from '../../src/flags/matcher.js'
import type { Cohort, EvaluationContext, FlagDefinition } from '../../src/flags/types.js'
import { flagValueOf } from '../../src/flags/types.js'

const vectors = JSON.parse(readFileSync(new URL('../fixtures/flag_vectors.json', import.meta.url), 'utf8')) as Record<
  string,
  any
>

function ctx(overrides: Partial<EvaluationContext> = {}): EvaluationContext {
  return {
    distinctId: 'user-1',
    personProperties: {},
    groups: {},
    groupProperties: {},
    groupTypeMapping: {},
    cohorts: new Map(),
    ...overrides,
  }
}

function flag(key: string, filters: FlagDefinition['filters'], extra: Partial<FlagDefinition> = {}): FlagDefinition {
  return { id: extra.id ?? key.length * 1000 + key.charCodeAt(0), key, active: true, filters, version: 1, ...extra }
}

describe('evaluation cases (PostHog rules contract v1)', () => {
  it.each((vectors.evaluation_cases as any[]).map((c: any): [unknown, any] => [c.id, c]))('%s', (_id, c: any) => {
    const result = evaluateFlagSet(
      c.definitions.flags,
      ctx({
        distinctId: c.context.distinct_id,
        personProperties: c.context.person_properties ?? {},
        groups: c.context.groups ?? {},
        groupProperties: c.context.group_properties ?? {},
        groupTypeMapping: c.definitions.group_type_mapping ?? {},
      }),
    )
    expect(Object.keys(result.flags).sort()).toEqual(Object.keys(c.expected.flags).sort())
    for (const key of c.expected.omitted_flags) expect(result.flags[key]).toBeUndefined()
    for (const [key, want] of Object.entries<any>(c.expected.flags)) {
      const got = result.flags[key]
      expect({
        value: flagValueOf(got),
        enabled: got.enabled,
        variant: got.variant,
        payload: got.payload,
        reason: { code: got.reason.code, condition_index: got.reason.condition_index },
      }).toEqual({
        value: want.value,
        enabled: want.enabled,
        variant: want.variant,
        payload: want.payload,
        reason: want.reason,
      })
    }
    expect(result.errorsWhileComputingFlags).toBe(false)
  })
})

describe('reasons', () => {
  it('words descriptions as PostHog does', () => {
    const f = flag('f', {
      groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }], rollout_percentage: 100 }],
    })
    expect(evaluateFlag(f, ctx({ personProperties: { plan: 'pro' } })).reason.description).toBe(
      'Matched condition set 1',
    )
    expect(evaluateFlag(f, ctx()).reason.description).toBe('No matching condition set')
    expect(evaluateFlag({ ...f, active: false }, ctx()).reason).toEqual({
      code: 'flag_disabled',
      condition_index: null,
      description: 'Feature flag is disabled',
    })
  })

  it('reports no_group_type with no index for a flag without conditions', () => {
    expect(evaluateFlag(flag('empty', { groups: [] }), ctx()).reason).toEqual({
      code: 'no_group_type',
      condition_index: null,
      description: 'No group type',
    })
  })

  it('says group conditions were skipped when a person condition also missed', () => {
    const f = flag('mixed', {
      groups: [
        { properties: [], rollout_percentage: 100, aggregation_group_type_index: 0 },
        { properties: [{ key: 'plan', value: 'pro', type: 'person' }], rollout_percentage: 100 },
      ],
    })
    const result = evaluateFlag(f, ctx({ groupTypeMapping: { 0: 'company' } }))
    expect(result.reason.code).toBe('no_condition_match')
    expect(result.reason.condition_index).toBe(1)
    expect(result.reason.description).toBe(
      'No matching condition set (group conditions were not evaluated because no group type was provided)',
    )
    expect(evaluateFlag(f, ctx({ groupTypeMapping: { 0: 'company' }, groups: { company: 'acme' } })).enabled).toBe(true)
  })
})

describe('group flags', () => {
  const mapping = { 0: 'company', 1: 'project' }
  const companyFlag = flag('company-beta', {
    aggregation_group_type_index: 0,
    groups: [
      {
        properties: [{ key: 'tier', value: 'gold', type: 'group', group_type_index: 0 }],
        rollout_percentage: 100,
      },
    ],
  })

  it('matches on the group properties of the aggregating group', () => {
    const base = { groupTypeMapping: mapping, groups: { company: 'acme' } }
    expect(evaluateFlag(companyFlag, ctx({ ...base, groupProperties: { company: { tier: 'gold' } } })).enabled).toBe(
      true,
    )
    expect(evaluateFlag(companyFlag, ctx({ ...base, groupProperties: { company: { tier: 'silver' } } })).enabled).toBe(
      false,
    )
  })

  it('gives every member of a group the same answer, whoever asks', () => {
    const rolled = flag('company-rollout', { aggregation_group_type_index: 0, groups: [{ rollout_percentage: 50 }] })
    const answers = new Set(
      ['a', 'b', 'c', 'd', 'e'].map(
        (distinctId) =>
          evaluateFlag(rolled, ctx({ distinctId, groupTypeMapping: mapping, groups: { company: 'acme' } })).enabled,
      ),
    )
    expect(answers.size).toBe(1)
    expect([...answers][0]).toBe(hash01('company-rollout.', 'acme') <= 0.5)
  })

  it('lets a condition aggregate on its own group type, or explicitly on persons', () => {
    const perCondition = flag('per-condition', {
      aggregation_group_type_index: 0,
      groups: [
        { properties: [], rollout_percentage: 100, aggregation_group_type_index: 1 },
        { properties: [{ key: 'plan', value: 'pro', type: 'person' }], aggregation_group_type_index: null },
      ],
    })
    const onProject = evaluateFlag(perCondition, ctx({ groupTypeMapping: mapping, groups: { project: 'p1' } }))
    expect(onProject.reason).toMatchObject({ code: 'condition_match', condition_index: 0 })
    const onPerson = evaluateFlag(perCondition, ctx({ groupTypeMapping: mapping, personProperties: { plan: 'pro' } }))
    expect(onPerson.reason).toMatchObject({ code: 'condition_match', condition_index: 1 })
  })

  it('exposes the group key as $group_key', () => {
    const byKey = flag('by-key', {
      aggregation_group_type_index: 0,
      groups: [{ properties: [{ key: '$group_key', value: 'acme', type: 'group', group_type_index: 0 }] }],
    })
    expect(evaluateFlag(byKey, ctx({ groupTypeMapping: mapping, groups: { company: 'acme' } })).enabled).toBe(true)
  })
})

describe('cohorts', () => {
  const cohorts = new Map<number, Cohort>([
    [
      1,
      {
        id: 1,
        filters: {
          properties: {
            type: 'OR',
            values: [
              { type: 'AND', values: [{ key: 'email', value: '@acme.com', operator: 'icontains', type: 'person' }] },
              { type: 'AND', values: [{ key: 'plan', value: 'enterprise', type: 'person' }] },
            ],
          },
        },
      },
    ],
    [
      2,
      {
        id: 2,
        filters: {
          properties: {
            type: 'AND',
            values: [
              {
                type: 'AND',
                values: [
                  { key: 'id', value: 1, type: 'cohort' },
                  { key: 'country', value: 'FR', type: 'person', negation: true },
                ],
              },
            ],
          },
        },
      },
    ],
    [3, { id: 3, is_static: true, filters: { properties: { type: 'AND', values: [] } } }],
    [
      4,
      {
        id: 4,
        filters: {
          properties: {
            type: 'AND',
            values: [{ type: 'AND', values: [{ key: 'id', value: 1, type: 'cohort', negation: true }] }],
          },
        },
      },
    ],
    [5, { id: 5, filters: { properties: { type: 'AND', values: [{ key: 'id', value: 99, type: 'cohort' }] } } }],
    [6, { id: 6, filters: { properties: { type: 'AND', values: [{ key: 'id', value: 7, type: 'cohort' }] } } }],
    [7, { id: 7, filters: { properties: { type: 'AND', values: [{ key: 'id', value: 6, type: 'cohort' }] } } }],
    [
      8,
      {
        id: 8,
        filters: {
          properties: { type: 'AND', values: [{ key: '$pageview', value: 'performed_event', type: 'behavioral' }] },
        },
      },
    ],
  ])
  const inCohort = (id: number, operator = 'in') =>
    flag(`cohort-${id}-${operator}`, { groups: [{ properties: [{ key: 'id', value: id, type: 'cohort', operator }] }] })
  const run = (f: FlagDefinition, personProperties: Record<string, unknown>, staticCohortIds?: Set<number>) =>
    evaluateFlagSet([f], ctx({ cohorts, personProperties, staticCohortIds }))

  it('evaluates OR groups of AND groups against person properties', () => {
    expect(run(inCohort(1), { email: 'jo@ACME.com' }).flags['cohort-1-in'].enabled).toBe(true)
    expect(run(inCohort(1), { plan: 'enterprise' }).flags['cohort-1-in'].enabled).toBe(true)
    expect(run(inCohort(1), { plan: 'free' }).flags['cohort-1-in'].enabled).toBe(false)
    expect(run(inCohort(1, 'not_in'), { plan: 'free' }).flags['cohort-1-not_in'].enabled).toBe(true)
  })

  it('evaluates nested cohorts first and honours negation', () => {
    expect(run(inCohort(2), { plan: 'enterprise', country: 'DE' }).flags['cohort-2-in'].enabled).toBe(true)
    expect(run(inCohort(2), { plan: 'enterprise', country: 'FR' }).flags['cohort-2-in'].enabled).toBe(false)
    expect(run(inCohort(2), { plan: 'free', country: 'DE' }).flags['cohort-2-in'].enabled).toBe(false)
    expect(run(inCohort(4), { plan: 'free' }).flags['cohort-4-in'].enabled).toBe(true)
    expect(run(inCohort(4), { plan: 'enterprise' }).flags['cohort-4-in'].enabled).toBe(false)
  })

  it('takes static cohort membership from the caller', () => {
    expect(run(inCohort(3), {}).flags['cohort-3-in'].enabled).toBe(false)
    expect(run(inCohort(3), {}, new Set([3])).flags['cohort-3-in'].enabled).toBe(true)
  })

  it('treats behavioural cohorts as non-members unless the caller resolved them', () => {
    expect(run(inCohort(8), {}).flags['cohort-8-in'].enabled).toBe(false)
    expect(run(inCohort(8), {}, new Set([8])).flags['cohort-8-in'].enabled).toBe(true)
  })

  it('fails the flag on a missing cohort or a cohort cycle, and reports the error', () => {
    const missing = run(inCohort(42), {})
    expect(missing.errorsWhileComputingFlags).toBe(true)
    expect(missing.flags['cohort-42-in']).toMatchObject({
      enabled: false,
      failed: true,
      reason: {
        code: 'dependency_not_found_cohort',
        condition_index: null,
        description: 'Cohort dependency not found',
      },
    })
    expect(run(inCohort(5), {}).flags['cohort-5-in'].reason.code).toBe('dependency_not_found_cohort')
    expect(run(inCohort(6), {}).flags['cohort-6-in'].reason.code).toBe('dependency_cycle_cohort')
  })

  it('evaluates cohort filters after the other filters of a condition', () => {
    const f = flag('cheap-first', {
      groups: [
        {
          properties: [
            { key: 'id', value: 42, type: 'cohort' },
            { key: 'plan', value: 'pro', type: 'person' },
          ],
        },
      ],
    })
    const result = evaluateFlagSet([f], ctx({ cohorts, personProperties: { plan: 'free' } }))
    expect(result.flags['cheap-first'].reason.code).toBe('no_condition_match')
    expect(result.errorsWhileComputingFlags).toBe(false)
  })
})

describe('early access and holdouts', () => {
  it('answers from the enrollment property when feature_enrollment is on', () => {
    const f = flag('beta', { feature_enrollment: true, groups: [{ rollout_percentage: 0 }], payloads: { true: '"p"' } })
    const enrolled = evaluateFlag(f, ctx({ personProperties: { '$feature_enrollment/beta': 'true' } }))
    expect(enrolled).toMatchObject({ enabled: true, reason: { code: 'super_condition_value', condition_index: 0 } })
    expect(enrolled.payload).toBe('"p"')
    const optedOut = evaluateFlag(f, ctx({ personProperties: { '$feature_enrollment/beta': false } }))
    expect(optedOut).toMatchObject({ enabled: false, reason: { code: 'super_condition_value' } })
    expect(evaluateFlag(f, ctx()).reason.code).not.toBe('super_condition_value')
  })

  it('evaluates legacy super_groups only when the person has one of their properties', () => {
    const f = flag('legacy-beta', {
      super_groups: [{ properties: [{ key: '$feature_enrollment/legacy-beta', value: ['true'], type: 'person' }] }],
      groups: [{ rollout_percentage: 100 }],
    })
    expect(evaluateFlag(f, ctx({ personProperties: { '$feature_enrollment/legacy-beta': false } }))).toMatchObject({
      enabled: false,
      reason: { code: 'super_condition_value', condition_index: 0, description: 'Super condition value' },
    })
    expect(evaluateFlag(f, ctx()).reason.code).toBe('condition_match')
  })

  it('puts legacy holdout_groups members in the holdout variant before any condition', () => {
    const f = flag('exp', {
      holdout_groups: [{ properties: [], rollout_percentage: 100, variant: 'holdout-3' }],
      groups: [{ rollout_percentage: 100 }],
      payloads: { 'holdout-3': '{"h":1}' },
    })
    expect(evaluateFlag(f, ctx())).toMatchObject({
      enabled: true,
      variant: 'holdout-3',
      payload: '{"h":1}',
      reason: { code: 'holdout_condition_value', condition_index: null, description: 'Holdout condition value' },
    })
    const outside = {
      ...f,
      filters: { ...f.filters, holdout_groups: [{ rollout_percentage: 0, variant: 'holdout-3' }] },
    }
    expect(evaluateFlag(outside, ctx({ distinctId: 'someone' })).reason.code).toBe('condition_match')
  })
})

describe('bucketing', () => {
  const rolled = (extra: Partial<FlagDefinition> = {}) =>
    flag('continuity', { groups: [{ rollout_percentage: 50 }] }, extra)
  const inRollout = (identifier: string) => hash01('continuity.', identifier) <= 0.5
  const ids = Array.from({ length: 40 }, (_, i) => `id-${i}`)
  const anon = ids.find(inRollout)!
  const known = ids.find((id) => !inRollout(id))!

  it('keeps the anonymous bucket after identify for continuity flags', () => {
    const f = rolled({ ensure_experience_continuity: true })
    expect(evaluateFlag(f, ctx({ distinctId: known })).enabled).toBe(false)
    expect(evaluateFlag(f, ctx({ distinctId: known, anonDistinctId: anon })).enabled).toBe(true)
    expect(evaluateFlag(f, ctx({ distinctId: known, hashKeyOverrides: { continuity: anon } })).enabled).toBe(true)
    expect(evaluateFlag(rolled(), ctx({ distinctId: known, anonDistinctId: anon })).enabled).toBe(false)
  })

  it('prefers the stored hash key over the request anon id', () => {
    const f = rolled({ ensure_experience_continuity: true })
    const result = evaluateFlag(
      f,
      ctx({ distinctId: anon, anonDistinctId: anon, hashKeyOverrides: { continuity: known } }),
    )
    expect(result.enabled).toBe(false)
  })

  it('fails continuity flags when the overrides could not be read', () => {
    const f = rolled({ ensure_experience_continuity: true })
    const result = evaluateFlagSet([f, rolled({ key: 'plain', id: 9 })], ctx({ hashKeyOverrideError: true }))
    expect(result.errorsWhileComputingFlags).toBe(true)
    expect(result.flags.continuity).toMatchObject({ failed: true, reason: { code: 'hash_key_override_error' } })
    expect(result.flags.plain.failed).toBe(false)
  })

  it('buckets by $device_id when asked, and skips person conditions without one', () => {
    const f = rolled({ bucketing_identifier: 'device_id' })
    expect(evaluateFlag(f, ctx({ distinctId: known, deviceId: anon })).enabled).toBe(true)
    expect(evaluateFlag(f, ctx({ distinctId: anon }))).toMatchObject({
      enabled: false,
      reason: { code: 'out_of_rollout_bound', condition_index: 0 },
    })
  })
})

describe('flag dependencies', () => {
  const base = flag('base', { groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }] }] }, { id: 1 })
  const dependent = flag(
    'dependent',
    { groups: [{ properties: [{ key: '1', type: 'flag', operator: 'flag_evaluates_to', value: true }] }] },
    { id: 2 },
  )

  it('resolves a dependency by flag id (server shape) regardless of list order', () => {
    const result = evaluateFlags([dependent, base], ctx({ personProperties: { plan: 'pro' } }))
    expect(result.dependent.enabled).toBe(true)
  })

  it('evaluates dependencies of the requested flag_keys', () => {
    const result = evaluateFlagSet([base, dependent], ctx({ personProperties: { plan: 'pro' } }), {
      flagKeys: ['dependent'],
    })
    expect(result.flags.dependent.enabled).toBe(true)
  })

  it('sees flags excluded by the request filters as false', () => {
    const onFalse = flag(
      'on-false',
      { groups: [{ properties: [{ key: 'base', type: 'flag', operator: 'flag_evaluates_to', value: false }] }] },
      { id: 3 },
    )
    const result = evaluateFlagSet([base, onFalse], ctx({ personProperties: { plan: 'pro' } }), {
      excludedKeys: new Set(['base']),
    })
    expect(result.flags.base).toBeUndefined()
    expect(result.flags['on-false'].enabled).toBe(true)
  })

  it('marks a dependency cycle as missing_dependency and reports an error', () => {
    const a = flag(
      'a',
      { groups: [{ properties: [{ key: 'b', type: 'flag', operator: 'flag_evaluates_to', value: true }] }] },
      { id: 10 },
    )
    const b = flag(
      'b',
      { groups: [{ properties: [{ key: 'a', type: 'flag', operator: 'flag_evaluates_to', value: true }] }] },
      { id: 11 },
    )
    const result = evaluateFlagSet([a, b], ctx())
    expect(result.errorsWhileComputingFlags).toBe(true)
    expect(result.flags.a.reason).toEqual({
      code: 'missing_dependency',
      condition_index: null,
      description: 'Flag cannot be evaluated due to missing dependency',
    })
    expect(result.flags.b.reason.code).toBe('missing_dependency')
  })
})

describe('person properties', () => {
  it('adds distinct_id and fills missing $initial_ properties without touching the input', () => {
    const input = { $browser: 'Chrome', $initial_os: 'Mac', $os: 'Linux' }
    const derived = derivePersonProperties('u1', input)
    expect(derived).toMatchObject({ distinct_id: 'u1', $initial_browser: 'Chrome', $initial_os: 'Mac' })
    expect(input).not.toHaveProperty('distinct_id')
    const f = flag('by-id', { groups: [{ properties: [{ key: 'distinct_id', value: 'u1', type: 'person' }] }] })
    expect(evaluateFlag(f, ctx({ distinctId: 'u1' })).enabled).toBe(true)
  })
})
