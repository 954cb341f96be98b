/** The materialization plan of a query (pure): which queries can be materialized, and the HogQL that fills the table. */
import { describe, expect, it } from 'vitest'
import { breakdownKeys, materializability, planHogQL } from '../../src/endpoints/materialize.js'

describe('planHogQL', () => {
  it('keeps a query without variables as it is', () => {
    expect(planHogQL('SELECT count() FROM events')).toEqual({
      ok: true,
      plan: { kind: 'hogql', hogql: 'SELECT count() FROM events', variable: null },
    })
  })

  it('turns an equality on a variable into the last selected and grouped column, without LIMIT', () => {
    const planned = planHogQL(
      "SELECT event, count() AS n FROM events WHERE timestamp > '2024-01-01' AND properties.$browser = {variables.browser} GROUP BY event LIMIT 10",
    )
    expect(planned.ok).toBe(true)
    if (!planned.ok || planned.plan.kind !== 'hogql') return
    expect(planned.plan.variable).toBe('browser')
    const text = planned.plan.hogql
    expect(text).toMatch(/AS browser FROM events/)
    expect(text).toMatch(/WHERE greater\(timestamp, '2024-01-01'\)|WHERE timestamp > '2024-01-01'/)
    expect(text).toMatch(/GROUP BY event, properties\.\$browser$/)
    expect(text).not.toMatch(/LIMIT/)
    expect(text).not.toMatch(/variables/)
  })

  it('adds a GROUP BY to an aggregate without one, and none to a plain select', () => {
    const agg = planHogQL('SELECT count() FROM events WHERE {variables.e} = event')
    expect(agg.ok && agg.plan.kind === 'hogql' && agg.plan.hogql).toMatch(/GROUP BY event$/)
    const plain = planHogQL('SELECT uuid FROM events WHERE event = {variables.e}')
    expect(plain.ok && plain.plan.kind === 'hogql' && plain.plan.hogql).not.toMatch(/GROUP BY/)
  })

  it('refuses variables it cannot turn into a column', () => {
    const reason = (q: string) => {
      const r = planHogQL(q)
      return r.ok ? null : r.reason
    }
    expect(reason('SELECT count() FROM events WHERE event = {variables.a} AND distinct_id = {variables.b}')).toBe(
      'Variables not supported: only one variable can be materialized.',
    )
    expect(reason('SELECT count() FROM events WHERE event != {variables.a}')).toBe(
      "Variables not supported: 'a' must be used once, in a simple equality in WHERE.",
    )
    expect(reason('SELECT {variables.a} FROM events WHERE event = {variables.a}')).toBe(
      "Variables not supported: 'a' must be used once, in a simple equality in WHERE.",
    )
    expect(reason('')).toBe('Query is empty or invalid.')
  })
})

describe('materializability', () => {
  it('accepts the supported kinds and refuses others and several breakdowns', () => {
    expect(materializability({ kind: 'EventsQuery' })).toEqual({
      ok: false,
      reason:
        "Query type 'EventsQuery' cannot be materialized. Supported types: HogQLQuery, TrendsQuery, FunnelsQuery, " +
        'LifecycleQuery, RetentionQuery, PathsQuery, StickinessQuery',
    })
    expect(
      materializability({
        kind: 'TrendsQuery',
        breakdownFilter: { breakdowns: [{ property: '$browser' }, { property: '$os' }] },
      }),
    ).toEqual({ ok: false, reason: 'Multiple breakdowns not supported for materialization' })
    expect(materializability({ kind: 'TrendsQuery', breakdownFilter: { breakdown: '$browser' } })).toEqual({
      ok: true,
      plan: { kind: 'insight', breakdown: '$browser' },
    })
    // lifecycle has no breakdown variable
    expect(materializability({ kind: 'LifecycleQuery' })).toEqual({
      ok: true,
      plan: { kind: 'insight', breakdown: null },
    })
  })

  it('finds rows of insights by their breakdown values, funnels by their steps', () => {
    expect(breakdownKeys({ breakdown_value: 'Chrome' })).toEqual(['Chrome'])
    expect(breakdownKeys({ breakdown_value: ['Chrome', 5] })).toEqual(['Chrome', '5'])
    expect(breakdownKeys([{ breakdown_value: ['Safari'] }, { breakdown_value: ['Safari'] }])).toEqual(['Safari'])
    expect(breakdownKeys({ count: 1 })).toEqual([])
  })
})
