// SHA-1 of short UTF-8 inputs, for flag bucketing: the hash's top 60 bits as a number, computed in place.
// /flags hashes dozens of `<flag key>.<distinct id><salt>` strings per request; compared with node:crypto this
// skips the joined input string, the hex digest and its slice (garbage on the hottest path) and the native call.

const block = new Uint8Array(64)
const words = new Int32Array(80)
const encoder = new TextEncoder()
let scratch = new Uint8Array(256)

/** Writes the parts' UTF-8 bytes into `scratch` and returns their length (ASCII is copied directly). */
function encode(parts: readonly string[]): number {
  let length = 0
  for (const part of parts) {
    // Worst case 3 bytes per UTF-16 unit (a surrogate pair's 4 bytes come from 2 units).
    if (length + part.length * 3 > scratch.length) {
      const grown = new Uint8Array(Math.max(scratch.length * 2, length + part.length * 3))
      grown.set(scratch.subarray(0, length))
      scratch = grown
    }
    let ascii = true
    for (let i = 0; i < part.length; i++) {
      const code = part.charCodeAt(i)
      if (code > 0x7f) {
        ascii = false
        break
      }
      scratch[length + i] = code
    }
    length += ascii ? part.length : encoder.encodeInto(part, scratch.subarray(length)).written
  }
  return length
}

/** SHA-1 (FIPS 180-4) over the concatenated parts; returns the first 60 bits as an integer-valued double. */
export function sha1Top60(parts: readonly string[]): number {
  const length = encode(parts)
  const totalBlocks = ((length + 8) >>> 6) + 1
  let h0 = 0x67452301
  let h1 = 0xefcdab89 | 0
  let h2 = 0x98badcfe | 0
  let h3 = 0x10325476
  let h4 = 0xc3d2e1f0 | 0
  for (let b = 0; b < totalBlocks; b++) {
    const offset = b * 64
    for (let i = 0; i < 64; i++) {
      const at = offset + i
      block[i] = at < length ? scratch[at] : at === length ? 0x80 : 0
    }
    if (b === totalBlocks - 1) {
      // Message length in bits, big-endian in the last 8 bytes (inputs here are far below 2^32 bits).
      const bits = length * 8
      block[60] = bits >>> 24
      block[61] = (bits >>> 16) & 0xff
      block[62] = (bits >>> 8) & 0xff
      block[63] = bits & 0xff
    }
    for (let i = 0; i < 16; i++) {
      const j = i * 4
      words[i] = (block[j] << 24) | (block[j + 1] << 16) | (block[j + 2] << 8) | block[j + 3]
    }
    for (let i = 16; i < 80; i++) {
      const x = words[i - 3] ^ words[i - 8] ^ words[i - 14] ^ words[i - 16]
      words[i] = (x << 1) | (x >>> 31)
    }
    let a = h0
    let bb = h1
    let c = h2
    let d = h3
    let e = h4
    let i = 0
    for (; i < 20; i++) {
      const t = (((a << 5) | (a >>> 27)) + ((bb & c) | (~bb & d)) + e + 0x5a827999 + words[i]) | 0
      e = d
      d = c
      c = (bb << 30) | (bb >>> 2)
      bb = a
      a = t
    }
    for (; i < 40; i++) {
      const t = (((a << 5) | (a >>> 27)) + (bb ^ c ^ d) + e + 0x6ed9eba1 + words[i]) | 0
      e = d
      d = c
      c = (bb << 30) | (bb >>> 2)
      bb = a
      a = t
    }
    for (; i < 60; i++) {
      const t = (((a << 5) | (a >>> 27)) + ((bb & c) | (bb & d) | (c & d)) + e + (0x8f1bbcdc | 0) + words[i]) | 0
      e = d
      d = c
      c = (bb << 30) | (bb >>> 2)
      bb = a
      a = t
    }
    for (; i < 80; i++) {
      const t = (((a << 5) | (a >>> 27)) + (bb ^ c ^ d) + e + (0xca62c1d6 | 0) + words[i]) | 0
      e = d
      d = c
      c = (bb << 30) | (bb >>> 2)
      bb = a
      a = t
    }
    h0 = (h0 + a) | 0
    h1 = (h1 + bb) | 0
    h2 = (h2 + c) | 0
    h3 = (h3 + d) | 0
    h4 = (h4 + e) | 0
  }
  // 32 bits of h0 and the top 28 of h1: the exact sum is rounded to a double once, as parsing 15 hex digits is.
  return (h0 >>> 0) * 2 ** 28 + (h1 >>> 4)
}
