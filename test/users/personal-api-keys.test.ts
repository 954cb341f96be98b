import crypto from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashPersonalApiKey, maskKey, newPersonalApiKey } from '../../src/http/keys.js'
import { NO_PERSONAL_API_KEY_ACCESS } from '../../src/http/scopes.js'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'

// Mirrors PostHog's posthog/api/test/test_personal_api_keys.py. Session login does not exist yet, so every key
// here is made through the key service (what `burrow keys create` and a later session route share).

let t: TestApp
let demoUser: { id: number; organizationIds: string[] }
let secondProjectId: number

const noKeyAccess = {
  type: 'authentication_error',
  code: 'permission_denied',
  detail: NO_PERSONAL_API_KEY_ACCESS,
  attr: null,
}

beforeAll(async () => {
  t = await startTestApp()
  const user = await t.burrow.stores.users.getByEmail(t.creds.email)
  const memberships = await t.burrow.stores.organizations.memberships(user!.id)
  demoUser = { id: user!.id, organizationIds: memberships.map((m) => m.organization_id) }
  const second = await t.burrow.app.inject({
    method: 'POST',
    url: '/api/projects/',
    headers: t.auth,
    payload: { name: 'Second project' },
  })
  secondProjectId = second.json().id
})
afterAll(() => t.close())

async function makeKey(scopes: string[], scopedTeams?: number[]) {
  const key = await t.burrow.services.keys.create(demoUser, { label: 'Test key', scopes, scoped_teams: scopedTeams })
  return { ...key, headers: { authorization: `Bearer ${key.value}` } }
}

const keyCount = async () =>
  (await t.burrow.meta.db.selectFrom('personal_api_keys').select('id').where('user_id', '=', demoUser.id).execute())
    .length

describe('a narrow key cannot reach beyond itself (the reported escalation)', () => {
  it('cannot mint an unrestricted key, nor read another project with one', async () => {
    const narrow = await makeKey(['feature_flag:read', 'user:write'], [t.creds.project_id])
    const before = await keyCount()
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: '/api/personal_api_keys/',
      headers: narrow.headers,
      payload: { label: 'escalated', scopes: ['*'] },
    })
    expect(res.statusCode).toBe(403)
    expect(res.json()).toEqual(noKeyAccess)
    expect(await keyCount()).toBe(before)

    const other = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${secondProjectId}/feature_flags/`,
      headers: narrow.headers,
    })
    expect(other.statusCode).toBe(403)
  })

  it('cannot list, roll or delete the other keys of its user, the master key included', async () => {
    const narrow = await makeKey(['feature_flag:read', 'user:write'], [t.creds.project_id])
    const master = await t.burrow.app.inject({
      method: 'GET',
      url: '/api/personal_api_keys/@current/',
      headers: t.auth,
    })
    const masterId = master.json().id as string

    const list = await t.burrow.app.inject({ method: 'GET', url: '/api/personal_api_keys/', headers: narrow.headers })
    expect(list.statusCode).toBe(403)
    expect(list.json()).toEqual(noKeyAccess)

    for (const [method, url] of [
      ['DELETE', `/api/personal_api_keys/${masterId}/`],
      ['POST', `/api/personal_api_keys/${masterId}/roll/`],
      ['DELETE', '/api/personal_api_keys/@current/'],
      ['POST', `/api/personal_api_keys/${narrow.id}/roll/`],
    ] as const) {
      const res = await t.burrow.app.inject({ method, url, headers: narrow.headers })
      expect(res.statusCode, `${method} ${url}`).toBe(403)
      expect(res.json(), `${method} ${url}`).toEqual(noKeyAccess)
    }
    const stillWorks = await t.burrow.app.inject({ method: 'GET', url: '/api/projects/', headers: t.auth })
    expect(stillWorks.statusCode).toBe(200)
    const narrowStillWorks = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${t.creds.project_id}/feature_flags/`,
      headers: narrow.headers,
    })
    expect(narrowStillWorks.statusCode).toBe(200)
  })
})

describe('TestPersonalAPIKeyAPIAccess', () => {
  it('test_list_personal_api_keys_with_bearer_auth', async () => {
    const res = await t.burrow.app.inject({ method: 'GET', url: '/api/personal_api_keys/', headers: t.auth })
    expect(res.statusCode).toBe(403)
    expect(res.json().detail).toBe(NO_PERSONAL_API_KEY_ACCESS)
  })

  it('test_retrieve_personal_api_key_with_bearer_auth', async () => {
    const key = await makeKey(['feature_flag:read'])
    const current = await t.burrow.app.inject({
      method: 'GET',
      url: '/api/personal_api_keys/@current/',
      headers: key.headers,
    })
    expect(current.statusCode).toBe(200)
    expect(current.json()).toMatchObject({
      id: key.id,
      label: 'Test key',
      value: null,
      mask_value: key.mask_value,
      scopes: ['feature_flag:read'],
      user_id: demoUser.id,
    })
    const byId = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/personal_api_keys/${key.id}/`,
      headers: key.headers,
    })
    expect(byId.statusCode).toBe(200)
    expect(byId.json().label).toBe('Test key')
  })

  it('does not let a key retrieve another key of its user', async () => {
    const key = await makeKey(['*'])
    const other = await makeKey(['query:read'])
    const res = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/personal_api_keys/${other.id}/`,
      headers: key.headers,
    })
    expect(res.statusCode).toBe(403)
    expect(res.json()).toEqual(noKeyAccess)
  })

  it('test_get_someone_elses_personal_api_key', async () => {
    const tenant = await createTenant(t)
    const theirs = await t.burrow.app.inject({
      method: 'GET',
      url: '/api/personal_api_keys/@current/',
      headers: tenant.auth,
    })
    const res = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/personal_api_keys/${theirs.json().id}/`,
      headers: t.auth,
    })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({ type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null })
  })

  it('test_create_personal_api_key_with_bearer_auth', async () => {
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: '/api/personal_api_keys/',
      headers: t.auth,
      payload: { label: 'New key' },
    })
    expect(res.statusCode).toBe(403)
    expect(res.json().detail).toBe(NO_PERSONAL_API_KEY_ACCESS)
  })

  it('test_delete_personal_api_key_with_bearer_auth', async () => {
    const res = await t.burrow.app.inject({
      method: 'DELETE',
      url: '/api/personal_api_keys/@current/',
      headers: t.auth,
    })
    expect(res.statusCode).toBe(403)
    expect(res.json().detail).toBe(NO_PERSONAL_API_KEY_ACCESS)
  })

  it('test_invalid_bearer_token', async () => {
    const res = await t.burrow.app.inject({
      method: 'GET',
      url: '/api/personal_api_keys/@current/',
      headers: { authorization: 'Bearer invalid_key' },
    })
    expect(res.statusCode).toBe(401)
    const none = await t.burrow.app.inject({ method: 'GET', url: '/api/personal_api_keys/@current/' })
    expect(none.statusCode).toBe(401)
    expect(none.json().code).toBe('not_authenticated')
  })
})

describe('TestPersonalAPIKeysAPIValidation (the key service every way of making keys shares)', () => {
  const create = (input: Parameters<TestApp['burrow']['services']['keys']['create']>[1]) =>
    t.burrow.services.keys.create(demoUser, input)

  it('test_cannot_create_key_with_empty_scopes', async () => {
    const before = await keyCount()
    await expect(create({ label: 'empty', scopes: [] })).rejects.toMatchObject({
      statusCode: 400,
      type: 'validation_error',
      code: 'empty',
      attr: 'scopes',
    })
    expect(await keyCount()).toBe(before)
  })

  it('test_create_personal_api_key_scopes_required', async () => {
    await expect(create({ label: 'test' })).rejects.toMatchObject({
      statusCode: 400,
      code: 'required',
      detail: 'This field is required.',
      attr: 'scopes',
    })
  })

  it('test_create_personal_api_key_label_required', async () => {
    await expect(create({ label: '', scopes: ['*'] })).rejects.toMatchObject({
      code: 'blank',
      detail: 'This field may not be blank.',
      attr: 'label',
    })
  })

  it('test_only_allows_valid_scopes', async () => {
    await expect(create({ label: 'test', scopes: ['invalid'] })).rejects.toMatchObject({
      statusCode: 400,
      code: 'invalid_input',
      detail: 'Invalid scope: invalid',
      attr: 'scopes',
    })
    await expect(create({ label: 'test', scopes: ['insight:invalid'] })).rejects.toMatchObject({ statusCode: 400 })
  })

  it('test_team_scoping_forbids_other', async () => {
    const tenant = await createTenant(t)
    await expect(
      create({ label: 'test', scopes: ['*'], scoped_teams: [t.creds.project_id, tenant.project.id] }),
    ).rejects.toMatchObject({ detail: 'You must be a member of all teams that you are scoping the key to.' })
    await expect(create({ label: 'test', scopes: ['*'], scoped_teams: [999999] })).rejects.toMatchObject({
      statusCode: 400,
    })
  })

  it('test_organization_scoping_forbids_other', async () => {
    const tenant = await createTenant(t)
    await expect(
      create({ label: 'test', scopes: ['*'], scoped_organizations: [demoUser.organizationIds[0], tenant.org.id] }),
    ).rejects.toMatchObject({ detail: 'You must be a member of all organizations that you are scoping the key to.' })
  })

  it('test_create_too_many_api_keys', async () => {
    const tenant = await createTenant(t)
    const user = { id: tenant.user.id, organizationIds: [tenant.org.id] }
    // createTenant made the first key; nine more reach the limit of ten.
    for (let i = 0; i < 9; i++) await t.burrow.services.keys.create(user, { label: `k${i}`, scopes: ['query:read'] })
    await expect(t.burrow.services.keys.create(user, { label: 'k10', scopes: ['query:read'] })).rejects.toMatchObject({
      statusCode: 400,
      code: 'invalid_input',
      detail: 'You can only have 10 personal API keys. Remove an existing key before creating a new one.',
      attr: null,
    })
  })
})

describe('stored keys', () => {
  it('stores only the hash and finds a key by it; the value is shown only on creation', async () => {
    const key = await makeKey(['query:read'])
    expect(key.value).toMatch(/^phx_[0-9A-Za-z]{40,48}$/)
    expect(key.mask_value).toBe(`phx_...${key.value?.slice(-4)}`)
    const row = await t.burrow.meta.db
      .selectFrom('personal_api_keys')
      .selectAll()
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow()
    expect(row.secure_value).toBe(hashPersonalApiKey(key.value as string))
    expect(JSON.stringify(row)).not.toContain(key.value)
    const read = await t.burrow.app.inject({
      method: 'GET',
      url: '/api/personal_api_keys/@current/',
      headers: key.headers,
    })
    expect(read.json().value).toBeNull()
  })

  it('test_rejects_empty_scopes_list_as_no_access (a key stored without scopes)', async () => {
    const value = newPersonalApiKey()
    await t.burrow.stores.keys.insert({
      id: crypto.randomUUID(),
      user_id: demoUser.id,
      label: 'legacy',
      secure_value: hashPersonalApiKey(value),
      mask_value: maskKey(value),
      scopes: '[]',
      scoped_teams: null,
      scoped_organizations: null,
      created_at: new Date().toISOString(),
      last_used_at: null,
      last_rolled_at: null,
    })
    const res = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${t.creds.project_id}/feature_flags/`,
      headers: { authorization: `Bearer ${value}` },
    })
    expect(res.statusCode).toBe(403)
    expect(res.json().detail).toBe("API key missing required scope 'feature_flag:read'")
    const self = await t.burrow.app.inject({
      method: 'GET',
      url: '/api/personal_api_keys/@current/',
      headers: { authorization: `Bearer ${value}` },
    })
    expect(self.json().scopes).toEqual([])
  })

  it('test_roll_api_key (through the service): a new value, the old one stops working', async () => {
    const key = await makeKey(['query:read'])
    const rolled = await t.burrow.services.keys.roll(demoUser.id, key.id)
    expect(rolled).toMatchObject({ id: key.id, label: key.label, scopes: ['query:read'] })
    expect(rolled.value).toMatch(/^phx_/)
    expect(rolled.value).not.toBe(key.value)
    expect(rolled.last_rolled_at).not.toBeNull()
    expect(rolled.mask_value).not.toBe(key.mask_value)
    const old = await t.burrow.app.inject({
      method: 'GET',
      url: '/api/personal_api_keys/@current/',
      headers: key.headers,
    })
    expect(old.statusCode).toBe(401)
    const fresh = await t.burrow.app.inject({
      method: 'GET',
      url: '/api/personal_api_keys/@current/',
      headers: { authorization: `Bearer ${rolled.value}` },
    })
    expect(fresh.statusCode).toBe(200)
  })
})
