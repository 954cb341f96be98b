/**
 * The member query of a dynamic cohort: one behavioural filter alone is its events subquery, with no pass over
 * persons around it; negated or combined with other conditions, the cohort stays a condition over persons.
 */
import { describe, expect, it } from 'vitest'
import { type CohortResolver, compileHogQL, memberCountHogQL } from '../../src/hogql/index.js'

const bought = "SELECT person_id FROM events WHERE event = 'purchase' GROUP BY person_id HAVING count() >= 3"
const cohorts: CohortResolver = {
  byId: {
    1: { kind: 'dynamic', hogql: `(id IN (${bought}))` },
    2: { kind: 'dynamic', hogql: `id NOT IN (${bought})` },
    3: { kind: 'dynamic', hogql: `(id IN (${bought})) AND (properties.plan = 'pro')` },
    4: { kind: 'static', distinctIds: ['a'] },
    5: { kind: 'invalid', reason: 'Action 9 does not exist.' },
  },
}
const compile = (query: string) => compileHogQL(query, { teamId: 7, timezone: 'UTC', cohorts }).sql
const personPasses = (sql: string) => sql.split('FROM persons AS raw_persons').length - 1

describe('members of a dynamic cohort', () => {
  it('reads a lone behavioural filter from the events without a pass over persons', () => {
    const trend = compile(`SELECT count() FROM events WHERE person_id IN COHORT 1`)
    expect(personPasses(trend)).toBe(0)
    expect(trend).toContain('HAVING greaterOrEquals(count(), 3)')
    // asked about persons, the persons are read once: the query's own table
    expect(personPasses(compile('SELECT count() FROM persons WHERE id IN COHORT 1'))).toBe(1)
  })

  it('keeps the persons pass for a negated filter and for a filter beside person properties', () => {
    expect(personPasses(compile('SELECT count() FROM events WHERE person_id IN COHORT 2'))).toBe(1)
    expect(personPasses(compile('SELECT count() FROM events WHERE person_id IN COHORT 3'))).toBe(1)
  })
})

describe('counting a cohort’s members (the background calculation)', () => {
  it('counts a lone behavioural filter’s member list, one row per person, with no pass over persons', () => {
    const hogql = memberCountHogQL(1, cohorts)
    expect(hogql.startsWith('SELECT count() FROM (SELECT person_id FROM events')).toBe(true)
    const sql = compileHogQL(hogql, { teamId: 7, timezone: 'UTC', cohorts }).sql
    expect(personPasses(sql)).toBe(0)
    expect(sql).toContain('GROUP BY events__pdi.person_id HAVING greaterOrEquals(count(), 3)')
  })

  it('counts the live persons for every other cohort, and leaves errors to the compiler', () => {
    for (const id of [2, 3, 4, 5]) {
      expect(memberCountHogQL(id, cohorts)).toBe(`SELECT count() FROM persons WHERE id IN COHORT ${id}`)
    }
    expect(() => compileHogQL(memberCountHogQL(5, cohorts), { teamId: 7, timezone: 'UTC', cohorts })).toThrow(
      'Action 9 does not exist',
    )
  })
})
