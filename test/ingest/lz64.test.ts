import LZString from 'lz-string'
import { describe, expect, it } from 'vitest'
import { decompressLz64, Lz64Error } from '../../src/ingest/lz64.js'
import { lzBomb, lzBombOutput, measured, seededRandom } from '../helpers/hostile.js'

const BIG = 1 << 30

function randomText(random: () => number, length: number): string {
  let s = ''
  for (let i = 0; i < length; i++) {
    const r = random()
    // Mostly a small alphabet (so the dictionary is exercised), then any code unit, lone surrogates included.
    s += String.fromCharCode(r < 0.75 ? 0x61 + Math.floor(random() * 4) : Math.floor(random() * 0x10000))
  }
  return s
}

function failure(input: string, maxUnits = BIG): Lz64Error {
  try {
    decompressLz64(input, maxUnits)
  } catch (err) {
    if (err instanceof Lz64Error) return err
    throw err
  }
  throw new Error(`decoded ${JSON.stringify(input)}`)
}

describe('decompressLz64 reads what lz-string writes', () => {
  it.each([
    ['ASCII JSON', JSON.stringify({ event: '$pageview', properties: { $current_url: 'https://example.com/?a=1' } })],
    ['Latin-1 and wider characters', 'größe ½ — ünïcödé'],
    ['astral characters (surrogate pairs)', '😀🎉 𝄞 and text 😀😀😀'],
    ['one character', 'x'],
    ['a long repetitive text', 'abcabcabd'.repeat(5000)],
  ])('%s', (_name, text) => {
    expect(decompressLz64(LZString.compressToBase64(text), BIG)).toBe(text)
  })

  it('decodes the empty string lz-string writes as "Q==="', () => {
    expect(LZString.compressToBase64('')).toBe('Q===')
    expect(decompressLz64('Q===', BIG)).toBe('')
  })

  it('round-trips 500 seeded random texts, lone surrogates kept as they are', () => {
    const random = seededRandom(20261124)
    for (let n = 0; n < 500; n++) {
      const text = randomText(random, Math.floor(random() * 400))
      expect(decompressLz64(LZString.compressToBase64(text), BIG)).toBe(text)
    }
  })

  it('agrees with lz-string on random base64 text wherever lz-string yields a text', () => {
    const random = seededRandom(42)
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
    let compared = 0
    for (let n = 0; n < 5000; n++) {
      let input = ''
      const length = 1 + Math.floor(random() * 40)
      for (let i = 0; i < length; i++) input += alphabet[Math.floor(random() * 64)]
      // A first code of 3 is no stream lz-string writes; it reads it as an empty entry, this decoder refuses it.
      if (alphabet.indexOf(input[0]) >= 48) continue
      let expected: string | null
      try {
        expected = LZString.decompressFromBase64(input)
      } catch {
        expected = null
      }
      let actual: string | null
      try {
        actual = decompressLz64(input, BIG)
      } catch {
        actual = null
      }
      if (expected) {
        compared++
        expect(actual).toBe(expected)
      } else {
        // lz-string answers null or '' for data it cannot read: nothing here either.
        expect(actual ?? '').toBe('')
      }
    }
    expect(compared).toBeGreaterThan(300)
  })
})

describe('decompressLz64 on hostile input', () => {
  it('builds the test bomb in lz-string format', () => {
    expect(LZString.decompressFromBase64(lzBomb(40))).toBe('a'.repeat(lzBombOutput(40)))
    expect(decompressLz64(lzBomb(40), BIG)).toBe('a'.repeat(lzBombOutput(40)))
  })

  it('stops a quadratic bomb at the cap, at once', async () => {
    // 23 KB of input that lz-string would turn into 50 million characters.
    const bomb = lzBomb(10_000)
    expect(lzBombOutput(10_000)).toBeGreaterThan(50_000_000)
    const { result: err, cpuMs } = await measured(() => failure(bomb, 20 * 1024 * 1024))
    expect(cpuMs).toBeLessThan(1000)
    expect(err.isTooLarge).toBe(true)
    expect(err.message).toBe(`decompresses past ${20 * 1024 * 1024} characters`)
  })

  it('refuses a bomb before writing any of its output', () => {
    // The benchmark's 250 KB bomb (~4·10⁹ characters): the measuring pass refuses it having allocated only the
    // dictionary's lengths (a writing decoder would hold the 20 MiB cap's worth of output by then).
    const bomb = lzBomb(100_000)
    for (let i = 0; i < 3; i++) {
      const before = process.memoryUsage().arrayBuffers
      expect(failure(bomb, 20 * 1024 * 1024).isTooLarge).toBe(true)
      expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(1024 * 1024)
    }
  })

  it('accepts output exactly at the cap and refuses one character more', () => {
    const text = 'abc'.repeat(1000)
    const packed = LZString.compressToBase64(text)
    expect(decompressLz64(packed, 3000)).toBe(text)
    expect(failure(packed, 2999).isTooLarge).toBe(true)
  })

  it('refuses data cut before its end marker', () => {
    const packed = LZString.compressToBase64('hello hello hello world')
    const err = failure(packed.slice(0, 4))
    expect(err.isTooLarge).toBe(false)
    expect(err.message).toBe('data ends before its end marker')
  })

  it('refuses a code past the dictionary', () => {
    // Literal 'a' (bits 00 + 8), then code 7 in 3 bits: the dictionary holds entries up to 3, 4 is the next.
    const err = failure('IYQ=')
    expect(err.message).toMatch(/names no dictionary entry|ends before its end marker/)
    expect(err.isTooLarge).toBe(false)
  })

  it('refuses characters outside the alphabet', () => {
    expect(failure('AA*A').message).toBe('unexpected character at offset 2')
  })
})
