// The dashboards screens in Chromium against a real server: the list (create by keyboard, search, pinned), a
// dashboard's tiles showing their insights' real results, dashboard date and property filters changing every
// tile's value (and saved onto the dashboard), PostHog's refresh semantics (cached on reload, recalculated by
// Refresh), adding an existing insight and a text card, and a dragged tile's layout surviving a reload.
// Expected numbers are worked out by hand from the events captured below.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasChromium, screenshot, seriousViolations, startWeb, type WebHarness } from './harness.js'

let h: WebHarness
/** expect.poll with room for a slow, shared machine (its default gives up after one second). */
const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 20_000, interval: 200 })
let project: number

const HOUR = 3_600_000
const ago = (ms: number) => new Date(Date.now() - ms).toISOString()
const ev = (event: string, distinctId: string, timestamp: string, properties: Record<string, unknown> = {}) => ({
  event,
  timestamp,
  properties: { distinct_id: distinctId, ...properties },
})

const capture = (batch: unknown[]) => h.capture(batch)

type Method = 'GET' | 'POST' | 'PATCH'
async function call(method: Method, path: string, payload?: unknown) {
  const res = await h.t.burrow.app.inject({
    method,
    url: `/api/projects/${project}/${path}`,
    headers: h.t.auth,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  })
  expect(res.statusCode, res.body).toBeLessThan(300)
  return res.json()
}

const pageviewTotal = (display: string) => ({
  kind: 'InsightVizNode',
  source: {
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: '$pageview', math: 'total' }],
    dateRange: { date_from: '-30d' },
    interval: 'day',
    trendsFilter: { display },
  },
})

/** The number shown by the tile of the named insight. */
const tileNumber = (page: Page, name: string) =>
  page.getByRole('region', { name }).getByTestId('insight-number').getByRole('heading')

beforeAll(async () => {
  if (!hasChromium) return
  h = await startWeb()
  project = h.t.creds.project_id
  // Four pageviews in the last 30 days, three of them in the last 7, two of those from Chrome.
  await capture([
    ev('$pageview', 'anna', ago(26 * HOUR), { $browser: 'Chrome' }),
    ev('$pageview', 'anna', ago(50 * HOUR), { $browser: 'Chrome' }),
    ev('$pageview', 'bob', ago(30 * HOUR), { $browser: 'Safari' }),
    ev('$pageview', 'carol', ago(20 * 24 * HOUR), { $browser: 'Chrome' }),
  ])
}, 120_000)
afterAll(async () => {
  await h?.close()
})

describe.skipIf(!hasChromium)('dashboards', () => {
  it('lists dashboards: empty state, create one by keyboard, search and the pinned filter', async () => {
    const page = await h.page()
    await page.getByRole('link', { name: 'Dashboards' }).click()
    await page.waitForURL(/\/dashboards$/)
    await page.getByText('No dashboards yet').waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'dashboards-empty')

    // Keyboard only: the button, the name, Enter submits.
    await page.getByRole('button', { name: 'New dashboard' }).focus()
    await page.keyboard.press('Enter')
    await page.getByRole('dialog', { name: 'New dashboard' }).waitFor()
    await page.keyboard.type('Marketing KPIs')
    await page.keyboard.press('Tab')
    await page.keyboard.type('What marketing watches')
    await page.getByLabel('Name').press('Enter')
    await page.waitForURL(/\/dashboards\/\d+$/)
    await page.getByRole('heading', { name: 'Marketing KPIs' }).waitFor()
    await page.getByText('This dashboard is empty').waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'dashboard-empty')

    const list = await call('GET', 'dashboards/')
    expect(list.results.map((d: { name: string; description: string }) => [d.name, d.description])).toEqual([
      ['Marketing KPIs', 'What marketing watches'],
    ])
    await call('POST', 'dashboards/', { name: 'Engineering', pinned: true })

    await page.goto(`/project/${project}/dashboards`)
    const rows = page.getByTestId('dashboards-table').locator('tbody tr')
    await poll(() => rows.count()).toBe(2)
    await page.getByLabel('Search dashboards').fill('market')
    await page.waitForURL(/search=market/)
    await poll(() => rows.allInnerTexts()).toEqual([expect.stringContaining('Marketing KPIs')])
    await page.getByLabel('Search dashboards').fill('')
    await poll(() => rows.count()).toBe(2)
    await page.getByRole('switch', { name: 'Pinned' }).focus()
    await page.keyboard.press('Space')
    await page.waitForURL(/pinned=true/)
    await poll(() => rows.allInnerTexts()).toEqual([expect.stringContaining('Engineering')])
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'dashboards')

    // Pin from the list: the star.
    await page.getByRole('switch', { name: 'Pinned' }).press('Space')
    await page.waitForURL((url) => !url.search.includes('pinned'))
    await page.getByRole('button', { name: 'Pin Marketing KPIs' }).click()
    await page.getByRole('button', { name: 'Unpin Marketing KPIs' }).waitFor()
    const pinned = await call('GET', 'dashboards/?pinned=true')
    expect(pinned.results.map((d: { name: string }) => d.name).sort()).toEqual(['Engineering', 'Marketing KPIs'])
    expect(h.errors).toEqual([])
  }, 90_000)

  it('shows tiles with real results; date and property filters change every tile; saved filters persist', async () => {
    const dashboard = await call('POST', 'dashboards/', { name: 'Traffic' })
    await call('POST', 'insights/', {
      name: 'Pageviews',
      query: pageviewTotal('BoldNumber'),
      saved: true,
      dashboards: [dashboard.id],
    })
    await call('POST', 'insights/', {
      name: 'Pageviews by day',
      query: pageviewTotal('ActionsLineGraph'),
      saved: true,
      dashboards: [dashboard.id],
    })
    const page = await h.page()
    await page.goto(`/project/${project}/dashboards/${dashboard.id}`)
    // -30d: all four pageviews.
    await poll(() => tileNumber(page, 'Pageviews').textContent()).toBe('4')
    const chart = page.getByRole('region', { name: 'Pageviews by day' }).getByTestId('tile-chart')
    await poll(() => chart.getAttribute('data-summary')).toBe('$pageview: 4')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'dashboard')

    // Last 7 days: the one from 20 days ago drops out, on both tiles.
    await page.getByRole('combobox', { name: 'Date range' }).click()
    await page.getByRole('option', { name: 'Last 7 days' }).click()
    await page.waitForURL(/date_from=-7d/)
    await poll(() => tileNumber(page, 'Pageviews').textContent()).toBe('3')
    await poll(() => chart.getAttribute('data-summary')).toBe('$pageview: 3')

    // And only Chrome: anna's two.
    await page.getByRole('button', { name: 'Add filter' }).click()
    await page.getByRole('combobox', { name: 'Property', exact: true }).fill('$brow')
    await page.getByRole('option', { name: '$browser' }).click()
    await page.getByRole('textbox', { name: 'Value' }).fill('Chrome')
    await page.getByRole('textbox', { name: 'Value' }).press('Enter')
    await page.getByTestId('dashboard-filter').filter({ hasText: '$browser = Chrome' }).waitFor()
    await poll(() => tileNumber(page, 'Pageviews').textContent()).toBe('2')
    await poll(() => chart.getAttribute('data-summary')).toBe('$pageview: 2')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'dashboard-filters')

    // The filters were only in the URL: saving puts them on the dashboard.
    expect((await call('GET', `dashboards/${dashboard.id}/`)).filters).toEqual({})
    await page.getByRole('button', { name: 'Save filters' }).click()
    await page.waitForURL((url) => !url.search.includes('date_from'))
    const saved = await call('GET', `dashboards/${dashboard.id}/`)
    expect(saved.filters).toEqual({
      date_from: '-7d',
      properties: [{ type: 'event', key: '$browser', operator: 'exact', value: ['Chrome'] }],
    })
    await page.reload()
    await poll(() => tileNumber(page, 'Pageviews').textContent()).toBe('2')

    // Removing the property filter (unsaved) goes back to three; Discard to the saved two.
    await page.getByRole('button', { name: 'Remove filter $browser' }).click()
    await poll(() => tileNumber(page, 'Pageviews').textContent()).toBe('3')
    await page.getByRole('button', { name: 'Discard' }).click()
    await poll(() => tileNumber(page, 'Pageviews').textContent()).toBe('2')
    expect(h.errors).toEqual([])
  }, 90_000)

  it('serves cached results on reload and recalculates on Refresh (PostHog’s ?refresh= semantics)', async () => {
    const dashboard = await call('POST', 'dashboards/', { name: 'Refreshing' })
    await call('POST', 'insights/', {
      name: 'All pageviews',
      query: pageviewTotal('BoldNumber'),
      saved: true,
      dashboards: [dashboard.id],
    })
    const page = await h.page()
    await page.goto(`/project/${project}/dashboards/${dashboard.id}`)
    await poll(() => tileNumber(page, 'All pageviews').textContent()).toBe('4')
    await page.getByTestId('last-refreshed').waitFor()

    await capture([ev('$pageview', 'dora', ago(2 * HOUR), { $browser: 'Firefox' })])
    // `refresh=blocking`: a result younger than its staleness threshold is served from the cache.
    await page.reload()
    await page.getByTestId('last-refreshed').waitFor()
    expect(await tileNumber(page, 'All pageviews').textContent()).toBe('4')
    // Refresh asks `force_blocking`: calculated again, with dora's pageview.
    await page.getByRole('button', { name: 'Refresh' }).click()
    await poll(() => tileNumber(page, 'All pageviews').textContent()).toBe('5')
    expect(h.errors).toEqual([])
  }, 90_000)

  it('adds an existing insight and a text card; a dragged tile keeps its place after a reload', async () => {
    const dashboard = await call('POST', 'dashboards/', { name: 'Layout' })
    const insight = await call('POST', 'insights/', {
      name: 'Weekly pageviews',
      query: pageviewTotal('BoldNumber'),
      saved: true,
    })
    const page = await h.page()
    await page.goto(`/project/${project}/dashboards/${dashboard.id}`)
    await page.getByText('This dashboard is empty').waitFor()

    // Add the saved insight through the picker.
    await page.getByRole('button', { name: 'Add insight' }).first().click()
    const dialog = page.getByRole('dialog', { name: 'Add insight to dashboard' })
    await dialog.getByLabel('Search insights').fill('Weekly')
    await dialog.getByRole('button', { name: 'Add Weekly pageviews' }).click()
    await dialog.waitFor({ state: 'hidden' })
    await page.getByRole('region', { name: 'Weekly pageviews' }).waitFor()
    expect((await call('GET', `insights/${insight.id}/`)).dashboards).toEqual([dashboard.id])

    // A text card, by keyboard.
    await page.getByRole('button', { name: 'Add text card' }).first().focus()
    await page.keyboard.press('Enter')
    const editor = page.getByRole('dialog', { name: 'Add text card' })
    await editor.waitFor()
    await page.keyboard.type('Numbers refresh every morning.')
    await editor.getByRole('button', { name: 'Save' }).click()
    await page.getByTestId('text-tile').filter({ hasText: 'Numbers refresh every morning.' }).waitFor()
    expect(await seriousViolations(page)).toEqual([])

    const before = await call('GET', `dashboards/${dashboard.id}/`)
    expect(before.tiles.map((t: { insight: unknown; text: { body: string } | null }) => t.text?.body ?? null)).toEqual([
      null,
      'Numbers refresh every morning.',
    ])
    const [insightTile, textTile] = before.tiles as { id: number }[]

    // The insight tile is at x=0 and the text card beside it at x=6 (each half of the 12 columns). Drag the
    // insight tile down below the text card by its title bar.
    const tile = page.locator(`[data-tile-id="${insightTile.id}"]`)
    const handle = tile.locator('.tile-drag-handle')
    const box = (await handle.boundingBox())!
    const start = { x: box.x + box.width / 2 + 60, y: box.y + box.height / 2 }
    await page.mouse.move(start.x, start.y)
    await page.mouse.down()
    // Right by half the grid, then down by many rows, in steps so the grid follows.
    for (let i = 1; i <= 20; i++) await page.mouse.move(start.x + (i * 620) / 20, start.y + (i * 500) / 20)
    await page.mouse.up()
    await expect
      .poll(async () => {
        const d = await call('GET', `dashboards/${dashboard.id}/`)
        return d.tiles.find((t: { id: number }) => t.id === insightTile.id).layouts.sm ?? null
      })
      .toMatchObject({ x: 6, w: 6, h: 5 })
    const after = await call('GET', `dashboards/${dashboard.id}/`)
    const layouts = Object.fromEntries(
      after.tiles.map((t: { id: number; layouts: { sm: { x: number; y: number } } }) => [t.id, t.layouts.sm]),
    )
    // Now in the right column, below the text card (3 rows tall): the grid compacts it up to y=3.
    expect(layouts[insightTile.id]).toMatchObject({ x: 6, y: 3, w: 6, h: 5 })
    expect(layouts[textTile.id]).toMatchObject({ x: 6, y: 0, w: 6, h: 3 })

    await page.reload()
    await page.getByRole('region', { name: 'Weekly pageviews' }).waitFor()
    // The grid measures its width after the first paint and slides the tiles into place (a CSS transition):
    // wait until both have settled in the same column.
    const columnGap = async () => {
      const text = (await page.locator(`[data-tile-id="${textTile.id}"]`).boundingBox())!
      const insight = (await tile.boundingBox())!
      return Math.round(insight.x) - Math.round(text.x)
    }
    await expect.poll(columnGap, { timeout: 10_000 }).toBe(0)
    const textBox = (await page.locator(`[data-tile-id="${textTile.id}"]`).boundingBox())!
    const insightBox = (await tile.boundingBox())!
    expect(insightBox.y).toBeGreaterThan(textBox.y + textBox.height - 1)
    await screenshot(page, 'dashboard-layout')

    // Remove the text card from its menu.
    await page.getByRole('button', { name: 'Options for Text' }).click()
    await page.getByRole('menuitem', { name: 'Remove from dashboard' }).click()
    await page.getByTestId('text-tile').waitFor({ state: 'detached' })
    const left = await call('GET', `dashboards/${dashboard.id}/`)
    expect(left.tiles.map((t: { id: number }) => t.id)).toEqual([insightTile.id])
    expect(h.errors).toEqual([])
  }, 90_000)

  it('shows the server’s error for a dashboard that does not exist', async () => {
    const page = await h.page()
    await page.goto(`/project/${project}/dashboards/999999`)
    await page.getByTestId('error-state').waitFor()
    expect(await page.getByTestId('error-state').textContent()).toMatch(/Not found/i)
    expect(await seriousViolations(page)).toEqual([])
    expect(h.errors).toEqual([])
  }, 60_000)
})
