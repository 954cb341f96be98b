import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCohort, createFlag, insertPerson, postFlags, valuesOf } from '../flags/fixtures.js'
import { createKey, startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let base: string

beforeAll(async () => {
  t = await startTestApp()
  base = `/api/projects/${t.creds.project_id}/cohorts`
}, 180_000)
afterAll(() => t?.close())

const post = (payload: Record<string, unknown>, headers = t.auth) =>
  t.burrow.app.inject({ method: 'POST', url: `${base}/`, headers, payload })
const patch = (id: number, payload: Record<string, unknown>, suffix = '') =>
  t.burrow.app.inject({ method: 'PATCH', url: `${base}/${id}/${suffix}`, headers: t.auth, payload })
const cohortFlag = (key: string, id: number, operator = 'in') =>
  createFlag(t, {
    key,
    filters: {
      groups: [{ properties: [{ key: 'id', type: 'cohort', value: id, operator }], rollout_percentage: 100 }],
    },
  })

describe('dynamic cohorts', () => {
  it('targets flags with nested AND/OR groups and negation', async () => {
    // (plan = pro OR seats > 10) AND NOT (country = FR)
    const cohort = await createCohort(t, {
      name: 'Big customers outside France',
      filters: {
        properties: {
          type: 'AND',
          values: [
            {
              type: 'OR',
              values: [
                { key: 'plan', value: 'pro', type: 'person', operator: 'exact' },
                { key: 'seats', value: 10, operator: 'gt', type: 'person' },
              ],
            },
            {
              type: 'AND',
              values: [{ key: 'country', value: 'FR', type: 'person', operator: 'exact', negation: true }],
            },
          ],
        },
      },
    })
    expect(cohort.count).toBeNull()
    await cohortFlag('big-customers', cohort.id)
    await cohortFlag('small-customers', cohort.id, 'not_in')
    const cases: [Record<string, unknown>, boolean][] = [
      [{ plan: 'pro', country: 'DE' }, true],
      [{ plan: 'free', seats: 50, country: 'US' }, true],
      [{ plan: 'pro', country: 'FR' }, false],
      [{ plan: 'free', seats: 5 }, false],
    ]
    for (const [properties, expected] of cases) {
      const values = valuesOf((await postFlags(t, { distinct_id: 'd', person_properties: properties })).json())
      expect(values['big-customers'], JSON.stringify(properties)).toBe(expected)
      expect(values['small-customers']).toBe(!expected)
    }
  })

  it('accepts the legacy groups form and nested cohort references', async () => {
    const inner = await createCohort(t, {
      name: 'Inner',
      groups: [{ properties: [{ key: 'tier', value: 'gold', type: 'person' }] }],
    })
    const outer = await createCohort(t, {
      name: 'Outer',
      filters: { properties: { type: 'OR', values: [{ key: 'id', type: 'cohort', value: inner.id }] } },
    })
    await cohortFlag('nested-cohort', outer.id)
    const gold = await postFlags(t, { distinct_id: 'g', person_properties: { tier: 'gold' } })
    expect(valuesOf(gold.json())['nested-cohort']).toBe(true)
    const silver = await postFlags(t, { distinct_id: 's', person_properties: { tier: 'silver' } })
    expect(valuesOf(silver.json())['nested-cohort']).toBe(false)
  })

  it.each([
    ['no filters', { name: 'x' }],
    [
      'a behavioural leaf',
      {
        filters: {
          properties: { type: 'AND', values: [{ key: '$pageview', type: 'behavioral', value: 'performed_event' }] },
        },
      },
    ],
    [
      'an unknown operator',
      { filters: { properties: { type: 'AND', values: [{ key: 'a', value: 1, operator: 'almost' }] } } },
    ],
    ['a bad group type', { filters: { properties: { type: 'XOR', values: [] } } }],
    [
      'a missing cohort reference',
      { filters: { properties: { type: 'AND', values: [{ key: 'id', type: 'cohort', value: 4242 }] } } },
    ],
  ])('rejects %s', async (_name, body) => {
    const res = await post(body)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', attr: 'filters' })
  })
})

describe('static cohorts', () => {
  it('takes distinct ids as a JSON list or CSV text and matches any distinct id of the person', async () => {
    const cohort = await createCohort(t, { name: 'Beta testers', is_static: true, distinct_ids: ['beta-1', 'beta-2'] })
    expect(cohort.count).toBe(2)
    const updated = await patch(cohort.id, { csv: 'distinct_id,plan\nbeta-3,pro\n"beta-4",pro\nbeta-1,pro\n' })
    expect(updated.json()).toMatchObject({ count: 4, is_static: true })
    await cohortFlag('beta', cohort.id)
    await insertPerson(t, ['beta-3', 'beta-3-other-device'], {})
    await insertPerson(t, ['outsider'], {})
    expect(valuesOf((await postFlags(t, { distinct_id: 'beta-3-other-device' })).json()).beta).toBe(true)
    expect(valuesOf((await postFlags(t, { distinct_id: 'outsider' })).json()).beta).toBe(false)
    // PostHog: a distinct id with no stored person is not a member of a static cohort.
    expect(valuesOf((await postFlags(t, { distinct_id: 'beta-1' })).json()).beta).toBe(false)
  })

  it('adds persons by id with add_persons_to_static_cohort', async () => {
    const cohort = await createCohort(t, { name: 'By person', is_static: true })
    const personId = await insertPerson(t, ['p-1', 'p-1b'], {})
    const res = await patch(cohort.id, { person_ids: [personId] }, 'add_persons_to_static_cohort/')
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().count).toBe(2)
  })

  it('refuses distinct ids on a dynamic cohort', async () => {
    const res = await post({ name: 'x', distinct_ids: ['a'], filters: { properties: { type: 'AND', values: [] } } })
    expect(res.statusCode).toBe(400)
    expect(res.json().attr).toBe('distinct_ids')
  })
})

describe('lifecycle and access', () => {
  it('soft deletes with PATCH once no active flag uses it; a flag turned back on fails visibly; DELETE answers 405', async () => {
    const cohort = await createCohort(t, {
      name: 'Doomed',
      filters: { properties: { type: 'AND', values: [{ key: 'x', value: 1, type: 'person', operator: 'exact' }] } },
    })
    const flag = await cohortFlag('uses-doomed', cohort.id)
    expect(
      (await t.burrow.app.inject({ method: 'DELETE', url: `${base}/${cohort.id}/`, headers: t.auth })).statusCode,
    ).toBe(405)
    const flagUrl = `/api/projects/${t.creds.project_id}/feature_flags/${flag.id}/`
    const off = await t.burrow.app.inject({
      method: 'PATCH',
      url: flagUrl,
      headers: t.auth,
      payload: { active: false },
    })
    expect(off.statusCode).toBe(200)
    const deleted = await patch(cohort.id, { deleted: true })
    expect(deleted.json().deleted).toBe(true)
    const list = (await t.burrow.app.inject({ url: `${base}/`, headers: t.auth })).json()
    expect(list.results.map((c: { id: number }) => c.id)).not.toContain(cohort.id)
    await t.burrow.app.inject({ method: 'PATCH', url: flagUrl, headers: t.auth, payload: { active: true } })
    const json = (await postFlags(t, { distinct_id: 'z', person_properties: { x: 1 } })).json()
    expect(json.errorsWhileComputingFlags).toBe(true)
    expect(json.flags['uses-doomed']).toMatchObject({ enabled: false, failed: true })
  })

  it('needs cohort:read and cohort:write', async () => {
    const reader = await createKey(t, ['cohort:read'])
    expect((await t.burrow.app.inject({ url: `${base}/`, headers: reader })).statusCode).toBe(200)
    expect((await post({ name: 'r', is_static: true }, reader)).statusCode).toBe(403)
    expect((await t.burrow.app.inject({ url: `${base}/` })).statusCode).toBe(401)
  })
})
