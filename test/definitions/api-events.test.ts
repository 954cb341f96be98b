import crypto from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DiscoveryItem } from '../../src/definitions/service.js'
import { createKey, startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let base: string

const item = (eventName: string, eventProperties: [string, string | null][] = []): DiscoveryItem => ({
  eventName,
  eventProperties: eventProperties.map(([name, type]) => ({ name, type })),
  personProperties: [],
  groupProperties: [],
})

async function call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, payload?: object, headers = t.auth) {
  const res = await t.burrow.app.inject({ method, url: `${base}${path}`, headers, payload })
  return { status: res.statusCode, body: res.body ? res.json() : null }
}
const names = (body: { results: { name: string }[] }) => body.results.map((r) => r.name)
const idOf = async (name: string) =>
  (await call('GET', `/event_definitions/?search=${encodeURIComponent(name)}`)).body.results.find(
    (r: { name: string }) => r.name === name,
  ).id as string

beforeAll(async () => {
  t = await startTestApp()
  base = `/api/projects/${t.creds.project_id}`
  const record = (items: DiscoveryItem[], at: string) =>
    t.burrow.services.definitions.recordDiscoveries(t.creds.project_id, items, new Date(at))
  await record(
    [
      item('$pageview', [
        ['$current_url', 'String'],
        ['$browser', 'String'],
      ]),
      item('$autocapture', [['$event_type', 'String']]),
      item('purchase', [
        ['price', 'Numeric'],
        ['currency', 'String'],
        ['paid_at', 'DateTime'],
        ['is_gift', 'Boolean'],
        ['note', null],
        ['distinct_id', 'String'],
      ]),
    ],
    '2025-03-09T10:00:00Z',
  )
  await record([item('signup', [['plan', 'String']]), item('Page View Custom')], '2025-03-10T09:00:00Z')
  await record([item('checkout started', [['cart size', 'Numeric']])], '2025-03-10T23:00:00Z')
})
afterAll(() => t.close())

describe('listing event definitions', () => {
  it('orders by the day last seen, newest first, then by name', async () => {
    const { status, body } = await call('GET', '/event_definitions/')
    expect(status).toBe(200)
    expect(body.count).toBe(6)
    expect(names(body)).toEqual([
      'Page View Custom',
      'checkout started',
      'signup',
      '$autocapture',
      '$pageview',
      'purchase',
    ])
    expect(body.results[0]).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Page View Custom',
      owner: null,
      description: null,
      tags: [],
      created_at: '2025-03-10T09:00:00.000Z',
      updated_at: null,
      updated_by: null,
      last_seen_at: '2025-03-10T09:00:00.000Z',
      last_updated_at: null,
      verified: false,
      verified_at: null,
      verified_by: null,
      hidden: false,
      is_action: false,
      action_id: null,
      is_calculating: false,
      last_calculated_at: null,
      created_by: null,
      post_to_slack: false,
      default_columns: [],
      volume_30_day: null,
      query_usage_30_day: null,
    })
  })

  it('takes explicit orderings, repeated or comma-separated', async () => {
    const byName = await call('GET', '/event_definitions/?ordering=name')
    expect(names(byName.body)).toEqual([
      '$autocapture',
      '$pageview',
      'Page View Custom',
      'checkout started',
      'purchase',
      'signup',
    ])
    const byNameDesc = await call('GET', '/event_definitions/?ordering=-name')
    expect(names(byNameDesc.body)).toEqual([...names(byName.body)].reverse())
    const lastSeen = await call('GET', '/event_definitions/?ordering=-last_seen_at&ordering=name')
    expect(names(lastSeen.body)).toEqual([
      'checkout started',
      'Page View Custom',
      'signup',
      '$autocapture',
      '$pageview',
      'purchase',
    ])
    const comma = await call('GET', '/event_definitions/?ordering=last_seen_at,-name')
    expect(names(comma.body)).toEqual([
      'purchase',
      '$pageview',
      '$autocapture',
      'signup',
      'Page View Custom',
      'checkout started',
    ])
  })

  it('filters by search words, PostHog labels, event type and excluded names', async () => {
    expect(names((await call('GET', '/event_definitions/?search=page%20view&ordering=name')).body)).toEqual([
      '$pageview',
      'Page View Custom',
    ])
    expect(names((await call('GET', '/event_definitions/?search=PURCH')).body)).toEqual(['purchase'])
    expect(names((await call('GET', '/event_definitions/?event_type=event_posthog&ordering=name')).body)).toEqual([
      '$autocapture',
      '$pageview',
    ])
    const custom = await call('GET', '/event_definitions/?event_type=event_custom&ordering=name')
    expect(names(custom.body)).toEqual(['Page View Custom', 'checkout started', 'purchase', 'signup'])
    const excluded = await call(
      'GET',
      `/event_definitions/?event_type=event_custom&ordering=name&excluded_properties=${encodeURIComponent('["signup","purchase"]')}`,
    )
    expect(names(excluded.body)).toEqual(['Page View Custom', 'checkout started'])
  })

  it('pages with limit and offset', async () => {
    const first = await call('GET', '/event_definitions/?ordering=name&limit=4')
    expect(first.body.count).toBe(6)
    expect(first.body.results).toHaveLength(4)
    const next = new URL(first.body.next)
    expect([next.searchParams.get('limit'), next.searchParams.get('offset')]).toEqual(['4', '4'])
    const second = await call('GET', `/event_definitions/${next.search}`)
    expect(names(second.body)).toEqual(['purchase', 'signup'])
    expect(second.body.next).toBeNull()
    expect(new URL(second.body.previous).searchParams.get('offset')).toBe('0')
  })

  it('rejects bad parameter values', async () => {
    for (const [query, attr, code] of [
      ['event_type=actions', 'event_type', 'invalid_choice'],
      ['limit=-3', 'limit', 'min_value'],
      ['offset=x', 'offset', 'invalid_input'],
      ['exclude_hidden=perhaps', 'exclude_hidden', 'invalid_input'],
    ]) {
      const res = await call('GET', `/event_definitions/?${query}`)
      expect(res.status, query).toBe(400)
      expect(res.body, query).toEqual({ type: 'validation_error', code, detail: expect.any(String), attr })
    }
  })
})

describe('changing event definitions', () => {
  it('creates a definition never seen, and refuses a duplicate name', async () => {
    const created = await call('POST', '/event_definitions/', { name: 'planned event', description: 'Coming soon' })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({
      name: 'planned event',
      description: 'Coming soon',
      created_at: null,
      last_seen_at: null,
      created_by: { email: t.creds.email },
    })
    // Never-seen definitions sort after the seen ones.
    expect(names((await call('GET', '/event_definitions/')).body).at(-1)).toBe('planned event')

    const duplicate = await call('POST', '/event_definitions/', { name: 'purchase' })
    expect(duplicate.status).toBe(400)
    expect(duplicate.body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: "Event definition with name 'purchase' already exists",
      attr: 'name',
    })
    const missing = await call('POST', '/event_definitions/', {})
    expect(missing.body).toMatchObject({ code: 'required', attr: 'name' })

    const log = await t.burrow.stores.activity.list(t.creds.project_id, 'EventDefinition', created.body.id)
    expect(log.map((l) => l.activity)).toEqual(['created'])
  })

  it('updates description, tags and owner, and logs the changes', async () => {
    const id = await idOf('signup')
    const me = await t.burrow.stores.users.getByEmail(t.creds.email)
    const res = await call('PATCH', `/event_definitions/${id}/`, {
      description: 'A new account',
      tags: ['Growth', 'growth', 'funnel'],
      owner: me!.id,
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      name: 'signup',
      description: 'A new account',
      tags: ['growth', 'funnel'],
      owner: { id: me!.id, email: t.creds.email },
      updated_by: { email: t.creds.email },
      last_updated_at: expect.any(String),
    })
    expect((await call('GET', `/event_definitions/${id}/`)).body.tags).toEqual(['growth', 'funnel'])
    expect(names((await call('GET', `/event_definitions/?tags=${encodeURIComponent('["funnel"]')}`)).body)).toEqual([
      'signup',
    ])

    const log = await t.burrow.stores.activity.list(t.creds.project_id, 'EventDefinition', id)
    expect(log[0].activity).toBe('changed')
    expect(JSON.parse(log[0].detail).changes).toEqual(
      expect.arrayContaining([
        { type: 'EventDefinition', action: 'changed', field: 'description', before: null, after: 'A new account' },
      ]),
    )

    const badOwner = await call('PATCH', `/event_definitions/${id}/`, { owner: 999_999 })
    expect(badOwner.status).toBe(400)
    expect(badOwner.body).toMatchObject({ code: 'does_not_exist', attr: 'owner' })
  })

  it('makes verified and hidden exclusive, and exclude_hidden drops hidden ones', async () => {
    const id = await idOf('checkout started')
    const both = await call('PATCH', `/event_definitions/${id}/`, { verified: true, hidden: true })
    expect(both.status).toBe(400)
    expect(both.body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'An event cannot be both hidden and verified',
      attr: null,
    })
    const verified = await call('PATCH', `/event_definitions/${id}/`, { verified: true })
    expect(verified.body).toMatchObject({ verified: true, verified_by: { email: t.creds.email }, hidden: false })
    const hidden = await call('PATCH', `/event_definitions/${id}/`, { hidden: true })
    expect(hidden.body).toMatchObject({ verified: false, verified_by: null, verified_at: null, hidden: true })
    expect(names((await call('GET', '/event_definitions/?exclude_hidden=true')).body)).not.toContain('checkout started')
    expect(names((await call('GET', '/event_definitions/')).body)).toContain('checkout started')
  })

  it('deletes with 204 and answers 404 afterwards, also for unknown ids', async () => {
    const created = await call('POST', '/event_definitions/', { name: 'short lived' })
    const deleted = await call('DELETE', `/event_definitions/${created.body.id}/`)
    expect(deleted.status).toBe(204)
    expect((await call('GET', `/event_definitions/${created.body.id}/`)).status).toBe(404)
    expect((await call('DELETE', `/event_definitions/${created.body.id}/`)).status).toBe(404)
    expect((await call('GET', `/event_definitions/${crypto.randomUUID()}/`)).body).toEqual({
      type: 'invalid_request',
      code: 'not_found',
      detail: 'Not found.',
      attr: null,
    })
  })

  it('needs the write scope to change and the read scope to list', async () => {
    const reader = await createKey(t, ['event_definition:read'])
    expect((await call('GET', '/event_definitions/', undefined, reader)).status).toBe(200)
    const denied = await call('POST', '/event_definitions/', { name: 'nope' }, reader)
    expect(denied.status).toBe(403)
    expect(denied.body.detail).toBe("API key missing required scope 'event_definition:write'")
  })
})

describe('event metrics', () => {
  it('counts the events of the last 30 days', async () => {
    const now = Date.now()
    const at = (daysAgo: number) =>
      new Date(now - daysAgo * 86_400_000).toISOString().replace('T', ' ').replace('Z', '')
    const row = (event: string, daysAgo: number) =>
      JSON.stringify({
        uuid: crypto.randomUUID(),
        team_id: t.creds.project_id,
        event,
        distinct_id: 'u1',
        person_id: '00000000-0000-0000-0000-000000000000',
        properties: '{}',
        timestamp: at(daysAgo),
        created_at: at(daysAgo),
      })
    await t.burrow.events.insertJsonEachRow(
      'events',
      [row('purchase', 1), row('purchase', 5), row('purchase', 29), row('purchase', 45), row('signup', 1)].join('\n'),
    )
    const res = await call('GET', `/event_definitions/${await idOf('purchase')}/metrics/`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ query_usage_30_day: 0, volume_30_day: 3 })
  })
})

describe('generated code', () => {
  it('builds typed wrappers from the project events and the properties seen on them', async () => {
    const ts = await call('GET', '/event_definitions/typescript/')
    expect(ts.status).toBe(200)
    expect(ts.body).toEqual({
      content: expect.any(String),
      event_count: expect.any(Number),
      schema_hash: expect.stringMatching(/^[0-9a-f]{32}$/),
      generator_version: '1.1.0',
    })
    // Custom events and $pageview; other $ events are SDK internals.
    expect(ts.body.content).toContain('purchase')
    expect(ts.body.content).toContain('$pageview')
    expect(ts.body.content).not.toContain('$autocapture')
    expect(ts.body.content).toContain('"price"?: number')
    expect(ts.body.content).toContain('"paid_at"?: string | Date')
    expect(ts.body.content).not.toContain('distinct_id')

    const python = await call('GET', '/event_definitions/python/')
    expect(python.body.generator_version).toBe('1.0.0')
    expect(python.body.content).toContain('PurchaseProps')
    expect(python.body.event_count).toBe(ts.body.event_count)

    const go = await call('GET', '/event_definitions/golang/')
    expect(go.body.content).toContain('package typed')
    expect(go.body.content).toContain('PurchaseCapture')

    const env = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/environments/${t.creds.project_id}/event_definitions/typescript/`,
      headers: t.auth,
    })
    expect(env.json().schema_hash).toBe(ts.body.schema_hash)
  })

  it('changes the schema hash when a new property is seen', async () => {
    const before = (await call('GET', '/event_definitions/typescript/')).body
    await t.burrow.services.definitions.recordDiscoveries(
      t.creds.project_id,
      [item('purchase', [['discount', 'Numeric']])],
      new Date('2025-03-11T00:00:00Z'),
    )
    const after = (await call('GET', '/event_definitions/typescript/')).body
    expect(after.schema_hash).not.toBe(before.schema_hash)
    expect(after.content).toContain('discount')
  })
})
