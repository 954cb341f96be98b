/**
 * Cohorts in the query API: `IN COHORT` in HogQLQuery and `{type: 'cohort'}` property filters in EventsQuery and
 * HogQLQuery filters, over persons created by capture and cohorts created through the cohorts API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { hogql, postQuery } from './fixtures.js'

let t: TestApp
let other: Awaited<ReturnType<typeof createTenant>>
let pro: number
let list: number
let notFree: number
let theirPro: number

async function capture(token: string, batch: Record<string, unknown>[]) {
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: '/batch/',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ api_key: token, batch }),
  })
  expect(res.statusCode, res.body).toBe(200)
}

async function createCohort(body: Record<string, unknown>, projectId = t.creds.project_id, auth = t.auth) {
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: `/api/projects/${projectId}/cohorts/`,
    headers: auth,
    payload: body,
  })
  expect(res.statusCode, res.body).toBe(201)
  return (res.json() as { id: number }).id
}

const pageview = (distinctId: string, $set?: Record<string, unknown>) => ({
  event: '$pageview',
  properties: { distinct_id: distinctId, ...($set ? { $set } : {}) },
})

beforeAll(async () => {
  t = await startTestApp()
  other = await createTenant(t)
  await capture(t.creds.project_api_key, [
    pageview('alice', { plan: 'pro', email: 'alice@example.com' }),
    pageview('bob', { plan: 'free' }),
    pageview('bob'),
    pageview('carol', { plan: 'trial' }),
    { event: 'signup', properties: { distinct_id: 'carol' } },
  ])
  // another project: a pro person, and a person with a distinct id listed in our static cohort
  const otherProject = await t.burrow.stores.projects.get(other.project.id)
  await capture(otherProject?.api_token as string, [pageview('dave', { plan: 'pro' }), pageview('carol')])
  await t.burrow.ingest.flushBackground()
  const byPlan = (plan: string, operator = 'exact') => ({
    properties: { type: 'AND', values: [{ type: 'person', key: 'plan', value: plan, operator }] },
  })
  pro = await createCohort({ name: 'Pro', filters: byPlan('pro') })
  list = await createCohort({ name: 'Hand picked', is_static: true, distinct_ids: ['carol', 'nobody'] })
  notFree = await createCohort({ name: 'Not free', filters: byPlan('free', 'is_not') })
  // the other project has its own cohort matching every pro person there
  theirPro = await createCohort({ name: 'Pro', filters: byPlan('pro') }, other.project.id, other.auth)
}, 60_000)
afterAll(() => t?.close())

const rows = async (query: string) => {
  const res = await postQuery(t, hogql(query))
  expect(res.statusCode, res.body).toBe(200)
  return res.json().results as unknown[][]
}

describe('IN COHORT through the query API', () => {
  it('matches the persons of a dynamic cohort, by id and by name', async () => {
    const q = (c: string) =>
      `SELECT distinct_id, count() FROM events WHERE person_id IN COHORT ${c} GROUP BY distinct_id ORDER BY distinct_id`
    expect(await rows(q(String(pro)))).toEqual([['alice', 1]])
    expect(await rows(q("'Pro'"))).toEqual([['alice', 1]])
    expect(await rows(q(String(notFree)))).toEqual([
      ['alice', 1],
      ['carol', 2],
    ])
  })

  it('matches the members of a static cohort and excludes them with NOT IN', async () => {
    expect(await rows(`SELECT DISTINCT distinct_id FROM events WHERE person_id IN COHORT ${list}`)).toEqual([['carol']])
    const outside = await rows(
      `SELECT DISTINCT distinct_id FROM events WHERE person_id NOT IN COHORT ${list} ORDER BY distinct_id`,
    )
    expect(outside).toEqual([['alice'], ['bob']])
  })

  it("counts persons of this project only, never another project's", async () => {
    expect(await rows(`SELECT count() FROM persons WHERE id IN COHORT ${pro}`)).toEqual([[1]])
    expect(await rows(`SELECT count() FROM persons WHERE id IN COHORT ${list}`)).toEqual([[1]])
    const theirs = (query: string) => postQuery(t, hogql(query), { projectId: other.project.id, auth: other.auth })
    const theirDistinctIds = await theirs(`SELECT DISTINCT distinct_id FROM events WHERE person_id IN COHORT 'Pro'`)
    expect(theirDistinctIds.json().results).toEqual([['dave']])
    expect((await theirs(`SELECT count() FROM persons WHERE id IN COHORT ${theirPro}`)).json().results).toEqual([[1]])
    // our cohort ids do not exist in the other project
    const ours = await theirs(`SELECT count() FROM persons WHERE id IN COHORT ${list}`)
    expect(ours.statusCode).toBe(400)
    expect(ours.json().detail).toContain(`Could not find cohort with ID ${list}`)
  })

  it('answers 400 for an unknown cohort', async () => {
    const res = await postQuery(t, hogql('SELECT 1 FROM events WHERE person_id IN COHORT 987654'))
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', detail: expect.stringContaining('987654') })
  })

  it('filters EventsQuery by a cohort property filter, in and not_in', async () => {
    const events = async (properties: unknown[]) => {
      const res = await postQuery(t, {
        query: { kind: 'EventsQuery', select: ['event', 'distinct_id'], properties, orderBy: ['distinct_id', 'event'] },
      })
      expect(res.statusCode, res.body).toBe(200)
      return res.json().results as unknown[][]
    }
    expect(await events([{ type: 'cohort', key: 'id', value: list }])).toEqual([
      ['$pageview', 'carol'],
      ['signup', 'carol'],
    ])
    expect(await events([{ type: 'cohort', key: 'id', value: pro, operator: 'not_in' }])).toEqual([
      ['$pageview', 'bob'],
      ['$pageview', 'bob'],
      ['$pageview', 'carol'],
      ['signup', 'carol'],
    ])
  })

  it('runs hogql case 14: {filters} with a static cohort filter counts only its member', async () => {
    const res = await postQuery(t, {
      query: {
        kind: 'HogQLQuery',
        query: 'SELECT event, count() FROM events WHERE {filters} GROUP BY event ORDER BY event',
        filters: { properties: [{ type: 'cohort', key: 'id', value: list }] },
      },
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().results).toEqual([
      ['$pageview', 1],
      ['signup', 1],
    ])
  })
})

describe("the project's cohorts, read once per query request", () => {
  it('reads the cohorts and a static cohort’s members once for the cache key and the compiler together', async () => {
    const store = t.burrow.stores.cohorts
    const { allForTeam, members } = store
    const reads = { all: 0, members: 0 }
    store.allForTeam = (...a) => {
      reads.all++
      return allForTeam.apply(store, a)
    }
    store.members = (...a) => {
      reads.members++
      return members.apply(store, a)
    }
    try {
      // force_blocking: the cache key (which digests the cohorts) and the compiled query both need them
      const res = await postQuery(
        t,
        hogql(`SELECT count() FROM persons WHERE id IN COHORT ${list}`, { refresh: 'force_blocking' }),
      )
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json().results).toEqual([[1]])
      // one read of the project's cohorts, one page of the one static cohort's members (it has 2)
      expect(reads).toEqual({ all: 1, members: 1 })
      // the next request reads them again: a cohort edited in between is seen
      const next = await postQuery(t, hogql(`SELECT count() FROM persons WHERE id IN COHORT ${pro}`))
      expect(next.json().results).toEqual([[1]])
      expect(reads).toEqual({ all: 2, members: 2 })
    } finally {
      store.allForTeam = allForTeam
      store.members = members
    }
  })
})
