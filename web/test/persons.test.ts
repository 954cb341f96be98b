// The persons and groups screens in Chromium against a real server: the list and its search (email, name, distinct
// id) by keyboard, a person's page (properties edited and removed, events, cohorts), deleting a person behind a
// confirmation, and the groups of a type with a group's page. The data is captured as an SDK would send it, and
// the expected rows are worked out by hand from it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasChromium, screenshot, seriousViolations, startWeb, type WebHarness } from './harness.js'

let h: WebHarness
/** expect.poll with room for a slow, shared machine (its default gives up after one second). */
const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 20_000, interval: 200 })
let project: number

const HOUR = 3_600_000
const ago = (ms: number) => new Date(Date.now() - ms).toISOString()

const capture = (batch: unknown[]) => h.capture(batch)

async function call(method: 'GET' | 'POST', path: string, payload?: unknown) {
  const res = await h.t.burrow.app.inject({
    method,
    url: `/api/projects/${project}/${path}`,
    headers: h.t.auth,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  })
  return res
}

async function personOf(distinctId: string) {
  const res = await call('GET', `persons/?distinct_id=${distinctId}`)
  expect(res.statusCode, res.body).toBe(200)
  return res.json().results[0] as { id: string; properties: Record<string, unknown> } | undefined
}

beforeAll(async () => {
  if (!hasChromium) return
  h = await startWeb()
  project = h.t.creds.project_id
  await capture([
    {
      event: '$identify',
      timestamp: ago(5 * HOUR),
      properties: {
        distinct_id: 'alice-1',
        $anon_distinct_id: 'anon-alice',
        $set: { email: 'alice@example.com', name: 'Alice Liddell', plan: 'pro' },
      },
    },
    { event: '$pageview', timestamp: ago(4 * HOUR), properties: { distinct_id: 'alice-1', $current_url: '/pricing' } },
    { event: '$pageview', timestamp: ago(3 * HOUR), properties: { distinct_id: 'alice-1', $current_url: '/signup' } },
    {
      event: '$identify',
      timestamp: ago(5 * HOUR),
      properties: { distinct_id: 'bob-1', $set: { email: 'bob@corp.test', name: 'Bob Builder', plan: 'free' } },
    },
    {
      event: '$groupidentify',
      timestamp: ago(5 * HOUR),
      properties: {
        distinct_id: 'bob-1',
        $group_type: 'company',
        $group_key: 'acme',
        $group_set: { name: 'Acme Inc', industry: 'anvils' },
      },
    },
    {
      event: 'order placed',
      timestamp: ago(2 * HOUR),
      properties: { distinct_id: 'bob-1', $groups: { company: 'acme' }, amount: 30 },
    },
  ])
  const cohort = await call('POST', 'cohorts/', {
    name: 'Pro users',
    filters: {
      properties: { type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'person', operator: 'exact' }] },
    },
  })
  expect(cohort.statusCode, cohort.body).toBe(201)
}, 120_000)
afterAll(async () => {
  await h?.close()
})

describe.skipIf(!hasChromium)('persons and groups', () => {
  it('lists persons and finds them by email, name and distinct id, by keyboard', async () => {
    const page = await h.page()
    await page.getByRole('link', { name: 'Persons' }).click()
    await page.waitForURL(/\/persons$/)
    const rows = page.getByTestId('persons-table').locator('tbody tr')
    // Two persons: alice (with her anonymous id merged in) and bob; the group identify made no person.
    await poll(() => rows.count()).toBe(2)
    expect((await rows.allInnerTexts()).map((r) => r.split('\t')[0]).sort()).toEqual([
      'alice@example.com',
      'bob@corp.test',
    ])
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'persons')

    const search = page.getByLabel('Search persons')
    await search.focus()
    await page.keyboard.type('ALICE@example')
    await page.keyboard.press('Enter')
    await page.waitForURL(/search=ALICE%40example/)
    await poll(() => rows.allInnerTexts()).toEqual([expect.stringContaining('alice@example.com')])

    await search.fill('builder')
    await search.press('Enter')
    await poll(() => rows.allInnerTexts()).toEqual([expect.stringContaining('bob@corp.test')])

    // A distinct id matches exactly, the anonymous one too.
    await search.fill('anon-alice')
    await search.press('Enter')
    await poll(() => rows.allInnerTexts()).toEqual([expect.stringContaining('alice@example.com')])

    await search.fill('nobody@nowhere')
    await search.press('Enter')
    await page.getByText('No persons match').waitFor()
    expect(await seriousViolations(page)).toEqual([])

    // The URL reproduces the view.
    await page.goto(`/project/${project}/persons?search=bob%40corp`)
    await poll(() => rows.allInnerTexts()).toEqual([expect.stringContaining('bob@corp.test')])
    await rows.first().getByRole('link').click()
    await page.waitForURL(/\/persons\/[0-9a-f-]{36}$/)
    await page.getByRole('heading', { name: 'bob@corp.test' }).waitFor()
    expect(h.errors).toEqual([])
  }, 90_000)

  it('shows a person’s properties, events and cohorts, and edits and removes a property', async () => {
    const alice = (await personOf('alice-1'))!
    const page = await h.page()
    await page.goto(`/project/${project}/persons/${alice.id}`)
    await page.getByRole('heading', { name: 'alice@example.com' }).waitFor()
    expect((await page.getByTestId('distinct-ids').locator('code').allTextContents()).sort()).toEqual([
      'alice-1',
      'anon-alice',
    ])
    const table = page.getByTestId('properties-table')
    const cellOf = (key: string) => table.locator(`tr[data-property="${key}"] td`).nth(1).textContent()
    expect(await cellOf('email')).toBe('alice@example.com')
    expect(await cellOf('name')).toBe('Alice Liddell')
    expect(await cellOf('plan')).toBe('pro')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'person')

    // Edit by keyboard: the value field is focused, Enter saves.
    await page.getByRole('button', { name: 'Edit name' }).click()
    const dialog = page.getByRole('dialog', { name: 'Edit name' })
    await dialog.getByLabel('Value').fill('Alice Pleasance Liddell')
    await dialog.getByLabel('Value').press('Enter')
    await dialog.waitFor({ state: 'hidden' })
    await poll(() => cellOf('name')).toBe('Alice Pleasance Liddell')
    await poll(async () => (await personOf('alice-1'))!.properties.name).toBe('Alice Pleasance Liddell')

    // A new numeric property is stored as a number.
    await page.getByRole('button', { name: 'New property' }).click()
    const adding = page.getByRole('dialog', { name: 'New property' })
    await adding.getByLabel('Key').fill('seats')
    await adding.getByLabel('Value').fill('12')
    await adding.getByRole('button', { name: 'Save' }).click()
    await poll(async () => (await personOf('alice-1'))!.properties.seats).toBe(12)

    await page.getByRole('button', { name: 'Delete plan' }).click()
    await table.locator('tr[data-property="plan"]').waitFor({ state: 'detached' })
    await poll(async () => 'plan' in (await personOf('alice-1'))!.properties).toBe(false)
    await page.reload()
    await poll(() => cellOf('seats')).toBe('12')
    expect(await table.locator('tr[data-property="plan"]').count()).toBe(0)

    // Events, newest first: the three changes just made (PostHog records them as events too), then her two
    // pageviews and the identify.
    await page.getByRole('tab', { name: 'Events' }).click()
    await page.waitForURL(/tab=events/)
    const events = page.getByTestId('person-events').locator('tbody tr')
    await poll(() => events.count()).toBe(6)
    expect(await events.locator('td:nth-child(1)').allTextContents()).toEqual([
      '$delete_person_property',
      '$set',
      '$set',
      '$pageview',
      '$pageview',
      '$identify',
    ])
    expect(await events.locator('td:nth-child(2)').allTextContents()).toEqual([
      '—',
      '—',
      '—',
      '/signup',
      '/pricing',
      '—',
    ])
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'person-events')

    // Cohorts: the cohort was computed while she was on the pro plan; the membership is read now, so after the
    // plan was removed she is no longer in it. Bob (free) was never in it.
    await page.getByRole('tab', { name: 'Cohorts' }).click()
    await page.getByText('Not in any cohort').waitFor()
    expect(h.errors).toEqual([])
  }, 90_000)

  it('lists the cohorts a person is in', async () => {
    const bob = (await personOf('bob-1'))!
    const cohort = await call('POST', 'cohorts/', {
      name: 'Free plan',
      filters: {
        properties: { type: 'AND', values: [{ key: 'plan', value: 'free', type: 'person', operator: 'exact' }] },
      },
    })
    expect(cohort.statusCode, cohort.body).toBe(201)
    const page = await h.page()
    await page.goto(`/project/${project}/persons/${bob.id}?tab=cohorts`)
    const rows = page.getByTestId('person-cohorts').locator('tbody tr')
    await poll(() => rows.allInnerTexts()).toEqual([expect.stringMatching(/^Free plan\tDynamic/)])
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'person-cohorts')
    expect(h.errors).toEqual([])
  }, 60_000)

  it('shows groups of a type and a group’s properties and events', async () => {
    const page = await h.page()
    await page.goto(`/project/${project}/persons`)
    await page.getByRole('tab', { name: 'company(s)' }).click()
    await page.waitForURL(/\/groups\/0$/)
    const rows = page.getByTestId('groups-table').locator('tbody tr')
    await poll(() => rows.allInnerTexts()).toEqual([expect.stringMatching(/^Acme Inc\tacme/)])
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'groups')

    await page.getByLabel('Search company(s)').fill('nothing-like-it')
    await page.getByLabel('Search company(s)').press('Enter')
    await page.getByText('No groups match').waitFor()
    await page.getByLabel('Search company(s)').fill('anvil')
    await page.getByLabel('Search company(s)').press('Enter')
    await poll(() => rows.count()).toBe(1)

    await rows.first().getByRole('link', { name: 'Acme Inc' }).click()
    await page.waitForURL(/\/groups\/0\/acme$/)
    await page.getByRole('heading', { name: 'Acme Inc' }).waitFor()
    const props = page.getByTestId('group-properties')
    expect(await props.locator('tr[data-property="industry"] td').nth(1).textContent()).toBe('anvils')
    await page.getByRole('tab', { name: 'Events' }).click()
    const events = page.getByTestId('group-events').locator('tbody tr')
    await poll(() => events.allInnerTexts()).toEqual([expect.stringMatching(/^order placed\tbob-1/)])
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'group')

    await page.goto(`/project/${project}/groups/0/no-such-company`)
    await page.getByTestId('error-state').waitFor()
    expect(h.errors).toEqual([])
  }, 90_000)

  it('deletes a person, with their events, after a confirmation', async () => {
    const bob = (await personOf('bob-1'))!
    const page = await h.page()
    await page.goto(`/project/${project}/persons/${bob.id}`)
    await page.getByRole('heading', { name: 'bob@corp.test' }).waitFor()
    await page.getByRole('button', { name: 'Delete person' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete this person?' })
    await dialog.waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'person-delete')
    // Cancel keeps him.
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'hidden' })
    expect((await call('GET', `persons/${bob.id}/`)).statusCode).toBe(200)

    await page.getByRole('button', { name: 'Delete person' }).click()
    await dialog.getByLabel('Also delete all events of this person').check()
    await dialog.getByRole('button', { name: 'Delete person' }).click()
    await page.waitForURL(/\/persons$/)
    const rows = page.getByTestId('persons-table').locator('tbody tr')
    await poll(() => rows.allInnerTexts()).toEqual([expect.stringContaining('alice@example.com')])
    const gone = await call('GET', `persons/${bob.id}/`)
    expect(gone.statusCode).toBe(404)
    expect(gone.json()).toMatchObject({ type: 'invalid_request', code: 'not_found' })

    // The person page of a deleted person shows the server's answer.
    await page.goto(`/project/${project}/persons/${bob.id}`)
    await page.getByTestId('error-state').waitFor()
    expect(await page.getByTestId('error-state').textContent()).toMatch(/not found/i)
    expect(h.errors).toEqual([])
  }, 90_000)
})
