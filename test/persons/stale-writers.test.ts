// Ingestion against rows changed behind its back (a writer that skips the project's person lock: another tool, an
// older build during a rolling upgrade): updates are checked against the version read, and a batch that meets a
// changed person or a taken group-type index runs again on the current rows instead of overwriting them.
// Runs on SQLite, and on PostgreSQL when DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let teamId: number
beforeAll(async () => {
  t = await startTestApp()
  teamId = t.creds.project_id
}, 60_000)
afterAll(async () => {
  await t?.close()
})

async function capture(events: Record<string, unknown>[]) {
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: '/batch/',
    payload: { api_key: t.creds.project_api_key, batch: events },
  })
  expect(res.statusCode, res.body).toBe(200)
}

async function personOf(distinctId: string) {
  const row = await t.burrow.stores.persons.getByDistinctId(teamId, distinctId)
  return row ? { id: row.id, properties: JSON.parse(row.properties), version: Number(row.version) } : undefined
}

describe('ingestion over rows changed behind its back', () => {
  it('keeps a property written by another writer since the person was cached', async () => {
    await capture([{ event: '$set', distinct_id: 'behind', properties: { $set: { a: 1 } } }])
    const before = await personOf('behind')
    await t.burrow.meta.db
      .updateTable('persons')
      .set({ properties: JSON.stringify({ a: 1, z: 9 }), version: Number(before?.version) + 1 })
      .where('id', '=', before?.id as string)
      .execute()
    await capture([{ event: '$set', distinct_id: 'behind', properties: { $set: { b: 2 } } }])
    const after = await personOf('behind')
    expect(after?.properties).toEqual({ a: 1, z: 9, b: 2 })
    expect(after?.version).toBe(Number(before?.version) + 2)
  })

  it('merges into the current person when the cached one was deleted meanwhile', async () => {
    await capture([{ event: '$set', distinct_id: 'keeper', properties: { $set: { kept: true } } }])
    await capture([{ event: '$set', distinct_id: 'vanished', properties: { $set: { gone: true } } }])
    const vanished = await personOf('vanished')
    await t.burrow.meta.db
      .deleteFrom('person_distinct_ids')
      .where('person_id', '=', vanished?.id as string)
      .execute()
    await t.burrow.meta.db
      .deleteFrom('persons')
      .where('id', '=', vanished?.id as string)
      .execute()
    await capture([{ event: '$merge_dangerously', distinct_id: 'keeper', properties: { alias: 'vanished' } }])
    const keeper = await personOf('keeper')
    // The deleted person's properties are not brought back; its distinct id joins the keeper.
    expect((await personOf('vanished'))?.id).toBe(keeper?.id)
    expect(keeper?.properties).toEqual({ kept: true })
  })

  it('gives a new group type the next free index when another writer took the one it expected', async () => {
    // The processor reads the project's group types (none) and keeps them.
    await capture([{ event: 'plain', distinct_id: 'grouped' }])
    await t.burrow.meta.db
      .insertInto('group_type_mappings')
      .values({ team_id: teamId, group_type: 'company', group_type_index: 0, name_singular: null, name_plural: null })
      .execute()
    await capture([{ event: 'grouped', distinct_id: 'grouped', properties: { $groups: { project: 'p-9' } } }])
    const types = await t.burrow.stores.persons.groupTypeMapping(teamId)
    expect(types.map((g) => [g.group_type, g.group_type_index])).toEqual([
      ['company', 0],
      ['project', 1],
    ])
    const res = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${teamId}/query/`,
      headers: t.auth,
      payload: {
        query: { kind: 'HogQLQuery', query: "SELECT $group_0, $group_1 FROM events WHERE event = 'grouped'" },
      },
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().results).toEqual([['', 'p-9']])
  })
})
