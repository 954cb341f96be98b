import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMember, createTenant, startTestApp, type TestApp } from '../helpers/app.js'

// Mirrors PostHog's ee/api/test/test_team.py and posthog/api/test/test_organization.py: organization levels are
// member 1, admin 8, owner 15; creating or changing projects and changing the organization needs admin.

let t: TestApp
let member: Awaited<ReturnType<typeof createMember>>
let admin: Awaited<ReturnType<typeof createMember>>
let outsider: Awaited<ReturnType<typeof createTenant>>

const insufficient = {
  type: 'authentication_error',
  code: 'permission_denied',
  detail: 'Your organization access level is insufficient.',
  attr: null,
}
const projectNotFound = { type: 'invalid_request', code: 'not_found', detail: 'Project not found.', attr: null }

beforeAll(async () => {
  t = await startTestApp()
  member = await createMember(t, 1)
  admin = await createMember(t, 8)
  outsider = await createTenant(t)
})
afterAll(() => t.close())

const projectCount = async () => (await t.burrow.meta.db.selectFrom('projects').select('id').execute()).length

describe('creating projects', () => {
  it('test_non_admin_cannot_create_team', async () => {
    const before = await projectCount()
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: '/api/projects/',
      headers: member.auth,
      payload: { name: 'Test' },
    })
    expect(res.statusCode).toBe(403)
    expect(res.json()).toEqual(insufficient)
    expect(await projectCount()).toBe(before)
  })

  it('test_create_team (as an admin)', async () => {
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: '/api/projects/',
      headers: admin.auth,
      payload: { name: 'Made by an admin' },
    })
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject({ name: 'Made by an admin', organization: admin.organizationId })
  })
})

describe('updating projects', () => {
  it('refuses a member changing any project of the organization', async () => {
    const res = await t.burrow.app.inject({
      method: 'PATCH',
      url: `/api/projects/${t.creds.project_id}/`,
      headers: member.auth,
      payload: { name: 'Taken over' },
    })
    expect(res.statusCode).toBe(403)
    expect(res.json()).toEqual(insufficient)
    const project = await t.burrow.stores.projects.get(t.creds.project_id)
    expect(project?.name).toBe('Demo Project')
  })

  it('lets an admin change a project', async () => {
    const res = await t.burrow.app.inject({
      method: 'PATCH',
      url: `/api/projects/${t.creds.project_id}/`,
      headers: admin.auth,
      payload: { timezone: 'Europe/Berlin' },
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ id: t.creds.project_id, timezone: 'Europe/Berlin' })
  })

  it('test_fetch_team_as_org_member_works', async () => {
    const res = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${t.creds.project_id}/`,
      headers: member.auth,
    })
    expect(res.statusCode).toBe(200)
    expect(res.json().id).toBe(t.creds.project_id)
    const flags = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${t.creds.project_id}/feature_flags/`,
      headers: member.auth,
    })
    expect(flags.statusCode).toBe(200)
  })
})

describe('outsiders', () => {
  it('test_fetch_team_as_org_outsider and test_fetch_nonexistent_team answer the same 404', async () => {
    const foreign = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${t.creds.project_id}/`,
      headers: outsider.auth,
    })
    const missing = await t.burrow.app.inject({ method: 'GET', url: '/api/projects/234444/', headers: outsider.auth })
    expect(foreign.statusCode).toBe(404)
    expect(missing.statusCode).toBe(404)
    expect(foreign.json()).toEqual(projectNotFound)
    expect(missing.json()).toEqual(foreign.json())
  })

  it('cannot tell an existing project from a missing one on any project route, whatever the method', async () => {
    const projectRoutes = t.burrow.routes.filter((r) => r.scope && r.url.includes(':projectId'))
    for (const route of projectRoutes) {
      const method = route.method as 'GET'
      for (const projectId of [t.creds.project_id, 234444]) {
        const url = route.url.replace(/:projectId/g, String(projectId)).replace(/:[A-Za-z_]+/g, '1')
        const res = await t.burrow.app.inject({
          method,
          url,
          headers: outsider.auth,
          payload: method === 'GET' ? undefined : {},
        })
        expect(res.statusCode, `${route.method} ${url}`).toBe(404)
        expect(res.json(), `${route.method} ${url}`).toEqual(projectNotFound)
      }
    }
  })

  it('cannot change a project of another organization', async () => {
    const res = await t.burrow.app.inject({
      method: 'PATCH',
      url: `/api/projects/${t.creds.project_id}/`,
      headers: outsider.auth,
      payload: { name: 'Not yours' },
    })
    expect(res.statusCode).toBe(404)
  })
})

describe('updating the organization', () => {
  it('test_cannot_update_organization_if_not_owner_or_admin', async () => {
    const res = await t.burrow.app.inject({
      method: 'PATCH',
      url: `/api/organizations/${member.organizationId}/`,
      headers: member.auth,
      payload: { name: 'ASDFG' },
    })
    expect(res.statusCode).toBe(403)
    expect(res.json()).toEqual(insufficient)
    const current = await t.burrow.app.inject({
      method: 'PATCH',
      url: '/api/organizations/@current/',
      headers: member.auth,
      payload: { name: 'ASDFG' },
    })
    expect(current.statusCode).toBe(403)
    expect((await t.burrow.stores.organizations.get(member.organizationId))?.name).not.toBe('ASDFG')
  })

  it('test_update_organization_if_admin', async () => {
    const res = await t.burrow.app.inject({
      method: 'PATCH',
      url: `/api/organizations/${admin.organizationId}/`,
      headers: admin.auth,
      payload: { name: 'QWERTY' },
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ id: admin.organizationId, name: 'QWERTY', membership_level: 8 })
    expect((await t.burrow.stores.organizations.get(admin.organizationId))?.name).toBe('QWERTY')
  })

  it('test_update_organization_if_owner', async () => {
    const res = await t.burrow.app.inject({
      method: 'PATCH',
      url: '/api/organizations/@current/',
      headers: t.auth,
      payload: { name: 'Demo Organization' },
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ name: 'Demo Organization', membership_level: 15 })
  })

  it('answers 404 to an outsider, as for a missing organization', async () => {
    const res = await t.burrow.app.inject({
      method: 'PATCH',
      url: `/api/organizations/${admin.organizationId}/`,
      headers: outsider.auth,
      payload: { name: 'Mine now' },
    })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toMatchObject({ code: 'not_found', detail: 'Organization not found.' })
  })
})
