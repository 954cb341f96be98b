// A blocking query whose client goes away (the connection closes before the answer) is stopped in the engine,
// not left running for minutes with nobody to read its answer.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { engineIdOf } from '../../src/queries/service.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

/** Hashes 10^11 numbers: runs for minutes on the embedded engine unless stopped. */
const SLOW = 'select count() from numbers(100000000000) where cityHash64(number) = 7'

let t: TestApp
let port: number
beforeAll(async () => {
  t = await startTestApp()
  await t.burrow.app.listen({ port: 0, host: '127.0.0.1' })
  port = (t.burrow.app.server.address() as AddressInfo).port
}, 120_000)
afterAll(() => t.close(), 60_000)

const until = async (check: () => Promise<boolean>, timeoutMs: number) => {
  const end = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > end) return false
    await new Promise((r) => setTimeout(r, 50))
  }
  return true
}

it('stops the engine query when the client closes the connection before the answer', async () => {
  const engineId = engineIdOf(t.creds.project_id, 'gone-1')
  const body = JSON.stringify({ query: { kind: 'HogQLQuery', query: SLOW }, client_query_id: 'gone-1' })
  const request = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: `/api/projects/${t.creds.project_id}/query/`,
    headers: { ...t.auth, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
  })
  request.on('error', () => undefined)
  request.end(body)
  // Running in the engine…
  expect(await until(async () => (await t.burrow.eventStore.progress(engineId)) !== undefined, 45_000)).toBe(true)
  // …until the client goes away.
  request.destroy()
  expect(await until(async () => (await t.burrow.eventStore.progress(engineId)) === undefined, 10_000)).toBe(true)
  // The server still answers.
  const res = await fetch(`http://127.0.0.1:${port}/api/projects/${t.creds.project_id}/query/`, {
    method: 'POST',
    headers: { ...t.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ query: { kind: 'HogQLQuery', query: 'select 1' } }),
  })
  expect(res.status).toBe(200)
  expect(((await res.json()) as { results: unknown }).results).toEqual([[1]])
}, 120_000)
