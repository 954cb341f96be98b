import { describe, expect, it } from 'vitest'
import { createPersonCache } from '../../src/persons/cache.js'
import type { PersonRow } from '../../src/persons/store.js'

const person = (id: string): PersonRow => ({
  id,
  team_id: 1,
  properties: '{}',
  is_identified: 0,
  version: 0,
  created_at: '2026-01-01T00:00:00.000Z',
})

describe('person cache', () => {
  it('serves repeated look-ups from memory until invalidated or expired', async () => {
    let calls = 0
    let current: PersonRow | undefined = person('a')
    const cache = createPersonCache({
      persons: {
        getByDistinctId: async () => {
          calls++
          return current
        },
      },
      ttlMs: 50,
    })
    expect((await cache.getByDistinctId(1, 'd1'))?.id).toBe('a')
    expect((await cache.getByDistinctId(1, 'd1'))?.id).toBe('a')
    expect(calls).toBe(1)

    current = person('b')
    cache.invalidate(1, ['d1'])
    expect((await cache.getByDistinctId(1, 'd1'))?.id).toBe('b')
    expect(calls).toBe(2)

    // Another project's distinct id is another entry.
    await cache.getByDistinctId(2, 'd1')
    expect(calls).toBe(3)

    current = undefined
    // Entries live 75–125% of the time limit (jittered), so 70 ms is past any of them.
    await new Promise((r) => setTimeout(r, 70))
    expect(await cache.getByDistinctId(1, 'd1')).toBeUndefined()
    expect(calls).toBe(4)
  })

  it('keeps the same object when an expired entry is read again unchanged, and takes a changed one', async () => {
    let current: PersonRow = person('a')
    const cache = createPersonCache({ persons: { getByDistinctId: async () => ({ ...current }) }, ttlMs: 20 })
    const first = await cache.getByDistinctId(1, 'd1')
    await new Promise((r) => setTimeout(r, 30))
    const reread = await cache.getByDistinctId(1, 'd1')
    expect(reread).toBe(first)

    current = { ...current, properties: '{"plan":"pro"}', version: 1 }
    await new Promise((r) => setTimeout(r, 30))
    const changed = await cache.getByDistinctId(1, 'd1')
    expect(changed).not.toBe(first)
    expect(changed?.properties).toBe('{"plan":"pro"}')
  })
})
