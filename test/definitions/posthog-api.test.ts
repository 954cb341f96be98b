// PostHog's test_property_definition.py and test_event_definition.py assertions on queries, search and ordering, named after the tests
// they mirror. Definitions are recorded the way capture records them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DiscoveryItem } from '../../src/definitions/service.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let base: string

const item = (eventName: string, eventProperties: string[]): DiscoveryItem => ({
  eventName,
  eventProperties: eventProperties.map((name) => ({ name, type: 'String' })),
  personProperties: [],
  groupProperties: [],
})

async function get(path: string) {
  const res = await t.burrow.app.inject({ url: `${base}${path}`, headers: t.auth })
  return { status: res.statusCode, body: res.json() }
}

beforeAll(async () => {
  t = await startTestApp()
  base = `/api/projects/${t.creds.project_id}`
  await t.burrow.services.definitions.recordDiscoveries(
    t.creds.project_id,
    [item('$pageview', ['$browser', 'first_visit']), item('other', ['$current_url', '$lib', '$browser_version'])],
    new Date('2026-01-02T00:00:00Z'),
  )
}, 180_000)
afterAll(() => t?.close())

describe('property definition queries', () => {
  it.each([
    ['type=person&event_names=%5B%22foo%22%2C%22bar%22%5D', 'event_names'],
    ['type=event&group_type_index=3', 'group_type_index'],
    ['type=group', 'group_type_index'],
    ['type=group&group_type_index=77', 'group_type_index'],
    ['type=group&group_type_index=-1', 'group_type_index'],
    ['type=person&filter_by_event_names=true', 'filter_by_event_names'],
  ])('TestPropertyDefinitionQuerySerializer.test_validation refuses %s', async (query, attr) => {
    const { status, body } = await get(`/property_definitions/?${query}`)
    expect(status).toBe(400)
    expect(body).toMatchObject({ type: 'validation_error', attr })
  })

  it.each(['', 'type=event&event_names=%5B%22foo%22%2C%22bar%22%5D', 'type=person', 'type=group&group_type_index=3'])(
    'TestPropertyDefinitionQuerySerializer.test_validation accepts "%s"',
    async (query) => {
      expect((await get(`/property_definitions/?${query}`)).status).toBe(200)
    },
  )

  it('test_property_search_with_event_filter_shows_event_association: seen first, then by name', async () => {
    const { body } = await get('/property_definitions/?search=%24&event_names=%5B%22%24pageview%22%5D')
    expect(
      body.results.map((r: { name: string; is_seen_on_filtered_events: boolean }) => [
        r.name,
        r.is_seen_on_filtered_events,
      ]),
    ).toEqual([
      ['$browser', true],
      ['$browser_version', false],
      ['$current_url', false],
      ['$lib', false],
    ])
  })

  it('test_event_name_filter_json_contains_int', async () => {
    expect((await get(`/property_definitions/?event_names=${encodeURIComponent('[1]')}`)).status).toBe(200)
  })
})

describe('person property search', () => {
  beforeAll(async () => {
    await t.burrow.services.definitions.recordDiscoveries(
      t.creds.project_id,
      [
        {
          eventName: 'person_fixture',
          eventProperties: [{ name: 'event property', type: 'String' }],
          personProperties: ['person property', '$initial_referrer', 'another'].map((name) => ({
            name,
            type: 'String',
          })),
          groupProperties: [],
        },
      ],
      new Date('2026-01-02T00:00:00Z'),
    )
  })

  // PostHog's list also ends with its virtual `$virt_*` person properties, which Burrow's queries do not compute.
  it.each([
    ['type=person', ['$initial_referrer', 'another', 'person property']],
    ['type=person&search=prop', ['person property']],
    ['search=prop', ['event property']],
    ['type=person&search=latest', ['another', 'person property']],
    ['type=person&search=late', ['another', 'person property']],
  ])('test_person_property_filters: %s', async (query, expected) => {
    const { status, body } = await get(`/property_definitions/?${query}`)
    expect(status).toBe(200)
    expect(body.results.map((r: { name: string }) => r.name)).toEqual(expected)
  })
})

describe('event definition lists (PostHog’s fixture, the clock at 2020-01-02)', () => {
  let e: TestApp
  let eventsBase: string
  const day = 86_400_000
  const now = Date.parse('2020-01-02T00:00:00Z')
  const fixture: [string, number | null][] = [
    ['installed_app', now - day],
    ['rated_app', now - 12 * day],
    ['purchase', now - 3 * day],
    ['entered_free_trial', now - 3_600_000],
    ['watched_movie', null],
    ['$pageview', now - 3_600_000 - 4 * 60_000],
  ]
  const list = async (query: string) => {
    const res = await e.burrow.app.inject({ url: `${eventsBase}/?${query}`, headers: e.auth })
    return { status: res.statusCode, body: res.json() }
  }
  const listed = async (query: string) => (await list(query)).body.results.map((r: { name: string }) => r.name)

  beforeAll(async () => {
    e = await startTestApp({ clock: () => new Date(now) })
    eventsBase = `/api/projects/${e.creds.project_id}/event_definitions`
    for (const [name, seen] of fixture) {
      if (seen === null) {
        const res = await e.burrow.app.inject({
          method: 'POST',
          url: `${eventsBase}/`,
          headers: e.auth,
          payload: { name },
        })
        expect(res.statusCode).toBe(201)
      } else {
        await e.burrow.services.definitions.recordDiscoveries(e.creds.project_id, [item(name, [])], new Date(seen))
      }
    }
  }, 180_000)
  afterAll(() => e?.close())

  it.each([
    ['app', ['rated_app', 'installed_app']],
    ['APP', ['rated_app', 'installed_app']],
    ['%20app%20', ['rated_app', 'installed_app']],
    ['ed', ['rated_app', 'installed_app', 'watched_movie', 'entered_free_trial']],
  ])('test_search_results_ordered_by_name_length: %s', async (search, expected) => {
    expect(await listed(`search=${search}`)).toEqual(expected)
  })

  it('test_search_keeps_explicit_ordering', async () => {
    expect(await listed('search=app&ordering=name')).toEqual(['installed_app', 'rated_app'])
  })

  it('test_whitespace_search_does_not_change_default_ordering', async () => {
    expect(await listed('search=%20%20')).toEqual(await listed(''))
  })

  it('test_list_event_definitions_ordering: -last_seen_at::date alone ties by name', async () => {
    expect(await listed('ordering=-last_seen_at::date')).toEqual([
      '$pageview',
      'entered_free_trial',
      'installed_app',
      'purchase',
      'rated_app',
      'watched_movie',
    ])
  })

  it.each(['names=installed_app&names=purchase&names=missing_event', 'names=installed_app,purchase,missing_event'])(
    'test_list_event_definitions_with_exact_names: %s',
    async (query) => {
      expect((await listed(query)).sort()).toEqual(['installed_app', 'purchase'])
    },
  )

  it.each(['true', '5', '{"a": 1}'])('test_list_event_definitions_ignores_non_list_tags_filter: %s', async (tags) => {
    const { status, body } = await list(`tags=${encodeURIComponent(tags)}`)
    expect(status).toBe(200)
    expect(body.count).toBe(6)
  })

  it.each(['limit=9223372036854775808', 'offset=9223372036854775808'])(
    'test_list_event_definitions_accepts_out_of_range_bigint_pagination: %s',
    async (query) => {
      const { status, body } = await list(query)
      expect(status).toBe(200)
      expect(body.count).toBe(6)
    },
  )

  it('test_exclude_stale_filter: hides events last seen over 30 days ago, keeps never-seen ones', async () => {
    // installed_app (1 day), rated_app (12 days), purchase (3 days), entered_free_trial and $pageview (an hour)
    // are fresh; watched_movie was never seen. None is stale, so both forms list all six.
    expect((await list('exclude_stale=true')).body.count).toBe(6)
    await e.burrow.services.definitions.recordDiscoveries(
      e.creds.project_id,
      [item('stale_event', [])],
      new Date(now - 45 * day),
    )
    expect(await listed('exclude_stale=true')).not.toContain('stale_event')
    expect(await listed('exclude_stale=false')).toContain('stale_event')
    expect(await listed('')).toContain('stale_event')
  })

  it('test_by_name_returns_event_definition, test_by_name_not_found, test_by_name_missing_param', async () => {
    const one = await e.burrow.app.inject({ url: `${eventsBase}/by_name/?name=installed_app`, headers: e.auth })
    expect(one.statusCode).toBe(200)
    expect(one.json().name).toBe('installed_app')
    const missing = await e.burrow.app.inject({ url: `${eventsBase}/by_name/?name=nonexistent`, headers: e.auth })
    expect(missing.statusCode).toBe(404)
    const noName = await e.burrow.app.inject({ url: `${eventsBase}/by_name/`, headers: e.auth })
    expect(noName.statusCode).toBe(400)
  })

  it('test_retrieve_with_non_uuid_id_returns_404', async () => {
    const res = await e.burrow.app.inject({ url: `${eventsBase}/undefined`, headers: e.auth })
    expect(res.statusCode).toBe(404)
  })
})
