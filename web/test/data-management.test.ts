// Data management in Chromium against a real Burrow: event and property definitions edited in place, an action
// built with the steps editor, cohorts (person-property, behavioural, static) with their members, and the refusal
// to delete a cohort that an active feature flag uses, in PostHog's words. Each screen passes axe-core and is
// photographed.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DiscoveryItem } from '../../src/definitions/service.js'
import { hasChromium, screenshot, seriousViolations, startWeb, type WebHarness } from './harness.js'

let h: WebHarness
let project: number
let base: string

async function call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, payload?: object) {
  const res = await h.t.burrow.app.inject({ method, url: `${base}${path}`, headers: h.t.auth, payload })
  return { status: res.statusCode, body: res.body ? res.json() : null }
}

const item = (eventName: string, eventProperties: [string, string | null][] = []): DiscoveryItem => ({
  eventName,
  eventProperties: eventProperties.map(([name, type]) => ({ name, type })),
  personProperties: [],
  groupProperties: [],
})

/** Waits for a value the page shows (pages load and refetch at their own pace on a shared machine). */
const until = <T>(fn: () => T | Promise<T>, options: { timeout?: number } = {}) =>
  expect.poll(fn, { timeout: 15_000, ...options })

/** A Mantine select: open it by its label and choose an option. */
async function pick(page: Page, label: string, option: string) {
  await page.getByRole('combobox', { name: label, exact: true }).click()
  await page.getByRole('option', { name: option, exact: true }).click()
}

async function capture(distinctId: string, set: Record<string, unknown>, event = 'seen') {
  const res = await h.t.burrow.app.inject({
    method: 'POST',
    url: '/batch/',
    payload: {
      api_key: h.t.creds.project_api_key,
      batch: [{ event, distinct_id: distinctId, properties: { $set: set } }],
    },
  })
  expect(res.statusCode).toBe(200)
}

beforeAll(async () => {
  if (!hasChromium) return
  h = await startWeb()
  project = h.t.creds.project_id
  base = `/api/projects/${project}`
  await h.t.burrow.services.definitions.recordDiscoveries(
    project,
    [
      item('$pageview', [
        ['$current_url', 'String'],
        ['$browser', 'String'],
      ]),
      item('purchase', [
        ['price', 'Numeric'],
        ['paid_at', 'String'],
      ]),
      item('purchase refunded', [['price', 'Numeric']]),
    ],
    new Date('2026-11-20T10:00:00Z'),
  )
  // Three persons: two on the pro plan (one of them bought something), one on the free plan.
  await capture('ann', { plan: 'pro', email: 'ann@example.com' }, 'purchase')
  await capture('bob', { plan: 'pro', email: 'bob@example.com' })
  await capture('cat', { plan: 'free', email: 'cat@example.com' })
  await h.t.burrow.committer.flushPending()
}, 240_000)
afterAll(async () => {
  await h?.close()
})

describe.skipIf(!hasChromium)('data management', { timeout: 300_000 }, () => {
  it('event definitions: search, then describe, tag and verify one with the keyboard', async () => {
    const page = await h.page()
    await page.goto(`/project/${project}/data-management/events`)
    await page.getByRole('heading', { name: 'Data management' }).waitFor()
    await page.getByRole('table', { name: 'Event definitions' }).waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'data-management-events')

    await page.getByLabel('Search events').fill('purch')
    await page.getByLabel('Search events').press('Enter')
    await page.waitForURL(/search=purch/)
    const rows = page.getByTestId('definition-row')
    await until(() => rows.allTextContents()).toEqual([
      expect.stringMatching(/^purchaseNo description/),
      expect.stringMatching(/^purchase refundedNo description/),
    ])

    // Nothing matches: the empty state says so.
    await page.getByLabel('Search events').fill('zzz-nothing')
    await page.getByLabel('Search events').press('Enter')
    await page.getByText('Nothing matches “zzz-nothing”').waitFor()

    await page.goto(`/project/${project}/data-management/events?search=purch`)
    await page.getByRole('button', { name: 'purchase', exact: true }).click()
    await page.waitForURL(/definition=/)
    const dialog = page.getByRole('dialog', { name: 'Edit purchase' })
    await dialog.getByLabel('Description').waitFor()
    // The rest is done with the keyboard, from the first field.
    await dialog.getByLabel('Description').focus()
    await page.keyboard.type('A completed checkout')
    await page.keyboard.press('Tab')
    await page.keyboard.type('revenue')
    await page.keyboard.press('Enter')
    await dialog.getByLabel('Verified').focus()
    await page.keyboard.press('Space')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'data-management-event-edit')
    await dialog.getByRole('button', { name: 'Save' }).focus()
    await page.keyboard.press('Enter')
    await dialog.waitFor({ state: 'detached' })
    await page.getByText('A completed checkout').waitFor()

    const saved = await call('GET', '/event_definitions/?search=purchase')
    const purchase = saved.body.results.find((d: { name: string }) => d.name === 'purchase')
    expect(purchase).toMatchObject({ description: 'A completed checkout', tags: ['revenue'], verified: true })
    expect(h.errors).toEqual([])
  })

  it('property definitions: filter by type and change a property’s type', async () => {
    const page = await h.page()
    await page.goto(`/project/${project}/data-management/properties?search=paid`)
    const row = page.getByTestId('definition-row')
    await until(() => row.allTextContents()).toEqual([expect.stringMatching(/^paid_atString/)])
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'data-management-properties')
    await page.getByRole('button', { name: 'paid_at' }).click()
    const dialog = page.getByRole('dialog', { name: 'Edit paid_at' })
    await pick(page, 'Property type', 'DateTime')
    await dialog.getByRole('button', { name: 'Save' }).click()
    await dialog.waitFor({ state: 'detached' })
    await until(() => row.allTextContents()).toEqual([expect.stringMatching(/^paid_atDateTime/)])
    const saved = await call('GET', '/property_definitions/?search=paid_at')
    expect(saved.body.results.map((d: { name: string; property_type: string }) => [d.name, d.property_type])).toEqual([
      ['paid_at', 'DateTime'],
    ])

    // Person properties: the ones set by the captures above.
    await pick(page, 'Type', 'Person properties')
    await page.waitForURL(/type=person/)
    await page.getByText('Nothing matches “paid”').waitFor()
    expect(h.errors).toEqual([])
  })

  it('actions: create one with two match groups, rename it, delete it', async () => {
    const page = await h.page()
    await page.goto(`/project/${project}/data-management/actions`)
    await page.getByText('No actions yet').waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'data-management-actions-empty')
    await page.getByRole('link', { name: 'New action' }).click()
    await page.waitForURL(/\/actions\/new$/)
    await page.getByLabel('Name').fill('Pricing or big purchase')
    await page.getByRole('combobox', { name: 'Event (group 1)' }).fill('$pageview')
    await page.getByLabel('URL (group 1)').fill('/pricing')
    await page.getByRole('button', { name: 'Add match group' }).click()
    await page.getByRole('combobox', { name: 'Event (group 2)' }).fill('purchase')
    await page.getByRole('combobox', { name: 'Event (group 2)' }).press('Escape')
    const second = page.getByTestId('action-step').nth(1)
    await second.getByRole('button', { name: 'Add filter' }).click()
    await page.getByRole('combobox', { name: 'Group 2 filter 1: property', exact: true }).fill('price')
    await page.getByRole('combobox', { name: 'Group 2 filter 1: property', exact: true }).press('Escape')
    await pick(page, 'Group 2 filter 1: operator', 'greater than')
    await page.getByRole('textbox', { name: 'Group 2 filter 1: value', exact: true }).fill('100')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'data-management-action-editor')
    await page.getByRole('button', { name: 'Create action' }).click()
    await page.waitForURL(/\/actions\/\d+$/)
    const id = Number(page.url().split('/').pop())

    const created = await call('GET', `/actions/${id}/`)
    expect(created.body.name).toBe('Pricing or big purchase')
    expect(created.body.steps).toEqual([
      {
        event: '$pageview',
        url: '/pricing',
        url_matching: 'contains',
        selector: null,
        tag_name: null,
        text: null,
        text_matching: null,
        href: null,
        href_matching: null,
        properties: [],
      },
      {
        event: 'purchase',
        url: null,
        url_matching: null,
        selector: null,
        tag_name: null,
        text: null,
        text_matching: null,
        href: null,
        href_matching: null,
        properties: [{ key: 'price', operator: 'gt', value: 100, type: 'event' }],
      },
    ])

    // A reload shows what was saved; a rename is saved in place.
    await page.reload()
    await until(() => page.getByLabel('URL (group 1)').inputValue()).toBe('/pricing')
    await page.getByLabel('Name').fill('Pricing or purchase over 100')
    await page.getByLabel('Name').press('Enter')
    await until(async () => (await call('GET', `/actions/${id}/`)).body.name).toBe('Pricing or purchase over 100')

    await page.getByRole('link', { name: '← All actions' }).click()
    await until(() => page.getByTestId('action-row').allTextContents()).toEqual([
      expect.stringMatching(
        /^Pricing or purchase over 100\$pageview, URL contains “\/pricing” or purchase, 1 property/,
      ),
    ])
    await screenshot(page, 'data-management-actions')
    await page.getByRole('link', { name: 'Pricing or purchase over 100' }).click()
    await page.getByRole('button', { name: 'Delete action' }).click()
    await page.getByRole('dialog', { name: 'Delete action' }).getByRole('button', { name: 'Delete' }).click()
    await page.waitForURL(/\/data-management\/actions$/)
    await page.getByText('No actions yet').waitFor()
    expect((await call('GET', '/actions/')).body.count).toBe(0)
    expect(h.errors).toEqual([])
  })

  it('cohorts: a person-property cohort with its members, calculation status and edit', async () => {
    const page = await h.page()
    await page.goto(`/project/${project}/cohorts`)
    await page.getByText('No cohorts yet').waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await page.getByRole('link', { name: 'New cohort' }).click()
    await page.waitForURL(/\/cohorts\/new$/)
    await page.getByLabel('Name').fill('Pro plan')
    await page.getByRole('combobox', { name: 'Group 1 criterion 1: property', exact: true }).fill('plan')
    await page.getByRole('combobox', { name: 'Group 1 criterion 1: property', exact: true }).press('Escape')
    await page.getByRole('textbox', { name: 'Group 1 criterion 1: value', exact: true }).fill('pro')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'cohort-editor')
    await page.getByRole('button', { name: 'Create cohort' }).click()
    await page.waitForURL(/\/cohorts\/\d+$/)
    const id = Number(page.url().split('/').pop())

    const saved = await call('GET', `/cohorts/${id}/`)
    expect(saved.body.filters).toEqual({
      properties: {
        type: 'OR',
        values: [
          { type: 'AND', values: [{ type: 'person', key: 'plan', operator: 'exact', value: 'pro', negation: false }] },
        ],
      },
    })
    // ann and bob are on the pro plan, cat is not.
    const members = page.getByTestId('member-row')
    await until(() => members.count(), { timeout: 20_000 }).toBe(2)
    expect((await members.allTextContents()).map((t) => t.match(/(ann|bob|cat)/)?.[1]).sort()).toEqual(['ann', 'bob'])
    await until(() => page.getByTestId('cohort-status').textContent(), { timeout: 20_000 }).toMatch(
      /Up to date2 persons/,
    )
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'cohort')

    // Negating the criterion: now only cat.
    await page.getByLabel('Group 1 criterion 1: negate').check()
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await until(async () => (await members.allTextContents()).map((t) => t.match(/(ann|bob|cat)/)?.[1]), {
      timeout: 20_000,
    }).toEqual(['cat'])

    await page.goto(`/project/${project}/cohorts`)
    await until(() => page.getByTestId('cohort-row').allTextContents()).toEqual([
      expect.stringMatching(/^Pro planDynamic1Up to date/),
    ])
    await screenshot(page, 'cohorts')
    expect(h.errors).toEqual([])
  })

  it('cohorts: behavioural criteria and a static list, stored as the cohort API takes them', async () => {
    const page = await h.page()
    await page.goto(`/project/${project}/cohorts/new`)
    await page.getByLabel('Name').fill('Buyers')
    await pick(page, 'Group 1 criterion 1: kind', 'Performed event multiple times')
    await page.getByRole('combobox', { name: 'Group 1 criterion 1: event', exact: true }).fill('purchase')
    await page.getByRole('combobox', { name: 'Group 1 criterion 1: event', exact: true }).press('Escape')
    await page.getByRole('textbox', { name: 'Group 1 criterion 1: times', exact: true }).fill('1')
    await page.getByRole('textbox', { name: 'Group 1 criterion 1: period length', exact: true }).fill('7')
    await page.getByRole('button', { name: 'Add criterion to group 1' }).click()
    await page.getByRole('combobox', { name: 'Group 1 criterion 2: property', exact: true }).fill('plan')
    await page.getByRole('combobox', { name: 'Group 1 criterion 2: property', exact: true }).press('Escape')
    await page.getByRole('textbox', { name: 'Group 1 criterion 2: value', exact: true }).fill('pro')
    await page.getByRole('button', { name: 'Create cohort' }).click()
    await page.waitForURL(/\/cohorts\/\d+$/)
    const id = Number(page.url().split('/').pop())
    expect((await call('GET', `/cohorts/${id}/`)).body.filters).toEqual({
      properties: {
        type: 'OR',
        values: [
          {
            type: 'AND',
            values: [
              {
                type: 'behavioral',
                value: 'performed_event_multiple',
                key: 'purchase',
                event_type: 'events',
                time_value: 7,
                time_interval: 'day',
                negation: false,
                operator: 'gte',
                operator_value: 1,
              },
              { type: 'person', key: 'plan', operator: 'exact', value: 'pro', negation: false },
            ],
          },
        ],
      },
    })
    // Only ann bought something (and is on the pro plan).
    await page
      .getByTestId('member-row')
      .first()
      .waitFor({ timeout: 20_000 })
      .catch(async () => console.log('cohort page:', await page.locator('body').textContent()))
    await until(
      async () => (await page.getByTestId('member-row').allTextContents()).map((t) => t.match(/(ann|bob|cat)/)?.[1]),
      {
        timeout: 20_000,
      },
    ).toEqual(['ann'])
    // The editor reads back what it stored.
    await page.reload()
    await until(() =>
      page.getByRole('textbox', { name: 'Group 1 criterion 1: period length', exact: true }).inputValue(),
    ).toBe('7')

    // A static cohort from pasted distinct ids (a CSV header is skipped; an unknown id adds nobody).
    await page.goto(`/project/${project}/cohorts/new`)
    await page.getByLabel('Name').fill('Hand picked')
    await page.getByText('Static (list of persons)').click()
    await page.getByLabel('Distinct ids').fill('distinct_id\nbob\ncat\nnobody-such')
    await page.getByRole('button', { name: 'Create cohort' }).click()
    await page.waitForURL(/\/cohorts\/\d+$/)
    await until(async () =>
      (await page.getByTestId('member-row').allTextContents()).map((t) => t.match(/(ann|bob|cat)/)?.[1]).sort(),
    ).toEqual(['bob', 'cat'])
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'cohort-static')
    expect(h.errors).toEqual([])
  })

  it('test_cohort_deletion_blocked_by_active_feature_flag: the refusal is shown, and deleting works once the flag is off', async () => {
    const cohort = await call('POST', '/cohorts/', {
      name: 'Flagged',
      filters: {
        properties: { type: 'AND', values: [{ key: 'plan', value: 'pro', type: 'person', operator: 'exact' }] },
      },
    })
    expect(cohort.status).toBe(201)
    const flag = await call('POST', '/feature_flags/', {
      key: 'pro-beta',
      name: 'Pro beta',
      filters: {
        groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohort.body.id }], rollout_percentage: 100 }],
      },
    })
    expect(flag.status).toBe(201)
    const page = await h.page()
    await page.goto(`/project/${project}/cohorts/${cohort.body.id}`)
    await page.getByRole('button', { name: 'Delete cohort' }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete cohort' })
    await dialog.getByRole('button', { name: 'Delete' }).click()
    await until(() => dialog.getByTestId('confirm-error').textContent()).toBe(
      'This cohort is used in 1 active feature flag(s): Pro beta. Please remove the cohort from these feature flags before deleting it.',
    )
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'cohort-delete-refused')
    expect((await call('GET', `/cohorts/${cohort.body.id}/`)).body.deleted).toBe(false)

    expect((await call('PATCH', `/feature_flags/${flag.body.id}/`, { active: false })).status).toBe(200)
    await dialog.getByRole('button', { name: 'Delete' }).click()
    await page.waitForURL(/\/cohorts$/)
    expect((await call('GET', `/cohorts/${cohort.body.id}/`)).body.deleted).toBe(true)
    expect(h.errors).toEqual([])
  })

  it('shows the server’s error for a cohort that does not exist', async () => {
    const page = await h.page()
    await page.goto(`/project/${project}/cohorts/999999`)
    await page.getByTestId('error-state').waitFor()
    expect(await page.getByTestId('error-state').textContent()).toMatch(/Not found/i)
    expect(h.errors).toEqual([])
  })
})
