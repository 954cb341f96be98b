/**
 * Maximum throughput with wrk (C, one thread): far lighter than a Node load generator, so on a shared two-core
 * machine more of the CPU is left to the server under test. Falls back to autocannon when wrk is missing.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import autocannon from 'autocannon'

export interface MaxResult {
  tool: 'wrk' | 'autocannon'
  /** Requests answered (any status) and of those the non-2xx ones. */
  requests: number
  non2xx: number
  rps: number
  p50: number
  p99: number
  errors: number
}

const hasWrk = () => spawnSync('wrk', ['--version']).error === undefined

type Numbered = { prefix: string; modulo: number; middle: string; suffix: string }

/** Lua for wrk: POSTs the bodies in turn with the given headers. */
/** Marks a place in a body that gets a fresh UUID in every request (so that stored events are never retries). */
export const FRESH_UUID = '@@UUID@@'

function script(bodies: string[], headers: Record<string, string>, numbered?: Numbered): string {
  const lua = (s: string) => JSON.stringify(s) // JSON string escapes are valid Lua escapes for this text
  const headerTable = Object.entries(headers)
    .map(([k, v]) => `[${lua(k)}]=${lua(v)}`)
    .join(',')
  const run = Math.floor(Math.random() * 0xffffffff)
  const common = `headers = {${headerTable}}
i = 0
n = 0
fresh_uuid = function()
  n = n + 1
  return string.format("%08x-%04x-4%03x-8%03x-%012x", ${run}, math.floor(n / 16777216) % 65536, math.floor(n / 4096) % 4096, n % 4096, n)
end
`
  if (!numbered && bodies.some((b) => b.includes(FRESH_UUID))) {
    // Each body pre-split at its markers: a request joins the pieces around fresh uuids (no pattern search over
    // the whole body per request, which made wrk take a good part of a core from the server under test).
    const pieces = bodies.map((b) => `{${b.split(FRESH_UUID).map(lua).join(',')}}`)
    return `${common}bodies = {${pieces.join(',')}}
request = function()
  i = i + 1
  local pieces = bodies[(i % #bodies) + 1]
  local out = {}
  for k = 1, #pieces - 1 do
    out[2 * k - 1] = pieces[k]
    out[2 * k] = fresh_uuid()
  end
  out[2 * #pieces - 1] = pieces[#pieces]
  return wrk.format("POST", nil, headers, table.concat(out))
end
`
  }
  const body = numbered
    ? `${lua(numbered.prefix)} .. (i % ${numbered.modulo}) .. ${lua(numbered.middle)} .. i .. ${lua(numbered.suffix)}`
    : 'bodies[(i % #bodies) + 1]'
  return `${common}bodies = {${bodies.map(lua).join(',')}}
request = function()
  i = i + 1
  return wrk.format("POST", nil, headers, ${body})
end
`
}

/** wrk prints latencies as 1.23ms / 456.78us / 1.02s. */
function millis(text: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text.trim())
  if (!match) return Number.NaN
  const value = Number(match[1])
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value
}

export async function maxLoad(options: {
  url: string
  durationS: number
  connections: number
  headers: Record<string, string>
  bodies: string[]
  /** Bodies made per request instead: `prefix + (n % modulo) + middle + n + suffix` for the n-th request. */
  numbered?: Numbered
}): Promise<MaxResult> {
  const numbered = options.numbered
  const bodyOf = (n: number) =>
    numbered
      ? `${numbered.prefix}${n % numbered.modulo}${numbered.middle}${n}${numbered.suffix}`
      : options.bodies[n % options.bodies.length].replaceAll(FRESH_UUID, () => crypto.randomUUID())
  if (!hasWrk()) {
    let next = 0
    const result = await autocannon({
      url: options.url,
      method: 'POST',
      headers: options.headers,
      connections: options.connections,
      duration: options.durationS,
      requests: [{ setupRequest: (req) => ({ ...req, body: bodyOf(next++) }) }],
    })
    return {
      tool: 'autocannon',
      requests: result.requests.total,
      non2xx: result.non2xx,
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      errors: result.non2xx + result.errors,
    }
  }
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-wrk-')), 'bodies.lua')
  fs.writeFileSync(file, script(options.bodies, options.headers, numbered))
  const out = execFileSync(
    'wrk',
    ['-t1', `-c${options.connections}`, `-d${options.durationS}s`, '--latency', '-s', file, options.url],
    { encoding: 'utf8', maxBuffer: 1 << 20 },
  )
  fs.rmSync(path.dirname(file), { recursive: true, force: true })
  const line = (label: RegExp) => out.split('\n').find((l) => label.test(l)) ?? ''
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0)
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)
  return {
    tool: 'wrk',
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? 0),
    non2xx,
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]),
    p50: millis(
      line(/^\s+50%/)
        .trim()
        .split(/\s+/)[1] ?? '',
    ),
    p99: millis(
      line(/^\s+99%/)
        .trim()
        .split(/\s+/)[1] ?? '',
    ),
    errors: non2xx + (socketErrors ? socketErrors.slice(1).reduce((a, b) => a + Number(b), 0) : 0),
  }
}
