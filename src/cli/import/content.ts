/**
 * From one record of an export file to the events Burrow's `/batch/` takes, per source: PostHog's own event JSON
 * (batch exports, the events API), Mixpanel's raw export, Amplitude's export and Segment's track/identify/page/
 * group/alias calls. Pure: every uuid is derived from the record (or from the line it came from), so importing
 * the same file twice — or resuming after a crash — sends the same uuids and the server stores each event once.
 * The mappings follow PostHog's batch-import worker where it has one (Mixpanel, Amplitude).
 */
import { createHash } from 'node:crypto'

export const CONTENTS = ['captured', 'mixpanel', 'amplitude', 'segment'] as const
export type Content = (typeof CONTENTS)[number]

export interface ImportEvent {
  uuid: string
  event: string
  distinct_id: unknown
  properties: Record<string, unknown>
  timestamp?: unknown
  elements_chain?: string
  $set?: Record<string, unknown>
  $set_once?: Record<string, unknown>
}

/** The record cannot become an event; the reason goes to the rejects file. */
export class RecordError extends Error {}

export interface TransformContext {
  /** Stable identity of the record when it carries no id of its own: file name and line number (+ content). */
  lineKey: string
  /** `$identify` events already emitted in this run (bounded), so each user/device pair is linked once. */
  seenPairs: BoundedSet
}

type Props = Record<string, unknown>

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A uuid (version 5 layout) from a SHA-256 of the parts: the same parts always give the same uuid. */
export function derivedUuid(...parts: string[]): string {
  const hex = createHash('sha256').update(parts.join('\u0000')).digest('hex')
  const variant = ((Number.parseInt(hex[16], 16) & 0x3) | 0x8).toString(16)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/** A set that forgets its oldest entries past a size, so memory stays flat on a file of any length. */
export class BoundedSet {
  private readonly items = new Set<string>()
  constructor(private readonly limit = 100_000) {}
  has(key: string) {
    return this.items.has(key)
  }
  add(key: string) {
    this.items.add(key)
    if (this.items.size > this.limit) {
      const oldest = this.items.values().next().value
      if (oldest !== undefined) this.items.delete(oldest)
    }
  }
}

const isObject = (v: unknown): v is Props => typeof v === 'object' && v !== null && !Array.isArray(v)
const nonEmpty = (v: unknown): string | undefined =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined

/** A field that may hold an object or its JSON text (CSV cells, batch exports that write properties as text). */
function objectField(value: unknown, name: string): Props | undefined {
  if (value === undefined || value === null || value === '') return undefined
  if (isObject(value)) return value
  if (typeof value === 'string') {
    try {
      const parsed: unknown = JSON.parse(value)
      if (isObject(parsed)) return parsed
    } catch {
      // reported below
    }
  }
  throw new RecordError(`${name} must be a JSON object`)
}

export function transformRecord(content: Content, record: unknown, ctx: TransformContext): ImportEvent[] {
  if (!isObject(record)) throw new RecordError('the line is not a JSON object')
  switch (content) {
    case 'captured':
      return [fromCaptured(record, ctx)]
    case 'mixpanel':
      return fromMixpanel(record, ctx)
    case 'amplitude':
      return fromAmplitude(record, ctx)
    case 'segment':
      return fromSegment(record, ctx)
  }
}

// PostHog's event JSON, as the events API and batch exports write it: uuid, event, distinct_id, properties,
// timestamp, elements_chain, and the person's `set`/`set_once` (batch exports) or `$set`/`$set_once`.
function fromCaptured(r: Props, ctx: TransformContext): ImportEvent {
  const properties = objectField(r.properties, 'properties') ?? {}
  const set = objectField(r.$set ?? r.set, 'set')
  const setOnce = objectField(r.$set_once ?? r.set_once, 'set_once')
  const ev: ImportEvent = {
    uuid: typeof r.uuid === 'string' && UUID.test(r.uuid) ? r.uuid.toLowerCase() : derivedUuid(ctx.lineKey),
    event: r.event as string,
    distinct_id: r.distinct_id,
    properties,
    timestamp: r.timestamp,
  }
  if (typeof r.elements_chain === 'string' && r.elements_chain !== '') ev.elements_chain = r.elements_chain
  if (set) ev.$set = set
  if (setOnce) ev.$set_once = setOnce
  return ev
}

const MIXPANEL_DROPPED = [
  '$mp_api_endpoint',
  'mp_processing_time_ms',
  '$insert_id',
  '$geo_source',
  '$mp_api_timestamp_ms',
]
const MIXPANEL_GEO: [string, string][] = [
  ['$city', '$geoip_city_name'],
  ['$region', '$geoip_subdivision_1_name'],
  ['mp_country_code', '$geoip_country_code'],
]

// Mixpanel's raw export: {"event": …, "properties": {"time": seconds or ms, "distinct_id", "$insert_id", …}}.
function fromMixpanel(r: Props, ctx: TransformContext): ImportEvent[] {
  const source = objectField(r.properties, 'properties') ?? {}
  const time = typeof source.time === 'string' ? Number(source.time) : source.time
  if (typeof time !== 'number' || !Number.isFinite(time)) throw new RecordError('properties.time must be a number')
  // Seconds, or milliseconds in newer exports (PostHog's importer tells them apart the same way).
  const ms = time > 10_000_000_000 ? time : time * 1000
  const properties: Props = {}
  for (const key in source) {
    if (key === 'time' || key === 'distinct_id' || MIXPANEL_DROPPED.includes(key)) continue
    properties[key] = source[key]
  }
  for (const [from, to] of MIXPANEL_GEO) {
    if (from in properties) {
      properties[to] = properties[from]
      delete properties[from]
    }
  }
  properties.historical_migration = true
  properties.analytics_source = 'mixpanel'
  const event = r.event === '$mp_web_page_view' ? '$pageview' : (r.event as string)
  let distinctId = mixpanelDistinctId(source)
  // Mixpanel's own identify event names both ids: PostHog's `$identify` merges the anonymous one into the user.
  if (event === '$identify' && nonEmpty(source.$identified_id) && nonEmpty(source.$anon_distinct_id)) {
    distinctId = nonEmpty(source.$identified_id)
  }
  const insertId = nonEmpty(source.$insert_id)
  return [
    {
      uuid: insertId ? derivedUuid('mixpanel', insertId, distinctId ?? '', String(ms)) : derivedUuid(ctx.lineKey),
      event,
      distinct_id: distinctId,
      properties,
      timestamp: new Date(ms).toISOString(),
    },
  ]
}

// PostHog's rule: an anonymous-looking distinct id ($device:…, or upper-case letters, digits and dashes) gives
// way to `$distinct_id_before_identity`.
function mixpanelDistinctId(p: Props): string | undefined {
  const id = nonEmpty(p.distinct_id)
  const before = typeof p.$distinct_id_before_identity === 'string' ? p.$distinct_id_before_identity : undefined
  if (before === undefined) return id
  if (id === undefined) return before
  if (id.startsWith('$device:') || /^[A-Z0-9-]+$/.test(id)) return before
  return id
}

const AMPLITUDE_SET_ONCE: [string, string][] = [
  ['initial_referrer', '$initial_referrer'],
  ['initial_referring_domain', '$initial_referring_domain'],
  ['initial_utm_source', '$initial_utm_source'],
  ['initial_utm_medium', '$initial_utm_medium'],
  ['initial_utm_campaign', '$initial_utm_campaign'],
  ['initial_utm_content', '$initial_utm_content'],
]
const AMPLITUDE_PAGE: [string, string][] = [
  ['[Amplitude] Page URL', '$current_url'],
  ['[Amplitude] Page Domain', '$host'],
  ['[Amplitude] Page Path', '$pathname'],
  ['[Amplitude] Viewport Height', '$viewport_height'],
  ['[Amplitude] Viewport Width', '$viewport_width'],
  ['referrer', '$referrer'],
  ['referring_domain', '$referring_domain'],
]

/** Amplitude's `2023-10-15 14:30:00[.123456]` (UTC), or ISO text. */
function amplitudeTime(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d+)?$/.exec(value)
  const ms = m ? Date.parse(`${m[1]}T${m[2]}${m[3] ? m[3].slice(0, 4) : ''}Z`) : Date.parse(value)
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined
}

// Amplitude's export: event_type, user_id, device_id, event_time, uuid, event_properties, user_properties, groups.
function fromAmplitude(r: Props, ctx: TransformContext): ImportEvent[] {
  const type = nonEmpty(r.event_type)
  if (type === undefined) throw new RecordError('event_type is missing')
  // Amplitude's synthetic session markers are not events in PostHog (as in PostHog's importer).
  if (type === 'session_start' || type === 'session_end') return []
  const event =
    type === '[Amplitude] Page Viewed'
      ? '$pageview'
      : type === '[Amplitude] Element Clicked' || type === '[Amplitude] Element Changed'
        ? '$autocapture'
        : type
  const userId = nonEmpty(r.user_id)
  const deviceId = nonEmpty(r.device_id)
  const distinctId = userId ?? deviceId
  if (distinctId === undefined) throw new RecordError('neither user_id nor device_id is set')
  const timestamp = amplitudeTime(r.event_time) ?? amplitudeTime(r.client_event_time)
  if (timestamp === undefined) throw new RecordError('event_time is missing or not a date')

  const eventProps = objectField(r.event_properties, 'event_properties') ?? {}
  const userProps = objectField(r.user_properties, 'user_properties') ?? {}
  const properties: Props = { ...eventProps }
  if (userId) properties.$amplitude_user_id = userId
  if (deviceId) {
    properties.$amplitude_device_id = deviceId
    properties.$device_id = deviceId
  }
  if (typeof r.event_id === 'number' && r.event_id !== 0) properties.$amplitude_event_id = r.event_id
  if (typeof r.session_id === 'number' && r.session_id > 0) properties.$amplitude_session_id = r.session_id
  const geo: [unknown, string][] = [
    [r.country, '$geoip_country_name'],
    [r.city, '$geoip_city_name'],
    [r.region, '$geoip_subdivision_1_name'],
  ]
  const set: Props = {}
  for (const [value, key] of geo) {
    if (nonEmpty(value)) {
      properties[key] = value
      set[key] = value
    }
  }
  if (nonEmpty(r.os_name)) properties.$os = set.$os = r.os_name
  if (nonEmpty(r.os_version)) properties.$os_version = set.$os_version = r.os_version
  if (r.device_type === 'Windows' || r.device_type === 'Linux' || r.device_type === 'Mac') {
    properties.$device_type = set.$device_type = 'Desktop'
  } else if (r.device_type === 'iOS' || r.device_type === 'Android') {
    properties.$device_type = set.$device_type = 'Mobile'
  }
  if (nonEmpty(r.ip_address)) properties.$ip = r.ip_address
  for (const [from, to] of AMPLITUDE_PAGE) if (eventProps[from] !== undefined) properties[to] = eventProps[from]

  // User properties become the person's: the initial_* ones once, everything else set.
  const setOnce: Props = {}
  for (const key in userProps) {
    const value = userProps[key]
    const once = AMPLITUDE_SET_ONCE.find(([from]) => from === key)
    if (once) {
      if (value !== 'EMPTY' && value !== null) setOnce[once[1]] = value
    } else {
      set[key] = value
    }
  }
  if (isObject(r.groups) && Object.keys(r.groups).length > 0) {
    const groups: Props = {}
    for (const key in r.groups) {
      const value = r.groups[key]
      const first = Array.isArray(value) ? value[0] : value
      if (nonEmpty(first)) groups[key] = nonEmpty(first)
    }
    if (Object.keys(groups).length > 0) properties.$groups = groups
  }
  properties.historical_migration = true
  properties.analytics_source = 'amplitude'

  const out: ImportEvent[] = []
  // A user seen on a device: link the two, once per pair (PostHog's importer does the same with a cache).
  if (userId && deviceId && userId !== deviceId) {
    const pair = `${userId}\u0000${deviceId}`
    if (!ctx.seenPairs.has(pair)) {
      ctx.seenPairs.add(pair)
      out.push({
        uuid: derivedUuid('amplitude-identify', userId, deviceId),
        event: '$identify',
        distinct_id: userId,
        properties: { $anon_distinct_id: deviceId, historical_migration: true, analytics_source: 'amplitude' },
        timestamp,
      })
    }
  }
  const uuid = typeof r.uuid === 'string' && UUID.test(r.uuid) ? r.uuid.toLowerCase() : undefined
  const insertId = nonEmpty(r.$insert_id)
  const ev: ImportEvent = {
    uuid: uuid ?? (insertId ? derivedUuid('amplitude', insertId) : derivedUuid(ctx.lineKey)),
    event,
    distinct_id: distinctId,
    properties,
    timestamp,
  }
  if (Object.keys(set).length > 0) ev.$set = set
  if (Object.keys(setOnce).length > 0) ev.$set_once = setOnce
  out.push(ev)
  return out
}

// Segment's spec calls (as its S3/warehouse exports and webhooks write them): track, page, screen, identify,
// group, alias.
function fromSegment(r: Props, ctx: TransformContext): ImportEvent[] {
  const type = typeof r.type === 'string' ? r.type.toLowerCase() : undefined
  const userId = nonEmpty(r.userId ?? r.user_id)
  const anonymousId = nonEmpty(r.anonymousId ?? r.anonymous_id)
  const distinctId = userId ?? anonymousId
  if (distinctId === undefined) throw new RecordError('neither userId nor anonymousId is set')
  const props = objectField(r.properties, 'properties') ?? {}
  const traits = objectField(r.traits, 'traits')
  const context = objectField(r.context, 'context') ?? {}
  const timestamp = r.timestamp ?? r.originalTimestamp ?? r.receivedAt ?? r.sentAt
  const messageId = nonEmpty(r.messageId ?? r.message_id)
  const uuid = messageId ? derivedUuid('segment', messageId) : derivedUuid(ctx.lineKey)

  const properties: Props = { ...props }
  if (nonEmpty(context.ip)) properties.$ip = context.ip
  if (nonEmpty(context.userAgent)) properties.$raw_user_agent = context.userAgent
  const page = isObject(context.page) ? context.page : {}
  const pageUrl = props.url ?? page.url
  if (nonEmpty(pageUrl) && properties.$current_url === undefined) properties.$current_url = pageUrl
  properties.analytics_source = 'segment'

  const base = { uuid, distinct_id: distinctId, timestamp }
  switch (type) {
    case 'track': {
      const event = nonEmpty(r.event)
      if (event === undefined) throw new RecordError('a track call needs an event name')
      return [{ ...base, event, properties }]
    }
    case 'page':
      if (nonEmpty(props.path ?? page.path)) properties.$pathname = props.path ?? page.path
      if (nonEmpty(props.title ?? page.title)) properties.$title = props.title ?? page.title
      if (nonEmpty(props.referrer ?? page.referrer)) properties.$referrer = props.referrer ?? page.referrer
      if (nonEmpty(r.name)) properties.$page_name = r.name
      return [{ ...base, event: '$pageview', properties }]
    case 'screen':
      if (nonEmpty(r.name)) properties.$screen_name = r.name
      return [{ ...base, event: '$screen', properties }]
    case 'identify': {
      if (userId && anonymousId && userId !== anonymousId) properties.$anon_distinct_id = anonymousId
      const ev: ImportEvent = { ...base, event: '$identify', properties }
      const set = traits ?? objectField(context.traits, 'context.traits')
      if (set) ev.$set = set
      return [ev]
    }
    case 'group': {
      const groupId = nonEmpty(r.groupId ?? r.group_id)
      if (groupId === undefined) throw new RecordError('a group call needs a groupId')
      const groupType = nonEmpty(traits?.group_type) ?? 'company'
      properties.$group_type = groupType
      properties.$group_key = groupId
      if (traits) properties.$group_set = traits
      return [{ ...base, event: '$groupidentify', properties }]
    }
    case 'alias': {
      const previousId = nonEmpty(r.previousId ?? r.previous_id)
      if (previousId === undefined || userId === undefined)
        throw new RecordError('an alias call needs userId and previousId')
      properties.alias = previousId
      return [{ ...base, event: '$create_alias', properties }]
    }
    default:
      throw new RecordError(`unknown Segment call type ${JSON.stringify(r.type ?? null)}`)
  }
}
