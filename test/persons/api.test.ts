import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKey, createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { ALICE_ANON, captureFixture, createdAt, PERSON_COUNT } from './fixtures.js'

let t: TestApp
let base: string

beforeAll(async () => {
  t = await startTestApp()
  base = `/api/projects/${t.creds.project_id}/persons`
  await captureFixture(t)
}, 120_000)
afterAll(() => t?.close())

const get = (url: string, headers: Record<string, string> = t.auth) =>
  t.burrow.app.inject({ method: 'GET', url, headers })
const post = (url: string, payload: unknown, headers: Record<string, string> = t.auth) =>
  t.burrow.app.inject({ method: 'POST', url, headers, payload: payload as object })
const emails = (body: { results: { properties: { email?: string } }[] }) => body.results.map((p) => p.properties.email)
const pathOf = (url: string) => {
  const u = new URL(url)
  return `${u.pathname}${u.search}`
}

describe('persons list', () => {
  it('lists every person newest first in PostHog shape', async () => {
    const res = await get(`${base}/`)
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.next).toBeNull()
    expect(body.previous).toBeNull()
    expect(body.results).toHaveLength(PERSON_COUNT)
    // created one minute apart, p9 last
    expect(emails(body)).toEqual([
      'user-9@example.com',
      'user-8@example.com',
      'user-7@example.com',
      'user-6@example.com',
      'user-5@example.com',
      'user-4@example.com',
      'user-3@example.com',
      'carol@other.org',
      'bob@example.com',
      'alice@example.com',
    ])
    const alice = body.results[9]
    expect(alice).toMatchObject({
      name: 'alice@example.com',
      // the identified id before the SDK's anonymous one
      distinct_ids: ['alice', ALICE_ANON],
      properties: { email: 'alice@example.com', name: 'Alice', plan: 'pro' },
      created_at: createdAt(0),
      is_identified: true,
    })
    expect(alice.uuid).toBe(alice.id)
  })

  it('pages to the end and back with next and previous', async () => {
    const seen: (string | undefined)[] = []
    let url: string | null = `${base}/?limit=3`
    const pages: string[] = []
    while (url) {
      pages.push(url)
      const body: { next: string | null; results: { properties: { email?: string } }[] } = (await get(url)).json()
      seen.push(...emails(body))
      url = body.next ? pathOf(body.next) : null
    }
    // 10 persons by 3: 3 + 3 + 3 + 1
    expect(pages).toHaveLength(4)
    expect(seen).toHaveLength(PERSON_COUNT)
    expect(new Set(seen).size).toBe(PERSON_COUNT)
    const last = (await get(pages[3])).json()
    expect(emails(last)).toEqual(['alice@example.com'])
    const back = (await get(pathOf(last.previous))).json()
    // offset 9 - 3 = 6: p3, carol, bob
    expect(emails(back)).toEqual(['user-3@example.com', 'carol@other.org', 'bob@example.com'])
    const first = (await get(pathOf((await get(pathOf(back.previous))).json().previous))).json()
    expect(first.previous).toBeNull()
    expect(emails(first)).toEqual(['user-9@example.com', 'user-8@example.com', 'user-7@example.com'])
  })

  it('filters by property, email, distinct id and search', async () => {
    const pro = encodeURIComponent(JSON.stringify([{ key: 'plan', value: 'pro', type: 'person' }]))
    expect(emails((await get(`${base}/?properties=${pro}`)).json())).toEqual(['carol@other.org', 'alice@example.com'])
    const seats = encodeURIComponent(JSON.stringify([{ key: 'seats', value: 7, operator: 'gt', type: 'person' }]))
    expect(emails((await get(`${base}/?properties=${seats}`)).json())).toEqual([
      'user-9@example.com',
      'user-8@example.com',
    ])
    expect(emails((await get(`${base}/?email=bob@example.com`)).json())).toEqual(['bob@example.com'])
    expect(emails((await get(`${base}/?distinct_id=${ALICE_ANON}`)).json())).toEqual(['alice@example.com'])
    expect(emails((await get(`${base}/?distinct_id=nobody`)).json())).toEqual([])
    // by e-mail, any case, part of it
    expect(emails((await get(`${base}/?search=OTHER.org`)).json())).toEqual(['carol@other.org'])
    // by name
    expect(emails((await get(`${base}/?search=alic`)).json())).toEqual(['alice@example.com'])
    // by distinct id, exact
    expect(emails((await get(`${base}/?search=user-4`)).json())).toEqual(['user-4@example.com'])
    // `_` is not a wildcard
    expect(emails((await get(`${base}/?search=user_4`)).json())).toEqual([])
  })

  it('refuses malformed filters with PostHog errors', async () => {
    const bad = await get(`${base}/?properties=${encodeURIComponent('[{')}`)
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'Properties are unparsable!',
      attr: 'properties',
    })
    const badType = await get(
      `${base}/?properties=${encodeURIComponent(JSON.stringify([{ key: 'x', value: 1, type: 'event' }]))}`,
    )
    expect(badType.statusCode).toBe(400)
    expect(badType.json().attr).toBe('properties')
    const badLimit = await get(`${base}/?limit=0`)
    expect(badLimit.statusCode).toBe(400)
    expect(badLimit.json().type).toBe('validation_error')
  })

  it('exports the filtered list as CSV that parses back', async () => {
    const pro = encodeURIComponent(JSON.stringify([{ key: 'plan', value: 'pro', type: 'person' }]))
    for (const url of [
      `${base}/?format=csv&properties=${pro}`,
      `/api/projects/${t.creds.project_id}/persons.csv?properties=${pro}`,
    ]) {
      const res = await get(url)
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toMatch(/^text\/csv/)
      const rows = parseCsv(res.body)
      const header = rows[0]
      const records = rows.slice(1).map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]])))
      expect(records).toHaveLength(2)
      expect(records.map((r) => r['properties.email'])).toEqual(['carol@other.org', 'alice@example.com'])
      expect(records[1]['distinct_ids.0']).toBe('alice')
      expect(records[1]['distinct_ids.1']).toBe(ALICE_ANON)
      expect(records[1]['properties.name']).toBe('Alice')
      expect(records[1].created_at).toBe(createdAt(0))
    }
  })
})

describe('one person', () => {
  const aliceId = async () => (await get(`${base}/?distinct_id=alice`)).json().results[0].id as string

  it('retrieves by uuid, 404 for unknown, 400 for a distinct id', async () => {
    const id = await aliceId()
    const res = await get(`${base}/${id}/`)
    expect(res.statusCode).toBe(200)
    expect(res.json().properties.email).toBe('alice@example.com')
    expect((await get(`${base}/${id.toUpperCase()}/`)).json().id).toBe(id)
    const missing = await get(`${base}/00000000-0000-4000-8000-000000000000/`)
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toMatchObject({ type: 'invalid_request', code: 'not_found' })
    const distinct = await get(`${base}/alice/`)
    expect(distinct.statusCode).toBe(400)
    expect(distinct.json().detail).toContain('/persons?distinct_id=alice')
  })

  it('sets and removes properties through capture, and logs the activity', async () => {
    const id = (await get(`${base}/?distinct_id=bob`)).json().results[0].id as string
    const set = await post(`${base}/${id}/update_property/`, { key: 'plan', value: 'enterprise' })
    expect(set.statusCode).toBe(202)
    expect((await get(`${base}/${id}/`)).json().properties.plan).toBe('enterprise')
    const patch = await t.burrow.app.inject({
      method: 'PATCH',
      url: `${base}/${id}/`,
      headers: t.auth,
      payload: { properties: { seats: 3 } },
    })
    expect(patch.statusCode).toBe(202)
    expect((await get(`${base}/${id}/`)).json().properties).toMatchObject({ plan: 'enterprise', seats: 3 })
    const unset = await post(`${base}/${id}/delete_property/`, { $unset: 'seats' })
    expect(unset.statusCode).toBe(201)
    expect(unset.json()).toEqual({ success: true })
    expect((await get(`${base}/${id}/`)).json().properties).not.toHaveProperty('seats')
    const missingValue = await post(`${base}/${id}/update_property/`, { key: 'plan' })
    expect(missingValue.statusCode).toBe(400)
    expect(missingValue.json()).toMatchObject({ type: 'validation_error', code: 'required', attr: 'value' })
    const activity = (await get(`${base}/${id}/activity/`)).json().results
    expect(activity.map((a: { activity: string }) => a.activity)).toEqual(['delete_property', 'updated', 'updated'])
    // /flags sees the new property at once (its person cache was told)
    const flags = await post('/flags/?v=2', { token: t.creds.project_api_key, distinct_id: 'bob' }, {})
    expect(flags.statusCode).toBe(200)
  })

  it('splits a person into one per distinct id', async () => {
    await captureFixture(t, t.creds.project_api_key, [
      {
        event: '$identify',
        distinct_id: 'dana',
        timestamp: '2026-11-20T12:00:00.000Z',
        properties: { $anon_distinct_id: 'dana-phone', $set: { email: 'dana@example.com' } },
      },
    ])
    const dana = (await get(`${base}/?distinct_id=dana`)).json().results[0]
    expect(dana.distinct_ids).toEqual(['dana', 'dana-phone'])
    const bad = await post(`${base}/${dana.id}/split/`, { main_distinct_id: 'nobody' })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().attr).toBe('main_distinct_id')
    const res = await post(`${base}/${dana.id}/split/`, { main_distinct_id: 'dana' })
    expect(res.statusCode).toBe(201)
    const kept = (await get(`${base}/${dana.id}/`)).json()
    expect(kept.distinct_ids).toEqual(['dana'])
    expect(kept.properties.email).toBe('dana@example.com')
    const phone = (await get(`${base}/?distinct_id=dana-phone`)).json().results
    expect(phone).toHaveLength(1)
    expect(phone[0].id).not.toBe(dana.id)
    expect(phone[0].distinct_ids).toEqual(['dana-phone'])
    expect(phone[0].properties).toEqual({})
    // capture for the split id goes to its new person
    await captureFixture(t, t.creds.project_api_key, [
      {
        event: '$set',
        distinct_id: 'dana-phone',
        timestamp: '2026-11-20T12:05:00.000Z',
        properties: { $set: { device: 'phone' } },
      },
    ])
    expect((await get(`${base}/${phone[0].id}/`)).json().properties).toEqual({ device: 'phone' })
    expect((await get(`${base}/${dana.id}/`)).json().properties).not.toHaveProperty('device')
  })

  it("lists a person's cohorts", async () => {
    const cohort = await post(`/api/projects/${t.creds.project_id}/cohorts/`, {
      name: 'Pro',
      filters: {
        properties: { type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'person', operator: 'exact' }] },
      },
    })
    expect(cohort.statusCode).toBe(201)
    const alice = await aliceId()
    const res = await get(`${base}/cohorts/?person_id=${alice}`)
    expect(res.statusCode).toBe(200)
    expect(res.json().results.map((c: { name: string }) => c.name)).toEqual(['Pro'])
    const bob = (await get(`${base}/?distinct_id=user-3`)).json().results[0].id
    expect((await get(`${base}/cohorts/?person_id=${bob}`)).json().results).toEqual([])
    expect((await get(`${base}/cohorts/`)).statusCode).toBe(400)
  })

  it('answers the values of a person property', async () => {
    const res = await get(`${base}/values/?key=plan`)
    expect(res.statusCode).toBe(200)
    const values = res.json() as { name: string; count: number }[]
    // free: user-3..9 (7), pro: alice and carol; bob became enterprise above
    expect(values.find((v) => v.name === 'free')?.count).toBe(7)
    expect(values.find((v) => v.name === 'pro')?.count).toBe(2)
    // bob's earlier version (free) is stored too, but lists read each person's latest
    const free = encodeURIComponent(JSON.stringify([{ key: 'plan', value: 'free', type: 'person' }]))
    const listed = emails((await get(`${base}/?properties=${free}`)).json())
    expect(listed).toHaveLength(7)
    expect(listed).not.toContain('bob@example.com')
  })
})

describe('access', () => {
  it('needs person scopes and keeps other projects out', async () => {
    const reader = await createKey(t, ['person:read'])
    expect((await get(`${base}/`, reader)).statusCode).toBe(200)
    const id = (await get(`${base}/?distinct_id=user-5`)).json().results[0].id
    const denied = await t.burrow.app.inject({ method: 'DELETE', url: `${base}/${id}/`, headers: reader })
    expect(denied.statusCode).toBe(403)
    const other = await createKey(t, ['query:read'])
    expect((await get(`${base}/`, other)).statusCode).toBe(403)
    const tenant = await createTenant(t)
    // the other tenant's own project sees none of these persons; this project answers it 404
    expect((await get(`/api/projects/${tenant.project.id}/persons/`, tenant.auth)).json().results).toEqual([])
    expect((await get(`/api/projects/${tenant.project.id}/persons/${id}/`, tenant.auth)).statusCode).toBe(404)
    expect((await get(`${base}/`, tenant.auth)).statusCode).toBe(404)
    expect((await get(`${base}/${id}/`, tenant.auth)).statusCode).toBe(404)
  })

  it('refuses creating persons over the API', async () => {
    const res = await post(`${base}/`, { properties: {} })
    expect(res.statusCode).toBe(405)
  })
})

/** RFC 4180 rows. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let cell = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"'
        i++
      } else if (c === '"') quoted = false
      else cell += c
    } else if (c === '"') quoted = true
    else if (c === ',') {
      row.push(cell)
      cell = ''
    } else if (c === '\n') {
      row.push(cell.replace(/\r$/, ''))
      rows.push(row)
      row = []
      cell = ''
    } else cell += c
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell])
  return rows
}
