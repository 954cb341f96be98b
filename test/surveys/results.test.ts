import crypto from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSurveyModule } from '../../src/surveys/index.js'
import { createKey, createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { eventRow } from '../helpers/events.js'

// A fixed clock: duplicated names carry the time, and the survey window is known.
const NOW = new Date('2026-11-24T08:00:00Z')
let t: TestApp
let base: string

type Json = Record<string, any>
const person = (n: number) => `00000000-0000-4000-8000-00000000000${n}`

beforeAll(async () => {
  t = await startTestApp({ clock: () => NOW })
  base = `/api/projects/${t.creds.project_id}/surveys`
}, 60_000)
afterAll(() => t?.close())

const request = (method: 'GET' | 'POST' | 'PATCH', path: string, payload?: Json, headers = t.auth) =>
  t.burrow.app.inject({ method, url: `${base}/${path}`, headers, ...(payload === undefined ? {} : { payload }) })

async function create(body: Json): Promise<Json> {
  const res = await request('POST', '', { type: 'popover', ...body })
  expect(res.statusCode, res.body).toBe(201)
  return res.json()
}

interface Fixture {
  event: string
  survey: string
  person: number
  at: string
  props?: Json
  uuid?: string
}

async function insert(fixtures: Fixture[], teamId = t.creds.project_id) {
  const rows = fixtures.map((f) =>
    JSON.stringify(
      eventRow({
        uuid: f.uuid ?? crypto.randomUUID(),
        team_id: teamId,
        event: f.event,
        distinct_id: `d${f.person}`,
        person_id: person(f.person),
        properties: JSON.stringify({ $survey_id: f.survey, ...f.props }),
        timestamp: f.at,
        created_at: f.at,
      }),
    ),
  )
  await t.burrow.events.insertJsonEachRow('events', rows.join('\n'))
}

let survey: Json
let other: Json
const p2Sent = crypto.randomUUID()

describe('stats', () => {
  beforeAll(async () => {
    survey = await create({
      name: 'Stats survey',
      start_date: '2026-11-01T00:00:00Z',
      questions: [
        { id: 'q-rate', type: 'rating', question: 'Rate us', scale: 5 },
        { id: 'q-multi', type: 'multiple_choice', question: 'Why?', choices: ['Price', 'Speed'] },
        { id: 'q-open', type: 'open', question: 'Anything else?' },
        { id: 'q-link', type: 'link', question: 'Docs', link: 'https://example.com' },
      ],
    })
    other = await create({ name: 'Other survey', start_date: '2026-11-01T00:00:00Z' })
    const s = survey.id
    await insert([
      // Shown: person 1 twice, persons 2–5 once: 6 events, 5 people.
      { event: 'survey shown', survey: s, person: 1, at: '2026-11-10 10:00:00' },
      { event: 'survey shown', survey: s, person: 1, at: '2026-11-10 10:01:00' },
      { event: 'survey shown', survey: s, person: 2, at: '2026-11-10 10:02:00' },
      { event: 'survey shown', survey: s, person: 3, at: '2026-11-10 10:03:00' },
      { event: 'survey shown', survey: s, person: 4, at: '2026-11-10 10:04:00' },
      { event: 'survey shown', survey: s, person: 5, at: '2026-11-10 10:05:00' },
      // Dismissed: persons 2 and 4; person 3's partial dismissal never counts.
      { event: 'survey dismissed', survey: s, person: 2, at: '2026-11-10 10:30:00' },
      {
        event: 'survey dismissed',
        survey: s,
        person: 3,
        at: '2026-11-10 10:31:00',
        props: { $survey_partially_completed: true },
      },
      { event: 'survey dismissed', survey: s, person: 4, at: '2026-11-10 12:30:00' },
      // Sent: person 1's two partial events are one submission (the later one is kept), person 2 answers with
      // the legacy index keys, person 4 leaves the open question empty.
      {
        event: 'survey sent',
        survey: s,
        person: 1,
        at: '2026-11-10 11:00:00',
        props: { $survey_submission_id: 'a', $survey_completed: false, '$survey_response_q-rate': 3 },
      },
      {
        event: 'survey sent',
        survey: s,
        person: 1,
        at: '2026-11-10 11:05:00.250000',
        props: {
          $survey_submission_id: 'a',
          $survey_completed: true,
          '$survey_response_q-rate': 4,
          '$survey_response_q-multi': ['Price', 'Speed'],
          '$survey_response_q-open': 'Great speed',
        },
      },
      {
        event: 'survey sent',
        survey: s,
        person: 2,
        at: '2026-11-10 12:00:00',
        uuid: p2Sent,
        props: { $survey_response: '5', $survey_response_1: ['Price'] },
      },
      {
        event: 'survey sent',
        survey: s,
        person: 4,
        at: '2026-11-10 13:00:00',
        props: {
          $survey_submission_id: 'b',
          '$survey_response_q-rate': 4,
          '$survey_response_q-multi': ['Speed'],
          '$survey_response_q-open': '',
        },
      },
      // Another survey's event, seen by person 6.
      { event: 'survey shown', survey: other.id, person: 6, at: '2026-11-10 10:00:00' },
    ])
  })

  it('counts shown, dismissed and sent with the submissions deduplicated', async () => {
    const res = await request('GET', `${survey.id}/stats/?include_per_question_stats=true`)
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    // Dismissed people who also answered (2 and 4) leave the dismissed count: 2 − 2 = 0.
    // Only seen: people 5 − 0 − 3 = 2; events 6 − 2 − 3 = 1.
    expect(body.stats).toEqual({
      'survey shown': {
        total_count: 6,
        unique_persons: 5,
        first_seen: '2026-11-10T10:00:00Z',
        last_seen: '2026-11-10T10:05:00Z',
        unique_persons_only_seen: 2,
        total_count_only_seen: 1,
      },
      'survey dismissed': {
        total_count: 2,
        unique_persons: 0,
        first_seen: '2026-11-10T10:30:00Z',
        last_seen: '2026-11-10T12:30:00Z',
        unique_persons_only_seen: 0,
        total_count_only_seen: 0,
      },
      'survey sent': {
        total_count: 3,
        unique_persons: 3,
        first_seen: '2026-11-10T11:05:00.250000Z',
        last_seen: '2026-11-10T13:00:00Z',
        unique_persons_only_seen: 0,
        total_count_only_seen: 0,
      },
    })
    // 3/6 = 50 %, 2/6 = 33.33 %, 3/5 = 60 %, 0/5.
    expect(body.rates).toEqual({
      response_rate: 50,
      dismissal_rate: 33.33,
      unique_users_response_rate: 60,
      unique_users_dismissal_rate: 0,
    })
    expect(body.survey_id).toBe(survey.id)
    expect(body.start_date).toBe('2026-11-01T00:00:00Z')
    expect(body.end_date).toBeNull()
    // Ratings 4, "5", 4: average 13/3 = 4.33; choices Price 2, Speed 2; one non-empty open answer.
    expect(body.per_question_stats).toEqual([
      {
        question_id: 'q-rate',
        question_index: 0,
        question_text: 'Rate us',
        question_type: 'rating',
        response_count: 3,
        distribution: { '4': 2, '5': 1 },
        average: 4.33,
      },
      {
        question_id: 'q-multi',
        question_index: 1,
        question_text: 'Why?',
        question_type: 'multiple_choice',
        response_count: 3,
        distribution: { Price: 2, Speed: 2 },
      },
      {
        question_id: 'q-open',
        question_index: 2,
        question_text: 'Anything else?',
        question_type: 'open',
        response_count: 1,
        distribution: {},
      },
    ])
  })

  it('bounds the window inclusively with date_to', async () => {
    const body = (await request('GET', `${survey.id}/stats/?date_to=2026-11-10T12:00:00Z`)).json()
    // Until 12:00:00 inclusive: 6 shown; dismissed only person 2; sent persons 1 and 2 (12:00:00 itself counts).
    expect(body.stats['survey dismissed']).toMatchObject({ total_count: 1, unique_persons: 0 })
    expect(body.stats['survey sent']).toMatchObject({ total_count: 2, unique_persons: 2 })
    expect(body.stats['survey shown']).toMatchObject({ unique_persons_only_seen: 3, total_count_only_seen: 3 })
    // 2/6 = 33.33, 1/6 = 16.666… → 16.67, 2/5 = 40.
    expect(body.rates).toEqual({
      response_rate: 33.33,
      dismissal_rate: 16.67,
      unique_users_response_rate: 40,
      unique_users_dismissal_rate: 0,
    })
  })

  it('refuses bad dates and inverted ranges', async () => {
    const bad = await request('GET', `${survey.id}/stats/?date_from=last-week`)
    expect(bad.statusCode).toBe(400)
    expect(bad.json().detail).toBe(
      'Invalid date format. Please use ISO 8601 format with timezone info (e.g. 2024-01-01T00:00:00Z or 2024-01-01T00:00:00+00:00)',
    )
    const inverted = await request('GET', 'stats/?date_from=2026-11-10T00:00:00Z&date_to=2026-11-01T00:00:00Z')
    expect(inverted.json().detail).toBe('date_from must be before date_to')
  })

  it('aggregates over the project’s surveys', async () => {
    const body = (await request('GET', 'stats/')).json()
    // Adds the other survey's one showing to person 6: 7 shown by 6 people; 3/7 = 42.857… → 42.86,
    // 2/7 = 28.571… → 28.57, 3/6 = 50.
    expect(body.stats['survey shown']).toMatchObject({
      total_count: 7,
      unique_persons: 6,
      unique_persons_only_seen: 3,
      total_count_only_seen: 2,
    })
    expect(body.rates).toEqual({
      response_rate: 42.86,
      dismissal_rate: 28.57,
      unique_users_response_rate: 50,
      unique_users_dismissal_rate: 0,
    })
    const empty = await createTenant(t)
    const none = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${empty.project.id}/surveys/stats/`,
      headers: empty.auth,
    })
    expect(none.json()).toEqual({
      stats: {},
      rates: { response_rate: 0, dismissal_rate: 0, unique_users_response_rate: 0, unique_users_dismissal_rate: 0 },
    })
  })

  it('counts responses per survey', async () => {
    expect((await request('GET', 'responses_count/')).json()).toEqual({ [survey.id]: 3 })
    expect((await request('GET', `responses_count/?survey_ids=${other.id}`)).json()).toEqual({})
  })
})

describe('responses list', () => {
  it('lists one row per submission, newest first, with the latest answers and score filters', async () => {
    const res = await request('GET', `${survey.id}/responses/`)
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body).toMatchObject({ has_more: false, limit: 100, offset: 0 })
    const answersOf = (row: Json) => row.answers.map((a: Json) => a.answer)
    // Person 4 (13:00), person 2 (12:00, legacy keys), person 1's submission "a" (its last event at 11:05).
    expect(body.results.map((r: Json) => [r.distinct_id, r.submitted_at])).toEqual([
      ['d4', '2026-11-10T13:00:00Z'],
      ['d2', '2026-11-10T12:00:00Z'],
      ['d1', '2026-11-10T11:05:00.250000Z'],
    ])
    expect(body.results.map(answersOf)).toEqual([
      [4, ['Speed'], null, null],
      ['5', ['Price'], null, null],
      [4, ['Price', 'Speed'], 'Great speed', null],
    ])
    expect(body.results[1].uuid).toBe(p2Sent)
    expect(body.results[0].answers[0]).toEqual({
      question_id: 'q-rate',
      question_index: 0,
      question_text: 'Rate us',
      question_type: 'rating',
      answer: 4,
    })
    const high = (await request('GET', `${survey.id}/responses/?question_id=q-rate&score_gte=5`)).json()
    expect(high.results.map((r: Json) => r.distinct_id)).toEqual(['d2'])
    const low = (await request('GET', `${survey.id}/responses/?question_id=q-rate&score_lte=4`)).json()
    expect(low.results.map((r: Json) => r.distinct_id)).toEqual(['d4', 'd1'])
    const page = (await request('GET', `${survey.id}/responses/?limit=2`)).json()
    expect(page.has_more).toBe(true)
    expect(page.results).toHaveLength(2)
    const bad = await request('GET', `${survey.id}/responses/?score_gte=3`)
    expect(bad.statusCode).toBe(400)
    expect(bad.json().detail).toBe('score_lte and score_gte require question_id to be specified')
    const surveyOnly = await createKey(t, ['survey:read'])
    const refused = await request('GET', `${survey.id}/responses/`, undefined, surveyOnly)
    expect(refused.statusCode).toBe(403)
    expect(refused.json().detail).toBe("API key missing required scope 'query:read'")
  })
})

describe('archived responses', () => {
  it('archives and unarchives a response, answering the bare number 200', async () => {
    const bad = await request('POST', `${survey.id}/responses/not-a-uuid/archive/`)
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toEqual({ detail: 'Invalid UUID format' })
    const unknown = await request('POST', `${crypto.randomUUID()}/responses/${p2Sent}/archive/`)
    expect(unknown.statusCode).toBe(404)

    const archived = await request('POST', `${survey.id}/responses/${p2Sent}/archive/`)
    expect(archived.statusCode).toBe(200)
    expect(archived.body).toBe('200')
    expect((await request('GET', `${survey.id}/archived-response-uuids/`)).json()).toEqual([p2Sent])

    // Without person 2's answer: sent 2 by 2 people; only person 4 both dismissed and sent, so dismissed 2 − 1.
    const body = (await request('GET', `${survey.id}/stats/?exclude_archived=true`)).json()
    expect(body.stats['survey sent']).toMatchObject({ total_count: 2, unique_persons: 2 })
    expect(body.stats['survey dismissed']).toMatchObject({ total_count: 2, unique_persons: 1 })
    expect(body.stats['survey shown']).toMatchObject({ unique_persons_only_seen: 2, total_count_only_seen: 2 })
    expect(body.rates).toEqual({
      response_rate: 33.33,
      dismissal_rate: 33.33,
      unique_users_response_rate: 40,
      unique_users_dismissal_rate: 20,
    })
    // Included by default.
    expect((await request('GET', `${survey.id}/stats/`)).json().stats['survey sent'].total_count).toBe(3)
    expect((await request('GET', 'responses_count/?exclude_archived=true')).json()).toEqual({ [survey.id]: 2 })

    expect((await request('POST', `${survey.id}/responses/${p2Sent}/unarchive/`)).body).toBe('200')
    expect((await request('POST', `${survey.id}/responses/${p2Sent}/unarchive/`)).statusCode).toBe(200)
    expect((await request('GET', `${survey.id}/archived-response-uuids/`)).json()).toEqual([])
    const activity = (await request('GET', `${survey.id}/activity/`)).json()
    expect(activity.results.slice(0, 2).map((e: Json) => [e.activity, e.detail.name])).toEqual([
      ['response_unarchived', `Response ${p2Sent}`],
      ['response_archived', `Response ${p2Sent}`],
    ])
  })
})

describe('summaries', () => {
  it('summarizes open answers offline, the same way every time, and caches the result', async () => {
    const s = await create({
      name: 'Feedback',
      start_date: '2026-11-01T00:00:00Z',
      questions: [{ id: 'q-fb', type: 'open', question: 'What should we improve?' }],
    })
    const answers = [
      'The pricing is too expensive for small teams',
      'Pricing is confusing and expensive',
      'I love the dashboards, they are great',
      'Dashboards are slow to load',
      'Great product, love it',
    ]
    await insert(
      answers.map((text, i) => ({
        event: 'survey sent',
        survey: s.id,
        person: i + 1,
        at: `2026-11-11 10:0${i}:00`,
        props: { '$survey_response_q-fb': text },
      })),
    )
    const first = await request('POST', `${s.id}/summarize_responses/?question_id=q-fb`, {})
    expect(first.statusCode, first.body).toBe(200)
    const summary = first.json()
    expect(summary.response_count).toBe(5)
    expect(summary.cached).toBe(false)
    expect(summary.generated_at).toBe('2026-11-24T08:00:00Z')
    // Words in at least two answers, most frequent first, ties alphabetical.
    expect(summary.content).toContain('**dashboards** (2 mentions)')
    expect(summary.content).toContain('**pricing** (2 mentions)')
    expect(summary.content).toContain('**expensive** (2 mentions)')
    const again = (await request('POST', `${s.id}/summarize_responses/?question_id=q-fb`, {})).json()
    expect(again).toEqual({ ...summary, cached: true })
    const fresh = (
      await request('POST', `${s.id}/summarize_responses/?question_index=0`, { force_refresh: true })
    ).json()
    expect(fresh.content).toBe(summary.content)

    const headline = (await request('POST', `${s.id}/summary_headline/`, {})).json()
    expect(headline.responses_sampled).toBe(5)
    expect(headline.has_more).toBe(false)
    expect(headline.headline.split(' ').length).toBeLessThanOrEqual(20)
    expect(headline.headline).toMatch(/^5 responses: .*feedback about dashboards\.$/)
    // Without a question, summarize_responses answers with the headline.
    expect((await request('POST', `${s.id}/summarize_responses/`, {})).json()).toEqual(headline)

    const empty = await create({ name: 'Empty feedback', questions: [{ type: 'open', question: 'Hm?' }] })
    expect((await request('POST', `${empty.id}/summary_headline/`, {})).json()).toEqual({
      headline: 'No responses yet',
      responses_sampled: 0,
      has_more: false,
    })
    const none = (await request('POST', `${empty.id}/summarize_responses/?question_index=0`, {})).json()
    expect(none).toMatchObject({ content: 'No responses to analyze.', response_count: 0, cached: false })
  })
})

/** A second module over the same stores: another process running the same periodic round. */
function otherProcess() {
  const { stores, services, events, meta } = t.burrow
  return createSurveyModule({
    db: meta.db,
    events,
    flags: services.flags,
    flagRows: stores.flags,
    flagCache: services.flagCache,
    projects: stores.projects,
    organizations: stores.organizations,
    users: stores.users,
    actions: stores.actions,
    insights: stores.insights,
    activity: stores.activity,
    siteUrl: 'http://localhost',
    clock: () => NOW,
  })
}

describe('responses limit', () => {
  it('stops a running survey once it has its responses, once across processes', async () => {
    const limited = await create({ name: 'Limited', start_date: '2026-11-01T00:00:00Z', responses_limit: 2 })
    await insert([
      { event: 'survey sent', survey: limited.id, person: 1, at: '2026-11-12 10:00:00' },
      { event: 'survey sent', survey: limited.id, person: 2, at: '2026-11-12 10:01:00' },
    ])
    const second = otherProcess()
    const [a, b] = await Promise.all([second.enforceResponseLimits(), second.enforceResponseLimits()])
    expect([...a, ...b]).toEqual([limited.id])
    const read = (await request('GET', `${limited.id}/`)).json()
    expect(read.end_date).toBe('2026-11-24T08:00:00Z')
    expect(read.internal_targeting_flag.active).toBe(false)
    const activity = (await request('GET', `${limited.id}/activity/`)).json()
    expect(activity.results[0]).toMatchObject({ activity: 'stopped', user: { first_name: 'System', is_system: true } })
  })
})

describe('recurring surveys', () => {
  it('moves to the current iteration, asking the internal flag about it, and stops after the last one', async () => {
    // Starts 10, 17 and 24 November: on the 24th at 08:00 the third iteration has begun.
    const recurring = await create({
      name: 'Recurring',
      start_date: '2026-11-10T00:00:00Z',
      iteration_count: 3,
      iteration_frequency_days: 7,
    })
    expect(recurring.current_iteration).toBe(1)
    // Starts 1 and 8 October, every 7 days: the last iteration ended on the 15th.
    const elapsed = await create({
      name: 'Elapsed',
      start_date: '2026-10-01T00:00:00Z',
      iteration_count: 2,
      iteration_frequency_days: 7,
    })
    const round = await otherProcess().service.advanceIterations()
    expect(round.advanced).toContain(recurring.id)
    expect(round.stopped).toContain(elapsed.id)
    const read = (await request('GET', `${recurring.id}/`)).json()
    expect(read.current_iteration).toBe(3)
    expect(read.current_iteration_start_date).toBe('2026-11-24T00:00:00Z')
    expect(read.internal_targeting_flag.filters.groups[0].properties[0].key).toBe(`$survey_dismissed/${recurring.id}/3`)
    expect((await request('GET', `${elapsed.id}/`)).json().end_date).toBe('2026-11-24T08:00:00Z')
    const again = await otherProcess().service.advanceIterations()
    expect(again.advanced).not.toContain(recurring.id)
  })
})

describe('duplicate_to_projects', () => {
  async function projectInDemoOrg(name: string): Promise<number> {
    const res = await t.burrow.app.inject({ method: 'POST', url: '/api/projects/', headers: t.auth, payload: { name } })
    expect(res.statusCode, res.body).toBe(201)
    return res.json().id
  }

  it('copies into every target project, or into none when one copy fails', async () => {
    const source = await create({
      name: 'To copy',
      description: 'd',
      start_date: '2026-11-01T00:00:00Z',
      questions: [{ id: 'keep-out', type: 'open', question: 'Q?' }],
      conditions: { url: 'example.com', events: { values: [{ name: 'e' }] } },
      responses_limit: 10,
      enable_partial_responses: true,
    })
    const a = await projectInDemoOrg('Copy A')
    const b = await projectInDemoOrg('Copy B')
    const copyName = 'To copy (duplicated at 2026-11-24 08:00:00)'
    // Project B already holds a survey with the copy's name: the copy there fails, so A gets none either.
    const blocker = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${b}/surveys/`,
      headers: t.auth,
      payload: { name: copyName, type: 'popover' },
    })
    expect(blocker.statusCode).toBe(201)
    const failed = await request('POST', `${source.id}/duplicate_to_projects/`, { target_team_ids: [a, b] })
    expect(failed.statusCode).toBe(400)
    expect(failed.json().detail).toBe('There is already a survey with this name.')
    const inA = await t.burrow.app.inject({ method: 'GET', url: `/api/projects/${a}/surveys/`, headers: t.auth })
    expect(inA.json().count).toBe(0)

    const c = await projectInDemoOrg('Copy C')
    const ok = await request('POST', `${source.id}/duplicate_to_projects/`, { target_team_ids: [a, c] })
    expect(ok.statusCode, ok.body).toBe(201)
    const result = ok.json()
    expect(result.count).toBe(2)
    expect(result.created_surveys.map((s: Json) => [s.team_id, s.name])).toEqual([
      [a, copyName],
      [c, copyName],
    ])
    const copy = (
      await t.burrow.app.inject({
        method: 'GET',
        url: `/api/projects/${a}/surveys/${result.created_surveys[0].survey_id}/`,
        headers: t.auth,
      })
    ).json()
    expect(copy).toMatchObject({
      description: 'd',
      start_date: null,
      archived: false,
      responses_limit: 10,
      enable_partial_responses: true,
      conditions: { url: 'example.com' },
      internal_targeting_flag: null,
    })
    expect(copy.questions[0].id).not.toBe('keep-out')
    expect(copy.questions[0].id).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('refuses empty lists and projects outside the organization or the key', async () => {
    const source = await create({ name: 'Copy refusals' })
    const empty = await request('POST', `${source.id}/duplicate_to_projects/`, { target_team_ids: [] })
    expect(empty.json().detail).toBe('target_team_ids must be a non-empty list of team IDs')
    const foreign = await createTenant(t)
    const outside = await request('POST', `${source.id}/duplicate_to_projects/`, {
      target_team_ids: [foreign.project.id],
    })
    expect(outside.json().detail).toBe("One or more target teams not found or you don't have access to them")
    const twice = await request('POST', `${source.id}/duplicate_to_projects/`, {
      target_team_ids: [t.creds.project_id, t.creds.project_id],
    })
    expect(twice.json().detail).toBe("One or more target teams not found or you don't have access to them")
    const scoped = await createKey(t, ['survey:write'], [t.creds.project_id])
    const d = await projectInDemoOrg('Copy D')
    const beyond = await request('POST', `${source.id}/duplicate_to_projects/`, { target_team_ids: [d] }, scoped)
    expect(beyond.json().detail).toBe("One or more target teams not found or you don't have access to them")
  })
})
