/**
 * The attacker of bench/hostile.ts part 2, in a process of its own (forked with advanced serialization): its
 * requests (writing 4 MB bodies, reading answers, its garbage collections) then never delay the event loop that
 * sends and times project A's traffic. In the same process they shared it, and whatever of that client work
 * delayed A's requests counted as the server's latency.
 *
 * The first message sets it up: `url` (the server), `requests` (path, headers, body; sent in turn),
 * `localAddress`, `max` requests, `timeoutMs` per answer; it answers `ready`. Then `{ go: durationMs }`: it sends
 * one request at a time back to back until the duration is over (or `{ stop: true }` arrives), and answers
 * `{ statuses, times, first }`.
 */
import { request } from './hostile-lib.js'

interface AttackerData {
  url: string
  requests: { path: string; headers: Record<string, string>; body: Uint8Array }[]
  localAddress: string
  max: number
  timeoutMs: number
}

const send = (message: unknown) => {
  if (!process.send) throw new Error('hostile-attacker runs as a forked process')
  process.send(message)
}
let data: AttackerData | undefined
let stopped = false

process.on('message', async (message: { setup?: AttackerData; go?: number; stop?: true }) => {
  if (message.setup) {
    data = message.setup
    send('ready')
    return
  }
  if (message.stop) {
    stopped = true
    return
  }
  if (message.go === undefined || !data) return
  const bodies = data.requests.map((r) => Buffer.from(r.body.buffer, r.body.byteOffset, r.body.byteLength))
  const statuses: number[] = []
  const times: number[] = []
  let first = ''
  const end = performance.now() + message.go
  for (let i = 0; i < data.max && performance.now() < end && !stopped; i++) {
    const r = data.requests[i % data.requests.length]
    const answer = await request({
      url: `${data.url}${r.path}`,
      headers: r.headers,
      body: bodies[i % bodies.length],
      localAddress: data.localAddress,
      timeoutMs: data.timeoutMs,
    })
    statuses.push(answer.status)
    times.push(answer.ms)
    if (i === 0) first = answer.body.slice(0, 120).replace(/\s+/g, ' ')
  }
  send({ statuses, times, first })
  // Done: the parent has what it needs.
  process.disconnect()
})
