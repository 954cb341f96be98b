// posthog-node from npm against the app on a real port: remote evaluation through /flags and local evaluation
// from /flags/definitions must agree on the same flags and persons.
import { PostHog } from 'posthog-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKey, createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { createCohort, createFlag, insertPerson } from './fixtures.js'

let t: TestApp
let host: string
const clients: PostHog[] = []
const DISTINCT_IDS = Array.from({ length: 40 }, (_, i) => `distinct_id_${i}`)
const personProperties = (i: number) => ({ plan: i % 3 === 0 ? 'pro' : 'free', age: 20 + i })

function client(options: Record<string, unknown> = {}) {
  const ph = new PostHog(t.creds.project_api_key, { host, flushAt: 1000, flushInterval: 0, ...options })
  clients.push(ph)
  return ph
}

beforeAll(async () => {
  t = await startTestApp()
  host = await t.burrow.app.listen({ port: 0, host: '127.0.0.1' })
  await createFlag(t, { key: 'simple-flag', rollout_percentage: 45 })
  await createFlag(t, {
    key: 'multivariate-flag',
    filters: {
      groups: [{ properties: [], rollout_percentage: 55 }],
      multivariate: {
        variants: [
          { key: 'first-variant', rollout_percentage: 50 },
          { key: 'second-variant', rollout_percentage: 20 },
          { key: 'third-variant', rollout_percentage: 20 },
          { key: 'fourth-variant', rollout_percentage: 5 },
          { key: 'fifth-variant', rollout_percentage: 5 },
        ],
      },
      payloads: { 'first-variant': '{"discount":10}', 'second-variant': '"plain"' },
    },
  })
  await createFlag(t, {
    key: 'pro-plan',
    filters: {
      groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }], rollout_percentage: 100 }],
      payloads: { true: '{"tier":"pro"}' },
    },
  })
  const adults = await createCohort(t, {
    name: 'Over 40',
    filters: { properties: { type: 'OR', values: [{ key: 'age', value: 40, operator: 'gte', type: 'person' }] } },
  })
  await createFlag(t, {
    key: 'over-forty',
    filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: adults.id }], rollout_percentage: 100 }] },
  })
  await createFlag(t, { key: 'browser-only', rollout_percentage: 100, evaluation_runtime: 'client' })
  for (const [i, id] of DISTINCT_IDS.entries()) await insertPerson(t, [id], personProperties(i))
}, 60_000)

afterAll(async () => {
  await Promise.all(clients.map((c) => c.shutdown()))
  await t?.close()
})

describe('posthog-node remote evaluation', () => {
  it('reads flags, variants and payloads through /flags with stored person properties', async () => {
    const ph = client()
    const options = { sendFeatureFlagEvents: false }
    expect(await ph.isFeatureEnabled('pro-plan', 'distinct_id_0', options)).toBe(true)
    expect(await ph.isFeatureEnabled('pro-plan', 'distinct_id_1', options)).toBe(false)
    expect(await ph.getFeatureFlagPayload('pro-plan', 'distinct_id_0')).toEqual({ tier: 'pro' })
    expect(await ph.isFeatureEnabled('over-forty', 'distinct_id_25', options)).toBe(true)
    expect(await ph.isFeatureEnabled('over-forty', 'distinct_id_5', options)).toBe(false)

    const all = await ph.getAllFlags('distinct_id_3')
    expect(all['pro-plan']).toBe(true)
    expect(all['browser-only']).toBeUndefined()
    for (const id of DISTINCT_IDS.slice(0, 10)) {
      const variant = await ph.getFeatureFlag('multivariate-flag', id, options)
      const payload = await ph.getFeatureFlagPayload('multivariate-flag', id)
      if (variant === 'first-variant') expect(payload).toEqual({ discount: 10 })
      if (variant === 'second-variant') expect(payload).toBe('plain')
      if (variant === false) expect(payload ?? undefined).toBeUndefined()
    }
  })
})

describe('posthog-node local evaluation', () => {
  it('agrees with remote evaluation for every flag and person', async () => {
    const remote = client()
    const local = client({ personalApiKey: t.creds.personal_api_key, featureFlagsPollingInterval: 60_000 })
    expect(await local.waitForLocalEvaluationReady(10_000)).toBe(true)
    let variantsSeen = 0
    for (const [i, id] of DISTINCT_IDS.entries()) {
      const fromServer = await remote.getAllFlags(id)
      const fromDefinitions = await local.getAllFlags(id, {
        personProperties: personProperties(i),
        onlyEvaluateLocally: true,
      })
      expect(fromDefinitions, id).toEqual(fromServer)
      if (typeof fromServer['multivariate-flag'] === 'string') variantsSeen++
    }
    expect(variantsSeen).toBeGreaterThan(5)
    // The cross-SDK consistency list: distinct_id_0..4 in the 45% simple flag.
    const simple = await Promise.all(
      DISTINCT_IDS.slice(0, 5).map((id) => local.getFeatureFlag('simple-flag', id, { onlyEvaluateLocally: true })),
    )
    expect(simple).toEqual([false, true, true, false, true])
  })
})

describe('/flags/definitions', () => {
  it('answers with an ETag and 304 when unchanged', async () => {
    const url = `/flags/definitions?token=${t.creds.project_api_key}&send_cohorts`
    const first = await t.burrow.app.inject({ url, headers: t.auth })
    expect(first.statusCode).toBe(200)
    const body = first.json()
    expect(Object.keys(body)).toEqual(['flags', 'group_type_mapping', 'cohorts'])
    expect(Object.keys(body.cohorts)).toHaveLength(1)
    const etag = first.headers.etag as string
    const again = await t.burrow.app.inject({ url, headers: { ...t.auth, 'if-none-match': etag } })
    expect(again.statusCode).toBe(304)
    await createFlag(t, { key: 'changes-etag' })
    const changed = await t.burrow.app.inject({ url, headers: { ...t.auth, 'if-none-match': etag } })
    expect(changed.statusCode).toBe(200)
    expect(changed.headers.etag).not.toBe(etag)
    const legacy = await t.burrow.app.inject({
      url: `/api/feature_flag/local_evaluation/?token=${t.creds.project_api_key}`,
      headers: t.auth,
    })
    expect(legacy.json().flags.map((f: { key: string }) => f.key)).toContain('changes-etag')
  })

  it('needs a key with feature_flag:read that can reach the token project', async () => {
    const url = `/flags/definitions?token=${t.creds.project_api_key}`
    expect((await t.burrow.app.inject({ url })).statusCode).toBe(401)
    expect((await t.burrow.app.inject({ url, headers: await createKey(t, ['cohort:read']) })).statusCode).toBe(403)
    expect((await t.burrow.app.inject({ url, headers: await createKey(t, ['feature_flag:read']) })).statusCode).toBe(
      200,
    )
    const tenant = await createTenant(t)
    const foreign = await t.burrow.app.inject({
      url: `/flags/definitions?token=${tenant.project.api_token}`,
      headers: t.auth,
    })
    expect(foreign.statusCode).toBe(403)
  })

  it('serves a key scoped to the token project, and refuses it another project', async () => {
    const scoped = await createKey(t, ['feature_flag:read'], [t.creds.project_id])
    const own = await t.burrow.app.inject({
      url: `/flags/definitions?token=${t.creds.project_api_key}`,
      headers: scoped,
    })
    expect(own.statusCode).toBe(200)
    const other = await t.burrow.app.inject({
      method: 'POST',
      url: '/api/projects/',
      headers: t.auth,
      payload: { name: 'Another project of the same organization' },
    })
    const refused = await t.burrow.app.inject({
      url: `/flags/definitions?token=${other.json().api_token}`,
      headers: scoped,
    })
    expect(refused.statusCode).toBe(403)
  })
})
