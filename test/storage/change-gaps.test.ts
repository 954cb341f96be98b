// Finding change notifications that never arrived, from the numbers each process gives what it publishes and the
// heads it writes: late ones get one beat, lost ones drop everything at the next beat, the first beat only learns
// where everyone stands, and hostile numbers are bounded.
import { describe, expect, it } from 'vitest'
import { createGapTracker } from '../../src/storage/meta/change-gaps.js'

const heads = (entries: Record<string, number>) => new Map(Object.entries(entries))

describe('change gap tracker', () => {
  it('reports nothing while every notification arrives, in order or crossed within a beat', () => {
    const g = createGapTracker()
    expect(g.beat(heads({ a: 4 }))).toBe(false) // the first beat learns that a is at 4
    g.heard('a', 5)
    g.heard('a', 7) // 6 is skipped for now
    g.heard('a', 6) // … and arrives
    expect(g.beat(heads({ a: 7 }))).toBe(false)
    expect(g.beat(heads({ a: 7 }))).toBe(false)
  })

  it('gives a skipped number one beat to arrive, then reports it', () => {
    const g = createGapTracker()
    g.beat(heads({}))
    g.heard('a', 1)
    g.heard('a', 3) // 2 missing from now on
    expect(g.beat(heads({ a: 3 }))).toBe(false) // found missing before this beat: one beat of grace
    expect(g.beat(heads({ a: 3 }))).toBe(true) // still missing: lost
    expect(g.beat(heads({ a: 3 }))).toBe(false) // reported once; everything was dropped
  })

  it('reports a head that is still ahead of what arrived one beat after it was read', () => {
    const g = createGapTracker()
    g.beat(heads({ a: 2, b: 0 }))
    g.heard('a', 3)
    // b published 1 and 2, and neither arrived (its only notifications were lost, so no number was skipped).
    expect(g.beat(heads({ a: 3, b: 2 }))).toBe(false) // read now; they may still be on their way
    expect(g.beat(heads({ a: 3, b: 2 }))).toBe(true)
    expect(g.beat(heads({ a: 3, b: 2 }))).toBe(false)
    // A late arrival of what was already counted lost changes nothing.
    g.heard('b', 2)
    expect(g.beat(heads({ a: 3, b: 2 }))).toBe(false)
  })

  it('does not report a notification that arrives between the beat that read its head and the next', () => {
    const g = createGapTracker()
    g.beat(heads({ a: 0 }))
    expect(g.beat(heads({ a: 1 }))).toBe(false)
    g.heard('a', 1)
    expect(g.beat(heads({ a: 1 }))).toBe(false)
  })

  it('learns where everyone stands at the first beat: a process that starts late reports nothing it never had', () => {
    const g = createGapTracker()
    g.heard('a', 41) // heard before the first beat: no number before it counts as missing
    expect(g.beat(heads({ a: 41, b: 900 }))).toBe(false)
    expect(g.beat(heads({ a: 41, b: 900 }))).toBe(false)
    g.heard('b', 901)
    expect(g.beat(heads({ a: 41, b: 901 }))).toBe(false)
  })

  it('bounds what a hostile number can cost: a jump of a billion is one miss, not a billion entries', () => {
    const g = createGapTracker()
    g.beat(heads({}))
    g.heard('x', 1)
    const started = performance.now()
    g.heard('x', 1_000_000_000)
    expect(performance.now() - started).toBeLessThan(500)
    expect(g.beat(heads({ x: 1_000_000_000 }))).toBe(true)
    // Nonsense numbers are ignored.
    g.heard('x', Number.NaN)
    g.heard('x', -5)
    g.heard('x', 2 ** 60)
    expect(g.beat(heads({ x: 1_000_000_000 }))).toBe(false)
  })
})
