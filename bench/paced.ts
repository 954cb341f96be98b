/**
 * An open-loop load generator: requests are due at a steady rate whatever the answers' speed (as real traffic
 * from many independent clients is), spread evenly rather than in per-connection bursts. Sending never waits for
 * answers, and latency counts from the moment a request was due, so a stall on either side shows in every
 * request due during it (no coordinated omission).
 *
 * It shares the machine's cores with the server under test, so it is built to take as little CPU as it can:
 * requests are pre-encoded buffers written to plain sockets, and answers are read into one reused buffer per
 * connection (`onread`) and parsed only as far as the status code and Content-Length. An `http.Agent`-based
 * client allocated a Buffer, a parser state and a response object per answer; its own garbage collections then
 * held a core for several milliseconds at a time, and the kernel often queued the server behind it.
 */
import net from 'node:net'

export interface PacedResult {
  rps: number
  p50: number
  p99: number
  max: number
  errors: number
}

export interface PacedRun extends PacedResult {
  /** Every request's latency in ms, sorted (to pool runs: the p99 of several phases together). */
  latencies: Float64Array
}

/** The p-th percentile of sorted latencies (as `percentile` in lib.ts, for a typed array). */
export function percentileOf(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

/** The latencies of several runs as one sorted list. */
export function pooled(results: readonly PacedRun[]): Float64Array {
  const all = new Float64Array(results.reduce((n, r) => n + r.latencies.length, 0))
  let at = 0
  for (const r of results) {
    all.set(r.latencies, at)
    at += r.latencies.length
  }
  return all.sort()
}

const HEADER_END = Buffer.from('\r\n\r\n')
const CONTENT_LENGTH = /\r\ncontent-length:\s*(\d+)/i

interface Connection {
  socket: net.Socket
  /** When the request in flight was due (performance.now()); -1 when idle. */
  dueAt: number
  /** Header bytes of the answer read so far (an answer's head can arrive split over reads). */
  head: Buffer[]
  /** Body bytes still to read once the head is complete; -1 while reading the head. */
  remaining: number
  status: number
}

export async function pacedLoad(options: {
  url: string
  rate: number
  durationS: number
  headers: Record<string, string>
  bodies: string[]
  connections?: number
}): Promise<PacedRun> {
  const target = new URL(options.url)
  const maxConnections = options.connections ?? 256
  const headerLines = Object.entries(options.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')
  const requests = options.bodies.map((body) =>
    Buffer.from(
      `POST ${target.pathname}${target.search} HTTP/1.1\r\nhost: ${target.host}\r\n${headerLines}` +
        `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    ),
  )
  const total = Math.round(options.rate * options.durationS)
  const interval = 1000 / options.rate
  const latencies = new Float64Array(total)
  let errors = 0
  let sent = 0
  let done = 0
  const idle: Connection[] = []
  const all: Connection[] = []
  /** Due times of requests waiting for a free connection (all connections busy). */
  const waiting: number[] = []
  const start = performance.now()

  return new Promise<PacedRun>((resolve, reject) => {
    const finish = () => {
      const elapsed = (performance.now() - start) / 1000
      for (const connection of all) connection.socket.destroy()
      const sorted = latencies.sort()
      resolve({
        rps: total / elapsed,
        p50: percentileOf(sorted, 50),
        p99: percentileOf(sorted, 99),
        max: sorted[sorted.length - 1] ?? 0,
        errors,
        latencies: sorted,
      })
    }
    const complete = (connection: Connection) => {
      latencies[done] = performance.now() - connection.dueAt
      if (connection.status >= 300) errors++
      connection.dueAt = -1
      connection.head = []
      connection.remaining = -1
      if (++done === total) return finish()
      const due = waiting.shift()
      if (due !== undefined) send(connection, due)
      else idle.push(connection)
    }
    const onRead = (connection: Connection, bytes: number, buffer: Buffer) => {
      let offset = 0
      while (offset < bytes) {
        if (connection.remaining < 0) {
          let text: string
          const end = connection.head.length === 0 ? buffer.indexOf(HEADER_END, offset) : -1
          if (end >= 0 && end + HEADER_END.length <= bytes) {
            // The usual case: the whole head is in this read; parse it in place.
            text = buffer.toString('latin1', offset, end)
            offset = end + HEADER_END.length
          } else {
            connection.head.push(Buffer.from(buffer.subarray(offset, bytes)))
            const head = Buffer.concat(connection.head)
            const headEnd = head.indexOf(HEADER_END)
            if (headEnd < 0) return
            text = head.toString('latin1', 0, headEnd)
            // The bytes after the head in this read belong to the body.
            offset = bytes - (head.length - headEnd - HEADER_END.length)
            connection.head = []
          }
          const length = CONTENT_LENGTH.exec(text)
          if (!length) return reject(new Error(`answer without Content-Length: ${text.slice(0, 200)}`))
          connection.status = Number(text.slice(9, 12))
          connection.remaining = Number(length[1])
        }
        const take = Math.min(connection.remaining, bytes - offset)
        connection.remaining -= take
        offset += take
        if (connection.remaining === 0) complete(connection)
      }
    }
    const open = (): Connection => {
      const buffer = Buffer.allocUnsafe(64 * 1024)
      const connection: Connection = { socket: undefined as never, dueAt: -1, head: [], remaining: -1, status: 0 }
      connection.socket = net.connect({
        host: target.hostname,
        port: Number(target.port),
        noDelay: true,
        onread: {
          buffer,
          callback: (bytes) => {
            onRead(connection, bytes, buffer)
            return true
          },
        },
      })
      connection.socket.on('error', () => {
        if (connection.dueAt >= 0) {
          errors++
          latencies[done] = performance.now() - connection.dueAt
          if (++done === total) finish()
        }
        all.splice(all.indexOf(connection), 1)
      })
      all.push(connection)
      return connection
    }
    const send = (connection: Connection, dueAt: number) => {
      connection.dueAt = dueAt
      connection.socket.write(requests[sent % requests.length])
      sent++
    }
    const tick = () => {
      const now = performance.now()
      for (let due = start + sent * interval; sent + waiting.length < total && due <= now; ) {
        const connection = idle.pop() ?? (all.length < maxConnections ? open() : undefined)
        if (connection) send(connection, due)
        else waiting.push(due)
        due = start + (sent + waiting.length) * interval
      }
      if (sent + waiting.length < total) {
        setTimeout(tick, Math.max(0, start + (sent + waiting.length) * interval - performance.now()))
      }
    }
    tick()
  })
}
