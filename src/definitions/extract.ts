/**
 * What one ingested event teaches about the project's schema — its event definition and the event, person and
 * group property definitions with their inferred types — following PostHog's property-defs service
 * (reference/products.md §5.2). Pure: the store applies "first type wins" when it upserts.
 */
import type { NormalizedEvent } from '../ingest/normalize.js'
import { detectPropertyType, type PropertyType } from './infer-type.js'

export interface PropertySighting {
  name: string
  type: PropertyType | null
}

export interface GroupPropertySighting extends PropertySighting {
  groupType: string
}

export interface ExtractedDefinitions {
  eventName: string
  /** Each also means "this property was seen on this event", except `$feature/…` (see {@link isEventLinked}). */
  eventProperties: PropertySighting[]
  personProperties: PropertySighting[]
  groupProperties: GroupPropertySighting[]
}

export interface ExtractOptions {
  /** An event producing more writes than this is skipped whole (PostHog's default: 10,000). */
  maxUpdates?: number
}

// Events PostHog generates itself carry no user schema.
const SKIPPED_EVENTS = new Set(['$$plugin_metrics'])
// Special keys with their own meaning, never event property definitions.
const SKIPPED_EVENT_PROPERTIES = new Set([
  '$set',
  '$set_once',
  '$unset',
  '$group_0',
  '$group_1',
  '$group_2',
  '$group_3',
  '$group_4',
  '$groups',
])
// Legacy Django CharField(400) halved: longer names are dropped.
const MAX_NAME_BYTES = 200
const DEFAULT_MAX_UPDATES = 10_000

/** Returns null when the event is skipped entirely. */
export function extractDefinitions(
  ev: Pick<NormalizedEvent, 'event' | 'properties' | 'setProps' | 'setOnceProps'>,
  nowSeconds: number,
  opts: ExtractOptions = {},
): ExtractedDefinitions | null {
  const eventName = sanitize(ev.event)
  if (SKIPPED_EVENTS.has(ev.event) || !fits(ev.event)) return null

  const result: ExtractedDefinitions = {
    eventName,
    eventProperties: [],
    personProperties: [],
    groupProperties: [],
  }
  // Counted the way PostHog counts its writes: the event definition, then per event property a definition and
  // an event link, per person/group property a definition.
  let updates = 1

  if (ev.event === '$groupidentify' || ev.event === '$group_identify') {
    // A group update teaches only the group's properties.
    const groupType = ev.properties.$group_type
    const groupSet = ev.properties.$group_set
    if (typeof groupType === 'string' && isObject(groupSet)) {
      for (const key in groupSet) {
        if (!fits(key)) continue
        const type = detectPropertyType(key, groupSet[key], nowSeconds)
        result.groupProperties.push({ groupType, name: sanitize(key), type })
        updates++
      }
    }
  } else {
    for (const key in ev.properties) {
      if (SKIPPED_EVENT_PROPERTIES.has(key) || !fits(key)) continue
      result.eventProperties.push({
        name: sanitize(key),
        type: detectPropertyType(key, ev.properties[key], nowSeconds),
      })
      updates += isEventLinked(key) ? 2 : 1
    }
    const seen = new Set<string>()
    for (const source of [ev.setProps, ev.setOnceProps]) {
      for (const key in source) {
        if (!fits(key)) continue
        updates++
        // $set and $set_once naming the same key make one definition; the $set value types it, as it would win.
        if (seen.has(key)) continue
        seen.add(key)
        result.personProperties.push({ name: sanitize(key), type: detectPropertyType(key, source[key], nowSeconds) })
      }
    }
  }

  return updates > (opts.maxUpdates ?? DEFAULT_MAX_UPDATES) ? null : result
}

/**
 * Whether a property seen on an event should be recorded as "seen with this event". Feature-flag properties ride
 * on nearly every event; PostHog keeps their definitions but not the (event × flag) links.
 */
export function isEventLinked(propertyName: string): boolean {
  return !propertyName.startsWith('$feature/') && !propertyName.startsWith('$feature_enrollment/')
}

function fits(name: string): boolean {
  // Byte length is at most 3× the UTF-16 length, so short names skip the encoding.
  return name.length * 3 <= MAX_NAME_BYTES || Buffer.byteLength(name, 'utf8') <= MAX_NAME_BYTES
}

// Postgres text cannot hold NUL.
function sanitize(name: string): string {
  return name.includes('\0') ? name.replaceAll('\0', '\uFFFD') : name
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
