import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDefinitionService, type DiscoveryItem } from '../../src/definitions/service.js'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let base: string
const SEEN = new Date('2025-03-10T12:34:56Z')

const item = (
  eventName: string,
  eventProperties: [string, string | null][],
  personProperties: [string, string | null][] = [],
  groupProperties: [number, string, string | null][] = [],
): DiscoveryItem => ({
  eventName,
  eventProperties: eventProperties.map(([name, type]) => ({ name, type })),
  personProperties: personProperties.map(([name, type]) => ({ name, type })),
  groupProperties: groupProperties.map(([groupTypeIndex, name, type]) => ({ groupTypeIndex, name, type })),
})

const record = (items: DiscoveryItem[], at = SEEN, teamId = t.creds.project_id) =>
  t.burrow.services.definitions.recordDiscoveries(teamId, items, at)

async function get(path: string, headers: Record<string, string> = t.auth) {
  const res = await t.burrow.app.inject({ method: 'GET', url: `${base}${path}`, headers })
  return { status: res.statusCode, body: res.json() }
}
async function send(method: 'PATCH' | 'DELETE', path: string, payload?: object) {
  const res = await t.burrow.app.inject({ method, url: `${base}${path}`, headers: t.auth, payload })
  return { status: res.statusCode, body: res.body ? res.json() : null }
}
const names = (body: { results: { name: string }[] }) => body.results.map((r) => r.name)
const byName = async (name: string, type = 'event') => {
  const { body } = await get(`/property_definitions/?type=${type}&properties=${encodeURIComponent(name)}`)
  return body.results[0]
}

beforeAll(async () => {
  t = await startTestApp()
  base = `/api/projects/${t.creds.project_id}`
  await record([
    item(
      '$pageview',
      [
        ['$current_url', 'String'],
        ['$browser', 'String'],
        ['utm_source', 'String'],
        ['distinct_id', 'String'],
        ['$session_entry_url', 'String'],
      ],
      [
        ['email', 'String'],
        ['$browser', 'String'],
        ['$initial_browser', 'String'],
      ],
    ),
    item(
      'purchase',
      [
        ['price', 'Numeric'],
        ['currency', 'String'],
        ['coupon', null],
        ['$feature/beta-flag', 'String'],
        ['created_at', 'DateTime'],
        ['timestamp', 'Numeric'],
      ],
      [['age', 'Numeric']],
      [
        [0, 'company_size', 'Numeric'],
        [0, 'industry', 'String'],
        [1, 'region', 'String'],
      ],
    ),
    // Same batch, later sighting: the first type seen stays.
    item('purchase', [['price', 'String']]),
    item('signup', [
      ['plan', 'String'],
      ['is_trial', 'Boolean'],
    ]),
  ])
})
afterAll(() => t.close())

describe('recording discoveries', () => {
  it('keeps the first type seen and fills a missing type later', async () => {
    expect(await byName('price')).toMatchObject({ property_type: 'Numeric', is_numerical: true })
    expect(await byName('coupon')).toMatchObject({ property_type: null, is_numerical: false })
    await record([item('purchase', [['coupon', 'String']])], new Date('2025-03-10T12:40:00Z'))
    expect(await byName('coupon')).toMatchObject({ property_type: 'String' })
    await record([item('purchase', [['price', 'Boolean']])], new Date('2025-03-11T00:00:00Z'))
    expect(await byName('price')).toMatchObject({ property_type: 'Numeric' })
  })

  it('never writes a type over a stored one, even from a process without a cache', async () => {
    const fresh = createDefinitionService({
      store: t.burrow.stores.definitions,
      activity: t.burrow.stores.activity,
      events: t.burrow.events,
      clock: () => new Date(),
    })
    await fresh.recordDiscoveries(t.creds.project_id, [item('purchase', [['currency', 'Numeric']])], SEEN)
    expect(await byName('currency')).toMatchObject({ property_type: 'String', is_numerical: false })
  })

  it('records each definition once however often it is seen', async () => {
    const before = (await get('/property_definitions/?limit=1000')).body.count
    await record([item('purchase', [['price', 'Numeric']]), item('purchase', [['price', 'Numeric']])])
    expect((await get('/property_definitions/?limit=1000')).body.count).toBe(before)
  })

  it('moves last_seen_at forward to the hour and never back', async () => {
    const fresh = createDefinitionService({
      store: t.burrow.stores.definitions,
      activity: t.burrow.stores.activity,
      events: t.burrow.events,
      clock: () => new Date(),
    })
    const lastSeen = async () => {
      const { body } = await get('/event_definitions/?search=signup')
      return body.results[0].last_seen_at
    }
    expect(await lastSeen()).toBe('2025-03-10T12:00:00.000Z')
    await fresh.recordDiscoveries(t.creds.project_id, [item('signup', [])], new Date('2025-03-01T00:00:00Z'))
    expect(await lastSeen()).toBe('2025-03-10T12:00:00.000Z')
    await fresh.recordDiscoveries(t.creds.project_id, [item('signup', [])], new Date('2025-03-12T08:30:00Z'))
    expect(await lastSeen()).toBe('2025-03-12T08:00:00.000Z')
  })

  it('handles thousands of events in one call', async () => {
    const items: DiscoveryItem[] = []
    for (let i = 0; i < 3000; i++) {
      items.push(
        item(
          `bulk_event_${i % 300}`,
          Array.from({ length: 20 }, (_, j) => [`bulk_prop_${(i + j) % 700}`, 'String'] as [string, string]),
        ),
      )
    }
    await record(items)
    const { body } = await get('/property_definitions/?search=bulk_prop&limit=1')
    expect(body.count).toBe(700)
    const events = await get('/event_definitions/?search=bulk_event&limit=1')
    expect(events.body.count).toBe(300)
  })

  it('serves property types per kind for the query compiler, and forgets them when a type changes', async () => {
    const types = await t.burrow.services.definitions.getPropertyTypes(t.creds.project_id)
    expect(types.event).toMatchObject({
      price: 'Numeric',
      currency: 'String',
      is_trial: 'Boolean',
      created_at: 'DateTime',
    })
    expect(types.person).toMatchObject({ email: 'String', age: 'Numeric' })
    expect(types.group).toMatchObject({ company_size: 'Numeric', industry: 'String', region: 'String' })
    expect(types.event.email).toBeUndefined()

    const plan = await byName('plan')
    await send('PATCH', `/property_definitions/${plan.id}/`, { property_type: 'Numeric' })
    expect((await t.burrow.services.definitions.getPropertyTypes(t.creds.project_id)).event.plan).toBe('Numeric')
    await send('PATCH', `/property_definitions/${plan.id}/`, { property_type: 'String' })
  })
})

describe('listing property definitions', () => {
  it('answers the paginated envelope ordered by name, without the always-hidden properties', async () => {
    const { status, body } = await get('/property_definitions/?search=e&exclude_core_properties=false&limit=500')
    expect(status).toBe(200)
    expect(Object.keys(body).sort()).toEqual(['count', 'next', 'previous', 'results'])
    const listed = names(body)
    expect(listed).toEqual([...listed].sort())
    expect(listed).not.toContain('distinct_id')
    expect(listed).not.toContain('$session_entry_url')
    expect(body.results[0]).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: expect.any(String),
      description: null,
      tags: [],
      is_numerical: expect.any(Boolean),
      updated_at: expect.any(String),
      updated_by: null,
      is_seen_on_filtered_events: null,
      property_type: expect.any(String),
      verified: false,
      verified_at: null,
      verified_by: null,
      hidden: false,
    })
  })

  it('pages with limit and offset, linking next and previous pages', async () => {
    const first = await get('/property_definitions/?search=bulk_prop&limit=300')
    expect(first.body.results).toHaveLength(300)
    const next = new URL(first.body.next)
    expect(next.searchParams.get('limit')).toBe('300')
    expect(next.searchParams.get('offset')).toBe('300')
    expect(next.searchParams.get('search')).toBe('bulk_prop')
    expect(first.body.previous).toBeNull()

    const last = await get('/property_definitions/?search=bulk_prop&limit=300&offset=600')
    expect(last.body.results).toHaveLength(100)
    expect(last.body.next).toBeNull()
    expect(new URL(last.body.previous).searchParams.get('offset')).toBe('300')
    expect(names(last.body)[0]).toBe(names((await get('/property_definitions/?search=bulk_prop&limit=1000')).body)[600])
  })

  it('requires every search word, ignoring case, and matches PostHog labels', async () => {
    expect(names((await get('/property_definitions/?search=CURR')).body)).toEqual(['$current_url', 'currency'])
    expect(names((await get('/property_definitions/?search=current%20url')).body)).toEqual(['$current_url'])
    expect(names((await get('/property_definitions/?search=url%20zzz')).body)).toEqual([])
    const person = await get('/property_definitions/?type=person&search=latest%20browser')
    expect(names(person.body)).toEqual(['$browser'])
  })

  it('marks and orders the properties seen on the given events', async () => {
    const json = await get(`/property_definitions/?event_names=${encodeURIComponent('["purchase"]')}&search=c`)
    const seen = json.body.results.map((r: { name: string; is_seen_on_filtered_events: boolean }) => [
      r.name,
      r.is_seen_on_filtered_events,
    ])
    expect(seen).toEqual([
      ['coupon', true],
      ['created_at', true],
      ['currency', true],
      ['price', true],
      ['$current_url', false],
      ['utm_source', false],
    ])
    // $feature/ properties are never tied to an event.
    const flags = await get(
      `/property_definitions/?event_names=${encodeURIComponent('["purchase"]')}&is_feature_flag=true`,
    )
    expect(flags.body.results).toEqual([expect.objectContaining({ is_seen_on_filtered_events: false })])
    const comma = await get('/property_definitions/?event_names=signup,purchase&filter_by_event_names=true&search=p')
    expect(names(comma.body)).toEqual(['coupon', 'plan', 'price', 'timestamp'])
    expect(comma.body.results.every((r: { is_seen_on_filtered_events: boolean }) => r.is_seen_on_filtered_events)).toBe(
      true,
    )
  })

  it('filters by exact names, excluded names, core properties, numbers and feature flags', async () => {
    expect(names((await get('/property_definitions/?properties=price,plan,nope')).body)).toEqual(['plan', 'price'])
    const excluded = await get(
      `/property_definitions/?properties=price,plan,coupon&excluded_properties=${encodeURIComponent('["plan"]')}`,
    )
    expect(names(excluded.body)).toEqual(['coupon', 'price'])
    const excludedComma = await get(
      '/property_definitions/?properties=price,plan,coupon&excluded_properties=plan,price',
    )
    expect(names(excludedComma.body)).toEqual(['coupon'])

    const core = await get('/property_definitions/?exclude_core_properties=true&limit=1000')
    expect(names(core.body)).not.toContain('$current_url')
    expect(names(core.body)).not.toContain('utm_source')
    expect(names(core.body)).toContain('price')

    // timestamp is numeric here but never offered as a number to aggregate.
    expect(names((await get('/property_definitions/?is_numerical=true&limit=1000')).body)).toEqual(['price'])
    expect(names((await get('/property_definitions/?is_feature_flag=true')).body)).toEqual(['$feature/beta-flag'])
    const noFlags = await get('/property_definitions/?is_feature_flag=false&limit=1000')
    expect(names(noFlags.body)).not.toContain('$feature/beta-flag')
    expect(noFlags.body.count).toBe((await get('/property_definitions/?limit=1')).body.count - 1)
  })

  it('lists person, group and session properties', async () => {
    expect(names((await get('/property_definitions/?type=person')).body)).toEqual([
      '$browser',
      '$initial_browser',
      'age',
      'email',
    ])
    expect(names((await get('/property_definitions/?type=group&group_type_index=0')).body)).toEqual([
      'company_size',
      'industry',
    ])
    expect(names((await get('/property_definitions/?type=group&group_type_index=1')).body)).toEqual(['region'])
    const session = await get('/property_definitions/?type=session&search=duration')
    expect(session.body.results).toEqual([
      expect.objectContaining({ name: '$session_duration', property_type: 'Numeric', is_numerical: true }),
    ])
    expect((await get('/property_definitions/?type=session&limit=1000')).body.count).toBeGreaterThan(10)
  })

  it('rejects bad parameter values with PostHog errors naming the parameter', async () => {
    const cases: [string, string, string][] = [
      ['type=cohort', 'type', 'invalid_choice'],
      ['type=group', 'group_type_index', 'required'],
      ['type=group&group_type_index=5', 'group_type_index', 'max_value'],
      ['type=group&group_type_index=x', 'group_type_index', 'invalid_input'],
      ['limit=abc', 'limit', 'invalid_input'],
      ['limit=0', 'limit', 'min_value'],
      ['offset=-1', 'offset', 'min_value'],
      ['is_numerical=maybe', 'is_numerical', 'invalid_input'],
      ['exclude_hidden=2', 'exclude_hidden', 'invalid_input'],
      [`event_names=${encodeURIComponent('[{"a":1}]')}`, 'event_names', 'invalid_input'],
      [`excluded_properties=${encodeURIComponent('["a"')}`, 'excluded_properties', 'invalid_input'],
    ]
    for (const [query, attr, code] of cases) {
      const { status, body } = await get(`/property_definitions/?${query}`)
      expect(status, query).toBe(400)
      expect(body, query).toEqual({ type: 'validation_error', code, detail: expect.any(String), attr })
    }
  })
})

describe('one property definition', () => {
  it('is served under both URL prefixes and hidden from other projects', async () => {
    const price = await byName('price')
    const env = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/environments/${t.creds.project_id}/property_definitions/${price.id}/`,
      headers: t.auth,
    })
    expect(env.statusCode).toBe(200)
    expect(env.json()).toMatchObject({ id: price.id, name: 'price', is_seen_on_filtered_events: null })

    const other = await createTenant(t)
    const theirs = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${other.project.id}/property_definitions/${price.id}/`,
      headers: other.auth,
    })
    expect(theirs.statusCode).toBe(404)
    expect(theirs.json()).toEqual({ type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null })
    const list = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${other.project.id}/property_definitions/`,
      headers: other.auth,
    })
    expect(list.json().count).toBe(0)
    expect((await get('/property_definitions/not-a-uuid/')).status).toBe(404)
  })

  it('keeps is_numerical in step with the type, normalizes tags, and logs the change', async () => {
    const coupon = await byName('coupon')
    const numeric = await send('PATCH', `/property_definitions/${coupon.id}/`, {
      property_type: 'Numeric',
      tags: [' Money ', 'money', 'promo'],
      description: 'Discount code',
    })
    expect(numeric.status).toBe(200)
    expect(numeric.body).toMatchObject({
      property_type: 'Numeric',
      is_numerical: true,
      tags: ['money', 'promo'],
      description: 'Discount code',
      updated_by: { email: t.creds.email },
    })
    const text = await send('PATCH', `/property_definitions/${coupon.id}/`, { property_type: 'String' })
    expect(text.body).toMatchObject({ property_type: 'String', is_numerical: false })

    const log = await t.burrow.stores.activity.list(t.creds.project_id, 'PropertyDefinition', coupon.id)
    expect(log).toHaveLength(2)
    const detail = JSON.parse(log[1].detail)
    expect(log[1].activity).toBe('changed')
    expect(detail.name).toBe('coupon')
    expect(detail.changes).toEqual(
      expect.arrayContaining([
        { type: 'PropertyDefinition', action: 'changed', field: 'property_type', before: 'String', after: 'Numeric' },
        { type: 'PropertyDefinition', action: 'changed', field: 'tags', before: [], after: ['money', 'promo'] },
      ]),
    )
  })

  it('makes verified and hidden exclusive', async () => {
    const plan = await byName('plan')
    const both = await send('PATCH', `/property_definitions/${plan.id}/`, { verified: true, hidden: true })
    expect(both.status).toBe(400)
    expect(both.body).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'A property cannot be both hidden and verified',
      attr: null,
    })
    const verified = await send('PATCH', `/property_definitions/${plan.id}/`, { verified: true })
    expect(verified.body).toMatchObject({ verified: true, hidden: false, verified_by: { email: t.creds.email } })
    expect(verified.body.verified_at).toEqual(expect.any(String))

    // Verified definitions sort first.
    const list = await get('/property_definitions/?search=p')
    expect(names(list.body)[0]).toBe('plan')

    const hidden = await send('PATCH', `/property_definitions/${plan.id}/`, { hidden: true })
    expect(hidden.body).toMatchObject({ verified: false, verified_at: null, verified_by: null, hidden: true })
    expect(names((await get('/property_definitions/?exclude_hidden=true&search=plan')).body)).toEqual([])
    expect(names((await get('/property_definitions/?search=plan')).body)).toEqual(['plan'])
    await send('PATCH', `/property_definitions/${plan.id}/`, { hidden: false })
  })

  it('rejects bad PATCH bodies', async () => {
    const plan = await byName('plan')
    const badType = await send('PATCH', `/property_definitions/${plan.id}/`, { property_type: 'Integer' })
    expect(badType.status).toBe(400)
    expect(badType.body).toMatchObject({ type: 'validation_error', code: 'invalid_choice', attr: 'property_type' })
    const badTags = await send('PATCH', `/property_definitions/${plan.id}/`, { tags: { a: 1 } })
    expect(badTags.body).toMatchObject({ type: 'validation_error', attr: 'tags' })
    const taken = await send('PATCH', `/property_definitions/${plan.id}/`, { name: 'price' })
    expect(taken.status).toBe(400)
    expect(taken.body).toMatchObject({ code: 'unique', attr: 'name' })
    const renamed = await send('PATCH', `/property_definitions/${plan.id}/`, { name: 'plan_name' })
    expect(renamed.body.name).toBe('plan_name')
    await send('PATCH', `/property_definitions/${plan.id}/`, { name: 'plan' })
  })

  it('deletes with 204, logs it, and is recreated when capture sees it again', async () => {
    const region = await byName('region', 'group&group_type_index=1')
    const deleted = await send('DELETE', `/property_definitions/${region.id}/`)
    expect(deleted.status).toBe(204)
    expect((await get(`/property_definitions/${region.id}/`)).status).toBe(404)
    const log = await t.burrow.stores.activity.list(t.creds.project_id, 'PropertyDefinition', region.id)
    expect(log.map((l) => l.activity)).toEqual(['deleted'])
    expect((await t.burrow.services.definitions.getPropertyTypes(t.creds.project_id)).group.region).toBeUndefined()

    await record([item('purchase', [], [], [[1, 'region', 'String']])])
    const again = await byName('region', 'group&group_type_index=1')
    expect(again).toMatchObject({ name: 'region', property_type: 'String' })
    expect(again.id).not.toBe(region.id)
  })
})

describe('seen_together', () => {
  it('tells, for each event, whether the property was seen on it', async () => {
    const res = await get(
      '/property_definitions/seen_together/?event_names=purchase&event_names=signup&property_name=price',
    )
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ purchase: true, signup: false })
    const single = await get('/property_definitions/seen_together/?event_names=signup&property_name=plan')
    expect(single.body).toEqual({ signup: true })
  })

  it('requires both parameters', async () => {
    const noEvents = await get('/property_definitions/seen_together/?property_name=price')
    expect(noEvents.status).toBe(400)
    expect(noEvents.body).toMatchObject({ code: 'required', attr: 'event_names' })
    const noProperty = await get('/property_definitions/seen_together/?event_names=purchase')
    expect(noProperty.body).toMatchObject({ code: 'required', attr: 'property_name' })
  })
})
