import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMember, startTestApp, type TestApp } from '../helpers/app.js'
import { cookieClient } from './client.js'
import { linkIn, type MailServer, startMailServer } from './mail-server.js'

// Mirrors PostHog's TestPasswordResetAPI (test_authentication.py), the e-mail actions of test_user.py and its
// password and field rules: every link is taken from a mail a real SMTP server received, and followed.

let t: TestApp
let mail: MailServer
let password = ''
const NEW_PASSWORD = 'mighty-strong-secure-1337!!'

beforeAll(async () => {
  mail = await startMailServer()
  t = await startTestApp({ env: { SMTP_URL: mail.url, SITE_URL: 'http://burrow.test' } })
  password = t.creds.password
})
afterAll(async () => {
  await t.close()
  await mail.close()
})

async function login(email = t.creds.email, pw = password) {
  const client = cookieClient(t.burrow.app)
  expect((await client.post('/api/login', { email, password: pw })).statusCode).toBe(200)
  return client
}

describe('password reset', () => {
  it('test_anonymous_user_can_request_password_reset, and the mailed link resets the password once', async () => {
    const res = await cookieClient(t.burrow.app).post('/api/reset/', { email: t.creds.email.toUpperCase() })
    expect(res.statusCode).toBe(204)
    expect(res.body).toBe('')
    const message = await mail.next(t.creds.email, /Reset your Burrow password/)
    const link = linkIn(message, 'http://burrow.test')
    const [, , uuid, token] = link.pathname.split('/')
    expect(link.pathname).toBe(`/reset/${uuid}/${token}`)

    const check = await t.burrow.app.inject({ method: 'GET', url: `/api/reset/${uuid}/?token=${token}` })
    expect(check.statusCode).toBe(200)
    expect(check.body).toBe('')

    const short = await cookieClient(t.burrow.app).post(`/api/reset/${uuid}/`, { token, password: '123' })
    expect(short.statusCode).toBe(400)
    expect(short.json()).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'This password is too short. It must contain at least 8 characters.',
      attr: 'password',
    })

    const client = cookieClient(t.burrow.app)
    const done = await client.post(`/api/reset/${uuid}/`, { token, password: NEW_PASSWORD })
    expect(done.statusCode).toBe(200)
    expect(done.body).toBe(`{"success":true,"email":"${t.creds.email}"}`)
    // Not logged in by the reset.
    expect((await client.get('/api/users/@me/')).statusCode).toBe(401)
    const old = await cookieClient(t.burrow.app).post('/api/login', { email: t.creds.email, password })
    expect(old.statusCode).toBe(400)
    password = NEW_PASSWORD
    await login()
    // The link works once: the password it was bound to is gone.
    const reuse = await cookieClient(t.burrow.app).post(`/api/reset/${uuid}/`, { token, password: 'x' + NEW_PASSWORD })
    expect(reuse.json()).toMatchObject({ code: 'invalid_token', attr: 'token' })
  })

  it('test_cant_validate_token_without_a_token, test_invalid_token_returns_error', async () => {
    const user = await t.burrow.stores.users.getByEmail(t.creds.email)
    const none = await t.burrow.app.inject({ method: 'GET', url: `/api/reset/${user?.uuid}/` })
    expect(none.statusCode).toBe(400)
    expect(none.json()).toEqual({
      type: 'validation_error',
      code: 'required',
      detail: 'This field is required.',
      attr: 'token',
    })
    for (const token of ['not_even_trying', user?.uuid, 'abc-def']) {
      const res = await t.burrow.app.inject({ method: 'GET', url: `/api/reset/${user?.uuid}/?token=${token}` })
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual({
        type: 'validation_error',
        code: 'invalid_token',
        detail: 'This reset token is invalid or has expired.',
        attr: 'token',
      })
    }
    const noToken = await cookieClient(t.burrow.app).post(`/api/reset/${user?.uuid}/`, { password: 'a12345678' })
    expect(noToken.json()).toMatchObject({ code: 'required', attr: 'token' })
  })

  it('test_success_response_even_on_invalid_email and test_cant_reset_more_than_six_times', async () => {
    const unknown = await cookieClient(t.burrow.app).post('/api/reset/', { email: 'i_dont_exist@posthog.com' })
    expect(unknown.statusCode).toBe(204)
    const email = 'limited@example.com'
    for (let i = 0; i < 7; i++) {
      const res = await cookieClient(t.burrow.app).post('/api/reset/', { email })
      if (i < 6) expect(res.statusCode).toBe(204)
      else {
        expect(res.statusCode).toBe(429)
        expect(res.json()).toMatchObject({ attr: null, code: 'throttled', type: 'throttled_error' })
        expect(res.headers['retry-after']).toBeDefined()
      }
    }
    await new Promise((r) => setTimeout(r, 200))
    expect(mail.received.filter((m) => m.to.includes('i_dont_exist@posthog.com'))).toEqual([])
  })
})

describe('changing the e-mail address', () => {
  it('sets pending_email, mails a link to the new address, and the link verifies, changes and logs in', async () => {
    const client = await login()
    const res = await client.patch('/api/users/@me/', { email: 'New.Address@Example.com' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ email: t.creds.email, pending_email: 'new.address@example.com' })

    const message = await mail.next('new.address@example.com', /Verify your email/)
    const link = linkIn(message, 'http://burrow.test')
    const [, , uuid, token] = link.pathname.split('/')
    expect(link.pathname).toBe(`/verify_email/${uuid}/${token}`)

    const missingUuid = await cookieClient(t.burrow.app).post('/api/users/verify_email/', { token })
    expect(missingUuid.statusCode).toBe(400)
    expect(missingUuid.json()).toMatchObject({ code: 'required', attr: 'uuid' })
    const missingToken = await cookieClient(t.burrow.app).post('/api/users/verify_email/', { uuid })
    expect(missingToken.json()).toEqual({
      type: 'validation_error',
      code: 'required',
      detail: 'This field is required.',
      attr: 'token',
    })

    const visitor = cookieClient(t.burrow.app)
    const verified = await visitor.post('/api/users/verify_email/', { uuid, token })
    expect(verified.statusCode).toBe(200)
    expect(verified.json()).toEqual({ success: true, token })
    const me = await visitor.get('/api/users/@me/')
    expect(me.statusCode).toBe(200)
    expect(me.json()).toMatchObject({ email: 'new.address@example.com', pending_email: null, is_email_verified: true })
    const notice = await mail.next(t.creds.email, /email address was changed/)
    expect(notice.text).toContain('new.address@example.com')

    const reuse = await cookieClient(t.burrow.app).post('/api/users/verify_email/', { uuid, token })
    expect(reuse.statusCode).toBe(400)
    expect(reuse.json()).toEqual({
      type: 'validation_error',
      code: 'invalid_token',
      detail: 'This verification token is invalid or has expired.',
      attr: 'token',
    })
    // Back to the original address for the other tests.
    await t.burrow.meta.db.updateTable('users').set({ email: t.creds.email }).where('uuid', '=', uuid).execute()
  })

  it('cancels a pending change, and says when there is none', async () => {
    const client = await login()
    const none = await client.patch('/api/users/cancel_email_change_request/')
    expect(none.statusCode).toBe(400)
    expect(none.json()).toEqual({
      type: 'validation_error',
      code: 'email_change_request_not_found',
      detail: 'No active email change requests found.',
      attr: null,
    })
    await client.patch('/api/users/@me/', { email: 'other@example.com' })
    const cancelled = await client.patch('/api/users/cancel_email_change_request/')
    expect(cancelled.statusCode).toBe(200)
    expect(cancelled.json()).toMatchObject({ email: t.creds.email, pending_email: null })
  })

  it('request_email_verification never tells whether a user exists', async () => {
    for (const uuid of ['00000000-0000-4000-8000-000000000000', 'nonsense']) {
      const res = await cookieClient(t.burrow.app).post('/api/users/request_email_verification/', { uuid })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({ success: true })
    }
    const missing = await cookieClient(t.burrow.app).post('/api/users/request_email_verification/', {})
    expect(missing.json()).toMatchObject({ code: 'required', attr: 'uuid' })
  })

  it('refuses e-mail and password changes made with a personal API key', async () => {
    for (const body of [{ email: 'key@example.com' }, { password: NEW_PASSWORD, current_password: password }]) {
      const res = await t.burrow.app.inject({ method: 'PATCH', url: '/api/users/@me/', headers: t.auth, payload: body })
      expect(res.statusCode).toBe(403)
      expect(res.json().detail).toBe(
        'You can only change your email or password from the Burrow app, not with an API key or token.',
      )
    }
  })
})

describe('PATCH /api/users/@me/', () => {
  it('test_user_can_update_password: needs the current one, keeps this session and ends the others', async () => {
    const client = await login()
    const other = await login()
    const missing = await client.patch('/api/users/@me/', { password: 'another-strong-secure-2448!!' })
    expect(missing.json()).toEqual({
      type: 'validation_error',
      code: 'required',
      detail: 'This field is required when updating your password.',
      attr: 'current_password',
    })
    const wrong = await client.patch('/api/users/@me/', {
      password: 'another-strong-secure-2448!!',
      current_password: 'wrong',
    })
    expect(wrong.json()).toEqual({
      type: 'validation_error',
      code: 'incorrect_password',
      detail: 'Your current password is incorrect.',
      attr: 'current_password',
    })
    const weak = await client.patch('/api/users/@me/', { password: 'password', current_password: password })
    expect(weak.json()).toMatchObject({ code: 'password_too_weak', attr: 'password' })
    const ok = await client.patch('/api/users/@me/', {
      password: 'another-strong-secure-2448!!',
      current_password: password,
    })
    expect(ok.statusCode).toBe(200)
    password = 'another-strong-secure-2448!!'
    expect((await client.get('/api/users/@me/')).statusCode).toBe(200)
    expect((await other.get('/api/users/@me/')).statusCode).toBe(401)
    await login()
  })

  it('updates the fields of spec §2.9 and keeps them', async () => {
    const client = await login()
    const body = {
      first_name: 'Ada',
      last_name: 'Lovelace',
      anonymize_data: true,
      toolbar_mode: 'disabled',
      notification_settings: { plugin_disabled: false },
      events_column_config: { active: ['event', 'timestamp'] },
      has_seen_product_intro_for: { surveys: true },
      theme_mode: 'dark',
      hedgehog_config: { enabled: true },
      allow_sidebar_suggestions: true,
      shortcut_position: 'above',
      role_at_organization: 'engineering',
    }
    const res = await client.patch('/api/users/@me/', body)
    expect(res.statusCode).toBe(200)
    const { notification_settings, ...rest } = body
    expect(res.json()).toMatchObject(rest)
    expect(res.json().notification_settings).toMatchObject({ plugin_disabled: false, discussions_mentioned: true })
    expect((await client.get('/api/users/@me/')).json()).toMatchObject(rest)
  })

  it('test_set_current_organization and set_current_team refuse what the user is not a member of', async () => {
    const client = await login()
    for (const field of ['set_current_organization', 'set_current_team']) {
      const res = await client.patch('/api/users/@me/', { [field]: '999999' })
      expect(res.statusCode).toBe(400)
      expect(res.json()).toEqual({
        type: 'validation_error',
        code: 'does_not_exist',
        detail: 'Object with id=999999 does not exist.',
        attr: field,
      })
    }
    const ok = await client.patch('/api/users/@me/', { set_current_team: t.creds.project_id })
    expect(ok.statusCode).toBe(200)
    expect(ok.json().team.id).toBe(t.creds.project_id)
  })

  it('non-staff users may not set is_staff nor touch other users', async () => {
    const member = await createMember(t, 1)
    const staff = await t.burrow.app.inject({
      method: 'PATCH',
      url: '/api/users/@me/',
      headers: member.auth,
      payload: { is_staff: true },
    })
    expect(staff.statusCode).toBe(403)
    expect(staff.json().detail).toBe('You are not a staff user, contact your instance admin.')
    const demo = await t.burrow.stores.users.getByEmail(t.creds.email)
    for (const uuid of [demo?.uuid, member.user.uuid]) {
      const res = await t.burrow.app.inject({ method: 'GET', url: `/api/users/${uuid}/`, headers: member.auth })
      expect(res.statusCode).toBe(403)
      expect(res.json().detail).toBe("As a non-staff user you're only allowed to access the `@me` user instance.")
    }
    // The instance's first user is staff and may read others.
    const read = await t.burrow.app.inject({ method: 'GET', url: `/api/users/${member.user.uuid}/`, headers: t.auth })
    expect(read.statusCode).toBe(200)
    expect(read.json()).toMatchObject({ email: member.user.email, is_staff: false })
  })
})
