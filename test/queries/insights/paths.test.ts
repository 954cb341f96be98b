/**
 * PathsQuery through the query API over events captured with fixed timestamps; every expected edge is worked
 * out by hand from the fixture below (mirrors of PostHog's test_paths_query_runner.py behaviours).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../../helpers/app.js'
import { postQuery } from '../fixtures.js'
import { captureBatch, ev } from './capture.js'

let t: TestApp
const now = new Date('2024-02-10T12:00:00Z')
const pv = (id: string, ts: string, url: string) => ev('$pageview', id, ts, { $current_url: url })

// alice: one session on Feb 1 from 10:00 to 10:10 (/home/ with a trailing slash, /pricing twice, /signup), and
//   a second one at 12:00 (110 minutes later: a new session path) with /home, /docs
// bob: Feb 2, /home, /pricing, a custom event "clicked", /home again, /about
// carl: Feb 3, /pricing, /signup
// dina: Feb 4, two screens of a mobile app
const EVENTS = [
  pv('alice', '2024-02-01T10:00:00Z', '/home/'),
  pv('alice', '2024-02-01T10:05:00Z', '/pricing'),
  pv('alice', '2024-02-01T10:06:00Z', '/pricing'),
  pv('alice', '2024-02-01T10:10:00Z', '/signup'),
  pv('alice', '2024-02-01T12:00:00Z', '/home'),
  pv('alice', '2024-02-01T12:02:00Z', '/docs'),
  pv('bob', '2024-02-02T09:00:00Z', '/home'),
  pv('bob', '2024-02-02T09:10:00Z', '/pricing'),
  ev('clicked', 'bob', '2024-02-02T09:15:00Z'),
  pv('bob', '2024-02-02T09:20:00Z', '/home'),
  pv('bob', '2024-02-02T09:25:00Z', '/about'),
  pv('carl', '2024-02-03T08:00:00Z', '/pricing'),
  pv('carl', '2024-02-03T08:01:00Z', '/signup'),
  ev('$screen', 'dina', '2024-02-04T08:00:00Z', { $screen_name: 'Home' }),
  ev('$screen', 'dina', '2024-02-04T08:00:30Z', { $screen_name: 'Settings' }),
]

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  await captureBatch(t, EVENTS)
}, 60_000)
afterAll(() => t.close())

const paths = (pathsFilter: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
  postQuery(t, {
    query: {
      kind: 'PathsQuery',
      dateRange: { date_from: '2024-02-01', date_to: '2024-02-07' },
      pathsFilter: { includeEventTypes: ['$pageview'], ...pathsFilter },
      ...extra,
    },
  })

const edge = (source: string, target: string, value: number, seconds: number) => ({
  source,
  target,
  value,
  average_conversion_time: seconds * 1000,
})

async function edgesOf(res: Awaited<ReturnType<typeof paths>>) {
  expect(res.statusCode, res.body).toBe(200)
  return res.json().results
}

describe('PathsQuery', () => {
  it('test_current_url_paths_and_logic-like: page paths per session, repeats collapsed, heaviest edges first', async () => {
    // alice 1: /home 10:00, /pricing 10:06 (the last of the two), /signup 10:10
    // alice 2: /home 12:00, /docs 12:02;  bob: /home 9:00, /pricing 9:10, /home 9:20, /about 9:25
    // carl: /pricing 8:00, /signup 8:01
    // 1_/home → 2_/pricing: alice (6 min) and bob (10 min) → 2, average 8 minutes; every other edge once
    const results = await edgesOf(await paths())
    expect(results).toEqual([
      edge('1_/home', '2_/pricing', 2, 480),
      edge('1_/home', '2_/docs', 1, 120),
      edge('1_/pricing', '2_/signup', 1, 60),
      edge('2_/pricing', '3_/home', 1, 600),
      edge('2_/pricing', '3_/signup', 1, 240),
      edge('3_/home', '4_/about', 1, 300),
    ])
  })

  it('test_path_by_grouping-like: starts every path at the start point', async () => {
    // alice 1: /pricing, /signup;  alice 2 has no /pricing;  bob: /pricing, /home, /about;  carl: /pricing, /signup
    const results = await edgesOf(await paths({ startPoint: '/pricing' }))
    expect(results).toEqual([
      edge('1_/pricing', '2_/signup', 2, 150),
      edge('1_/pricing', '2_/home', 1, 600),
      edge('2_/home', '3_/about', 1, 300),
    ])
  })

  it('ends every path at the end point (a trailing slash on the point is ignored)', async () => {
    // alice 1: /home, /pricing, /signup;  carl: /pricing, /signup;  the others never reach /signup
    const results = await edgesOf(await paths({ endPoint: '/signup/' }))
    expect(results).toEqual([
      edge('1_/home', '2_/pricing', 1, 360),
      edge('1_/pricing', '2_/signup', 1, 60),
      edge('2_/pricing', '3_/signup', 1, 240),
    ])
  })

  it('test_path_start_and_end-like: between a start and an end point', async () => {
    // from /home to /about: only bob's path (/home, /pricing, /home, /about — the first /home starts it)
    const results = await edgesOf(await paths({ startPoint: '/home', endPoint: '/about' }))
    expect(results).toEqual([
      edge('1_/home', '2_/pricing', 1, 600),
      edge('2_/pricing', '3_/home', 1, 600),
      edge('3_/home', '4_/about', 1, 300),
    ])
  })

  it('shortens a long path between start and end to its ends around "..."', async () => {
    // stepLimit 2 between /home and /about: bob's 4 items (/home 9:00, /pricing 9:10, /home 9:20, /about 9:25)
    // become the first one, "..." (timed as item 1 + 2/2 = the second: /pricing at 9:10), and the last one
    const results = await edgesOf(await paths({ startPoint: '/home', endPoint: '/about', stepLimit: 2 }))
    expect(results).toEqual([edge('1_/home', '2_...', 1, 600), edge('2_...', '3_/about', 1, 900)])
  })

  it('test_step_limit-like: keeps the first stepLimit items of each path', async () => {
    const results = await edgesOf(await paths({ stepLimit: 2 }))
    expect(results).toEqual([
      edge('1_/home', '2_/pricing', 2, 480),
      edge('1_/home', '2_/docs', 1, 120),
      edge('1_/pricing', '2_/signup', 1, 60),
    ])
  })

  it('test_custom_event_paths-like: every event type when none is chosen, minus excluded events', async () => {
    // bob's "clicked" (9:15) sits between /pricing and /home; dina's screens are named by $screen_name (30 s apart)
    const all = await edgesOf(await paths({ includeEventTypes: [] }))
    expect(all).toEqual([
      edge('1_/home', '2_/pricing', 2, 480),
      edge('1_/home', '2_/docs', 1, 120),
      edge('1_/pricing', '2_/signup', 1, 60),
      edge('1_Home', '2_Settings', 1, 30),
      edge('2_/pricing', '3_/signup', 1, 240),
      edge('2_/pricing', '3_clicked', 1, 300),
      edge('3_clicked', '4_/home', 1, 300),
      edge('4_/home', '5_/about', 1, 300),
    ])
    // without "clicked" and the screens: the page paths of the first test
    const excluded = await edgesOf(await paths({ includeEventTypes: [], excludeEvents: ['clicked', '$screen'] }))
    expect(excluded).toEqual(await edgesOf(await paths()))
    // custom events only: bob's lone "clicked" makes no edge
    expect(await edgesOf(await paths({ includeEventTypes: ['custom_event'] }))).toEqual([])
  })

  it('test_screen_paths-like: screens by their names', async () => {
    expect(await edgesOf(await paths({ includeEventTypes: ['$screen'] }))).toEqual([
      edge('1_Home', '2_Settings', 1, 30),
    ])
  })

  it('test_hogql_paths-like: items from a HogQL expression, with no trailing slash removed', async () => {
    const results = await edgesOf(
      await paths({ includeEventTypes: ['hogql'], pathsHogQLExpression: "concat('u:', properties.$current_url)" }),
    )
    // every event counts; clicked and the screens have no URL: "u:" (concat reads NULL as '')
    // alice 1: u:/home/, u:/pricing, u:/signup; bob: u:/home, u:/pricing, u:, u:/home, u:/about; dina: u: twice → one item
    expect(results.slice(0, 3)).toEqual([
      edge('1_u:/home', '2_u:/docs', 1, 120),
      edge('1_u:/home', '2_u:/pricing', 1, 600),
      edge('1_u:/home/', '2_u:/pricing', 1, 360),
    ])
    expect(results).toContainEqual(edge('2_u:/pricing', '3_u:', 1, 300))
  })

  it('test_path_cleaning-like: local cleaning rules rewrite items before repeats collapse', async () => {
    // /pricing and /signup both become /funnel: alice 1 → /home 10:00, /funnel 10:10 (the last of three);
    // bob → /home, /funnel 9:10, /home, /about; carl → a single /funnel (no edge)
    const results = await edgesOf(
      await paths({ localPathCleaningFilters: [{ regex: '^/(pricing|signup)$', alias: '/funnel' }] }),
    )
    expect(results).toEqual([
      edge('1_/home', '2_/funnel', 2, 600),
      edge('1_/home', '2_/docs', 1, 120),
      edge('2_/funnel', '3_/home', 1, 600),
      edge('3_/home', '4_/about', 1, 300),
    ])
  })

  it('test_path_groupings-like: wildcard groupings name the item by the grouping', async () => {
    const results = await edgesOf(await paths({ pathGroupings: ['/pri*'] }))
    expect(results[0]).toEqual(edge('1_/home', '2_/pri*', 2, 480))
    expect(results).toContainEqual(edge('1_/pri*', '2_/signup', 1, 60))
  })

  it('test_path_edge_weights-like: min and max edge weights, edge limit, and only edges reachable from step 1', async () => {
    expect(await edgesOf(await paths({ minEdgeWeight: 2 }))).toEqual([edge('1_/home', '2_/pricing', 2, 480)])
    expect(await edgesOf(await paths({ edgeLimit: 1 }))).toEqual([edge('1_/home', '2_/pricing', 2, 480)])
    // weight 1 only: 1_/home → 2_/pricing is gone, so 2_/pricing and 3_/home are no longer reached from step 1
    expect(await edgesOf(await paths({ maxEdgeWeight: 1 }))).toEqual([
      edge('1_/home', '2_/docs', 1, 120),
      edge('1_/pricing', '2_/signup', 1, 60),
    ])
  })

  it('reads the date range and global property filters', async () => {
    // Feb 2–3 only: bob and carl
    const ranged = await edgesOf(await paths({}, { dateRange: { date_from: '2024-02-02', date_to: '2024-02-03' } }))
    expect(ranged.map((e: { source: string; target: string }) => `${e.source}>${e.target}`)).toEqual([
      '1_/home>2_/pricing',
      '1_/pricing>2_/signup',
      '2_/pricing>3_/home',
      '3_/home>4_/about',
    ])
    const filtered = await edgesOf(
      await paths(
        {},
        { properties: [{ type: 'event', key: '$current_url', value: ['/pricing', '/signup'], operator: 'exact' }] },
      ),
    )
    // alice 1 → /pricing 10:06, /signup 10:10; carl → /pricing, /signup
    expect(filtered).toEqual([edge('1_/pricing', '2_/signup', 2, 150)])
  })

  it('refuses malformed paths filters with the offending attribute', async () => {
    const bad = async (pathsFilter: Record<string, unknown>, attr: string) => {
      const res = await paths(pathsFilter)
      expect(res.statusCode, res.body).toBe(400)
      expect(res.json()).toMatchObject({ type: 'validation_error', attr })
    }
    await bad({ includeEventTypes: ['$autocapture'] }, 'pathsFilter__includeEventTypes__0')
    await bad({ stepLimit: 'five' }, 'pathsFilter__stepLimit')
    await bad({ localPathCleaningFilters: [{ alias: 'x' }] }, 'pathsFilter__localPathCleaningFilters__0__regex')
    await bad({ excludeEvents: 'clicked' }, 'pathsFilter__excludeEvents')
  })

  it('test_path_actors-like: the persons behind an edge, a node and a drop-off', async () => {
    const ids = async (keys: Record<string, unknown>) => {
      const res = await postQuery(t, {
        query: {
          kind: 'ActorsQuery',
          source: {
            kind: 'InsightActorsQuery',
            source: {
              kind: 'PathsQuery',
              dateRange: { date_from: '2024-02-01', date_to: '2024-02-07' },
              pathsFilter: { includeEventTypes: ['$pageview'], ...keys },
            },
          },
          select: ['actor', 'event_count'],
          orderBy: ['person'],
        },
      })
      expect(res.statusCode, res.body).toBe(200)
      return (res.json().results as [{ distinct_ids: string[] }, number][]).map((r) => [r[0].distinct_ids[0], r[1]])
    }
    // 1_/home → 2_/pricing: alice's first session and bob (one matching item each)
    const edge = await ids({ pathStartKey: '1_/home', pathEndKey: '2_/pricing' })
    expect(edge.sort()).toEqual([
      ['alice', 1],
      ['bob', 1],
    ])
    // arriving at 2_/signup: carl
    expect(await ids({ pathEndKey: '2_/signup' })).toEqual([['carl', 1]])
    // paths that end at 3_/signup (alice 1) and at 2_/docs (alice 2)
    expect(await ids({ pathDropoffKey: '3_/signup' })).toEqual([['alice', 1]])
    expect(await ids({ pathDropoffKey: '2_/docs' })).toEqual([['alice', 1]])
  })
})
