/**
 * WebOverviewQuery and WebStatsTableQuery through the query API over captured sessions (mirrors of PostHog's
 * test_web_overview.py / test_web_stats_table.py behaviours). Every expected number is worked out by hand from
 * the fixture below.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../../helpers/app.js'
import { postQuery } from '../fixtures.js'
import { captureBatch, ev } from './capture.js'

let t: TestApp
const now = new Date('2024-01-20T12:00:00Z')

const pv = (who: string, at: string, session: string, extra: Record<string, unknown> = {}) =>
  ev('$pageview', who, at, { $session_id: session, ...extra })
const chrome = { $browser: 'Chrome', $geoip_country_code: 'US' }

// Current period Jan 8–14 (UTC), previous period Jan 1–7.
// s1 alice Jan 10: /home (utm google) → /pricing 30 s later, a purchase between: 2 pageviews, 30 s, not a bounce
// s2 bob Jan 11: /home only: 1 pageview, 0 s, a bounce
// s3 alice Jan 12: /blog and an autocapture 5 s later: 1 pageview, 5 s, not a bounce (autocapture)
// s4 carl Jan 5: /home only: bounce, 0 s          s5 carl Jan 6: /home → /docs 60 s later: not a bounce
// s6 dave starts Jan 7 23:59:50 on /a, /b at Jan 8 00:00:10: 2 pageviews, 20 s, starts in the previous period
// erin's pageview has no session: never counted
const EVENTS = [
  pv('carl', '2024-01-05T12:00:00Z', 's4', { $pathname: '/home', $browser: 'Safari', $geoip_country_code: 'FR' }),
  pv('carl', '2024-01-06T12:00:00Z', 's5', { $pathname: '/home', $browser: 'Safari', $geoip_country_code: 'FR' }),
  pv('carl', '2024-01-06T12:01:00Z', 's5', { $pathname: '/docs', $browser: 'Safari', $geoip_country_code: 'FR' }),
  pv('dave', '2024-01-07T23:59:50Z', 's6', { $pathname: '/a', $browser: 'Chrome', $geoip_country_code: 'DE' }),
  pv('dave', '2024-01-08T00:00:10Z', 's6', { $pathname: '/b', $browser: 'Chrome', $geoip_country_code: 'DE' }),
  pv('alice', '2024-01-10T10:00:00Z', 's1', {
    $pathname: '/home',
    utm_source: 'google',
    $referring_domain: 'google.com',
    ...chrome,
  }),
  ev('purchase', 'alice', '2024-01-10T10:00:20Z', { $session_id: 's1', ...chrome }),
  pv('alice', '2024-01-10T10:00:30Z', 's1', { $pathname: '/pricing', ...chrome }),
  pv('erin', '2024-01-10T11:00:00Z', '', { $pathname: '/home', ...chrome }),
  pv('bob', '2024-01-11T09:00:00Z', 's2', { $pathname: '/home', $browser: 'Firefox', $geoip_country_code: 'GB' }),
  pv('alice', '2024-01-12T08:00:00Z', 's3', { $pathname: '/blog', ...chrome }),
  ev('$autocapture', 'alice', '2024-01-12T08:00:05Z', { $session_id: 's3', ...chrome }),
]

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  await captureBatch(t, EVENTS)
}, 60_000)
afterAll(() => t.close())

const range = { date_from: '2024-01-08', date_to: '2024-01-14' }
const overview = (extra: Record<string, unknown> = {}) =>
  postQuery(t, { query: { kind: 'WebOverviewQuery', properties: [], dateRange: range, ...extra } })
const table = (breakdownBy: string, extra: Record<string, unknown> = {}) =>
  postQuery(t, { query: { kind: 'WebStatsTableQuery', properties: [], dateRange: range, breakdownBy, ...extra } })

type Item = { key: string; value: number | null; previous: number | null; changeFromPreviousPct: number | null }
const values = (results: Item[]) => Object.fromEntries(results.map((r) => [r.key, r.value]))

describe('WebOverviewQuery', () => {
  it('visitors, views, sessions, duration and bounce rate of the sessions that start in the range', async () => {
    const res = await overview()
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body.results.map((r: Item) => r.key)).toEqual([
      'visitors',
      'views',
      'sessions',
      'session duration',
      'bounce rate',
    ])
    // s1, s2, s3: alice and bob; 2 + 1 + 1 pageviews; (30 + 0 + 5) / 3 s; 1 bounce of 3
    const v = values(body.results)
    expect(v.visitors).toBe(2)
    expect(v.views).toBe(4)
    expect(v.sessions).toBe(3)
    expect(v['session duration']).toBeCloseTo(35 / 3, 6)
    expect(v['bounce rate']).toBeCloseTo(100 / 3, 6)
    expect(body.results[0]).toEqual({
      key: 'visitors',
      kind: 'unit',
      isIncreaseBad: null,
      value: 2,
      previous: null,
      changeFromPreviousPct: null,
    })
    expect(body.results[3].kind).toBe('duration_s')
    expect(body.results[4]).toMatchObject({ kind: 'percentage', isIncreaseBad: true })
    expect(body).toMatchObject({
      samplingRate: { numerator: 1 },
      dateFrom: '2024-01-08T00:00:00+00:00',
      dateTo: '2024-01-14T23:59:59.999999+00:00',
      usedPreAggregatedTables: false,
    })
  })

  it('compares with the previous period: a session counts where it starts, with its events in either period', async () => {
    const res = await overview({ compareFilter: { compare: true } })
    expect(res.statusCode, res.body).toBe(200)
    const byKey = Object.fromEntries(res.json().results.map((r: Item) => [r.key, r]))
    // previous: s4, s5 (carl) and s6 (dave, its Jan 8 pageview included): 2 visitors, 1 + 2 + 2 views, 3 sessions,
    // (0 + 60 + 20) / 3 s, 1 bounce of 3
    expect(byKey.visitors).toMatchObject({ value: 2, previous: 2, changeFromPreviousPct: 0 })
    // round(100 · (4 − 5) / 5) = −20
    expect(byKey.views).toMatchObject({ value: 4, previous: 5, changeFromPreviousPct: -20 })
    expect(byKey.sessions).toMatchObject({ value: 3, previous: 3, changeFromPreviousPct: 0 })
    expect(byKey['session duration'].previous).toBeCloseTo(80 / 3, 6)
    // round(100 · (35/3 − 80/3) / (80/3)) = round(−56.25) = −56
    expect(byKey['session duration'].changeFromPreviousPct).toBe(-56)
    expect(byKey['bounce rate'].previous).toBeCloseTo(100 / 3, 6)
  })

  it('property filters keep the matching events of each session', async () => {
    const res = await overview({ properties: [{ type: 'event', key: '$browser', value: 'Chrome', operator: 'exact' }] })
    expect(res.statusCode, res.body).toBe(200)
    // s1 (2 pageviews, 30 s) and s3 (1 pageview, 5 s), both alice's, neither a bounce
    const v = values(res.json().results)
    expect(v).toMatchObject({ visitors: 1, views: 3, sessions: 2, 'session duration': 17.5, 'bounce rate': 0 })
  })

  it('a conversion goal gives visitors, conversions and the conversion rate', async () => {
    const res = await overview({ conversionGoal: { customEventName: 'purchase' } })
    expect(res.statusCode, res.body).toBe(200)
    const { results } = res.json()
    expect(results.map((r: Item) => r.key)).toEqual([
      'visitors',
      'total conversions',
      'unique conversions',
      'conversion rate',
    ])
    // alice converted once in s1, of alice and bob
    expect(values(results)).toEqual({
      visitors: 2,
      'total conversions': 1,
      'unique conversions': 1,
      'conversion rate': 50,
    })
  })

  it('refuses a goal on an unknown action and a malformed goal', async () => {
    const unknown = await overview({ conversionGoal: { actionId: 999999 } })
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json()).toMatchObject({ type: 'validation_error', attr: 'conversionGoal__actionId' })
    const malformed = await overview({ conversionGoal: { nothing: true } })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().attr).toBe('conversionGoal')
    const badRange = await overview({ dateRange: { date_from: 'yesterday-ish' } })
    expect(badRange.statusCode).toBe(400)
    expect(badRange.json().attr).toBe('dateRange__date_from')
  })
})

// The stats table counts, without a comparison, every pageview of the range, whatever its session (PostHog's
// main stats query has no period condition on the session start then): dave's Jan 8 pageview of s6 and erin's
// sessionless one count too. With a comparison, rows go to the period their session starts in.
describe('WebStatsTableQuery', () => {
  it('top pages: visitors and views per pathname, by visitors then views then value, with fill fractions', async () => {
    const res = await table('Page')
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body.columns).toEqual([
      'context.columns.breakdown_value',
      'context.columns.visitors',
      'context.columns.views',
      'context.columns.ui_fill_fraction',
      'context.columns.cross_sell',
    ])
    // /home: alice (s1), erin and bob (s2); /b: dave (s6); /blog: alice (s3); /pricing: alice (s1);
    // fill fractions of 3 + 1 + 1 + 1 visitors
    expect(body.results).toEqual([
      ['/home', [3, null], [3, null], 0.5, ''],
      ['/b', [1, null], [1, null], 1 / 6, ''],
      ['/blog', [1, null], [1, null], 1 / 6, ''],
      ['/pricing', [1, null], [1, null], 1 / 6, ''],
    ])
    expect(body).toMatchObject({ hasMore: false, limit: 100, offset: 0 })
  })

  it('top pages with bounce rates of the sessions that entered on each page', async () => {
    const res = await table('Page', { includeBounceRate: true })
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body.columns).toContain('context.columns.bounce_rate')
    const at = body.columns.indexOf('context.columns.bounce_rate')
    // entered on /home: s1 (no bounce) and s2 (bounce) → 0.5; on /blog: s3 → 0; nobody entered on /b or /pricing
    const bounce = Object.fromEntries(
      body.results.map((r: unknown[]) => [r[0], (r[at] as unknown[] | null)?.[0] ?? null]),
    )
    expect(bounce).toEqual({ '/home': 0.5, '/b': null, '/blog': 0, '/pricing': null })
  })

  it('entry and exit pages come from the session', async () => {
    const entry = (await table('InitialPage')).json()
    // s1 and s2 entered on /home (alice 2 views, bob 1), s6 on /a (dave's Jan 8 view), s3 on /blog; erin's view
    // has no session, so no entry page, and is left out
    expect(entry.results.map((r: unknown[]) => [r[0], r[1], r[2]])).toEqual([
      ['/home', [2, null], [3, null]],
      ['/a', [1, null], [1, null]],
      ['/blog', [1, null], [1, null]],
    ])
    const exit = (await table('ExitPage')).json()
    // s1 left from /pricing (alice, 2 views), s6 from /b, s2 from /home, s3 from /blog (1 view each)
    expect(exit.results.map((r: unknown[]) => r[0])).toEqual(['/pricing', '/b', '/blog', '/home'])
  })

  it('browsers and countries, with the previous period beside', async () => {
    const res = await table('Browser', { compareFilter: { compare: true } })
    expect(res.statusCode, res.body).toBe(200)
    // current: Chrome alice 3 views, Firefox bob 1; previous: Safari carl 3 views, Chrome dave 2 (Jan 7 and 8)
    expect(res.json().results.map((r: unknown[]) => [r[0], r[1], r[2]])).toEqual([
      ['Chrome', [1, 1], [3, 2]],
      ['Firefox', [1, 0], [1, 0]],
      ['Safari', [0, 1], [0, 3]],
    ])
    const countries = (await table('Country')).json()
    // US: alice (3 views) and erin (1); DE: dave's Jan 8 view; GB: bob
    expect(countries.results.map((r: unknown[]) => [r[0], r[1], r[2]])).toEqual([
      ['US', [2, null], [4, null]],
      ['DE', [1, null], [1, null]],
      ['GB', [1, null], [1, null]],
    ])
  })

  it('UTM sources keep sessions without one, as null', async () => {
    const res = await table('InitialUTMSource')
    expect(res.statusCode, res.body).toBe(200)
    // s2, s3, s6 and erin's view have no utm_source (bob, alice, dave, erin: 1 view each), s1 came from google
    // (alice, 2 views)
    expect(res.json().results.map((r: unknown[]) => [r[0], r[1], r[2]])).toEqual([
      [null, [4, null], [4, null]],
      ['google', [1, null], [2, null]],
    ])
  })

  it('orders by the asked column and paginates', async () => {
    const res = await table('Page', { orderBy: ['Views', 'ASC'], limit: 2 })
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    // views ascending, then visitors ascending, then the value: /b, /blog, /pricing (1 view each), /home
    expect(body.results.map((r: unknown[]) => r[0])).toEqual(['/b', '/blog'])
    expect(body).toMatchObject({ hasMore: true, limit: 2 })
    const next = (await table('Page', { orderBy: ['Views', 'ASC'], limit: 2, offset: 2 })).json()
    expect(next.results.map((r: unknown[]) => r[0])).toEqual(['/pricing', '/home'])
    expect(next.hasMore).toBe(false)
  })

  it('refuses an unknown breakdown and a malformed orderBy', async () => {
    const unknown = await table('Shoe size')
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json()).toMatchObject({ type: 'validation_error', code: 'invalid_choice', attr: 'breakdownBy' })
    const bad = await table('Page', { orderBy: ['Views', 'sideways'] })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().attr).toBe('orderBy')
  })
})
