import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKey, createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { ALICE_ANON, captureFixture } from '../persons/fixtures.js'

let t: TestApp
let base: string

beforeAll(async () => {
  t = await startTestApp()
  base = `/api/projects/${t.creds.project_id}/events`
  await captureFixture(t)
}, 120_000)
afterAll(() => t?.close())

type Ev = { id: string; event: string; distinct_id: string; timestamp: string; properties: Record<string, unknown> }
const get = (url: string, headers: Record<string, string> = t.auth) =>
  t.burrow.app.inject({ method: 'GET', url, headers })
const list = async (query: string) => {
  const res = await get(`${base}/?${query}`)
  expect(res.statusCode).toBe(200)
  return res.json() as { next: string | null; results: Ev[] }
}
const q = (filters: unknown) => encodeURIComponent(JSON.stringify(filters))
const pathOf = (url: string) => {
  const u = new URL(url)
  return `${u.pathname}${u.search}`
}
const minutes = (events: Ev[]) => events.map((e) => new Date(e.timestamp).toISOString().slice(11, 16))

// The fixture (test/persons/fixtures.ts): 21 events — alice's anonymous $pageview at 09:30, each person's first event
// at 10:0N and a `clicked` at 11:0N (N = 0 … 9).
describe('events list', () => {
  it('lists newest first in PostHog shape', async () => {
    const body = await list('')
    expect(body.next).toBeNull()
    expect(body.results).toHaveLength(21)
    expect(minutes(body.results).slice(0, 3)).toEqual(['11:09', '11:08', '11:07'])
    expect(minutes(body.results).at(-1)).toBe('09:30')
    const first = body.results[0] as Ev & { person: unknown; elements: unknown[]; elements_chain: string }
    expect(first).toMatchObject({
      event: 'clicked',
      distinct_id: 'user-9',
      properties: { button: 'help' },
      person: { is_identified: false, distinct_ids: ['user-9'], properties: { email: 'user-9@example.com' } },
      elements: [],
      elements_chain: '',
    })
    expect(first.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(Date.parse(first.timestamp)).toBe(Date.parse('2026-11-20T11:09:00Z'))
    // the anonymous event belongs to alice now
    const anon = body.results.at(-1) as Ev & { person: { distinct_ids: string[] } }
    expect(anon.distinct_id).toBe(ALICE_ANON)
    expect(anon.person.distinct_ids).toEqual(['alice'])
  })

  it('follows next links to the end without repeats', async () => {
    const seen: string[] = []
    const times: number[] = []
    let url: string | null = `${base}/?limit=5`
    let pages = 0
    while (url) {
      const res = await get(url)
      expect(res.statusCode).toBe(200)
      const body = res.json() as { next: string | null; results: Ev[] }
      pages++
      for (const e of body.results) {
        seen.push(e.id)
        times.push(Date.parse(e.timestamp))
      }
      url = body.next ? pathOf(body.next) : null
    }
    // 21 by 5: 5 + 5 + 5 + 5 + 1
    expect(pages).toBe(5)
    expect(new Set(seen).size).toBe(21)
    expect(times).toEqual([...times].sort((a, b) => b - a))
  })

  it('filters by event, distinct id, person, properties and time', async () => {
    expect((await list('event=clicked')).results).toHaveLength(10)
    expect(minutes((await list('distinct_id=bob')).results)).toEqual(['11:01', '10:01'])
    const alice = (await get(`/api/projects/${t.creds.project_id}/persons/?distinct_id=alice`)).json().results[0]
    // her anonymous event counts too
    expect(minutes((await list(`person_id=${alice.id}`)).results)).toEqual(['11:00', '10:00', '09:30'])
    // even persons clicked buy: 0, 2, 4, 6, 8
    expect(minutes((await list(`properties=${q([{ key: 'button', value: 'buy' }])}`)).results)).toEqual([
      '11:08',
      '11:06',
      '11:04',
      '11:02',
      '11:00',
    ])
    // person properties: alice and carol are on pro
    const pro = (await list(`properties=${q([{ key: 'plan', value: 'pro', type: 'person' }])}`)).results
    expect(pro.map((e) => e.distinct_id).sort()).toEqual([ALICE_ANON, 'alice', 'alice', 'carol', 'carol'].sort())
    expect(minutes((await list('after=2026-11-20T11:04:30Z')).results)).toEqual([
      '11:09',
      '11:08',
      '11:07',
      '11:06',
      '11:05',
    ])
    expect(minutes((await list('before=2026-11-20T10:00:30Z')).results)).toEqual(['10:00', '09:30'])
  })

  it('refuses malformed filters', async () => {
    const bad = await get(`${base}/?properties=${encodeURIComponent('[{')}`)
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'Properties are unparsable!',
      attr: 'properties',
    })
    const badDate = await get(`${base}/?before=yesterday-ish`)
    expect(badDate.statusCode).toBe(400)
    expect(badDate.json().attr).toBe('before')
    const badPerson = await get(`${base}/?person_id=alice`)
    expect(badPerson.statusCode).toBe(400)
    expect(badPerson.json().attr).toBe('person_id')
    expect((await get(`${base}/?limit=5000`)).statusCode).toBe(400)
  })
})

describe('one event and values', () => {
  it('retrieves by id, 404 otherwise', async () => {
    const [first] = (await list('limit=1')).results
    const res = await get(`${base}/${first.id}/`)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ id: first.id, event: 'clicked', distinct_id: 'user-9' })
    expect((await get(`${base}/00000000-0000-4000-8000-000000000000/`)).statusCode).toBe(404)
    const notUuid = await get(`${base}/nope/`)
    expect(notUuid.statusCode).toBe(404)
    expect(notUuid.json()).toMatchObject({ type: 'invalid_request', code: 'not_found' })
  })

  it("answers a property's values, most common first", async () => {
    const res = await get(`${base}/values/?key=button`)
    expect(res.statusCode).toBe(200)
    // five of each: ties in value order
    expect(res.json()).toEqual([{ name: 'buy' }, { name: 'help' }])
    expect((await get(`${base}/values/?key=button&value=HE`)).json()).toEqual([{ name: 'help' }])
    expect((await get(`${base}/values/?key=custom_event`)).json()).toEqual([{ name: 'clicked' }])
    const missing = await get(`${base}/values/`)
    expect(missing.statusCode).toBe(400)
    expect(missing.json().attr).toBe('key')
  })
})

describe('access and @current', () => {
  it('keeps projects apart', async () => {
    const tenant = await createTenant(t)
    expect((await get(`${base}/`, tenant.auth)).statusCode).toBe(404)
    const [first] = (await list('limit=1')).results
    const theirs = await get(`/api/projects/${tenant.project.id}/events/`, tenant.auth)
    expect(theirs.json().results).toEqual([])
    expect((await get(`/api/projects/${tenant.project.id}/events/${first.id}/`, tenant.auth)).statusCode).toBe(404)
    expect((await get(`/api/projects/999999/events/`)).statusCode).toBe(404)
    // the other tenant's key resolves @current to its own project
    expect((await get('/api/projects/@current/', tenant.auth)).json().id).toBe(tenant.project.id)
    expect((await get('/api/projects/@current/events/', tenant.auth)).json().results).toEqual([])
  })

  it('resolves @current on project and environment paths', async () => {
    const project = await get('/api/projects/@current/')
    expect(project.statusCode).toBe(200)
    expect(project.json().id).toBe(t.creds.project_id)
    expect((await get('/api/projects/@current/events/?limit=1')).json().results).toHaveLength(1)
    expect((await get('/api/environments/@current/events/?event=clicked')).json().results).toHaveLength(10)
    expect((await get('/api/environments/@current/persons/?distinct_id=bob')).json().results).toHaveLength(1)
    expect((await get('/api/projects/@current/cohorts/')).statusCode).toBe(200)
    expect((await get('/api/projects/@other/events/')).statusCode).toBe(404)
  })

  it('gives a key scoped to one project that project as @current', async () => {
    const second = await t.burrow.services.projects.create(
      {
        memberships: (await t.burrow.stores.organizations.memberships(
          (await t.burrow.stores.users.getByEmail(t.creds.email))!.id,
        )) as never,
        scopedTeams: null,
        scopedOrganizations: null,
        currentOrganizationId: null,
      },
      { name: 'Second' },
    )
    const scoped = await createKey(t, ['query:read', 'project:read'], [second.id])
    expect((await get('/api/projects/@current/', scoped)).json().id).toBe(second.id)
    expect((await get('/api/projects/@current/events/', scoped)).json().results).toEqual([])
    const twoProjects = await createKey(t, ['query:read'], [second.id, t.creds.project_id])
    // scoped to several: the user's current project
    expect((await get('/api/projects/@current/events/?limit=2', twoProjects)).json().results).toHaveLength(2)
  })

  it('needs the query:read scope', async () => {
    const personOnly = await createKey(t, ['person:read'])
    expect((await get(`${base}/`, personOnly)).statusCode).toBe(403)
  })
})
