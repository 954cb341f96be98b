/**
 * Single-event capture at a fixed rate on a fresh server: what new persons cost against known ones, measured so
 * that neither side is favoured by when it runs.
 *
 * After the first seconds of the start (every user new on its first event), phases of known persons and of events
 * each from a new person alternate, known first and last: K N K N K. A phase measured only before the new ones
 * runs in a younger process (smaller heap, store and caches); one measured only after them pays for their
 * leftovers (their rows still being moved into the engine and merged, the metadata log they grew). The goal's
 * figure pools the phases: the p99 of every new-person request against the p99 of every known-person request,
 * so that drift in the process and in the machine's load weighs on both alike. Each phase's own p99 is reported
 * too, and the ratio against the known phases before and after each new one.
 */
import fs from 'node:fs'
import { cpuSeconds, realisticEvent } from './lib.js'
import { type PacedRun, pacedLoad, percentileOf, pooled } from './paced.js'

export interface Phase extends PacedRun {
  kind: 'start' | 'known' | 'new'
  /** The server's CPU time per request over the phase, all threads (µs). */
  cpuMicros: number
  /** Time the request thread was ready to run but waited for a core, per second of the phase (ms). */
  waitedMsPerS: number
}

export interface SingleEventFigures {
  phases: Phase[]
  afterStart: Phase
  known: { p50: number; p99: number; max: number }
  fresh: { p50: number; p99: number; max: number }
  /** Pooled new-person p99 over pooled known p99: the goal's figure. */
  ratio: number
  /** Each new phase's p99 against the known phase just before it, and just after it. */
  ratioBefore: number[]
  ratioAfter: number[]
  errors: number
}

/** Time a thread has waited in the run queue so far (ms), from `/proc/<pid>/task/<tid>/schedstat` (Linux). */
export function runQueueMs(pid: number): number {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6
  } catch {
    return Number.NaN
  }
}

export async function singleEventPhases(options: {
  url: string
  token: string
  /** The server's process id (CPU time and run-queue wait are read from /proc). */
  pid: number
  rate?: number
  phaseS?: number
  /** Pairs of (known, new) phases after the first known one. */
  pairs?: number
}): Promise<SingleEventFigures> {
  const { url, token, pid } = options
  const rate = options.rate ?? 2000
  const phaseS = options.phaseS ?? 10
  const pairs = options.pairs ?? 2
  const headers = { 'content-type': 'application/json' }
  const total = rate * phaseS
  // Fresh uuids per request: a reused body would be deduplicated, not stored. Users 0–4,999: each seen in the
  // start phase, known ever after.
  let known = 0
  const knownBodies = () =>
    Array.from({ length: total }, () => JSON.stringify({ api_key: token, ...realisticEvent(known++, token) }))
  let stranger = 0
  const strangerBodies = () =>
    Array.from({ length: total }, () => {
      const event = realisticEvent(stranger, token)
      ;(event.properties as Record<string, unknown>).distinct_id = `stranger-${stranger++}`
      return JSON.stringify({ api_key: token, ...event })
    })
  const phases: Phase[] = []
  const run = async (kind: Phase['kind'], bodies: string[]) => {
    const cpu = cpuSeconds(pid)
    const waited = runQueueMs(pid)
    const started = performance.now()
    const result = await pacedLoad({ url, rate, durationS: phaseS, headers, bodies })
    const seconds = (performance.now() - started) / 1000
    phases.push({
      ...result,
      kind,
      cpuMicros: ((cpuSeconds(pid) - cpu) * 1e6) / total,
      waitedMsPerS: (runQueueMs(pid) - waited) / seconds,
    })
  }
  await run('start', knownBodies())
  await run('known', knownBodies())
  for (let i = 0; i < pairs; i++) {
    await run('new', strangerBodies())
    await run('known', knownBodies())
  }
  const summary = (list: Phase[]) => {
    const all = pooled(list)
    return { p50: percentileOf(all, 50), p99: percentileOf(all, 99), max: all[all.length - 1] ?? 0 }
  }
  const knownPhases = phases.filter((p) => p.kind === 'known')
  const newPhases = phases.filter((p) => p.kind === 'new')
  const k = summary(knownPhases)
  const n = summary(newPhases)
  return {
    phases,
    afterStart: phases[0],
    known: k,
    fresh: n,
    ratio: n.p99 / k.p99,
    ratioBefore: newPhases.map((p) => p.p99 / phases[phases.indexOf(p) - 1].p99),
    ratioAfter: newPhases.map((p) => p.p99 / phases[phases.indexOf(p) + 1].p99),
    errors: phases.reduce((e, p) => e + p.errors, 0),
  }
}
