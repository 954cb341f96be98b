/**
 * The `hogql` field of a response is HogQL that reads back as the same query (posthog/hogql/test/test_query.py
 * test_tuple_access; the hogql-dialect cases of test_printer.py), with property access printed as PostHog prints
 * it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseSelect, printHogQL } from '../../src/hogql/index.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { hogql, insertEvents, postQuery } from '../queries/fixtures.js'

let t: TestApp
beforeAll(async () => {
  t = await startTestApp()
  const team = t.creds.project_id
  await insertEvents(t, [
    { team_id: team, event: 'a', distinct_id: 'u1', properties: { index: 1, $browser: 'Chrome' }, ago: 50 },
    { team_id: team, event: 'a', distinct_id: 'u1', properties: { index: 1, $browser: 'Chrome' }, ago: 40 },
    { team_id: team, event: 'b', distinct_id: 'u2', properties: { index: 1, $browser: 'Safari' }, ago: 30 },
    { team_id: team, event: 'b', distinct_id: 'u2', properties: { index: 2, $browser: 'Safari' }, ago: 20 },
  ])
}, 60_000)
afterAll(() => t.close())

/** Runs a query, then runs the `hogql` it answered with, and checks both give the same rows. */
async function roundTrip(query: string) {
  const first = await postQuery(t, hogql(query))
  expect(first.statusCode, first.body).toBe(200)
  const again = await postQuery(t, hogql(first.json().hogql))
  expect(again.statusCode, `${first.json().hogql}\n${again.body}`).toBe(200)
  expect(again.json().results).toEqual(first.json().results)
  expect(again.json().hogql).toBe(first.json().hogql)
  return first.json()
}

describe('the hogql field round-trips', () => {
  it('test_tuple_access: (sumMap(…) AS x).1 keeps its parentheses', async () => {
    const body = await roundTrip(`
      select col_a, arrayZip((sumMap(g.1, g.2) as x).1, x.2) as r from (
        select col_a, groupArray((col_b, col_c)) as g from (
          select properties.index as col_a, event as col_b, count() as col_c
          from events group by properties.index, event
        ) group by col_a
      ) group by col_a order by col_a`)
    expect(body.hogql).toContain('(sumMap(g.1, g.2) AS x).1')
    expect(body.results).toEqual([
      [
        '1',
        [
          ['a', 2],
          ['b', 1],
        ],
      ],
      ['2', [['b', 1]]],
    ])
  })

  it('parenthesises aliases, lambdas and numbers under an access or another alias', () => {
    for (const text of [
      'SELECT (1 AS x).1',
      'SELECT ([1, 2] AS arr)[1]',
      'SELECT (1 AS a) AS b',
      'SELECT (x -> x) AS f',
      'SELECT (1 BETWEEN 0 AND 2) AS inside',
    ]) {
      const printed = printHogQL(parseSelect(text))
      expect(printHogQL(parseSelect(printed)), text).toBe(printed)
    }
    expect(printHogQL(parseSelect('SELECT (1 AS x).1'))).toBe('SELECT (1 AS x).1')
  })

  it('prints property access as PostHog does: properties.$browser, person.properties.email', async () => {
    const body = await roundTrip(
      "select properties['$browser'], count() from events where properties['$browser'] = 'Chrome' group by properties['$browser']",
    )
    expect(body.hogql).toBe(
      "SELECT properties.$browser, count() FROM events WHERE equals(properties.$browser, 'Chrome') GROUP BY properties.$browser LIMIT 100",
    )
    expect(body.results).toEqual([['Chrome', 2]])
    expect(printHogQL(parseSelect("select person.properties['email'], properties['a b'], properties['x'][1]"))).toBe(
      'SELECT person.properties.email, properties.`a b`, properties.x[1]',
    )
  })

  it('prints EventsQuery property filters as properties.key', async () => {
    const res = await postQuery(t, {
      query: {
        kind: 'EventsQuery',
        select: ['event'],
        properties: [{ type: 'event', key: '$browser', value: 'Safari', operator: 'exact' }],
      },
    })
    expect(res.json().hogql).toContain("equals(properties.$browser, 'Safari')")
    expect(res.json().results).toHaveLength(2)
  })
})
