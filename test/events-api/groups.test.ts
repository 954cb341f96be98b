import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKey, createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { captureFixture } from '../persons/fixtures.js'

let t: TestApp
let base: string

/** Three companies, created a minute apart (acme first), and one project. */
const companies = [
  { key: 'acme', set: { name: 'Acme', plan: 'pro' } },
  { key: 'globex', set: { name: 'Globex', plan: 'free' } },
  { key: 'initech', set: { name: 'Initech', plan: 'pro', seats: 40 } },
]

beforeAll(async () => {
  t = await startTestApp()
  base = `/api/projects/${t.creds.project_id}`
  await captureFixture(t, t.creds.project_api_key, [
    ...companies.map((c, i) => ({
      event: '$groupidentify',
      distinct_id: 'admin',
      timestamp: `2026-11-20T10:0${i}:00.000Z`,
      properties: { $group_type: 'company', $group_key: c.key, $group_set: c.set },
    })),
    {
      event: '$groupidentify',
      distinct_id: 'admin',
      timestamp: '2026-11-20T10:05:00.000Z',
      properties: { $group_type: 'project', $group_key: 'p1', $group_set: { name: 'P1' } },
    },
  ])
}, 120_000)
afterAll(() => t?.close())

const get = (url: string, headers: Record<string, string> = t.auth) =>
  t.burrow.app.inject({ method: 'GET', url, headers })
const pathOf = (url: string) => {
  const u = new URL(url)
  return `${u.pathname}${u.search}`
}
const keys = (body: { results: { group_key: string }[] }) => body.results.map((g) => g.group_key)

describe('groups', () => {
  it('lists a type newest first, with search and cursor pages both ways', async () => {
    const all = await get(`${base}/groups/?group_type_index=0`)
    expect(all.statusCode).toBe(200)
    expect(keys(all.json())).toEqual(['initech', 'globex', 'acme'])
    expect(all.json().results[2]).toEqual({
      group_type_index: 0,
      group_key: 'acme',
      group_properties: { name: 'Acme', plan: 'pro' },
      created_at: '2026-11-20T10:00:00.000Z',
    })
    expect(keys((await get(`${base}/groups/?group_type_index=1`)).json())).toEqual(['p1'])
    expect(keys((await get(`${base}/groups/?group_type_index=0&search=GLOB`)).json())).toEqual(['globex'])
    // properties match too
    expect(keys((await get(`${base}/groups/?group_type_index=0&search=initech`)).json())).toEqual(['initech'])
    const first = (await get(`${base}/groups/?group_type_index=0&limit=2`)).json()
    expect(keys(first)).toEqual(['initech', 'globex'])
    expect(first.previous).toBeNull()
    const second = (await get(pathOf(first.next))).json()
    expect(keys(second)).toEqual(['acme'])
    expect(second.next).toBeNull()
    expect(keys((await get(pathOf(second.previous))).json())).toEqual(['initech', 'globex'])
  })

  it('refuses a missing type index and a bad cursor', async () => {
    const res = await get(`${base}/groups/`)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', code: 'required', attr: 'group_type_index' })
    const cursor = await get(`${base}/groups/?group_type_index=0&cursor=nonsense`)
    expect(cursor.statusCode).toBe(400)
    expect(cursor.json().attr).toBe('cursor')
    expect((await get(`${base}/groups/?group_type_index=9`)).statusCode).toBe(400)
  })

  it('finds one group by key', async () => {
    const res = await get(`${base}/groups/find/?group_type_index=0&group_key=globex`)
    expect(res.statusCode).toBe(200)
    expect(res.json().group_properties).toEqual({ name: 'Globex', plan: 'free' })
    expect((await get(`${base}/groups/find/?group_type_index=0&group_key=nope`)).statusCode).toBe(404)
    expect((await get(`${base}/groups/find/?group_type_index=1&group_key=acme`)).statusCode).toBe(404)
  })

  it('answers property names and values', async () => {
    const defs = await get(`${base}/groups/property_definitions/`)
    expect(defs.statusCode).toBe(200)
    // name and plan on all three companies, seats on one; most common first, then by name
    expect(defs.json()).toEqual({
      '0': [
        { name: 'name', count: 3 },
        { name: 'plan', count: 3 },
        { name: 'seats', count: 1 },
      ],
      '1': [{ name: 'name', count: 1 }],
    })
    const values = await get(`${base}/groups/property_values/?group_type_index=0&key=plan`)
    expect(values.json()).toEqual([
      { name: 'pro', count: 2 },
      { name: 'free', count: 1 },
    ])
    expect((await get(`${base}/groups/property_values/?group_type_index=0`)).statusCode).toBe(400)
  })
})

describe('group types', () => {
  it('lists and names group types', async () => {
    const res = await get(`${base}/groups_types/`)
    expect(res.json()).toEqual([
      { group_type: 'company', group_type_index: 0, name_singular: null, name_plural: null },
      { group_type: 'project', group_type_index: 1, name_singular: null, name_plural: null },
    ])
    const update = await t.burrow.app.inject({
      method: 'PATCH',
      url: `${base}/groups_types/update_metadata/`,
      headers: t.auth,
      payload: [{ group_type_index: 0, name_singular: 'Company', name_plural: 'Companies' }],
    })
    expect(update.statusCode).toBe(200)
    expect(update.json()[0]).toEqual({
      group_type: 'company',
      group_type_index: 0,
      name_singular: 'Company',
      name_plural: 'Companies',
    })
    expect(update.json()[1].name_singular).toBeNull()
    const unknown = await t.burrow.app.inject({
      method: 'PATCH',
      url: `${base}/groups_types/update_metadata/`,
      headers: t.auth,
      payload: [{ group_type_index: 3, name_singular: 'X' }],
    })
    expect(unknown.statusCode).toBe(404)
  })

  it('needs group scopes and keeps projects apart', async () => {
    const reader = await createKey(t, ['group:read'])
    expect((await get(`${base}/groups_types/`, reader)).statusCode).toBe(200)
    const denied = await t.burrow.app.inject({
      method: 'PATCH',
      url: `${base}/groups_types/update_metadata/`,
      headers: reader,
      payload: [],
    })
    expect(denied.statusCode).toBe(403)
    const tenant = await createTenant(t)
    expect((await get(`${base}/groups_types/`, tenant.auth)).statusCode).toBe(404)
    expect((await get(`/api/projects/${tenant.project.id}/groups_types/`, tenant.auth)).json()).toEqual([])
    expect((await get(`/api/projects/${tenant.project.id}/groups/property_definitions/`, tenant.auth)).json()).toEqual(
      {},
    )
  })
})
