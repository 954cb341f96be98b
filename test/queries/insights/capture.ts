/** Fixture events for the insight tests, captured through `/batch/` as an SDK would send them. */
import { expect } from 'vitest'
import type { TestApp } from '../../helpers/app.js'

/** One captured event of `distinctId` at `timestamp` (ISO), with extra properties. */
export const ev = (event: string, distinctId: string, timestamp: string, properties: Record<string, unknown> = {}) => ({
  event,
  timestamp,
  properties: { distinct_id: distinctId, ...properties },
})

/** Captures `batch` for the project of `apiKey` (the demo project by default) and waits until it is stored. */
export async function captureBatch(t: TestApp, batch: unknown[], apiKey = t.creds.project_api_key): Promise<void> {
  const res = await t.burrow.app.inject({
    method: 'POST',
    url: '/batch/',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ api_key: apiKey, batch }),
  })
  expect(res.statusCode, res.body).toBe(200)
  await t.burrow.ingest.flushBackground()
}
