import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
beforeAll(async () => {
  t = await startTestApp()
})
afterAll(() => t.close())

describe('projects, users and organizations', () => {
  it('creates a project with its own project API key', async () => {
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: '/api/projects/',
      headers: t.auth,
      payload: { name: 'Web shop', timezone: 'Europe/Berlin' },
    })
    expect(res.statusCode).toBe(201)
    const body = res.json()
    expect(body.api_token).toMatch(/^phc_[0-9A-Za-z]{30,43}$/)
    expect(body.api_token).not.toBe(t.creds.project_api_key)
    expect(body).toMatchObject({ name: 'Web shop', timezone: 'Europe/Berlin' })

    const list = await t.burrow.app.inject({ method: 'GET', url: '/api/projects/', headers: t.auth })
    expect(list.json().results.map((p: { id: number }) => p.id)).toContain(body.id)

    const patched = await t.burrow.app.inject({
      method: 'PATCH',
      url: `/api/projects/${body.id}/`,
      headers: t.auth,
      payload: { name: 'Web shop EU' },
    })
    expect(patched.json()).toMatchObject({ id: body.id, name: 'Web shop EU', timezone: 'Europe/Berlin' })
  })

  it('never shows one organization the projects of another', async () => {
    const other = await createTenant(t)
    const mine = await t.burrow.app.inject({ method: 'GET', url: '/api/projects/', headers: t.auth })
    expect(mine.json().results.map((p: { id: number }) => p.id)).not.toContain(other.project.id)
    const theirs = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${other.project.id}/`,
      headers: t.auth,
    })
    expect(theirs.statusCode).toBe(404)
    expect(theirs.json().detail).toBe('Project not found.')
  })

  it('describes the calling user', async () => {
    const res = await t.burrow.app.inject({ method: 'GET', url: '/api/users/@me/', headers: t.auth })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ email: t.creds.email, team: { id: t.creds.project_id } })
  })

  it('reads the current organization', async () => {
    const res = await t.burrow.app.inject({ method: 'GET', url: '/api/organizations/@current/', headers: t.auth })
    expect(res.statusCode).toBe(200)
    expect(res.json().teams.map((p: { id: number }) => p.id)).toContain(t.creds.project_id)
  })

  it('serves the OpenAPI document', async () => {
    const res = await t.burrow.app.inject({ method: 'GET', url: '/api/schema/' })
    expect(res.statusCode).toBe(200)
    expect(res.json().paths).toHaveProperty('/api/projects/')
    const page = await t.burrow.app.inject({ method: 'GET', url: '/api/schema/swagger-ui/' })
    expect(page.statusCode).toBe(200)
  })

  it('answers the health check when both stores answer', async () => {
    // The embedded engine opens on first need: opened here, so that the check asks it.
    await t.burrow.eventStore.open()
    const res = await t.burrow.app.inject({ method: 'GET', url: '/_health' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ status: 'ok', meta: true, events: true, event_store: 'open' })
  })
})
