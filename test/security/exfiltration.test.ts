/**
 * Cross-tenant exfiltration through the query API. Project A (the caller) runs a corpus of queries whose functions
 * throw on the data of the rows they read — harmless on A's rows, failing on the rows of project B (the victim),
 * whose rows share data parts and granules with A's. No answer to A (body, headers, async status, query log) may
 * carry B's data, and no query may fail: a failure would mean A's expression ran on B's rows, which is itself a
 * one-bit oracle on B's data. The same queries run as B do fail, so the corpus would catch a regression.
 */
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { hogql, postQuery } from '../queries/fixtures.js'
import { type Attempt, buildCorpus, potencyChecks, REFUSED, SOURCES } from './exfiltration-corpus.js'
import { findVictimData, HOME_TOKEN, type TenantData, writeTenantData } from './tenant-fixture.js'

let t: TestApp
let victim: Awaited<ReturnType<typeof createTenant>>
let data: TenantData
let victimCohort: number

async function createCohort(projectId: number, auth: Record<string, string>, body: Record<string, unknown>) {
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: `/api/projects/${projectId}/cohorts/`,
    headers: auth,
    payload: body,
  })
  expect(res.statusCode, res.body).toBe(201)
  return (res.json() as { id: number }).id
}

beforeAll(async () => {
  t = await startTestApp({
    env: { RATE_LIMIT_QUERIES_PER_MINUTE: '0', RATE_LIMIT_QUERIES_PER_HOUR: '0', RATE_LIMIT_QUERY_CONCURRENCY: '0' },
  })
  victim = await createTenant(t)
  const victimProject = await t.burrow.stores.projects.get(victim.project.id)
  data = await writeTenantData(
    t,
    { team: t.creds.project_id, token: t.creds.project_api_key },
    { team: victim.project.id, token: victimProject?.api_token as string },
  )
  // The same cohort names in both projects: the victim runs the corpus too, to prove it potent.
  for (const [projectId, auth, tag] of [
    [t.creds.project_id, t.auth, HOME_TOKEN],
    [victim.project.id, victim.auth, 'victim'],
  ] as const) {
    const email = { type: 'person', key: 'email', value: tag, operator: 'icontains' }
    await createCohort(projectId, auth, { name: 'Mine', filters: { properties: { type: 'AND', values: [email] } } })
    await createCohort(projectId, auth, {
      name: 'Picked',
      is_static: true,
      distinct_ids: [`${tag}-captured-1`, 'shared-user-0'],
    })
  }
  const theirs = { type: 'person', key: 'score', value: 'VICTIM_SCORE', operator: 'icontains' }
  victimCohort = await createCohort(victim.project.id, victim.auth, {
    name: 'VICTIM_COHORT',
    filters: { properties: { type: 'AND', values: [theirs] } },
  })
}, 120_000)
afterAll(() => t?.close())

const victimOptions = () => ({ projectId: victim.project.id, auth: victim.auth })

/** Everything the caller sees of a response: status line, headers and body. */
const seen = (res: LightMyRequestResponse) => `${res.statusCode}\n${JSON.stringify(res.headers)}\n${res.body}`

function expectNoVictimData(res: LightMyRequestResponse, query: string) {
  const found = findVictimData(seen(res), data)
  expect(found, `the victim's data reached the caller through: ${query}`).toBeUndefined()
}

/** An error in PostHog's shape; an async status (also answered 400 when its query failed) carries its own. */
function expectPostHogShape(res: LightMyRequestResponse) {
  if (res.statusCode < 400) return
  const body = res.json() as Record<string, unknown>
  if ('query_status' in body) return
  expect(body).toMatchObject({ type: expect.any(String), code: expect.any(String), detail: expect.any(String) })
  expect(body).toHaveProperty('attr')
}

/** The caller's cohorts, by name: the corpus is built when the file is collected, before any cohort exists. */
const corpus = buildCorpus(["'Mine'", "'Picked'"])
let counter = 0

describe('the fixture', () => {
  it('writes both projects’ rows into the same data parts of every table', async () => {
    const teams = `${Number(t.creds.project_id)}, ${Number(victim.project.id)}`
    for (const table of ['events', 'persons', 'person_distinct_ids', 'groups']) {
      const { rows } = await t.burrow.events.query<[string | number]>(
        `SELECT countIf(n = 2) FROM (SELECT _part, uniqExact(team_id) AS n FROM ${table} ` +
          `WHERE team_id IN (${teams}) GROUP BY _part)`,
      )
      expect(Number(rows[0][0]), table).toBeGreaterThan(0)
    }
  })

  it.each(SOURCES.map((s) => [s.name, s] as const))('%s: the victim reads its own markers', async (_name, s) => {
    const query = `SELECT ${s.data('')} FROM ${s.table} LIMIT 20`
    const theirs = await postQuery(t, hogql(query), victimOptions())
    expect(theirs.statusCode, theirs.body).toBe(200)
    expect(findVictimData(theirs.body, data)).toBeDefined()
    const mine = await postQuery(t, hogql(query))
    expect(mine.statusCode, mine.body).toBe(200)
    expect(mine.body.toLowerCase()).toContain(HOME_TOKEN)
    expectNoVictimData(mine, query)
  })
})

describe('the corpus', () => {
  it('has hundreds of attempts', () => {
    expect(corpus.length).toBeGreaterThan(1000)
  })

  it.concurrent.for(corpus)('$name', async (attempt: Attempt, { expect }) => {
    const n = ++counter
    const id = `attempt-${n}`
    const res = await postQuery(t, hogql(attempt.query, { client_query_id: id }))
    expect(findVictimData(seen(res), data), `leaked by: ${attempt.query}`).toBeUndefined()
    if (res.statusCode !== 200) {
      const body = res.json() as Record<string, unknown>
      expect(body, attempt.query).toMatchObject({
        type: expect.any(String),
        code: expect.any(String),
        detail: expect.any(String),
      })
      expect(body).toHaveProperty('attr')
    }
    if (res.statusCode !== 200 || n % 10 === 0) {
      const log = await t.burrow.app.inject({
        method: 'GET',
        url: `/api/projects/${t.creds.project_id}/query/${id}/log/`,
        headers: t.auth,
      })
      expect(log.statusCode).toBe(200)
      expect(findVictimData(seen(log), data), `leaked to the query log by: ${attempt.query}`).toBeUndefined()
    }
    // Harmless on the caller's rows: an error means the expression ran on the victim's rows.
    expect(res.statusCode, `failed on another project's rows: ${attempt.query}\n${res.body}`).toBe(200)
  })
})

describe('the corpus is potent', () => {
  it.concurrent.for(potencyChecks(corpus))('$name fails for the victim', async (attempt: Attempt, { expect }) => {
    const res = await postQuery(t, hogql(attempt.query), victimOptions())
    expect([400, 500], `${attempt.query}\n${res.body}`).toContain(res.statusCode)
    // an engine error on the data, not a query HogQL refused
    expect((res.json() as { code: string }).code).not.toMatch(/^hogql_/)
  })
})

describe('asynchronous queries', () => {
  const picks = [
    'events × WHERE × _toInt64',
    'events × PREWHERE × _toInt64',
    'events × JOIN ON (left side) × _toInt64',
    'events.person.properties × SELECT × _toInt64',
    'persons × HAVING × _toInt64',
    'raw_groups × arrayMap over groupArray × _toInt64',
    'sessions × window PARTITION BY × _toInt64',
    'events × WHERE × match (regex)',
    'events × WHERE × base64Decode',
  ].map((name) => corpus.find((a) => a.name === name) as Attempt)

  async function runAsync(query: string, options: { projectId?: number; auth?: Record<string, string> } = {}) {
    const projectId = options.projectId ?? t.creds.project_id
    const auth = options.auth ?? t.auth
    const id = `async-${++counter}`
    const started = await postQuery(t, hogql(query, { async: true, client_query_id: id, refresh: 'force_async' }), {
      projectId,
      auth,
    })
    const responses = [started]
    const until = Date.now() + 20_000
    for (;;) {
      const res = await t.burrow.app.inject({
        method: 'GET',
        url: `/api/projects/${projectId}/query/${id}/`,
        headers: auth,
      })
      responses.push(res)
      const status = (res.json() as { query_status?: Record<string, unknown> }).query_status
      if (status?.complete) {
        const log = await t.burrow.app.inject({
          method: 'GET',
          url: `/api/projects/${projectId}/query/${id}/log/`,
          headers: auth,
        })
        responses.push(log)
        return { status, responses }
      }
      if (Date.now() > until) throw new Error(`query ${id} did not complete: ${res.body}`)
      await new Promise((r) => setTimeout(r, 20))
    }
  }

  it.each(picks.map((a) => [a.name, a] as const))('%s', async (_name, attempt) => {
    expect(attempt).toBeDefined()
    const { status, responses } = await runAsync(attempt.query)
    for (const res of responses) {
      expectNoVictimData(res, attempt.query)
      expectPostHogShape(res)
    }
    expect(status.error_message ?? null).toBeNull()
    expect(status.error, JSON.stringify(status)).toBe(false)
    // the same query fails for the victim, and its status says so
    const theirs = await runAsync(attempt.query, victimOptions())
    expect(theirs.status.error).toBe(true)
    expect(theirs.status.error_message).toEqual(expect.any(String))
  })
})

describe('throwing functions outside the catalogue', () => {
  it.each(REFUSED)('%s', async (query) => {
    const res = await postQuery(t, hogql(query))
    expectNoVictimData(res, query)
    expect(res.statusCode, res.body).toBe(400)
    expect(res.json()).toMatchObject({ type: 'validation_error', code: expect.stringMatching(/^hogql_/) })
  })
})

describe('another project’s cohort', () => {
  it('is not found, and its name and filters are not shown', async () => {
    for (const query of [
      `SELECT count() FROM events WHERE person_id IN COHORT ${victimCohort}`,
      `SELECT count() FROM persons WHERE id NOT IN COHORT ${victimCohort}`,
    ]) {
      const res = await postQuery(t, hogql(query))
      expect(res.statusCode, res.body).toBe(400)
      expectPostHogShape(res)
      expectNoVictimData(res, query)
    }
  })
})
