// The insights screens in Chromium against a real server with real events: a trends insight built by clicking
// (event, math, breakdown), its table values; a funnel and its conversion; the retention grid; the persons behind
// a clicked data point; save with name and tags → the list (search, tags, favourites); a link reproducing the
// view; the editor by keyboard; axe-core and screenshots on each screen.
// Every expected number is worked out by hand from the events captured below.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasChromium, screenshot, seriousViolations, startWeb, type WebHarness } from './harness.js'

let h: WebHarness
let project: number

const DAY = 86_400_000
const HOME = 'https://example.com/'
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
const today = new Date(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`).getTime()
/** `daysAgo` days before today (UTC, the project's zone), at `hh:mm`. */
const at = (daysAgo: number, hh: number, mm = 0) =>
  new Date(today - daysAgo * DAY + (hh * 60 + mm) * 60_000).toISOString()
/** PostHog's label of a day bucket: `5-Jan-2026`. */
const label = (daysAgo: number) => {
  const d = new Date(today - daysAgo * DAY)
  return `${d.getUTCDate()}-${MONTHS[d.getUTCMonth()]}-${d.getUTCFullYear()}`
}

const ev = (event: string, distinctId: string, timestamp: string, properties: Record<string, unknown> = {}) => ({
  event,
  timestamp,
  properties: { distinct_id: distinctId, ...properties },
})

const capture = (batch: unknown[]) => h.capture(batch)

/** A Mantine select: open it by its label and choose an option. */
async function pick(page: Page, name: string, option: string) {
  await page.getByRole('combobox', { name, exact: true }).click()
  await page.getByRole('option', { name: option, exact: true }).click()
}

/** The cells of the insight table's row `series`, by column header (Total and each day label); {} while absent. */
async function tableRow(page: Page, series: string): Promise<Record<string, string>> {
  const table = page.getByTestId('insight-table')
  if ((await table.count()) === 0) return {}
  const headers = (await table.locator('thead th').allTextContents()).slice(1)
  const row = table.locator('tbody tr').filter({ has: page.getByRole('rowheader', { name: series, exact: true }) })
  if ((await row.count()) !== 1) return {}
  const cells = await row.locator('td').allTextContents()
  return Object.fromEntries(headers.map((hd, i) => [hd, cells[i]]))
}

/** Waits for the row `series` of the insight table to show `expected` (the query runs after each change). */
const expectRow = (page: Page, series: string, expected: Record<string, string>) =>
  expect.poll(() => tableRow(page, series), { timeout: 45_000 }).toMatchObject(expected)

/** Waits until the result shown is the one computed for the query now in the editor. */
async function settled(page: Page) {
  await page.getByTestId('insight-result').waitFor()
  await page.getByText('Calculating…').first().waitFor({ state: 'detached' })
}

beforeAll(async () => {
  if (!hasChromium) return
  h = await startWeb()
  project = h.t.creds.project_id
  // Persons anna, bob, carol within the last 7 days, dan only 10 days ago. Ingested oldest first.
  await capture([
    ev('$pageview', 'dan', at(10, 9), { $browser: 'Chrome', $current_url: HOME }),
    ev('$pageview', 'carol', at(3, 9), { $browser: 'Firefox', $current_url: HOME }),
    ev('$pageview', 'anna', at(2, 9), { $browser: 'Chrome', $current_url: HOME }),
    ev('signup', 'bob', at(1, 9)),
    ev('$pageview', 'anna', at(1, 10), { $browser: 'Chrome', $current_url: HOME }),
    ev('$pageview', 'anna', at(1, 10, 5), { $browser: 'Chrome', $current_url: `${HOME}pricing` }),
    ev('$pageview', 'bob', at(1, 10), { $browser: 'Safari', $current_url: HOME }),
    ev('signup', 'anna', at(1, 11)),
  ])
  await h.t.burrow.committer.flushPending()
}, 120_000)
afterAll(async () => {
  await h?.close()
})

describe.skipIf(!hasChromium)('insights', () => {
  it('shows the empty list, then builds a trends insight by clicking: event, math, breakdown', async () => {
    const page = await h.page()
    await page.getByRole('link', { name: 'Insights' }).click()
    await page.waitForURL(/\/insights$/)
    await page.getByText('No insights yet').waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'insights-empty')

    await page.getByRole('button', { name: 'New insight' }).first().click()
    await page.getByRole('menuitem', { name: 'Trends' }).click()
    await page.waitForURL(/\/insights\/new\?/)
    // Last 7 days of $pageview, total count: carol 3 days ago, anna 2 days ago, anna ×2 and bob yesterday.
    await expectRow(page, '$pageview', {
      Total: '5',
      [label(3)]: '1',
      [label(2)]: '1',
      [label(1)]: '3',
      [label(0)]: '0',
    })
    expect((await tableRow(page, '$pageview'))[label(10)]).toBeUndefined()

    // Unique users: anna and bob yesterday.
    await pick(page, 'Series A math', 'Unique users')
    await expectRow(page, '$pageview', { Total: '4', [label(3)]: '1', [label(2)]: '1', [label(1)]: '2' })

    // A second series (signup: bob and anna yesterday), then back to one.
    await page.getByRole('button', { name: '+ Add graph series' }).click()
    await pick(page, 'Series B event', 'signup')
    await expectRow(page, 'signup', { Total: '2', [label(1)]: '2' })
    await page.getByRole('button', { name: 'Remove Series B' }).click()

    // Break down by browser: Chrome anna on two days, Safari bob, Firefox carol.
    await pick(page, 'Breakdown by', '$browser')
    await expectRow(page, 'Chrome', { Total: '2', [label(2)]: '1', [label(1)]: '1' })
    await expectRow(page, 'Safari', { Total: '1', [label(1)]: '1' })
    await expectRow(page, 'Firefox', { Total: '1', [label(3)]: '1' })
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'insight-trends')

    // The URL holds the query: a new page on the same link shows the same numbers.
    const link = page.url()
    expect(JSON.parse(new URL(link).searchParams.get('q') ?? '{}')).toMatchObject({
      kind: 'InsightVizNode',
      source: {
        kind: 'TrendsQuery',
        series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }],
        breakdownFilter: { breakdown_type: 'event', breakdown: '$browser' },
      },
    })
    const again = await h.page()
    await again.goto(link)
    await expectRow(again, 'Chrome', { Total: '2' })
    await expectRow(again, 'Safari', { Total: '1' })

    expect(h.errors).toEqual([])
  }, 120_000)

  it('lists the persons behind a clicked data point', async () => {
    const page = await h.page()
    const q = {
      kind: 'InsightVizNode',
      source: {
        kind: 'TrendsQuery',
        series: [{ kind: 'EventsNode', event: '$pageview', name: '$pageview', math: 'dau' }],
        dateRange: { date_from: '-7d' },
        interval: 'day',
        trendsFilter: { display: 'ActionsBar' },
      },
    }
    await page.goto(`/project/${project}/insights/new?q=${encodeURIComponent(JSON.stringify(q))}`)
    await settled(page)
    await page.getByRole('button', { name: `2 ($pageview, ${label(1)}): show persons` }).click()
    const modal = page.getByRole('dialog')
    await modal.getByTestId('persons-table').waitFor()
    const people = await modal.locator('tbody tr td:first-child').allTextContents()
    expect(people.sort()).toEqual(['anna', 'bob'])
    // anna viewed twice that day, bob once
    const rows = await modal.locator('tbody tr').allTextContents()
    expect(rows.find((r) => r.startsWith('anna'))).toMatch(/2$/)
    expect(rows.find((r) => r.startsWith('bob'))).toMatch(/1$/)
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'insight-persons')
    await page.keyboard.press('Escape')
    await modal.waitFor({ state: 'detached' })

    // The chart type is part of the query: a number shows unique users over the whole range (anna, bob, carol).
    await pick(page, 'Chart type', 'Number')
    await expect
      .poll(
        async () =>
          (await page.getByTestId('insight-number').count()) ? page.getByTestId('insight-number').textContent() : '',
        { timeout: 45_000 },
      )
      .toMatch(/^3\$pageview/)
    expect(h.errors).toEqual([])
  }, 120_000)

  it('computes a funnel and its conversion, and lists who dropped off', async () => {
    const page = await h.page()
    await page.goto(`/project/${project}/insights/new?kind=FunnelsQuery`)
    await pick(page, 'Step 2 event', 'signup')
    // Step 1 ($pageview): anna, bob, carol. Step 2 (signup after a pageview, within 14 days): anna only — bob
    // signed up before his pageview.
    const table = page.getByTestId('funnel-table')
    const rowCells = async (i: number) =>
      (await table.count()) ? await table.locator('tbody tr').nth(i).locator('td').allTextContents() : []
    await expect.poll(() => rowCells(1), { timeout: 45_000 }).toEqual(['2. signup', '1', '33.3%', '2', '55m 0s'])
    // anna's time is from her last pageview before the signup (10:05) to it (11:00), as PostHog measures it
    expect(await rowCells(0)).toEqual(['1. $pageview', '3', '100%', '—', '—'])
    await page.getByRole('button', { name: '2 dropped off before 2. signup: show persons' }).click()
    const modal = page.getByRole('dialog')
    await modal.getByTestId('persons-table').waitFor()
    expect((await modal.locator('tbody tr td:first-child').allTextContents()).sort()).toEqual(['bob', 'carol'])
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'insight-funnel')
    expect(h.errors).toEqual([])
  }, 120_000)

  it('shows the retention grid and the persons of a cohort', async () => {
    const page = await h.page()
    await page.goto(`/project/${project}/insights/new`)
    await page.getByRole('tab', { name: 'Retention' }).click()
    await settled(page)
    const grid = page.getByTestId('retention-grid')
    await grid.waitFor()
    // First-time $pageview cohorts: carol 3 days ago, anna 2 days ago (back yesterday), bob yesterday; dan's first
    // time was before the range.
    const cohort = (daysAgo: number) =>
      grid.locator('tbody tr').filter({ hasText: new Date(today - daysAgo * DAY).toISOString().slice(0, 10) })
    const cells = async (daysAgo: number) => (await cohort(daysAgo).locator('td').allTextContents()).slice(0, 3)
    await expect.poll(() => cells(3), { timeout: 45_000 }).toEqual(['1', '100%', '0%'])
    expect(await cells(2)).toEqual(['1', '100%', '100%'])
    expect(await cells(1)).toEqual(['1', '100%', '0%'])
    expect((await cells(5))[0]).toBe('0')
    await cohort(2).getByRole('button').click()
    const modal = page.getByRole('dialog')
    await modal.getByTestId('persons-table').waitFor()
    expect(await modal.locator('tbody tr td:first-child').allTextContents()).toEqual(['anna'])
    await page.keyboard.press('Escape')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'insight-retention')

    // Lifecycle, stickiness and paths render from the same editor.
    await page.getByRole('tab', { name: 'Lifecycle' }).click()
    await expect
      .poll(async () => page.getByTestId('insight-table').locator('tbody tr th').allTextContents(), { timeout: 45_000 })
      .toEqual(['new', 'returning', 'resurrecting', 'dormant'])
    await page.getByRole('tab', { name: 'User paths' }).click()
    await settled(page)
    // One session moved between pages: anna's yesterday, home then pricing (the trailing slash dropped).
    await expect
      .poll(
        async () =>
          (await page.getByTestId('insight-chart').count())
            ? page.getByTestId('insight-chart').getAttribute('aria-label')
            : '',
        { timeout: 45_000 },
      )
      .toBe('Paths: 1 transitions, the largest 1_https://example.com to 2_https://example.com/pricing (1)')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'insight-paths')
    expect(h.errors).toEqual([])
  }, 120_000)

  it('saves an insight with a name and tags; it appears in the list, searchable and favourited', async () => {
    const page = await h.page()
    await page.goto(`/project/${project}/insights/new?kind=TrendsQuery`)
    await settled(page)
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Daily pageviews')
    await page.getByRole('combobox', { name: 'Tags' }).fill('growth')
    await page.getByRole('combobox', { name: 'Tags' }).press('Enter')
    await page.getByRole('button', { name: 'Save insight' }).click()
    await page.waitForURL(/\/insights\/[A-Za-z0-9]+$/)
    await page.getByRole('heading', { name: 'Daily pageviews' }).waitFor()
    const shortId = new URL(page.url()).pathname.split('/').pop()

    const list = await h.t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${project}/insights/?short_id=${shortId}`,
      headers: h.t.auth,
    })
    const saved = list.json().results[0]
    expect(saved).toMatchObject({ name: 'Daily pageviews', tags: ['growth'], saved: true, favorited: false })
    expect(saved.query).toMatchObject({ kind: 'InsightVizNode', source: { kind: 'TrendsQuery' } })

    // Favourite it on its page, then find it in the list.
    await page.getByRole('button', { name: 'Add to favorites' }).click()
    await page.getByRole('button', { name: 'Remove from favorites' }).waitFor()
    await page.getByRole('link', { name: '← Insights' }).click()
    await page.waitForURL(/\/insights$/)
    const table = page.getByTestId('insights-table')
    await table.getByRole('link', { name: 'Daily pageviews' }).waitFor()
    expect(await table.locator('tbody tr').first().textContent()).toContain('growth')
    await page.locator('label', { hasText: 'Favorites' }).click()
    await page.waitForURL(/tab=favorites/)
    await table.getByRole('link', { name: 'Daily pageviews' }).waitFor()
    await page.getByLabel('Search').fill('nothing like it')
    await page.getByLabel('Search').press('Enter')
    await page.getByText('No insights match').waitFor()
    await page.getByLabel('Search').fill('daily')
    await page.getByLabel('Search').press('Enter')
    await page.getByTestId('insights-table').getByRole('link', { name: 'Daily pageviews' }).waitFor()
    expect(page.url()).toMatch(/search=daily/)
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'insights-list')

    // Edit it: the change is unsaved until Save, then PATCHed.
    await page.getByTestId('insights-table').getByRole('link', { name: 'Daily pageviews' }).click()
    await settled(page)
    await pick(page, 'Series A math', 'Unique users')
    await page.getByText('Unsaved changes').waitFor()
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByText('Unsaved changes').waitFor({ state: 'detached' })
    const after = await h.t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${project}/insights/${saved.id}/`,
      headers: h.t.auth,
    })
    expect(after.json().query.source.series[0].math).toBe('dau')
    expect(after.json().favorited).toBe(true)
    expect(h.errors).toEqual([])
  }, 120_000)

  it('is usable by keyboard, and shows the server’s words for a bad query or an unknown insight', async () => {
    const page = await h.page()
    await page.goto(`/project/${project}/insights/new?kind=TrendsQuery`)
    await settled(page)
    // Tab to the math select and choose by keyboard.
    const math = page.getByRole('combobox', { name: 'Series A math', exact: true })
    await page.getByRole('combobox', { name: 'Series A event', exact: true }).focus()
    await page.keyboard.press('Tab')
    expect(await math.evaluate((el) => el === document.activeElement)).toBe(true)
    await page.keyboard.press('ArrowDown')
    await page.getByRole('listbox').waitFor()
    await page.keyboard.press('ArrowDown')
    await page.keyboard.press('Enter')
    await expect.poll(() => math.inputValue()).toBe('Unique users')
    // The kind tabs move with the arrow keys.
    await page.getByRole('tab', { name: 'Trends' }).focus()
    await page.keyboard.press('ArrowRight')
    await expect
      .poll(() => page.getByRole('tab', { name: 'Funnels' }).evaluate((el) => el === document.activeElement))
      .toBe(true)
    await page.keyboard.press('Enter')
    await expect.poll(() => page.getByRole('tab', { name: 'Funnels' }).getAttribute('aria-selected')).toBe('true')

    // A formula the server refuses: its error is shown.
    await page.getByRole('tab', { name: 'Trends' }).click()
    await page.getByLabel('Formula').fill('A +')
    await page.getByTestId('error-state').waitFor()
    expect((await page.getByTestId('error-state').textContent())?.length).toBeGreaterThan(20)

    await page.goto(`/project/${project}/insights/nOsUcH1d`)
    await page.getByText('Insight not found').waitFor()
    expect(h.errors).toEqual([])
  }, 120_000)
})
