/**
 * ActorsQuery, InsightActorsQuery, FunnelsActorsQuery and InsightActorsQueryOptions through the query API: the
 * persons (or groups) behind data points of trends, stickiness, lifecycle and funnels, over events captured with
 * fixed timestamps; every expected actor and count is worked out by hand from the fixture below (mirrors of
 * PostHog's test_trends_persons.py, test_actors_query_runner.py and funnel actors tests).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../../helpers/app.js'
import { postQuery } from '../fixtures.js'
import { captureBatch, ev } from './capture.js'

let t: TestApp
const now = new Date('2023-05-10T12:00:00Z')

// person1 (US, p1@x.com): Apr 29 pageview 16:00 (Chrome) + pageleave 17:00; May 1 three Chrome pageviews
//   (16:00 with some_property 20, 17:00, 18:00); May 6 one pageview without a browser
// person2 (DE, p2@x.com, name Second): Apr 29 two Safari pageviews (17:00, 18:00); May 1 two (16:00 with
//   some_property 22, 17:00)
// person3 (DE, no e-mail): May 1 one Safari pageview 16:00
// person1 also does "grouped" on May 3 twice for the company Hooli and once for Pied Piper; person3 does "late"
// at 02:00 UTC on May 2
const EVENTS = [
  ev('$pageview', 'person1', '2023-04-29T16:00:00Z', {
    $browser: 'Chrome',
    $set: { $geoip_country_code: 'US', email: 'p1@x.com' },
  }),
  ev('$pageleave', 'person1', '2023-04-29T17:00:00Z', { $browser: 'Chrome' }),
  ev('$pageview', 'person2', '2023-04-29T17:00:00Z', {
    $browser: 'Safari',
    $set: { $geoip_country_code: 'DE', email: 'p2@x.com', name: 'Second' },
  }),
  ev('$pageview', 'person2', '2023-04-29T18:00:00Z', { $browser: 'Safari' }),
  ev('$pageview', 'person1', '2023-05-01T16:00:00Z', { $browser: 'Chrome', some_property: 20 }),
  ev('$pageview', 'person1', '2023-05-01T17:00:00Z', { $browser: 'Chrome' }),
  ev('$pageview', 'person1', '2023-05-01T18:00:00Z', { $browser: 'Chrome' }),
  ev('$pageview', 'person2', '2023-05-01T16:00:00Z', { $browser: 'Safari', some_property: 22 }),
  ev('$pageview', 'person2', '2023-05-01T17:00:00Z', { $browser: 'Safari' }),
  ev('$pageview', 'person3', '2023-05-01T16:00:00Z', { $browser: 'Safari', $set: { $geoip_country_code: 'DE' } }),
  ev('$groupidentify', 'person1', '2023-05-02T10:00:00Z', {
    $group_type: 'company',
    $group_key: 'Hooli',
    $group_set: { name: 'Hooli Inc' },
  }),
  ev('$groupidentify', 'person1', '2023-05-02T10:00:01Z', {
    $group_type: 'company',
    $group_key: 'Pied Piper',
    $group_set: { name: 'Pied Piper' },
  }),
  ev('grouped', 'person1', '2023-05-03T10:00:00Z', { $groups: { company: 'Hooli' } }),
  ev('grouped', 'person1', '2023-05-03T11:00:00Z', { $groups: { company: 'Hooli' } }),
  ev('grouped', 'person1', '2023-05-03T12:00:00Z', { $groups: { company: 'Pied Piper' } }),
  // 02:00 UTC on May 2 is 22:00 on May 1 in New York
  ev('late', 'person3', '2023-05-02T02:00:00Z'),
  ev('$pageview', 'person1', '2023-05-06T16:00:00Z', { some_property: 20 }),
]

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  await captureBatch(t, EVENTS)
}, 60_000)
afterAll(() => t.close())

const RANGE = { date_from: '2023-04-29', date_to: '2023-05-06' }
const trends = (extra: Record<string, unknown> = {}) => ({
  kind: 'TrendsQuery',
  series: [{ kind: 'EventsNode', event: '$pageview' }],
  dateRange: RANGE,
  ...extra,
})

type Row = [Record<string, unknown>, ...unknown[]]

async function actors(source: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const res = await postQuery(t, {
    query: {
      kind: 'ActorsQuery',
      source,
      select: ['actor', 'created_at', 'event_count'],
      orderBy: ['event_count DESC', 'created_at'],
      ...extra,
    },
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

/** [first distinct id, event count] of each row */
async function whoAndCount(source: Record<string, unknown>): Promise<[unknown, unknown][]> {
  const { results } = await actors(source)
  return (results as Row[]).map((r) => [(r[0].distinct_ids as string[])[0], r[2]])
}

const point = (source: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  kind: 'InsightActorsQuery',
  source,
  ...extra,
})

describe('ActorsQuery over a trends data point', () => {
  it('test_trends_single_series_persons-like: the persons of a day, with person objects', async () => {
    const body = await actors(point(trends(), { day: '2023-04-29' }))
    // Apr 29: person2 two pageviews, person1 one
    expect(body.columns).toEqual(['actor', 'created_at', 'event_count'])
    expect(body.results.map((r: Row) => [(r[0].distinct_ids as string[])[0], r[2]])).toEqual([
      ['person2', 2],
      ['person1', 1],
    ])
    const [person2] = body.results[0] as Row
    expect(person2).toMatchObject({
      properties: { $geoip_country_code: 'DE', email: 'p2@x.com', name: 'Second' },
      distinct_ids: ['person2'],
      is_identified: false,
      created_at: '2023-04-29T17:00:00Z',
    })
    expect(typeof person2.id).toBe('string')
    expect(body.results[0][1]).toBe('2023-04-29T17:00:00Z')
    expect(body).toMatchObject({ hasMore: false, limit: 100, offset: 0, missing_actors_count: 0 })
  })

  it('test_trends_multiple_series_persons-like: the series index picks the series', async () => {
    const source = trends({
      series: [
        { kind: 'EventsNode', event: '$pageview' },
        { kind: 'EventsNode', event: '$pageleave' },
      ],
    })
    expect(await whoAndCount(point(source, { day: '2023-04-29' }))).toEqual([
      ['person2', 2],
      ['person1', 1],
    ])
    expect(await whoAndCount(point(source, { day: '2023-04-29', series: 1 }))).toEqual([['person1', 1]])
  })

  it('test_trends_event_breakdown_persons-like: event and person breakdown values', async () => {
    const byBrowser = trends({ breakdownFilter: { breakdown: '$browser' } })
    // May 1 Safari: person2 twice, person3 once
    expect(await whoAndCount(point(byBrowser, { day: '2023-05-01', breakdown: 'Safari' }))).toEqual([
      ['person2', 2],
      ['person3', 1],
    ])
    expect(await whoAndCount(point(byBrowser, { day: '2023-05-01', breakdown: 'Firefox' }))).toEqual([])
    const byCountry = trends({ breakdownFilter: { breakdown: '$geoip_country_code', breakdown_type: 'person' } })
    expect(await whoAndCount(point(byCountry, { day: '2023-05-01', breakdown: 'DE' }))).toEqual([
      ['person2', 2],
      ['person3', 1],
    ])
    // several breakdowns: the value is a list
    const multi = trends({ breakdownFilter: { breakdowns: [{ property: '$browser', type: 'event' }] } })
    expect(await whoAndCount(point(multi, { day: '2023-05-01', breakdown: ['Safari'] }))).toEqual([
      ['person2', 2],
      ['person3', 1],
    ])
  })

  it('test_trends_breakdown_null_persons-like: the null and other buckets', async () => {
    const limited = trends({ breakdownFilter: { breakdown: '$browser', breakdown_limit: 1 } })
    // May 6: only person1's pageview without a browser
    expect(await whoAndCount(point(limited, { day: '2023-05-06', breakdown: 'Chrome' }))).toEqual([])
    expect(await whoAndCount(point(limited, { day: '2023-05-06', breakdown: '$$_posthog_breakdown_null_$$' }))).toEqual(
      [['person1', 1]],
    )
    // totals over the range: Safari 5, Chrome 4, none 1 → with a limit of 1 only Safari is shown; Chrome and the
    // empty value fall into "other": on May 1 that is person1's three Chrome pageviews
    expect(
      await whoAndCount(point(limited, { day: '2023-05-01', breakdown: '$$_posthog_breakdown_other_$$' })),
    ).toEqual([['person1', 3]])
  })

  it('test_trends_compare_persons-like: current and previous periods', async () => {
    // May 3–6, previous period Apr 29 – May 2 (as long, right before)
    const source = trends({
      dateRange: { date_from: '2023-05-03', date_to: '2023-05-06' },
      compareFilter: { compare: true },
    })
    expect(await whoAndCount(point(source, { day: '2023-05-06', compare: 'current' }))).toEqual([['person1', 1]])
    expect(await whoAndCount(point(source, { day: '2023-04-29', compare: 'previous' }))).toEqual([
      ['person2', 2],
      ['person1', 1],
    ])
  })

  it('test_trends_total_value_persons-like: a total-value display lists the whole range', async () => {
    const source = trends({ trendsFilter: { display: 'BoldNumber' } })
    // person1 1 + 3 + 1, person2 2 + 2, person3 1
    expect(await whoAndCount(point(source))).toEqual([
      ['person1', 5],
      ['person2', 4],
      ['person3', 1],
    ])
  })

  it('test_trends_math_weekly_active_persons-like: the week ending with the day', async () => {
    const source = trends({
      series: [{ kind: 'EventsNode', event: '$pageview', math: 'weekly_active' }],
      dateRange: { date_from: '2023-05-05', date_to: '2023-05-06' },
    })
    // May 5: Apr 29 … May 5 → person1 (1 + 3), person2 (2 + 2), person3 (1), though the range starts May 5
    expect(await whoAndCount(point(source, { day: '2023-05-05' }))).toEqual([
      ['person1', 4],
      ['person2', 4],
      ['person3', 1],
    ])
  })

  it('test_trends_math_group_persons-like: unique groups list the groups', async () => {
    const source = trends({
      series: [{ kind: 'EventsNode', event: 'grouped', math: 'unique_group', math_group_type_index: 0 }],
    })
    const body = await actors(point(source, { day: '2023-05-03' }))
    expect(body.results.map((r: Row) => [r[0].id, r[2]])).toEqual([
      ['Hooli', 2],
      ['Pied Piper', 1],
    ])
    expect(body.results[0][0]).toMatchObject({
      id: 'Hooli',
      type: 'group',
      group_type_index: 0,
      group_key: 'Hooli',
      properties: { name: 'Hooli Inc' },
    })
  })

  it('gives the default columns, matched recordings and event distinct ids', async () => {
    const res = await postQuery(t, {
      query: { kind: 'ActorsQuery', source: point(trends(), { day: '2023-04-29' }) },
    })
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body.columns).toEqual(['person', 'id', 'person.$delete', 'event_distinct_ids'])
    const rows = body.results as Row[]
    expect(rows).toHaveLength(2)
    for (const row of rows) {
      expect(row[1]).toBe(row[0].id)
      expect(row[2]).toBe(1)
      expect(row[3]).toEqual(row[0].distinct_ids)
    }
    const withRecordings = await actors(point(trends(), { day: '2023-04-29', includeRecordings: true }), {
      select: ['actor', 'event_count', 'matched_recordings'],
    })
    // Burrow keeps no session recordings: no matched event lies in a recorded session
    expect(withRecordings.results.map((r: Row) => r[2])).toEqual([[], []])
  })
})

describe('ActorsQuery over other insights', () => {
  it('test_stickiness_actors-like: the persons active on exactly k days', async () => {
    const source = { kind: 'StickinessQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], dateRange: RANGE }
    // pageview days: person1 Apr 29, May 1, May 6 (3); person2 Apr 29, May 1 (2); person3 May 1 (1)
    expect(await whoAndCount(point(source, { day: 2 }))).toEqual([['person2', 4]])
    expect(await whoAndCount(point(source, { day: 3 }))).toEqual([['person1', 5]])
    expect(await whoAndCount({ kind: 'StickinessActorsQuery', source, day: 2, operator: 'gte' })).toEqual([
      ['person1', 5],
      ['person2', 4],
    ])
  })

  it('test_lifecycle_actors-like: the persons of one status on one day', async () => {
    const source = {
      kind: 'LifecycleQuery',
      series: [{ kind: 'EventsNode', event: '$pageview' }],
      dateRange: { date_from: '2023-04-30', date_to: '2023-05-06' },
    }
    // read from Apr 29: person1 [Apr 29 (created), May 1, May 6] → new 29, resurrecting May 1 and 6, dormant
    // Apr 30, May 2, May 7; person2 [Apr 29 (created), May 1] → new, resurrecting May 1, dormant Apr 30 and May 2;
    // person3 [May 1 (created)] → new May 1, dormant May 2
    const ids = async (day: string, status: string) => {
      const { results } = await actors(point(source, { day, status }), { select: ['actor'], orderBy: ['person'] })
      return (results as Row[]).map((r) => (r[0].distinct_ids as string[])[0])
    }
    // ordered by e-mail: p1@x.com, p2@x.com, then person3 without one
    expect(await ids('2023-05-01', 'resurrecting')).toEqual(['person1', 'person2'])
    expect(await ids('2023-05-01', 'new')).toEqual(['person3'])
    expect(await ids('2023-05-02', 'dormant')).toEqual(['person1', 'person2', 'person3'])
    expect(await ids('2023-04-30', 'dormant')).toEqual(['person1', 'person2'])
    expect(await ids('2023-05-06', 'returning')).toEqual([])
  })

  it('test_retention_actors-like: the persons of a cohort and the intervals they came back in', async () => {
    const source = {
      kind: 'RetentionQuery',
      dateRange: { date_from: '2023-04-29', date_to: '2023-05-01' },
      retentionFilter: { period: 'Day', totalIntervals: 3 },
    }
    // recurring pageview cohorts: Apr 29 = person1, person2 (both back on May 1, interval 2); Apr 30 = nobody;
    // May 1 = all three
    const rows = async (interval: number) => {
      const { results } = await actors(point(source, { interval }), {
        select: ['actor', 'appearances'],
        orderBy: ['person'],
      })
      return (results as Row[]).map((r) => [(r[0].distinct_ids as string[])[0], r[1]])
    }
    expect(await rows(0)).toEqual([
      ['person1', [0, 2]],
      ['person2', [0, 2]],
    ])
    expect(await rows(1)).toEqual([])
    expect(await rows(2)).toEqual([
      ['person1', [0]],
      ['person2', [0]],
      ['person3', [0]],
    ])
    const bad = await postQuery(t, { query: { kind: 'ActorsQuery', source: point(source, { interval: 3 }) } })
    expect(bad.json()).toMatchObject({ type: 'validation_error', attr: 'source__interval' })
  })

  it('test_funnel_actors-like: converted at a step and dropped off before it', async () => {
    const source = {
      kind: 'FunnelsQuery',
      series: [
        { kind: 'EventsNode', event: '$pageview' },
        { kind: 'EventsNode', event: '$pageleave' },
      ],
      dateRange: RANGE,
    }
    // step 1: all three; step 2: only person1 (pageleave an hour after a pageview)
    const ids = async (funnelStep: number) => {
      const { results } = await actors(
        { kind: 'FunnelsActorsQuery', source, funnelStep },
        { select: ['actor'], orderBy: ['person ASC'] },
      )
      return (results as Row[]).map((r) => (r[0].distinct_ids as string[])[0])
    }
    expect(await ids(1)).toEqual(['person1', 'person2', 'person3'])
    expect(await ids(2)).toEqual(['person1'])
    expect(await ids(-2)).toEqual(['person2', 'person3'])
    const bad = await postQuery(t, {
      query: { kind: 'ActorsQuery', source: { kind: 'FunnelsActorsQuery', source, funnelStep: -1 } },
    })
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toMatchObject({ type: 'validation_error', attr: 'funnelStep' })
  })

  it('test_funnel_breakdown_actors-like: the step of one breakdown value', async () => {
    const source = {
      kind: 'FunnelsQuery',
      series: [
        { kind: 'EventsNode', event: '$pageview' },
        { kind: 'EventsNode', event: '$pageleave' },
      ],
      dateRange: RANGE,
      breakdownFilter: { breakdown: '$browser' },
    }
    // first touch: person1 Chrome, person2 and person3 Safari
    const ids = async (funnelStep: number, funnelStepBreakdown: string) => {
      const { results } = await actors(
        { kind: 'FunnelsActorsQuery', source, funnelStep, funnelStepBreakdown },
        { select: ['actor'], orderBy: ['person ASC'] },
      )
      return (results as Row[]).map((r) => (r[0].distinct_ids as string[])[0])
    }
    expect(await ids(1, 'Safari')).toEqual(['person2', 'person3'])
    expect(await ids(2, 'Chrome')).toEqual(['person1'])
    expect(await ids(2, 'Safari')).toEqual([])
  })
})

describe('ActorsQuery over persons', () => {
  const persons = async (extra: Record<string, unknown>) => {
    const res = await postQuery(t, { query: { kind: 'ActorsQuery', select: ['person', 'properties.email'], ...extra } })
    expect(res.statusCode, res.body).toBe(200)
    return res.json()
  }
  const firstIds = (rows: Row[]) => rows.map((r) => (r[0].distinct_ids as string[])[0])

  it('test_persons_query-like: every person, searched, filtered, ordered and paged', async () => {
    const all = await persons({ orderBy: ['person'] })
    expect(firstIds(all.results)).toEqual(['person1', 'person2', 'person3'])
    expect(all.results.map((r: Row) => r[1])).toEqual(['p1@x.com', 'p2@x.com', null])
    // search: e-mail, name, id or a distinct id
    expect(firstIds((await persons({ search: 'P2@X' })).results)).toEqual(['person2'])
    expect(firstIds((await persons({ search: 'second' })).results)).toEqual(['person2'])
    expect(firstIds((await persons({ search: 'person3' })).results)).toEqual(['person3'])
    const de = await persons({
      properties: [{ type: 'person', key: '$geoip_country_code', value: 'DE', operator: 'exact' }],
      orderBy: ['person DESC'],
    })
    // DESC by e-mail: p2@x.com first (person3's missing e-mail sorts last)
    expect(firstIds(de.results)).toEqual(['person2', 'person3'])
    const page = await persons({ orderBy: ['person'], limit: 1, offset: 1 })
    expect(firstIds(page.results)).toEqual(['person2'])
    expect(page).toMatchObject({ hasMore: true, limit: 1, offset: 1 })
  })

  it('aggregates over persons', async () => {
    const res = await postQuery(t, {
      query: { kind: 'ActorsQuery', select: ['properties.$geoip_country_code', 'count()'] },
    })
    expect(res.statusCode, res.body).toBe(200)
    // ordered by count() desc: DE twice, US once
    expect(res.json().results).toEqual([
      ['DE', 2],
      ['US', 1],
    ])
  })

  it('refuses a source it cannot list and bad data point coordinates', async () => {
    const bad = async (query: Record<string, unknown>, attr: string) => {
      const res = await postQuery(t, { query })
      expect(res.statusCode, res.body).toBe(400)
      expect(res.json()).toMatchObject({ type: 'validation_error', attr })
    }
    await bad({ kind: 'ActorsQuery', source: { kind: 'TrendsQuery' } }, 'source__kind')
    await bad({ kind: 'ActorsQuery', source: point({ kind: 'WebOverviewQuery' }) }, 'source__kind')
    await bad({ kind: 'ActorsQuery', source: point(trends(), { series: 3 }) }, 'source__series')
    await bad({ kind: 'ActorsQuery', source: point(trends(), { day: 'yesterday' }) }, 'source__day')
    await bad(
      {
        kind: 'ActorsQuery',
        source: point(
          { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: '$pageview' }] },
          { status: 'gone' },
        ),
      },
      'source__status',
    )
    await bad({ kind: 'ActorsQuery', limit: -1 }, 'limit')
    await bad({ kind: 'ActorsQuery', search: 5 }, 'search')
  })
})

describe('InsightActorsQuery on its own and InsightActorsQueryOptions', () => {
  it('returns the actor rows of the data point', async () => {
    const res = await postQuery(t, { query: point(trends(), { day: '2023-04-29' }) })
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body.columns).toEqual(['actor_id', 'event_count', 'matching_events', 'event_distinct_ids'])
    const counts = (body.results as unknown[][]).map((r) => [r[3], r[1]]).sort()
    expect(counts).toEqual([
      [['person1'], 1],
      [['person2'], 2],
    ])
  })

  it('lists the days, series, breakdown values and periods of a trends insight', async () => {
    const res = await postQuery(t, {
      query: {
        kind: 'InsightActorsQueryOptions',
        source: point(
          trends({
            dateRange: { date_from: '2023-05-05', date_to: '2023-05-06' },
            breakdownFilter: { breakdown: '$browser' },
            compareFilter: { compare: true },
          }),
        ),
      },
    })
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body.day).toEqual([
      { label: '5-May-2023', value: '2023-05-05' },
      { label: '6-May-2023', value: '2023-05-06' },
    ])
    expect(body.series).toEqual([{ label: '$pageview', value: 0 }])
    expect(body.compare).toEqual([
      { label: 'Current', value: 'current' },
      { label: 'Previous', value: 'previous' },
    ])
    // May 5–6 has person1's browserless pageview; the previous period (May 3–4) has none
    expect(body.breakdown).toEqual([{ label: 'None', value: '$$_posthog_breakdown_null_$$' }])
  })

  it('lists the statuses of a lifecycle insight', async () => {
    const res = await postQuery(t, {
      query: {
        kind: 'InsightActorsQueryOptions',
        source: point({
          kind: 'LifecycleQuery',
          series: [{ kind: 'EventsNode', event: '$pageview' }],
          dateRange: { date_from: '2023-05-05', date_to: '2023-05-05' },
        }),
      },
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({
      day: [{ label: '5-May-2023', value: '2023-05-05' }],
      status: [
        { label: 'New', value: 'new' },
        { label: 'Returning', value: 'returning' },
        { label: 'Resurrecting', value: 'resurrecting' },
        { label: 'Dormant', value: 'dormant' },
      ],
    })
  })
})

describe('node versions', () => {
  it('upgrades the insight inside an actors query (the actors nodes themselves are at version 1)', async () => {
    const legacy = {
      kind: 'ActorsQuery',
      source: point({ kind: 'TrendsQuery', series: [{ event: '$pageview' }], dateRange: RANGE }, { day: '2023-04-29' }),
      select: ['actor', 'event_count'],
      orderBy: ['event_count DESC'],
    }
    const upgraded = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/query/upgrade/`,
      headers: t.auth,
      payload: { query: legacy },
    })
    expect(upgraded.statusCode, upgraded.body).toBe(200)
    const query = upgraded.json().query
    expect(query.version).toBeUndefined()
    expect(query.source.version).toBeUndefined()
    expect(query.source.source).toMatchObject({ version: 5, series: [{ kind: 'EventsNode', event: '$pageview' }] })
    // the legacy node runs as its upgrade does
    const res = await postQuery(t, { query: legacy })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().results.map((r: Row) => r[1])).toEqual([2, 1])
  })
})

describe('a project in America/New_York', () => {
  it("test_trends_persons_timezone-like: the day of a data point is the project's day", async () => {
    const late = trends({ series: [{ kind: 'EventsNode', event: 'late' }] })
    expect(await whoAndCount(point(late, { day: '2023-05-02' }))).toEqual([['person3', 1]])
    const patched = await t.burrow.app.inject({
      method: 'PATCH',
      url: `/api/projects/${t.creds.project_id}/`,
      headers: t.auth,
      payload: { timezone: 'America/New_York' },
    })
    expect(patched.statusCode, patched.body).toBe(200)
    // 02:00 UTC on May 2 is 22:00 on May 1 in New York (UTC−4 in May)
    expect(await whoAndCount(point(late, { day: '2023-05-01' }))).toEqual([['person3', 1]])
    expect(await whoAndCount(point(late, { day: '2023-05-02' }))).toEqual([])
    // the person's created_at is shown in the project's timezone
    const { results } = await actors(point(late, { day: '2023-05-01' }))
    expect(results[0][1]).toBe('2023-05-01T12:00:00-04:00')
  })
})
