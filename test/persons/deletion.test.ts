import crypto from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { eventCounts, fixtureCounts, inject, waitForDeletion } from './deletion-helpers.js'
import { ALICE_ANON, captureFixture } from './fixtures.js'

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
})

describe('deleting a person with their events', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await startTestApp()
    cleanups.push(() => t.close())
    await captureFixture(t)
  }, 120_000)

  it('removes every event of the person and nothing else', async () => {
    const projectId = t.creds.project_id
    const base = `/api/projects/${projectId}/persons`
    const before = await eventCounts(t.burrow, projectId, t.auth)
    expect(before).toEqual(fixtureCounts())
    // alice: her anonymous pageview, $identify, clicked
    expect(before.alice + before[ALICE_ANON]).toBe(3)

    const alice = (await inject(t.burrow, 'GET', `${base}/?distinct_id=alice`, t.auth)).json().results[0]
    const res = await inject(t.burrow, 'DELETE', `${base}/${alice.id}/?delete_events=true`, t.auth)
    expect(res.statusCode).toBe(202)
    const deletionId = res.headers['x-person-deletion'] as string
    expect(deletionId).toMatch(/^[0-9a-f-]{36}$/)
    // the person is gone at once
    expect((await inject(t.burrow, 'GET', `${base}/${alice.id}/`, t.auth)).statusCode).toBe(404)
    expect((await inject(t.burrow, 'GET', `${base}/?distinct_id=alice`, t.auth)).json().results).toEqual([])

    const deletion = await waitForDeletion(t.burrow, projectId, t.auth, deletionId)
    expect(deletion).toMatchObject({
      person_id: alice.id,
      distinct_ids: expect.arrayContaining(['alice', ALICE_ANON]),
      delete_events: true,
      status: 'done',
    })
    const after = await eventCounts(t.burrow, projectId, t.auth)
    const expected = fixtureCounts()
    delete expected.alice
    delete expected[ALICE_ANON]
    expect(after).toEqual(expected)
    const activity = (await inject(t.burrow, 'GET', `${base}/activity/`, t.auth)).json().results
    expect(activity[0]).toMatchObject({ activity: 'deleted', item_id: alice.id })
  }, 90_000)

  it('starts a new person for a deleted distinct id that comes back', async () => {
    const projectId = t.creds.project_id
    const base = `/api/projects/${projectId}/persons`
    await captureFixture(t, t.creds.project_api_key, [
      {
        event: '$pageview',
        distinct_id: 'alice',
        timestamp: '2026-11-21T10:00:00.000Z',
        properties: { $set: { returning: true } },
      },
    ])
    const again = (await inject(t.burrow, 'GET', `${base}/?distinct_id=alice`, t.auth)).json().results
    expect(again).toHaveLength(1)
    expect(again[0].properties).toEqual({ returning: true })
    expect(again[0].distinct_ids).toEqual(['alice'])
    // the event after the deletion is kept, and HogQL gives it the new person
    const res = await inject(t.burrow, 'POST', `/api/projects/${projectId}/query/`, t.auth, {
      query: { kind: 'HogQLQuery', query: "SELECT count(), any(person.id) FROM events WHERE distinct_id = 'alice'" },
      refresh: 'force_blocking',
    })
    expect(res.json().results).toEqual([[1, again[0].id]])
  }, 60_000)

  it('deletes by distinct id for a GDPR request, persons and personless ids alike', async () => {
    const projectId = t.creds.project_id
    const base = `/api/projects/${projectId}/persons`
    await captureFixture(t, t.creds.project_api_key, [
      {
        event: 'viewed',
        distinct_id: 'ghost',
        timestamp: '2026-11-21T11:00:00.000Z',
        properties: { $process_person_profile: false },
      },
    ])
    const res = await inject(t.burrow, 'POST', `${base}/bulk_delete/`, t.auth, {
      distinct_ids: ['bob', 'ghost', 'never-seen'],
      delete_events: true,
    })
    expect(res.statusCode).toBe(202)
    const deletions = res.json().deletions as { id: string; person_id: string | null; distinct_ids: string[] }[]
    expect(deletions).toHaveLength(2)
    expect(deletions[0].distinct_ids).toEqual(['bob'])
    expect(deletions[1]).toMatchObject({ person_id: null, distinct_ids: ['ghost', 'never-seen'] })
    for (const d of deletions) await waitForDeletion(t.burrow, projectId, t.auth, d.id)
    const after = await eventCounts(t.burrow, projectId, t.auth)
    expect(after.bob).toBeUndefined()
    expect(after.ghost).toBeUndefined()
    expect(after.carol).toBe(2)
    expect(after.alice).toBe(1)
    const none = await inject(t.burrow, 'POST', `${base}/bulk_delete/`, t.auth, {})
    expect(none.statusCode).toBe(400)
    expect(none.json()).toMatchObject({ type: 'validation_error', attr: 'ids' })
    const tooMany = await inject(t.burrow, 'POST', `${base}/bulk_delete/`, t.auth, {
      ids: Array.from({ length: 1001 }, (_, i) => String(i)),
    })
    expect(tooMany.statusCode).toBe(400)
  }, 60_000)

  it('answers 404 for unknown persons and deletions', async () => {
    const base = `/api/projects/${t.creds.project_id}/persons`
    const gone = await inject(t.burrow, 'DELETE', `${base}/${crypto.randomUUID()}/?delete_events=true`, t.auth)
    expect(gone.statusCode).toBe(404)
    expect((await inject(t.burrow, 'GET', `${base}/deletions/${crypto.randomUUID()}/`, t.auth)).statusCode).toBe(404)
  })
})
