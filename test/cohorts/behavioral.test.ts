// Behavioural cohorts against hand-worked answers: fixture events placed hours before now (the engine's clock), one
// cohort per behavioural kind, checked through /cohorts/{id}/persons/, the background count, HogQL's IN COHORT,
// an insight filtered and broken down by cohort, and flags (which refuse them). Runs on SQLite metadata, and on
// PostgreSQL too when DATABASE_URL is set (startTestApp picks it up).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let base: string

const HOUR = 3_600_000
const ago = (hours: number) => new Date(Date.now() - hours * HOUR).toISOString()

/**
 * Who did what, hours before now (person property `plan` in brackets):
 *   alice [pro]  purchase 12h, 36h, 60h; viewed 120h; $pageview 960h (40 days)
 *   bob   [free] purchase 12h; signup 48h
 *   carol [pro]  purchase 480h (20 days), 360h (15 days)
 *   dave  [free] purchase 1440h (60 days), 6h
 *   erin  [pro]  signup 240h (10 days), 20h
 *   frank [free] viewed 72h, purchase 70h
 *   grace [pro]  $pageview 1h
 */
const PEOPLE: [string, string, [string, number][]][] = [
  [
    'alice',
    'pro',
    [
      ['purchase', 12],
      ['purchase', 36],
      ['purchase', 60],
      ['viewed', 120],
      ['$pageview', 960],
    ],
  ],
  [
    'bob',
    'free',
    [
      ['purchase', 12],
      ['signup', 48],
    ],
  ],
  [
    'carol',
    'pro',
    [
      ['purchase', 480],
      ['purchase', 360],
    ],
  ],
  [
    'dave',
    'free',
    [
      ['purchase', 1440],
      ['purchase', 6],
    ],
  ],
  [
    'erin',
    'pro',
    [
      ['signup', 240],
      ['signup', 20],
    ],
  ],
  [
    'frank',
    'free',
    [
      ['viewed', 72],
      ['purchase', 70],
    ],
  ],
  ['grace', 'pro', [['$pageview', 1]]],
]

async function capture() {
  // each person's first event (the oldest) sets the plan; events go one request each, oldest first
  const events: { event: string; distinct_id: string; timestamp: string; properties: Record<string, unknown> }[] = []
  for (const [id, plan, done] of PEOPLE) {
    const sorted = [...done].sort((a, b) => b[1] - a[1])
    sorted.forEach(([event, hours], i) => {
      events.push({ event, distinct_id: id, timestamp: ago(hours), properties: i === 0 ? { $set: { plan } } : {} })
    })
  }
  for (const event of events) {
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: '/batch/',
      payload: { api_key: t.creds.project_api_key, batch: [event] },
    })
    expect(res.statusCode, res.body).toBe(200)
  }
  await t.burrow.committer.flushPending()
}

const post = (payload: Record<string, unknown>) =>
  t.burrow.app.inject({ method: 'POST', url: `${base}/`, headers: t.auth, payload })

async function cohort(name: string, values: unknown[], type = 'AND'): Promise<{ id: number; cohort_type: string }> {
  const res = await post({ name, filters: { properties: { type, values } } })
  expect(res.statusCode, res.body).toBe(201)
  return res.json()
}

const behavioral = (fields: Record<string, unknown>) => ({ type: 'behavioral', event_type: 'events', ...fields })

/** The distinct ids of a cohort's persons, from /cohorts/{id}/persons/ (one per person here), sorted. */
async function members(id: number): Promise<string[]> {
  const res = await t.burrow.app.inject({ url: `${base}/${id}/persons/`, headers: t.auth })
  expect(res.statusCode, res.body).toBe(200)
  return res
    .json()
    .results.map((p: { distinct_ids: string[] }) => p.distinct_ids[0])
    .sort()
}

async function hogql(query: string): Promise<unknown[][]> {
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: `/api/projects/${t.creds.project_id}/query/`,
    headers: t.auth,
    payload: { query: { kind: 'HogQLQuery', query } },
  })
  expect(res.statusCode, res.body).toBe(200)
  return res.json().results
}

/** Waits for the background calculation to finish and returns the cohort. */
async function calculated(id: number) {
  for (let i = 0; i < 200; i++) {
    const json = (await t.burrow.app.inject({ url: `${base}/${id}/`, headers: t.auth })).json()
    if (!json.is_calculating) return json
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`cohort ${id} still calculating`)
}

beforeAll(async () => {
  t = await startTestApp()
  base = `/api/projects/${t.creds.project_id}/cohorts`
  await capture()
}, 180_000)
afterAll(() => t?.close())

describe('behavioural cohort membership (hand-worked on the fixture)', () => {
  it.each([
    [
      'performed_event_multiple: purchase at least 3 times in the last 7 days',
      [
        behavioral({
          key: 'purchase',
          value: 'performed_event_multiple',
          operator: 'gte',
          operator_value: 3,
          time_value: 7,
          time_interval: 'day',
        }),
      ],
      ['alice'],
    ],
    [
      'performed_event: purchase in the last 7 days',
      [behavioral({ key: 'purchase', value: 'performed_event', time_value: 7, time_interval: 'day' })],
      ['alice', 'bob', 'dave', 'frank'],
    ],
    [
      'negation with a person property: plan pro and no purchase in the last 7 days',
      [
        { key: 'plan', value: 'pro', type: 'person', operator: 'exact' },
        behavioral({ key: 'purchase', value: 'performed_event', time_value: 7, time_interval: 'day', negation: true }),
      ],
      ['carol', 'erin', 'grace'],
    ],
    [
      'performed_event_first_time: first signup in the last 7 days',
      [behavioral({ key: 'signup', value: 'performed_event_first_time', time_value: 7, time_interval: 'day' })],
      ['bob'],
    ],
    [
      'stopped_performing_event: purchased in the 30 days before the last 7, not since',
      [
        behavioral({
          key: 'purchase',
          value: 'stopped_performing_event',
          time_value: 30,
          time_interval: 'day',
          seq_time_value: 7,
          seq_time_interval: 'day',
        }),
      ],
      ['carol'],
    ],
    [
      'restarted_performing_event: purchased over 30 days ago, not in the 30 days before the last 7, again since',
      [
        behavioral({
          key: 'purchase',
          value: 'restarted_performing_event',
          time_value: 30,
          time_interval: 'day',
          seq_time_value: 7,
          seq_time_interval: 'day',
        }),
      ],
      ['dave'],
    ],
    [
      'performed_event_sequence: viewed, then purchase within a day, in the last 7 days',
      [
        behavioral({
          key: 'viewed',
          value: 'performed_event_sequence',
          time_value: 7,
          time_interval: 'day',
          seq_event: 'purchase',
          seq_event_type: 'events',
          seq_time_value: 1,
          seq_time_interval: 'day',
        }),
      ],
      ['frank'],
    ],
    [
      'performed_event_regularly: a purchase a day in at least 3 of the last 4 days',
      [
        behavioral({
          key: 'purchase',
          value: 'performed_event_regularly',
          operator: 'gte',
          operator_value: 1,
          time_value: 1,
          time_interval: 'day',
          total_periods: 4,
          min_periods: 3,
        }),
      ],
      ['alice'],
    ],
    [
      'explicit_datetime (relative): purchase since -14d',
      [behavioral({ key: 'purchase', value: 'performed_event', explicit_datetime: '-14d' })],
      ['alice', 'bob', 'dave', 'frank'],
    ],
    [
      'explicit_datetime (absolute): purchase since 16 days ago',
      [behavioral({ key: 'purchase', value: 'performed_event', explicit_datetime: ago(16 * 24) })],
      ['alice', 'bob', 'carol', 'dave', 'frank'],
    ],
    [
      'event_filters: a $pageview older than 30 days (a HogQL event filter)',
      [
        behavioral({
          key: '$pageview',
          value: 'performed_event',
          event_filters: [{ type: 'hogql', key: 'timestamp < now() - INTERVAL 30 DAY', value: null }],
        }),
      ],
      ['alice'],
    ],
  ])('%s', async (_name, values, expected) => {
    const created = await cohort(_name, values)
    expect(await members(created.id)).toEqual(expected)
    const done = await calculated(created.id)
    expect(done).toMatchObject({ count: expected.length, errors_calculating: 0, is_calculating: false })
    expect(done.last_calculation).not.toBeNull()
  })

  it('nests AND/OR groups with person properties and other cohorts', async () => {
    const buyers = await cohort('Frequent buyers', [
      behavioral({
        key: 'purchase',
        value: 'performed_event_multiple',
        operator: 'gte',
        operator_value: 3,
        time_value: 7,
        time_interval: 'day',
      }),
    ])
    // frequent buyers, or pro persons who signed up in the last 30 days: alice; erin (pro, signups 10 days and 20h ago)
    const nested = await cohort(
      'Buyers or new pros',
      [
        { type: 'AND', values: [{ type: 'cohort', key: 'id', value: buyers.id }] },
        {
          type: 'AND',
          values: [
            { key: 'plan', value: 'pro', type: 'person', operator: 'exact' },
            behavioral({ key: 'signup', value: 'performed_event', time_value: 30, time_interval: 'day' }),
          ],
        },
      ],
      'OR',
    )
    expect(await members(nested.id)).toEqual(['alice', 'erin'])
    // and its complement among pro persons: carol, grace
    const others = await cohort('Pros outside it', [
      { key: 'plan', value: 'pro', type: 'person', operator: 'exact' },
      { type: 'cohort', key: 'id', value: nested.id, negation: true },
    ])
    expect(await members(others.id)).toEqual(['carol', 'grace'])
  })
})

describe('behavioural cohorts in queries', () => {
  let buyers: number

  beforeAll(async () => {
    buyers = (
      await cohort('Buyers this week', [
        behavioral({ key: 'purchase', value: 'performed_event', time_value: 7, time_interval: 'day' }),
      ])
    ).id
  })

  it('IN COHORT in HogQL reads them', async () => {
    // events of alice (5), bob (2), dave (2), frank (2)
    expect(await hogql(`SELECT count() FROM events WHERE person_id IN COHORT ${buyers}`)).toEqual([[11]])
    expect(await hogql(`SELECT count() FROM persons WHERE id NOT IN COHORT ${buyers}`)).toEqual([[3]])
  })

  it('filters and breaks down a trends insight by them', async () => {
    const run = (extra: Record<string, unknown>) =>
      t.burrow.app.inject({
        method: 'POST',
        url: `/api/projects/${t.creds.project_id}/query/`,
        headers: t.auth,
        payload: {
          query: {
            kind: 'TrendsQuery',
            series: [{ kind: 'EventsNode', event: 'purchase', math: 'total' }],
            dateRange: { date_from: '-90d' },
            ...extra,
          },
        },
      })
    // purchases by this week's buyers over 90 days: alice 3, bob 1, dave 2, frank 1
    const filtered = await run({ properties: [{ type: 'cohort', key: 'id', value: buyers }] })
    expect(filtered.statusCode, filtered.body).toBe(200)
    expect(filtered.json().results[0].count).toBe(7)
    const broken = await run({ breakdownFilter: { breakdown_type: 'cohort', breakdown: [buyers, 'all'] } })
    expect(broken.statusCode, broken.body).toBe(200)
    const counts = Object.fromEntries(
      broken
        .json()
        .results.map((r: { breakdown_value: unknown; count: number }) => [String(r.breakdown_value), r.count]),
    )
    // everyone's purchases: the 7 above and carol's 2
    expect(counts).toEqual({ [String(buyers)]: 7, all: 9 })
  })
})

describe('PostHog cohort API rules for behavioural filters', () => {
  it('test_cohort_serializer_includes_cohort_type_fields: a performed_event cohort is behavioral', async () => {
    const res = await post({
      name: 'test_cohort',
      filters: {
        properties: {
          type: 'OR',
          values: [{ type: 'AND', values: [behavioral({ key: 'test_event', value: 'performed_event' })] }],
        },
      },
    })
    expect(res.statusCode).toBe(201)
    expect(res.json()).toMatchObject({ cohort_type: 'behavioral', has_behavioral_filters: true, is_analytical: false })
  })

  it('test_cohort_type_auto_updated_on_update: first-time filters make it analytical', async () => {
    const created = await cohort('update_test_cohort', [behavioral({ key: 'test_event', value: 'performed_event' })])
    expect(created.cohort_type).toBe('behavioral')
    const res = await t.burrow.app.inject({
      method: 'PATCH',
      url: `${base}/${created.id}/`,
      headers: t.auth,
      payload: {
        filters: {
          properties: { type: 'OR', values: [behavioral({ key: 'test_event', value: 'performed_event_first_time' })] },
        },
      },
    })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ cohort_type: 'analytical', is_analytical: true, is_calculating: true })
  })

  it('test_cohort_property_validation_behavioral_filter: names the missing event_type', async () => {
    const res = await post({
      name: 'cohort behavioral',
      filters: {
        properties: { type: 'OR', values: [{ key: '$pageview', type: 'behavioral', value: 'performed_event' }] },
      },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toBe('Missing required keys for behavioral filter: event_type')
  })

  it('test_behavioral_filter_extra_field_forbidden and test_behavioral_filter_invalid_operator_value_type', async () => {
    const extra = await post({
      name: 'x',
      filters: {
        properties: {
          type: 'OR',
          values: [
            behavioral({
              key: '$pageview',
              value: 'performed_event',
              operator: 'gte',
              operator_value: 5,
              not_a_field: 1,
            }),
          ],
        },
      },
    })
    expect(extra.statusCode).toBe(400)
    expect(extra.body).toContain('not_a_field')
    const list = await post({
      name: 'x',
      filters: {
        properties: {
          type: 'OR',
          values: [behavioral({ key: '$pageview', value: 'performed_event', operator: 'gte', operator_value: [5] })],
        },
      },
    })
    expect(list.statusCode).toBe(400)
    expect(list.body).toContain('operator_value')
  })

  it('refuses behavioural kinds it cannot compute and unknown kinds', async () => {
    const stopped = await post({
      name: 'x',
      filters: { properties: { type: 'AND', values: [behavioral({ key: 'a', value: 'stopped_performing_event' })] } },
    })
    expect(stopped.statusCode).toBe(400)
    expect(stopped.json().detail).toBe(
      'Missing required keys for behavioral filter: time_value, time_interval, seq_time_value, seq_time_interval',
    )
    const unknown = await post({
      name: 'x',
      filters: { properties: { type: 'AND', values: [behavioral({ key: 'a', value: 'did_something_once' })] } },
    })
    expect(unknown.statusCode).toBe(400)
    const badInterval = await post({
      name: 'x',
      filters: {
        properties: {
          type: 'AND',
          values: [behavioral({ key: 'a', value: 'performed_event', time_value: 3, time_interval: 'fortnight' })],
        },
      },
    })
    expect(badInterval.statusCode).toBe(400)
  })

  it('test_behavioral_filter_with_hogql_event_filter_and_null_value', async () => {
    const res = await post({
      name: 'Cohort with HogQL Event Filter and Null Value',
      filters: {
        properties: {
          type: 'OR',
          values: [
            {
              type: 'OR',
              values: [
                behavioral({
                  value: 'performed_event',
                  negation: false,
                  key: 'PaymentSuccess',
                  event_filters: [
                    { key: 'toDate(timestamp) = today() - INTERVAL 3 DAY', type: 'hogql', value: null },
                    { key: 'planId', type: 'event', value: ['UPSC26STARTERV1'], operator: 'exact' },
                  ],
                  explicit_datetime: '-30d',
                }),
              ],
            },
          ],
        },
      },
    })
    expect(res.statusCode, res.body).toBe(201)
    const done = await calculated(res.json().id)
    expect(done).toMatchObject({ count: 0, errors_calculating: 0 })
  })
})

describe('flags and behavioural cohorts', () => {
  const flag = (key: string, cohortId: number) =>
    t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/feature_flags/`,
      headers: t.auth,
      payload: {
        key,
        filters: {
          groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohortId }], rollout_percentage: 100 }],
        },
      },
    })

  it('test_creating_feature_flag_with_behavioral_cohort: refused with behavioral_cohort_found, nested ones too', async () => {
    const events = await cohort('cohort2', [
      behavioral({ key: '$pageview', value: 'performed_event', time_value: 2, time_interval: 'day' }),
    ])
    const res = await flag('cohort-flag', events.id)
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({
      type: 'validation_error',
      code: 'behavioral_cohort_found',
      detail: "Cohort 'cohort2' with filters on events cannot be used in feature flags.",
      attr: 'filters',
    })
    const outer = await cohort('outer', [{ type: 'cohort', key: 'id', value: events.id }])
    const nested = await flag('nested-cohort-flag', outer.id)
    expect(nested.json()).toMatchObject({
      code: 'behavioral_cohort_found',
      detail: "Cohort 'cohort2' with filters on events cannot be used in feature flags.",
    })
  })

  it('test_behavioral_filters_cannot_be_added_to_cohorts_used_in_flags', async () => {
    const pros = await cohort('pros for a flag', [{ key: 'plan', value: 'pro', type: 'person', operator: 'exact' }])
    expect((await flag('pros-flag', pros.id)).statusCode).toBe(201)
    const res = await t.burrow.app.inject({
      method: 'PATCH',
      url: `${base}/${pros.id}/`,
      headers: t.auth,
      payload: {
        filters: {
          properties: { type: 'AND', values: [behavioral({ key: '$pageview', value: 'performed_event' })] },
        },
      },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({
      code: 'behavioral_cohort_found',
      detail: 'Behavioral filters cannot be added to cohorts used in feature flags.',
    })
  })
})
