/**
 * lz-string's `decompressFromBase64`, rewritten to be safe on untrusted input. lz-string builds each dictionary
 * entry as a new string one character longer than the last, so a short hostile body decompresses to output (and a
 * dictionary) quadratic in its length before anyone can look at the size: 250 KB runs a process out of heap.
 *
 * Here every dictionary entry is a (start, length) slice of the output, which is one growing `Uint16Array` that is
 * charged as it is written and refused the moment it passes `maxUnits`. The work one body can cause is linear: bits
 * read are bounded by the input (at most one code past its end, as lz-string reads), and units written by the cap.
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
const FIRST_CAPACITY = 4096
const TEXT_CHUNK = 8192
const IS_LITTLE_ENDIAN = endianness() === 'LE'

/** Decompresses lz-string base64 text into at most `maxUnits` UTF-16 code units, or throws {@link Lz64Error}. */
export function decompressLz64(input: string, maxUnits: number): string {
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

  // One byte per unit until a literal needs two: most payloads are ASCII JSON, half the memory and a fast decode.
  let out: Uint8Array | Uint16Array = new Uint8Array(Math.min(FIRST_CAPACITY, Math.max(1, maxUnits)))
  let outLength = 0
  // Copies use set(subarray): V8's copyWithin moves one element at a time, 20× slower. No copy overlaps its
  // source: every entry lies wholly in what was written before.
  const resize = (capacity: number, wide: boolean) => {
    const grown = wide ? new Uint16Array(capacity) : new Uint8Array(capacity)
    grown.set(out.subarray(0, outLength))
    out = grown
  }
  const reserve = (n: number) => {
    const needed = outLength + n
    if (needed > maxUnits) throw new Lz64Error(`decompresses past ${maxUnits} characters`, true)
    if (needed > out.length) resize(Math.min(maxUnits, Math.max(needed, out.length * 2)), out instanceof Uint16Array)
  }
  const writeLiteral = (unit: number) => {
    reserve(1)
    if (unit > 0xff && out instanceof Uint8Array) resize(out.length, true)
    out[outLength] = unit
  }

  // Entries 0–2 stand for the codes of the same numbers and are never read.
  let starts = new Int32Array(1024)
  let lengths = new Int32Array(1024)
  let dictSize = 3
  const addEntry = (start: number, len: number) => {
    if (dictSize === starts.length) {
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
  if (first === 2) return ''
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
    if (isLiteral) {
      entryLength = 1
    } else if (code < dictSize) {
      entryLength = lengths[code]
      reserve(entryLength)
      out.set(out.subarray(starts[code], starts[code] + entryLength), outLength)
    } else if (code === dictSize) {
      entryLength = wLength + 1
      reserve(entryLength)
      out.set(out.subarray(wStart, wStart + wLength), outLength)
      out[outLength + wLength] = out[wStart]
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
  return toText(out, outLength)
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
