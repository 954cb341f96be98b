/**
 * How far one actor got through a funnel, from their events in time order (hogql.md §4.3, §4.12 "Funnels"): the
 * step matching PostHog's funnel aggregation does outside SQL, on the per-actor event arrays the HogQL query
 * returns. Ordered and strict funnels follow each attempt from a step-1 event (the latest one wins, so the
 * window is used best); unordered funnels count the distinct steps inside the best window. Pure.
 */

export type FunnelOrder = 'ordered' | 'strict' | 'unordered'
export type Attribution = 'first_touch' | 'last_touch' | 'all_events' | 'step'

export interface FunnelEvent {
  /** seconds since the epoch (fractional) */
  ts: number
  uuid: string
  /**
   * 1-based numbers of the steps this event matches; a negative `-(k + 1)` marks an exclusion event for actors
   * who completed k steps (between step k − 1 and step k, 0-based)
   */
  steps: number[]
  /** breakdown value ('' when missing) and whether the property was set */
  breakdown: string
  hasBreakdown: boolean
  /** the event's interval bucket (trends) */
  bucket?: string
}

export interface FunnelOptions {
  steps: number
  order: FunnelOrder
  /** conversion window in seconds, measured from the step-1 event */
  window: number
  /** 1-based numbers of optional steps */
  optional: Set<number>
  attribution: Attribution
  /** the 0-based step whose event must carry the breakdown value (attribution `step`) */
  attributionStep?: number
}

/** One actor's path for one breakdown value: the furthest step (1-based count) and when each step happened. */
export interface FunnelPath {
  breakdown: string
  /** number of the furthest mandatory-or-optional step reached (1-based), 0 when none */
  reached: number
  /** bit i set when step i (0-based) is on the path */
  stepsMask: number
  /** timestamp of each 0-based step on the path (undefined for skipped optional steps and steps not reached) */
  times: (number | undefined)[]
}

interface Entry {
  start: number
  excluded: boolean
  times: (number | undefined)[]
  uuids: string[]
  mask: number
}

/** The breakdown values an actor is counted under, by attribution. */
export function breakdownValuesOf(events: FunnelEvent[], options: FunnelOptions, hasBreakdown: boolean): string[] {
  if (!hasBreakdown) return ['']
  switch (options.attribution) {
    case 'first_touch':
      return [events.find((e) => e.hasBreakdown)?.breakdown ?? '']
    case 'last_touch':
      return [[...events].reverse().find((e) => e.hasBreakdown)?.breakdown ?? '']
    case 'all_events':
      return [...new Set(events.map((e) => e.breakdown))]
    case 'step': {
      // the values of the attribution step's events: an actor who never did that step's event has none
      const step = (options.attributionStep ?? 0) + 1
      return [...new Set(events.filter((e) => e.steps.includes(step)).map((e) => e.breakdown))]
    }
  }
}

function groupByTimestamp(events: FunnelEvent[]): FunnelEvent[][] {
  const groups: FunnelEvent[][] = []
  for (const e of events) {
    const last = groups[groups.length - 1]
    if (last && last[0].ts === e.ts) last.push(e)
    else groups.push([e])
  }
  return groups
}

const sameSteps = (a: number[], b: number[]) => a.length === b.length && a.every((s, i) => s === b[i])

/**
 * The furthest path of an ordered or strict funnel for one breakdown value; undefined when the actor never
 * did step 1 or was excluded. `canStart` limits the events that may start an attempt (funnel trends).
 */
export function matchOrdered(
  events: FunnelEvent[],
  options: FunnelOptions,
  breakdown: string,
  canStart: (e: FunnelEvent) => boolean = () => true,
): FunnelPath | undefined {
  const n = options.steps
  const entered: (Entry | undefined)[] = new Array(n + 1).fill(undefined)
  let max: { step: number; entry?: Entry } = { step: 0 }
  const filtered = options.attribution === 'all_events' ? events.filter((e) => e.breakdown === breakdown) : events

  const process = (e: FunnelEvent, multiple: boolean) => {
    for (const raw of [...e.steps].reverse()) {
      const exclusion = raw < 0
      const step = Math.abs(raw)
      let prev = step - 1
      const inWindow = (i: number) => entered[i] !== undefined && e.ts - (entered[i] as Entry).start <= options.window
      // skip back over optional steps the actor did not do
      while (prev > 0 && !inWindow(prev) && options.optional.has(prev)) prev--
      if (!inWindow(prev)) continue
      const p = entered[prev] as Entry
      const current = entered[step]
      if (current !== undefined && current.start === p.start) continue
      if (exclusion) {
        if (!p.excluded) {
          p.excluded = true
          if (max.step === prev && max.entry && e.ts - max.entry.start <= options.window) {
            max.entry = { ...max.entry, excluded: true }
          }
        }
        continue
      }
      const unmatchedAttribution =
        options.attribution === 'step' && options.attributionStep === prev && e.breakdown !== breakdown
      const alreadyUsed = multiple && p.uuids.includes(e.uuid)
      if (unmatchedAttribution || alreadyUsed) continue
      const times = [...p.times]
      times[step - 1] = e.ts
      const next: Entry = {
        start: p.start,
        excluded: p.excluded,
        times,
        uuids: [...p.uuids, e.uuid],
        mask: p.mask | (1 << (step - 1)),
      }
      if (!p.excluded) entered[step] = next
      if (step > max.step || (step === max.step && max.entry?.excluded)) max = { step, entry: { ...next } }
    }
    if (!multiple && options.order === 'strict') {
      for (let i = 1; i <= n; i++) if (!e.steps.includes(i)) entered[i] = undefined
    }
  }

  for (const group of groupByTimestamp(filtered)) {
    const ts = group[0].ts
    entered[0] = canStart(group[0]) ? { start: ts, excluded: false, times: [], uuids: [], mask: 0 } : undefined
    if (group.length === 1 || group.every((e) => sameSteps(e.steps, group[0].steps))) {
      for (const e of group) process(e, false)
    } else {
      // events at the same instant: each of their steps in step order (exclusions and strictness ignored)
      const split = group
        .flatMap((e) => e.steps.filter((s) => s > 0).map((s) => ({ ...e, steps: [s] })))
        .sort((a, b) => a.steps[0] - b.steps[0])
      for (const e of split) process(e, true)
    }
    if (entered[n] !== undefined) break
  }
  if (!max.entry || max.entry.excluded || max.step === 0) return undefined
  return { breakdown, reached: max.step, stepsMask: max.entry.mask, times: max.entry.times }
}

/**
 * The best window of an unordered funnel: from each event that may start one, the distinct steps done within
 * the conversion window (each event counting for one step); the first window with the most steps wins. An
 * exclusion event between the first and last step of that window excludes the actor.
 */
export function matchUnordered(
  events: FunnelEvent[],
  options: FunnelOptions,
  breakdown: string,
  canStart: (e: FunnelEvent) => boolean = () => true,
): FunnelPath | undefined {
  const filtered = options.attribution === 'all_events' ? events.filter((e) => e.breakdown === breakdown) : events
  let best: { count: number; times: number[]; first: number; last: number } | undefined
  for (let a = 0; a < filtered.length; a++) {
    const anchor = filtered[a]
    if (!anchor.steps.some((s) => s > 0) || !canStart(anchor)) continue
    if (options.attribution === 'step' && anchor.breakdown !== breakdown) continue
    const done = new Map<number, number>()
    for (let i = a; i < filtered.length && filtered[i].ts - anchor.ts <= options.window; i++) {
      const step = filtered[i].steps.find((s) => s > 0 && !done.has(s))
      if (step !== undefined) done.set(step, filtered[i].ts)
      if (done.size === options.steps) break
    }
    const times = [...done.values()].sort((x, y) => x - y)
    if (!best || done.size > best.count) {
      best = { count: done.size, times, first: times[0], last: times[times.length - 1] }
    }
    if (best.count === options.steps) break
  }
  if (!best) return undefined
  const { first, last } = best
  if (filtered.some((e) => e.steps.some((s) => s < 0) && e.ts >= first && e.ts <= last)) return undefined
  return {
    breakdown,
    reached: best.count,
    stepsMask: (1 << best.count) - 1,
    times: best.times,
  }
}

/** Every path of one actor: one per breakdown value they are counted under. */
export function matchActor(
  events: FunnelEvent[],
  options: FunnelOptions,
  hasBreakdown: boolean,
  canStart?: (e: FunnelEvent) => boolean,
): FunnelPath[] {
  const sorted = [...events].sort((a, b) => a.ts - b.ts)
  const match = options.order === 'unordered' ? matchUnordered : matchOrdered
  return breakdownValuesOf(sorted, options, hasBreakdown)
    .map((value) => match(sorted, options, value, canStart))
    .filter((p): p is FunnelPath => p !== undefined)
}

/** Seconds from the previous step on the path to step `i` (undefined for step 0 or when either is missing). */
export function stepDuration(path: FunnelPath, i: number): number | undefined {
  const at = path.times[i]
  if (i === 0 || at === undefined) return undefined
  for (let j = i - 1; j >= 0; j--) {
    const before = path.times[j]
    if (before !== undefined) return at - before
  }
  return undefined
}

/** Median as ClickHouse's exact quantile gives it (the mean of the two middle values for an even count). */
export function median(values: number[]): number | null {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

export const average = (values: number[]): number | null =>
  values.length === 0 ? null : values.reduce((s, v) => s + v, 0) / values.length

/** PostHog's time-to-convert histogram: `[bin start seconds, actors]` pairs over the conversion times. */
export function timeToConvertBins(timings: number[], binCount?: number): [number, number][] {
  const count =
    binCount !== undefined
      ? Math.min(90, Math.max(1, binCount))
      : Math.min(60, Math.max(1, Math.ceil(Math.cbrt(timings.length))))
  const min = timings.length === 0 ? 0 : Math.floor(Math.min(...timings))
  const max = timings.length === 0 ? 0 : Math.ceil(Math.max(...timings))
  const raw = Math.ceil((max - min) / count)
  const width = raw > 0 ? raw : 60
  const bins: [number, number][] = Array.from({ length: count + 1 }, (_, k) => [Math.round(min + k * width), 0])
  for (const t of timings) {
    const k = Math.floor((t - min) / width)
    if (k >= 0 && k <= count) bins[k][1]++
  }
  return bins
}
