// The HTTP-observable assertions of PostHog's test_cohort.py that Burrow holds: each test is named after the one it
// mirrors. Expected values are worked out by hand from the requests each test makes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let base: string
let flagsBase: string

beforeAll(async () => {
  t = await startTestApp()
  base = `/api/projects/${t.creds.project_id}/cohorts`
  flagsBase = `/api/projects/${t.creds.project_id}/feature_flags`
}, 180_000)
afterAll(() => t?.close())

const post = (payload: Record<string, unknown>) =>
  t.burrow.app.inject({ method: 'POST', url: `${base}/`, headers: t.auth, payload })
const patch = (id: number, payload: Record<string, unknown>) =>
  t.burrow.app.inject({ method: 'PATCH', url: `${base}/${id}/`, headers: t.auth, payload })
const get = (url: string) => t.burrow.app.inject({ url, headers: t.auth })
const byPlan = (plan: string) => ({
  properties: { type: 'AND', values: [{ key: 'plan', value: plan, type: 'person', operator: 'exact' }] },
})

async function created(payload: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await post(payload)
  expect(res.statusCode, res.body).toBe(201)
  return res.json()
}

async function flagOn(key: string, cohortId: number, extra: Record<string, unknown> = {}) {
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: `${flagsBase}/`,
    headers: t.auth,
    payload: {
      key,
      filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohortId }], rollout_percentage: 100 }] },
      ...extra,
    },
  })
  expect(res.statusCode, res.body).toBe(201)
  return res.json()
}

async function capture(distinctId: string, set: Record<string, unknown>) {
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: '/batch/',
    payload: {
      api_key: t.creds.project_api_key,
      batch: [{ event: 'seen', distinct_id: distinctId, properties: { $set: set } }],
    },
  })
  expect(res.statusCode).toBe(200)
}

describe('deleting cohorts that flags use', () => {
  it('test_cohort_deletion_blocked_by_active_feature_flag', async () => {
    const cohort = await created({ name: 'Flagged', filters: byPlan('pro') })
    await flagOn('flag-a', cohort.id, { name: 'Flag A' })
    await flagOn('flag-b', cohort.id)
    const res = await patch(cohort.id, { deleted: true })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({
      type: 'validation_error',
      code: 'invalid_input',
      detail:
        'This cohort is used in 2 active feature flag(s): Flag A, flag-b. Please remove the cohort from these feature flags before deleting it.',
      attr: null,
    })
    expect((await get(`${base}/${cohort.id}/`)).json().deleted).toBe(false)
  })

  it('test_cohort_deletion_allowed_with_inactive_feature_flag', async () => {
    const cohort = await created({ name: 'Dormant', filters: byPlan('pro') })
    await flagOn('dormant-flag', cohort.id, { active: false })
    const res = await patch(cohort.id, { deleted: true })
    expect(res.statusCode).toBe(200)
    expect(res.json().deleted).toBe(true)
  })

  it('test_cohort_deletion_blocked_when_used_through_a_nested_cohort', async () => {
    const inner = await created({ name: 'Inner', filters: byPlan('pro') })
    const outer = await created({
      name: 'Outer',
      filters: { properties: { type: 'AND', values: [{ key: 'id', type: 'cohort', value: inner.id }] } },
    })
    await flagOn('uses-outer', outer.id)
    const res = await patch(inner.id, { deleted: true })
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toContain('This cohort is used in 1 active feature flag(s): uses-outer.')
  })
})

describe('legacy groups', () => {
  it('test_creating_update_and_calculating: properties as a dict become person filters', async () => {
    await capture('five', { team_id: 5 })
    await capture('six', { team_id: 6 })
    await t.burrow.committer.flushPending()
    const res = await post({ name: 'whatever', groups: [{ properties: { team_id: 5 } }] })
    expect(res.statusCode, res.body).toBe(201)
    const cohort = res.json()
    expect(cohort.created_by.email).toBe(t.creds.email)
    expect(cohort.is_calculating).toBe(true)
    expect(cohort.filters).toEqual({
      properties: {
        type: 'OR',
        values: [{ type: 'AND', values: [{ key: 'team_id', value: 5, type: 'person', operator: 'exact' }] }],
      },
    })
    const members = (await get(`${base}/${cohort.id}/persons/`)).json()
    expect(members.results.map((p: { distinct_ids: string[] }) => p.distinct_ids)).toEqual([['five']])

    const updated = await patch(cohort.id, {
      name: 'whatever2',
      description: 'A great cohort!',
      groups: [{ properties: { team_id: 6 } }],
      created_by: 'something something',
      last_calculation: 'some random date',
      errors_calculating: 100,
      deleted: false,
    })
    expect(updated.statusCode, updated.body).toBe(200)
    expect(updated.json()).toMatchObject({ name: 'whatever2', description: 'A great cohort!', errors_calculating: 0 })
    const now = (await get(`${base}/${cohort.id}/persons/`)).json()
    expect(now.results.map((p: { distinct_ids: string[] }) => p.distinct_ids)).toEqual([['six']])
  })

  it.each([
    ['an empty group (it would match everyone)', [{}]],
    ['no groups at all', []],
    ['a group with fields no version of PostHog sent', [{ props: { a: 1 } }]],
    ['properties that are neither a list nor a dict', [{ properties: 'plan=pro' }]],
    ['an unknown dict operator', [{ properties: { plan__sounds_like: 'pro' } }]],
    ['days without an action or event', [{ days: 7 }]],
  ])('refuses legacy groups that cannot be read: %s', async (_name, groups) => {
    const res = await post({ name: 'legacy', groups })
    expect(res.statusCode, res.body).toBe(400)
    expect(res.json().type).toBe('validation_error')
  })

  it('converts a legacy "did event in the last N days" group into a behavioural filter', async () => {
    const cohort = await created({ name: 'legacy events', groups: [{ event_id: '$pageview', days: 7 }] })
    expect(cohort.filters.properties.values[0].values[0]).toEqual({
      type: 'behavioral',
      key: '$pageview',
      event_type: 'events',
      value: 'performed_event',
      time_value: 7,
      time_interval: 'day',
    })
    expect(cohort.cohort_type).toBe('behavioral')
  })
})

describe('validation', () => {
  it('test_cohort_property_validation_missing_operator', async () => {
    const res = await post({
      name: 'cohort missing operator',
      filters: { properties: { type: 'OR', values: [{ key: 'some_prop', value: 'some_value', type: 'person' }] } },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toBe('Missing required keys for person filter: operator')
  })

  it('test_cohort_property_validation_missing_value', async () => {
    const res = await post({
      name: 'cohort missing value',
      filters: { properties: { type: 'OR', values: [{ key: 'some_prop', type: 'person', operator: 'exact' }] } },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toBe('Missing required keys for person filter: value')
  })

  it('test_cohort_property_validation_nested_groups', async () => {
    const res = await post({
      name: 'cohort nested groups',
      filters: {
        properties: {
          type: 'OR',
          values: [
            {
              type: 'AND',
              values: [
                { key: 'some_prop', value: 'some_value', type: 'person', operator: 'exact' },
                { key: 'another_prop', type: 'person' },
              ],
            },
          ],
        },
      },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toBe('Missing required keys for person filter: value, operator')
  })

  it('test_cohort_property_validation_is_set_operator', async () => {
    const res = await post({
      name: 'cohort is_set',
      filters: { properties: { type: 'OR', values: [{ key: 'some_prop', type: 'person', operator: 'is_set' }] } },
    })
    expect(res.statusCode).toBe(201)
  })

  it('test_cohort_property_validation_cohort_filter', async () => {
    const res = await post({
      name: 'cohort with cohort filter',
      filters: { properties: { type: 'OR', values: [{ key: 'id', type: 'cohort' }] } },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toBe('Missing required keys for cohort filter: value')
  })

  it('test_creating_update_with_non_existent_cohort_in_filter: Invalid Cohort ID in filter', async () => {
    const res = await post({
      name: 'refers to nothing',
      filters: { properties: { type: 'OR', values: [{ key: 'id', type: 'cohort', value: 987654 }] } },
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', detail: 'Invalid Cohort ID in filter' })
  })

  it('test_cohort_loops: Cohorts cannot reference other cohorts in a loop.', async () => {
    const a = await created({ name: 'A', filters: byPlan('pro') })
    const b = await created({
      name: 'B',
      filters: { properties: { type: 'AND', values: [{ key: 'id', type: 'cohort', value: a.id }] } },
    })
    const loop = await patch(a.id, {
      filters: { properties: { type: 'AND', values: [{ key: 'id', type: 'cohort', value: b.id }] } },
    })
    expect(loop.statusCode).toBe(400)
    expect(loop.json().detail).toBe('Cohorts cannot reference other cohorts in a loop.')
    const self = await patch(a.id, {
      filters: { properties: { type: 'AND', values: [{ key: 'id', type: 'cohort', value: a.id }] } },
    })
    expect(self.json().detail).toBe('Cohorts cannot reference other cohorts in a loop.')
  })

  it('test_cohort_name_max_length', async () => {
    const res = await post({ name: 'x'.repeat(401), filters: byPlan('pro') })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({
      code: 'max_length',
      attr: 'name',
      detail: 'Ensure this field has no more than 400 characters.',
    })
  })

  it('test_update_static_cohort_with_filters_is_refused', async () => {
    const cohort = await created({ name: 'static list', is_static: true, distinct_ids: ['a'] })
    const res = await patch(cohort.id, { filters: byPlan('pro') })
    expect(res.statusCode).toBe(400)
    expect(res.json().detail).toBe(
      'Editing the criteria of a static cohort is not supported yet. Create a new static cohort instead.',
    )
    // renaming it is fine
    expect((await patch(cohort.id, { name: 'renamed list' })).statusCode).toBe(200)
  })

  it('test_static_cohort_to_dynamic_cohort', async () => {
    const cohort = await created({ name: 'test', is_static: true, distinct_ids: ['123'] })
    const res = await patch(cohort.id, {
      is_static: false,
      groups: [{ properties: [{ key: 'email', value: 'email@example.org' }] }],
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({ is_static: false, cohort_type: 'person_property', is_calculating: true })
  })
})

/** A multipart/form-data body as Django's test client sends it: plain fields, and at most one file. */
function form(fields: Record<string, string>, file?: { field: string; name: string; text: string | Buffer }) {
  const boundary = '----burrow-test-boundary'
  const parts: Buffer[] = []
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`))
  }
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.name}"\r\n` +
          'Content-Type: application/csv\r\n\r\n',
      ),
      Buffer.isBuffer(file.text) ? file.text : Buffer.from(file.text),
      Buffer.from('\r\n'),
    )
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`))
  return {
    headers: { ...t.auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload: Buffer.concat(parts),
  }
}
const postForm = (body: ReturnType<typeof form>) => t.burrow.app.inject({ method: 'POST', url: `${base}/`, ...body })
const patchForm = (id: number, body: ReturnType<typeof form>) =>
  t.burrow.app.inject({ method: 'PATCH', url: `${base}/${id}/`, ...body })
const csvFile = (text: string | Buffer) => ({ field: 'csv', name: 'example.csv', text })
const memberIds = async (id: number) =>
  new Set(
    (await get(`${base}/${id}/persons/`)).json().results.flatMap((p: { distinct_ids: string[] }) => p.distinct_ids),
  )

describe('CSV uploads as multipart/form-data', () => {
  it('test_static_cohort_csv_upload_end_to_end: members are the persons the file names; PATCH adds more', async () => {
    await capture('csv-email-person', { email: 'email@example.org' })
    for (const id of ['123', '456', '0']) await capture(id, {})
    await t.burrow.committer.flushPending()
    const res = await postForm(
      form({ name: 'test', is_static: 'True' }, csvFile('\nUser ID\nemail@example.org\n123\n0\n')),
    )
    expect(res.statusCode, res.body).toBe(201)
    const cohort = res.json()
    expect(cohort).toMatchObject({ name: 'test', is_static: true, is_calculating: false })
    // "User ID" and the e-mail are read as distinct ids, which no person has
    expect(await memberIds(cohort.id)).toEqual(new Set(['123', '0']))

    const updated = await patchForm(cohort.id, form({ name: 'test' }, csvFile('\nUser ID\n456\n')))
    expect(updated.statusCode, updated.body).toBe(200)
    expect(updated.json().is_calculating).toBe(false)
    expect(await memberIds(cohort.id)).toEqual(new Set(['123', '0', '456']))

    const renamed = await patchForm(cohort.id, form({ name: 'test2' }))
    expect(renamed.statusCode, renamed.body).toBe(200)
    expect(renamed.json().name).toBe('test2')
    expect(await memberIds(cohort.id)).toEqual(new Set(['123', '0', '456']))
  })

  it('test_static_cohort_csv_upload with a person_id column: all of each person’s distinct ids', async () => {
    await capture('by-uuid-other', {})
    const identify = await t.burrow.app.inject({
      method: 'POST',
      url: '/batch/',
      payload: {
        api_key: t.creds.project_api_key,
        batch: [{ event: '$identify', distinct_id: 'by-uuid', properties: { $anon_distinct_id: 'by-uuid-phone' } }],
      },
    })
    expect(identify.statusCode).toBe(200)
    await t.burrow.committer.flushPending()
    const persons = (await get(`/api/projects/${t.creds.project_id}/persons/?distinct_id=by-uuid`)).json()
    const personId = persons.results[0].uuid as string
    const res = await postForm(
      form({ name: 'by person id', is_static: 'true' }, csvFile(`name,person_id\nAnn,${personId}\nBob,\n`)),
    )
    expect(res.statusCode, res.body).toBe(201)
    expect(await memberIds(res.json().id)).toEqual(new Set(['by-uuid', 'by-uuid-phone']))
  })

  it('test_static_cohort_csv_upload with an email column: the persons with that email', async () => {
    await capture('mail-ann', { email: 'ann@example.org' })
    await capture('mail-bob', { email: 'bob@example.org' })
    await capture('mail-other', { email: 'other@example.org' })
    await t.burrow.committer.flushPending()
    const single = await postForm(
      form({ name: 'by email', is_static: 'True' }, csvFile('email\nann@example.org\nnobody@example.org\n')),
    )
    expect(single.statusCode, single.body).toBe(201)
    expect(await memberIds(single.json().id)).toEqual(new Set(['mail-ann']))
    const multi = await postForm(
      form(
        { name: 'by e-mail column', is_static: 'True' },
        csvFile('name,E-Mail\nAnn,ann@example.org\nBob,bob@example.org\n'),
      ),
    )
    expect(multi.statusCode, multi.body).toBe(201)
    expect(await memberIds(multi.json().id)).toEqual(new Set(['mail-ann', 'mail-bob']))
  })

  it('reads a distinct_id column of a multi-column file, quotes and all', async () => {
    await capture('multi, one', {})
    await capture('multi-two', {})
    await t.burrow.committer.flushPending()
    const res = await postForm(
      form({ name: 'multi', is_static: 'True' }, csvFile('plan,distinct_id\npro,"multi, one"\r\nfree,multi-two\n')),
    )
    expect(res.statusCode, res.body).toBe(201)
    expect(await memberIds(res.json().id)).toEqual(new Set(['multi, one', 'multi-two']))
  })

  it.each([
    ['an empty file', '\n\n', 'CSV file is empty. Please upload a CSV file with at least one row of data.'],
    [
      'a multi-column file without an id column',
      'name,plan\nAnn,pro\n',
      "Multi-column CSV must contain at least one column with a supported ID header: 'person_id', 'Person .id' " +
        "(PostHog export format), 'distinct_id', 'distinct-id', or 'email'. Found columns: name, plan",
    ],
    [
      'a header and no ids',
      'person_id\n\n',
      'CSV file contains no valid person IDs, distinct IDs, or email addresses. Please ensure your file has data ' +
        'rows with person IDs, distinct IDs, or email addresses.',
    ],
  ])('refuses %s with PostHog’s message', async (_label, text, detail) => {
    const res = await postForm(form({ name: 'bad csv', is_static: 'True' }, csvFile(text)))
    expect(res.statusCode, res.body).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', attr: 'csv', detail })
  })

  it('refuses a file that is not UTF-8, a file in another field, and a bad boolean', async () => {
    const latin1 = await postForm(form({ name: 'latin1', is_static: 'True' }, csvFile(Buffer.from([0x63, 0xe9, 0x0a]))))
    expect(latin1.statusCode).toBe(400)
    expect(latin1.json()).toMatchObject({
      attr: 'csv',
      detail: 'CSV file encoding is not supported. Please save your file as UTF-8 and try again.',
    })
    const other = await postForm(
      form({ name: 'other', is_static: 'True' }, { field: 'upload', name: 'x.csv', text: '1' }),
    )
    expect(other.statusCode).toBe(400)
    expect(other.json()).toMatchObject({ type: 'validation_error', attr: 'upload' })
    const bool = await postForm(form({ name: 'bool', is_static: 'maybe' }))
    expect(bool.statusCode).toBe(400)
    expect(bool.json()).toMatchObject({
      type: 'validation_error',
      attr: 'is_static',
      detail: 'Must be a valid boolean.',
    })
  })

  it('takes JSON fields as JSON text, as DRF reads a form', async () => {
    const res = await postForm(form({ name: 'form filters', filters: JSON.stringify(byPlan('form-pro')) }))
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json()).toMatchObject({ is_static: false, filters: byPlan('form-pro') })
    const bad = await postForm(form({ name: 'bad json', filters: '{not json' }))
    expect(bad.statusCode).toBe(400)
    expect(bad.json()).toMatchObject({ attr: 'filters', detail: 'Value must be valid JSON.' })
  })

  it('answers 413 for a CSV file over 20 MiB, after reading the request', async () => {
    const big = Buffer.alloc(20 * 1024 * 1024 + 10, 'a')
    const res = await postForm(form({ name: 'huge', is_static: 'True' }, csvFile(big)))
    expect(res.statusCode).toBe(413)
    expect(res.json()).toMatchObject({ type: 'invalid_request', code: 'request_too_large', attr: 'csv' })
    const listed = (await get(`${base}/?search=huge`)).json()
    expect(listed.results).toEqual([])
  })
})

describe('lists, activity and copies', () => {
  it('test_list_cohorts_with_search_and_type', async () => {
    await created({ name: 'Search_me exactly', filters: byPlan('pro') })
    await created({ name: 'searchXme', filters: byPlan('pro') })
    await created({ name: 'static search_me', is_static: true })
    const names = async (query: string) =>
      (await get(`${base}/?${query}`)).json().results.map((c: { name: string }) => c.name)
    // `_` is a literal underscore, not "any character"
    expect(await names('search=search_me')).toEqual(['static search_me', 'Search_me exactly'])
    expect(await names('search=search_me&type=static')).toEqual(['static search_me'])
    expect(await names('search=search_me&type=dynamic')).toEqual(['Search_me exactly'])
    const bad = await get(`${base}/?type=wobbly`)
    expect(bad.statusCode).toBe(400)
    expect(bad.json().attr).toBe('type')
  })

  it('test_cohort_activity_log', async () => {
    const cohort = await created({ name: 'Logged', filters: byPlan('pro') })
    await patch(cohort.id, { name: 'Logged again' })
    const res = await get(`${base}/${cohort.id}/activity/`)
    expect(res.statusCode).toBe(200)
    const log = res.json()
    expect(log.results.map((e: { activity: string }) => e.activity)).toEqual(['updated', 'created'])
    expect(log.results[0]).toMatchObject({
      scope: 'Cohort',
      item_id: String(cohort.id),
      user: { email: t.creds.email },
      detail: { name: 'Logged again', changes: [{ field: 'name', before: 'Logged', after: 'Logged again' }] },
    })
    const all = (await get(`${base}/activity/`)).json()
    expect(all.results.length).toBeGreaterThanOrEqual(2)
    expect((await get(`${base}/999999/activity/`)).statusCode).toBe(404)
  })

  it('test_filter_by_cohort: persons paged with next', async () => {
    for (let i = 0; i < 5; i++) await capture(`chrome-${i}`, { $os: 'Chrome' })
    await capture('fake', {})
    await t.burrow.committer.flushPending()
    const cohort = await created({
      name: 'Chrome',
      filters: {
        properties: { type: 'AND', values: [{ key: '$os', value: 'Chrome', type: 'person', operator: 'exact' }] },
      },
    })
    const first = (await get(`${base}/${cohort.id}/persons/?limit=3`)).json()
    expect(first.results).toHaveLength(3)
    const second = (await get(first.next)).json()
    expect(second.results).toHaveLength(2)
    expect(second.next).toBeNull()
    const searched = (await get(`${base}/${cohort.id}/persons/?search=chrome-4`)).json()
    expect(searched.results.map((p: { distinct_ids: string[] }) => p.distinct_ids)).toEqual([['chrome-4']])
  })

  it('test_duplicating_dynamic_cohort_as_static', async () => {
    await capture('dup-1', { $some_prop: 'something' })
    await capture('dup-2', { $some_prop: 'something' })
    await capture('dup-3', { $some_prop: 'not it' })
    await t.burrow.committer.flushPending()
    const cohort = await created({
      name: 'cohort A',
      filters: {
        properties: {
          type: 'OR',
          values: [{ key: '$some_prop', value: 'something', type: 'person', operator: 'exact' }],
        },
      },
    })
    const res = await get(`${base}/${cohort.id}/duplicate_as_static_cohort/`)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json()).toMatchObject({
      name: 'cohort A (static copy)',
      is_static: true,
      is_calculating: false,
      errors_calculating: 0,
      count: 2,
    })
  })
})

describe('static cohorts from a query', () => {
  const actorsQuery = {
    kind: 'ActorsQuery',
    properties: [{ key: '$query_prop', value: 'something', type: 'person', operator: 'exact' }],
  }

  it('test_creating_update_and_calculating_with_new_cohort_query: the persons the query finds', async () => {
    await capture('query-1', { $query_prop: 'something' })
    await capture('query-2', { $query_prop: 'not it' })
    await t.burrow.committer.flushPending()
    const cohort = await created({ name: 'cohort A', is_static: true, query: actorsQuery })
    const persons = (await get(`${base}/${cohort.id}/persons/?cohort=${cohort.id}`)).json()
    expect(persons.results.map((p: { distinct_ids: string[] }) => p.distinct_ids)).toEqual([['query-1']])
  })

  it('test_creating_update_and_calculating_with_new_cohort_query_dynamic_error', async () => {
    expect((await post({ name: 'cohort A', query: actorsQuery })).statusCode).toBe(400)
  })
})
