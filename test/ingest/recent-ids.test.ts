import { describe, expect, it } from 'vitest'
import { createRecentIds } from '../../src/ingest/recent-ids.js'

describe('recently written ids', () => {
  it('knows what was added and forgets the oldest first once full', () => {
    const recent = createRecentIds(3)
    for (const id of ['1:a', '1:b', '1:c']) recent.add(id)
    expect(['1:a', '1:b', '1:c', '1:d', '2:a'].map((id) => recent.has(id))).toEqual([true, true, true, false, false])
    recent.add('1:d')
    expect(['1:a', '1:b', '1:c', '1:d'].map((id) => recent.has(id))).toEqual([false, true, true, true])
    // Adding one it holds changes nothing.
    recent.add('1:b')
    recent.add('1:e')
    expect(['1:b', '1:c', '1:d', '1:e'].map((id) => recent.has(id))).toEqual([false, true, true, true])
    expect(recent.size).toBe(3)
  })

  it('agrees with a plain model over many additions, evictions and colliding probes', () => {
    const limit = 1000
    const recent = createRecentIds(limit)
    const order: string[] = []
    const held = new Set<string>()
    // mulberry32: a small seeded generator, so a failure can be replayed.
    let seed = 7
    const next = () => {
      seed = (seed + 0x6d2b79f5) | 0
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
      return (t ^ (t >>> 14)) >>> 0
    }
    for (let n = 0; n < 20_000; n++) {
      const id = `${next() % 3}:${(next() % 4000).toString(16)}`
      recent.add(id)
      if (!held.has(id)) {
        held.add(id)
        order.push(id)
        if (order.length > limit) held.delete(order.shift() as string)
      }
      if (n % 97 === 0) {
        for (const probe of [id, order[0], `${next() % 3}:${(next() % 4000).toString(16)}`]) {
          expect(recent.has(probe)).toBe(held.has(probe))
        }
      }
    }
    for (const id of order) expect(recent.has(id)).toBe(true)
    expect(order.length).toBe(limit)
    expect(recent.size).toBe(limit)
  })
})
