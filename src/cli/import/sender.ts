/**
 * Posting batches to a running Burrow's `/batch/`: gzip'd, several in flight, backing off on 429, 5xx and lost
 * connections (honouring Retry-After), and taking apart a batch the server refuses with a 400 so that only the
 * events it names are rejected and the rest are stored.
 */
import { promisify } from 'node:util'
import zlib from 'node:zlib'

const gzip = promisify(zlib.gzip)

export interface PendingEvent {
  /** The event as JSON text. */
  json: string
  /** Where it came from, for the rejects file. */
  line: number
  text: string
}

export interface SendOptions {
  host: string
  token: string
  historical: boolean
  /** Attempts per request before the import stops (it can be resumed). */
  maxAttempts?: number
  /** Base delay of the exponential backoff, ms. */
  backoffMs?: number
  sleep?: (ms: number) => Promise<void>
  fetch?: typeof fetch
  onRetry?: (status: number | string, delayMs: number) => void
}

/** The server refused the whole import (wrong key, plan, unreachable past every retry): stop, resumable. */
export class FatalSendError extends Error {}

export interface SendResult {
  stored: number
  rejected: { event: PendingEvent; reason: string }[]
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Sends one batch; resolves once every event is stored or rejected. */
export async function sendBatch(events: PendingEvent[], options: SendOptions): Promise<SendResult> {
  const result: SendResult = { stored: 0, rejected: [] }
  const queue: PendingEvent[][] = [events]
  while (queue.length > 0) {
    const batch = queue.shift() as PendingEvent[]
    if (batch.length === 0) continue
    const answer = await post(batch, options)
    if (answer.ok) {
      const tooDeep = new Set<number>()
      for (const r of answer.rejected) {
        tooDeep.add(r.index)
        result.rejected.push({ event: batch[r.index], reason: r.detail })
      }
      result.stored += batch.length - tooDeep.size
      continue
    }
    // A 400 naming one event (`batch__N__…`): reject that one, send the rest again.
    const named = /^batch__(\d+)/.exec(answer.attr ?? '')
    const index = named ? Number(named[1]) : -1
    if (index >= 0 && index < batch.length) {
      result.rejected.push({ event: batch[index], reason: answer.detail })
      queue.unshift(batch.filter((_, i) => i !== index))
    } else if (batch.length === 1) {
      result.rejected.push({ event: batch[0], reason: answer.detail })
    } else {
      const half = Math.ceil(batch.length / 2)
      queue.unshift(batch.slice(0, half), batch.slice(half))
    }
  }
  return result
}

type Answer =
  | { ok: true; rejected: { index: number; detail: string }[] }
  | { ok: false; attr: string | null; detail: string }

async function post(batch: PendingEvent[], options: SendOptions): Promise<Answer> {
  const body = await gzip(
    `{"api_key":${JSON.stringify(options.token)},${options.historical ? '"historical_migration":true,' : ''}"batch":[${batch.map((e) => e.json).join(',')}]}`,
  )
  const doFetch = options.fetch ?? fetch
  const sleep = options.sleep ?? wait
  const maxAttempts = options.maxAttempts ?? 8
  const url = new URL('/batch/', options.host).toString()
  for (let attempt = 1; ; attempt++) {
    let status: number | string
    let retryAfter: number | undefined
    try {
      const res = await doFetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body,
      })
      const text = await res.text()
      if (res.ok) {
        const parsed = safeJson(text) as { rejected?: { index: number; detail: string }[] } | undefined
        return { ok: true, rejected: parsed?.rejected ?? [] }
      }
      const error = safeJson(text) as { detail?: string; attr?: string | null } | undefined
      const detail = error?.detail ?? `HTTP ${res.status}`
      if (res.status === 400) return { ok: false, attr: error?.attr ?? null, detail }
      if (res.status !== 429 && res.status < 500) throw new FatalSendError(`${url} answered ${res.status}: ${detail}`)
      status = res.status
      const header = res.headers.get('retry-after')
      if (header && /^\d+$/.test(header)) retryAfter = Number(header) * 1000
    } catch (err) {
      if (err instanceof FatalSendError) throw err
      status = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message
    }
    if (attempt >= maxAttempts) {
      throw new FatalSendError(`${url} kept failing (${status}) after ${attempt} attempts`)
    }
    const backoff = (options.backoffMs ?? 250) * 2 ** (attempt - 1)
    const delay = Math.min(30_000, retryAfter ?? backoff * (0.5 + Math.random()))
    options.onRetry?.(status, delay)
    await sleep(delay)
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
