/**
 * Finds JSON nested too deep in a request body's text, before it is parsed: one linear pass that only counts
 * brackets outside strings, so a body of millions of `[` costs a scan rather than millions of objects.
 *
 * In a batch (`[event, …]` or `{"batch": [event, …]}`) an over-deep event is cut out of the text and replaced by
 * `null`, so the rest of the batch can still be stored; over-deep nesting anywhere else refuses the whole body.
 */

/**
 * How deep a capture or `/flags` body may nest: PostHog's capture parses with serde_json, which stops at 128
 * levels. Deeper values are no use to any query and would overflow the recursive code that handles them.
 */
export const MAX_JSON_DEPTH = 128

export type NestingCheck =
  /** `text` is the body to parse; `removed` lists the batch positions whose event was cut out (now `null`). */
  { ok: true; text: string; removed: number[] } | { ok: false }

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const OPEN_OBJECT = 0x7b
const OPEN_ARRAY = 0x5b
const CLOSE_OBJECT = 0x7d
const CLOSE_ARRAY = 0x5d

/**
 * Checks that no array or object in `text` sits more than `maxDepth` levels deep (the outermost is level 1).
 * With `batchItems`, an over-deep event of a batch is removed instead of failing the whole body. The text is not
 * validated: whatever is malformed outside the removed events is left for `JSON.parse` to report.
 */
export function limitNesting(text: string, maxDepth: number, batchItems: boolean): NestingCheck {
  const length = text.length
  let depth = 0
  let root = 0
  // Depth of the array whose children are events (1: a root array, 2: the root object's "batch"); 0 for none.
  let eventsDepth = 0
  let eventIndex = 0
  let eventStart = -1
  let isEventTooDeep = false
  let keyExpected = false
  let lastKeyIsBatch = false
  let batchArrays = 0
  const cuts: number[] = []
  const removed: number[] = []

  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      const end = closingQuote(text, i)
      if (end < 0) break
      if (keyExpected && depth === 1) {
        lastKeyIsBatch = end - i === 6 && text.startsWith('batch', i + 1)
        keyExpected = false
      }
      i = end
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++
      if (depth === 1) {
        root = c
        keyExpected = c === OPEN_OBJECT
        if (batchItems && c === OPEN_ARRAY) eventsDepth = 1
      } else if (depth === 2 && batchItems && root === OPEN_OBJECT && c === OPEN_ARRAY && lastKeyIsBatch) {
        eventsDepth = 2
        eventIndex = 0
        batchArrays++
      } else if (eventsDepth > 0 && depth === eventsDepth + 1) {
        eventStart = i
        isEventTooDeep = false
      }
      if (depth > maxDepth) {
        if (eventStart < 0) return { ok: false }
        isEventTooDeep = true
      }
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (eventStart >= 0 && depth === eventsDepth + 1) {
        if (isEventTooDeep) {
          cuts.push(eventStart, i + 1)
          removed.push(eventIndex)
        }
        eventStart = -1
      } else if (depth === eventsDepth) {
        eventsDepth = 0
      }
      depth--
      // More closing than opening brackets: malformed, which JSON.parse reports.
      if (depth < 0) break
    } else if (c === COMMA) {
      if (eventsDepth > 0 && depth === eventsDepth) eventIndex++
      else if (depth === 1 && root === OPEN_OBJECT) keyExpected = true
    }
  }

  if (removed.length === 0) return { ok: true, text, removed }
  // Two "batch" keys: which one JSON.parse keeps is not this scanner's business, so refuse rather than guess.
  if (batchArrays > 1) return { ok: false }
  let kept = ''
  let from = 0
  for (let k = 0; k < cuts.length; k += 2) {
    kept += `${text.slice(from, cuts[k])}null`
    from = cuts[k + 1]
  }
  return { ok: true, text: kept + text.slice(from), removed }
}

/** Index of the quote that closes the string opening at `start`, or -1 when it never closes. */
function closingQuote(text: string, start: number): number {
  let at = start
  for (;;) {
    at = text.indexOf('"', at + 1)
    if (at < 0) return -1
    let backslashes = 0
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++
    if ((backslashes & 1) === 0) return at
  }
}
