/**
 * Actions API (PostHog's posthog/api/test/test_action.py shapes) and actions in insights: `ActionsNode` series
 * and `matchesAction()` in HogQL; plus a project in America/New_York with Monday weeks. Expected numbers are
 * worked out by hand from the events below.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { hogql, postQuery } from '../queries/fixtures.js'
import { ev } from '../queries/insights/capture.js'

let t: TestApp
const now = new Date('2024-01-10T12:00:00Z')

const api = (method: 'GET' | 'POST' | 'PATCH', path: string, payload?: unknown) =>
  t.burrow.app.inject({
    method,
    url: `/api/projects/${t.creds.project_id}/${path}`,
    headers: t.auth,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  })

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: '/batch/',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({
      api_key: t.creds.project_api_key,
      batch: [
        ev('$pageview', 'anna', '2024-01-08T15:00:00Z', { $current_url: 'https://example.com/pricing' }),
        ev('$pageview', 'anna', '2024-01-08T16:00:00Z', { $current_url: 'https://example.com/docs' }),
        ev('$autocapture', 'bob', '2024-01-09T15:00:00Z', {
          $elements_chain: 'button.btn.primary:attr__id="buy"nth-child="1"text="Buy now";div.card:nth-child="2"',
        }),
        // 03:00 UTC on Jan 7 is 22:00 on Saturday Jan 6 in New York
        ev('signup', 'carl', '2024-01-07T03:00:00Z'),
      ],
    }),
  })
  expect(res.statusCode, res.body).toBe(200)
  await t.burrow.ingest.flushBackground()
}, 60_000)
afterAll(() => t.close())

describe('actions API', () => {
  it('creates, lists, reads, changes and deletes an action with PostHog shapes', async () => {
    const created = await api('POST', 'actions/', {
      name: 'Pricing viewed',
      tags: ['web'],
      steps: [{ event: '$pageview', url: '/pricing', url_matching: 'contains' }],
    })
    expect(created.statusCode, created.body).toBe(201)
    const action = created.json()
    expect(action).toMatchObject({ name: 'Pricing viewed', tags: ['web'], deleted: false })
    expect(action.steps[0]).toEqual({
      event: '$pageview',
      properties: null,
      selector: null,
      tag_name: null,
      text: null,
      text_matching: null,
      href: null,
      href_matching: null,
      url: '/pricing',
      url_matching: 'contains',
    })
    expect((await api('GET', 'actions/')).json().results.map((a: { id: number }) => a.id)).toContain(action.id)
    const renamed = await api('PATCH', `actions/${action.id}/`, { name: 'Pricing' })
    expect(renamed.json().name).toBe('Pricing')
    expect((await api('PATCH', `actions/${action.id}/`, { deleted: true })).statusCode).toBe(200)
    expect((await api('GET', `actions/${action.id}/`)).statusCode).toBe(404)
    expect((await api('GET', 'actions/')).json().results.map((a: { id: number }) => a.id)).not.toContain(action.id)
  })

  it('counts an action in trends and in HogQL through matchesAction()', async () => {
    const action = (
      await api('POST', 'actions/', {
        name: 'Buy clicked or pricing',
        steps: [
          { event: '$autocapture', selector: 'div > button.primary', text: 'Buy now' },
          { event: '$pageview', url: 'https://example.com/pricing', url_matching: 'exact' },
        ],
      })
    ).json()
    // anna's pricing pageview (Jan 8) and bob's click on the Buy button inside the card (Jan 9)
    const viaHogQL = await postQuery(t, hogql(`SELECT count() FROM events WHERE matchesAction(${action.id})`))
    expect(viaHogQL.json().results).toEqual([[2]])
    const res = await postQuery(t, {
      query: {
        kind: 'TrendsQuery',
        series: [{ kind: 'ActionsNode', id: action.id }],
        dateRange: { date_from: '2024-01-08', date_to: '2024-01-09' },
      },
    })
    expect(res.statusCode, res.body).toBe(200)
    const [row] = res.json().results
    expect(row.data).toEqual([1, 1])
    expect(row.label).toBe('Buy clicked or pricing')
    expect(row.action).toMatchObject({ id: action.id, type: 'actions', name: 'Buy clicked or pricing' })
  })
})

describe('project timezone and week start', () => {
  it('buckets by the project timezone and Monday weeks, and edits test_account_filters', async () => {
    const patched = await t.burrow.app.inject({
      method: 'PATCH',
      url: `/api/projects/${t.creds.project_id}/`,
      headers: t.auth,
      payload: {
        timezone: 'America/New_York',
        week_start_day: 1,
        test_account_filters: [{ type: 'event', key: '$current_url', value: 'docs', operator: 'not_icontains' }],
      },
    })
    expect(patched.statusCode, patched.body).toBe(200)
    expect(patched.json()).toMatchObject({ week_start_day: 1, test_account_filters: [{ key: '$current_url' }] })
    const daily = await postQuery(t, {
      query: {
        kind: 'TrendsQuery',
        series: [{ kind: 'EventsNode', event: 'signup' }],
        dateRange: { date_from: '2024-01-06', date_to: '2024-01-07' },
      },
    })
    // carl's signup at 03:00 UTC on Jan 7 is on Jan 6 in New York
    expect(daily.json().results[0].data).toEqual([1, 0])
    const weekly = await postQuery(t, {
      query: {
        kind: 'TrendsQuery',
        series: [{ kind: 'EventsNode', event: null }],
        interval: 'week',
        dateRange: { date_from: '2024-01-01', date_to: '2024-01-10' },
        filterTestAccounts: true,
      },
    })
    const [row] = weekly.json().results
    // Monday weeks: Jan 1–7 (carl's signup, Saturday Jan 6 local) and Jan 8–10 (anna's pricing pageview and bob's
    // click; anna's docs pageview is dropped by the test-account filter)
    expect(row.days).toEqual(['2024-01-01', '2024-01-08'])
    expect(row.labels).toEqual(['1–7 Jan', '8–10 Jan'])
    expect(row.data).toEqual([1, 2])
  })
})
