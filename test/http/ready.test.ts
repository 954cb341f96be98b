// `/_ready`, for load balancers: ready while both stores answer, not once either cannot be reached, and not from
// the moment the process starts to stop.
import { afterEach, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp | undefined
afterEach(async () => {
  await t?.close().catch(() => undefined)
  t = undefined
})

describe('/_ready', () => {
  it('answers 200 while the stores answer (an embedded engine not opened yet opens on first need)', async () => {
    t = await startTestApp()
    const res = await t.burrow.app.inject({ method: 'GET', url: '/_ready' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ status: 'ready', meta: true, events: true })
    await t.burrow.eventStore.open()
    expect((await t.burrow.app.inject({ method: 'GET', url: '/_ready' })).statusCode).toBe(200)
  })

  it('answers 503 once the metadata store cannot be reached', async () => {
    t = await startTestApp()
    await t.burrow.meta.close()
    const res = await t.burrow.app.inject({ method: 'GET', url: '/_ready' })
    expect(res.statusCode).toBe(503)
    expect(res.json()).toEqual({ status: 'unavailable', meta: false, events: true })
  })

  it('answers 503 from the moment the process starts to stop, while it finishes what it has', async () => {
    t = await startTestApp()
    const stopping = t.burrow.close()
    const res = await t.burrow.app.inject({ method: 'GET', url: '/_ready' })
    expect(res.statusCode).toBe(503)
    expect(res.json()).toEqual({ status: 'draining' })
    await stopping
  })
})
