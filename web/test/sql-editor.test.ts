// The SQL editor in Chromium against a real server with captured events: a typed query run with Ctrl+Enter shows
// the rows worked out by hand, an error is shown (and marked) at its line and column, completion offers the
// project's property names, 50,000 rows render as a window, a slow query is cancelled, and the query is saved
// as an insight and as an endpoint that then exist through the API.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { catalogue } from '../scripts/hogql-catalogue.js'
import * as webCatalogue from '../src/screens/sql/catalogue.js'
import { hasChromium, screenshot, seriousViolations, startWeb, type WebHarness } from './harness.js'

let h: WebHarness
let base: string

const event = (name: string, distinctId: string, timestamp: string, properties: Record<string, unknown> = {}) => ({
  event: name,
  timestamp,
  properties: { distinct_id: distinctId, ...properties },
})

beforeAll(async () => {
  if (!hasChromium) return
  h = await startWeb()
  base = `/project/${h.t.creds.project_id}/sql`
  const res = await h.t.burrow.app.inject({
    method: 'POST',
    url: '/batch/',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({
      api_key: h.t.creds.project_api_key,
      batch: [
        event('signed_up', 'anna', '2026-11-20T09:00:00Z', { plan: 'pro', seats: 5 }),
        event('signed_up', 'bob', '2026-11-20T10:00:00Z', { plan: 'free', seats: 1 }),
        event('signed_up', 'carl', '2026-11-21T11:00:00Z', { plan: 'pro', seats: 3 }),
        event('$pageview', 'anna', '2026-11-21T12:00:00Z', { $browser: 'Firefox' }),
      ],
    }),
  })
  expect(res.statusCode, res.body).toBe(200)
  // Stored in the event store (not only accepted) before the first query.
  await h.t.burrow.committer.flushPending()
  await h.t.burrow.ingest.flushBackground()
}, 90_000)
afterAll(async () => {
  await h?.close()
})

/** Types into the editor as a person does (CodeMirror closes brackets and quotes; typing over them steps past). */
async function typeQuery(page: Page, text: string) {
  await page.getByLabel('SQL query').click()
  await page.keyboard.press('ControlOrMeta+a')
  await page.keyboard.press('Delete')
  await page.keyboard.type(text, { delay: 5 })
  await page.keyboard.press('Escape')
}

/**
 * Accepts the completion offered for `name` with Enter. CodeMirror ignores an Enter that comes within 75 ms of the
 * list opening or changing (so fast typists don't pick by accident): wait past that, as a reader of the list does.
 */
async function accept(page: Page, name: string) {
  await page.locator('.cm-tooltip-autocomplete [aria-selected]').filter({ hasText: name }).waitFor()
  await new Promise((r) => setTimeout(r, 250))
  await page.keyboard.press('Enter')
}

const cellTexts = (page: Page) =>
  page
    .getByTestId('result-row')
    .evaluateAll((rows) => rows.map((r) => Array.from(r.querySelectorAll('td'), (td) => td.textContent)))

const api = (method: 'GET' | 'POST', url: string) => h.t.burrow.app.inject({ method, url, headers: h.t.auth })

describe('the HogQL catalogue of the editor', () => {
  it('is the server’s: every table, field and function name (regenerate with web/scripts/hogql-catalogue.ts)', () => {
    const server = catalogue()
    expect(webCatalogue.TABLES).toEqual(server.TABLES)
    expect(webCatalogue.TABLE_FUNCTIONS).toEqual(server.TABLE_FUNCTIONS)
    expect(webCatalogue.FUNCTIONS).toEqual(server.FUNCTIONS)
    // a few names a HogQL user reaches for
    expect(webCatalogue.FUNCTIONS).toEqual(expect.arrayContaining(['count', 'toStartOfDay', 'uniq', 'sortableSemVer']))
    expect(Object.keys(webCatalogue.TABLES)).toEqual(expect.arrayContaining(['events', 'persons', 'sessions']))
    expect(webCatalogue.TABLE_FUNCTIONS.numbers).toEqual(['number'])
  })
})

// The machine is shared: a page's first load can take several seconds.
describe.skipIf(!hasChromium)('the SQL editor', { timeout: 120_000 }, () => {
  it('runs a typed query with Ctrl+Enter and shows the rows of the captured events; the link reproduces it', async () => {
    const page = await h.page()
    await page.getByRole('link', { name: 'SQL editor' }).click()
    await page.waitForURL(/\/sql$/)
    await page.getByRole('heading', { name: 'SQL editor' }).waitFor()
    await page.getByText('No results yet').waitFor()
    expect(await seriousViolations(page)).toEqual([])

    const query =
      "SELECT properties.plan AS plan, count() AS signups, sum(toInt(properties.seats)) AS seats FROM events WHERE event = 'signed_up' GROUP BY plan ORDER BY plan"
    await typeQuery(page, query)
    await page.keyboard.press('ControlOrMeta+Enter')
    await page.getByTestId('result-row').first().waitFor()
    // three sign-ups: free (bob, 1 seat), pro (anna 5 + carl 3 seats)
    expect(await page.locator('th').allTextContents()).toEqual(['plan', 'signups', 'seats'])
    expect(await cellTexts(page)).toEqual([
      ['free', '1', '1'],
      ['pro', '2', '8'],
    ])
    expect(new URL(page.url()).searchParams.get('q')).toBe(query)
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'sql-editor')

    // The link runs the same query in a new page; the Run button runs it again.
    const again = await h.page()
    await again.goto(page.url())
    await again.getByTestId('result-row').first().waitFor()
    expect(await cellTexts(again)).toEqual([
      ['free', '1', '1'],
      ['pro', '2', '8'],
    ])
    await again.getByRole('button', { name: 'Run' }).click()
    await again.getByTestId('query-time').waitFor()
    expect(await cellTexts(again)).toHaveLength(2)

    // As a chart: the bar chart of signups over plan, kept in the URL.
    await again.getByText('Visualization').click()
    await again.getByTestId('chart').locator('canvas').waitFor()
    await again.getByText('Bar', { exact: true }).click()
    await again.waitForURL(/display=bar/)
    expect(new URL(again.url()).searchParams.get('view')).toBe('chart')
    expect(await again.getByRole('combobox', { name: 'X-axis' }).inputValue()).toBe('plan')
    expect(await seriousViolations(again)).toEqual([])
    await screenshot(again, 'sql-editor-chart')
    expect(h.errors).toEqual([])
  })

  it('shows a HogQL error at its line and column and marks it in the editor', async () => {
    const page = await h.page()
    // "evnt" starts at offset 9: line 2, column 3
    await page.goto(`${base}?q=${encodeURIComponent('SELECT\n  evnt, count()\nFROM events')}`)
    const error = page.getByTestId('query-error')
    await error.waitFor()
    expect(await page.getByTestId('query-error-position').textContent()).toBe('Line 2, column 3')
    expect(await error.textContent()).toContain("Unable to resolve field: evnt. Did you mean 'event'?")
    expect(await error.textContent()).toContain('hogql_query_error')
    const marked = page.locator('.cm-lintRange-error')
    await marked.waitFor()
    expect(await marked.textContent()).toBe('evnt')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'sql-editor-error')

    // A syntax error: the parser's position, on the first line.
    await typeQuery(page, 'SELECT 1 +* FROM events')
    await page.getByRole('button', { name: 'Run' }).click()
    await page.getByTestId('query-error-position').getByText('Line 1, column 11').waitFor()
    expect(h.errors).toEqual([])
  })

  it('completes property names after properties., and function names', async () => {
    const page = await h.page()
    await page.goto(base)
    await page.getByLabel('SQL query').click()
    await page.keyboard.type('SELECT properties.pl', { delay: 10 })
    const options = page.locator('.cm-tooltip-autocomplete li')
    await options.filter({ hasText: 'plan' }).first().waitFor()
    expect(await options.allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('plan')]))
    await accept(page, 'plan')
    await page.keyboard.type(', properties.$bro', { delay: 10 })
    await accept(page, '$browser')
    await page.keyboard.type(', toStartOfD', { delay: 10 })
    await accept(page, 'toStartOfDay')
    expect(await page.getByLabel('SQL query').textContent()).toBe(
      'SELECT properties.plan, properties.$browser, toStartOfDay',
    )
    expect(await seriousViolations(page)).toEqual([])
    expect(h.errors).toEqual([])
  })

  it('renders 50,000 rows as a window and shows the last row after scrolling to the end', async () => {
    const page = await h.page()
    await page.goto(`${base}?q=${encodeURIComponent('SELECT number FROM numbers(50000) LIMIT 50000')}`)
    await page.getByTestId('result-row').first().waitFor({ timeout: 20_000 })
    await page.getByText('50,000 rows').waitFor()
    const rendered = await page.getByTestId('result-row').count()
    expect(rendered).toBeGreaterThan(5)
    expect(rendered).toBeLessThan(60)
    expect(await page.getByTestId('result-row').first().textContent()).toBe('0')
    await page.getByTestId('results-scroller').evaluate((el) => {
      el.scrollTop = el.scrollHeight
    })
    await page.getByTestId('result-row').getByText('49999', { exact: true }).waitFor()
    expect(await page.getByTestId('result-row').last().textContent()).toBe('49999')
    expect(await page.getByTestId('result-row').count()).toBeLessThan(60)
    expect(await page.getByTestId('result-row').getByText('0', { exact: true }).count()).toBe(0)

    // Without a LIMIT, HogQL answers the first 100 rows and says there are more.
    await typeQuery(page, 'SELECT number FROM numbers(50000)')
    await page.keyboard.press('ControlOrMeta+Enter')
    await page.getByTestId('has-more').waitFor()
    await page.getByText('100 rows', { exact: true }).waitFor()
    expect(h.errors).toEqual([])
  })

  it('cancels a running query: the server’s status says it was cancelled', async () => {
    const page = await h.page()
    await page.goto(base)
    await typeQuery(page, 'SELECT count() FROM numbers(1000000000000) WHERE cityHash64(number) % 7 = 3')
    await page.getByRole('button', { name: 'Run' }).click()
    const running = page.getByTestId('query-running')
    // the progress the server reports while the query runs
    await running.getByText(/[\d,]+ rows read of ~1,000,000,000,000/).waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'sql-editor-running')
    const deleted = page.waitForRequest((r) => r.method() === 'DELETE' && /\/query\/\w+\/$/.test(r.url()))
    await page.getByRole('button', { name: 'Cancel' }).click()
    const request = await deleted
    await page.getByTestId('query-cancelled').waitFor()
    const queryId = /\/query\/(\w+)\/$/.exec(request.url())![1]
    const status = await api('GET', `/api/projects/${h.t.creds.project_id}/query/${queryId}/`)
    expect(status.json().query_status).toMatchObject({ complete: true, error: true, error_code: 'query_cancelled' })
    expect(h.errors).toEqual([])
  })

  it('saves the query as an insight and as an endpoint, both found through the API', async () => {
    const page = await h.page()
    const query =
      "SELECT properties.plan AS plan, count() AS signups FROM events WHERE event = 'signed_up' GROUP BY plan"
    await page.goto(`${base}?q=${encodeURIComponent(query)}&view=chart&display=bar`)
    await page.getByTestId('chart').waitFor()

    await page.getByRole('button', { name: 'Save as insight' }).click()
    const dialog = page.getByRole('dialog', { name: 'Save as insight' })
    await dialog.getByLabel(/^Name/).waitFor()
    // keyboard only: the name has focus; Tab to the description; Enter in the name submits
    await page.keyboard.type('Sign-ups by plan')
    await page.keyboard.press('Tab')
    await page.keyboard.type('From the SQL editor')
    expect(await seriousViolations(page)).toEqual([])
    await dialog.getByLabel(/^Name/).press('Enter')
    const saved = dialog.getByTestId('insight-saved')
    await saved.waitFor()
    const shortId = (await saved.locator('code').textContent())!
    const found = await api('GET', `/api/projects/${h.t.creds.project_id}/insights/?short_id=${shortId}`)
    expect(found.statusCode, found.body).toBe(200)
    const [insight] = found.json().results
    expect(insight).toMatchObject({
      name: 'Sign-ups by plan',
      description: 'From the SQL editor',
      saved: true,
      query: {
        kind: 'DataVisualizationNode',
        source: { kind: 'HogQLQuery', query },
        display: 'ActionsBar',
        chartSettings: { xAxis: { column: 'plan' }, yAxis: [{ column: 'signups' }] },
      },
    })
    await dialog.getByRole('button', { name: 'Done' }).click()

    await page.getByRole('button', { name: 'Save as endpoint' }).click()
    const endpointDialog = page.getByRole('dialog', { name: 'Save as endpoint' })
    await endpointDialog.getByLabel(/^Name/).fill('signups by plan')
    await endpointDialog.getByRole('button', { name: 'Create endpoint' }).click()
    // the server's own words for a name that cannot be a URL
    await endpointDialog
      .getByRole('alert')
      .getByText(/Endpoint name must start with a letter/)
      .waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'sql-editor-save-endpoint')
    await endpointDialog.getByLabel(/^Name/).fill('signups_by_plan')
    await endpointDialog.getByRole('button', { name: 'Create endpoint' }).click()
    await endpointDialog.getByTestId('endpoint-saved').waitFor()
    expect(await endpointDialog.getByTestId('endpoint-saved').textContent()).toContain(
      `/api/environments/${h.t.creds.project_id}/endpoints/signups_by_plan/run`,
    )
    const endpoint = await api('GET', `/api/projects/${h.t.creds.project_id}/endpoints/signups_by_plan/`)
    expect(endpoint.statusCode, endpoint.body).toBe(200)
    expect(endpoint.json()).toMatchObject({ name: 'signups_by_plan', query: { kind: 'HogQLQuery', query } })
    expect(h.errors).toEqual([])
  })
})
