// A link to a new insight with its query in `?q=` (what "copy link" and the bench open): the query is sent while
// the app's code is still starting, before the insight screen's own code is even requested, and only once — the
// screen takes that answer instead of asking again. A query the screen would send differently is asked again.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasChromium, startWeb, type WebHarness } from './harness.js'

let h: WebHarness
let project: number

/** Waits for the insight's number display to show `expected`. */
const expectNumber = (page: Page, expected: RegExp) =>
  expect
    .poll(
      async () =>
        (await page.getByTestId('insight-number').count()) ? page.getByTestId('insight-number').textContent() : '',
      { timeout: 45_000 },
    )
    .toMatch(expected)

describe.skipIf(!hasChromium)('an insight link asks for its result early', () => {
  beforeAll(async () => {
    h = await startWeb()
    project = h.t.creds.project_id
    const now = Date.now()
    await h.capture(
      ['a', 'b', 'c'].map((id, i) => ({
        event: '$pageview',
        timestamp: new Date(now - (i + 1) * 3_600_000).toISOString(),
        properties: { distinct_id: id },
      })),
    )
  }, 120_000)
  afterAll(async () => {
    await h?.close()
  })

  it('sends the query once, before the insight screen loads, and shows its answer', async () => {
    const page = await h.page()
    const order: string[] = []
    page.on('request', (request) => {
      const url = new URL(request.url())
      if (url.pathname === `/api/projects/${project}/query/` && request.method() === 'POST') {
        order.push(`query ${request.postData()}`)
      } else if (/\/assets\/Insight-[^/]+\.js$/.test(url.pathname)) order.push('insight screen code')
    })
    const source = {
      kind: 'TrendsQuery',
      series: [{ kind: 'EventsNode', event: '$pageview', name: '$pageview', math: 'total' }],
      interval: 'day',
      dateRange: { date_from: '-7d' },
      trendsFilter: { display: 'BoldNumber' },
    }
    const q = encodeURIComponent(JSON.stringify({ kind: 'InsightVizNode', source }))
    await page.goto(`/project/${project}/insights/new?q=${q}`)
    // Three pageviews in the range (a, b and c, each one).
    await expectNumber(page, /^3/)
    const queries = order.filter((o) => o.startsWith('query '))
    expect(queries).toEqual([`query ${JSON.stringify({ query: source })}`])
    expect(order.indexOf(queries[0])).toBeLessThan(order.indexOf('insight screen code'))
  }, 120_000)

  it('asks again when the query in the link is not the one the screen runs', async () => {
    const page = await h.page()
    const sent: string[] = []
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === `/api/projects/${project}/query/` && request.method() === 'POST') {
        sent.push(request.postData() ?? '')
      }
    })
    // An empty formula is left out of what the screen sends: the early request (with it) cannot be used.
    const source = {
      kind: 'TrendsQuery',
      series: [{ kind: 'EventsNode', event: '$pageview', name: '$pageview', math: 'total' }],
      dateRange: { date_from: '-7d' },
      trendsFilter: { display: 'BoldNumber', formula: '' },
    }
    const q = encodeURIComponent(JSON.stringify({ kind: 'InsightVizNode', source }))
    await page.goto(`/project/${project}/insights/new?q=${q}`)
    await expectNumber(page, /^3/)
    expect(sent).toHaveLength(2)
    expect(JSON.parse(sent[0]).query.trendsFilter).toEqual({ display: 'BoldNumber', formula: '' })
    expect(JSON.parse(sent[1]).query.trendsFilter).toEqual({ display: 'BoldNumber' })
  }, 120_000)
})
