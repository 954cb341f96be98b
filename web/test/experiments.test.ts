// The experiment screens in Chromium against a real server: holdouts and shared metrics created on their tabs; an
// experiment created with a new flag, given a funnel metric, launched; exposures and conversions of known users
// captured through /batch/; the results read off the page (exposures, conversions, rates, chance to win and the
// credible interval, worked out by hand from the counts), the running-time calculator; pause, resume and ship a
// variant; an experiment on an existing flag; keyboard use; axe-core on every screen.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { normalCdf, normalQuantile } from '../../test/experiments/reference.js'
import { hasChromium, screenshot, seriousViolations, startWeb, type WebHarness } from './harness.js'

let h: WebHarness
let project: number

const capture = (batch: unknown[]) => h.capture(batch)

const inject = (method: 'GET' | 'POST' | 'PATCH', path: string, payload?: unknown) => h.api(method, path, payload)

/** Whether the element has the focus (run in the page). */
const isFocused = (el: unknown) =>
  el === (el as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement

/** A logged-in page; the machine the tests share is slow, so waits get a minute. */
async function open(): Promise<Page> {
  const page = await h.page()
  page.setDefaultTimeout(60_000)
  return page
}

beforeAll(async () => {
  if (!hasChromium) return
  h = await startWeb()
  project = h.t.creds.project_id
  // The event names the metric editor offers (by someone never exposed, so never counted).
  await capture([{ event: 'purchase', distinct_id: 'seed', timestamp: new Date().toISOString(), properties: {} }])
}, 240_000)
afterAll(async () => {
  await h?.close()
})

const pct = (x: number) => `${(x * 100).toFixed(1)}%`

describe.skipIf(!hasChromium)('experiments', () => {
  let experimentId: number

  it('test_create_holdout and test_create_saved_metric: the side tabs list what is created on them', async () => {
    const page = await open()
    await page.goto(`/project/${project}/experiments`)
    await page.getByText('No experiments yet').waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'experiments-empty')

    await page.getByRole('tab', { name: 'Holdout groups' }).click()
    await page.waitForURL(/tab=holdouts/)
    await page.getByText('No holdouts yet').waitFor()
    await page.getByRole('button', { name: 'New holdout' }).click()
    await page.getByLabel('Name').fill('Global holdout')
    await page.getByLabel('Share of users held out').fill('10')
    await page.getByRole('button', { name: 'Save holdout' }).click()
    const holdouts = page.getByTestId('holdouts-table').locator('tbody tr')
    await holdouts.first().waitFor()
    expect(await holdouts.count()).toBe(1)
    expect(await holdouts.first().textContent()).toContain('Global holdout')
    expect(await holdouts.first().textContent()).toContain('10%')
    const stored = (await inject('GET', 'experiment_holdouts/')).json().results
    expect(stored).toHaveLength(1)
    expect(stored[0].filters).toEqual([expect.objectContaining({ rollout_percentage: 10 })])
    expect(await seriousViolations(page)).toEqual([])

    await page.getByRole('tab', { name: 'Shared metrics' }).click()
    await page.waitForURL(/tab=metrics/)
    await page.getByRole('button', { name: 'New shared metric' }).click()
    await page.getByRole('textbox', { name: /^Name/ }).fill('Purchase conversion')
    // Saving without an event says what is missing, and stores nothing.
    await page.getByRole('button', { name: 'Save shared metric' }).click()
    await page.getByRole('dialog').getByText('Choose an event for every step and source.').waitFor()
    await page.getByRole('combobox', { name: 'Step 1' }).click()
    await page.getByRole('option', { name: 'purchase' }).click()
    await page.getByRole('button', { name: 'Save shared metric' }).click()
    const metrics = page.getByTestId('saved-metrics-table').locator('tbody tr')
    await metrics.first().waitFor()
    expect(await metrics.first().textContent()).toContain('Purchase conversion')
    expect(await metrics.first().textContent()).toContain('Funnel: purchase')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'experiments-shared-metrics')
    expect(h.errors).toEqual([])
  }, 240_000)

  it('test_create_experiment_with_new_flag: creates a draft by keyboard, adds a funnel metric, launches it', async () => {
    const page = await open()
    await page.goto(`/project/${project}/experiments/new`)
    // The name has focus: type it, and Enter submits; without a flag key the form says so.
    const name = page.getByLabel('Name')
    await name.waitFor()
    expect(await name.evaluate(isFocused)).toBe(true)
    await page.keyboard.type('Checkout test')
    await page.keyboard.press('Enter')
    await page.getByText('Please set a feature flag key.').waitFor()
    await page.getByLabel('Feature flag key').fill('checkout-exp')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'experiment-new')
    await page.getByLabel('Feature flag key').press('Enter')
    await page.waitForURL(/\/experiments\/\d+$/)
    experimentId = Number(page.url().split('/').pop())
    expect(await page.getByTestId('experiment-status').textContent()).toBe('draft')

    const created = (await inject('GET', `experiments/${experimentId}/`)).json()
    expect(created).toMatchObject({ name: 'Checkout test', feature_flag_key: 'checkout-exp', start_date: null })
    expect(created.feature_flag.active).toBe(false)
    expect(created.feature_flag.filters.multivariate.variants.map((v: { key: string }) => v.key)).toEqual([
      'control',
      'test',
    ])

    await page.getByRole('button', { name: 'Add metric' }).click()
    await page.getByRole('combobox', { name: 'Step 1' }).click()
    await page.getByRole('option', { name: 'purchase' }).click()
    await page.getByRole('button', { name: 'Save metric' }).click()
    await page.getByTestId('metric-results').waitFor()
    await page.getByText('Results appear once the experiment is launched.').waitFor()
    const withMetric = (await inject('GET', `experiments/${experimentId}/`)).json()
    expect(withMetric.metrics).toEqual([
      expect.objectContaining({ metric_type: 'funnel', series: [expect.objectContaining({ event: 'purchase' })] }),
    ])

    await page.getByRole('button', { name: 'Launch' }).click()
    await page.getByTestId('experiment-status').getByText('running').waitFor()
    const launched = (await inject('GET', `experiments/${experimentId}/`)).json()
    expect(launched.start_date).not.toBeNull()
    expect(launched.feature_flag.active).toBe(true)
    expect(h.errors).toEqual([])
  }, 240_000)

  it('test_experiment_results: shows exposures, conversions and the chance to win from captured events', async () => {
    const start = Date.parse((await inject('GET', `experiments/${experimentId}/`)).json().start_date)
    const at = (ms: number) => new Date(start + ms).toISOString()
    const batch: unknown[] = []
    // 60 users see control and 12 of them buy; 60 see test and 24 of them buy.
    for (let i = 0; i < 60; i++) {
      for (const [prefix, variant, buyers] of [
        ['c', 'control', 12],
        ['t', 'test', 24],
      ] as const) {
        batch.push({
          event: '$feature_flag_called',
          distinct_id: `${prefix}${i}`,
          timestamp: at(1000),
          properties: { $feature_flag: 'checkout-exp', $feature_flag_response: variant },
        })
        if (i < buyers)
          batch.push({ event: 'purchase', distinct_id: `${prefix}${i}`, timestamp: at(2000), properties: {} })
      }
    }
    await capture(batch)
    // Let the purchases fall inside the window that ends now.
    while (Date.now() < start + 3000) await new Promise((r) => setTimeout(r, 200))

    const page = await open()
    await page.goto(`/project/${project}/experiments/${experimentId}`)
    const control = page.getByTestId('result-control')
    const test = page.getByTestId('result-test')
    // The results page opened right after the launch (the test before) left a cached answer with no exposures:
    // Refresh calculates it again over the events captured since.
    await page.getByRole('button', { name: 'Refresh results of Funnel: purchase' }).click()
    await test.waitFor()
    expect(await control.getByTestId('exposures').textContent()).toBe('60')
    expect(await control.getByTestId('conversions').textContent()).toBe('12')
    expect(await control.getByTestId('value').textContent()).toBe('20.0%')
    expect(await test.getByTestId('exposures').textContent()).toBe('60')
    expect(await test.getByTestId('conversions').textContent()).toBe('24')
    expect(await test.getByTestId('value').textContent()).toBe('40.0%')

    // By hand: rates 0.2 and 0.4, variances p(1−p); relative effect (0.4−0.2)/0.2 = 1 with the delta-method
    // variance (0.24/60)/0.2² + 0.4²·(0.16/60)/0.2⁴ = 0.1 + 0.2667.
    const sd = Math.sqrt(0.24 / 60 / 0.04 + (0.16 * (0.16 / 60)) / 0.0016)
    const chance = 1 - normalCdf(-1 / sd)
    expect(chance).toBeGreaterThan(0.95)
    expect(await test.getByTestId('significance').textContent()).toBe(`${pct(chance)}significant`)
    const lo = 1 + sd * normalQuantile(0.025)
    const hi = 1 + sd * normalQuantile(0.975)
    expect(await test.getByTestId('interval').textContent()).toBe(`${pct(lo)} to ${pct(hi)}`)
    await page.getByTestId('interval-chart').locator('canvas').waitFor()

    // Running time: σ² = 0.2·0.8 = 0.16, d = 20% of 0.2 = 0.04, n = 16·0.16/0.04²·2 = 3200, at 100 a day 32 days.
    await page.getByTestId('running-time-result').getByText('3200').waitFor()
    expect(await page.getByTestId('running-time-result').textContent()).toBe(
      'Recommended sample size: 3200 users · about 32 days',
    )
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'experiment-results')
    expect(h.errors).toEqual([])
  }, 240_000)

  it('test_pause_resume_and_ship_variant: the lifecycle buttons call the helper routes', async () => {
    const page = await open()
    await page.goto(`/project/${project}/experiments/${experimentId}`)
    await page.getByRole('button', { name: 'Pause' }).click()
    await page.getByTestId('experiment-status').getByText('paused').waitFor()
    expect((await inject('GET', `experiments/${experimentId}/`)).json().feature_flag.active).toBe(false)
    await page.getByRole('button', { name: 'Resume' }).click()
    await page.getByTestId('experiment-status').getByText('running').waitFor()

    // Exposure settings are saved with PATCH.
    await page.getByRole('combobox', { name: 'Users who saw several variants' }).click()
    await page.getByRole('option', { name: 'Use the first variant seen' }).click()
    await page.getByRole('button', { name: 'Save exposure settings' }).click()
    await expect
      .poll(async () => (await inject('GET', `experiments/${experimentId}/`)).json().exposure_criteria)
      .toMatchObject({ multiple_variant_handling: 'first_seen' })

    await page.getByRole('button', { name: 'Ship a variant' }).click()
    const dialog = page.getByRole('dialog', { name: 'Ship a variant' })
    await dialog.getByRole('button', { name: 'Ship test' }).click()
    await page.getByTestId('experiment-status').getByText('complete').waitFor()
    const shipped = (await inject('GET', `experiments/${experimentId}/`)).json()
    expect(shipped.conclusion).toBe('won')
    expect(shipped.end_date).not.toBeNull()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'experiment-shipped')

    // The list shows it complete.
    await page.goto(`/project/${project}/experiments`)
    const rows = page.getByTestId('experiments-table').locator('tbody tr')
    await rows.first().waitFor()
    expect(await rows.first().textContent()).toContain('Checkout test')
    expect(await rows.first().textContent()).toContain('complete')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'experiments')
    expect(h.errors).toEqual([])
  }, 240_000)

  it('test_create_experiment_with_existing_flag: uses an eligible multivariate flag', async () => {
    const flag = await inject('POST', 'feature_flags/', {
      key: 'pricing-page',
      filters: {
        groups: [{ properties: [], rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'control', rollout_percentage: 50 },
            { key: 'cheaper', rollout_percentage: 50 },
          ],
        },
      },
    })
    expect(flag.statusCode, flag.body).toBe(201)
    const page = await open()
    await page.goto(`/project/${project}/experiments/new`)
    await page.getByLabel('Name').fill('Pricing')
    await page.getByText('Use an existing flag').click()
    await page.getByRole('combobox', { name: 'Existing feature flag' }).click()
    await page.getByRole('option', { name: 'pricing-page (control, cheaper)' }).click()
    await page.getByRole('button', { name: 'Save as draft' }).click()
    await page.waitForURL(/\/experiments\/\d+$/)
    const id = Number(page.url().split('/').pop())
    const stored = (await inject('GET', `experiments/${id}/`)).json()
    expect(stored.feature_flag.id).toBe(flag.json().id)
    await page.getByText('control: 50%').waitFor()
    await page.getByText('cheaper: 50%').waitFor()
    expect(h.errors).toEqual([])
  }, 240_000)

  it('shows the server’s refusal for a flag that is not eligible', async () => {
    const flag = await inject('POST', 'feature_flags/', {
      key: 'plain-toggle',
      filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
    })
    expect(flag.statusCode, flag.body).toBe(201)
    const page = await open()
    await page.goto(`/project/${project}/experiments/new`)
    await page.getByLabel('Name').fill('Toggle')
    // A new-flag experiment on the key of an existing boolean flag is refused by the server, in its words.
    await page.getByLabel('Feature flag key').fill('plain-toggle')
    await page.getByRole('button', { name: 'Save as draft' }).click()
    await page.getByRole('alert').getByText('Feature flag is not eligible for experiments.').waitFor()
    expect(h.errors).toEqual([])
  }, 240_000)
})
