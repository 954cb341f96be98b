/** Helpers of bench/hostile.ts: the server's memory, one-off requests from a chosen local address, hostile bodies. */
import fs from 'node:fs'
import http from 'node:http'
import { percentile } from './lib.js'

/** The resident memory of a process in MB (VmRSS), or 0 once it has gone. */
export function rssMb(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) / 1024 : 0
  } catch {
    return 0
  }
}

/**
 * Bytes a process has read so far through read-like system calls (`rchar` of /proc/<pid>/io): its sockets' bytes
 * and its files', so differences between phases that read the same files tell what the sockets took.
 */
export function bytesRead(pid: number): number {
  try {
    const match = /rchar:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/io`, 'utf8'))
    return match ? Number(match[1]) : 0
  } catch {
    return 0
  }
}

/** Samples a process's RSS every 100 ms until stopped; keeps the first sample and the peak. */
export function watchRss(pid: number) {
  const first = rssMb(pid)
  let peak = first
  const timer = setInterval(() => {
    peak = Math.max(peak, rssMb(pid))
  }, 100)
  return {
    first,
    stop(): { first: number; peak: number; last: number } {
      clearInterval(timer)
      const last = rssMb(pid)
      return { first, peak: Math.max(peak, last), last }
    },
  }
}

export interface Answer {
  /** HTTP status; 0 when the request timed out, -1 when the connection failed (reset, refused) before an answer. */
  status: number
  ms: number
  body: string
}

/**
 * One request on a connection of its own, from `localAddress` (another loopback address than the paced
 * traffic's 127.0.0.1, so that the server's per-IP failure limits count the attacker apart from it).
 */
export function request(options: {
  url: string
  method?: string
  headers?: Record<string, string>
  body?: Buffer | string
  localAddress?: string
  timeoutMs?: number
}): Promise<Answer> {
  const target = new URL(options.url)
  if (target.hostname !== '127.0.0.1') throw new Error('hostile benchmark requests go to 127.0.0.1 only')
  const started = performance.now()
  return new Promise((resolve) => {
    let settled = false
    const done = (status: number, body: string) => {
      if (settled) return
      settled = true
      resolve({ status, ms: performance.now() - started, body })
    }
    const req = http.request(
      {
        host: '127.0.0.1',
        port: Number(target.port),
        path: `${target.pathname}${target.search}`,
        method: options.method ?? 'POST',
        headers: {
          connection: 'close',
          ...options.headers,
          ...(options.body !== undefined ? { 'content-length': String(Buffer.byteLength(options.body)) } : {}),
        },
        localAddress: options.localAddress,
        agent: false,
        timeout: options.timeoutMs ?? 30_000,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => done(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')))
        res.on('error', () => done(res.statusCode ?? 0, ''))
      },
    )
    req.on('timeout', () => {
      req.destroy()
      done(0, 'timeout')
    })
    req.on('error', (err) => done(-1, err.message))
    if (options.body !== undefined) req.write(options.body)
    req.end()
  })
}

/** `413×12, 429×300` */
export function statusSummary(statuses: number[]): string {
  const counts = new Map<number, number>()
  for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1)
  return [...counts.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([s, n]) => `${s === 0 ? 'timed out' : s === -1 ? 'connection reset' : s}×${n}`)
    .join(', ')
}

/**
 * GETs a path every `intervalMs` (a request is sent on time even while the last one is unanswered) until
 * `durationS` is over; latency from the send.
 */
export async function probe(url: string, intervalMs: number, durationS: number) {
  const pending: Promise<Answer>[] = []
  const end = performance.now() + durationS * 1000
  while (performance.now() < end) {
    pending.push(request({ url, method: 'GET', timeoutMs: 10_000 }))
    await new Promise((r) => setTimeout(r, intervalMs))
  }
  const answers = await Promise.all(pending)
  const sorted = answers.map((a) => a.ms).sort((a, b) => a - b)
  return {
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? 0,
    failed: answers.filter((a) => a.status !== 200).length,
  }
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

/**
 * A valid lz-string base64 stream of `chars` characters whose output is quadratic in its length: one literal
 * 'a', then every code names the entry one past the dictionary's end (the previous entry plus its first
 * character), so each entry is one character longer than the last. 250,000 characters decompress to ~4·10⁹
 * characters. The bits are written as lz-string's compressor writes them (each code lowest bit first, six bits
 * to a character, first bit highest), the code width growing as its decompressor grows it.
 */
export function lz64Bomb(chars: number): string {
  let out = ''
  let value = 0
  let position = 0
  const write = (code: number, bits: number) => {
    for (let i = 0; i < bits; i++) {
      value = (value << 1) | ((code >> i) & 1)
      if (++position === 6) {
        out += BASE64[value]
        value = 0
        position = 0
      }
    }
  }
  write(0, 2)
  write(97, 8)
  let dictSize = 4
  let numBits = 3
  let enlargeIn = 4
  while (out.length < chars) {
    write(dictSize, numBits)
    dictSize++
    if (--enlargeIn === 0) {
      enlargeIn = 2 ** numBits
      numBits++
    }
  }
  write(2, numBits)
  if (position > 0) out += BASE64[value << (6 - position)]
  while (out.length % 4 !== 0) out += '='
  return out
}
