import { Secret, TOTP } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { type CookieClient, cookieClient } from './client.js'
import { type MailServer, startMailServer } from './mail-server.js'

// Mirrors PostHog's TestTwoFactorAPI (posthog/api/test/test_authentication.py) and the 2FA actions of
// test_user.py, over HTTP with cookies and CSRF: codes come from the secret the API hands out, as an
// authenticator app would make them.

let t: TestApp
let mail: MailServer
let offsetMs = 0
const clock = () => new Date(Date.now() + offsetMs)

beforeAll(async () => {
  mail = await startMailServer()
  t = await startTestApp({ env: { SMTP_URL: mail.url }, clock })
})
afterAll(async () => {
  await t.close()
  await mail.close()
})

const codeAt = (secret: string, ms: number) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
    timestamp: ms,
  })

async function loggedIn(): Promise<CookieClient> {
  const client = cookieClient(t.burrow.app)
  const res = await client.post('/api/login', { email: t.creds.email, password: t.creds.password })
  expect(res.statusCode).toBe(200)
  return client
}

let secret = ''
let backupCodes: string[] = []

describe('turning 2FA on', () => {
  it('starts setup with a base32 secret, an otpauth URI and a QR code', async () => {
    const client = await loggedIn()
    const res = await client.get('/api/users/@me/two_factor_start_setup/')
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.success).toBe(true)
    expect(body.secret).toMatch(/^[A-Z2-7]{32}$/)
    expect(body.uri).toMatch(/^otpauth:\/\/totp\/Burrow:demo%40burrow\.local\?/)
    expect(body.uri).toContain(`secret=${body.secret}`)
    expect(body.qr_code_svg).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/)

    const missing = await client.post('/api/users/@me/two_factor_validate/', {})
    expect(missing.statusCode).toBe(400)
    expect(missing.json()).toMatchObject({ code: 'required', attr: 'token' })
    const wrong = await client.post('/api/users/@me/two_factor_validate/', { token: '000000' })
    expect(wrong.statusCode).toBe(400)
    expect(wrong.json()).toEqual({
      type: 'validation_error',
      code: 'token_invalid',
      detail: 'Token is not valid',
      attr: null,
    })
    // The secret belongs to the session that asked for it.
    const other = await loggedIn()
    const elsewhere = await other.post('/api/users/@me/two_factor_validate/', {
      token: codeAt(body.secret, clock().getTime()),
    })
    expect(elsewhere.statusCode).toBe(400)
    expect(elsewhere.json()).toEqual({
      type: 'validation_error',
      code: 'setup_expired',
      detail: '2FA setup session expired. Please start setup again.',
      attr: null,
    })

    const ok = await client.post('/api/users/@me/validate_2fa/', { token: codeAt(body.secret, clock().getTime()) })
    expect(ok.statusCode).toBe(200)
    expect(ok.json()).toEqual({ success: true })
    secret = body.secret
    const enabled = await mail.next(t.creds.email, /enabled/)
    expect(enabled.text).toContain('Two-factor authentication was enabled')

    const status = await client.get('/api/users/@me/two_factor_status/')
    expect(status.json()).toMatchObject({ is_enabled: true, method: 'TOTP', backup_codes: [] })
    expect((await client.get('/api/users/@me/')).json().is_2fa_enabled).toBe(true)
  })

  it('makes 5 backup codes of 8 characters, replacing the old ones', async () => {
    const client = await loggedInWithCode(60_000)
    const first = await client.post('/api/users/@me/two_factor_backup_codes/')
    expect(first.statusCode).toBe(200)
    const codes: string[] = first.json().backup_codes
    expect(codes).toHaveLength(5)
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{8}$/)
    const second = await client.post('/api/users/@me/two_factor_backup_codes/')
    backupCodes = second.json().backup_codes
    expect(backupCodes).not.toEqual(codes)
    const status = await client.get('/api/users/@me/two_factor_status/')
    expect(status.json()).toMatchObject({ is_enabled: true, backup_codes_remaining: 5 })
  })

  it('refuses 2FA setup and backup codes to personal API keys', async () => {
    for (const [method, url] of [
      ['GET', '/api/users/@me/two_factor_start_setup/'],
      ['POST', '/api/users/@me/two_factor_backup_codes/'],
      ['POST', '/api/users/@me/two_factor_disable/'],
    ] as const) {
      const res = await t.burrow.app.inject({ method, url, headers: t.auth })
      expect(res.statusCode, url).toBe(403)
    }
  })
})

/** Logs in through both steps, with the code of `aheadMs` from now (each use needs a step not used before). */
async function loggedInWithCode(aheadMs: number): Promise<CookieClient> {
  offsetMs += aheadMs
  const client = cookieClient(t.burrow.app)
  const first = await client.post('/api/login', { email: t.creds.email, password: t.creds.password })
  expect(first.statusCode).toBe(401)
  const second = await client.post('/api/login/token', { token: codeAt(secret, clock().getTime()) })
  expect(second.statusCode).toBe(200)
  return client
}

describe('logging in with 2FA', () => {
  it('test_login_2fa_enabled: asks for the second step, then logs in with a code from the secret', async () => {
    offsetMs += 60_000
    const client = cookieClient(t.burrow.app)
    const res = await client.post('/api/login', { email: t.creds.email, password: t.creds.password })
    expect(res.statusCode).toBe(401)
    expect(res.json()).toEqual({ type: 'server_error', code: '2fa_required', detail: '2FA is required.', attr: null })
    const before = await client.get('/api/users/@me/')
    expect(before.statusCode).toBe(401)
    expect(before.json()).not.toHaveProperty('email')

    const code = codeAt(secret, clock().getTime())
    const ok = await client.post('/api/login/token', { token: code })
    expect(ok.statusCode).toBe(200)
    expect(ok.json()).toEqual({ success: true })
    const me = await client.get('/api/users/@me/')
    expect(me.statusCode).toBe(200)
    expect(me.json().email).toBe(t.creds.email)
    // The session works for writes with its CSRF token.
    expect((await client.patch('/api/users/@me/', { first_name: 'Two' })).statusCode).toBe(200)

    // The same code a second time (a replay) is refused.
    const again = cookieClient(t.burrow.app)
    await again.post('/api/login', { email: t.creds.email, password: t.creds.password })
    const replay = await again.post('/api/login/token', { token: code })
    expect(replay.statusCode).toBe(400)
    expect(replay.json()).toEqual({
      type: 'validation_error',
      code: '2fa_invalid',
      detail: 'Invalid authentication code',
      attr: null,
    })
    // The next step's code is accepted (±1 step of drift).
    const next = await again.post('/api/login/token', { token: codeAt(secret, clock().getTime() + 30_000) })
    expect(next.statusCode).toBe(200)
  })

  it('refuses a code two steps away', async () => {
    offsetMs += 120_000
    const client = cookieClient(t.burrow.app)
    await client.post('/api/login', { email: t.creds.email, password: t.creds.password })
    const far = await client.post('/api/login/token', { token: codeAt(secret, clock().getTime() + 60_000) })
    expect(far.statusCode).toBe(400)
    expect(far.json().code).toBe('2fa_invalid')
  })

  it('test_2fa_expired', async () => {
    offsetMs += 60_000
    const client = cookieClient(t.burrow.app)
    await client.post('/api/login', { email: t.creds.email, password: t.creds.password })
    offsetMs += 30 * 60_000
    const res = await client.post('/api/login/token', { token: codeAt(secret, clock().getTime()) })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({
      type: 'validation_error',
      code: '2fa_expired',
      detail: 'Login attempt has expired. Re-enter username/password.',
      attr: null,
    })
    expect((await client.get('/api/users/@me/')).statusCode).toBe(401)
    // Without a pending login at all, the same.
    const none = await cookieClient(t.burrow.app).post('/api/login/token', { token: '123456' })
    expect(none.json().code).toBe('2fa_expired')
  })

  it('test_login_with_backup_code and test_backup_code_is_consumed_after_use', async () => {
    offsetMs += 60_000
    const code = backupCodes[0]
    const client = cookieClient(t.burrow.app)
    await client.post('/api/login', { email: t.creds.email, password: t.creds.password })
    const ok = await client.post('/api/login/token', { token: code })
    expect(ok.statusCode).toBe(200)
    expect((await client.get('/api/users/@me/')).statusCode).toBe(200)
    const used = await mail.next(t.creds.email, /backup code was used/)
    expect(used.text).toContain('backup code was used')

    const again = cookieClient(t.burrow.app)
    await again.post('/api/login', { email: t.creds.email, password: t.creds.password })
    const reuse = await again.post('/api/login/token', { token: code })
    expect(reuse.statusCode).toBe(400)
    expect(reuse.json().code).toBe('2fa_invalid')
    const status = await client.get('/api/users/@me/two_factor_status/')
    expect(status.json().backup_codes_remaining).toBe(4)
  })
})

describe('turning 2FA off', () => {
  it('disables 2FA, mails about it, and login asks for the password only', async () => {
    const client = await loggedInWithCode(60_000)
    const res = await client.post('/api/users/@me/two_factor_disable/')
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ success: true })
    await mail.next(t.creds.email, /disabled/)
    expect((await client.get('/api/users/@me/two_factor_status/')).json()).toEqual({
      is_enabled: false,
      backup_codes: [],
      backup_codes_remaining: 0,
      method: null,
    })
    const backup = await client.post('/api/users/@me/two_factor_backup_codes/')
    expect(backup.statusCode).toBe(400)
    expect(backup.json()).toEqual({
      type: 'validation_error',
      code: '2fa_not_enabled',
      detail: '2FA must be enabled first',
      attr: null,
    })
    const login = await cookieClient(t.burrow.app).post('/api/login', {
      email: t.creds.email,
      password: t.creds.password,
    })
    expect(login.statusCode).toBe(200)
  })
})
