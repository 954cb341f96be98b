// /flags reuses an answer when every input is the same (definitions, stored person, request): these tests
// change one input at a time and expect a fresh evaluation, and check what must stay per request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { createFlag, insertGroup, insertGroupType, postFlags, valuesOf } from './fixtures.js'

let t: TestApp
let now = new Date('2026-06-15T12:00:00Z')

async function capture(batch: Record<string, unknown>[]) {
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: '/batch/',
    payload: { api_key: t.creds.project_api_key, batch },
  })
  expect(res.statusCode, res.body).toBe(200)
}

const flagsOf = async (body: Record<string, unknown>, headers?: Record<string, string>) => {
  const res = await postFlags(t, body, { headers })
  expect(res.statusCode, res.body).toBe(200)
  return res.json()
}

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  await createFlag(t, {
    key: 'pro-only',
    filters: { groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }], rollout_percentage: 100 }] },
  })
  await createFlag(t, {
    key: 'in-us',
    filters: {
      groups: [{ properties: [{ key: '$geoip_country_code', value: 'US', type: 'person' }], rollout_percentage: 100 }],
    },
  })
}, 60_000)
afterAll(() => t?.close())

describe('answer reuse on /flags', () => {
  it('answers a repeated request with the same flags and a fresh request id', async () => {
    const first = await flagsOf({ distinct_id: 'repeat', person_properties: { plan: 'pro' } })
    const second = await flagsOf({ distinct_id: 'repeat', person_properties: { plan: 'pro' } })
    expect(second.flags).toEqual(first.flags)
    expect(valuesOf(second)['pro-only']).toBe(true)
    expect(second.requestId).not.toBe(first.requestId)
  })

  it('evaluates afresh when the stored person changes through capture', async () => {
    await capture([{ event: '$identify', distinct_id: 'changing', properties: { $set: { plan: 'free' } } }])
    expect(valuesOf(await flagsOf({ distinct_id: 'changing' }))['pro-only']).toBe(false)
    expect(valuesOf(await flagsOf({ distinct_id: 'changing' }))['pro-only']).toBe(false)
    await capture([{ event: '$set', distinct_id: 'changing', properties: { $set: { plan: 'pro' } } }])
    expect(valuesOf(await flagsOf({ distinct_id: 'changing' }))['pro-only']).toBe(true)
  })

  it('treats request person_properties as inputs', async () => {
    expect(valuesOf(await flagsOf({ distinct_id: 'props', person_properties: { plan: 'pro' } }))['pro-only']).toBe(true)
    expect(valuesOf(await flagsOf({ distinct_id: 'props', person_properties: { plan: 'free' } }))['pro-only']).toBe(
      false,
    )
  })

  it('evaluates afresh after a flag changes', async () => {
    const flag = await createFlag(t, { key: 'toggled', rollout_percentage: 100 })
    expect(valuesOf(await flagsOf({ distinct_id: 'toggle' })).toggled).toBe(true)
    expect(valuesOf(await flagsOf({ distinct_id: 'toggle' })).toggled).toBe(true)
    const res = await t.burrow.app.inject({
      method: 'PATCH',
      url: `/api/projects/${t.creds.project_id}/feature_flags/${flag.id}/`,
      headers: t.auth,
      payload: { filters: { groups: [{ properties: [], rollout_percentage: 0 }] } },
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(valuesOf(await flagsOf({ distinct_id: 'toggle' })).toggled).toBe(false)
  })

  it('keeps the location per request: the same body from another address is evaluated for that address', async () => {
    const body = { distinct_id: 'traveller' }
    expect(valuesOf(await flagsOf(body, { 'x-forwarded-for': '8.8.8.8' }))['in-us']).toBe(true)
    expect(valuesOf(await flagsOf(body, { 'x-forwarded-for': '193.0.6.139' }))['in-us']).toBe(false)
    expect(valuesOf(await flagsOf(body, { 'x-forwarded-for': '8.8.8.8' }))['in-us']).toBe(true)
  })

  it('follows the clock for flags that compare relative dates', async () => {
    await createFlag(t, {
      key: 'recent-signup',
      filters: {
        groups: [
          {
            properties: [{ key: 'signed_up', value: '-7d', type: 'person', operator: 'is_date_after' }],
            rollout_percentage: 100,
          },
        ],
      },
    })
    const body = { distinct_id: 'dated', person_properties: { signed_up: '2026-06-14T00:00:00Z' } }
    expect(valuesOf(await flagsOf(body))['recent-signup']).toBe(true)
    now = new Date('2026-06-30T12:00:00Z')
    expect(valuesOf(await flagsOf(body))['recent-signup']).toBe(false)
  })

  it('reads group rows on every request for flags aggregated by group', async () => {
    await insertGroupType(t, 'company', 0)
    await insertGroup(t, 0, 'acme', { tier: 'basic' })
    await createFlag(t, {
      key: 'enterprise-companies',
      filters: {
        aggregation_group_type_index: 0,
        groups: [{ properties: [{ key: 'tier', value: 'enterprise', type: 'group', group_type_index: 0 }] }],
      },
    })
    const body = { distinct_id: 'employee', groups: { company: 'acme' } }
    expect(valuesOf(await flagsOf(body))['enterprise-companies']).toBe(false)
    await capture([
      {
        event: '$groupidentify',
        distinct_id: 'employee',
        properties: { $group_type: 'company', $group_key: 'acme', $group_set: { tier: 'enterprise' } },
      },
    ])
    expect(valuesOf(await flagsOf(body))['enterprise-companies']).toBe(true)
  })
})

describe('large request inputs', () => {
  it('are answered correctly every time (too large to be kept)', async () => {
    const padding = 'x'.repeat(128 * 1024)
    for (const plan of ['pro', 'pro', 'free', 'pro']) {
      const body = { distinct_id: 'large', person_properties: { plan, padding } }
      expect(valuesOf(await flagsOf(body))['pro-only']).toBe(plan === 'pro')
    }
  })
})

describe('the v2 answer on the wire', () => {
  it('carries the CORS headers, its JSON type and the exact length, reused or not', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await postFlags(
        t,
        { distinct_id: 'wire', person_properties: { plan: 'pro' } },
        {
          headers: { origin: 'https://app.example.com' },
        },
      )
      expect(res.statusCode).toBe(200)
      expect(res.headers['access-control-allow-origin']).toBeDefined()
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length)
      expect(valuesOf(res.json())['pro-only']).toBe(true)
    }
  })
})
