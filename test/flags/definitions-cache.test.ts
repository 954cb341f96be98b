import { describe, expect, it } from 'vitest'
import { createDefinitionsCache } from '../../src/flags/cache.js'
import type { FlagDefinition } from '../../src/flags/types.js'

const flag = (rollout: number): FlagDefinition => ({
  id: 1,
  key: 'f',
  active: true,
  filters: { groups: [{ properties: [], rollout_percentage: rollout }] },
})

describe('definitions cache refresh', () => {
  it('keeps the loaded object when a refresh after expiry finds the same rows, and replaces it when they changed', async () => {
    let rollout = 50
    let loads = 0
    let clock = 0
    const cache = createDefinitionsCache({
      source: {
        flags: async () => {
          loads++
          return [flag(rollout)]
        },
        cohorts: async () => [],
        groupTypeMapping: async () => ({}),
      },
      projectByToken: async () => undefined,
      now: () => clock,
      ttlMs: 100,
    })
    const first = await cache.definitions(1)
    clock = 150
    const refreshed = await cache.definitions(1)
    expect(loads).toBe(2)
    expect(refreshed).toBe(first)

    // Changed by another process (no invalidation here): the refresh brings the new rows.
    rollout = 10
    clock = 300
    const changed = await cache.definitions(1)
    expect(changed).not.toBe(first)
    expect(changed.flags[0].filters.groups?.[0].rollout_percentage).toBe(10)

    // An invalidation never hands back the old object, even for equal rows.
    cache.invalidate(1)
    const afterInvalidate = await cache.definitions(1)
    expect(afterInvalidate).not.toBe(changed)
  })

  it('notices a flag that starts comparing dates', async () => {
    let operator = 'exact'
    let clock = 0
    const cache = createDefinitionsCache({
      source: {
        flags: async () => [
          {
            ...flag(100),
            filters: { groups: [{ properties: [{ key: 'signed_up', type: 'person', value: '-7d', operator }] }] },
          },
        ],
        cohorts: async () => [],
        groupTypeMapping: async () => ({}),
      },
      projectByToken: async () => undefined,
      now: () => clock,
      ttlMs: 100,
    })
    expect((await cache.definitions(1)).readsClock).toBe(false)
    operator = 'is_date_after'
    clock = 200
    expect((await cache.definitions(1)).readsClock).toBe(true)
  })
})
