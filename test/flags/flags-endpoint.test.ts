import { gzipSync } from 'node:zlib'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { flagHash, pickVariant } from '../../src/flags/hash.js'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { createFlag, insertGroup, insertGroupType, insertPerson, postFlags, valuesOf } from './fixtures.js'

let t: TestApp
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

beforeAll(async () => {
  t = await startTestApp()
  await createFlag(t, {
    key: 'pro-users',
    filters: {
      groups: [
        { properties: [{ key: 'plan', value: 'pro', type: 'person', operator: 'exact' }], rollout_percentage: 100 },
      ],
      payloads: { true: '{"color":"blue"}' },
    },
  })
  await createFlag(t, { key: 'everyone', rollout_percentage: 100 })
  await createFlag(t, { key: 'switched-off', rollout_percentage: 100, active: false })
  // evaluation tags are among the flag's tags, as PostHog requires
  await createFlag(t, { key: 'staging-only', rollout_percentage: 100, tags: ['staging'], evaluation_tags: ['staging'] })
  await createFlag(t, { key: 'server-only', rollout_percentage: 100, evaluation_runtime: 'server' })
  await createFlag(t, { key: 'client-only', rollout_percentage: 100, evaluation_runtime: 'client' })
  await createFlag(t, {
    key: 'in-us',
    filters: {
      groups: [{ properties: [{ key: '$geoip_country_code', value: 'US', type: 'person' }], rollout_percentage: 100 }],
    },
  })
  await insertPerson(t, ['stored-pro', 'stored-pro-alias'], { plan: 'pro', email: 'a@example.com' })
}, 60_000)
afterAll(() => t?.close())

describe('POST /flags authentication and bodies', () => {
  it('answers 401 in PostHog shape without a project key or with an unknown one', async () => {
    const missing = await t.burrow.app.inject({ method: 'POST', url: '/flags/?v=2', payload: { distinct_id: 'x' } })
    expect(missing.statusCode).toBe(401)
    expect(missing.json()).toMatchObject({ type: 'authentication_error', code: 'missing_api_key', attr: null })
    const unknown = await postFlags(t, { token: 'phc_nope', distinct_id: 'x' })
    expect(unknown.statusCode).toBe(401)
    expect(unknown.json()).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' })
  })

  it('accepts the key as api_key as well as token', async () => {
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: '/flags?v=2',
      payload: { api_key: t.creds.project_api_key, distinct_id: 'someone' },
    })
    expect(res.statusCode).toBe(200)
    expect(res.json().flags.everyone.enabled).toBe(true)
  })

  it.each([
    ['invalid JSON', '{"token": ', 'application/json'],
    ['a JSON array', '[1,2]', 'application/json'],
    ['garbage', '%%%not base64%%%', 'text/plain'],
    ['an empty body', '', 'application/json'],
  ])('rejects %s with a 400 validation error, never a 500', async (_name, payload, contentType) => {
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: '/flags/?v=2',
      headers: { 'content-type': contentType },
      payload,
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', code: 'invalid_payload' })
  })

  it('requires a distinct_id', async () => {
    const res = await postFlags(t, { person_properties: {} })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', attr: 'distinct_id' })
  })

  it('decodes gzip (announced or by magic bytes) and base64 form bodies like JSON', async () => {
    const body = JSON.stringify({ token: t.creds.project_api_key, distinct_id: 'stored-pro' })
    const announced = await t.burrow.app.inject({
      method: 'POST',
      url: '/flags/?v=2',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: gzipSync(body),
    })
    const unannounced = await t.burrow.app.inject({
      method: 'POST',
      url: '/flags/?v=2',
      headers: { 'content-type': 'text/plain' },
      payload: gzipSync(body),
    })
    const form = await t.burrow.app.inject({
      method: 'POST',
      url: '/flags/?v=2&compression=base64',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `data=${encodeURIComponent(Buffer.from(body).toString('base64'))}`,
    })
    for (const res of [announced, unannounced, form]) {
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json().flags['pro-users'].enabled).toBe(true)
    }
  })

  it('refuses a body that does not decompress in one sentence, with one full stop', async () => {
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: '/flags/?v=2&compression=gzip',
      headers: { 'content-type': 'application/json' },
      payload: 'this is not gzip',
    })
    expect(res.statusCode).toBe(400)
    const body = res.json()
    expect(body).toMatchObject({ type: 'validation_error', code: 'invalid_payload', attr: null })
    expect(body.detail).toMatch(/^Malformed request data: Failed to decompress data\. .*[^.]\.$/)
    expect(body.detail).not.toContain('..')
  })
})

describe('POST /flags evaluation', () => {
  it('answers the v2 shape with reasons, metadata and payloads, leaving inactive flags out', async () => {
    const res = await postFlags(t, { distinct_id: 'stored-pro' })
    expect(res.statusCode).toBe(200)
    const json = res.json()
    expect(json.requestId).toMatch(UUID)
    expect(json.errorsWhileComputingFlags).toBe(false)
    expect(json.flags['pro-users']).toMatchObject({
      key: 'pro-users',
      enabled: true,
      variant: null,
      reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
      metadata: { version: 1, payload: '{"color":"blue"}' },
    })
    expect(json.flags['switched-off']).toBeUndefined()
    expect(json.config).toBeUndefined()
  })

  it('uses stored person properties (via any distinct id), overridden by the request', async () => {
    expect(valuesOf((await postFlags(t, { distinct_id: 'stored-pro-alias' })).json())['pro-users']).toBe(true)
    const overridden = await postFlags(t, { distinct_id: 'stored-pro', person_properties: { plan: 'free' } })
    expect(overridden.json().flags['pro-users']).toMatchObject({
      enabled: false,
      reason: { code: 'no_condition_match' },
    })
    const unknown = await postFlags(t, { distinct_id: 'nobody', person_properties: { plan: 'pro' } })
    expect(unknown.json().flags['pro-users'].enabled).toBe(true)
  })

  it('evaluates only flag_keys_to_evaluate when given', async () => {
    const res = await postFlags(t, { distinct_id: 'stored-pro', flag_keys_to_evaluate: ['pro-users'] })
    expect(Object.keys(res.json().flags)).toEqual(['pro-users'])
  })

  it('filters by evaluation environment: tagged flags need a matching tag, untagged ones always pass', async () => {
    const none = valuesOf((await postFlags(t, { distinct_id: 'a' })).json())
    const production = valuesOf(
      (await postFlags(t, { distinct_id: 'a', evaluation_environments: ['production'] })).json(),
    )
    const staging = valuesOf((await postFlags(t, { distinct_id: 'a', evaluation_contexts: ['staging'] })).json())
    expect(none['staging-only']).toBe(true)
    expect(production['staging-only']).toBeUndefined()
    expect(production.everyone).toBe(true)
    expect(staging['staging-only']).toBe(true)
  })

  it.each([
    [
      'posthog-node with sec-fetch-mode',
      { 'user-agent': 'posthog-node/5.70.0', 'sec-fetch-mode': 'cors' },
      true,
      false,
    ],
    ['posthog-python', { 'user-agent': 'posthog-python/7.0.0' }, true, false],
    ['curl', { 'user-agent': 'curl/8.5.0' }, true, false],
    ['a browser', { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0' }, false, true],
    ['posthog-android', { 'user-agent': 'posthog-android/3.0.0' }, false, true],
    ['an Origin header only', { 'user-agent': 'custom-client', origin: 'https://example.com' }, false, true],
    ['nothing recognisable', { 'user-agent': 'custom-client' }, false, false],
  ])('serves runtime-specific flags by detected runtime: %s', async (_name, headers, server, client) => {
    const values = valuesOf((await postFlags(t, { distinct_id: 'a' }, { headers })).json())
    expect(values['server-only'] === true).toBe(server)
    expect(values['client-only'] === true).toBe(client)
    expect(values.everyone).toBe(true)
  })

  it('lets an explicit evaluation_runtime in the body win over the headers', async () => {
    const browser = { 'user-agent': 'Mozilla/5.0 Chrome/120.0' }
    const all = valuesOf(
      (await postFlags(t, { distinct_id: 'a', evaluation_runtime: 'all' }, { headers: browser })).json(),
    )
    expect(all['server-only']).toBe(true)
    expect(all['client-only']).toBe(true)
    const server = valuesOf(
      (await postFlags(t, { distinct_id: 'a', evaluation_runtime: 'server' }, { headers: browser })).json(),
    )
    expect(server['server-only']).toBe(true)
    expect(server['client-only']).toBeUndefined()
  })

  it('sets $geoip_* person properties from X-Forwarded-For unless geoip_disable', async () => {
    const headers = { 'x-forwarded-for': '8.8.8.8, 10.0.0.1' }
    expect(valuesOf((await postFlags(t, { distinct_id: 'geo' }, { headers })).json())['in-us']).toBe(true)
    const disabled = await postFlags(t, { distinct_id: 'geo', geoip_disable: true }, { headers })
    expect(valuesOf(disabled.json())['in-us']).toBe(false)
    const overridden = await postFlags(
      t,
      { distinct_id: 'geo', person_properties: { $geoip_country_code: 'DE' } },
      { headers },
    )
    expect(valuesOf(overridden.json())['in-us']).toBe(false)
  })

  it('adds the remote configuration with config=true', async () => {
    const json = (await postFlags(t, { distinct_id: 'a' }, { url: '/flags/?v=2&config=true' })).json()
    expect(json.config).toEqual({ enable_collect_everything: true })
    expect(json.supportedCompression).toEqual(['gzip', 'lz64'])
    expect(json.toolbarParams).toEqual({})
    expect(json.isAuthenticated).toBe(false)
    expect(json.hasFeatureFlags).toBe(true)
    expect(json.sessionRecording).toBe(false)
    expect(json.flags.everyone.enabled).toBe(true)
  })

  it('answers the legacy /decide and /flags v1 shapes', async () => {
    const v1 = (await postFlags(t, { distinct_id: 'stored-pro' }, { url: '/flags/?v=1' })).json()
    expect(v1.featureFlags).toMatchObject({ 'pro-users': true, 'in-us': false })
    expect(v1.featureFlagPayloads).toEqual({ 'pro-users': '{"color":"blue"}' })
    const decide3 = (await postFlags(t, { distinct_id: 'stored-pro' }, { url: '/decide/?v=3' })).json()
    expect(decide3.featureFlags['in-us']).toBe(false)
    expect(decide3.config).toEqual({ enable_collect_everything: true })
    const decide2 = (await postFlags(t, { distinct_id: 'stored-pro' }, { url: '/decide/?v=2' })).json()
    expect(decide2.featureFlags['in-us']).toBeUndefined()
    expect(decide2.featureFlags['pro-users']).toBe(true)
    const decide1 = (await postFlags(t, { distinct_id: 'stored-pro' }, { url: '/decide/' })).json()
    expect(decide1.featureFlags).toContain('pro-users')
    expect(decide1.featureFlags).not.toContain('in-us')
  })

  it('sees a flag change on the next request (the cache is invalidated)', async () => {
    const flag = await createFlag(t, { key: 'soon-off', rollout_percentage: 100 })
    expect(valuesOf((await postFlags(t, { distinct_id: 'a' })).json())['soon-off']).toBe(true)
    await t.burrow.app.inject({
      method: 'PATCH',
      url: `/api/projects/${t.creds.project_id}/feature_flags/${flag.id}/`,
      headers: t.auth,
      payload: { active: false },
    })
    expect(valuesOf((await postFlags(t, { distinct_id: 'a' })).json())['soon-off']).toBeUndefined()
  })

  it('reads flag definitions from memory, not from the metadata store, on every request', async () => {
    await postFlags(t, { distinct_id: 'warm' })
    await sql`ALTER TABLE feature_flags RENAME TO feature_flags_hidden`.execute(t.burrow.meta.db)
    try {
      const res = await postFlags(t, { distinct_id: 'stored-pro' })
      expect(res.statusCode).toBe(200)
      expect(res.json().flags['pro-users'].enabled).toBe(true)
    } finally {
      await sql`ALTER TABLE feature_flags_hidden RENAME TO feature_flags`.execute(t.burrow.meta.db)
    }
  })
})

describe('groups and experience continuity', () => {
  it('evaluates group flags on stored group properties, overridden by group_properties', async () => {
    await insertGroupType(t, 'company', 0)
    await insertGroup(t, 0, 'acme', { industry: 'tech' })
    await createFlag(t, {
      key: 'tech-companies',
      filters: {
        aggregation_group_type_index: 0,
        groups: [
          {
            properties: [{ key: 'industry', value: 'tech', type: 'group', group_type_index: 0 }],
            rollout_percentage: 100,
          },
        ],
      },
    })
    const stored = await postFlags(t, { distinct_id: 'u', groups: { company: 'acme' } })
    expect(stored.json().flags['tech-companies'].enabled).toBe(true)
    const overridden = await postFlags(t, {
      distinct_id: 'u',
      groups: { company: 'acme' },
      group_properties: { company: { industry: 'retail' } },
    })
    expect(overridden.json().flags['tech-companies'].enabled).toBe(false)
    const withoutGroup = await postFlags(t, { distinct_id: 'u' })
    expect(withoutGroup.json().flags['tech-companies'].reason.code).toBe('no_group_type')
  })

  it('pins a continuity flag to the anonymous id and keeps it after identify', async () => {
    const variants = [
      { key: 'control', rollout_percentage: 50 },
      { key: 'test', rollout_percentage: 50 },
    ]
    await createFlag(t, {
      key: 'sticky',
      ensure_experience_continuity: true,
      filters: { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants } },
    })
    const variantOf = (id: string) => pickVariant(flagHash('sticky', id, 'variant'), variants)
    let anon = 'anon-0'
    for (let i = 1; variantOf(anon) === variantOf('user-sticky'); i++) anon = `anon-${i}`
    const personId = await insertPerson(t, ['user-sticky', anon], {})

    const first = await postFlags(t, { distinct_id: 'user-sticky', $anon_distinct_id: anon })
    expect(first.json().flags.sticky.variant).toBe(variantOf(anon))
    const rows = await t.burrow.stores.persons.hashKeyOverrides(t.creds.project_id, personId)
    expect(rows).toEqual([{ feature_flag_key: 'sticky', hash_key: anon }])
    const later = await postFlags(t, { distinct_id: 'user-sticky' })
    expect(later.json().flags.sticky.variant).toBe(variantOf(anon))
  })
})

describe('quota and partial failures', () => {
  it('answers quotaLimited with no flags once the organization used its monthly quota', async () => {
    const tenant = await createTenant(t, { flagQuota: 2 })
    await createFlag(t, { key: 'tenant-flag', rollout_percentage: 100 }, { id: tenant.project.id, auth: tenant.auth })
    const ask = () => postFlags(t, { token: tenant.project.api_token, distinct_id: 'q' })
    expect((await ask()).json().flags['tenant-flag'].enabled).toBe(true)
    expect((await ask()).json().quotaLimited).toBeUndefined()
    const limited = (await ask()).json()
    expect(limited.flags).toEqual({})
    expect(limited.quotaLimited).toEqual(['feature_flags'])
    await t.burrow.services.flagQuota.flush()
    const month = new Date().toISOString().slice(0, 7)
    expect(await t.burrow.stores.flags.usage(tenant.org.id, month)).toBe(2)
  })

  it('still computes flags that need no person when the person lookup fails', async () => {
    await sql`ALTER TABLE person_distinct_ids RENAME TO person_distinct_ids_hidden`.execute(t.burrow.meta.db)
    try {
      // A distinct id looked up for the first time (persons seen a moment ago are served from a short cache).
      const res = await postFlags(t, { distinct_id: 'not-looked-up-before' })
      expect(res.statusCode).toBe(200)
      const json = res.json()
      expect(json.errorsWhileComputingFlags).toBe(true)
      expect(json.flags.everyone).toMatchObject({ enabled: true })
      expect(json.flags['pro-users']).toMatchObject({ enabled: false, failed: true })
    } finally {
      await sql`ALTER TABLE person_distinct_ids_hidden RENAME TO person_distinct_ids`.execute(t.burrow.meta.db)
    }
  })
})

describe('remote config', () => {
  it('serves /array/<key>/config as JSON and config.js as a script with the same keys', async () => {
    const json = await t.burrow.app.inject({ method: 'GET', url: `/array/${t.creds.project_api_key}/config` })
    expect(json.statusCode).toBe(200)
    expect(json.json()).toMatchObject({
      token: t.creds.project_api_key,
      supportedCompression: ['gzip', 'lz64'],
      config: { enable_collect_everything: true },
      hasFeatureFlags: true,
    })
    const script = await t.burrow.app.inject({ method: 'GET', url: `/array/${t.creds.project_api_key}/config.js` })
    expect(script.headers['content-type']).toContain('javascript')
    const window: Record<string, unknown> = {}
    new Function('window', script.body)(window)
    const registered = (window._POSTHOG_REMOTE_CONFIG as Record<string, { config: unknown }>)[t.creds.project_api_key]
    expect(registered.config).toEqual(json.json())
    const unknown = await t.burrow.app.inject({ method: 'GET', url: '/array/phc_unknown/config' })
    expect(unknown.statusCode).toBe(404)
  })
})
