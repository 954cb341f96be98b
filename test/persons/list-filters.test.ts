/**
 * The persons list filters each person's latest version only, whatever its earlier versions held, and the cheap
 * text test it runs first never drops a person the exact filter keeps (list-query.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cheapCondition } from '../../src/persons/list-query.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { captureFixture } from './fixtures.js'

let t: TestApp
let base: string

beforeAll(async () => {
  t = await startTestApp()
  base = `/api/projects/${t.creds.project_id}/persons`
  await captureFixture(t)
  // Later versions: bob moves to pro, carol leaves it (and gets a site with a slash), user-5 sets a spelling of
  // the plan with another case; then user-7 is deleted.
  await captureFixture(t, t.creds.project_api_key, [
    { event: '$set', distinct_id: 'bob', properties: { $set: { plan: 'pro' } } },
    { event: '$set', distinct_id: 'carol', properties: { $set: { plan: 'free', site: 'https://other.org/a' } } },
    { event: '$set', distinct_id: 'user-5', properties: { $set: { plan: 'PRO', tier: 7 } } },
  ])
  const user7 = (
    await t.burrow.app.inject({ method: 'GET', url: `${base}/?distinct_id=user-7`, headers: t.auth })
  ).json().results[0].id as string
  const deleted = await t.burrow.app.inject({ method: 'DELETE', url: `${base}/${user7}/`, headers: t.auth })
  expect(deleted.statusCode).toBe(202)
}, 120_000)
afterAll(() => t?.close())

const list = async (filters: unknown) => {
  const res = await t.burrow.app.inject({
    method: 'GET',
    url: `${base}/?properties=${encodeURIComponent(JSON.stringify(filters))}`,
    headers: t.auth,
  })
  expect(res.statusCode).toBe(200)
  return (res.json().results as { properties: { email?: string } }[]).map((p) => p.properties.email)
}

describe('persons list filters', () => {
  it('matches the latest version only: a person who left a value is not listed under it', async () => {
    // pro now: bob (p1) and alice (p0), newest first; carol was pro before and is free now
    expect(await list([{ key: 'plan', value: 'pro', type: 'person' }])).toEqual([
      'bob@example.com',
      'alice@example.com',
    ])
    expect(await list([{ key: 'plan', value: 'free', type: 'person' }])).toEqual([
      'user-9@example.com',
      'user-8@example.com',
      'user-6@example.com',
      'user-4@example.com',
      'user-3@example.com',
      'carol@other.org',
    ])
  })

  it('narrows by distinct id and property together', async () => {
    const pro = encodeURIComponent(JSON.stringify([{ key: 'plan', value: 'pro', type: 'person' }]))
    const emailsOf = async (query: string) =>
      (await t.burrow.app.inject({ method: 'GET', url: `${base}/?${query}`, headers: t.auth }))
        .json()
        .results.map((p: { properties: { email: string } }) => p.properties.email)
    expect(await emailsOf(`distinct_id=bob&properties=${pro}`)).toEqual(['bob@example.com'])
    expect(await emailsOf(`distinct_id=carol&properties=${pro}`)).toEqual([])
  })

  it('leaves deleted persons out', async () => {
    expect(await list([{ key: 'email', value: 'user-7@example.com', type: 'person' }])).toEqual([])
  })

  it('compares exactly, with the case, and icontains without it', async () => {
    expect(await list([{ key: 'plan', value: 'PRO', type: 'person' }])).toEqual(['user-5@example.com'])
    expect(await list([{ key: 'plan', value: 'pr', operator: 'icontains', type: 'person' }])).toEqual([
      'user-5@example.com',
      'bob@example.com',
      'alice@example.com',
    ])
  })

  it('keeps OR groups, value lists, numbers and values with escaped characters', async () => {
    const orGroup = {
      type: 'OR',
      values: [
        { key: 'email', value: 'user-3@example.com', type: 'person' },
        { key: 'seats', value: 9, type: 'person' },
      ],
    }
    expect(await list(orGroup)).toEqual(['user-9@example.com', 'user-3@example.com'])
    expect(await list([{ key: 'email', value: ['bob@example.com', 'user-4@example.com'], type: 'person' }])).toEqual([
      'user-4@example.com',
      'bob@example.com',
    ])
    expect(await list([{ key: 'tier', value: '7', type: 'person' }])).toEqual(['user-5@example.com'])
    expect(await list([{ key: 'site', value: 'https://other.org/a', type: 'person' }])).toEqual(['carol@other.org'])
    // a negated filter: every live person but the pro ones (9 live, 2 pro)
    expect(await list([{ key: 'plan', value: 'pro', operator: 'is_not', type: 'person' }])).toHaveLength(7)
  })
})

describe('the cheap text test', () => {
  it('is a substring search for plain text values, case-blind for icontains', () => {
    expect(cheapCondition([{ key: 'plan', value: 'pro', type: 'person' }])).toBe(`(position(properties, 'pro') > 0)`)
    expect(cheapCondition({ key: 'plan', value: 'Pr', operator: 'icontains' })).toBe(
      `positionCaseInsensitive(properties, 'Pr') > 0`,
    )
    expect(cheapCondition({ key: 'plan', value: ['a1', 'b2'], type: 'person' })).toBe(
      `((position(properties, 'a1') > 0) OR (position(properties, 'b2') > 0))`,
    )
  })

  it('is left out where a matching person’s JSON could spell the value otherwise', () => {
    for (const filter of [
      { key: 'seats', value: 7 }, // a number: 7, 7.0
      { key: 'seats', value: '7' }, // digits only
      { key: 'at', value: '2026-01-01' }, // a date a typed property compares as one
      { key: 'flag', value: 'True' }, // a boolean a typed property compares as one
      { key: 'site', value: 'https://a.example/x' }, // `/` may be escaped
      { key: 'name', value: 'Zoë' }, // may be escaped as \u00eb
      { key: 'plan', value: 'pro', negation: true },
      { key: 'plan', value: 'pro', operator: 'is_not' },
      { key: 'seats', value: 3, operator: 'gt' },
      { key: 'id', value: 1, type: 'cohort' },
      {
        type: 'OR',
        values: [
          { key: 'plan', value: 'pro' },
          { key: 'seats', value: 1, operator: 'gt' },
        ],
      },
    ]) {
      expect(cheapCondition(filter)).toBeUndefined()
    }
  })

  it('keeps the conditions it has from an AND and drops the rest', () => {
    expect(
      cheapCondition({
        type: 'AND',
        values: [
          { key: 'plan', value: 'pro' },
          { key: 'seats', value: 1, operator: 'gt' },
        ],
      }),
    ).toBe(`(position(properties, 'pro') > 0)`)
  })
})
