import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  NO_PERSONAL_API_KEY_ACCESS,
  OWN_KEY_ONLY,
  SESSION_ONLY,
  WEB_AUTHENTICATED_ONLY,
} from '../../src/http/scopes.js'
import { createKey, createTenant, startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let unrelatedScope: { authorization: string }
let otherProjectOnly: { authorization: string }
let otherProjectId: number
let outsider: Awaited<ReturnType<typeof createTenant>>

beforeAll(async () => {
  // Hundreds of deliberate 401s from one address: the failed-authentication limit would stop the matrix half-way.
  t = await startTestApp({ env: { RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '0' } })
  unrelatedScope = await createKey(t, ['webhook:read'])
  const other = await t.burrow.app.inject({
    method: 'POST',
    url: '/api/projects/',
    headers: t.auth,
    payload: { name: 'Second project' },
  })
  otherProjectId = other.json().id
  otherProjectOnly = await createKey(t, ['*'], [otherProjectId])
  outsider = await createTenant(t)
})
afterAll(() => t.close())

/** Fills a route pattern's parameters: the demo project for `:projectId`, a harmless value otherwise. */
function concreteUrl(url: string): string {
  return url.replace(/:projectId/g, String(t.creds.project_id)).replace(/:[A-Za-z_]+/g, '1')
}

describe('auth matrix over every scoped route', () => {
  it('covers the foundation routes at least', () => {
    const urls = t.burrow.routes.filter((r) => r.scope).map((r) => `${r.method} ${r.url}`)
    expect(urls).toEqual(
      expect.arrayContaining(['GET /api/projects/', 'GET /api/projects/:projectId/', 'GET /api/users/@me/']),
    )
  })

  // Route schemas compile on a route's first call, so this sweep over every route also compiles them all (once
  // done at start, in the hook): hence more time than the default.
  it('answers 401 without a key, 401 with a bad key, 403 without the scope, and lets a good key through', async () => {
    const scoped = t.burrow.routes.filter((r) => r.scope && r.scope !== SESSION_ONLY && r.scope !== OWN_KEY_ONLY)
    for (const route of scoped) {
      const url = concreteUrl(route.url)
      const method = route.method as 'GET'
      const label = `${route.method} ${route.url}`

      const none = await t.burrow.app.inject({ method, url })
      expect(none.statusCode, label).toBe(401)
      expect(none.json(), label).toMatchObject({ type: 'authentication_error', code: 'not_authenticated', attr: null })

      const bad = await t.burrow.app.inject({ method, url, headers: { authorization: 'Bearer phx_not_a_real_key' } })
      expect(bad.statusCode, label).toBe(401)
      expect(bad.json().code, label).toBe('authentication_failed')

      const noScope = await t.burrow.app.inject({ method, url, headers: unrelatedScope })
      expect(noScope.statusCode, label).toBe(403)
      expect(noScope.json().detail, label).toBe(`API key missing required scope '${route.scope}'`)

      if (route.url.includes(':projectId')) {
        const wrongProject = await t.burrow.app.inject({ method, url, headers: otherProjectOnly })
        expect(wrongProject.statusCode, label).toBe(403)
        expect(wrongProject.json().detail, label).toContain('does not have access to the requested project')

        // Another organization's all-scopes key sees the project as missing, whatever the route.
        const foreign = await t.burrow.app.inject({ method, url, headers: outsider.auth, payload: {} })
        expect(foreign.statusCode, label).toBe(404)
        expect(foreign.json(), label).toEqual({
          type: 'invalid_request',
          code: 'not_found',
          detail: 'Project not found.',
          attr: null,
        })
      }

      const good = await t.burrow.app.inject({
        method,
        url,
        headers: t.auth,
        payload: method === 'GET' ? undefined : {},
      })
      if (route.webOnly) {
        // Served to logged-in users only (as PostHog serves them): a key that passed every other check is refused.
        expect(good.statusCode, label).toBe(403)
        expect(good.json(), label).toEqual({
          type: 'authentication_error',
          code: 'permission_denied',
          detail: WEB_AUTHENTICATED_ONLY,
          attr: null,
        })
        continue
      }
      expect([401, 403], label).not.toContain(good.statusCode)
    }
  }, 120_000)

  it('marks the actions PostHog serves to logged-in users only', () => {
    const webOnly = t.burrow.routes.filter((r) => r.webOnly).map((r) => `${r.method} ${r.url}`)
    expect(webOnly).toEqual(
      expect.arrayContaining([
        'PATCH /api/projects/:projectId/llm_prompts/name/:name/',
        'POST /api/projects/:projectId/llm_prompts/name/:name/archive/',
      ]),
    )
    // Each still names its scope: a key is checked for it (and its project) first, as PostHog does.
    for (const route of t.burrow.routes.filter((r) => r.webOnly)) expect(route.scope).toBe('llm_prompt:write')
  })

  it('refuses every personal API key on the routes that manage keys, the all-scopes key included', async () => {
    const sessionOnly = t.burrow.routes.filter((r) => r.scope === SESSION_ONLY)
    expect(sessionOnly.map((r) => `${r.method} ${r.url}`)).toEqual(
      expect.arrayContaining([
        'GET /api/personal_api_keys/',
        'POST /api/personal_api_keys/',
        'DELETE /api/personal_api_keys/:keyId/',
        'POST /api/personal_api_keys/:keyId/roll/',
      ]),
    )
    for (const route of sessionOnly) {
      const method = route.method as 'GET'
      const url = concreteUrl(route.url)
      const label = `${route.method} ${route.url}`
      const none = await t.burrow.app.inject({ method, url })
      expect(none.statusCode, label).toBe(401)
      const bad = await t.burrow.app.inject({ method, url, headers: { authorization: 'Bearer phx_not_a_real_key' } })
      expect(bad.statusCode, label).toBe(401)
      for (const headers of [t.auth, unrelatedScope, otherProjectOnly, outsider.auth]) {
        const res = await t.burrow.app.inject({ method, url, headers, payload: method === 'GET' ? undefined : {} })
        expect(res.statusCode, label).toBe(403)
        expect(res.json(), label).toEqual({
          type: 'authentication_error',
          code: 'permission_denied',
          detail: NO_PERSONAL_API_KEY_ACCESS,
          attr: null,
        })
      }
    }
  })

  it('answers 404 in PostHog shape for an unknown project', async () => {
    const res = await t.burrow.app.inject({ method: 'GET', url: '/api/projects/999999/', headers: t.auth })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({ type: 'invalid_request', code: 'not_found', detail: 'Project not found.', attr: null })
  })

  it('treats x:write as also granting x:read', async () => {
    const writer = await createKey(t, ['project:write'])
    const res = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${t.creds.project_id}/`,
      headers: writer,
    })
    expect(res.statusCode).toBe(200)
  })

  it('lets a key scoped to one project read only that project', async () => {
    const own = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${otherProjectId}/`,
      headers: otherProjectOnly,
    })
    expect(own.statusCode).toBe(200)
    const list = await t.burrow.app.inject({ method: 'GET', url: '/api/projects/', headers: otherProjectOnly })
    expect(list.json().results.map((p: { id: number }) => p.id)).toEqual([otherProjectId])
    const demo = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${t.creds.project_id}/`,
      headers: otherProjectOnly,
    })
    expect(demo.statusCode).toBe(403)
  })

  it('accepts the key from the query string as PostHog does', async () => {
    const res = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/?personal_api_key=${t.creds.personal_api_key}`,
    })
    expect(res.statusCode).toBe(200)
  })
})
