import { Secret, TOTP } from 'otpauth'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createMember, startTestApp, type TestApp } from '../helpers/app.js'
import { cookieClient } from './client.js'

// PostHog's test_2fa_throttling: wrong codes are throttled. Burrow answers 429 with Retry-After and PostHog's
// throttle body, per user and per client IP, with the counters in the metadata store (every process shares them).

let t: TestApp
beforeAll(async () => {
  t = await startTestApp({
    env: { RATE_LIMIT_2FA_ATTEMPTS_PER_USER: '3', RATE_LIMIT_2FA_ATTEMPTS_PER_IP: '5' },
  })
})
afterAll(() => t.close())

const code = (secret: string) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({ timestamp: Date.now() })

async function withTwoFactor(email: string, password: string, ip: string) {
  const client = cookieClient(t.burrow.app, { ip })
  expect((await client.post('/api/login', { email, password })).statusCode).toBe(200)
  const { secret } = (await client.get('/api/users/@me/two_factor_start_setup/')).json()
  expect((await client.post('/api/users/@me/two_factor_validate/', { token: code(secret) })).statusCode).toBe(200)
  return secret as string
}

async function pendingLogin(email: string, password: string, ip: string) {
  const client = cookieClient(t.burrow.app, { ip })
  expect((await client.post('/api/login', { email, password })).statusCode).toBe(401)
  return client
}

it('throttles second-factor attempts per user, then per IP, with 429 and Retry-After', async () => {
  const secret = await withTwoFactor(t.creds.email, t.creds.password, '10.1.0.1')
  const member = await createMember(t, 1)
  await withTwoFactor(member.user.email, 'correct horse battery', '10.1.0.2')

  // The demo user's second step from 10.2.0.1: the setup code above was its first attempt.
  const client = await pendingLogin(t.creds.email, t.creds.password, '10.2.0.1')
  for (let i = 0; i < 2; i++) {
    const res = await client.post('/api/login/token', { token: '000000' })
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe('2fa_invalid')
  }
  const throttled = await client.post('/api/login/token', { token: code(secret) })
  expect(throttled.statusCode).toBe(429)
  expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0)
  expect(throttled.json()).toEqual({
    type: 'throttled_error',
    code: 'throttled',
    detail: expect.stringMatching(/^Request was throttled\. Expected available in \d+ seconds\.$/),
    attr: null,
  })
  expect((await client.get('/api/users/@me/')).statusCode).toBe(401)
  // Another address does not help: the limit is the user's.
  const elsewhere = await pendingLogin(t.creds.email, t.creds.password, '10.3.0.1')
  expect((await elsewhere.post('/api/login/token', { token: code(secret) })).statusCode).toBe(429)

  // From one address, codes for several users count together: three of the address's five were the demo
  // user's, so the member's third try from 10.2.0.1 is over the address's limit (its own limit is not reached).
  const fromSameIp = await pendingLogin(member.user.email, 'correct horse battery', '10.2.0.1')
  expect((await fromSameIp.post('/api/login/token', { token: '000000' })).statusCode).toBe(400)
  expect((await fromSameIp.post('/api/login/token', { token: '000000' })).statusCode).toBe(400)
  expect((await fromSameIp.post('/api/login/token', { token: '000000' })).statusCode).toBe(429)

  // The counters live in the metadata store, where every process reads them.
  const rows = await t.burrow.meta.db
    .selectFrom('rate_limit_counters' as never)
    .selectAll()
    .execute()
  const keys = (rows as { key: string }[]).map((r) => r.key)
  expect(keys.some((k) => k.startsWith('otp-user:'))).toBe(true)
  expect(keys.some((k) => k.startsWith('otp-ip:10.2.0.1:'))).toBe(true)
})
