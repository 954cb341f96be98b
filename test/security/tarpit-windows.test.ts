// A flood keeps being slowed down when a new counting window starts: an address past the tarpit's threshold when
// its minute ended gets no new allowance of answers at full speed at the next minute (a flood of over-deep events
// had one burst of 50 a minute, each a body read and scanned), while an address that stopped for a minute starts
// afresh. The longer a flood goes on, the later its answers come (up to half a second), and a flood carried into
// the next minute stays as slowed down as it was.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TARPIT_AFTER, TARPIT_MAX_MS, TARPIT_MS, tarpitDelay } from '../../src/http/rate-limit.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

// The app's clock starts a second into a minute and moves on by whole minutes when a test says so.
const startedAt = Date.now()
const minuteStart = Math.ceil(startedAt / 60_000) * 60_000 + 1_000
let shift = 0
const clock = () => new Date(minuteStart + shift + (Date.now() - startedAt))

let t: TestApp
let deep: string
beforeAll(async () => {
  t = await startTestApp({ clock })
  // 200 levels: past capture's 128, a 400 (the default 600 failures a minute are not reached here).
  deep = `{"api_key":"${t.creds.project_api_key}","event":"deep","distinct_id":"d","properties":${'['.repeat(200)}${']'.repeat(200)}}`
})
afterAll(() => t.close())

async function timedDeepEvent(remoteAddress: string): Promise<number> {
  const started = performance.now()
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: '/i/v0/e/',
    headers: { 'content-type': 'application/json' },
    payload: deep,
    remoteAddress,
  })
  expect(res.statusCode).toBe(400)
  expect(res.json()).toMatchObject({ type: 'validation_error', code: 'invalid_payload' })
  return performance.now() - started
}

describe('the tarpit across counting windows', () => {
  it('goes on slowing a flood at the next minute, and lets an address that stopped for a minute start afresh', async () => {
    const flood = '10.7.0.1'
    const first: number[] = []
    for (let i = 0; i < TARPIT_AFTER; i++) first.push(await timedDeepEvent(flood))
    // Not all of the first ones waited (they are answered at once; generous for a loaded machine).
    expect(first.reduce((a, b) => a + b, 0)).toBeLessThan(TARPIT_AFTER * TARPIT_MS)
    for (let i = 0; i < 3; i++) expect(await timedDeepEvent(flood)).toBeGreaterThanOrEqual(TARPIT_MS * 0.9)

    // The next minute: still slowed from its first failure.
    shift += 60_000
    for (let i = 0; i < 3; i++) expect(await timedDeepEvent(flood)).toBeGreaterThanOrEqual(TARPIT_MS * 0.9)

    // A whole minute without a failure, then a failure: a new allowance.
    shift += 120_000
    const afresh: number[] = []
    for (let i = 0; i < 10; i++) afresh.push(await timedDeepEvent(flood))
    expect(afresh.reduce((a, b) => a + b, 0)).toBeLessThan(10 * TARPIT_MS)
  }, 60_000)

  it('does not carry a window over for an address that stayed under the threshold', async () => {
    const few = '10.7.0.2'
    for (let i = 0; i < 10; i++) await timedDeepEvent(few)
    shift += 60_000
    const next: number[] = []
    for (let i = 0; i < 10; i++) next.push(await timedDeepEvent(few))
    expect(next.reduce((a, b) => a + b, 0)).toBeLessThan(10 * TARPIT_MS)
  }, 60_000)

  it('answers a flood later the longer it goes on, up to its maximum, and carries that into the next minute', async () => {
    // The delays by count, worked out from the rule (20 at once, then 100 ms doubled every 10, at most 500 ms).
    expect([1, 20, 21, 30, 31, 40, 41, 50, 51, 1000].map(tarpitDelay)).toEqual([
      0, 0, 100, 100, 200, 200, 400, 400, 500, 500,
    ])
    expect(TARPIT_MS).toBe(100)
    expect(TARPIT_MAX_MS).toBe(500)

    const flood = '10.7.0.3'
    for (let i = 0; i < TARPIT_AFTER + 20; i++) await timedDeepEvent(flood)
    // The 41st to 43rd failures: 400 ms late each.
    for (let i = 0; i < 3; i++) expect(await timedDeepEvent(flood)).toBeGreaterThanOrEqual(400 * 0.9)
    // The next minute goes on where this one ended (the 44th to 50th: 400 ms, then 500 ms).
    shift += 60_000
    const next: number[] = []
    for (let i = 0; i < 10; i++) next.push(await timedDeepEvent(flood))
    for (const ms of next) expect(ms).toBeGreaterThanOrEqual(400 * 0.9)
    expect(next.slice(7).every((ms) => ms >= TARPIT_MAX_MS * 0.9)).toBe(true)
  }, 60_000)
})
