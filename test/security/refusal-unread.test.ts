// A flood of refused uploads from one address must not cost the server their bodies: once an address is over its
// public failure limit, its next request is answered 429 as it arrives, and the connection closes without the rest
// of the body being read (an lz64 flood's 250 KB bodies were read to the end, each). Clients, posthog-node
// included, still see the 429 with PostHog's body and Retry-After, not a reset connection. Over real HTTP (inject
// has no connections).
import net from 'node:net'
import { PostHog } from 'posthog-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LINGER_MS, lingeringConnections } from '../../src/http/close-unread.js'
import { TARPIT_AFTER, TARPIT_MS } from '../../src/http/rate-limit.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { lzBomb } from '../helpers/hostile.js'

// The app's clock starts a second into a minute, so that no counting window turns over while this file runs.
const startedAt = Date.now()
const minuteStart = Math.ceil(startedAt / 60_000) * 60_000 + 1_000
const clock = () => new Date(minuteStart + (Date.now() - startedAt))

const MiB = 1024 * 1024
/** One read of Node's (64 KiB) and the request head: what the server may read before it refuses. */
const ONE_READ = 64 * 1024 + 1024

let t: TestApp
let host: string
let port: number
/** The server's side of every connection, by the client's port: what the server read from it. */
const serverSockets = new Map<number, net.Socket>()
beforeAll(async () => {
  // 60 failures a minute: an address gets ceil(60 / 60) = 1 oversized payload (413) before it is refused.
  t = await startTestApp({ env: { RATE_LIMIT_PUBLIC_FAILURES_PER_MINUTE: '60' }, clock })
  host = await t.burrow.app.listen({ port: 0, host: '127.0.0.1' })
  port = (t.burrow.app.server.address() as net.AddressInfo).port
  t.burrow.app.server.on('connection', (socket: net.Socket) => {
    if (socket.remotePort !== undefined) serverSockets.set(socket.remotePort, socket)
  })
})
afterAll(() => t.close())

/** An lz64 bomb from `localAddress`: 413, and the address has used its one oversized payload of the minute. */
async function spendAllowance(localAddress: string) {
  const bomb = lzBomb(8_000)
  const answer = await upload({ localAddress, path: '/i/v0/e/?compression=lz64', declared: bomb.length, body: bomb })
  expect(answer.head).toMatch(/^HTTP\/1\.1 413 /)
}

interface Upload {
  /** Everything the server answered (head and body). */
  head: string
  /** Bytes the client managed to hand to its socket before the server closed. */
  written: number
  /** Bytes the server's side of the connection read. */
  serverRead: number
  closedByServer: boolean
  /** Whether the connection ended with a reset (rather than the server's FIN). */
  reset: boolean
}

/**
 * A POST from `localAddress` that declares `declared` bytes of body and sends `body` (or, without one, 1 MiB
 * chunks of spaces) as fast as the connection takes it, until everything is sent or the server closes.
 */
function upload(options: { localAddress: string; path: string; declared: number; body?: string }): Promise<Upload> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: options.localAddress })
    let head = ''
    let written = 0
    let closedByServer = false
    let reset = false
    let localPort = -1
    const timer = setTimeout(() => socket.destroy(), 20_000)
    socket.on('data', (data) => {
      head += data.toString('latin1')
    })
    socket.on('error', (err: NodeJS.ErrnoException) => {
      closedByServer = true
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') reset = true
    })
    socket.on('end', () => {
      closedByServer = true
    })
    socket.on('close', () => {
      clearTimeout(timer)
      const server = serverSockets.get(localPort)
      resolve({ head, written, serverRead: server?.bytesRead ?? -1, closedByServer, reset })
    })
    socket.once('connect', () => {
      localPort = socket.localPort ?? -1
      socket.write(
        `POST ${options.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: text/plain\r\n` +
          `Content-Length: ${options.declared}\r\n\r\n`,
      )
      if (options.body !== undefined) {
        // Not ended: a client half-closing its side is not waited for by Node's HTTP server.
        written = Buffer.byteLength(options.body)
        socket.write(options.body)
        return
      }
      const chunk = Buffer.alloc(MiB, 0x20)
      const pump = () => {
        while (!socket.destroyed && written < options.declared) {
          written += chunk.length
          if (!socket.write(chunk)) {
            socket.once('drain', pump)
            return
          }
        }
      }
      pump()
    })
    socket.once('error', (err) => {
      if (localPort < 0) reject(err)
    })
  })
}

function expectThrottledAnswer(head: string) {
  expect(head).toMatch(/^HTTP\/1\.1 429 /)
  expect(head.toLowerCase()).toMatch(/\r\nretry-after: \d+\r\n/)
  expect(head.toLowerCase()).toContain('\r\nconnection: close\r\n')
  const body = JSON.parse(head.slice(head.indexOf('\r\n\r\n') + 4))
  expect(body).toEqual({
    type: 'throttled_error',
    code: 'throttled',
    detail: expect.stringMatching(/^Request was throttled\. Expected available in \d+ seconds\.$/),
    attr: null,
  })
}

/** A batch of `n` events of about `size` bytes each, as posthog-node would send them. */
const bigProperties = (i: number, size: number) => ({ i, filler: `${i}-${'p'.repeat(size)}` })

describe('ordinary traffic is not refused', () => {
  it('posthog-node captures a 300 KB batch and evaluates flags from an address with nothing refused', async () => {
    const errors: unknown[] = []
    const client = new PostHog(t.creds.project_api_key, {
      host,
      flushAt: 60,
      flushInterval: 0,
      fetchRetryCount: 0,
      disableCompression: true,
    })
    client.on('error', (err) => errors.push(err))
    // 60 events of ~5 KB: a body of ~300 KB, more than one read of the server's.
    for (let i = 0; i < 60; i++) {
      client.capture({ distinctId: 'refusal-unread-node', event: 'big batch', properties: bigProperties(i, 5_000) })
    }
    await client.flush()
    expect(await client.getAllFlags('refusal-unread-node')).toEqual({})
    await client.shutdown()
    expect(errors).toEqual([])
    const stored = await t.burrow.events.query<[string]>(
      'SELECT count() FROM events WHERE team_id = {team:Int64} AND distinct_id = {id:String}',
      { params: { team: t.creds.project_id, id: 'refusal-unread-node' } },
    )
    expect(Number(stored.rows[0][0])).toBe(60)
  })
})

describe('a throttled address', () => {
  it('gets its 429 while uploading 32 MB, and the server closes having read one read of it', async () => {
    await spendAllowance('127.0.0.2')
    const declared = 32 * MiB
    const answer = await upload({ localAddress: '127.0.0.2', path: '/i/v0/e/?compression=lz64', declared })
    expectThrottledAnswer(answer.head)
    expect(answer.closedByServer).toBe(true)
    // Before, Node read the rest of the body until the connection was closed (~200 KB of each lz64 bomb).
    expect(answer.serverRead).toBeGreaterThan(0)
    expect(answer.serverRead).toBeLessThanOrEqual(ONE_READ)
    // The client could not send the whole body: the server closed before it was sent in full.
    expect(answer.written).toBeLessThan(declared)
  }, 30_000)

  it('gets 429s for a flood of 250 KB lz64 bombs, each body left unread past its first read', async () => {
    const bomb = lzBomb(90_000)
    expect(bomb.length).toBeGreaterThan(200_000)
    for (let i = 0; i < 20; i++) {
      const answer = await upload({
        localAddress: '127.0.0.2',
        path: '/i/v0/e/?compression=lz64',
        declared: bomb.length,
        body: bomb,
      })
      expectThrottledAnswer(answer.head)
      expect(answer.serverRead).toBeGreaterThan(0)
      expect(answer.serverRead).toBeLessThanOrEqual(ONE_READ)
    }
  })

  it('a body that fully arrived before the refusal is closed as Node closes it (FIN, not a reset)', async () => {
    const answer = await upload({
      localAddress: '127.0.0.2',
      path: '/i/v0/e/',
      declared: 1_000,
      body: 'x'.repeat(1_000),
    })
    expectThrottledAnswer(answer.head)
    expect(answer.serverRead).toBeGreaterThan(1_000)
    expect(answer.closedByServer).toBe(true)
    expect(answer.reset).toBe(false)
  })

  it(`answers an address's refusals past ${TARPIT_AFTER} in its window ${TARPIT_MS} ms late, still with PostHog's 429`, async () => {
    await spendAllowance('127.0.0.3')
    const timed = async () => {
      const started = performance.now()
      const answer = await upload({ localAddress: '127.0.0.3', path: '/i/v0/e/', declared: 2, body: '{}' })
      expectThrottledAnswer(answer.head)
      return performance.now() - started
    }
    const first: number[] = []
    for (let i = 0; i < TARPIT_AFTER; i++) first.push(await timed())
    // Not all of the first ones waited (they are answered at once; generous for a loaded machine).
    expect(first.reduce((a, b) => a + b, 0)).toBeLessThan(TARPIT_AFTER * TARPIT_MS)
    for (let i = 0; i < 5; i++) expect(await timed()).toBeGreaterThanOrEqual(TARPIT_MS * 0.9)
    // Another address is not slowed by it.
    await spendAllowance('127.0.0.4')
    const other = performance.now()
    const answer = await upload({ localAddress: '127.0.0.4', path: '/i/v0/e/', declared: 2, body: '{}' })
    expectThrottledAnswer(answer.head)
    expect(performance.now() - other).toBeLessThan(10_000)
  }, 60_000)

  it(`answers an address's failures past ${TARPIT_AFTER} in a minute ${TARPIT_MS} ms late (a flood of over-deep events)`, async () => {
    // 200 levels: past capture's 128, a 400 (60 failures a minute are allowed here, so none of these is a 429).
    const deep = `{"api_key":"${t.creds.project_api_key}","event":"deep","distinct_id":"d","properties":${'['.repeat(200)}${']'.repeat(200)}}`
    const timed = async () => {
      const started = performance.now()
      const answer = await upload({ localAddress: '127.0.0.5', path: '/i/v0/e/', declared: deep.length, body: deep })
      expect(answer.head).toMatch(/^HTTP\/1\.1 400 /)
      expect(answer.head).toContain('"code":"invalid_payload"')
      return performance.now() - started
    }
    const first: number[] = []
    for (let i = 0; i < TARPIT_AFTER; i++) first.push(await timed())
    expect(first.reduce((a, b) => a + b, 0)).toBeLessThan(TARPIT_AFTER * TARPIT_MS)
    for (let i = 0; i < 5; i++) expect(await timed()).toBeGreaterThanOrEqual(TARPIT_MS * 0.9)
  }, 60_000)

  it('fetch and posthog-node see the 429, not a reset connection, for bodies the server leaves unread', async () => {
    // This test's own address (fetch cannot choose one) is throttled from here on.
    await spendAllowance('127.0.0.1')
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${host}/i/v0/e/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_key: t.creds.project_api_key, event: 'x', blob: 'b'.repeat(4 * MiB) }),
      })
      expect(res.status).toBe(429)
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/)
      expect(await res.json()).toMatchObject({ type: 'throttled_error', code: 'throttled' })
    }

    const errors: unknown[] = []
    const client = new PostHog(t.creds.project_api_key, {
      host,
      flushAt: 60,
      flushInterval: 0,
      fetchRetryCount: 0,
      disableCompression: true,
    })
    client.on('error', (err) => errors.push(err))
    for (let i = 0; i < 60; i++) {
      client.capture({ distinctId: 'refusal-unread-throttled', event: 'refused', properties: bigProperties(i, 5_000) })
    }
    await client.flush().catch(() => undefined)
    await client.shutdown()
    expect(errors.length).toBeGreaterThan(0)
    for (const err of errors) expect(err).toMatchObject({ name: 'PostHogFetchHttpError', status: 429 })
  }, 60_000)

  it('leaves no connection lingering past its moment, and the rest of the API answers', async () => {
    const deadline = Date.now() + 10 * LINGER_MS + 5_000
    while (lingeringConnections() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(lingeringConnections()).toBe(0)
    const projects = await fetch(`${host}/api/projects/`, { headers: t.auth })
    expect(projects.status).toBe(200)
  })
})

describe('credentials sending refused queries back to back', () => {
  it(`get their 400s past ${TARPIT_AFTER} in a minute ${TARPIT_MS} ms late (a flood of unreadable HogQL), and good queries at once`, async () => {
    // 300 parentheses: past the 200 levels HogQL reads, a 400 after the body is read and parsed (the benchmark's
    // attack has 100,000). The query limit (240 a minute) counts each one but is not reached here.
    const deep = JSON.stringify({
      query: { kind: 'HogQLQuery', query: `select ${'('.repeat(300)}1${')'.repeat(300)}` },
      refresh: 'force_blocking',
    })
    const send = async (body: string) => {
      const started = performance.now()
      const res = await fetch(`${host}/api/projects/${t.creds.project_id}/query/`, {
        method: 'POST',
        headers: { ...t.auth, 'content-type': 'application/json' },
        body,
      })
      return {
        status: res.status,
        body: (await res.json()) as Record<string, unknown>,
        ms: performance.now() - started,
      }
    }
    const first: number[] = []
    for (let i = 0; i < TARPIT_AFTER; i++) {
      const answer = await send(deep)
      expect(answer.status).toBe(400)
      expect(answer.body).toMatchObject({ type: 'validation_error', code: 'hogql_syntax_error' })
      first.push(answer.ms)
    }
    // Not all of the first ones waited (they are answered at once; generous for a loaded machine).
    expect(first.reduce((a, b) => a + b, 0)).toBeLessThan(TARPIT_AFTER * TARPIT_MS)
    for (let i = 0; i < 5; i++) {
      const answer = await send(deep)
      expect(answer.status).toBe(400)
      expect(answer.body).toMatchObject({ type: 'validation_error', code: 'hogql_syntax_error' })
      expect(answer.ms).toBeGreaterThanOrEqual(TARPIT_MS * 0.9)
    }
    // Only refusals are slowed: the same key's good query still runs and is answered as usual.
    const good = await send(JSON.stringify({ query: { kind: 'HogQLQuery', query: 'select 1 + 1' } }))
    expect(good.status).toBe(200)
    expect(good.body.results).toEqual([[2]])
  }, 60_000)
})
