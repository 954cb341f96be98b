// The feature-flag screens in Chromium against a real server: a flag created in the editor with a 100% condition on
// a person property, evaluated in the "test this flag" panel through /flags for a person who matches and one who
// does not, edited (payload, JSON checked) and saved with its version, a stale edit refused with PostHog's 409 in
// the server's words, its history and its usage from captured `$feature_flag_called` events; the list's search
// and status filter; keyboard use; axe-core on every screen.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasChromium, screenshot, seriousViolations, startWeb, type WebHarness } from './harness.js'

let h: WebHarness
let project: number

const capture = (batch: unknown[]) => h.capture(batch)

const inject = (method: 'GET' | 'POST' | 'PATCH', path: string, payload?: unknown) => h.api(method, path, payload)

beforeAll(async () => {
  if (!hasChromium) return
  h = await startWeb()
  project = h.t.creds.project_id
  // Two persons: alice on the pro plan, bob on the free plan.
  const now = new Date().toISOString()
  await capture([
    { event: '$identify', distinct_id: 'alice', timestamp: now, properties: { $set: { plan: 'pro' } } },
    { event: '$identify', distinct_id: 'bob', timestamp: now, properties: { $set: { plan: 'free' } } },
  ])
}, 240_000)
afterAll(async () => {
  await h?.close()
})

/** Whether the element has the focus (run in the page). */
const isFocused = (el: unknown) =>
  el === (el as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement

/** A logged-in page; the machine the tests share is slow, so waits get a minute. */
async function open(): Promise<Page> {
  const page = await h.page()
  page.setDefaultTimeout(60_000)
  return page
}

async function evaluate(page: Page, distinctId: string) {
  const panel = page.getByTestId('test-flag')
  await panel.getByLabel('Distinct ID').fill(distinctId)
  await panel.getByRole('button', { name: 'Evaluate' }).click()
  await page.getByTestId('flag-decision').getByText(`For ${distinctId}:`).waitFor()
  return {
    value: await page.getByTestId('decision-value').textContent(),
    reason: await page.getByTestId('decision-reason').textContent(),
  }
}

describe.skipIf(!hasChromium)('feature flags', () => {
  let flagId: number

  it('test_create_feature_flag: creates a flag with a 100% condition on a person property, by keyboard', async () => {
    const page = await open()
    await page.goto(`/project/${project}/feature_flags`)
    await page.getByTestId('empty-state').getByText('No feature flags yet').waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'feature-flags-empty')

    await page.getByRole('link', { name: 'New feature flag' }).click()
    await page.waitForURL(/\/feature_flags\/new$/)
    const key = page.getByLabel('Key')
    await key.waitFor()
    expect(await key.evaluate(isFocused)).toBe(true)
    // The key has focus; typing and Tab move through the form as labelled fields.
    await page.keyboard.type('pro feature')
    await page.keyboard.press('Tab')
    await page.keyboard.type('Only for the pro plan')
    expect(await page.getByLabel('Key').inputValue()).toBe('pro feature')
    expect(await page.getByLabel('Description', { exact: true }).inputValue()).toBe('Only for the pro plan')
    // A key with a space is refused before anything is sent.
    await page.getByRole('button', { name: 'Create flag' }).click()
    await page.getByText('Only letters, numbers, hyphens (-) & underscores (_) are allowed.').waitFor()
    await page.getByLabel('Key').fill('pro-feature')

    await page.getByRole('button', { name: 'Add filter' }).click()
    await page.getByRole('combobox', { name: 'Set 1 filter 1: property' }).fill('plan')
    await page.getByRole('combobox', { name: 'Set 1 filter 1: value' }).click()
    // Values are suggested from the persons' data.
    await page.getByRole('option', { name: 'pro' }).click()
    const rollout = page.getByLabel('Set 1 rollout percentage')
    await rollout.fill('100')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'feature-flag-new')
    // Enter in a field submits the form.
    await page.getByLabel('Key').press('Enter')
    await page.waitForURL(/\/feature_flags\/\d+$/)
    flagId = Number(page.url().split('/').pop())

    const stored = (await inject('GET', `feature_flags/${flagId}/`)).json()
    expect(stored).toMatchObject({ key: 'pro-feature', name: 'Only for the pro plan', active: true, version: 1 })
    expect(stored.filters.groups).toEqual([
      expect.objectContaining({
        rollout_percentage: 100,
        properties: [expect.objectContaining({ key: 'plan', type: 'person', operator: 'exact', value: 'pro' })],
      }),
    ])
    expect(h.errors).toEqual([])
  }, 240_000)

  it('test_flags_endpoint: the panel evaluates the flag through /flags for a matching and a non-matching person', async () => {
    const page = await open()
    await page.goto(`/project/${project}/feature_flags/${flagId}`)
    await page.getByRole('heading', { name: 'pro-feature' }).waitFor()
    // alice has plan = pro: the 100% condition set 1 matches.
    expect(await evaluate(page, 'alice')).toEqual({ value: 'enabled', reason: 'Reason: Matched condition set 1' })
    // bob has plan = free: no set matches.
    expect(await evaluate(page, 'bob')).toEqual({ value: 'disabled', reason: 'Reason: No matching condition set' })
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'feature-flag')
    expect(h.errors).toEqual([])
  }, 180_000)

  it('test_updating_feature_flag: edits the payload (checked as JSON), saves with the version, and logs it', async () => {
    const page = await open()
    await page.goto(`/project/${project}/feature_flags/${flagId}`)
    const payload = page.getByLabel('Payload (served when the flag is enabled)')
    await payload.fill('{"tier": ')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText('Payload must be valid JSON').first().waitFor()
    expect((await inject('GET', `feature_flags/${flagId}/`)).json().version).toBe(1)

    await payload.fill('{"tier": 1}')
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByText('Feature flag saved').waitFor()
    const stored = (await inject('GET', `feature_flags/${flagId}/`)).json()
    expect(stored.version).toBe(2)
    expect(JSON.parse(stored.filters.payloads.true)).toEqual({ tier: 1 })
    // The SDK now gets the payload with alice's decision.
    await evaluate(page, 'alice')
    await page.getByTestId('flag-decision').getByText('Payload: {"tier":1}').waitFor()

    await page.getByRole('tab', { name: 'History' }).click()
    await page.waitForURL(/\?tab=history$/)
    const entries = page.getByTestId('activity-entry')
    await entries.first().waitFor()
    // Newest first: the edit, then the creation.
    expect(await entries.count()).toBe(2)
    expect(await entries.nth(0).textContent()).toContain('Changed the flag')
    expect(await entries.nth(0).textContent()).toContain('filters:')
    expect(await entries.nth(1).textContent()).toContain('Created the flag')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'feature-flag-history')
    expect(h.errors).toEqual([])
  }, 180_000)

  it('test_feature_flag_concurrent_edit_conflict: a stale save shows the 409 detail', async () => {
    const page = await open()
    await page.goto(`/project/${project}/feature_flags/${flagId}`)
    await page.getByRole('heading', { name: 'pro-feature' }).waitFor()
    // Someone else changes the release conditions after this editor loaded the flag (version 2 → 3).
    const flag = (await inject('GET', `feature_flags/${flagId}/`)).json()
    const other = await inject('PATCH', `feature_flags/${flagId}/`, {
      filters: { ...flag.filters, groups: [{ ...flag.filters.groups[0], rollout_percentage: 50 }] },
    })
    expect(other.statusCode, other.body).toBe(200)
    await page.getByLabel('Payload (served when the flag is enabled)').fill('{"tier": 2}')
    await page.getByRole('button', { name: 'Save' }).click()
    const error = page.getByTestId('save-error')
    await error.waitFor()
    expect(await error.textContent()).toContain(
      `The feature flag was updated by ${h.t.creds.email} since you started editing it. Please refresh and try again.`,
    )
    // Nothing of the stale edit was stored.
    const after = (await inject('GET', `feature_flags/${flagId}/`)).json()
    expect(after.version).toBe(3)
    expect(JSON.parse(after.filters.payloads.true)).toEqual({ tier: 1 })
    expect(after.filters.groups[0].rollout_percentage).toBe(50)
    expect(h.errors).toEqual([])
  }, 180_000)

  it('test_feature_flag_usage: shows the calls of the flag from captured $feature_flag_called events', async () => {
    const now = Date.now()
    const at = (minutes: number) => new Date(now - minutes * 60_000).toISOString()
    const called = (id: string, response: boolean, minutes: number) => ({
      event: '$feature_flag_called',
      distinct_id: id,
      timestamp: at(minutes),
      properties: { $feature_flag: 'pro-feature', $feature_flag_response: response },
    })
    // 3 calls of this flag (alice twice: true, bob once: false) and 1 of another flag.
    await capture([
      called('alice', true, 5),
      called('alice', true, 4),
      called('bob', false, 3),
      { ...called('bob', true, 2), properties: { $feature_flag: 'other', $feature_flag_response: true } },
    ])
    const page = await open()
    await page.goto(`/project/${project}/feature_flags/${flagId}?tab=usage`)
    await page.getByTestId('usage-total').waitFor()
    expect(await page.getByTestId('usage-total').textContent()).toBe('3 calls in the last 30 days')
    await page.getByTestId('usage-chart').locator('canvas').waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'feature-flag-usage')
    expect(h.errors).toEqual([])
  }, 180_000)

  it('test_get_flags_with_search_and_active_filter: the list searches and filters by status in the URL', async () => {
    const off = await inject('POST', 'feature_flags/', {
      key: 'dark-mode',
      name: 'Dark theme',
      active: false,
      filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
    })
    expect(off.statusCode, off.body).toBe(201)
    const page = await open()
    await page.goto(`/project/${project}/feature_flags`)
    const rows = page.getByTestId('flags-table').locator('tbody tr')
    await rows.first().waitFor()
    expect(await rows.count()).toBe(2)
    // Newest first.
    expect(await rows.nth(0).textContent()).toContain('dark-mode')
    expect(await rows.nth(0).textContent()).toContain('Disabled')
    expect(await rows.nth(1).textContent()).toContain('pro-feature')
    expect(await rows.nth(1).textContent()).toContain('50% of users matching 1 condition set')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'feature-flags')

    await page.getByLabel('Search').fill('dark')
    await page.getByLabel('Search').press('Enter')
    await page.waitForURL(/search=dark/)
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(1)
    expect(await rows.nth(0).textContent()).toContain('dark-mode')

    // The link reproduces the view: status Enabled, no search.
    await page.goto(`/project/${project}/feature_flags?active=true`)
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(1)
    expect(await rows.nth(0).textContent()).toContain('pro-feature')
    await page.goto(`/project/${project}/feature_flags?search=nothing-like-this`)
    await page.getByText('No matching feature flags').waitFor()
    expect(h.errors).toEqual([])
  }, 180_000)

  it('shows the server’s error for a flag that does not exist', async () => {
    const page = await open()
    await page.goto(`/project/${project}/feature_flags/999999`)
    await page.getByTestId('error-state').waitFor()
    expect(await page.getByTestId('error-state').textContent()).toMatch(/not found/i)
    expect(h.errors).toEqual([])
  }, 120_000)
})
