import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'

const SITE = 'https://analytics.example.com'
const FOREIGN = 'https://evil.example.net'

let t: TestApp
beforeAll(async () => {
  t = await startTestApp({ env: { SITE_URL: SITE } })
})
afterAll(() => t.close())

const preflight = (url: string, origin: string, method = 'GET') =>
  t.burrow.app.inject({
    method: 'OPTIONS',
    url,
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization' },
  })

describe('CORS', () => {
  it('lets only the site origin send credentials to the management API', async () => {
    const foreign = await preflight('/api/projects/', FOREIGN)
    expect(foreign.statusCode).toBe(204)
    expect(foreign.headers['access-control-allow-credentials']).toBeUndefined()

    const site = await preflight('/api/projects/', SITE)
    expect(site.statusCode).toBe(204)
    expect(site.headers['access-control-allow-origin']).toBe(SITE)
    expect(site.headers['access-control-allow-credentials']).toBe('true')

    const read = await t.burrow.app.inject({
      method: 'GET',
      url: '/api/projects/',
      headers: { ...t.auth, origin: FOREIGN },
    })
    expect(read.statusCode).toBe(200)
    expect(read.headers['access-control-allow-credentials']).toBeUndefined()
    expect(read.headers.vary).toContain('Origin')
  })

  // capture-rs (router.rs: mirrored origin, allow_credentials) and Django's cors_response: posthog-js's XHR
  // transport sends credentials, and these endpoints read no cookie, so no login is usable through them.
  it('keeps capture and /flags open to every origin, with credentials as PostHog allows them', async () => {
    for (const url of ['/i/v0/e/', '/batch/', '/flags/?v=2', '/decide/?v=3']) {
      const res = await preflight(url, FOREIGN, 'POST')
      expect(res.statusCode, url).toBe(204)
      expect(res.headers['access-control-allow-origin'], url).toBe(FOREIGN)
      expect(res.headers['access-control-allow-credentials'], url).toBe('true')
    }
    // a path that only starts like an SDK endpoint is the API's, and gets no credentials
    const lookalike = await preflight('/events/', FOREIGN, 'POST')
    expect(lookalike.headers['access-control-allow-credentials']).toBeUndefined()
    const captured = await t.burrow.app.inject({
      method: 'POST',
      url: '/i/v0/e/',
      headers: { origin: FOREIGN, 'content-type': 'application/json' },
      payload: JSON.stringify({ api_key: t.creds.project_api_key, event: 'cors', distinct_id: 'cors-1' }),
    })
    expect(captured.statusCode).toBe(200)
    expect(captured.headers['access-control-allow-origin']).toBe(FOREIGN)
    expect(captured.headers['access-control-allow-credentials']).toBe('true')

    const flags = await t.burrow.app.inject({
      method: 'POST',
      url: '/flags/?v=2',
      headers: { origin: FOREIGN },
      payload: { token: t.creds.project_api_key, distinct_id: 'cors-1' },
    })
    expect(flags.statusCode).toBe(200)
    expect(flags.headers['access-control-allow-origin']).toBe(FOREIGN)
    expect(flags.headers['access-control-allow-credentials']).toBe('true')
  })
})

describe('security headers', () => {
  it('sends nosniff on API answers, errors included', async () => {
    const ok = await t.burrow.app.inject({ method: 'GET', url: '/api/projects/', headers: t.auth })
    expect(ok.headers['x-content-type-options']).toBe('nosniff')
    const missing = await t.burrow.app.inject({ method: 'GET', url: '/api/projects/', headers: {} })
    expect(missing.statusCode).toBe(401)
    expect(missing.headers['x-content-type-options']).toBe('nosniff')
  })

  it('keeps the API docs page from being framed, with a policy that works over plain HTTP', async () => {
    const page = await t.burrow.app.inject({ method: 'GET', url: '/api/schema/swagger-ui/' })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toMatch(/^text\/html/)
    expect(page.headers['x-frame-options']).toBe('DENY')
    expect(page.headers['x-content-type-options']).toBe('nosniff')
    const policy = String(page.headers['content-security-policy'])
    expect(policy).toContain("frame-ancestors 'none'")
    expect(policy).toContain("default-src 'self'")
    expect(policy).not.toContain('upgrade-insecure-requests')
    // The page loads its scripts from this origin only.
    expect(policy).toContain("script-src 'self';")
    expect(policy).toContain("object-src 'none'")
  })
})
