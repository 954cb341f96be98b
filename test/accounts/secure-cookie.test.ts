import { afterAll, beforeAll, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
beforeAll(async () => {
  t = await startTestApp({ env: { SITE_URL: 'https://burrow.example' } })
})
afterAll(() => t.close())

it('marks the session and CSRF cookies Secure when SITE_URL is https', async () => {
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: '/api/login',
    payload: { email: t.creds.email, password: t.creds.password },
  })
  expect(res.statusCode).toBe(200)
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? [])
  expect(cookies.find((c) => c.startsWith('sessionid='))).toMatch(/; HttpOnly; Secure$/)
  expect(cookies.find((c) => c.startsWith('posthog_csrftoken='))).toMatch(/; Secure$/)
})
