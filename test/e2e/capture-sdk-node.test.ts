import { PostHog } from 'posthog-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let host: string
beforeAll(async () => {
  t = await startTestApp()
  host = await t.burrow.app.listen({ port: 0, host: '127.0.0.1' })
})
afterAll(() => t.close())

describe('posthog-node against a running Burrow', () => {
  it('sends capture, identify, alias and groupIdentify that land in both stores', async () => {
    const client = new PostHog(t.creds.project_api_key, { host, flushAt: 1, flushInterval: 0, disableGeoip: false })
    const suffix = Math.random().toString(36).slice(2)
    const anon = `anon-${suffix}`
    const user = `user-${suffix}`
    client.capture({
      distinctId: anon,
      event: 'viewed pricing',
      properties: { plan: 'pro', $set_once: { landing: '/pricing' } },
    })
    client.capture({
      distinctId: user,
      event: 'bought',
      properties: { amount: 42 },
      groups: { company: `acme-${suffix}` },
    })
    client.identify({ distinctId: user, properties: { email: `${suffix}@example.com` } })
    client.alias({ distinctId: user, alias: anon })
    client.groupIdentify({ groupType: 'company', groupKey: `acme-${suffix}`, properties: { seats: 12 } })
    await client.shutdown()

    const events = await t.burrow.events.query<[string, string, string]>(
      `SELECT event, distinct_id, properties FROM events WHERE team_id = {team:Int64}
       AND distinct_id IN ({anon:String}, {user:String}) ORDER BY timestamp`,
      { params: { team: t.creds.project_id, anon, user } },
    )
    const names = events.rows.map((r) => r[0])
    expect(names).toEqual(expect.arrayContaining(['viewed pricing', 'bought', '$identify', '$create_alias']))
    // posthog-node sends the group update with its own distinct id, `$<type>_<key>`.
    const groupEvents = await t.burrow.events.query<[string]>(
      `SELECT JSONExtractString(properties, '$group_key') FROM events
       WHERE team_id = {team:Int64} AND event = '$groupidentify' AND distinct_id = {id:String}`,
      { params: { team: t.creds.project_id, id: `$company_acme-${suffix}` } },
    )
    expect(groupEvents.rows).toEqual([[`acme-${suffix}`]])
    const bought = events.rows.find((r) => r[0] === 'bought')
    expect(JSON.parse(bought![2])).toMatchObject({ amount: 42, $lib: 'posthog-node' })

    const person = await t.burrow.stores.persons.getByDistinctId(t.creds.project_id, user)
    expect(person).toBeDefined()
    expect(JSON.parse(person!.properties)).toMatchObject({ email: `${suffix}@example.com`, landing: '/pricing' })
    const anonPerson = await t.burrow.stores.persons.getByDistinctId(t.creds.project_id, anon)
    expect(anonPerson?.id).toBe(person!.id)

    const types = await t.burrow.stores.persons.groupTypeMapping(t.creds.project_id)
    const company = types.find((g) => g.group_type === 'company')!
    const group = await t.burrow.stores.persons.getGroup(t.creds.project_id, company.group_type_index, `acme-${suffix}`)
    expect(JSON.parse(group!.properties)).toEqual({ seats: 12 })

    const groupColumn = await t.burrow.events.query<[string]>(
      `SELECT $group_${company.group_type_index} FROM events WHERE team_id = {team:Int64} AND event = 'bought' AND distinct_id = {user:String}`,
      { params: { team: t.creds.project_id, user } },
    )
    expect(groupColumn.rows).toEqual([[`acme-${suffix}`]])
  })
})
