// Hostile inputs for the public endpoints, built by hand so their size and effect are known exactly.
import { sql } from 'kysely'
import type { TestApp } from './app.js'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

/**
 * An lz-string base64 stream whose output grows quadratically: one literal 'a', then `codes` codes that each name
 * the entry about to be added (the previous entry plus its first character), so the pieces are 'a', 'aa', 'aaa', …
 * and the output is (codes + 1)(codes + 2) / 2 characters. Written in lz-string's own bit order and padding.
 */
export function lzBomb(codes: number): string {
  let out = ''
  let value = 0
  let position = 0
  const write = (bits: number, n: number) => {
    let v = bits
    for (let i = 0; i < n; i++) {
      value = (value << 1) | (v & 1)
      v >>= 1
      if (position === 5) {
        out += ALPHABET[value]
        value = 0
        position = 0
      } else {
        position++
      }
    }
  }
  write(0, 2)
  write(0x61, 8)
  let dictSize = 4
  let numBits = 3
  let enlargeIn = 4
  for (let k = 0; k < codes; k++) {
    write(dictSize, numBits)
    dictSize++
    enlargeIn--
    if (enlargeIn === 0) {
      enlargeIn = 2 ** numBits
      numBits++
    }
  }
  write(2, numBits)
  // lz-string's flush: zero bits up to and including the next full character.
  for (;;) {
    value <<= 1
    if (position === 5) {
      out += ALPHABET[value]
      break
    }
    position++
  }
  return out + '='.repeat((4 - (out.length % 4)) % 4)
}

/** Characters an {@link lzBomb} of `codes` codes decompresses to. */
export const lzBombOutput = (codes: number) => ((codes + 1) * (codes + 2)) / 2

/** JSON text of `levels` nested objects `{"a":{"a":…{}}}`: nesting depth `levels`. */
export function nestedObjects(levels: number): string {
  return `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`
}

/** JSON text of `levels` nested arrays `[[…[]]]`. */
export function nestedArrays(levels: number): string {
  return `${'['.repeat(levels)}${']'.repeat(levels)}`
}

/** mulberry32: a small seeded generator in [0, 1), so a failing run can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed | 0
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

/**
 * Runs `run` and reports its wall time and the process's CPU time meanwhile. Limits are asserted on CPU time:
 * it is what one request costs the server, and it does not grow when other work shares the machine's cores.
 */
export async function measured<T>(run: () => Promise<T> | T): Promise<{ result: T; cpuMs: number; wallMs: number }> {
  const cpu = process.cpuUsage()
  const started = performance.now()
  const result = await run()
  const used = process.cpuUsage(cpu)
  return { result, cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - started }
}

// Every table a capture, /flags or management request may write to.
const WRITTEN_TABLES = [
  'persons',
  'person_distinct_ids',
  'groups',
  'group_type_mappings',
  'event_definitions',
  'property_definitions',
  'event_properties',
  'usage_events',
  'flag_request_usage',
  'feature_flags',
  'cohorts',
  'cohort_static_members',
  'activity_log',
] as const

/** Row counts of every store a request may write to (background writes flushed first), to compare around one. */
export async function footprint(t: TestApp): Promise<Record<string, number>> {
  await t.burrow.ingest.flushBackground()
  await t.burrow.services.flagQuota.flush()
  const counts: Record<string, number> = {}
  for (const table of WRITTEN_TABLES) {
    const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM ${sql.table(table)}`.execute(t.burrow.meta.db)
    counts[table] = Number(rows[0].n)
  }
  const events = await t.burrow.events.query<[string]>('SELECT toString(count()) FROM events')
  counts.events = Number(events.rows[0][0])
  return counts
}
