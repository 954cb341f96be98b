/**
 * IN COHORT (hogql.md §2.6): dynamic cohorts as person-property subqueries, static cohorts by distinct id, by id
 * or by name, negated, nested, and always within the caller's team.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type CohortResolver,
  type CompileContext,
  compileHogQL,
  HogQLValidationError,
  parseExpr,
  trustedExpr,
} from '../../src/hogql/index.js'
import { cohortFiltersToHogQL } from '../../src/queries/cohorts.js'
import { propertiesToHogQL } from '../../src/queries/filters.js'
import { createTestDb, type TestDb } from './chdb-fixture.js'

const MINE = 1
const OTHER = 2
const P = (n: number) => `00000000-0000-4000-8000-00000000000${n}`

const cohorts: CohortResolver = {
  byId: {
    1: {
      kind: 'dynamic',
      hogql: cohortFiltersToHogQL({ properties: { type: 'AND', values: [{ key: 'plan', value: 'pro' }] } }),
    },
    2: { kind: 'static', distinctIds: ['some_id', 'shared'] },
    // pro users, or members of cohort 9 who are not on the free plan (bob is listed in 9 but is on the free plan)
    3: {
      kind: 'dynamic',
      hogql: cohortFiltersToHogQL({
        properties: {
          type: 'OR',
          values: [
            { type: 'AND', values: [{ type: 'cohort', key: 'id', value: 1 }] },
            {
              type: 'AND',
              values: [
                { type: 'cohort', key: 'id', value: 9 },
                { type: 'person', key: 'plan', value: 'free', operator: 'exact', negation: true },
              ],
            },
          ],
        },
      }),
    },
    4: { kind: 'dynamic', hogql: 'id IN COHORT 5' },
    5: { kind: 'dynamic', hogql: 'id IN COHORT 4' },
    6: { kind: 'static', distinctIds: [] },
    9: { kind: 'static', distinctIds: ['some_id', 'bob'] },
  },
  byName: { 'Pro users': 1, 'Static list': 2 },
}

let db: TestDb

beforeAll(async () => {
  db = await createTestDb()
  const created_at = '2024-01-01 00:00:00'
  await db.insertPersons([
    { team_id: MINE, id: P(1), properties: { plan: 'pro' }, created_at, distinct_ids: ['alice', 'alice-phone'] },
    { team_id: MINE, id: P(2), properties: { plan: 'free' }, created_at, distinct_ids: ['bob'] },
    { team_id: MINE, id: P(3), properties: { plan: 'trial' }, created_at, distinct_ids: ['some_id'] },
    // another team: same distinct id as a member of static cohort 2, and on the pro plan
    { team_id: OTHER, id: P(4), properties: { plan: 'pro' }, created_at, distinct_ids: ['shared', 'bob'] },
  ])
  const at = '2024-01-02 00:00:00'
  await db.insertEvents([
    { team_id: MINE, event: '$pageview', distinct_id: 'alice', timestamp: at },
    { team_id: MINE, event: '$pageview', distinct_id: 'alice-phone', timestamp: at },
    { team_id: MINE, event: '$pageview', distinct_id: 'bob', timestamp: at },
    { team_id: MINE, event: 'signup', distinct_id: 'bob', timestamp: at },
    { team_id: MINE, event: '$pageview', distinct_id: 'some_id', timestamp: at },
    { team_id: OTHER, event: '$pageview', distinct_id: 'shared', timestamp: at },
    { team_id: OTHER, event: '$pageview', distinct_id: 'bob', timestamp: at },
  ])
})
afterAll(() => db?.close())

const ctx = (extra: Partial<CompileContext> = {}): CompileContext => ({
  teamId: MINE,
  timezone: 'UTC',
  cohorts,
  ...extra,
})
const distinctIdsWhere = (where: string, extra: Partial<CompileContext> = {}) =>
  db.hogql(`SELECT DISTINCT distinct_id FROM events WHERE ${where} ORDER BY distinct_id`, ctx(extra))

describe('IN COHORT', () => {
  it.each([
    ['a dynamic cohort by id', 'person_id IN COHORT 1', ['alice', 'alice-phone']],
    ['a dynamic cohort by name', "person_id IN COHORT 'Pro users'", ['alice', 'alice-phone']],
    ['a static cohort (members by distinct id)', 'person_id IN COHORT 2', ['some_id']],
    ['a static cohort by name', "person_id IN COHORT 'Static list'", ['some_id']],
    ['NOT IN a dynamic cohort', 'person_id NOT IN COHORT 1', ['bob', 'some_id']],
    ['NOT IN a static cohort', 'person_id not in cohort 2', ['alice', 'alice-phone', 'bob']],
    ['a cohort made of cohorts, with a negated filter', 'person_id IN COHORT 3', ['alice', 'alice-phone', 'some_id']],
    ['an empty static cohort', 'person_id IN COHORT 6', []],
  ])('matches %s', async (_, where, expected) => {
    expect((await distinctIdsWhere(where)).map((r) => r[0])).toEqual(expected)
  })

  it('reads persons directly: the persons table with id IN COHORT', async () => {
    const rows = await db.hogql('SELECT id FROM persons WHERE id IN COHORT 1', ctx())
    expect(rows).toEqual([[P(1)]])
  })

  it("never matches another team's persons, even with the same distinct id or properties", async () => {
    // team 2 has a pro person and a person with the distinct id 'shared' listed in cohort 2
    expect(await db.hogql('SELECT count() FROM persons WHERE id IN COHORT 1', ctx())).toEqual([[1]])
    expect(await db.hogql('SELECT count() FROM persons WHERE id IN COHORT 2', ctx())).toEqual([[1]])
    // the same cohorts compiled for team 2 see only team 2's persons
    const theirs = await distinctIdsWhere('person_id IN COHORT 2', { teamId: OTHER })
    expect(theirs).toEqual([['bob'], ['shared']])
    const compiled = compileHogQL('SELECT 1 FROM events WHERE person_id IN COHORT 3', ctx())
    const tables = compiled.sql.match(/FROM (persons|person_distinct_ids|events) AS \w+|FROM events/g) ?? []
    const teamFilters = compiled.sql.match(/\.team_id, \{hogql_team_id:Int64\}/g) ?? []
    expect(teamFilters.length).toBeGreaterThanOrEqual(tables.length)
  })

  it('binds static members as parameters, never as SQL text', () => {
    const resolver: CohortResolver = { byId: { 7: { kind: 'static', distinctIds: ["x') OR 1=1 --"] } } }
    const compiled = compileHogQL('SELECT 1 FROM events WHERE person_id IN COHORT 7', ctx({ cohorts: resolver }))
    expect(compiled.sql).not.toContain('OR 1=1')
    expect(Object.values(compiled.params)).toContain("x') OR 1=1 --")
  })

  it('runs case 14: a cohort property filter as a placeholder counts only the static member', async () => {
    const cohortFilter = trustedExpr(parseExpr(propertiesToHogQL([{ type: 'cohort', key: 'id', value: 2 }]) as string))
    const rows = await db.hogql(
      'SELECT event, count() FROM events WHERE {cohort_filter} GROUP BY event',
      ctx({ placeholders: { cohort_filter: cohortFilter } }),
    )
    expect(rows).toEqual([['$pageview', 1]])
  })

  it.each([
    ['an unknown id', 'person_id IN COHORT 99', 'Could not find cohort with ID 99'],
    ['an unknown name', "person_id IN COHORT 'Nope'", "Could not find a cohort with the name 'Nope'"],
    ['a cohort that references itself', 'person_id IN COHORT 4', 'Cohort 4 references itself through 4 → 5 → 4'],
    ['a non-constant cohort', 'person_id IN COHORT event', 'IN COHORT needs a cohort id or a cohort name'],
  ])('rejects %s with a validation error', (_, where, message) => {
    const compile = () => compileHogQL(`SELECT 1 FROM events WHERE ${where}`, ctx())
    expect(compile).toThrow(HogQLValidationError)
    expect(compile).toThrow(message)
  })

  it('rejects IN COHORT when the caller gave no cohorts', () => {
    expect(() => compileHogQL('SELECT 1 FROM events WHERE person_id IN COHORT 1', ctx({ cohorts: undefined }))).toThrow(
      'Could not find cohort with ID 1',
    )
  })

  it('reports a cohort whose stored definition cannot be compiled only when it is used', () => {
    const resolver: CohortResolver = { byId: { 8: { kind: 'invalid', reason: 'bad operator' } } }
    expect(() => compileHogQL('SELECT 1 FROM events', ctx({ cohorts: resolver }))).not.toThrow()
    expect(() => compileHogQL('SELECT 1 FROM events WHERE person_id IN COHORT 8', ctx({ cohorts: resolver }))).toThrow(
      'Cohort 8 cannot be queried: bad operator',
    )
  })
})
