import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFlag, postFlags, valuesOf } from '../flags/fixtures.js'
import { createKey, createTenant, startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let base: string

beforeAll(async () => {
  t = await startTestApp()
  base = `/api/projects/${t.creds.project_id}/surveys`
}, 60_000)
afterAll(() => t?.close())

type Json = Record<string, any>
const post = (payload: Json, headers: Record<string, string> = t.auth) =>
  t.burrow.app.inject({ method: 'POST', url: `${base}/`, headers, payload })
const patch = (id: string, payload: Json, headers: Record<string, string> = t.auth) =>
  t.burrow.app.inject({ method: 'PATCH', url: `${base}/${id}/`, headers, payload })
const get = (path: string, headers: Record<string, string> = t.auth) =>
  t.burrow.app.inject({ method: 'GET', url: `${base}/${path}`, headers })
const question = (text = 'What do you think?', extra: Json = {}) => ({ type: 'open', question: text, ...extra })

let counter = 0
async function create(extra: Json = {}): Promise<Json> {
  counter++
  const res = await post({ name: `Survey ${counter}`, type: 'popover', questions: [question()], ...extra })
  expect(res.statusCode, res.body).toBe(201)
  return res.json()
}

async function flagRow(id: number) {
  return t.burrow.stores.flags.get(t.creds.project_id, id)
}

describe('create and read', () => {
  it('creates a survey with question ids, an internal targeting flag, and reads it back in both shapes', async () => {
    const res = await post({
      name: 'NPS',
      description: 'How likely…',
      type: 'popover',
      questions: [
        { type: 'rating', question: 'How likely are you to recommend us?', scale: 10, display: 'number' },
        { type: 'single_choice', question: 'Why?', choices: ['Price', 'Speed'], id: 'kept-id' },
      ],
      appearance: { backgroundColor: '#fff' },
    })
    expect(res.statusCode, res.body).toBe(201)
    const created = res.json()
    expect(created.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(created.questions[0].id).toMatch(/^[0-9a-f-]{36}$/)
    expect(created.questions[1].id).toBe('kept-id')
    expect(created.schedule).toBe('once')
    expect(created.start_date).toBeNull()
    expect(created.archived).toBe(false)
    expect(created.feature_flag_keys).toBeUndefined()
    expect(created.created_by.email).toBe(t.creds.email)
    // A draft: the internal flag exists and is off.
    const internal = created.internal_targeting_flag
    expect(internal.key).toMatch(/^survey-targeting-[0-9a-f]{10}-custom$/)
    expect(internal.active).toBe(false)
    expect(internal.filters.groups[0].properties.map((p: Json) => p.key)).toEqual([
      `$survey_dismissed/${created.id}`,
      `$survey_responded/${created.id}`,
    ])

    const read = await get(`${created.id}/`)
    expect(read.statusCode).toBe(200)
    const record = read.json()
    expect(record.feature_flag_keys).toEqual([
      { key: 'linked_flag_key', value: null },
      { key: 'targeting_flag_key', value: null },
      { key: 'internal_targeting_flag_key', value: internal.key },
      { key: 'internal_response_sampling_flag_key', value: null },
    ])
    expect(record.user_access_level).toBe('editor')
    expect(record.description).toBe('How likely…')
  })

  it('answers 404 for unknown, malformed and foreign ids', async () => {
    expect((await get('0b0c1f2e-0000-4000-8000-000000000000/')).statusCode).toBe(404)
    expect((await get('not-a-uuid/')).statusCode).toBe(404)
    const other = await createTenant(t)
    const foreign = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${other.project.id}/surveys/`,
      headers: other.auth,
      payload: { name: 'Theirs', type: 'popover', questions: [question()] },
    })
    expect(foreign.statusCode).toBe(201)
    const res = await get(`${foreign.json().id}/`)
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({ type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null })
    // Their project is not ours to list either.
    const theirs = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${other.project.id}/surveys/`,
      headers: t.auth,
    })
    expect(theirs.statusCode).toBe(404)
  })

  it('lists newest first with search, archived, type and ids filters', async () => {
    const a = await create({ name: 'Filter alpha', description: 'about pricing' })
    const b = await create({ name: 'Filter beta', type: 'widget', archived: true })
    const c = await create({ name: 'Filter gamma', type: 'api' })
    const names = async (query: string) =>
      ((await get(`?${query}`)).json().results as Json[]).map((s) => s.name).filter((n) => n.startsWith('Filter'))
    expect(await names('search=filter')).toEqual(['Filter gamma', 'Filter beta', 'Filter alpha'])
    expect(await names('search=PRICING')).toEqual(['Filter alpha'])
    expect(await names('archived=true')).toEqual(['Filter beta'])
    expect(await names('type=api')).toEqual(['Filter gamma'])
    expect(await names(`ids=${a.id},${c.id}`)).toEqual(['Filter gamma', 'Filter alpha'])
    const page = (await get('?search=filter&limit=2')).json()
    expect(page.count).toBe(3)
    expect(page.results).toHaveLength(2)
    expect(page.next).toContain('offset=2')
    expect(b.archived).toBe(true)
  })
})

describe('validation', () => {
  const cases: [string, Json, string, string | null, string?][] = [
    ['missing name', { name: undefined }, 'This field is required.', 'name', 'required'],
    ['missing type', { type: undefined }, 'This field is required.', 'type', 'required'],
    ['bad schedule', { schedule: 'weekly' }, 'Schedule must be one of: once, recurring, always', 'schedule'],
    ['questions not a list', { questions: [3] }, 'Questions must be a list of objects', 'questions'],
    ['question without text', { questions: [{ type: 'open' }] }, 'Question text is required', 'questions'],
    [
      'empty choice',
      { questions: [{ type: 'single_choice', question: 'q', choices: ['', 'x'] }] },
      'Question choices cannot be empty',
      'questions',
    ],
    [
      'ftp link',
      { questions: [{ type: 'link', question: 'q', link: 'ftp://example.com' }] },
      'Link must be a URL with one of these schemes: [https, mailto]',
      'questions',
    ],
    [
      'bad mailto',
      { questions: [{ type: 'link', question: 'q', link: 'mailto:nobody' }] },
      'Invalid mailto link. Please enter a valid mailto link (e.g., mailto:example@domain.com).',
      'questions',
    ],
    [
      'https without host',
      { questions: [{ type: 'link', question: 'q', link: 'https://' }] },
      'Invalid HTTPS URL. Please enter a valid HTTPS link.',
      'questions',
    ],
    [
      'min above max',
      {
        questions: [
          {
            type: 'open',
            question: 'q',
            validation: [
              { type: 'min_length', value: 10 },
              { type: 'max_length', value: 5 },
            ],
          },
        ],
      },
      'Minimum length cannot be greater than maximum length',
      'questions',
    ],
    [
      'zero length rule',
      { questions: [{ type: 'open', question: 'q', validation: [{ type: 'min_length', value: 0 }] }] },
      'Validation rule value for min_length must be a positive integer',
      'questions',
    ],
    [
      'translation with a language name',
      { questions: [{ type: 'open', question: 'q', translations: { english: { question: 'q' } } }] },
      "Question 1 translation: 'english' is not a valid language code. Use BCP-47 codes like 'en', 'es', or 'es-MX' (not language names like 'english').",
      'questions',
    ],
    [
      'translation equal to the base language',
      { translations: { en: { name: 'x' } } },
      "Survey translation: 'en' matches the survey's base language ('en'). The original text already covers this language — translate to a different language.",
      'translations',
    ],
    [
      'translated choices of another length',
      {
        questions: [
          { type: 'single_choice', question: 'q', choices: ['a', 'b'], translations: { fr: { choices: ['a'] } } },
        ],
      },
      "Question 1: Translation 'fr' has 1 choices but question has 2 choices. Array lengths must match to avoid partial translations.",
      'questions',
    ],
    [
      'negative popup delay',
      { appearance: { surveyPopupDelaySeconds: -1 } },
      'Survey popup delay seconds must be a positive integer',
      'appearance',
    ],
    [
      'variant without a linked flag',
      { conditions: { linkedFlagVariant: 'test' } },
      'linkedFlagVariant can only be used when a linked_flag_id is specified',
      null,
    ],
    ['unknown linked flag', { linked_flag_id: 999999 }, 'Feature Flag with this ID does not exist', null],
    [
      'targeting everyone',
      { targeting_flag_filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
      'Invalid operation: User targeting rolls out to everyone. If you want to roll out to everyone, delete this targeting',
      null,
    ],
    [
      'shuffle with branching',
      {
        appearance: { shuffleQuestions: true },
        questions: [{ type: 'open', question: 'q', branching: { type: 'end' } }],
      },
      'Question shuffling and question branching cannot be used together. Please disable one of these features.',
      null,
    ],
    [
      'external survey with URL conditions',
      { type: 'external_survey', conditions: { url: 'x', events: { values: [{ name: 'e' }] } } },
      'The following condition fields are not allowed for external surveys: url, events',
      'conditions',
    ],
    [
      'external survey with a popup delay',
      { type: 'external_survey', appearance: { surveyPopupDelaySeconds: 5 } },
      'surveyPopupDelaySeconds is not allowed for external surveys',
      'appearance',
    ],
    [
      'sampling interval of zero',
      { response_sampling_interval: 0 },
      'Response sampling interval must be greater than 0.',
      'response_sampling_interval',
    ],
    [
      'sampling limit without a start date',
      { response_sampling_limit: 10, response_sampling_interval: 2 },
      'Response sampling start date should be set if response_sampling_start_date is not zero.',
      'response_sampling_start_date',
    ],
    [
      'bad start date',
      { start_date: 'yesterday' },
      'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].',
      'start_date',
    ],
    ['bad type', { type: 'modal' }, '', 'type', 'invalid_choice'],
  ]
  for (const [name, body, detail, attr, code] of cases) {
    it(`refuses ${name}`, async () => {
      counter++
      const res = await post({ name: `Invalid ${counter}`, type: 'popover', ...body })
      expect(res.statusCode, res.body).toBe(400)
      const error = res.json()
      expect(error.type).toBe('validation_error')
      if (detail) expect(error.detail).toBe(detail)
      expect(error.attr).toBe(attr)
      expect(error.code).toBe(code ?? 'invalid_input')
    })
  }

  it('refuses white labelling on a free plan', async () => {
    const free = await createTenant(t, { plan: 'free' })
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${free.project.id}/surveys/`,
      headers: free.auth,
      payload: { name: 'White', type: 'popover', appearance: { whiteLabel: true } },
    })
    expect(res.json()).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'You need to upgrade to PostHog Enterprise to use white labelling',
      attr: 'appearance',
    })
  })

  it('links actions from conditions, shows them on read, and refuses actions with property filters', async () => {
    const action = async (name: string, steps: Json[]) => {
      const res = await t.burrow.app.inject({
        method: 'POST',
        url: `/api/projects/${t.creds.project_id}/actions/`,
        headers: t.auth,
        payload: { name, steps },
      })
      expect(res.statusCode, res.body).toBe(201)
      return res.json()
    }
    const plain = await action('Clicked buy', [{ event: 'buy' }])
    const filtered = await action('Big buy', [
      { event: 'buy', properties: [{ key: 'amount', value: 100, operator: 'gt', type: 'event' }] },
    ])
    const survey = await create({ conditions: { actions: { values: [{ id: plain.id, name: 'old name' }] } } })
    expect(survey.conditions.actions.values).toEqual([{ id: plain.id, name: 'Clicked buy', steps: plain.steps }])
    const publicSurvey = (
      await t.burrow.app.inject({ method: 'GET', url: `/api/surveys/?token=${t.creds.project_api_key}` })
    )
      .json()
      .surveys.find((s: Json) => s.id === survey.id)
    expect(publicSurvey.conditions.actions.values[0].name).toBe('Clicked buy')
    const refused = await post({
      name: 'With a filtered action',
      type: 'popover',
      conditions: { actions: { values: [{ id: filtered.id }] } },
    })
    expect(refused.json()).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail: 'Survey cannot be activated by an Action with property filters defined on it.',
      attr: 'conditions',
    })
  })

  it('refuses a taken name, on create and on rename', async () => {
    const first = await create({ name: 'Unique name' })
    const again = await post({ name: 'Unique name', type: 'popover' })
    expect(again.statusCode).toBe(400)
    expect(again.json()).toEqual({
      type: 'validation_error',
      code: 'unique',
      detail: 'There is already a survey with this name.',
      attr: null,
    })
    const other = await create({ name: 'Another unique name' })
    const rename = await patch(other.id, { name: 'Unique name' })
    expect(rename.json()).toMatchObject({ code: 'unique', detail: 'There is already another survey with this name.' })
    expect((await patch(first.id, { name: 'Unique name' })).statusCode).toBe(200)
  })

  it('accepts one choice and keeps valid links, mailto links and translations', async () => {
    const res = await post({
      name: 'Accepted shapes',
      type: 'popover',
      base_language: 'EN',
      questions: [
        { type: 'single_choice', question: 'q', choices: ['only'] },
        { type: 'link', question: 'l', link: 'https://example.com/x' },
        { type: 'link', question: 'm', link: 'mailto:team@example.com' },
        { type: 'open', question: 'o', translations: { pt_BR: { question: 'oi' } } },
      ],
      translations: { fr: { name: 'Bonjour' } },
    })
    expect(res.statusCode, res.body).toBe(201)
    const body = res.json()
    expect(body.base_language).toBe('en')
    expect(body.questions[3].translations).toEqual({ 'pt-br': { question: 'oi' } })
    expect(body.translations).toEqual({ fr: { name: 'Bonjour' } })
  })

  it('cleans HTML in question texts to the allow-list', async () => {
    const body = (
      await create({ questions: [question('<b>Bold</b><script>alert(1)</script><img src=x onerror=alert(1)>')] })
    ).questions[0].question
    expect(body).toBe('<b>Bold</b><img src="x" />')
  })
})

describe('lifecycle and its flags', () => {
  it('follows draft → running → stopped → archived with every flag active only while running', async () => {
    const survey = await create({
      targeting_flag_filters: {
        groups: [{ properties: [{ key: 'email', value: 'a@b.c', type: 'person', operator: 'exact' }] }],
      },
    })
    const targetingId = survey.targeting_flag.id as number
    const internalId = survey.internal_targeting_flag.id as number
    expect(survey.targeting_flag.key).toMatch(/^survey-targeting-[0-9a-f]{10}$/)
    const states = async () => [(await flagRow(targetingId))!.active, (await flagRow(internalId))!.active]
    expect(await states()).toEqual([0, 0])

    expect((await patch(survey.id, { start_date: '2026-11-01T00:00:00Z' })).statusCode).toBe(200)
    expect(await states()).toEqual([1, 1])
    // /flags evaluates the internal flag: on for someone who has not answered, off once they have.
    const flags = valuesOf((await postFlags(t, { distinct_id: 'fresh', person_properties: { email: 'a@b.c' } })).json())
    expect(flags[survey.internal_targeting_flag.key]).toBe(true)
    expect(flags[survey.targeting_flag.key]).toBe(true)
    const answered = valuesOf(
      (
        await postFlags(t, {
          distinct_id: 'answered',
          person_properties: { [`$survey_responded/${survey.id}`]: true },
        })
      ).json(),
    )
    expect(answered[survey.internal_targeting_flag.key]).toBe(false)

    expect((await patch(survey.id, { end_date: '2026-11-20T00:00:00Z' })).statusCode).toBe(200)
    expect(await states()).toEqual([0, 0])
    const reopened = await patch(survey.id, { end_date: null })
    expect(reopened.statusCode, reopened.body).toBe(200)
    expect(await states()).toEqual([1, 1])
    expect((await patch(survey.id, { archived: true })).statusCode).toBe(200)
    expect(await states()).toEqual([0, 0])
  })

  it('merges new targeting filters into the flag, removes it on request, and attaches an existing one', async () => {
    const survey = await create({
      targeting_flag_filters: {
        groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }], rollout_percentage: 50 }],
        payloads: {},
      },
    })
    const id = survey.targeting_flag.id as number
    const updated = await patch(survey.id, {
      targeting_flag_filters: { groups: [{ properties: [{ key: 'plan', value: 'team', type: 'person' }] }] },
    })
    expect(updated.statusCode, updated.body).toBe(200)
    expect(updated.json().targeting_flag.id).toBe(id)
    expect(JSON.parse((await flagRow(id))!.filters).groups[0].properties[0].value).toBe('team')

    const removed = await patch(survey.id, { remove_targeting_flag: true })
    expect(removed.json().targeting_flag).toBeNull()
    expect((await flagRow(id))!.deleted).toBe(1)

    const flag = await createFlag(t, {
      key: `attached-${survey.id.slice(0, 8)}`,
      filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
    })
    const attached = await patch(survey.id, { targeting_flag_id: flag.id })
    expect(attached.json().targeting_flag.key).toBe(flag.key)

    const activity = (await get(`${survey.id}/activity/`)).json()
    const fields = activity.results.flatMap((e: Json) => e.detail.changes.map((c: Json) => `${c.action}:${c.field}`))
    expect(fields).toContain('deleted:targeting_flag')
    expect(fields).toContain('changed:targeting_flag_filters')
    expect(activity.results.at(-1).activity).toBe('created')
    expect(activity.total_count).toBe(4)
  })

  it('launches and stops with the newer actions, refusing an archived survey', async () => {
    const survey = await create()
    const launched = await t.burrow.app.inject({ method: 'POST', url: `${base}/${survey.id}/launch/`, headers: t.auth })
    expect(launched.statusCode, launched.body).toBe(200)
    expect(launched.json().start_date).not.toBeNull()
    expect((await flagRow(survey.internal_targeting_flag.id))!.active).toBe(1)
    const stopped = await t.burrow.app.inject({ method: 'POST', url: `${base}/${survey.id}/stop/`, headers: t.auth })
    expect(stopped.json().end_date).not.toBeNull()
    expect((await flagRow(survey.internal_targeting_flag.id))!.active).toBe(0)
    await patch(survey.id, { archived: true })
    const again = await t.burrow.app.inject({ method: 'POST', url: `${base}/${survey.id}/launch/`, headers: t.auth })
    expect(again.statusCode).toBe(400)
    expect(again.json().detail).toBe('Cannot launch an archived survey. Unarchive it first.')
  })

  it('computes iterations and the response-sampling schedule on save', async () => {
    const survey = await create({
      start_date: '2026-11-24T00:00:00Z',
      iteration_count: 3,
      iteration_frequency_days: 7,
      conditions: { seenSurveyWaitPeriodInDays: 14 },
    })
    expect(survey.iteration_start_dates).toEqual([
      '2026-11-24T00:00:00Z',
      '2026-12-01T00:00:00Z',
      '2026-12-08T00:00:00Z',
    ])
    expect(survey.current_iteration).toBe(1)
    expect(survey.current_iteration_start_date).toBe('2026-11-24T00:00:00Z')
    const groups = survey.internal_targeting_flag.filters.groups
    expect(groups).toHaveLength(2)
    expect(groups[0].properties[0].key).toBe(`$survey_dismissed/${survey.id}/1`)
    expect(groups[1].properties[2]).toEqual({
      key: '$last_seen_survey_date',
      value: '14d',
      operator: 'is_date_before',
      type: 'person',
    })

    const today = new Date().toISOString().slice(0, 10)
    const sampled = await create({
      response_sampling_start_date: `${today}T12:00:00Z`,
      response_sampling_interval_type: 'day',
      response_sampling_interval: 3,
      response_sampling_limit: 10,
    })
    // 10 over 3 days: 3 a day plus one extra on the first day, cumulative; rollout 33.33, 66.67, then 100.
    const schedule = JSON.parse(sampled.response_sampling_daily_limits)
    expect(schedule.map((d: Json) => d.daily_response_limit)).toEqual([4, 7, 10])
    expect(schedule.map((d: Json) => d.rollout_percentage)).toEqual([33.33, 66.67, 100])
    const read = (await get(`${sampled.id}/`)).json()
    expect(read.feature_flag_keys[3].value).toMatch(/^survey-targeting-[0-9a-f]{10}-sampling$/)

    const past = await post({
      name: 'Sampling in the past',
      type: 'popover',
      response_sampling_start_date: '2020-01-01T00:00:00Z',
    })
    expect(past.json().attr).toBe('response_sampling_start_date')
    expect(past.json().detail).toMatch(/^Response sampling start date must be today or a future date in UTC\. Got/)
  })

  it('deletes the survey and its flags', async () => {
    const survey = await create({
      targeting_flag_filters: { groups: [{ properties: [{ key: 'x', value: 'y', type: 'person' }] }] },
    })
    const del = await t.burrow.app.inject({ method: 'DELETE', url: `${base}/${survey.id}/`, headers: t.auth })
    expect(del.statusCode).toBe(204)
    expect((await get(`${survey.id}/`)).statusCode).toBe(404)
    expect((await flagRow(survey.targeting_flag.id))!.deleted).toBe(1)
    expect((await flagRow(survey.internal_targeting_flag.id))!.deleted).toBe(1)
    const all = (await get('activity/')).json()
    expect(all.results[0]).toMatchObject({ activity: 'deleted', scope: 'Survey', item_id: survey.id })
  })
})

describe('scopes', () => {
  it('reads with survey:read, writes with survey:write, targets flags only with feature_flag:write', async () => {
    const reader = await createKey(t, ['survey:read'])
    expect((await get('', reader)).statusCode).toBe(200)
    const refused = await post({ name: 'By a reader', type: 'popover' }, reader)
    expect(refused.statusCode).toBe(403)
    expect(refused.json().detail).toBe("API key missing required scope 'survey:write'")
    expect((await get('activity/', reader)).statusCode).toBe(403)

    const writer = await createKey(t, ['survey:write'])
    expect((await post({ name: 'By a writer', type: 'popover' }, writer)).statusCode).toBe(201)
    const targeted = await post(
      {
        name: 'Writer with targeting',
        type: 'popover',
        targeting_flag_filters: { groups: [{ properties: [{ key: 'a', value: 'b', type: 'person' }] }] },
      },
      writer,
    )
    expect(targeted.statusCode).toBe(403)
    expect(targeted.json().detail).toBe("API key missing required scope 'feature_flag:write'")
    const both = await createKey(t, ['survey:write', 'feature_flag:write', 'activity_log:read'])
    expect(
      (
        await post(
          {
            name: 'Writer with flag scope',
            type: 'popover',
            targeting_flag_filters: { groups: [{ properties: [{ key: 'a', value: 'b', type: 'person' }] }] },
          },
          both,
        )
      ).statusCode,
    ).toBe(201)
    expect((await get('activity/', both)).statusCode).toBe(200)
  })
})

describe('the SDK endpoints', () => {
  const publicList = (query: string) => t.burrow.app.inject({ method: 'GET', url: `/api/surveys/?${query}` })

  it('lists the project’s surveys that are not archived, in the SDK’s shape, by project token', async () => {
    const running = await create({
      name: 'Public running',
      start_date: '2026-11-01T00:00:00Z',
      description: 'internal notes',
      linked_flag_id: (
        await createFlag(t, {
          key: 'public-linked',
          filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
        })
      ).id,
      targeting_flag_filters: { groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }] }] },
      conditions: { url: 'checkout', urlMatchType: 'icontains' },
    })
    const archived = await create({ name: 'Public archived', archived: true })
    const res = await publicList(`token=${t.creds.project_api_key}`)
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBeUndefined()
    const body = res.json()
    expect(body.survey_config).toBeNull()
    const ids = body.surveys.map((s: Json) => s.id)
    expect(ids).toContain(running.id)
    expect(ids).not.toContain(archived.id)
    const shown = body.surveys.find((s: Json) => s.id === running.id)
    expect(Object.keys(shown).sort()).toEqual(
      [
        'id',
        'name',
        'type',
        'linked_flag_key',
        'targeting_flag_key',
        'internal_targeting_flag_key',
        'questions',
        'conditions',
        'appearance',
        'start_date',
        'end_date',
        'current_iteration',
        'current_iteration_start_date',
        'schedule',
        'enable_partial_responses',
      ].sort(),
    )
    expect(shown).toMatchObject({
      linked_flag_key: 'public-linked',
      targeting_flag_key: running.targeting_flag.key,
      internal_targeting_flag_key: running.internal_targeting_flag.key,
      conditions: { url: 'checkout', urlMatchType: 'icontains' },
      start_date: '2026-11-01T00:00:00Z',
    })
  })

  it('answers 401 without a token or with an unknown one, and takes no writes', async () => {
    expect((await publicList('')).json()).toMatchObject({ type: 'authentication_error', code: 'missing_api_key' })
    const unknown = await publicList('token=phc_unknown')
    expect(unknown.statusCode).toBe(401)
    expect(unknown.json().code).toBe('invalid_api_key')
    const long = await publicList(`token=${'x'.repeat(500)}`)
    expect(long.statusCode).toBe(400)
    const write = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/surveys/?token=${t.creds.project_api_key}`,
      payload: { name: 'x' },
    })
    expect(write.statusCode).toBe(405)
  })

  it('tells posthog-js that surveys are on while one runs', async () => {
    const other = await createTenant(t)
    const token = other.project.api_token
    const configOf = async () =>
      (await t.burrow.app.inject({ method: 'GET', url: `/array/${token}/config` })).json().surveys
    expect(await configOf()).toBe(false)
    const created = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${other.project.id}/surveys/`,
      headers: other.auth,
      payload: { name: 'Remote', type: 'popover', questions: [question()], start_date: '2026-11-01T00:00:00Z' },
    })
    expect(created.statusCode).toBe(201)
    expect(await configOf()).toBe(true)
    const flags = await postFlags(t, { distinct_id: 'someone', token }, { url: '/flags/?v=2&config=true' })
    expect(flags.json().config?.surveys ?? flags.json().surveys).toBe(true)
    await t.burrow.app.inject({
      method: 'PATCH',
      url: `/api/projects/${other.project.id}/surveys/${created.json().id}/`,
      headers: other.auth,
      payload: { end_date: '2026-11-02T00:00:00Z' },
    })
    expect(await configOf()).toBe(false)
  })
})
