import type { TestApp } from '../helpers/app.js'

/**
 * Captured traffic for the persons and events API tests: ten persons, each created by its first event, one minute
 * apart from 2026-11-20 10:00 UTC (person i at 10:0i), so newest first is p9 … p0.
 *   p0 alice  — distinct ids `alice` and an anonymous one, email alice@example.com, name Alice, plan pro
 *   p1 bob    — email bob@example.com, plan free
 *   p2 carol  — email carol@other.org, name Carol, plan pro
 *   p3 … p9   — `user-3` … `user-9`, email user-N@example.com, plan free, seats N
 * Events: every person has a `$pageview` at creation and a `clicked` one hour later with `{button: 'buy'}` for even
 * N and `{button: 'help'}` for odd N; alice also has her anonymous `$pageview` at 09:30 before identifying.
 */
export const ALICE_ANON = '0193c4a2-5e1f-7000-8000-00000000a11c'
export const PERSON_COUNT = 10

const pad = (n: number) => String(n).padStart(2, '0')
export const createdAt = (i: number) => `2026-11-20T10:${pad(i)}:00.000Z`
export const clickedAt = (i: number) => `2026-11-20T11:${pad(i)}:00.000Z`

export function fixtureEvents(): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = []
  const people: { id: string; set: Record<string, unknown> }[] = [
    { id: 'alice', set: { email: 'alice@example.com', name: 'Alice', plan: 'pro' } },
    { id: 'bob', set: { email: 'bob@example.com', plan: 'free' } },
    { id: 'carol', set: { email: 'carol@other.org', name: 'Carol', plan: 'pro' } },
  ]
  for (let i = 3; i < PERSON_COUNT; i++) {
    people.push({ id: `user-${i}`, set: { email: `user-${i}@example.com`, plan: 'free', seats: i } })
  }
  // Alice browses anonymously first; her identify joins the anonymous id to her person.
  events.push({
    event: '$pageview',
    distinct_id: ALICE_ANON,
    timestamp: '2026-11-20T09:30:00.000Z',
    properties: { $process_person_profile: false, $current_url: 'https://shop.example/' },
  })
  people.forEach((p, i) => {
    events.push({
      event: i === 0 ? '$identify' : '$pageview',
      distinct_id: p.id,
      timestamp: createdAt(i),
      properties: { $set: p.set, ...(i === 0 ? { $anon_distinct_id: ALICE_ANON } : {}) },
    })
    events.push({
      event: 'clicked',
      distinct_id: p.id,
      timestamp: clickedAt(i),
      properties: { button: i % 2 === 0 ? 'buy' : 'help' },
    })
  })
  return events
}

/** Sends the fixture through capture, in order, one request per event (person processing is per event order). */
export async function captureFixture(t: TestApp, token = t.creds.project_api_key, events = fixtureEvents()) {
  for (const event of events) {
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: '/batch/',
      payload: { api_key: token, batch: [event] },
    })
    if (res.statusCode !== 200) throw new Error(`capture failed: ${res.statusCode} ${res.body}`)
  }
  await t.burrow.committer.flushPending()
}
