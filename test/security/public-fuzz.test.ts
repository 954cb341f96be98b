// Fuzzes the public endpoints (capture, /flags, /decide) with random and mutated SDK payloads in every encoding the
// SDKs use. Whatever arrives, the answer is never a 5xx, a refusal is in PostHog's error shape, and a refused
// request leaves every store as it was.
//
// The CI run takes a few seconds. A long manual run (results in docs/benchmarks.md):
//   BURROW_FUZZ_SECONDS=300 BURROW_FUZZ_SEED=7 npx vitest run test/security/public-fuzz.test.ts
// A failure prints its seed and request number; the same seed replays the same requests.
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { footprint, nestedArrays, nestedObjects, seededRandom } from '../helpers/hostile.js'

const SECONDS = Number(process.env.BURROW_FUZZ_SECONDS ?? 4)
const SEED = Number(process.env.BURROW_FUZZ_SEED ?? 20261124)

let t: TestApp
let token: string
beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_PUBLIC_FAILURES_PER_MINUTE: '0' } })
  token = t.creds.project_api_key
  // Flags and a cohort for /flags to evaluate: properties, variants, groups, a cohort.
  const base = `/api/projects/${t.creds.project_id}`
  const post = (url: string, payload: object) =>
    t.burrow.app.inject({ method: 'POST', url: `${base}${url}`, headers: t.auth, payload })
  const cohort = await post('/cohorts/', {
    name: 'fuzz',
    filters: { properties: { type: 'OR', values: [{ type: 'person', key: 'plan', operator: 'exact', value: 'pro' }] } },
  })
  expect(cohort.statusCode).toBe(201)
  const flags = [
    { key: 'fuzz-simple', filters: { groups: [{ properties: [], rollout_percentage: 50 }] } },
    {
      key: 'fuzz-props',
      filters: {
        groups: [{ properties: [{ key: 'email', type: 'person', operator: 'icontains', value: '@' }] }],
        payloads: { true: '{"a":1}' },
      },
    },
    {
      key: 'fuzz-variants',
      filters: {
        groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohort.json().id }], rollout_percentage: 100 }],
        multivariate: {
          variants: [
            { key: 'a', rollout_percentage: 50 },
            { key: 'b', rollout_percentage: 50 },
          ],
        },
      },
    },
  ]
  for (const flag of flags) expect((await post('/feature_flags/', flag)).statusCode).toBe(201)
}, 60_000)
afterAll(() => t.close())

type Random = () => number

// Mutations may leave lone surrogates, which encodeURIComponent refuses; they travel as U+FFFD.
const uri = (text: string) => encodeURIComponent(text.toWellFormed())

interface Request {
  method: 'GET' | 'POST'
  url: string
  headers: Record<string, string>
  body?: string | Buffer
  /** How it was built, printed when it fails. */
  label: string
}

const CAPTURE_PATHS = ['/i/v0/e/', '/e/', '/batch/', '/capture/', '/track/', '/engage/']
const FLAG_PATHS = ['/flags', '/flags?v=2', '/flags?v=2&config=true', '/flags?v=1', '/decide?v=3', '/decide?v=4']
const SPECIAL_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '$set', '$set_once', '']

function generator(random: Random) {
  const int = (n: number) => Math.floor(random() * n)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]
  const chance = (p: number) => random() < p

  function text(): string {
    switch (int(8)) {
      case 0:
        return ''
      case 1:
        return 'x'.repeat(int(3000))
      case 2: {
        let s = ''
        for (let i = int(20); i > 0; i--) s += String.fromCharCode(int(0x10000))
        return s
      }
      case 3:
        return pick(['\0', '\ud800', '😀', '\\', '"', '\u2028', '{{x}}', "'; DROP TABLE persons; --", '%00', '\n\r\t'])
      case 4:
        return pick(['2026-11-24T10:00:00Z', '2026-11-24', '1795496313', '1795496313558', 'not a date', '9999-99-99'])
      default:
        return pick(['alice', 'bob', 'pro', 'free', 'a@b.c', 'https://example.com/?q=1', '$pageview', 'Chrome'])
    }
  }

  function key(): string {
    if (chance(0.15)) return pick(SPECIAL_KEYS)
    if (chance(0.1)) return text()
    return pick(['plan', 'email', 'name', '$browser', '$current_url', 'utm_source', '$os', 'count', 'nested', 'id'])
  }

  function value(depth: number): unknown {
    const roll = int(depth > 4 ? 6 : 10)
    switch (roll) {
      case 0:
        return null
      case 1:
        return chance(0.5)
      case 2:
        return pick([0, -1, 1.5, 1e308, -1e-308, 2 ** 53 + 1, Number.MAX_SAFE_INTEGER, 1e21])
      case 3:
      case 4:
      case 5:
        return text()
      case 6:
      case 7: {
        const list: unknown[] = []
        for (let i = int(5); i > 0; i--) list.push(value(depth + 1))
        return list
      }
      default:
        return object(depth + 1, int(6))
    }
  }

  function object(depth: number, size: number): Record<string, unknown> {
    // Built from JSON text so that __proto__ stays an own key, as it does when a body is parsed.
    const entries: string[] = []
    for (let i = 0; i < size; i++) entries.push(`${JSON.stringify(key())}:${JSON.stringify(value(depth))}`)
    return JSON.parse(`{${entries.join(',')}}`)
  }

  const distinctId = () => (chance(0.9) ? `fuzz-${int(40)}` : (value(3) as unknown))

  function event(): Record<string, unknown> {
    const name = chance(0.8)
      ? pick(['$pageview', '$identify', '$groupidentify', '$create_alias', 'signup', '$merge_dangerously', '$set'])
      : value(3)
    const properties = object(1, int(8))
    if (chance(0.3)) properties.$set = object(2, int(4))
    if (chance(0.2)) properties.$set_once = object(2, int(4))
    if (chance(0.1)) properties.$unset = chance(0.5) ? [key()] : value(2)
    if (name === '$identify') properties.$anon_distinct_id = distinctId()
    if (name === '$create_alias' || name === '$merge_dangerously') properties.alias = distinctId()
    if (name === '$groupidentify') {
      properties.$group_type = pick(['company', 'team', 'org', 'project', 'unit', 'sixth', text()])
      properties.$group_key = chance(0.8) ? `g-${int(5)}` : value(2)
      properties.$group_set = object(2, int(4))
    }
    if (chance(0.2)) properties.$groups = { company: `g-${int(5)}` }
    if (chance(0.1)) properties.$elements_chain = 'a.link:href="/x"nth-child="1"'
    if (chance(0.1)) properties.$process_person_profile = chance(0.5)
    const ev: Record<string, unknown> = { event: name, properties }
    if (chance(0.7)) ev.distinct_id = distinctId()
    else properties.distinct_id = distinctId()
    if (chance(0.5)) ev.timestamp = chance(0.8) ? new Date(Date.now() - int(1e10)).toISOString() : value(1)
    if (chance(0.3)) ev.uuid = chance(0.7) ? crypto.randomUUID() : text()
    if (chance(0.05)) ev.offset = value(1)
    return ev
  }

  function withToken(target: Record<string, unknown>, field: string) {
    const roll = random()
    if (roll < 0.85) target[field] = token
    else if (roll < 0.92) target[field] = 'phc_not_a_project'
    else if (roll < 0.96) target[field] = value(1)
  }

  function capturePayload(): unknown {
    switch (int(4)) {
      case 0: {
        const ev = event()
        withToken(ev, chance(0.5) ? 'api_key' : 'token')
        return ev
      }
      case 1: {
        const batch = Array.from({ length: 1 + int(6) }, event)
        for (const ev of batch) withToken(ev.properties as Record<string, unknown>, 'token')
        return batch
      }
      case 2: {
        const body: Record<string, unknown> = { batch: Array.from({ length: 1 + int(8) }, event) }
        withToken(body, 'api_key')
        if (chance(0.5)) body.sent_at = chance(0.8) ? new Date().toISOString() : value(1)
        if (chance(0.05)) body.historical_migration = true
        return body
      }
      default: {
        // posthog-js /engage: a person update with top-level $set
        const body: Record<string, unknown> = { $set: object(1, int(4)), distinct_id: distinctId() }
        withToken(body, 'token')
        return body
      }
    }
  }

  function flagsPayload(): unknown {
    const body: Record<string, unknown> = { distinct_id: distinctId() }
    withToken(body, chance(0.7) ? 'token' : 'api_key')
    if (chance(0.6)) body.person_properties = object(1, int(6))
    if (chance(0.3)) body.groups = chance(0.8) ? { company: `g-${int(5)}` } : value(2)
    if (chance(0.3)) body.group_properties = { company: object(2, int(3)) }
    if (chance(0.2)) body.$anon_distinct_id = distinctId()
    if (chance(0.2)) body.flag_keys_to_evaluate = chance(0.8) ? ['fuzz-simple', 'fuzz-props'] : value(2)
    if (chance(0.2)) body.evaluation_runtime = pick(['server', 'client', 'all', text()])
    if (chance(0.1)) body.geoip_disable = value(1)
    return body
  }

  /** Byte- and text-level damage to a body that was well formed. */
  function mutate(text: string): string {
    let s = text
    for (let n = 1 + int(3); n > 0; n--) {
      const at = int(s.length + 1)
      switch (int(7)) {
        case 0:
          s = s.slice(0, at)
          break
        case 1:
          s = s.slice(0, at) + pick(['{', '[', '"', '}', ']', ',', ':', '\\', '\0', 'null']) + s.slice(at)
          break
        case 2:
          s = s.slice(0, at) + s.slice(at + 1 + int(10))
          break
        case 3: {
          const from = int(s.length)
          s = s.slice(0, at) + s.slice(from, from + int(50)) + s.slice(at)
          break
        }
        case 4:
          s = s.slice(0, at) + String.fromCharCode(int(0x10000)) + s.slice(at + 1)
          break
        case 5: {
          // A value swapped for deep nesting, within the limit or past it.
          const levels = pick([50, 127, 129, 1000, 7000])
          const colon = s.indexOf(':', at)
          if (colon >= 0)
            s = `${s.slice(0, colon + 1)}${chance(0.5) ? nestedObjects(levels) : nestedArrays(levels)},${s.slice(colon + 1)}`
          break
        }
        default:
          s = s.replace(/"[a-z_$]+"/, `"${pick(SPECIAL_KEYS)}"`)
      }
    }
    return s
  }

  function damageBytes(bytes: Buffer): Buffer {
    const copy = Buffer.from(bytes)
    for (let n = 1 + int(4); n > 0 && copy.length > 0; n--) copy[int(copy.length)] = int(256)
    return chance(0.3) ? copy.subarray(0, int(copy.length + 1)) : copy
  }

  function encode(path: string, json: string): Request {
    const withQuery = (query: string) => `${path}${path.includes('?') ? '&' : '?'}${query}`
    const types = ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream']
    const contentType = chance(0.9) ? pick(types) : text()
    const damaged = chance(0.1)
    const bytes = (b: Buffer) => (damaged ? damageBytes(b) : b)
    switch (int(12)) {
      case 0:
        return { method: 'POST', url: path, headers: { 'content-type': 'application/json' }, body: json, label: 'json' }
      case 1:
        return {
          method: 'POST',
          url: path,
          headers: { 'content-type': contentType, 'content-encoding': 'gzip' },
          body: bytes(gzipSync(json)),
          label: 'gzip header',
        }
      case 2:
        return {
          method: 'POST',
          url: chance(0.5) ? path : withQuery('compression=gzip-js'),
          headers: { 'content-type': 'text/plain' },
          body: bytes(gzipSync(json)),
          label: 'gzip unannounced or gzip-js',
        }
      case 3:
        return {
          method: 'POST',
          url: path,
          headers: { 'content-type': contentType, 'content-encoding': 'deflate' },
          body: bytes(deflateSync(json)),
          label: 'deflate',
        }
      case 4:
        return {
          method: 'POST',
          url: path,
          headers: { 'content-type': contentType, 'content-encoding': 'br' },
          body: bytes(brotliCompressSync(json)),
          label: 'brotli',
        }
      case 5: {
        const lz = LZString.compressToBase64(json)
        return {
          method: 'POST',
          url: withQuery('compression=lz64'),
          headers: { 'content-type': 'text/plain' },
          body: damaged ? mutate(lz) : lz,
          label: 'lz64 raw',
        }
      }
      case 6: {
        const lz = LZString.compressToBase64(json)
        return {
          method: 'POST',
          url: path,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `data=${uri(damaged ? mutate(lz) : lz)}&compression=lz64`,
          label: 'lz64 form',
        }
      }
      case 7:
        return {
          method: 'POST',
          url: withQuery('compression=lz64'),
          headers: { 'content-type': 'text/plain' },
          body: bytes(gzipSync(`data=${uri(LZString.compressToBase64(json))}`)),
          label: 'lz64 form in gzip',
        }
      case 8: {
        const b64 = Buffer.from(json).toString('base64')
        return {
          method: 'POST',
          url: withQuery('compression=base64'),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `data=${uri(damaged ? mutate(b64) : b64)}`,
          label: 'base64 form',
        }
      }
      case 9:
        return {
          method: 'POST',
          url: path,
          headers: { 'content-type': contentType },
          body: Buffer.from(json).toString('base64'),
          label: 'base64 raw',
        }
      case 10: {
        const compression = chance(0.5) ? 'base64' : 'lz64'
        const data = compression === 'base64' ? Buffer.from(json).toString('base64') : LZString.compressToBase64(json)
        return {
          method: 'GET',
          url: withQuery(`compression=${compression}&data=${uri(data.slice(0, 12_000))}`),
          headers: {},
          label: 'GET data=',
        }
      }
      default:
        return {
          method: 'POST',
          url: path,
          headers: chance(0.5) ? { 'content-type': contentType, 'content-encoding': text() } : {},
          body: bytes(Buffer.from(json)),
          label: 'odd headers',
        }
    }
  }

  return {
    request(): Request {
      const isCapture = chance(0.65)
      const path = isCapture ? pick(CAPTURE_PATHS) : pick(FLAG_PATHS)
      let json = JSON.stringify(isCapture ? capturePayload() : flagsPayload())
      const mutated = chance(0.35)
      if (mutated) json = mutate(json)
      const request = encode(path, json)
      return { ...request, label: `${request.method} ${path} ${request.label}${mutated ? ' mutated' : ''}` }
    },
  }
}

describe('public endpoints under fuzzing', () => {
  it(
    `never answer 5xx and write nothing for a refused request (seed ${SEED}, ${SECONDS} s)`,
    async () => {
      const fuzz = generator(seededRandom(SEED))
      const statuses = new Map<number, number>()
      const memoryStart = process.memoryUsage()
      const ends = performance.now() + SECONDS * 1000
      let sent = 0
      let slowest = 0
      while (performance.now() < ends || sent < 20) {
        const request = fuzz.request()
        const where = `seed ${SEED}, request ${sent}: ${request.label}`
        const before = await footprint(t)
        const started = performance.now()
        const res = await t.burrow.app.inject({
          method: request.method,
          url: request.url,
          headers: request.headers,
          payload: request.body,
        })
        slowest = Math.max(slowest, performance.now() - started)
        sent++
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
        expect(res.statusCode, `${where} → ${res.body.slice(0, 300)}`).toBeLessThan(500)
        if (res.statusCode >= 400) {
          expect(Object.keys(res.json()).sort(), where).toEqual(['attr', 'code', 'detail', 'type'])
          expect(await footprint(t), `${where} wrote something`).toEqual(before)
        }
      }
      const summary = [...statuses.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`)
      const memory = process.memoryUsage()
      const growth = (key: 'rss' | 'heapUsed') => Math.round((memory[key] - memoryStart[key]) / 1024 / 1024)
      console.info(
        `fuzz seed ${SEED}: ${sent} requests in ${SECONDS} s; ${summary.join(', ')}; ` +
          `slowest ${Math.round(slowest)} ms; growth: RSS ${growth('rss')} MB, JS heap ${growth('heapUsed')} MB`,
      )
      // Both kinds of answers are exercised: accepted and refused.
      expect(statuses.get(200) ?? 0).toBeGreaterThan(0)
      expect([...statuses.keys()].some((s) => s >= 400)).toBe(true)
    },
    SECONDS * 1000 + 120_000,
  )
})
