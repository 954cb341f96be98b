// The web analytics dashboard in Chromium over page views captured as posthog-js sends them ($pageview and
// $pageleave with $session_id, $current_url, $pathname, $referring_domain, $device_type, $browser and
// $geoip_country_code): the headline numbers, top pages with their bounce rate, sources, devices, browsers and
// countries (on the world map) checked against values worked out by hand below; a wider date range takes in an
// older session; a click (or Enter) on a device filters every panel; the view is in the URL; keyboard and axe.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasChromium, screenshot, seriousViolations, startWeb, type WebHarness } from './harness.js'

let h: WebHarness
let project: number

const DAY = 86_400_000
/** Two days ago at a time of day (UTC), as an ISO timestamp. */
const at = (daysAgo: number, time: string) =>
  `${new Date(Date.now() - daysAgo * DAY).toISOString().slice(0, 10)}T${time}Z`

interface Visit {
  person: string
  session: string
  device: 'Desktop' | 'Mobile'
  browser: string
  country: string
  referrer: string
}

const view = (v: Visit, timestamp: string, path: string, event = '$pageview') => ({
  event,
  timestamp,
  properties: {
    distinct_id: v.person,
    $session_id: v.session,
    $current_url: `https://shop.example${path}`,
    $host: 'shop.example',
    $pathname: path,
    $referring_domain: v.referrer,
    $referrer: v.referrer === '$direct' ? '$direct' : `https://${v.referrer}/`,
    $device_type: v.device,
    $browser: v.browser,
    $geoip_country_code: v.country,
  },
})

// Four sessions two days ago, one twenty days ago:
//   s1 alice, Desktop Chrome US, from google.com: / at 10:00:00, /pricing at 10:00:30, leaves at 10:01:40 → 100 s
//   s2 bob, Mobile Safari GB, from news.ycombinator.com: / at 11:00:00, leaves at 11:00:05 → 5 s, a bounce
//   s3 alice, Desktop Chrome US, direct: /pricing 12:00:00, /docs 12:00:20, /pricing 12:01:00 → 60 s
//   s4 carol, Mobile Safari DE, from google.com: /docs at 13:00:00, leaves at 13:00:35 → 35 s (one view, but
//      10 s or longer: not a bounce)
//   s5 dave, Desktop Firefox FR, direct, 20 days ago: / then leaves 2 s later → 2 s, a bounce
// Last 7 days: visitors alice, bob, carol = 3; views 2 + 1 + 3 + 1 = 7; sessions 4; mean duration
// (100 + 5 + 60 + 35) / 4 = 50 s; bounce rate 1 of 4 = 25%.
// Last 30 days adds s5: visitors 4, views 8, sessions 5, duration 202 / 5 = 40.4 s, bounce rate 2 of 5 = 40%.
const s1: Visit = {
  person: 'alice',
  session: 's1',
  device: 'Desktop',
  browser: 'Chrome',
  country: 'US',
  referrer: 'google.com',
}
const s2: Visit = {
  person: 'bob',
  session: 's2',
  device: 'Mobile',
  browser: 'Safari',
  country: 'GB',
  referrer: 'news.ycombinator.com',
}
const s3: Visit = { ...s1, session: 's3', referrer: '$direct' }
const s4: Visit = {
  person: 'carol',
  session: 's4',
  device: 'Mobile',
  browser: 'Safari',
  country: 'DE',
  referrer: 'google.com',
}
const s5: Visit = {
  person: 'dave',
  session: 's5',
  device: 'Desktop',
  browser: 'Firefox',
  country: 'FR',
  referrer: '$direct',
}

beforeAll(async () => {
  if (!hasChromium) return
  h = await startWeb()
  project = h.t.creds.project_id
  const batch = [
    view(s1, at(2, '10:00:00'), '/'),
    view(s1, at(2, '10:00:30'), '/pricing'),
    view(s1, at(2, '10:01:40'), '/pricing', '$pageleave'),
    view(s2, at(2, '11:00:00'), '/'),
    view(s2, at(2, '11:00:05'), '/', '$pageleave'),
    view(s3, at(2, '12:00:00'), '/pricing'),
    view(s3, at(2, '12:00:20'), '/docs'),
    view(s3, at(2, '12:01:00'), '/pricing'),
    view(s4, at(2, '13:00:00'), '/docs'),
    view(s4, at(2, '13:00:35'), '/docs', '$pageleave'),
    view(s5, at(20, '09:00:00'), '/'),
    view(s5, at(20, '09:00:02'), '/', '$pageleave'),
  ]
  const res = await h.t.burrow.app.inject({
    method: 'POST',
    url: '/batch/',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ api_key: h.t.creds.project_api_key, batch }),
  })
  expect(res.statusCode, res.body).toBe(200)
  // Stored in the event store (not only accepted) before the first query.
  await h.t.burrow.committer.flushPending()
  await h.t.burrow.ingest.flushBackground()
}, 240_000)
afterAll(async () => {
  await h?.close()
})

/** Polls until the screen shows the value: the machine is shared and slow, so it gets a minute. */
const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 60_000, interval: 250 })

async function open(): Promise<Page> {
  const page = await h.page()
  page.setDefaultTimeout(60_000)
  return page
}

/** The five headline numbers as the screen shows them. */
async function overview(page: Page) {
  const value = (key: string) => page.getByTestId(`overview-${key}`).getByTestId('overview-value').textContent()
  return {
    visitors: await value('visitors'),
    views: await value('views'),
    sessions: await value('sessions'),
    duration: await value('session-duration'),
    bounce: await value('bounce-rate'),
  }
}

/** A panel's rows as their cells' texts. */
const rowsOf = (page: Page, testId: string) =>
  page
    .getByTestId(testId)
    .getByTestId('stats-row')
    .evaluateAll((rows) => rows.map((r) => Array.from(r.querySelectorAll('td'), (td) => td.textContent)))

async function pick(page: Page, label: string, option: string) {
  await page.getByRole('combobox', { name: label, exact: true }).click()
  await page.getByRole('option', { name: option, exact: true }).click()
}

describe.skipIf(!hasChromium)('web analytics', () => {
  it('shows the overview and every breakdown over the captured page views', async () => {
    const page = await open()
    await page.goto(`/project/${project}/web-analytics`)
    await page.getByTestId('web-overview').waitFor()
    expect(await overview(page)).toEqual({
      visitors: '3',
      views: '7',
      sessions: '4',
      duration: '50s',
      bounce: '25%',
    })
    // Pages: / seen in s1 and s2 (alice, bob; 2 views), /docs in s3 and s4 (alice, carol; 2 views), /pricing in
    // s1 and s3 (alice; 3 views). Bounce rate of the sessions that started there: / s1 and s2 → 1 of 2; /docs s4
    // → 0; /pricing s3 → 0. Ties are ordered by the value.
    await poll(() => rowsOf(page, 'top-pages')).toEqual([
      ['/', '2', '2', '50%'],
      ['/docs', '2', '2', '0%'],
      ['/pricing', '1', '3', '0%'],
    ])
    // Sources by each session's first referring domain: google.com s1 + s4 (alice, carol; 3 views), direct s3
    // (alice; 3 views), news.ycombinator.com s2 (bob; 1 view).
    await poll(() => rowsOf(page, 'sources')).toEqual([
      ['google.com', '2', '3'],
      ['$direct', '1', '3'],
      ['news.ycombinator.com', '1', '1'],
    ])
    await poll(() => rowsOf(page, 'devices')).toEqual([
      ['Mobile', '2', '2'],
      ['Desktop', '1', '5'],
    ])
    await poll(() => rowsOf(page, 'browsers')).toEqual([
      ['Safari', '2', '2'],
      ['Chrome', '1', '5'],
    ])
    // Countries by name, ties by code: US (alice, 5 views), DE (carol), GB (bob).
    await poll(() => rowsOf(page, 'countries')).toEqual([
      ['United States', '1', '5'],
      ['Germany', '1', '1'],
      ['United Kingdom', '1', '1'],
    ])
    // The map is drawn (in its own chunk) and says what it shows.
    const map = page.getByTestId('world-map')
    await map.locator('canvas').waitFor()
    expect(await map.getAttribute('aria-label')).toBe(
      'World map of visitors by country: United States 1, Germany 1, United Kingdom 1',
    )
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'web-analytics')
    expect(h.errors).toEqual([])
  }, 240_000)

  it('a wider date range takes in the older session; the range is in the URL', async () => {
    const page = await open()
    await page.goto(`/project/${project}/web-analytics`)
    await page.getByTestId('web-overview').waitFor()
    await pick(page, 'Date range', 'Last 30 days')
    await page.waitForURL(/date_from=-30d/)
    await poll(() => overview(page)).toEqual({
      visitors: '4',
      views: '8',
      sessions: '5',
      duration: '40.4s',
      bounce: '40%',
    })
    // The link reproduces the view; an empty period says so.
    await page.goto(`/project/${project}/web-analytics?date_from=-30d`)
    await poll(() => overview(page).then((o) => o.visitors)).toBe('4')
    await page.goto(`/project/${project}/web-analytics?date_from=2020-01-01&date_to=2020-01-31`)
    await poll(() => overview(page).then((o) => o.visitors)).toBe('0')
    await page.getByTestId('top-pages').getByText('Nothing in this period').waitFor()
    await page.getByTestId('countries').getByText('No countries in this period').waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'web-analytics-empty')
    expect(h.errors).toEqual([])
  }, 180_000)

  it('filters every panel by a device chosen with the keyboard, and compares periods', async () => {
    const page = await open()
    await page.goto(`/project/${project}/web-analytics`)
    const mobile = page.getByTestId('devices').getByRole('button', { name: 'Mobile' })
    await mobile.focus()
    await page.keyboard.press('Enter')
    await page.waitForURL(/filters=/)
    const filters = JSON.parse(new URL(page.url()).searchParams.get('filters') ?? '[]')
    expect(filters).toEqual([{ type: 'event', key: '$device_type', operator: 'exact', value: 'Mobile' }])
    // Mobile: s2 (bob, 5 s, a bounce) and s4 (carol, 35 s): 2 visitors, 2 views, 2 sessions, 20 s, 50%.
    await poll(() => overview(page)).toEqual({
      visitors: '2',
      views: '2',
      sessions: '2',
      duration: '20s',
      bounce: '50%',
    })
    await poll(() => rowsOf(page, 'countries')).toEqual([
      ['Germany', '1', '1'],
      ['United Kingdom', '1', '1'],
    ])
    await poll(() => rowsOf(page, 'browsers')).toEqual([['Safari', '2', '2']])

    // Compared with the 7 days before, when nobody visited.
    await page.getByLabel('Compare to the previous period').click()
    await page.waitForURL(/compare=1/)
    await poll(() => page.getByLabel('Compare to the previous period').isChecked()).toBe(true)
    await page.getByTestId('overview-visitors').getByText('previously 0').waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'web-analytics-filtered')

    // Removing the filter brings every visitor back.
    await page.getByRole('button', { name: 'Remove filter 1' }).click()
    await poll(() => overview(page).then((o) => o.visitors)).toBe('3')
    expect(new URL(page.url()).searchParams.get('filters')).toBeNull()
    expect(h.errors).toEqual([])
  }, 180_000)
})
