/**
 * lz-string's `decompressFromBase64`, rewritten to be safe on untrusted input. lz-string builds each dictionary
 * entry as a new string one character longer than the last, so a short hostile body decompresses to output (and a
 * dictionary) quadratic in its length before anyone can look at the size: 250 KB runs a process out of heap.
 *
 * Here every dictionary entry is a (start, length) slice of the output, and the stream is read twice: once to
 * measure the output (lengths only, nothing written; refused the moment it passes `maxUnits`), then to write it
 * into one typed array of exactly that size. The work one body can cause is linear: bits read are bounded by the
 * input (at most one code past its end, as lz-string reads), and units written by the cap — and a body over the
 * cap writes nothing: a 250 KB bomb is refused after reading the ~6,500 codes that name 20 Mi characters.
 *
 * The format (lz-string 1.x): a stream of codes, each `numBits` wide, read from the base64 characters' highest bit
 * first and assembled lowest bit first. Code 0 and 1 carry an 8- and 16-bit literal, 2 ends the stream, anything
 * else names a dictionary entry (or, one past the end, the previous entry plus its own first character); after
 * each entry the previous one plus the first character of this one joins the dictionary. The code width grows by
 * one bit each time the dictionary doubles.
 */

import { endianness } from 'node:os'

export class Lz64Error extends Error {
  override readonly name = 'Lz64Error'
  constructor(
    message: string,
    /** The output passed the cap (rather than the data being malformed). */
    readonly isTooLarge: boolean,
  ) {
    super(message)
  }
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
// Each character's six bits reversed, so that the stream reads as plain little-endian bits; -1 outside the alphabet.
// '=' reads as zero bits, as in lz-string (its index 64 has no bit among the low six).
const REVERSED = new Int8Array(128).fill(-1)
for (let i = 0; i < 64; i++) {
  let r = 0
  for (let b = 0; b < 6; b++) if (i & (1 << b)) r |= 1 << (5 - b)
  REVERSED[ALPHABET.charCodeAt(i)] = r
}
REVERSED['='.charCodeAt(0)] = 0

// Codes wider than this cannot occur below a 2^25-unit output; the 31-bit reader stays exact up to it.
const MAX_CODE_BITS = 26
const TEXT_CHUNK = 8192
const IS_LITTLE_ENDIAN = endianness() === 'LE'

/** Decompresses lz-string base64 text into at most `maxUnits` UTF-16 code units, or throws {@link Lz64Error}. */
export function decompressLz64(input: string, maxUnits: number): string {
  // First pass: the output's length and width from the codes alone, writing nothing. A bomb is refused here after
  // reading the few thousand codes that name its cap's worth of output: microseconds, and no memory but the
  // dictionary's lengths. A valid body is then written once into a buffer of exactly its size.
  const size = walk(input, maxUnits, null)
  if (size.units === 0) return ''
  const out = size.wide ? new Uint16Array(size.units) : new Uint8Array(size.units)
  walk(input, maxUnits, out)
  return toText(out, size.units)
}

/**
 * Reads the code stream once. With `out` null it only measures (and checks the cap); with `out` (as large as the
 * measure said) it writes the output too. One loop for both, so the two passes cannot disagree on the format.
 */
function walk(input: string, maxUnits: number, out: Uint8Array | Uint16Array | null): { units: number; wide: boolean } {
  const length = input.length
  const endBits = length * 6
  let acc = 0
  let accBits = 0
  let nextChar = 0
  let consumed = 0

  const read = (n: number): number => {
    while (accBits < n) {
      // Past the end lz-string reads zeros; it notices only before the next code.
      const code = nextChar < length ? input.charCodeAt(nextChar) : 0x3d
      const bits = code < 128 ? REVERSED[code] : -1
      if (bits < 0) throw new Lz64Error(`unexpected character at offset ${nextChar}`, false)
      acc |= bits << accBits
      accBits += 6
      nextChar++
    }
    const value = acc & ((1 << n) - 1)
    acc >>>= n
    accBits -= n
    consumed += n
    return value
  }

  let outLength = 0
  let wide = false
  const reserve = (n: number) => {
    if (outLength + n > maxUnits) throw new Lz64Error(`decompresses past ${maxUnits} characters`, true)
  }
  const writeLiteral = (unit: number) => {
    reserve(1)
    if (unit > 0xff) wide = true
    if (out) out[outLength] = unit
  }

  // Entries 0–2 stand for the codes of the same numbers and are never read. Every entry is a slice of the output
  // (`starts` matter only when writing).
  let starts = new Int32Array(1024)
  let lengths = new Int32Array(1024)
  let dictSize = 3
  const addEntry = (start: number, len: number) => {
    if (dictSize === lengths.length) {
      const grownStarts = new Int32Array(dictSize * 2)
      grownStarts.set(starts)
      starts = grownStarts
      const grownLengths = new Int32Array(dictSize * 2)
      grownLengths.set(lengths)
      lengths = grownLengths
    }
    starts[dictSize] = start
    lengths[dictSize] = len
    dictSize++
  }

  if (length === 0) throw new Lz64Error('no data', false)
  const first = read(2)
  if (first === 2) return { units: 0, wide: false }
  if (first === 3) throw new Lz64Error('stream does not start with a literal', false)
  writeLiteral(read(first === 0 ? 8 : 16))
  outLength++
  addEntry(0, 1)
  // The previous entry: always the last thing written, so it ends at `outLength`.
  let wStart = 0
  let wLength = 1
  let numBits = 3
  let enlargeIn = 4

  for (;;) {
    if (consumed >= endBits) throw new Lz64Error('data ends before its end marker', false)
    if (numBits > MAX_CODE_BITS) throw new Lz64Error('dictionary grows past the supported size', true)
    let code = read(numBits)
    if (code === 2) break
    let isLiteral = false
    if (code < 2) {
      writeLiteral(read(code === 0 ? 8 : 16))
      addEntry(outLength, 1)
      code = dictSize - 1
      isLiteral = true
      enlargeIn--
    }
    if (enlargeIn === 0) {
      enlargeIn = 2 ** numBits
      numBits++
    }

    const entryStart = outLength
    let entryLength: number
    // Copies use set(subarray): V8's copyWithin moves one element at a time, 20× slower. No copy overlaps its
    // source: every entry lies wholly in what was written before.
    if (isLiteral) {
      entryLength = 1
    } else if (code < dictSize) {
      entryLength = lengths[code]
      reserve(entryLength)
      if (out) out.set(out.subarray(starts[code], starts[code] + entryLength), outLength)
    } else if (code === dictSize) {
      entryLength = wLength + 1
      reserve(entryLength)
      if (out) {
        out.set(out.subarray(wStart, wStart + wLength), outLength)
        out[outLength + wLength] = out[wStart]
      }
    } else {
      throw new Lz64Error(`code ${code} names no dictionary entry`, false)
    }
    outLength += entryLength

    // The previous entry plus this one's first character: a slice of the output, since this one follows it.
    addEntry(wStart, wLength + 1)
    enlargeIn--
    wStart = entryStart
    wLength = entryLength
    if (enlargeIn === 0) {
      enlargeIn = 2 ** numBits
      numBits++
    }
  }
  return { units: outLength, wide }
}

function toText(units: Uint8Array | Uint16Array, length: number): string {
  if (units instanceof Uint8Array) return Buffer.from(units.buffer, 0, length).toString('latin1')
  // Code units as they are, lone surrogates included (as lz-string returns them).
  if (IS_LITTLE_ENDIAN) return Buffer.from(units.buffer, 0, length * 2).toString('utf16le')
  const parts: string[] = []
  for (let i = 0; i < length; i += TEXT_CHUNK) {
    parts.push(String.fromCharCode.apply(null, units.subarray(i, Math.min(length, i + TEXT_CHUNK)) as never))
  }
  return parts.join('')
}
