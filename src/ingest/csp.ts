/**
 * Browser reports sent to `/report/`: Content-Security-Policy violations in both of the formats browsers use
 * (`report-uri`: `application/csp-report`, one `{"csp-report": {…}}`; `report-to`: `application/reports+json`, a
 * list of `{type, body, …}`), and crash reports when a site points its `default` reporting endpoint here. Each
 * report becomes an event as PostHog's capture makes it (`$csp_violation` with `$csp_*` properties,
 * `$browser_crash_report` with `$browser_crash_*` ones), without a person profile.
 *
 * Pure: the request's parts, the clock and the id source come in; events or a {@link CspReportError} come out.
 */
import { createHash } from 'node:crypto'
import { limitNesting, MAX_JSON_DEPTH } from './json-nesting.js'
import { uuidV7 } from './normalize.js'

/** The largest report body read, in bytes (a browser's bundle of reports is a few kilobytes). */
export const CSP_MAX_BODY_BYTES = 1024 * 1024
/** The most reports (violations and crashes) one request may carry. */
export const CSP_MAX_REPORTS = 100
// How far a crash report's `age` may move its event back: a garbage age cannot backdate it further.
const MAX_CRASH_AGE_MS = 7 * 24 * 3_600_000

export const CSP_CONTENT_TYPES = ['application/csp-report', 'application/reports+json'] as const

export class CspReportError extends Error {
  override readonly name = 'CspReportError'
  constructor(
    readonly statusCode: 400 | 413,
    readonly code: 'invalid_csp_payload' | 'csp_report_too_large',
    message: string,
  ) {
    super(message)
  }
}

export interface CspRequest {
  /** The media type without parameters, lower case. */
  contentType: string
  body: Buffer
  query: Record<string, string | undefined>
  userAgent?: string
}

export interface CspEvent {
  event: '$csp_violation' | '$browser_crash_report'
  distinct_id: string
  timestamp: string
  properties: Record<string, unknown>
}

type Json = Record<string, unknown>

const invalidFormat = () => new CspReportError(400, 'invalid_csp_payload', 'Invalid CSP report format')
const invalidProperties = () => new CspReportError(400, 'invalid_csp_payload', 'Invalid CSP report properties provided')
const tooLarge = () => new CspReportError(413, 'csp_report_too_large', 'CSP report too large')

/** Whether `/report/` reads this media type as browser reports (any other is an ordinary capture body). */
export function isReportContentType(contentType: string): boolean {
  return (CSP_CONTENT_TYPES as readonly string[]).includes(contentType)
}

/** The project token a report body may carry itself (`api_key` / `token`), when the query has none. */
export function tokenOfReport(data: unknown): string | undefined {
  if (!isObject(data)) return undefined
  for (const key of ['api_key', 'token']) {
    const value = data[key]
    if (typeof value === 'string' && value.trim() !== '') return value.trim()
  }
  return undefined
}

/** Parses a report body; the events to store (none when every report was sampled out). */
export function parseReports(request: CspRequest, now: Date): { data: unknown; events: CspEvent[] } {
  if (request.body.length > CSP_MAX_BODY_BYTES) throw tooLarge()
  const data = parseJson(request.body)
  const reports = Array.isArray(data) ? data : undefined
  if (reports !== undefined) {
    let count = 0
    for (const item of reports) if (isViolation(item) || isCrash(item)) count++
    if (count > CSP_MAX_REPORTS) throw tooLarge()
  }

  const q = request.query
  const distinctId = nonEmpty(q.distinct_id) ?? uuidV7(now.getTime())
  const sessionId = nonEmpty(q.session_id) ?? uuidV7(now.getTime())
  const version = nonEmpty(q.v) ?? 'unknown'
  const sampleRate = readSampleRate(q.sample_rate)
  const context = { distinctId, sessionId, version, userAgent: request.userAgent ?? null, now }

  if (request.contentType === 'application/csp-report') {
    if (!isObject(data)) throw invalidProperties()
    let props: Json
    if (isObject(data['csp-report'])) props = fromReportUri(data)
    else if (isViolation(data)) props = fromReportTo(data)
    else throw invalidProperties()
    return { data, events: sampled(props, sampleRate, now) ? [violationEvent(props, context)] : [] }
  }

  let items: unknown[]
  if (reports !== undefined) items = reports
  else if (isViolation(data) || isCrash(data)) items = [data]
  else throw invalidProperties()
  const events: CspEvent[] = []
  for (const item of items) {
    if (isViolation(item)) {
      const props = fromReportTo(item)
      if (sampled(props, sampleRate, now)) events.push(violationEvent(props, context))
    }
  }
  // Crash reports are rare and each is a dead tab: never sampled.
  for (const item of items) if (isCrash(item)) events.push(crashEvent(item, context))
  return { data, events }
}

function parseJson(body: Buffer): unknown {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body)
  } catch {
    throw invalidFormat()
  }
  const checked = limitNesting(text, MAX_JSON_DEPTH, false)
  if (!checked.ok) throw invalidFormat()
  try {
    return JSON.parse(checked.text)
  } catch {
    throw invalidFormat()
  }
}

// report-uri: `{"csp-report": {"document-uri": …}}`.
function fromReportUri(data: Json): Json {
  const r = data['csp-report'] as Json
  r['script-sample'] = escapeHtml(r['script-sample'])
  return {
    report_type: 'csp-violation',
    document_url: r['document-uri'] ?? null,
    referrer: r.referrer ?? null,
    violated_directive: r['violated-directive'] ?? null,
    effective_directive: r['effective-directive'] ?? null,
    original_policy: r['original-policy'] ?? null,
    disposition: r.disposition ?? null,
    blocked_url: r['blocked-uri'] ?? null,
    line_number: r['line-number'] ?? null,
    column_number: r['column-number'] ?? null,
    source_file: r['source-file'] ?? null,
    status_code: r['status-code'] ?? null,
    script_sample: r['script-sample'],
    raw_report: data,
  }
}

// report-to: `{"type": "csp-violation", "body": {"documentURL": …}, "user_agent": …}`.
function fromReportTo(data: Json): Json {
  const body: Json = isObject(data.body) ? data.body : {}
  const sample = escapeHtml(body.sample)
  body.sample = sample
  body['script-sample'] = sample
  return {
    report_type: data.type ?? null,
    document_url: truthy(body.documentURL) ?? truthy(body['document-uri']) ?? data.url ?? null,
    referrer: body.referrer ?? null,
    violated_directive: truthy(body.effectiveDirective) ?? body['violated-directive'] ?? null,
    effective_directive: body.effectiveDirective ?? null,
    original_policy: body.originalPolicy ?? null,
    disposition: body.disposition ?? null,
    blocked_url: truthy(body.blockedURL) ?? body['blocked-uri'] ?? null,
    line_number: body.lineNumber ?? null,
    column_number: body.columnNumber ?? null,
    source_file: body.sourceFile ?? null,
    status_code: body.statusCode ?? null,
    script_sample: sample,
    user_agent: truthy(data.user_agent) ?? body['user-agent'] ?? null,
    raw_report: data,
  }
}

interface Context {
  distinctId: string
  sessionId: string
  version: string
  userAgent: string | null
  now: Date
}

function violationEvent(props: Json, c: Context): CspEvent {
  const properties: Json = {
    $session_id: c.sessionId,
    $csp_version: c.version,
    $current_url: props.document_url,
    $process_person_profile: false,
    $raw_user_agent: c.userAgent,
  }
  for (const key of Object.keys(props)) properties[`$csp_${key}`] = props[key]
  return { event: '$csp_violation', distinct_id: c.distinctId, timestamp: c.now.toISOString(), properties }
}

function crashEvent(data: Json, c: Context): CspEvent {
  const body: Json = isObject(data.body) ? data.body : {}
  const documentUrl = sanitizeCrashUrl(data.url)
  const props: Json = {
    reason: truthy(body.reason) ?? 'unknown',
    id: body.crashId ?? null,
    is_top_level: body.is_top_level ?? null,
    visibility_state: body.visibility_state ?? null,
    age_ms: data.age ?? null,
    document_url: documentUrl,
    user_agent: data.user_agent ?? null,
    raw_report: { ...data, url: documentUrl },
  }
  let at = c.now.getTime()
  const age = data.age
  if (typeof age === 'number' && age >= 0 && age <= MAX_CRASH_AGE_MS) at -= age
  const properties: Json = {
    $session_id: c.sessionId,
    $current_url: documentUrl,
    $process_person_profile: false,
    $raw_user_agent: truthy(props.user_agent) ?? c.userAgent,
  }
  for (const key of Object.keys(props)) properties[`$browser_crash_${key}`] = props[key]
  return {
    event: '$browser_crash_report',
    distinct_id: c.distinctId,
    timestamp: new Date(at).toISOString(),
    properties,
  }
}

// Crash reports carry the crashed page's URL, where auth routes put live tokens: the query goes, and a path
// segment that looks like a token (16+ URL-safe characters with a digit) is masked.
const TOKEN_LIKE = /^[A-Za-z0-9_.~-]{16,}$/

function sanitizeCrashUrl(url: unknown): string | null {
  if (typeof url !== 'string' || url === '') return null
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return null
  }
  const path = parsed.pathname
    .split('/')
    .map((seg) => (TOKEN_LIKE.test(seg) && /\d/.test(seg) ? '<redacted>' : seg))
    .join('/')
  return `${parsed.protocol}//${parsed.host}${path}`
}

function readSampleRate(value: string | undefined): number {
  if (value === undefined) return 1
  const rate = Number(value)
  return value.trim() === '' || !Number.isFinite(rate) ? 1 : rate
}

// Sampling keeps or drops every report of one page within one minute together (PostHog's key: URL and minute).
function sampled(props: Json, rate: number, now: Date): boolean {
  if (rate >= 1) return true
  const minute = new Date(now)
  minute.setUTCSeconds(0, 0)
  const key = `${props.document_url ?? ''}-${minute.toISOString()}`
  const hash = Number.parseInt(createHash('sha1').update(key).digest('hex').slice(0, 13), 16) / 2 ** 52
  const keep = hash < rate
  props.sampled = keep
  props.sample_threshold = rate
  props.sampling_key = key
  return keep
}

function isViolation(value: unknown): value is Json {
  return isObject(value) && value.type === 'csp-violation'
}

function isCrash(value: unknown): value is Json {
  return isObject(value) && value.type === 'crash'
}

function escapeHtml(value: unknown): string {
  if (value === undefined || value === null || value === '' || value === false || value === 0) return ''
  return String(value)
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#x27;')
}

function truthy(value: unknown): unknown {
  return value === undefined || value === null || value === '' || value === 0 || value === false ? undefined : value
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
