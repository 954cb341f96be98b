/**
 * An open-loop load generator: requests leave at a steady rate whatever the answers' speed (as real traffic
 * from many independent clients does), spread evenly rather than in per-connection bursts. Sending never waits
 * for answers, so a server stall shows in every request sent during it (no coordinated omission); latency
 * counts from the moment a request is written.
 */
import http from 'node:http'
import { percentile } from './lib.js'

export interface PacedResult {
  rps: number
  p50: number
  p99: number
  max: number
  errors: number
}

export async function pacedLoad(options: {
  url: string
  rate: number
  durationS: number
  headers: Record<string, string>
  bodies: string[]
  connections?: number
}): Promise<PacedResult> {
  const target = new URL(options.url)
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections ?? 256 })
  const total = Math.round(options.rate * options.durationS)
  const interval = 1000 / options.rate
  const latencies: number[] = []
  let errors = 0
  let sent = 0
  let done = 0
  const start = performance.now()
  await new Promise<void>((resolve) => {
    const send = (body: string) => {
      const sentAt = performance.now()
      const req = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname + target.search,
          method: 'POST',
          agent,
          headers: { ...options.headers, 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.on('data', () => undefined)
          res.on('end', () => {
            if ((res.statusCode ?? 0) >= 300) errors++
            latencies.push(performance.now() - sentAt)
            if (++done === total) resolve()
          })
        },
      )
      req.on('error', () => {
        errors++
        if (++done === total) resolve()
      })
      req.end(body)
    }
    const tick = () => {
      const now = performance.now()
      while (sent < total && start + sent * interval <= now) {
        send(options.bodies[sent % options.bodies.length])
        sent++
      }
      if (sent < total) setTimeout(tick, Math.max(0, start + sent * interval - performance.now()))
    }
    tick()
  })
  const elapsed = (performance.now() - start) / 1000
  agent.destroy()
  latencies.sort((a, b) => a - b)
  return {
    rps: total / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1] ?? 0,
    errors,
  }
}
