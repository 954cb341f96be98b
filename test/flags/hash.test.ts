import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { flagHash, hash01, holdoutHash, isWithinRollout, pickVariant } from '../../src/flags/hash.js'
import { evaluateFlag, normalizeDistinctId } from '../../src/flags/matcher.js'
import type { EvaluationContext, FlagDefinition } from '../../src/flags/types.js'

const vectors = JSON.parse(readFileSync(new URL('../fixtures/flag_vectors.json', import.meta.url), 'utf8')) as Record<
  string,
  any
>

function binary64Hex(x: number): string {
  const view = new DataView(new ArrayBuffer(8))
  view.setFloat64(0, x)
  return view.getBigUint64(0).toString(16).padStart(16, '0')
}

function context(distinctId: string): EvaluationContext {
  return { distinctId, personProperties: {}, groups: {}, groupProperties: {}, groupTypeMapping: {}, cohorts: new Map() }
}

describe('hash01', () => {
  it.each((vectors.raw_hash_vectors as any[]).map((v: any): [unknown, any] => [v.id, v]))(
    'reproduces %s bit for bit',
    (_id, v: any) => {
      const hash = hash01(v.prefix, v.identifier, v.salt)
      expect(hash).toBe(v.hash01)
      expect(binary64Hex(hash)).toBe(v.hash01_binary64_hex)
      for (const check of v.rollout_checks ?? []) {
        const included = check.rollout_percentage === 100 || isWithinRollout(hash, check.rollout_percentage)
        expect(included, `rollout ${check.rollout_percentage}`).toBe(check.included)
      }
      for (const check of v.holdout_checks ?? []) {
        expect(check.exclusion_percentage >= 100 || hash <= check.exclusion_percentage / 100).toBe(check.member)
      }
      if (v.variant_check) expect(pickVariant(hash, v.variant_check.variants)).toBe(v.variant_check.selected)
      if (v.identifier_before_truncation) expect(normalizeDistinctId(v.identifier_before_truncation)).toBe(v.identifier)
    },
  )

  it('short-circuits an empty identifier to 0 for rollout and variant hashes, but not for holdouts', () => {
    expect(flagHash('beta-search', '', '')).toBe(0)
    expect(flagHash('beta-search', '', 'variant')).toBe(0)
    expect(holdoutHash('')).toBe(hash01('holdout-', ''))
    expect(holdoutHash('')).toBeGreaterThan(0)
  })

  it('stringifies numeric distinct ids', () => {
    expect(normalizeDistinctId(8675309)).toBe('8675309')
    expect(normalizeDistinctId(123.45)).toBe('123.45')
  })
})

describe('rollout threshold', () => {
  it.each((vectors.threshold_vectors as any[]).map((v: any): [unknown, any] => [v.id, v]))('%s', (_id, v: any) => {
    expect(v.rollout_percentage === 100 || isWithinRollout(v.hash01, v.rollout_percentage)).toBe(v.included)
  })
})

describe('variant selection', () => {
  it.each((vectors.variant_vectors as any[]).map((v: any): [unknown, any] => [v.id, v]))('%s', (_id, v: any) => {
    expect(pickVariant(v.hash01, v.variants)).toBe(v.selected)
  })

  it('gives no variant when the shares drift below 1', () => {
    const variants = [
      { key: 'a', rollout_percentage: 1.01 },
      { key: 'b', rollout_percentage: 10.02 },
      { key: 'c', rollout_percentage: 88.97 },
    ]
    const total = variants.reduce((sum, v) => sum + v.rollout_percentage / 100, 0)
    expect(total).toBeLessThan(1)
    expect(pickVariant(total, variants)).toBeNull()
    expect(pickVariant(0.5, variants)).toBe('c')
  })
})

describe('cross-SDK consistency lists', () => {
  const cases = vectors.hash_cases as any[]
  it(`agrees with all ${cases.length} PostHog consistency cases`, () => {
    let checked = 0
    for (const c of cases) {
      const result = evaluateFlag(c.flag as FlagDefinition, context(c.distinct_id))
      expect([c.distinct_id, result.enabled, result.variant]).toEqual([
        c.distinct_id,
        c.expected_enabled,
        c.expected_variant,
      ])
      checked++
    }
    expect(checked).toBe(2000)
  })
})

describe('hash01 over arbitrary identifiers', () => {
  const viaCrypto = (input: string) =>
    Number.parseInt(createHash('sha1').update(input, 'utf8').digest('hex').slice(0, 15), 16) / 2 ** 60

  it('agrees with node:crypto for ASCII, unicode and inputs around the one-block limit', () => {
    const alphabet = 'abcXYZ019-_.@ éü漢😀'
    for (let i = 0; i < 3000; i++) {
      let id = ''
      const length = i % 70
      for (let j = 0; j < length; j++) id += alphabet[(i * 31 + j * 7) % alphabet.length]
      expect(hash01('flag.', id, i % 2 ? 'variant' : '')).toBe(viaCrypto(`flag.${id}${i % 2 ? 'variant' : ''}`))
    }
  })
})
