/**
 * From a decoded capture payload to validated events, following what PostHog's capture service and
 * plugin-server do before an event is stored: where the token and distinct id may live, how the timestamp is
 * corrected for client clock skew, how `$set`/`$set_once` are gathered, which event properties are lifted onto
 * the person, and how `$elements` become an elements chain. Pure: the clock and the client IP come in `opts`.
 */
import { randomUUID } from 'node:crypto'

export interface NormalizedEvent {
  uuid: string
  event: string
  distinctId: string
  properties: Record<string, unknown>
  timestamp: Date
  setProps: Record<string, unknown>
  setOnceProps: Record<string, unknown>
  unsetProps: string[]
  sessionId: string | null
  windowId: string | null
  /** `$groups`: group type → group key. */
  groups: Record<string, string>
  elementsChain: string
  processPerson: boolean
}

export interface ExtractedEvents {
  token: string | undefined
  historicalMigration: boolean
  sentAt?: string
  /** Unvalidated; each goes through {@link normalizeEvent}. */
  events: unknown[]
}

export interface NormalizeOptions {
  /** When the request was received (server clock). */
  now: Date
  /** Request-level `sent_at` (client clock), as returned by {@link extractEvents}. */
  sentAt?: string
  /** Client IP; becomes `$ip` unless the event carries one. */
  ip?: string
  /** The project's "discard client IP data": no `$ip` at all, not even one the client sent. */
  anonymizeIp?: boolean
}

/** The request's project token is unusable (not a string, or several different ones): a 401, as PostHog answers. */
export class CaptureTokenError extends Error {
  override readonly name = 'CaptureTokenError'
  constructor(
    readonly code: 'not_string' | 'multiple_tokens',
    message: string,
  ) {
    super(message)
  }
}

export interface ExtractOptions {
  /** The request came to `/engage/`: an event without a name is a person update, stored as `$identify`. */
  engage?: boolean
  /** `api_key` of a form body (beside its `data`): used when the payload names no key. */
  formToken?: string
  /** `sent_at` of a form body: used when the payload has none. */
  formSentAt?: string
}

/** One event (or, with `index` null, the whole request) is invalid; `attr` names the offending field. */
export class CaptureValidationError extends Error {
  override readonly name = 'CaptureValidationError'
  constructor(
    readonly index: number | null,
    readonly attr: string | null,
    message: string,
  ) {
    super(message)
  }
}

type Props = Record<string, unknown>

const HOUR_MS = 3_600_000
const FUTURE_CUTOFF_MS = 23 * HOUR_MS
const HISTORICAL_MIN_AGE_MS = 48 * HOUR_MS
const MAX_DISTINCT_ID_CHARS = 200
const MAX_EVENT_NAME_CHARS = 200
// Years 0000 and 9999: what ClickHouse's DateTime64 and PostHog accept.
const MIN_TS_MS = -62_167_219_200_000
const MAX_TS_MS = 253_402_300_799_999

export function extractEvents(
  payload: unknown,
  query: Record<string, string | undefined>,
  options: ExtractOptions = {},
): ExtractedEvents {
  let events: unknown[]
  let token: string | undefined
  let historicalMigration = false
  let sentAt: string | undefined

  if (Array.isArray(payload)) {
    events = payload
  } else if (isObject(payload)) {
    if ('batch' in payload) {
      if (!Array.isArray(payload.batch)) throw new CaptureValidationError(null, 'batch', 'batch must be an array')
      events = payload.batch
      token = requestToken(payload.api_key) ?? requestToken(payload.token)
      historicalMigration = payload.historical_migration === true
    } else {
      events = [payload]
    }
    if (typeof payload.sent_at === 'string' && payload.sent_at !== '') sentAt = payload.sent_at
  } else {
    throw new CaptureValidationError(null, null, 'payload must be a JSON object or an array of events')
  }

  // capture-rs refuses a request without events (`EmptyBatch`) before it looks for a key.
  if (events.length === 0) throw new CaptureValidationError(null, null, 'Invalid payload: request holds no event')
  if (options.engage) nameEngageEvents(events)
  token ??= tokenOfEvents(events)
  token ??= trimmedToken(options.formToken) ?? trimmedToken(query.token) ?? trimmedToken(query.api_key)
  if (sentAt === undefined && options.formSentAt) sentAt = options.formSentAt
  sentAt ??= sentAtFromQuery(query._)
  return sentAt === undefined ? { token, historicalMigration, events } : { token, historicalMigration, sentAt, events }
}

// PostHog's capture takes a project token with surrounding whitespace (a key pasted with its newline) as the key.
function trimmedToken(value: unknown): string | undefined {
  return typeof value === 'string' ? nonEmptyString(value.trim()) : undefined
}

// A request-level key that is there but not a string is refused, as PostHog's capture refuses it.
function requestToken(value: unknown): string | undefined {
  if (value !== undefined && value !== null && typeof value !== 'string') {
    throw new CaptureTokenError('not_string', 'Provided API key is not valid: not_string')
  }
  return trimmedToken(value)
}

function tokenOfEvents(events: unknown[]): string | undefined {
  let found: string | undefined
  for (let i = 0; i < events.length; i++) {
    const ev = events[i]
    if (!isObject(ev)) continue
    const props = isObject(ev.properties) ? ev.properties : undefined
    const t =
      trimmedToken(ev.token) ?? trimmedToken(ev.$token) ?? trimmedToken(ev.api_key) ?? trimmedToken(props?.token)
    if (t === undefined) continue
    if (found === undefined) found = t
    else if (found !== t) {
      throw new CaptureTokenError('multiple_tokens', 'Batch submitted with inconsistent api_key values.')
    }
  }
  return found
}

// `/engage/` carries person updates without an event name (mixpanel's shape); PostHog stores them as `$identify`.
function nameEngageEvents(events: unknown[]): void {
  for (const ev of events) {
    if (isObject(ev) && (ev.event === undefined || ev.event === null)) ev.event = '$identify'
  }
}

// posthog-js puts its send time in `?_=` as epoch milliseconds; older SDKs send seconds (told apart by size, as
// PostHog's date parser does: 1e11 seconds is the year 5138).
function sentAtFromQuery(value: string | undefined): string | undefined {
  if (value === undefined || !/^\d{1,15}$/.test(value)) return undefined
  const n = Number(value)
  const ms = n < 1e11 ? n * 1000 : n
  return ms >= Date.UTC(2021, 0, 1) ? new Date(ms).toISOString() : undefined
}

/**
 * Validates and normalizes one event. Takes ownership of `raw`: the result may reuse (and edit) its
 * `properties` object — copying forty-odd properties per event would cost more than the rest of this function.
 */
export function normalizeEvent(raw: unknown, index: number, opts: NormalizeOptions): NormalizedEvent {
  if (raw === null) throw new CaptureValidationError(index, null, 'Invalid payload: some events are null')
  if (!isObject(raw)) {
    throw new CaptureValidationError(
      index,
      null,
      `Invalid payload: All events must be dictionaries not '${pythonTypeName(raw)}'!`,
    )
  }
  const fail = (attr: string, message: string) => new CaptureValidationError(index, attr, `event ${index}: ${message}`)
  // PostHog's own wording, for the refusals its tests name.
  const refuse = (attr: string, message: string) => new CaptureValidationError(index, attr, message)

  const rawProps = raw.properties
  if (rawProps !== undefined && rawProps !== null && !isObject(rawProps)) {
    throw fail('properties', 'properties must be an object')
  }
  let properties: Props = rawProps ?? {}

  const event = readEventName(raw.event, fail, refuse)
  // capture-rs reads a top-level `offset` as an integer: anything else (a string, a fraction) does not parse.
  if (raw.offset !== undefined && raw.offset !== null && !Number.isSafeInteger(raw.offset)) {
    throw refuse('offset', 'Invalid payload: Event field "offset" must be an integer!')
  }
  const distinctId = readDistinctId(raw, properties, refuse)
  const uuid = readUuid(raw.uuid, opts.now, refuse)
  const timestamp = resolveTimestamp(raw, properties, opts)
  const elementsChain = readElementsChain(raw, properties)

  // Keys to remove are collected and removed in one copy at the end: `delete` would switch the object to
  // dictionary mode, which makes every later pass over it (definitions, serialisation) several times slower.
  const drop: string[] = []
  if (properties.$elements_chain !== undefined) drop.push('$elements_chain')
  if (properties.$elements !== undefined) drop.push('$elements')

  const processPerson = properties.$process_person_profile !== false
  let setProps: Props | undefined
  let setOnceProps: Props | undefined
  let unsetProps: string[] = []
  if (!processPerson || event === '$groupidentify' || event === '$group_identify') {
    if (properties.$set !== undefined) drop.push('$set')
    if (properties.$set_once !== undefined) drop.push('$set_once')
    if (properties.$unset !== undefined) drop.push('$unset')
  } else {
    // Top-level $set/$set_once (posthog-node's identify, the /engage shape) merge over the ones in properties.
    setProps = mergeObjects(properties.$set, raw.$set)
    setOnceProps = mergeObjects(properties.$set_once, raw.$set_once)
    if (properties.$unset !== undefined || raw.$unset !== undefined) {
      unsetProps = [...unsetKeys(properties.$unset), ...unsetKeys(raw.$unset)]
    }
    if (event !== '$snapshot' && event !== '$performance_event') {
      const lifted = liftPersonProperties(properties, setProps, setOnceProps)
      setProps = lifted.set
      setOnceProps = lifted.setOnce
    }
  }
  // PostHog records only the non-default value.
  if (processPerson && properties.$process_person_profile !== undefined) drop.push('$process_person_profile')
  if (opts.anonymizeIp && properties.$ip !== undefined) drop.push('$ip')

  if (drop.length > 0) properties = copyWithout(properties, drop)
  if (setProps !== undefined) properties.$set = setProps
  if (setOnceProps !== undefined) properties.$set_once = setOnceProps
  if (!processPerson) properties.$process_person_profile = false
  if (!opts.anonymizeIp && !properties.$ip && opts.ip) properties.$ip = opts.ip
  if (opts.sentAt !== undefined) properties.$sent_at = opts.sentAt

  return {
    uuid,
    event,
    distinctId,
    properties,
    timestamp,
    setProps: setProps ?? {},
    setOnceProps: setOnceProps ?? {},
    unsetProps,
    sessionId: nonEmptyString(properties.$session_id) ?? null,
    windowId: nonEmptyString(properties.$window_id) ?? null,
    groups: readGroups(properties.$groups),
    elementsChain,
    processPerson,
  }
}

function copyWithout(source: Props, keys: string[]): Props {
  const out: Props = {}
  for (const key in source) if (!keys.includes(key)) setProperty(out, key, source[key])
  return out
}

/**
 * `target[key] = value`, except that a `__proto__` key stays an ordinary property, as JSON.parse and PostHog
 * keep it: plain assignment would replace the object's prototype instead and the key would vanish.
 */
export function setProperty(target: Props, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
  } else {
    target[key] = value
  }
}

/** capture-rs drops `$performance_event` events (an old posthog-js feature) and stores the rest of the request. */
export function isDroppedEvent(raw: unknown): boolean {
  return isObject(raw) && raw.event === '$performance_event'
}

/** Historical imports must be at least 48 hours old (spec §4.8 rule 2). */
export function isHistoricallyValid(ev: Pick<NormalizedEvent, 'timestamp'>, now: Date): boolean {
  return ev.timestamp.getTime() <= now.getTime() - HISTORICAL_MIN_AGE_MS
}

type Fail = (attr: string, message: string) => CaptureValidationError

function readEventName(value: unknown, fail: Fail, refuse: Fail): string {
  if (value === undefined || value === null) {
    throw refuse('event', 'Invalid payload: All events must have the event name field "event"!')
  }
  if (typeof value !== 'string') throw fail('event', `event name must be a string, got ${typeName(value)}`)
  if (value.trim() === '') throw fail('event', 'event name must not be empty')
  const name = value.length > MAX_EVENT_NAME_CHARS ? value.slice(0, MAX_EVENT_NAME_CHARS) : value
  return cleanText(name)
}

/**
 * Text every store accepts: NUL (PostgreSQL refuses it) and lone UTF-16 surrogates (not UTF-8; ClickHouse
 * refuses their JSON escapes) become U+FFFD. For identifiers: distinct ids, event names, group types and keys.
 */
export function cleanText(value: string): string {
  const text = value.includes('\0') ? value.replaceAll('\0', '\uFFFD') : value
  return text.isWellFormed() ? text : text.toWellFormed()
}

// PostHog's capture: top-level `distinct_id` (or `$distinct_id`), else `properties.distinct_id`; null counts as
// absent; any other JSON value is written out as compact JSON with object keys sorted, as serde_json writes it
// (`["a","b"]`, `true`, `{"number":3,"string":"a"}`); blank is rejected;
// surrounding whitespace is kept; capped at 200 characters.
function readDistinctId(raw: Props, properties: Props, refuse: Fail): string {
  const top = raw.distinct_id ?? raw.$distinct_id
  let value = top
  if (value === undefined || value === null) value = properties.distinct_id
  if (value === undefined || value === null) {
    throw refuse(
      'distinct_id',
      raw.distinct_id === null || raw.$distinct_id === null || properties.distinct_id === null
        ? 'Invalid payload: Event field "distinct_id" should not be blank!'
        : 'Invalid payload: All events must have the event field "distinct_id"!',
    )
  }
  let id: string
  if (typeof value === 'string') id = value
  else if (typeof value === 'number') id = String(value)
  else id = sortedJson(value)
  if (id.trim() === '') throw refuse('distinct_id', 'Invalid payload: Event field "distinct_id" should not be blank!')
  if (id.length > MAX_DISTINCT_ID_CHARS) id = Array.from(id).slice(0, MAX_DISTINCT_ID_CHARS).join('')
  return cleanText(id)
}

function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (!isObject(v)) return v
    const sorted: Props = {}
    for (const k of Object.keys(v).sort()) setProperty(sorted, k, v[k])
    return sorted
  })
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const UUID_SIMPLE = /^[0-9a-f]{32}$/i

// A client's own uuid makes its retries idempotent, so one that does not parse is refused (a fresh one would store
// the retry twice). The forms PostHog parses are taken: hyphenated, 32 bare hex digits, `{…}` and `urn:uuid:…`.
// Absent, null or empty: a new one.
function readUuid(value: unknown, now: Date, refuse: Fail): string {
  if (value === undefined || value === null || value === '') return uuidV7(now.getTime())
  const parsed = typeof value === 'string' ? parseUuid(value) : undefined
  if (parsed === undefined) throw refuse('uuid', 'Invalid payload: Event field "uuid" is not a valid UUID!')
  return parsed
}

function parseUuid(text: string): string | undefined {
  let s = text
  if (s.length > 45) return undefined
  if (s.toLowerCase().startsWith('urn:uuid:')) s = s.slice(9)
  else if (s.startsWith('{') && s.endsWith('}')) s = s.slice(1, -1)
  if (UUID.test(s)) return s.toLowerCase()
  if (UUID_SIMPLE.test(s)) {
    const h = s.toLowerCase()
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
  }
  return undefined
}

/** RFC 9562 version 7: 48-bit milliseconds, then random bits; sorts by time. */
export function uuidV7(ms: number): string {
  const random = randomUUID() // version 4: its variant bits are already right, its randomness is reused
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${random.slice(15)}`
}

// PostHog's parse_event_timestamp: `offset` wins; else a client `timestamp`, shifted by the client's clock skew
// (sent_at − now) when the request says when it was sent; else now. More than 23 h ahead clamps to now.
function resolveTimestamp(raw: Props, properties: Props, opts: NormalizeOptions): Date {
  const now = opts.now.getTime()
  let ts = now
  if (raw.timestamp !== undefined && raw.timestamp !== null) {
    const parsed = parseTimestamp(raw.timestamp)
    if (parsed !== null) {
      const sentAt =
        opts.sentAt !== undefined && properties.$ignore_sent_at !== true ? parseTimestamp(opts.sentAt) : null
      ts = sentAt === null ? parsed : parsed - (sentAt - now)
    }
  }
  if (typeof raw.offset === 'number' && Number.isFinite(raw.offset)) ts = now - raw.offset
  if (ts - now > FUTURE_CUTOFF_MS || ts < MIN_TS_MS || ts > MAX_TS_MS) ts = now
  return new Date(ts)
}

const ISO_WITHOUT_ZONE = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/
const ISO_SHORT_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?[+-]\d{2}$/
const NUMERIC = /^\d+(?:\.\d+)?$/

/** Epoch milliseconds of a client timestamp, or null when it does not parse. Zone-less times are UTC. */
export function parseTimestamp(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? epochToMs(value) : null
  if (typeof value !== 'string') return null
  let s = value.trim()
  if (s === '') return null
  if (NUMERIC.test(s)) return epochToMs(Number(s))
  if (ISO_WITHOUT_ZONE.test(s)) s = `${s.replace(' ', 'T')}Z`
  else if (ISO_SHORT_ZONE.test(s)) s = `${s}:00`
  const ms = Date.parse(s)
  return Number.isNaN(ms) ? null : ms
}

// Seconds and milliseconds are told apart by size, as PostHog's date parser does: 1e11 s is the year 5138.
function epochToMs(n: number): number {
  return Math.abs(n) >= 1e11 ? n : n * 1000
}

function mergeObjects(inner: unknown, outer: unknown): Props | undefined {
  // Always a copy: person-property lifting writes into it, and the input belongs to the caller.
  const a = isObject(inner) ? inner : undefined
  const b = isObject(outer) ? outer : undefined
  if (a === undefined && b === undefined) return undefined
  return { ...a, ...b }
}

function unsetKeys(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((k): k is string => typeof k === 'string')
  if (isObject(value)) return Object.keys(value)
  return []
}

function readGroups(value: unknown): Record<string, string> {
  const groups: Record<string, string> = {}
  if (!isObject(value)) return groups
  for (const key in value) {
    const v = value[key]
    if (typeof v === 'string' && v !== '') setProperty(groups, cleanText(key), cleanText(v))
    else if (typeof v === 'number' && Number.isFinite(v)) setProperty(groups, cleanText(key), String(v))
  }
  return groups
}

// Event properties PostHog copies onto the person: latest value into $set, first one into $set_once as $initial_*.
const PERSON_FROM_EVENT = new Map(
  [
    // device and page
    '$app_build $app_name $app_namespace $app_version $browser $browser_version $device_type $current_url $pathname',
    '$os $os_name $os_version $referring_domain $referrer $screen_height $screen_width $viewport_height',
    '$viewport_width $raw_user_agent',
    // campaign parameters
    'utm_source utm_medium utm_campaign utm_content utm_name utm_term gclid gad_source gclsrc dclid gbraid wbraid',
    'fbclid msclkid twclid li_fat_id mc_cid igshid ttclid rdt_cid irclid _kx epik qclid sccid',
  ]
    .join(' ')
    .split(' ')
    .map((key) => [key, `$initial_${key.replace('$', '')}`]),
)

/**
 * Person properties that posthog-js repeats on every event ($browser, $current_url, …): a new value alone is not
 * worth a person write, so it is stored with the next change that is (PostHog filters these updates too).
 */
export function isEventToPersonProperty(key: string): boolean {
  return PERSON_FROM_EVENT.has(key) || key.startsWith('$geoip_')
}

function liftPersonProperties(
  properties: Props,
  set: Props | undefined,
  setOnce: Props | undefined,
): { set: Props | undefined; setOnce: Props | undefined } {
  // Server SDKs mark their events $is_server; their host OS is not the person's.
  const skipHostOs = properties.$is_server === true
  // One pass over the event's keys: cheaper than probing the event for each of the 44 known keys.
  for (const key in properties) {
    const initialKey = PERSON_FROM_EVENT.get(key)
    if (initialKey === undefined) continue
    if (skipHostOs && (key === '$os' || key === '$os_version')) continue
    const value = properties[key]
    set ??= {}
    setOnce ??= {}
    if (!(key in set)) set[key] = value
    // A null first touch would block the real one forever; $set keeps nulls (a visit without the param).
    if (value !== null && value !== undefined && !(initialKey in setOnce)) setOnce[initialKey] = value
  }
  const osName = properties.$os_name
  if (set !== undefined && setOnce !== undefined && osName !== undefined && !skipHostOs) {
    if (osName !== null && !('$initial_os' in setOnce)) setOnce.$initial_os = osName
    delete set.$os_name
    delete setOnce.$initial_os_name
  }
  return { set, setOnce }
}

// posthog-js sends `$elements_chain` ready-made; older versions send `$elements`, which PostHog serialises.
function readElementsChain(raw: Props, properties: Props): string {
  if (typeof properties.$elements_chain === 'string' && properties.$elements_chain !== '') {
    return properties.$elements_chain
  }
  if (typeof raw.elements_chain === 'string' && raw.elements_chain !== '') return raw.elements_chain
  if (Array.isArray(properties.$elements) && properties.$elements.length > 0) {
    return elementsToChain(properties.$elements)
  }
  return ''
}

const collator = new Intl.Collator('en-US')

/** PostHog's elements_chain: `tag.class1.class2:attr="v"attr2="v";parent…`, attributes sorted by name. */
export function elementsToChain(elements: unknown[]): string {
  const parts: string[] = []
  for (const item of elements) {
    const el = isObject(item) ? item : {}
    let out = el.tag_name ? String(el.tag_name) : ''
    const classes = classList(el.attr__class)
    if (classes) {
      classes.sort()
      for (const c of classes) out += `.${c.replaceAll('"', '')}`
    }
    const attrs: Record<string, unknown> = {}
    if (el.$el_text) attrs.text = String(el.$el_text).slice(0, 400)
    attrs['nth-child'] = el.nth_child ?? 0
    attrs['nth-of-type'] = el.nth_of_type ?? 0
    if (el.attr__href) attrs.href = String(el.attr__href).slice(0, 2048)
    if (el.attr__id) attrs.attr_id = el.attr__id
    for (const key in el) if (key.startsWith('attr__')) attrs[key] = el[key]
    // PostHog sorts a class array in place, so the attribute it prints is the sorted list too.
    if (classes && Array.isArray(el.attr__class)) attrs.attr__class = classes
    out += ':'
    for (const key of Object.keys(attrs).sort(collator.compare)) {
      out += `${escapeQuotes(key)}="${escapeQuotes(String(attrs[key]))}"`
    }
    parts.push(out)
  }
  return parts.join(';')
}

function classList(value: unknown): string[] | undefined {
  if (!value) return undefined
  if (Array.isArray(value)) return value.map(String)
  return String(value).split(' ')
}

function escapeQuotes(s: string): string {
  return s.includes('"') ? s.replaceAll('"', '\\"') : s
}

function isObject(value: unknown): value is Props {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

// How PostHog's (Python) capture names the type of an event that is not an object.
function pythonTypeName(value: unknown): string {
  if (Array.isArray(value)) return 'list'
  if (typeof value === 'string') return 'str'
  if (typeof value === 'boolean') return 'bool'
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float'
  return typeof value
}

function typeName(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}
