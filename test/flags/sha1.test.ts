import crypto from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { sha1Top60 } from '../../src/flags/sha1.js'

/** The reference: the first 15 hex digits of node:crypto's SHA-1, parsed as PostHog's servers parse them. */
const reference = (text: string) =>
  Number.parseInt(crypto.createHash('sha1').update(text, 'utf8').digest('hex').slice(0, 15), 16)

describe('sha1Top60', () => {
  const inputs = [
    '',
    'a',
    'abc',
    'flag-key.distinct-id',
    'beta-feature.user_12345variant',
    'holdout-some-user',
    // Padding edges: 55 bytes fit one block with the length, 56 need a second block; 64 and 119/120 likewise.
    ...[54, 55, 56, 57, 63, 64, 65, 119, 120, 121, 128, 300, 1000].map((n) => 'x'.repeat(n)),
    'flag.ünïcødé-person',
    'flag.用户-42',
    'flag.emoji-😀-person',
    'flag.lone-\ud800-surrogate',
    `flag.${'é'.repeat(200)}`,
  ]

  it.each(inputs.map((s) => [s.length > 40 ? `${s.slice(0, 20)}… (${s.length})` : s, s]))(
    'matches node:crypto for %s',
    (_label, input) => {
      expect(sha1Top60([input])).toBe(reference(input))
    },
  )

  it('hashes the concatenation of its parts', () => {
    for (let i = 0; i < 500; i++) {
      const parts = [`flag-${i}`, '.', `user-${i * 7919}`, i % 2 ? 'variant' : '']
      expect(sha1Top60(parts)).toBe(reference(parts.join('')))
    }
  })

  it('handles an input longer than its scratch space, then short ones again', () => {
    const long = `k.${'ü'.repeat(5000)}`
    expect(sha1Top60([long])).toBe(reference(long))
    expect(sha1Top60(['k.', 'short'])).toBe(reference('k.short'))
  })
})
