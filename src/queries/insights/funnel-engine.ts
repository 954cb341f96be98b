/**
 * Ordered and strict funnels matched inside the engine (hogql.md §4.3, §4.12 "Funnels"): HogQL expressions that
 * walk one actor's time-sorted step events the way `funnel-match.ts`'s `matchOrdered` does, so the query returns
 * aggregated rows instead of every actor's events. Pure: builds text.
 *
 * An actor's events arrive sorted as `Array(Tuple(ts Float64, step mask UInt64, exclusion mask UInt64[,
 * breakdown String, has breakdown, bucket String]))`: bit i − 1 of the step mask for step i, bit k − 1 of the
 * exclusion mask for an exclusion that applies to actors who completed k steps (`FunnelEvent.steps`' −(k + 1)).
 *
 * Two walks, chosen per actor (each walk gets only the events of the actors it is for; the path is picked after):
 * - `levelsColumns`, for ordered funnels without exclusions or optional steps and actors without an instant whose
 *   events match different steps (nearly everyone): a handful of whole-array passes per step, no fold.
 * - `foldExpr`, for everything else: an `arrayFold` whose state is a flat tuple of scalars, for each entry
 *   `entered[j]` (an attempt that completed j steps; `entered[0]` is the attempt the current event may start,
 *   never stored): its start (−1: none), the time of each of its steps, excluded flag, step mask and the
 *   events it used at the instant being split; then the furthest path (step, times, excluded, start, mask).
 *   Events at one instant that match different steps are split into one event per step, in step order, and an
 *   event may then not be used twice on one path (a bit per event of the instant, by its place modulo 64);
 *   exclusions and strictness ignore such instants (as the walker). Within one event every step reads the state
 *   before the event (the walker goes from the last step down, so no step sees another's update), exclusions
 *   first. Values used more than once are bound once per event with one-element `arrayMap`s.
 */
import type { Attribution } from './funnel-match.js'

export interface EngineFunnel {
  /** steps matched (the funnel's, or up to funnelToStep for trends) */
  steps: number
  strict: boolean
  /** conversion window in seconds */
  window: number
  /** 1-based numbers of optional steps */
  optional: Set<number>
  attribution: Attribution
  attributionStep?: number
  /** k (1 … steps − 1) for which some event may carry the exclusion marker −(k + 1) */
  exclusionKs: number[]
}

const lit = (v: number) => (Number.isInteger(v) ? String(v) : v.toString())
const bit = (s: number) => 2 ** (s - 1)
const and = (...parts: string[]) => {
  const kept = parts.filter((p) => p !== '1')
  if (kept.includes('0')) return '0'
  return kept.length === 0 ? '1' : kept.length === 1 ? kept[0] : `and(${kept.join(', ')})`
}
const or = (...parts: string[]) => {
  const kept = parts.filter((p) => p !== '0')
  if (kept.includes('1')) return '1'
  return kept.length === 0 ? '0' : kept.length === 1 ? kept[0] : `or(${kept.join(', ')})`
}
const not = (p: string) => (p === '0' ? '1' : p === '1' ? '0' : `not(${p})`)
/** `multiIf` over (condition, value) pairs, `otherwise` when none holds */
const pick = (cases: [string, string][], otherwise: string) => {
  const live = cases.filter(([c]) => c !== '0')
  if (live.length === 0) return otherwise
  return `multiIf(${live.map(([c, v]) => `${c}, ${v}`).join(', ')}, ${otherwise})`
}

/**
 * The fold over the expanded events `evs` — tuples (ts, step mask, exclusion mask, can start, split, used bit,
 * breakdown matches, order) — as a flat tuple of scalars (see the file's comment), returning the furthest path
 * (reached, excluded, times, mask, start).
 */
function foldExpr(f: EngineFunnel, evs: string): string {
  const n = f.steps
  const W = lit(f.window)
  const hasExcl = f.exclusionKs.length > 0
  const hasOpt = [...f.optional].some((o) => o <= n)
  const fields: string[] = []
  const inits: string[] = []
  const at = new Map<string, number>()
  const field = (name: string, init: string) => {
    fields.push(name)
    inits.push(init)
    at.set(name, fields.length)
  }
  const S = (name: string) => `S.${at.get(name)}`
  for (let j = 1; j <= n; j++) {
    field(`st${j}`, '-1.0')
    for (let i = 1; i <= j; i++) field(`t${j}_${i}`, '-1.0')
    if (hasExcl) field(`ex${j}`, '_toInt64(0)')
    if (hasOpt) field(`mk${j}`, '_toUInt64(0)')
    field(`us${j}`, '_toUInt64(0)')
  }
  field('Ms', '_toInt64(0)')
  for (let i = 1; i <= n; i++) field(`Mt${i}`, '-1.0')
  if (hasExcl) {
    field('Mx', '_toInt64(0)')
    field('Mst', '-1.0')
  }
  if (hasOpt) field('Mmk', '_toUInt64(0)')

  // after a completed attempt's instant the walk stops: later events change nothing
  // values worked out once per event, bound with a one-element arrayMap: A (the walk has ended, exclusions),
  // then B (the ways each step may be taken)
  const aParts: string[] = []
  const bParts: string[] = []
  const bind = (parts: string[], name: string, expr: string) => {
    parts.push(expr)
    return `${name}.${parts.length}`
  }
  const doneText = `and(greaterOrEquals(${S(`st${n}`)}, 0), greater(x.1, ${S(`t${n}_${n}`)}))`
  const done = bind(aParts, 'A', doneText)
  const has = (s: number) => `and(not(${done}), notEquals(bitAnd(x.2, ${bit(s)}), 0))`
  const hasX = (k: number) => `and(not(${doneText}), notEquals(bitAnd(x.3, ${bit(k)}), 0))`
  const inW = (j: number) =>
    j === 0
      ? 'notEquals(x.4, 0)'
      : `and(greaterOrEquals(${S(`st${j}`)}, 0), lessOrEquals(minus(x.1, ${S(`st${j}`)}), ${W}))`
  const start = (j: number) => (j === 0 ? 'x.1' : S(`st${j}`))
  const notSame = (s: number, p: number) =>
    `not(and(greaterOrEquals(${S(`st${s}`)}, 0), equals(${S(`st${s}`)}, ${start(p)})))`
  const used = (p: number) =>
    p === 0 ? '0' : `and(notEquals(x.5, 0), equals(${S(`t${p}_${p}`)}, x.1), notEquals(bitAnd(${S(`us${p}`)}, x.6), 0))`
  const attr = (p: number) => (f.attribution === 'step' && f.attributionStep === p ? 'notEquals(x.7, 0)' : '1')
  const exOld = (j: number) => (hasExcl && j > 0 ? S(`ex${j}`) : '0')
  const mkOf = (j: number) => (j === 0 ? '_toUInt64(0)' : hasOpt ? S(`mk${j}`) : `_toUInt64(${2 ** j - 1})`)
  const timeOf = (p: number, i: number) => (i <= p ? S(`t${p}_${i}`) : '-1.0')
  /** the entries step s may follow: s − 1, then back over optional steps */
  const candidates = (s: number) => {
    const out = [s - 1]
    while (out[out.length - 1] > 0 && f.optional.has(out[out.length - 1])) out.push(out[out.length - 1] - 1)
    return out
  }
  /** step s follows its i-th candidate: the earlier ones are out of the window (the last is taken regardless) */
  const picks = (s: number, i: number) =>
    and(
      ...candidates(s)
        .slice(0, i)
        .map((c) => not(inW(c))),
    )
  const viaEach = (s: number) => candidates(s).map((p, i) => ({ p, via: picks(s, i) }))

  // exclusions first: marker −(k + 1) marks the entry that step k + 1 would follow
  const marks = (j: number): string[] =>
    f.exclusionKs.flatMap((k) =>
      viaEach(k + 1)
        .filter(({ p }) => p === j)
        .map(({ p, via }) => and(hasX(k), via, inW(p), notSame(k + 1, p))),
    )
  const exABound = new Map<number, string>()
  for (let j = 1; j < n; j++) if (marks(j).length > 0) exABound.set(j, bind(aParts, 'A', or(exOld(j), ...marks(j))))
  const exA = (j: number) => (j === 0 ? '0' : (exABound.get(j) ?? exOld(j)))
  const maxMarks: string[] = []
  if (hasExcl) {
    for (let j = 1; j < n; j++) {
      for (const m of marks(j)) {
        maxMarks.push(and(m, not(exOld(j)), `equals(${S('Ms')}, ${j})`, `lessOrEquals(minus(x.1, ${S('Mst')}), ${W})`))
      }
    }
  }
  const maxEx = hasExcl ? bind(aParts, 'A', or(S('Mx'), ...maxMarks)) : '0'

  const ok = (s: number, p: number) => and(inW(p), notSame(s, p), attr(p), not(used(p)))
  const out: string[] = []
  const wins: { s: number; p: number; when: string }[] = []
  for (let j = 1; j <= n; j++) {
    const ways = viaEach(j).map(({ p, via }) => ({ p, step: bind(bParts, 'B', and(has(j), via, ok(j, p))) }))
    const adv = ways.map(({ p, step }) => ({ p, when: and(step, not(exA(p))) }))
    const gone = f.strict ? and(not(done), 'equals(x.5, 0)', not(`notEquals(bitAnd(x.2, ${bit(j)}), 0)`)) : '0'
    const next = (value: (p: number) => string, old: string) =>
      pick(
        adv.map(({ p, when }) => [when, value(p)]),
        old,
      )
    const st = next((p) => start(p), S(`st${j}`))
    out.push(gone === '0' ? st : `if(${gone}, -1.0, ${st})`)
    for (let i = 1; i <= j; i++) out.push(next((p) => (i === j ? 'x.1' : timeOf(p, i)), S(`t${j}_${i}`)))
    if (hasExcl) out.push(`_toInt64(${next(() => '0', exA(j))})`)
    if (hasOpt) out.push(next((p) => `bitOr(${mkOf(p)}, _toUInt64(${bit(j)}))`, S(`mk${j}`)))
    out.push(
      next(
        (p) =>
          p === 0
            ? 'if(notEquals(x.5, 0), x.6, _toUInt64(0))'
            : `if(notEquals(x.5, 0), bitOr(if(equals(${S(`t${p}_${p}`)}, x.1), ${S(`us${p}`)}, _toUInt64(0)), x.6), _toUInt64(0))`,
        S(`us${j}`),
      ),
    )
    const beats = hasExcl
      ? or(`greater(${j}, ${S('Ms')})`, and(`equals(${S('Ms')}, ${j})`, maxEx))
      : `greater(${j}, ${S('Ms')})`
    for (const { p, step } of ways) wins.push({ s: j, p, when: and(step, beats) })
  }
  // the furthest path: the highest step this event passes, when it beats the one so far
  wins.sort((a, b) => b.s - a.s)
  const maxOf = (value: (s: number, p: number) => string, old: string) =>
    pick(
      wins.map(({ s, p, when }) => [when, value(s, p)]),
      old,
    )
  out.push(`_toInt64(${maxOf((s) => String(s), S('Ms'))})`)
  for (let i = 1; i <= n; i++) {
    out.push(maxOf((s, p) => (i < s ? timeOf(p, i) : i === s ? 'x.1' : '-1.0'), S(`Mt${i}`)))
  }
  if (hasExcl) {
    out.push(`_toInt64(${maxOf((_, p) => exA(p), maxEx)})`)
    out.push(maxOf((_, p) => start(p), S('Mst')))
  }
  if (hasOpt) out.push(maxOf((s, p) => `bitOr(${mkOf(p)}, _toUInt64(${bit(s)}))`, S('Mmk')))
  const let_ = (name: string, parts: string[], body: string) =>
    `arrayMap(${name} -> ${body}, [(${parts.join(', ')}${parts.length === 1 ? ', 0' : ''})])[1]`
  const step = let_('A', aParts, let_('B', bParts, `(${out.join(', ')})`))
  const fold = `arrayFold((S, x) -> ${step}, ${evs}, (${inits.join(', ')}))`
  // the path: (reached, excluded, times, mask, start)
  const times = Array.from({ length: n }, (_, i) => `r.${at.get(`Mt${i + 1}`)}`)
  const reached = `r.${at.get('Ms')}`
  return (
    `arrayMap(r -> (${reached}, _toInt64(${hasExcl ? `r.${at.get('Mx')}` : '0'}), [${times.join(', ')}], ` +
    `${hasOpt ? `r.${at.get('Mmk')}` : `_toUInt64(minus(bitShiftLeft(_toUInt64(1), ${reached}), 1))`}), [${fold}])[1]`
  )
}

/**
 * The events as the fold reads them: (optionally) only those of breakdown value `bv`, grouped by instant; an
 * instant whose events do not all match the same steps becomes one event per step, in step order, each with
 * a bit for the event it came from (its place at the instant, modulo 64).
 */
function expandedExpr(
  f: EngineFunnel,
  evs: string,
  bv: string,
  canStart: string,
): { filtered: string; canStart: string; bvok: string; grouped: string; plain: string } {
  const filtered = f.attribution === 'all_events' ? `arrayFilter(y -> equals(y.4, ${bv}), ${evs})` : evs
  const bvok = f.attribution === 'step' ? `equals(y.4, ${bv})` : '1'
  const lean = `arrayMap(y -> (y.1, y.2, y.3, _toInt64(${canStart}), _toInt64(${bvok})), ${filtered})`
  const ts = `arrayMap(y -> y.1, ${filtered})`
  // the time before each event's (−1 for the first; no events: none)
  const before = `arrayResize(arrayPushFront(${ts}, -1.0), length(${ts}))`
  const flags = `arrayMap((a, b) -> notEquals(a, b), ${ts}, ${before})`
  const bits = `[${Array.from({ length: f.steps }, (_, i) => `_toUInt64(${bit(i + 1)})`).join(', ')}]`
  const split =
    `arraySort(z -> (z.2, z.8), arrayFlatten(arrayMap((y, i) -> arrayMap(b -> (y.1, b, _toUInt64(0), y.4, _toInt64(1), ` +
    `_toUInt64(bitShiftLeft(_toUInt64(1), modulo(i - 1, 64))), y.5, _toInt64(i)), ` +
    `arrayFilter(b -> notEquals(bitAnd(y.2, b), 0), ${bits})), g, arrayEnumerate(g))))`
  const whole = 'arrayMap(y -> (y.1, y.2, y.3, y.4, _toInt64(0), _toUInt64(0), y.5, _toInt64(0)), g)'
  const grouped =
    `arrayFlatten(arrayMap(g -> if(arrayExists(y -> or(notEquals(y.2, g[1].2), notEquals(y.3, g[1].3)), g), ` +
    `${split}, ${whole}), arraySplit((y, b) -> b, ${lean}, ${flags})))`
  const plain = `arrayMap(y -> (y.1, y.2, y.3, y.4, _toInt64(0), _toUInt64(0), y.5, _toInt64(0)), ${lean})`
  return { filtered, canStart, bvok, grouped, plain }
}

/**
 * The walk without a fold, level by level over whole arrays, for ordered funnels without exclusions, optional
 * steps or instants to split (`events`: tuples ts, step mask, exclusion mask, can start, breakdown matches). The
 * attempt that completed s steps, after each event: the walker replaces it when a step-s event follows an
 * attempt of s − 1 steps inside the window that started later than the one it holds (starts only grow), so
 * each level is a forward fill of the level below, shifted by one event. The furthest path is the first
 * attempt to reach the highest level, with the step times it carried.
 *
 * Every intermediate array is a column of its own, selected beside the events in `layers` of subqueries (one per
 * level; each layer's columns `expr AS name`, names starting with `prefix`, read the layers before): the engine
 * computes a column once, where a subexpression written twice inside one lambda is computed twice, and a
 * subquery per level keeps the engine from expanding each level's columns into the next one's (which grows
 * with every level). `path` is the tuple (reached, 0, times, mask) over them.
 */
function levelsColumns(
  f: EngineFunnel,
  events: string,
  canStart: string,
  bvok: string,
  prefix: string,
): { layers: string[][]; path: string } {
  const n = f.steps
  const W = lit(f.window)
  const layers: string[][] = [[]]
  const col = (name: string, expr: string) => {
    layers[layers.length - 1].push(`${expr} AS ${prefix}${name}`)
    return `${prefix}${name}`
  }
  const prev = (a: string) => `arrayPushFront(arrayPopBack(${a}), -1.0)`
  const fill = (values: string, flags: string) => `arrayFill((v, c) -> c, ${values}, ${flags})`
  /** values where flags hold, carried forward; −1 before the first */
  const keep = (values: string, flags: string) => fill(`arrayMap((v, c) -> if(c, v, -1.0), ${values}, ${flags})`, flags)
  const attr = (s: number) => (f.attribution === 'step' && f.attributionStep === s - 1 ? `, ${bvok}` : '')
  const e = col('e', events)
  const ts = col('ts', `arrayMap(y -> y.1, ${e})`)
  // level s: took (the event took step s), start (time of step 1), and the time of each step 2 … s, after each event
  const took: string[] = []
  const start: string[] = []
  const times: string[][] = []
  took[1] = col('t1', `arrayMap(y -> and(notEquals(bitAnd(y.2, 1), 0), ${canStart}${attr(1)}), ${e})`)
  start[1] = col('s1', keep(ts, took[1]))
  times[1] = [start[1]]
  for (let s = 2; s <= n; s++) {
    layers.push([])
    const below = col(`p${s}`, prev(start[s - 1]))
    const cand = col(
      `c${s}`,
      `arrayMap((y, p) -> and(notEquals(bitAnd(y.2, ${bit(s)}), 0), greaterOrEquals(p, 0), ` +
        `lessOrEquals(minus(y.1, p), ${W})${attr(s)}), ${e}, ${below})`,
    )
    const held = prev(fill(`arrayMap((p, c) -> if(c, p, -1.0), ${below}, ${cand})`, cand))
    took[s] = col(`t${s}`, `arrayMap((c, p, q) -> and(c, notEquals(p, q)), ${cand}, ${below}, ${held})`)
    start[s] = col(`s${s}`, keep(below, took[s]))
    times[s] = [start[s]]
    for (let k = 2; k < s; k++) times[s].push(col(`k${s}_${k}`, keep(prev(times[s - 1][k - 1]), took[s])))
    times[s].push(col(`k${s}_${s}`, keep(ts, took[s])))
  }
  layers.push([])
  // the last layer picks from arrays instead of `multiIf`: the engine evaluates a branch of `if`/`multiIf` on its
  // own, and then evaluates again every column that branch reads, for each place it reads it
  const firstAt = Array.from({ length: n + 1 }, (_, s) =>
    s === 0 ? '' : col(`f${s}`, `arrayFirstIndex(v -> v, ${took[s]})`),
  )
  /** the place (1-based) of the highest level s ≥ k that was reached, counted from the top, or past them all */
  const highest = (k: number) => {
    const flags = []
    for (let s = n; s >= k; s--) flags.push(`greater(${firstAt[s]}, 0)`)
    return `indexOf([${flags.join(', ')}, 1], 1)`
  }
  const top = col('top', highest(1))
  const reached = col('reached', `_toInt64(minus(${n + 1}, ${top}))`)
  const stepTimes = Array.from({ length: n }, (_, k) => {
    const values = []
    for (let s = n; s >= k + 1; s--) values.push(`${times[s][k]}[${firstAt[s]}]`)
    return `[${values.join(', ')}, -1.0][${k === 0 ? top : highest(k + 1)}]`
  })
  return {
    layers,
    path: `(${reached}, _toInt64(0), [${stepTimes.join(', ')}], _toUInt64(minus(bitShiftLeft(_toUInt64(1), ${reached}), 1)))`,
  }
}

/**
 * The events the level walk needs, for an ordered funnel without exclusions or optional steps where every event
 * may start an attempt and count for the breakdown (`levelsColumns`' `canStart` and `bvok` are true): an event
 * that matches no step changes no level; of a run of events that match only step 1, only the last matters (each
 * replaces the attempt at level 1 with a later start, and nothing reads level 1 in between: the path's step-1
 * time is read only once a later step is reached, from the attempt that step took); of a run of events that
 * match only step s > 1, only the first may take level s (the later ones see the same attempt below, either
 * out of the window or already taken). Most events of a funnel's first step come in runs, so the walk's dozens
 * of passes go over far fewer events.
 */
function compactedExpr(evs: string): string {
  const masks = `arrayMap(y -> y.2, ${evs})`
  const next = `arrayResize(arrayPopFront(${masks}), length(${masks}), _toUInt64(0))`
  const prev = `arrayResize(arrayPushFront(${masks}, _toUInt64(0)), length(${masks}))`
  // a mask with one bit: bitAnd(m, m − 1) = 0
  return (
    `arrayFilter((y, m, a, b) -> and(notEquals(m, 0), not(and(equals(m, 1), equals(a, 1))), ` +
    `not(and(greater(m, 1), equals(bitAnd(m, minus(m, 1)), 0), equals(b, m)))), ${evs}, ${masks}, ${next}, ${prev})`
  )
}

/**
 * The breakdown values an actor is counted under (as `breakdownValuesOf`), over the sorted events `evs`
 * (tuples: ts, step mask, exclusion mask, breakdown, has breakdown, bucket).
 */
export function breakdownValuesExpr(f: EngineFunnel, evs: string, hasBreakdown: boolean): string {
  if (!hasBreakdown) return "['']"
  switch (f.attribution) {
    case 'first_touch':
      return `[arrayFirst(y -> y.5, ${evs}).4]`
    case 'last_touch':
      return `[arrayLast(y -> y.5, ${evs}).4]`
    case 'all_events':
      return `arrayDistinct(arrayMap(y -> y.4, ${evs}))`
    case 'step':
      return `arrayDistinct(arrayMap(y -> y.4, arrayFilter(y -> notEquals(bitAnd(y.2, ${bit((f.attributionStep ?? 0) + 1)}), 0), ${evs})))`
  }
}

/**
 * The furthest path of an actor for breakdown value `bv` (a column), as a tuple (reached step, excluded, times,
 * mask); reached 0 or excluded: no path. `mixed` says whether the actor has events at one instant that match
 * different steps (`mixedExpr`); `canStart` is a condition on the event `y`. The path reads the columns of
 * `layers` (`expr AS name`, names starting with `prefix`), which the query selects beside `bv` and the events
 * first, one subquery per layer.
 */
export function pathExpr(
  f: EngineFunnel,
  evs: string,
  bv: string,
  mixed: string,
  canStart = '1',
  prefix = 'walk_',
): { layers: string[][]; path: string } {
  const { filtered, canStart: cs, bvok } = expandedExpr(f, evs, bv, canStart)
  // each walk runs over the rows of the actors it is for only, and the path is picked from an array of both: the
  // engine would otherwise evaluate an `if` branch on its own, computing its inputs again for each place they are
  // read; and a fold costs per row even over no events. A fold maps over the actor's events wrapped in a
  // one-element array, empty for the other actors (the pick then ignores the default it reads there).
  const foldFor = (keep: string, input: 'grouped' | 'plain') =>
    `arrayMap(E -> ${foldExpr(f, expandedExpr(f, 'E', bv, canStart)[input])}, arrayFilter(E -> ${keep}, [${evs}]))[1]`
  const either = (ifMixed: string, otherwise: string) => `[${ifMixed}, ${otherwise}][if(${mixed}, 1, 2)]`
  const simple = !f.strict && f.exclusionKs.length === 0 && ![...f.optional].some((o) => o <= f.steps)
  if (!simple) {
    return { layers: [], path: either(foldFor(mixed, 'grouped'), foldFor(`not(${mixed})`, 'plain')) }
  }
  const walked = cs === '1' && bvok === '1' ? compactedExpr(filtered) : filtered
  const levels = levelsColumns(f, walked, cs, bvok, prefix)
  return { layers: levels.layers, path: either(foldFor(mixed, 'grouped'), levels.path) }
}

/**
 * Whether an actor has events at one instant that match different steps, over the sorted events `evs` (by time,
 * then steps: such events are neighbours). Most actors have none, and only their rows take the fold.
 */
export function mixedExpr(evs: string): string {
  return (
    `arrayExists((a, b) -> and(equals(a.1, b.1), or(notEquals(a.2, b.2), notEquals(a.3, b.3))), ` +
    `arrayPopFront(${evs}), arrayPopBack(${evs}))`
  )
}

/** The events with steps past `steps` (and exclusions past them) dropped: the funnel up to funnelToStep. */
export function truncatedExpr(evs: string, steps: number): string {
  return `arrayMap(y -> (y.1, bitAnd(y.2, ${2 ** steps - 1}), bitAnd(y.3, ${2 ** (steps - 1) - 1}), y.4, y.5, y.6), ${evs})`
}

/**
 * Whether an ordered funnel can take the coded walk (`codedPathColumns`): no strict order, exclusions or optional
 * steps, every event may start an attempt and counts for the one (empty) breakdown value, and the range's
 * microseconds fit beside the step mask in a UInt64.
 */
export function isCodable(f: EngineFunnel, spanMicros: number): boolean {
  return (
    !f.strict &&
    f.exclusionKs.length === 0 &&
    ![...f.optional].some((o) => o <= f.steps) &&
    f.attribution === 'first_touch' &&
    spanMicros < 2 ** (63 - f.steps)
  )
}

/**
 * An event as one UInt64 for the coded walk: microseconds since `from` above the step mask (`steps` bits), so
 * that sorting an actor's codes sorts their events by time, then steps, as the tuples do, with the engine's
 * sort of plain numbers instead of tuples (the largest part of building the arrays).
 */
export function eventCodeExpr(from: string, stepMask: string, steps: number): string {
  return `bitOr(bitShiftLeft(_toUInt64(dateDiff('microsecond', ${from}, timestamp)), ${steps}), ${stepMask})`
}

/**
 * The walk of `levelsColumns` over an actor's sorted event codes (`eventCodeExpr`), for funnels `isCodable`
 * allows; times in microseconds since the range's start. Level s after each event is the start of the attempt
 * that completed s steps: an event of step s takes level s when the attempt below started within the window
 * before it (`c`), and level s then holds that start until the next such event (starts only grow, and an
 * attempt is replaced only by one that started later, so the fill of the starts below at the taking events is
 * the level). The furthest path is the first event that took the highest level reached; its start P, and each
 * earlier step's time is that of the first event that took its level with start P (the attempt was made there
 * and carried up unchanged). No tuples, no step times carried along each level: fewer, cheaper passes than
 * `levelsColumns`. Actors with events at one instant that match different steps, one of them several steps
 * (`mixed`), take the fold.
 */
export function codedPathColumns(
  f: EngineFunnel,
  codes: string,
  prefix = 'walk_',
): { layers: string[][]; path: string } {
  const n = f.steps
  const W = lit(f.window)
  const M = 2 ** n - 1
  const layers: string[][] = [[]]
  const col = (name: string, expr: string) => {
    layers[layers.length - 1].push(`${expr} AS ${prefix}${name}`)
    return `${prefix}${name}`
  }
  // the fold is needed only at an instant whose events match different steps, one of them several: the walker
  // then splits each event into one per step and uses an event once on a path; with one step per event its
  // split is the events themselves, in step order, as sorted here
  const several = (c: string) => `notEquals(bitAnd(bitAnd(${c}, ${M}), minus(bitAnd(${c}, ${M}), 1)), 0)`
  const mixed = col(
    'mixed',
    `arrayExists((a, b) -> and(equals(bitShiftRight(a, ${n}), bitShiftRight(b, ${n})), notEquals(a, b), ` +
      `or(${several('a')}, ${several('b')})), arrayPopFront(${codes}), arrayPopBack(${codes}))`,
  )
  const masks = col('m0', `arrayMap(c -> bitAnd(c, ${M}), ${codes})`)
  layers.push([])
  // the events that may change a level (as `compactedExpr`): the last of a run of step-1-only events, the first of
  // a run of events of one later step only
  const next = `arrayResize(arrayPopFront(${masks}), length(${masks}), _toUInt64(0))`
  const prev = `arrayResize(arrayPushFront(${masks}, _toUInt64(0)), length(${masks}))`
  const kept = col(
    'kept',
    `arrayFilter((c, m, a, b) -> and(notEquals(m, 0), not(and(equals(m, 1), equals(a, 1))), ` +
      `not(and(greater(m, 1), equals(bitAnd(m, minus(m, 1)), 0), equals(b, m)))), ${codes}, ${masks}, ${next}, ${prev})`,
  )
  layers.push([])
  const ts = col('ts', `arrayMap(c -> multiply(bitShiftRight(c, ${n}), 1.0), ${kept})`)
  const m = col('m', `arrayMap(c -> bitAnd(c, ${M}), ${kept})`)
  layers.push([])
  /** values where flags hold, carried forward; −1 before the first */
  const keep = (values: string, flags: string) =>
    `arrayFill(v -> greaterOrEquals(v, 0), arrayMap((v, c) -> if(c, v, -1.0), ${values}, ${flags}))`
  const took: string[] = []
  const below: string[] = []
  took[1] = col('c1', `arrayMap(x -> notEquals(bitAnd(x, 1), 0), ${m})`)
  let start = col(
    's1',
    `arrayFill(v -> greaterOrEquals(v, 0), arrayMap((t, x) -> if(notEquals(bitAnd(x, 1), 0), t, -1.0), ${ts}, ${m}))`,
  )
  for (let s = 2; s <= n; s++) {
    layers.push([])
    below[s] = col(`b${s}`, `arrayPushFront(arrayPopBack(${start}), -1.0)`)
    layers.push([])
    took[s] = col(
      `c${s}`,
      `arrayMap((t, x, p) -> and(notEquals(bitAnd(x, ${bit(s)}), 0), greaterOrEquals(p, 0), lessOrEquals(minus(t, p), ${W})), ` +
        `${ts}, ${m}, ${below[s]})`,
    )
    if (s < n) start = col(`s${s}`, keep(below[s], took[s]))
  }
  layers.push([])
  const firstAt = Array.from({ length: n + 1 }, (_, s) =>
    s === 0 ? '' : col(`f${s}`, `arrayFirstIndex(v -> v, ${took[s]})`),
  )
  const flags = []
  for (let s = n; s >= 1; s--) flags.push(`greater(${firstAt[s]}, 0)`)
  const top = col('top', `indexOf([${flags.join(', ')}, 1], 1)`)
  layers.push([])
  const reached = col('reached', `_toInt64(minus(${n + 1}, ${top}))`)
  const starts = []
  for (let s = n; s >= 2; s--) starts.push(`${below[s]}[${firstAt[s]}]`)
  const P = col('P', `[${starts.join(', ')}, ${ts}[${firstAt[1]}], -1.0][${top}]`)
  const times = [P]
  for (let k = 2; k <= n; k++) {
    // the first event that took level k with the path's start (the last level's: the first that took it at all)
    const at = `arrayFirstIndex((c, p) -> and(c, equals(p, ${P})), ${took[k]}, ${below[k]})`
    times.push(`if(greaterOrEquals(${reached}, ${k}), ${ts}[${k === n ? firstAt[n] : at}], -1.0)`)
  }
  const walked = `(${reached}, _toInt64(0), [${times.join(', ')}], _toUInt64(minus(bitShiftLeft(_toUInt64(1), ${reached}), 1)))`
  // the mixed actors' events as the fold reads them (tuples), made for their rows only (see `pathExpr`)
  const tuples = `arrayMap(c -> tuple(multiply(bitShiftRight(c, ${n}), 1.0), bitAnd(c, ${M}), _toUInt64(0)), C)`
  const fold = `arrayMap(C -> arrayMap(E -> ${foldExpr(f, expandedExpr(f, 'E', "''", '1').grouped)}, [${tuples}])[1], arrayFilter(C -> ${mixed}, [${codes}]))[1]`
  return { layers, path: `[${fold}, ${walked}][if(${mixed}, 1, 2)]` }
}
