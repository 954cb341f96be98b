import * as crypto from 'node:crypto'
import type { FlagVariant } from './types.js'

// PostHog divides by 2^60 - 1 (0xFFFFFFFFFFFFFFF); as a double that constant is exactly 2^60.
const LONG_SCALE = 2 ** 60

type OneShotHash = (algorithm: string, data: string, encoding: 'hex') => string
// The one-shot `crypto.hash` (Node ≥ 20.12) is faster than a Hash object per call; hex output beats a
// Buffer here because it avoids an allocation per hash.
const oneShot = (crypto as unknown as { hash?: OneShotHash }).hash
const sha1Hex = oneShot
  ? (input: string) => oneShot('sha1', input, 'hex')
  : (input: string) => crypto.createHash('sha1').update(input, 'utf8').digest('hex')

/**
 * PostHog's bucketing hash: the top 60 bits of SHA-1(prefix + identifier + salt) (its first 15 hex digits)
 * as a fraction of 2^60. The integer is rounded to a double once and divided once, as the server does.
 */
export function hash01(prefix: string, identifier: string, salt = ''): number {
  const input = prefix + identifier + salt
  const top = sha1Top60(input)
  if (top !== undefined) return top / LONG_SCALE
  return Number.parseInt(sha1Hex(input).slice(0, 15), 16) / LONG_SCALE
}

const block = new Int32Array(80)
const utf8 = new TextEncoder()
const bytes = new Uint8Array(64)

/**
 * The top 60 bits of SHA-1 of a short input (one 64-byte block, ≤ 55 bytes of UTF-8), computed here: for the
 * short keys flags hash, a native call costs more than the hash itself. Undefined for longer inputs.
 * h0·2^28 + (h1 >>> 4) is rounded to a double exactly as parseInt of the 15 hex digits is.
 */
function sha1Top60(input: string): number | undefined {
  if (input.length > 55) return undefined
  let length = input.length
  let ascii = true
  for (let i = 0; i < input.length; i++) {
    if (input.charCodeAt(i) > 0x7f) {
      ascii = false
      break
    }
  }
  bytes.fill(0)
  if (ascii) {
    for (let i = 0; i < length; i++) bytes[i] = input.charCodeAt(i)
  } else {
    const encoded = utf8.encode(input)
    if (encoded.length > 55) return undefined
    length = encoded.length
    bytes.set(encoded)
  }
  bytes[length] = 0x80
  const bits = length * 8
  bytes[62] = (bits >>> 8) & 0xff
  bytes[63] = bits & 0xff
  for (let i = 0; i < 16; i++) {
    block[i] = (bytes[i * 4] << 24) | (bytes[i * 4 + 1] << 16) | (bytes[i * 4 + 2] << 8) | bytes[i * 4 + 3]
  }
  for (let i = 16; i < 80; i++) {
    const x = block[i - 3] ^ block[i - 8] ^ block[i - 14] ^ block[i - 16]
    block[i] = (x << 1) | (x >>> 31)
  }
  let a = 0x67452301
  let b = 0xefcdab89 | 0
  let c = 0x98badcfe | 0
  let d = 0x10325476
  let e = 0xc3d2e1f0 | 0
  for (let i = 0; i < 80; i++) {
    let f: number
    let k: number
    if (i < 20) {
      f = (b & c) | (~b & d)
      k = 0x5a827999
    } else if (i < 40) {
      f = b ^ c ^ d
      k = 0x6ed9eba1
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d)
      k = 0x8f1bbcdc | 0
    } else {
      f = b ^ c ^ d
      k = 0xca62c1d6 | 0
    }
    const t = (((a << 5) | (a >>> 27)) + f + e + k + block[i]) | 0
    e = d
    d = c
    c = (b << 30) | (b >>> 2)
    b = a
    a = t
  }
  const h0 = (a + 0x67452301) >>> 0
  const h1 = (b + 0xefcdab89) >>> 0
  return h0 * 0x10000000 + (h1 >>> 4)
}

/** Rollout/variant hash of a flag; the server short-circuits an empty identifier to 0. */
export function flagHash(flagKey: string, identifier: string, salt: '' | 'variant'): number {
  if (identifier === '') return 0
  return hash01(`${flagKey}.`, identifier, salt)
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
