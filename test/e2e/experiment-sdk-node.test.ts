import { PostHog } from 'posthog-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let host: string
beforeAll(async () => {
  t = await startTestApp()
  host = await t.burrow.app.listen({ port: 0, host: '127.0.0.1' })
}, 60_000)
afterAll(() => t.close())

type Json = Record<string, any>
const api = (method: 'GET' | 'POST' | 'PATCH', path: string, payload?: unknown) =>
  t.burrow.app.inject({
    method,
    url: `/api/projects/${t.creds.project_id}/${path}`,
    headers: t.auth,
    ...(payload === undefined ? {} : { payload: payload as Json }),
  })

describe('an experiment run through posthog-node', () => {
  it('assigns variants through /flags, records $feature_flag_called, and finds the winner', async () => {
    const created = await api('POST', 'experiments/', {
      name: 'SDK checkout',
      feature_flag_key: 'sdk-checkout',
      exposure_criteria: { filterTestAccounts: false },
    })
    expect(created.statusCode, created.body).toBe(201)
    const experiment = created.json()
    const launched = await api('POST', `experiments/${experiment.id}/launch/`)
    expect(launched.statusCode, launched.body).toBe(200)

    const client = new PostHog(t.creds.project_api_key, { host, flushAt: 50, flushInterval: 0 })
    const assigned: Record<string, string> = {}
    const users = Array.from({ length: 160 }, (_, i) => `sdk-user-${i}`)
    for (const user of users) {
      const variant = await client.getFeatureFlag('sdk-checkout', user)
      expect(['control', 'test']).toContain(variant)
      assigned[user] = variant as string
    }
    // Purchases follow the exposures: posthog-node stamps $feature_flag_called when it queues it, some turns after
    // getFeatureFlag returns (tens of milliseconds on a busy machine), so every exposure is sent first (shutdown
    // waits for the queued ones), and the purchases go through a second client.
    await client.shutdown()
    const buyer = new PostHog(t.creds.project_api_key, { host, flushAt: 50, flushInterval: 0 })
    for (const user of users) {
      // the test variant converts far more often: 80% against 20%
      const i = Number(user.split('-')[2])
      const converts = assigned[user] === 'test' ? i % 5 !== 0 : i % 5 === 0
      if (converts) buyer.capture({ distinctId: user, event: 'purchase', properties: { revenue: 10 } })
    }
    await buyer.shutdown()
    // one person who saw both variants lands in $multiple and is left out
    const both = new PostHog(t.creds.project_api_key, { host, flushAt: 1, flushInterval: 0 })
    both.capture({
      distinctId: 'sdk-both',
      event: '$feature_flag_called',
      properties: { $feature_flag: 'sdk-checkout', $feature_flag_response: 'control' },
    })
    both.capture({
      distinctId: 'sdk-both',
      event: '$feature_flag_called',
      properties: { $feature_flag: 'sdk-checkout', $feature_flag_response: 'test' },
    })
    await both.shutdown()
    await t.burrow.ingest.flushBackground()

    const counts = { control: 0, test: 0 }
    const conversions = { control: 0, test: 0 }
    for (const user of users) {
      const v = assigned[user] as 'control' | 'test'
      counts[v]++
      const i = Number(user.split('-')[2])
      if (v === 'test' ? i % 5 !== 0 : i % 5 === 0) conversions[v]++
    }
    const res = await api('POST', 'query/', {
      query: {
        kind: 'ExperimentQuery',
        experiment_id: experiment.id,
        metric: {
          kind: 'ExperimentMetric',
          metric_type: 'funnel',
          series: [{ kind: 'EventsNode', event: 'purchase' }],
        },
      },
    })
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json()
    expect(body.baseline).toMatchObject({
      key: 'control',
      number_of_samples: counts.control,
      sum: conversions.control,
      step_counts: [counts.control, conversions.control],
    })
    const [test] = body.variant_results
    expect(test).toMatchObject({ key: 'test', number_of_samples: counts.test, sum: conversions.test })
    expect(test.chance_to_win).toBeGreaterThan(0.99)
    expect(test.significant).toBe(true)
  }, 120_000)
})
