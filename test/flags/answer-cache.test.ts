import { describe, expect, it } from 'vitest'
import { AnswerCache, type AnswerCacheLimits, ByteBudget } from '../../src/flags/answer-cache.js'

const LIMITS: AnswerCacheLimits = { maxKeyChars: 200, planBytes: 10_000, teamBytes: 15_000, totalBytes: 25_000 }

// With these sizes a 4-character key costs 96 + 8 = 104 bytes to remember and 104 + 200 + 72 = 376 bytes as an
// answer for one flag.
const key = (i: number) => String(i).padStart(4, '0')

describe('answer cache', () => {
  it('keeps an answer from the second time its inputs arrive', () => {
    const cache = new AnswerCache<string>(LIMITS, new ByteBudget(LIMITS.teamBytes))
    cache.offer('k001', 'first', 1)
    expect(cache.get('k001')).toBeUndefined()
    expect(cache.bytes).toBe(104)
    cache.offer('k001', 'second', 1)
    expect(cache.get('k001')).toBe('second')
    expect(cache.bytes).toBe(376)
    cache.offer('k001', 'third', 1)
    expect(cache.get('k001')).toBe('third')
    expect(cache.bytes).toBe(376)
  })

  it('counts what an answer keeps alive besides itself', () => {
    const cache = new AnswerCache<string>(LIMITS, new ByteBudget(LIMITS.teamBytes))
    cache.offer('k001', 'a', 1, 5_000)
    cache.offer('k001', 'b', 1, 5_000)
    expect(cache.bytes).toBe(5_376)
    cache.offer('k002', 'a', 1, 5_000)
    cache.offer('k002', 'b', 1, 5_000)
    expect(cache.get('k001')).toBeUndefined()
    expect(cache.get('k002')).toBe('b')
    // An answer larger than the whole plan is not kept, and pushes nothing out.
    cache.offer('k003', 'a', 1, 20_000)
    cache.offer('k003', 'b', 1, 20_000)
    expect(cache.get('k003')).toBeUndefined()
    expect(cache.get('k002')).toBe('b')
    expect(cache.bytes).toBe(5_376)
  })

  it('never remembers inputs longer than the key limit', () => {
    const cache = new AnswerCache<string>(LIMITS, new ByteBudget(LIMITS.teamBytes))
    const large = 'x'.repeat(201)
    cache.offer(large, 'a', 1)
    cache.offer(large, 'b', 1)
    expect(cache.get(large)).toBeUndefined()
    expect(cache.bytes).toBe(0)
  })

  it('stays within its plan limit, forgetting its oldest answers first', () => {
    const cache = new AnswerCache<string>(LIMITS, new ByteBudget(LIMITS.teamBytes))
    for (let i = 0; i < 40; i++) {
      cache.offer(key(i), 'a', 1)
      cache.offer(key(i), 'b', 1)
    }
    // 10,000 bytes hold 26 answers of 376 bytes; each time the next does not fit, the oldest go until 376 + 625
    // bytes (a sixteenth of the plan) are free: three answers. 26 - 3 + 1 at keys 26, 29, 32, 35 and 38.
    expect(cache.size).toBe(25)
    expect(cache.bytes).toBe(25 * 376)
    expect(cache.get(key(14))).toBeUndefined()
    expect(cache.get(key(15))).toBe('b')
    expect(cache.get(key(39))).toBe('b')
  })

  it('gives first sightings a quarter of the plan, so a stream of one-off inputs keeps most answers', () => {
    const cache = new AnswerCache<string>(LIMITS, new ByteBudget(LIMITS.teamBytes))
    for (let i = 0; i < 40; i++) {
      cache.offer(key(i), 'a', 1)
      cache.offer(key(i), 'b', 1)
    }
    for (let i = 100; i < 1_000; i++) cache.offer(key(i), 'once', 1)
    // 24 keys of 104 bytes fit in 2,500 (past that the older half goes); the 25 answers (9,400 bytes) give way
    // two at a time (104 + 625 bytes to free) until 19 of them and 24 keys fit: 7,144 + 2,496 <= 10,000.
    expect(cache.bytes).toBe(19 * 376 + 24 * 104)
    expect(cache.size).toBe(19)
    expect(cache.get(key(20))).toBeUndefined()
    expect(cache.get(key(21))).toBe('b')
    // A returning input among the recent ones is kept on its second sighting.
    cache.offer(key(999), 'twice', 1)
    expect(cache.get(key(999))).toBe('twice')
    expect(cache.bytes).toBeLessThanOrEqual(LIMITS.planBytes)
  })

  it('shares the team limit between plans and the process limit between teams', () => {
    const all = new ByteBudget(LIMITS.totalBytes)
    const teams = [new ByteBudget(LIMITS.teamBytes, all), new ByteBudget(LIMITS.teamBytes, all)]
    const plans = [...teams, ...teams].map((team) => new AnswerCache<string>(LIMITS, team))
    for (let i = 0; i < 2_000; i++) {
      const plan = plans[i % plans.length]
      plan.offer(key(i), 'a', 1)
      plan.offer(key(i), 'b', 1)
      expect(plans[0].bytes + plans[2].bytes).toBe(teams[0].used)
      expect(teams[0].used).toBeLessThanOrEqual(LIMITS.teamBytes)
      expect(teams[0].used + teams[1].used).toBe(all.used)
      expect(all.used).toBeLessThanOrEqual(LIMITS.totalBytes)
    }
    // The last answer offered to each plan is kept.
    for (let i = 1_996; i < 2_000; i++) expect(plans[i % plans.length].get(key(i))).toBe('b')
  })

  it('keeps nothing when the enclosing budgets are spent by others', () => {
    const team = new ByteBudget(400)
    const first = new AnswerCache<string>(LIMITS, team)
    const second = new AnswerCache<string>(LIMITS, team)
    first.offer('k001', 'a', 1)
    first.offer('k001', 'b', 1)
    second.offer('k002', 'a', 1)
    expect(second.bytes).toBe(0)
    expect(first.get('k001')).toBe('b')
  })
})
