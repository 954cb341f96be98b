import { sha1Top60 } from './sha1.js'
import type { FlagVariant } from './types.js'

// PostHog divides by 2^60 - 1 (0xFFFFFFFFFFFFFFF); as a double that constant is exactly 2^60.
const LONG_SCALE = 2 ** 60

/**
 * PostHog's bucketing hash: the top 60 bits of SHA-1(prefix + identifier + salt) (its first 15 hex digits)
 * as a fraction of 2^60. The integer is rounded to a double once and divided once, as the server does.
 */
export function hash01(prefix: string, identifier: string, salt = ''): number {
  parts[0] = prefix
  parts[1] = identifier
  parts[2] = salt
  return sha1Top60(parts) / LONG_SCALE
}
const parts = ['', '', '']
const flagParts = ['', '.', '', '']

/** Rollout/variant hash of a flag; the server short-circuits an empty identifier to 0. */
export function flagHash(flagKey: string, identifier: string, salt: '' | 'variant'): number {
  if (identifier === '') return 0
  flagParts[0] = flagKey
  flagParts[2] = identifier
  flagParts[3] = salt
  return sha1Top60(flagParts) / LONG_SCALE
}

/** Holdout hash: no empty-identifier short-circuit. */
export function holdoutHash(identifier: string): number {
  return hash01('holdout-', identifier, '')
}

/** Inclusive threshold: a hash equal to the rollout fraction is in. */
export function isWithinRollout(hash: number, rolloutPercentage: number): boolean {
  return hash <= rolloutPercentage / 100
}

/** First variant whose running share exceeds the hash (strict); null when the shares fall short. */
export function pickVariant(hash: number, variants: readonly FlagVariant[]): string | null {
  let cumulative = 0
  for (const variant of variants) {
    cumulative += variant.rollout_percentage / 100
    if (hash < cumulative) return variant.key
  }
  return null
}
