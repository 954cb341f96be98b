/**
 * WebStatsTableQuery's `InitialChannelType` and `FrustrationMetrics` breakdowns and `doPathCleaning` through the
 * query API (PostHog's stats_table.py semantics). Every expected row is worked out by hand from the fixtures below,
 * which sit in separate weeks: channels Jan 8–14, frustration Feb 1–7 (and the week before), paths Mar 1–7.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../../helpers/app.js'
import { postQuery } from '../fixtures.js'
import { captureBatch, ev } from './capture.js'

let t: TestApp
const now = new Date('2024-03-20T12:00:00Z')

// one pageview per session, each by its own person
const visit = (session: string, at: string, props: Record<string, unknown>) =>
  ev('$pageview', `u-${session}`, at, { $session_id: session, $pathname: '/', ...props })

// c1 utm google/cpc → Paid Search            c2 from www.facebook.com → Organic Social (facebook.com's kind)
// c3 $direct → Direct                        c4 from news.example.org → Referral
// c5 utm newsletter/email → Email            c6 gclid from www.google.com → paid: Paid Search (by the domain)
// c7 paid_social medium, campaign summer-shopping, unknown source → Paid Shopping
// c8 campaign cross-network-q1 → Cross Network
// c9 fbclid, $direct, no utm → not Direct (fbclid): Organic Social
// c10 no referring domain at all → Unknown
const CHANNELS = [
  visit('c1', '2024-01-09T10:00:00Z', { utm_source: 'google', utm_medium: 'cpc', $referring_domain: 'www.google.com' }),
  visit('c2', '2024-01-09T11:00:00Z', { $referring_domain: 'www.facebook.com' }),
  visit('c3', '2024-01-09T12:00:00Z', { $referring_domain: '$direct' }),
  visit('c4', '2024-01-10T10:00:00Z', { $referring_domain: 'news.example.org' }),
  visit('c5', '2024-01-10T11:00:00Z', { utm_source: 'newsletter', utm_medium: 'email', $referring_domain: '$direct' }),
  visit('c6', '2024-01-10T12:00:00Z', { gclid: 'abc123', $referring_domain: 'www.google.com' }),
  visit('c7', '2024-01-11T10:00:00Z', {
    utm_source: 'unknownsrc',
    utm_medium: 'paid_social',
    utm_campaign: 'summer-shopping',
    $referring_domain: '$direct',
  }),
  visit('c8', '2024-01-11T11:00:00Z', { utm_campaign: 'cross-network-q1', $referring_domain: '$direct' }),
  visit('c9', '2024-01-11T12:00:00Z', { fbclid: 'fb1', $referring_domain: '$direct' }),
  visit('c10', '2024-01-12T10:00:00Z', {}),
]

// f1 /checkout: 2 rage clicks, 1 error    f2 /checkout: 1 dead click    f3 /home: 2 errors    f4 /about: nothing
// f0 (Jan 28, the week before) /checkout: 1 rage click
const on = (session: string, event: string, at: string, pathname: string) =>
  ev(event, `u-${session}`, at, { $session_id: session, $pathname: pathname })
const FRUSTRATION = [
  on('f0', '$pageview', '2024-01-28T10:00:00Z', '/checkout'),
  on('f0', '$rageclick', '2024-01-28T10:00:05Z', '/checkout'),
  on('f1', '$pageview', '2024-02-02T10:00:00Z', '/checkout'),
  on('f1', '$rageclick', '2024-02-02T10:00:05Z', '/checkout'),
  on('f1', '$rageclick', '2024-02-02T10:00:06Z', '/checkout'),
  on('f1', '$exception', '2024-02-02T10:00:07Z', '/checkout'),
  on('f2', '$pageview', '2024-02-03T10:00:00Z', '/checkout'),
  on('f2', '$dead_click', '2024-02-03T10:00:04Z', '/checkout'),
  on('f3', '$pageview', '2024-02-04T10:00:00Z', '/home'),
  on('f3', '$exception', '2024-02-04T10:00:01Z', '/home'),
  on('f3', '$exception', '2024-02-04T10:00:02Z', '/home'),
  on('f4', '$pageview', '2024-02-05T10:00:00Z', '/about'),
]

// p1 /user/1 · p2 /user/22 · p3 /en/docs · p4 /fr/docs · p5 /about, one pageview each
const PATHS = [
  visit('p1', '2024-03-02T10:00:00Z', { $pathname: '/user/1' }),
  visit('p2', '2024-03-02T11:00:00Z', { $pathname: '/user/22' }),
  visit('p3', '2024-03-03T10:00:00Z', { $pathname: '/en/docs' }),
  visit('p4', '2024-03-03T11:00:00Z', { $pathname: '/fr/docs' }),
  visit('p5', '2024-03-04T10:00:00Z', { $pathname: '/about' }),
  // March 8, for paths: /user/7 then /en/guide a minute later
  visit('p6', '2024-03-08T10:00:00Z', { $pathname: '/user/7', $current_url: 'https://example.com/user/7' }),
  visit('p6', '2024-03-08T10:01:00Z', { $pathname: '/en/guide', $current_url: 'https://example.com/en/guide' }),
]
const RULES = [
  { alias: '/user/<id>', regex: '/user/\\d+' },
  { alias: '/<lang>/', regex: '^/(en|fr)/' },
]

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  await captureBatch(t, [...CHANNELS, ...FRUSTRATION, ...PATHS])
  const res = await t.burrow.app.inject({
    method: 'PATCH',
    url: `/api/projects/${t.creds.project_id}/`,
    headers: t.auth,
    payload: { path_cleaning_filters: RULES },
  })
  expect(res.statusCode, res.body).toBe(200)
}, 60_000)
afterAll(() => t.close())

const table = (breakdownBy: string, dateRange: Record<string, string>, extra: Record<string, unknown> = {}) =>
  postQuery(t, { query: { kind: 'WebStatsTableQuery', properties: [], dateRange, breakdownBy, ...extra } })

async function rows(breakdownBy: string, dateRange: Record<string, string>, extra: Record<string, unknown> = {}) {
  const res = await table(breakdownBy, dateRange, extra)
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

describe('WebStatsTableQuery InitialChannelType', () => {
  it("breaks sessions down by their channel type, as PostHog's default channel rules classify them", async () => {
    const body = await rows('InitialChannelType', { date_from: '2024-01-08', date_to: '2024-01-14' })
    expect(body.columns).toEqual([
      'context.columns.breakdown_value',
      'context.columns.visitors',
      'context.columns.views',
      'context.columns.ui_fill_fraction',
      'context.columns.cross_sell',
    ])
    // visitors desc, then views, then the value: the two 2s by name, then the 1s by name
    expect(body.results.map((r: unknown[]) => [r[0], r[1], r[2]])).toEqual([
      ['Organic Social', [2, null], [2, null]],
      ['Paid Search', [2, null], [2, null]],
      ['Cross Network', [1, null], [1, null]],
      ['Direct', [1, null], [1, null]],
      ['Email', [1, null], [1, null]],
      ['Paid Shopping', [1, null], [1, null]],
      ['Referral', [1, null], [1, null]],
      ['Unknown', [1, null], [1, null]],
    ])
    expect(body.results[0][3]).toBeCloseTo(2 / 10, 9)
  })
})

describe('WebStatsTableQuery FrustrationMetrics', () => {
  const feb = { date_from: '2024-02-01', date_to: '2024-02-07' }

  it('counts rage clicks, dead clicks and errors per page, most errors first, pages without any left out', async () => {
    const body = await rows('FrustrationMetrics', feb)
    expect(body.columns).toEqual([
      'context.columns.breakdown_value',
      'context.columns.rage_clicks',
      'context.columns.dead_clicks',
      'context.columns.errors',
      'context.columns.cross_sell',
    ])
    expect(body.results).toEqual([
      ['/home', [0, null], [0, null], [2, null], ''],
      ['/checkout', [2, null], [1, null], [1, null], ''],
    ])
  })

  it('pairs each count with the previous period', async () => {
    // Jan 25–31: f0's rage click on /checkout
    const body = await rows('FrustrationMetrics', feb, { compareFilter: { compare: true } })
    expect(body.results).toEqual([
      ['/home', [0, 0], [0, 0], [2, 0], ''],
      ['/checkout', [2, 1], [1, 0], [1, 0], ''],
    ])
  })
})

describe('WebStatsTableQuery doPathCleaning', () => {
  const march = { date_from: '2024-03-01', date_to: '2024-03-07' }
  const pages = async (breakdownBy: string, extra: Record<string, unknown> = {}) =>
    (await rows(breakdownBy, march, extra)).results.map((r: unknown[]) => [r[0], r[1]])

  it("applies the project's path cleaning rules, in order, to page paths", async () => {
    expect(await pages('Page', { doPathCleaning: true })).toEqual([
      ['/<lang>/docs', [2, null]],
      ['/user/<id>', [2, null]],
      ['/about', [1, null]],
    ])
    expect(await pages('InitialPage', { doPathCleaning: true })).toEqual(await pages('Page', { doPathCleaning: true }))
  })

  it('leaves paths alone without doPathCleaning', async () => {
    expect(await pages('Page')).toEqual([
      ['/about', [1, null]],
      ['/en/docs', [1, null]],
      ['/fr/docs', [1, null]],
      ['/user/1', [1, null]],
      ['/user/22', [1, null]],
    ])
  })

  it('joins the bounce rate by the cleaned entry page (each session here is a one-page bounce)', async () => {
    const body = await rows('Page', march, { doPathCleaning: true, includeBounceRate: true })
    expect(body.results.map((r: unknown[]) => [r[0], r[3]])).toEqual([
      ['/<lang>/docs', [1, null]],
      ['/user/<id>', [1, null]],
      ['/about', [1, null]],
    ])
  })

  it("keeps the project's rules on the project (PostHog's path_cleaning_filters)", async () => {
    const url = `/api/projects/${t.creds.project_id}/`
    const got = await t.burrow.app.inject({ method: 'GET', url, headers: t.auth })
    expect(got.json().path_cleaning_filters).toEqual(RULES)
    const bad = await t.burrow.app.inject({
      method: 'PATCH',
      url,
      headers: t.auth,
      payload: { path_cleaning_filters: 'not a list' },
    })
    expect(bad.statusCode).toBe(400)
    // the lone string is read as a list of one, whose first rule is not an object
    expect(bad.json()).toMatchObject({ type: 'validation_error', attr: 'path_cleaning_filters__0' })
  })

  it('refuses a doPathCleaning that is not a boolean', async () => {
    const res = await table('Page', march, { doPathCleaning: 'yes' })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', attr: 'doPathCleaning' })
  })
})

describe('PathsQuery pathReplacements', () => {
  const edges = async (pathsFilter: Record<string, unknown>) => {
    const res = await postQuery(t, {
      query: {
        kind: 'PathsQuery',
        dateRange: { date_from: '2024-03-08', date_to: '2024-03-08' },
        pathsFilter: { includeEventTypes: ['$pageview'], pathsHogQLExpression: null, ...pathsFilter },
      },
    })
    expect(res.statusCode, res.body).toBe(200)
    return res
      .json()
      .results.map((e: { source: string; target: string; value: number }) => [e.source, e.target, e.value])
  }

  it("cleans path items with the project's rules, then the query's own", async () => {
    // items are whole URLs: the rules match inside them
    expect(await edges({})).toEqual([['1_https://example.com/user/7', '2_https://example.com/en/guide', 1]])
    // '^/(en|fr)/' is anchored at the start: it does not match inside a URL
    expect(await edges({ pathReplacements: true })).toEqual([
      ['1_https://example.com/user/<id>', '2_https://example.com/en/guide', 1],
    ])
    expect(await edges({ pathReplacements: true, localPathCleaningFilters: [{ alias: 'ID', regex: '<id>' }] })).toEqual(
      [['1_https://example.com/user/ID', '2_https://example.com/en/guide', 1]],
    )
  })
})
