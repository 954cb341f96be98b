import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { cookieClient } from './client.js'

// Mirrors PostHog's posthog/api/test/test_authentication.py (TestLoginAPI) and the session side of
// test_personal_api_keys.py: logging in sets a session cookie; the session reads the user, manages keys, and
// its writes need the CSRF token.

let t: TestApp

beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_LOGIN_FAILURES_PER_10_MINUTES: '3' } })
})
afterAll(() => t.close())

const invalidCredentials = {
  type: 'validation_error',
  code: 'invalid_credentials',
  detail: 'Invalid email or password.',
  attr: null,
}

describe('login', () => {
  it('test_user_logs_in_with_email_and_password', async () => {
    const client = cookieClient(t.burrow.app)
    const res = await client.post('/api/login', { email: t.creds.email, password: t.creds.password })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ success: true })
    const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? [])
    const session = cookies.find((c) => c.startsWith('sessionid='))
    expect(session).toMatch(/HttpOnly/)
    expect(session).toMatch(/SameSite=Lax/)
    expect(session).not.toMatch(/Secure/)
    expect(cookies.some((c) => c.startsWith('posthog_csrftoken='))).toBe(true)

    const me = await client.get('/api/users/@me/')
    expect(me.statusCode).toBe(200)
    expect(me.json()).toMatchObject({ email: t.creds.email, is_2fa_enabled: false })
  })

  it('accepts the address in any case', async () => {
    const client = cookieClient(t.burrow.app)
    const res = await client.post('/api/login', { email: t.creds.email.toUpperCase(), password: t.creds.password })
    expect(res.statusCode).toBe(200)
  })

  it('test_user_cant_login_with_incorrect_password and test_user_cant_login_with_incorrect_email', async () => {
    for (const body of [
      { email: t.creds.email, password: '1234' },
      { email: 'user2@posthog.com', password: t.creds.password },
    ]) {
      const client = cookieClient(t.burrow.app, { ip: '10.0.0.9' })
      const res = await client.post('/api/login', body)
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual(invalidCredentials)
      const me = await client.get('/api/users/@me/')
      expect(me.statusCode).toBe(401)
      expect(me.json()).not.toHaveProperty('email')
    }
  })

  it('test_cant_login_without_required_attributes', async () => {
    for (const missing of ['email', 'password']) {
      const body: Record<string, string> = { email: t.creds.email, password: t.creds.password }
      delete body[missing]
      const res = await cookieClient(t.burrow.app).post('/api/login/', body)
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual({
        type: 'validation_error',
        code: 'required',
        detail: 'This field is required.',
        attr: missing,
      })
    }
    const empty = await t.burrow.app.inject({ method: 'POST', url: '/api/login' })
    expect(empty.statusCode).toBe(400)
  })

  it('test_login_endpoint_is_protected_against_brute_force_attempts (per IP)', async () => {
    const attacker = cookieClient(t.burrow.app, { ip: '10.9.9.9' })
    for (let i = 0; i < 2; i++) {
      const res = await attacker.post('/api/login', { email: t.creds.email, password: 'invalid' })
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual(invalidCredentials)
    }
    const third = await attacker.post('/api/login', { email: t.creds.email, password: 'invalid' })
    expect(third.statusCode).toBe(403)
    expect(third.json()).toEqual({
      type: 'authentication_error',
      code: 'too_many_failed_attempts',
      detail: 'Too many failed login attempts. Please try again in 10 minutes.',
      attr: null,
    })
    // Locked out even with the right password; another address is not.
    const right = await attacker.post('/api/login', { email: t.creds.email, password: t.creds.password })
    expect(right.statusCode).toBe(403)
    const other = await cookieClient(t.burrow.app, { ip: '10.9.9.10' }).post('/api/login', {
      email: t.creds.email,
      password: t.creds.password,
    })
    expect(other.statusCode).toBe(200)
  })
})

describe('session', () => {
  it('refuses cookie-authenticated writes without the CSRF token, and accepts them with it', async () => {
    const client = cookieClient(t.burrow.app)
    await client.post('/api/login', { email: t.creds.email, password: t.creds.password })
    const missing = await client.patch('/api/users/@me/', { first_name: 'Nope' }, { csrf: false })
    expect(missing.statusCode).toBe(403)
    expect(missing.json()).toEqual({
      type: 'authentication_error',
      code: 'permission_denied',
      detail: 'CSRF Failed: CSRF token missing.',
      attr: null,
    })
    const wrong = await t.burrow.app.inject({
      method: 'PATCH',
      url: '/api/users/@me/',
      headers: {
        cookie: [...client.jar].map(([k, v]) => `${k}=${v}`).join('; '),
        'x-csrftoken': 'forged',
      },
      payload: { first_name: 'Nope' },
    })
    expect(wrong.statusCode).toBe(403)
    expect(wrong.json().detail).toBe('CSRF Failed: CSRF token incorrect.')
    const foreign = await client.patch('/api/users/@me/', { first_name: 'Nope' }, { csrf: true })
    expect(foreign.statusCode).toBe(200)
    const evil = await t.burrow.app.inject({
      method: 'PATCH',
      url: '/api/users/@me/',
      headers: {
        cookie: [...client.jar].map(([k, v]) => `${k}=${v}`).join('; '),
        'x-csrftoken': client.jar.get('posthog_csrftoken') as string,
        origin: 'https://evil.example',
      },
      payload: { first_name: 'Nope' },
    })
    expect(evil.statusCode).toBe(403)
    expect(evil.json().detail).toMatch(/^CSRF Failed: Origin checking failed/)
    // Reads need no token.
    expect((await client.get('/api/projects/')).statusCode).toBe(200)
  })

  it('manages personal API keys with a session: list, create, roll, delete', async () => {
    const client = cookieClient(t.burrow.app)
    await client.post('/api/login', { email: t.creds.email, password: t.creds.password })
    const created = await client.post('/api/personal_api_keys/', { label: 'From the app', scopes: ['query:read'] })
    expect(created.statusCode).toBe(201)
    const key = created.json()
    expect(key.value).toMatch(/^phx_/)
    const list = await client.get('/api/personal_api_keys/')
    expect(list.statusCode).toBe(200)
    expect(list.json().map((k: { id: string }) => k.id)).toContain(key.id)
    expect(list.json().every((k: { value: unknown }) => k.value === null)).toBe(true)
    const one = await client.get(`/api/personal_api_keys/${key.id}/`)
    expect(one.statusCode).toBe(200)
    const rolled = await client.post(`/api/personal_api_keys/${key.id}/roll/`)
    expect(rolled.statusCode).toBe(200)
    expect(rolled.json().value).not.toBe(key.value)
    const oldKey = await t.burrow.app.inject({
      method: 'GET',
      url: '/api/users/@me/',
      headers: { authorization: `Bearer ${key.value}` },
    })
    expect(oldKey.statusCode).toBe(401)
    const deleted = await client.delete(`/api/personal_api_keys/${key.id}/`)
    expect(deleted.statusCode).toBe(204)
    // Without the CSRF token, a session cannot make keys.
    const forged = await client.post('/api/personal_api_keys/', { label: 'x', scopes: ['*'] }, { csrf: false })
    expect(forged.statusCode).toBe(403)
  })

  it('logs out: the session stops working and its cookie is cleared', async () => {
    const client = cookieClient(t.burrow.app)
    await client.post('/api/login', { email: t.creds.email, password: t.creds.password })
    const stolen = [...client.jar].map(([k, v]) => `${k}=${v}`).join('; ')
    const out = await client.post('/api/logout/')
    expect(out.statusCode).toBe(200)
    expect(client.jar.has('sessionid')).toBe(false)
    expect((await client.get('/api/users/@me/')).statusCode).toBe(401)
    const replay = await t.burrow.app.inject({ method: 'GET', url: '/api/users/@me/', headers: { cookie: stolen } })
    expect(replay.statusCode).toBe(401)
  })
})
