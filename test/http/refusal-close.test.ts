// A throttled client's request with a body is answered 429 as it arrives and the connection closes, without the
// server reading the body: an lz64 flood from one address costs one answer per connection, not each upload.
// Over real HTTP (inject has no connections).
import net from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { lzBomb } from '../helpers/hostile.js'

// The app's clock starts a second into a minute, so that no counting window turns over while this file runs.
const startedAt = Date.now()
const minuteStart = Math.ceil(startedAt / 60_000) * 60_000 + 1_000
const clock = () => new Date(minuteStart + (Date.now() - startedAt))

let t: TestApp
let port: number
beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_PUBLIC_FAILURES_PER_MINUTE: '60' }, clock })
  const url = await t.burrow.app.listen({ port: 0, host: '127.0.0.1' })
  port = Number(new URL(url).port)
})
afterAll(() => t.close())

/** Sends the head and `sent` bytes of a body that claims `length`; resolves with what came back and whether the
 * server closed the connection (before we sent the rest). */
function partialUpload(path: string, length: number, sent: string) {
  return new Promise<{ answer: string; closed: boolean }>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let answer = ''
    const timer = setTimeout(() => {
      socket.destroy()
      resolve({ answer, closed: false })
    }, 3_000)
    socket.on('data', (chunk) => {
      answer += chunk.toString()
    })
    socket.on('error', reject)
    socket.on('close', () => {
      clearTimeout(timer)
      resolve({ answer, closed: true })
    })
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: ${length}\r\n\r\n${sent}`,
    )
  })
}

it('closes a throttled address’s connection after the 429, leaving its body unread', async () => {
  const bomb = lzBomb(8_000)
  // One oversized payload spends the address's allowance (a sixtieth of 60 failures a minute).
  const first = await fetch(`http://127.0.0.1:${port}/i/v0/e/?compression=lz64`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: bomb,
  })
  expect(first.status).toBe(413)

  // The next one: 429 at once with `connection: close`, though only 1 KB of the claimed 1 MB body was sent.
  const { answer, closed } = await partialUpload('/i/v0/e/?compression=lz64', 1_000_000, bomb.slice(0, 1_000))
  expect(answer).toMatch(/^HTTP\/1\.1 429 /)
  expect(answer.toLowerCase()).toContain('connection: close')
  expect(answer).toContain('"code":"throttled"')
  expect(closed).toBe(true)

  // A throttled request without a body keeps its connection (nothing to skip).
  const get = await fetch(`http://127.0.0.1:${port}/array/${t.creds.project_api_key}/config`)
  expect(get.status).toBe(429)
  expect(get.headers.get('connection')).not.toBe('close')

  // The server is fine: the management API (not under the public routes' refusal) still answers this address.
  const projects = await fetch(`http://127.0.0.1:${port}/api/projects/`, { headers: t.auth })
  expect(projects.status).toBe(200)
})
