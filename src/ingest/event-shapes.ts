import type { NormalizedEvent } from './normalize.js'

/**
 * Which event shapes definitions discovery has already learned, per project and hour. A shape is an event's name
 * with each property key (event, `$set`, `$set_once`, `$group_set`) and the kind of its value: events of equal
 * shape teach the same definitions, so only the first of each shape per hour is typed property by property.
 *
 * This runs for every captured event, so it hashes without reading strings: each distinct name or key gets a
 * small number once (a Map look-up uses the string's cached hash), and the shape is two 32-bit running hashes of
 * those numbers joined into one 53-bit number. Memory is bounded: past `maxTokens` names the numbering starts
 * over (between two events) and, since old hashes would then mean other shapes, every remembered shape is forgotten
 * with it.
 */
export function createShapeMemory(options: { maxTokens?: number; maxShapesPerProject?: number } = {}) {
  const maxTokens = options.maxTokens ?? 100_000
  const maxShapes = options.maxShapesPerProject ?? 20_000
  const tokens = new Map<string, number>()
  const byProject = new Map<number, Map<number, number>>()
  // The running hashes (closure state: no allocation per event).
  let a = 0
  let b = 0

  function mix(id: number): void {
    a = Math.imul(a ^ id, 0x01000193)
    b = Math.imul(b ^ scramble(id), 0x5bd1e995)
    b ^= b >>> 15
  }

  function mixText(text: string): void {
    let id = tokens.get(text)
    if (id === undefined) {
      id = tokens.size + KINDS
      tokens.set(text, id)
    }
    mix(id)
  }

  function mixProperties(props: Record<string, unknown>): void {
    for (const key in props) {
      mixText(key)
      mix(kindOf(props[key]))
    }
    mix(SEPARATOR)
  }

  function shapeOf(ev: NormalizedEvent): number {
    // Between shapes only: numbers from before a restart mixed with numbers from after it would make a hash that
    // a later, different shape can repeat exactly. (One event's names may pass the limit for a while.)
    if (tokens.size >= maxTokens) {
      tokens.clear()
      byProject.clear()
    }
    a = 0x811c9dc5
    b = 0x01000193
    mixText(ev.event)
    mixProperties(ev.properties)
    mixProperties(ev.setProps)
    mixProperties(ev.setOnceProps)
    const groupSet = ev.properties.$group_set
    if (typeof groupSet === 'object' && groupSet !== null) {
      mixText(String(ev.properties.$group_type))
      mixProperties(groupSet as Record<string, unknown>)
    }
    return (a >>> 0) * 2 ** 21 + (b >>> 11)
  }

  return {
    /** True the first time the project shows this event's shape in `hour` (which is then remembered). */
    isNew(projectId: number, ev: NormalizedEvent, hour: number): boolean {
      const shape = shapeOf(ev)
      let seen = byProject.get(projectId)
      if (!seen) {
        seen = new Map()
        byProject.set(projectId, seen)
      }
      if (seen.get(shape) === hour) return false
      if (seen.size >= maxShapes) seen.clear()
      seen.set(shape, hour)
      return true
    },
  }
}

/**
 * Value kinds, numbered below the first token number. The JSON type is enough: a definition keeps the first type
 * it was given and only a missing type (objects, null) is replaced later, so what matters is that a value which
 * types where an earlier one did not makes a new shape.
 */
enum Kind {
  Null = 1,
  String = 2,
  Number = 3,
  Boolean = 4,
  Object = 5,
  Other = 6,
}
const SEPARATOR = 7
const KINDS = 8

function kindOf(value: unknown): number {
  if (value === null) return Kind.Null
  switch (typeof value) {
    case 'string':
      return Kind.String
    case 'number':
      return Kind.Number
    case 'boolean':
      return Kind.Boolean
    case 'object':
      return Kind.Object
    default:
      return Kind.Other
  }
}

/** A bijective 32-bit mix (murmur3's finalizer), so that the second hash sees other bits than the first. */
function scramble(x: number): number {
  let h = x
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return h ^ (h >>> 16)
}
