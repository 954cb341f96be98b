// A capture body over the 20 MiB limit, sent by real clients over a real socket: the 413 must reach Node's fetch
// (posthog-node's transport) as an answer, not as a reset connection that the SDK retries; the refused body is read
// and thrown away only up to a bound.
import crypto from 'node:crypto'
import net from 'node:net'
import { PostHog } from 'posthog-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'

const MiB = 1024 * 1024

let t: TestApp
let host: string
let port: number
beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_PUBLIC_FAILURES_PER_MINUTE: '0' } })
  host = await t.burrow.app.listen({ port: 0, host: '127.0.0.1' })
  port = (t.burrow.app.server.address() as net.AddressInfo).port
})
afterAll(() => t.close())

describe('a body over 20 MiB', () => {
  it('test_capture_event_too_large: the 413 reaches fetch while the body is still being sent', async () => {
    const res = await fetch(`${host}/e/`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', origin: 'https://localhost' },
      body: 'x'.repeat(21 * MiB),
    })
    expect(res.status).toBe(413)
    expect(await res.json()).toEqual({
      type: 'invalid_request',
      code: 'request_too_large',
      detail: expect.any(String),
      attr: null,
    })
  })

  it('answers a streamed (chunked) body past the limit with 413 too, and the connection serves the next request', async () => {
    const chunk = new Uint8Array(MiB).fill(0x20)
    let sent = 0
    const body = new ReadableStream({
      pull(controller) {
        if (sent++ < 30) controller.enqueue(chunk)
        else controller.close()
      },
    })
    const res = await fetch(`${host}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit)
    expect(res.status).toBe(413)
    await res.arrayBuffer()
    const next = await fetch(`${host}/e/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: t.creds.project_api_key, event: 'after-413', distinct_id: 'oversize' }),
    })
    expect(next.status).toBe(200)
  })

  it('posthog-node sees the 413 as an HTTP error (not a network failure) for an event over the limit', async () => {
    const errors: unknown[] = []
    const client = new PostHog(t.creds.project_api_key, {
      host,
      flushAt: 1,
      flushInterval: 0,
      fetchRetryCount: 0,
      // Random bytes do not compress: the body goes out over the limit, as an SDK's oversized batch would.
      disableCompression: false,
    })
    client.on('error', (err) => errors.push(err))
    client.capture({
      distinctId: 'oversize-node',
      event: 'too big',
      properties: { blob: crypto.randomBytes(24 * MiB).toString('base64') },
    })
    await client.shutdown()
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ name: 'PostHogFetchHttpError', status: 413 })
  })

  it('reads and throws away at most 64 MiB of a refused body, then closes the connection', async () => {
    const declared = 200 * MiB
    const result = await new Promise<{ head: string; written: number; closed: boolean }>((resolve) => {
      const socket = net.connect(port, '127.0.0.1')
      let head = ''
      let written = 0
      let closed = false
      const chunk = Buffer.alloc(MiB, 0x20)
      const finish = () => resolve({ head, written, closed })
      socket.on('data', (data) => {
        head += data.toString('latin1')
      })
      socket.on('error', () => {
        closed = true
      })
      socket.on('close', () => {
        closed = true
        finish()
      })
      socket.write(
        `POST /batch/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n`,
      )
      const pump = () => {
        while (!socket.destroyed && written < declared) {
          written += MiB
          if (!socket.write(chunk)) {
            socket.once('drain', pump)
            return
          }
        }
      }
      pump()
    })
    expect(result.head).toMatch(/^HTTP\/1\.1 413 /)
    expect(result.closed).toBe(true)
    // The server stopped reading soon after the bound: the client could not send the whole declared body.
    expect(result.written).toBeGreaterThan(64 * MiB)
    expect(result.written).toBeLessThan(declared)
  }, 30_000)
})
