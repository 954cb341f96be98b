import { describe, expect, it } from 'vitest'
import { extractDefinitions, isEventLinked } from '../../src/definitions/extract.js'
import { normalizeEvent } from '../../src/ingest/normalize.js'

const NOW = 1_717_243_200
const now = new Date(NOW * 1000)

function event(raw: Record<string, unknown>) {
  return normalizeEvent({ distinct_id: 'u1', ...raw }, 0, { now })
}

describe('extractDefinitions', () => {
  it('types every event property and skips the special ones', () => {
    const ev = event({
      event: 'purchase',
      properties: {
        amount: 9.5,
        currency: 'EUR',
        paid: true,
        paid_at: '2024-05-31T10:00:00Z',
        tags: ['a'],
        $groups: { company: 'acme' },
        $group_0: 'acme',
        $unset: ['x'],
        $set: { plan: 'pro' },
      },
    })
    const defs = extractDefinitions(ev, NOW)
    expect(defs?.eventName).toBe('purchase')
    expect(defs?.eventProperties).toEqual([
      { name: 'amount', type: 'Numeric' },
      { name: 'currency', type: 'String' },
      { name: 'paid', type: 'Boolean' },
      { name: 'paid_at', type: 'DateTime' },
      { name: 'tags', type: null },
    ])
    expect(defs?.personProperties).toEqual([{ name: 'plan', type: 'String' }])
    expect(defs?.groupProperties).toEqual([])
  })

  it('turns $set and $set_once keys into person properties, once each, typed by $set', () => {
    const ev = event({
      event: '$identify',
      $set: { email: 'a@b.c', age: 30 },
      $set_once: { age: 'thirty', first_seen: '2024-01-01' },
    })
    expect(extractDefinitions(ev, NOW)?.personProperties).toEqual([
      { name: 'email', type: 'String' },
      { name: 'age', type: 'Numeric' },
      { name: 'first_seen', type: 'DateTime' },
    ])
  })

  it('includes the person properties lifted from the event', () => {
    const ev = event({ event: '$pageview', properties: { $browser: 'Chrome' } })
    expect(extractDefinitions(ev, NOW)?.personProperties).toEqual([
      { name: '$browser', type: 'String' },
      { name: '$initial_browser', type: 'String' },
    ])
  })

  it('has no person properties when the event skips person processing', () => {
    const ev = event({ event: 'x', $set: { a: 1 }, properties: { $process_person_profile: false } })
    expect(extractDefinitions(ev, NOW)?.personProperties).toEqual([])
  })

  it.each(['$groupidentify', '$group_identify'])('learns only the group properties from %s', (name) => {
    const ev = event({
      event: name,
      properties: { $group_type: 'company', $group_key: 'acme', $group_set: { seats: 10, name: 'Acme' }, other: 1 },
    })
    expect(extractDefinitions(ev, NOW)).toEqual({
      eventName: name,
      eventProperties: [],
      personProperties: [],
      groupProperties: [
        { groupType: 'company', name: 'seats', type: 'Numeric' },
        { groupType: 'company', name: 'name', type: 'String' },
      ],
    })
  })

  it('learns nothing but the event from a group update without a group type', () => {
    const ev = event({ event: '$groupidentify', properties: { $group_set: { seats: 10 } } })
    expect(extractDefinitions(ev, NOW)?.groupProperties).toEqual([])
  })

  it('skips $$plugin_metrics entirely', () => {
    expect(extractDefinitions(event({ event: '$$plugin_metrics', properties: { a: 1 } }), NOW)).toBeNull()
  })

  it('skips an event whose name is over 200 bytes', () => {
    const long = { event: 'é'.repeat(101), properties: {} } // 202 bytes in 101 characters
    expect(extractDefinitions(event(long), NOW)).toBeNull()
    expect(extractDefinitions(event({ event: 'e'.repeat(200) }), NOW)?.eventName).toBe('e'.repeat(200))
  })

  it('drops property names over 200 bytes', () => {
    const ev = event({ event: 'x', properties: { ['p'.repeat(201)]: 1, ok: 1 }, $set: { ['q'.repeat(300)]: 1 } })
    const defs = extractDefinitions(ev, NOW)
    expect(defs?.eventProperties).toEqual([{ name: 'ok', type: 'Numeric' }])
    expect(defs?.personProperties).toEqual([])
  })

  it('skips an event with too many properties', () => {
    const properties = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`p${i}`, i]))
    const ev = event({ event: 'wide', properties })
    // 1 event definition + 30 × (definition + event link) = 61 writes
    expect(extractDefinitions(ev, NOW, { maxUpdates: 60 })).toBeNull()
    expect(extractDefinitions(ev, NOW, { maxUpdates: 61 })?.eventProperties).toHaveLength(30)
  })

  it('replaces NUL characters in names', () => {
    const defs = extractDefinitions(event({ event: 'a\0b', properties: { 'k\0': 1 } }), NOW)
    expect(defs?.eventName).toBe('a\uFFFDb')
    expect(defs?.eventProperties).toEqual([{ name: 'k\uFFFD', type: 'Numeric' }])
  })

  it('keeps feature flag properties as definitions but not as event links', () => {
    const defs = extractDefinitions(event({ event: 'x', properties: { '$feature/beta': true } }), NOW)
    expect(defs?.eventProperties).toEqual([{ name: '$feature/beta', type: 'String' }])
    expect(isEventLinked('$feature/beta')).toBe(false)
    expect(isEventLinked('$feature_enrollment/beta')).toBe(false)
    expect(isEventLinked('$browser')).toBe(true)
  })
})
