// PostHog's test_property_definition.py assertions on query validation and search ordering, named after the tests
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
