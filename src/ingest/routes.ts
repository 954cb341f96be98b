import type { IncomingMessage } from 'node:http'
import { Socket } from 'node:net'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { ApiError, ValidationError } from '../http/errors.js'
import { CSP_MAX_BODY_BYTES, CspReportError, isReportContentType, parseReports, tokenOfReport } from './csp.js'
import { type DecodedCapture, DecodeError, decodeCapturePayload } from './decode.js'
import { clientIp } from './geoip.js'
import { MAX_JSON_DEPTH } from './json-nesting.js'
import { CaptureTokenError, CaptureValidationError, extractEvents } from './normalize.js'
import type { IngestService } from './service.js'

const Properties = Type.Record(Type.String(), Type.Unknown())
const Event = Type.Object(
  {
    event: Type.String({ description: 'The event name, e.g. `$pageview` or `signed up`' }),
    distinct_id: Type.Optional(Type.String({ description: 'Or `properties.distinct_id`' })),
    properties: Type.Optional(Properties),
    timestamp: Type.Optional(Type.String({ description: 'ISO 8601; corrected for clock skew with `sent_at`' })),
    uuid: Type.Optional(Type.String({ description: 'Makes retries idempotent' })),
    $set: Type.Optional(Properties),
    $set_once: Type.Optional(Properties),
  },
  { additionalProperties: true },
)
const EventBody = Type.Union([
  Type.Object({ ...Event.properties, api_key: Type.String({ description: 'The project API key (`phc_…`)' }) }),
  Type.Array(Event),
])
const BatchBody = Type.Object({
  api_key: Type.String({ description: 'The project API key (`phc_…`)' }),
  batch: Type.Array(Event),
  historical_migration: Type.Optional(Type.Boolean({ description: 'Import of past events (paid organizations)' })),
  sent_at: Type.Optional(Type.String()),
})
const CaptureAnswer = Type.Object({
  status: Type.Integer({ description: '1: stored' }),
  rejected: Type.Optional(
    Type.Array(
      Type.Object({
        index: Type.Integer(),
        type: Type.String(),
        code: Type.String(),
        detail: Type.String(),
        attr: Type.String(),
      }),
      { description: 'Events of the batch that were left out, and why' },
    ),
  ),
})

/** Every path the official SDKs post events to. */
const CAPTURE_PATHS = ['/i/v0/e/', '/e/', '/capture/', '/track/', '/engage/', '/batch/']

/**
 * A body refused as too large (413) before it was read is still read — and thrown away — up to this many bytes, so
 * that a client still sending it (Node's fetch, which posthog-node uses) reads the 413 instead of a reset
 * connection, and does not retry. Past the bound, or the time, the connection is closed.
 */
const DISCARD_MAX_BYTES = 64 * 1024 * 1024
const DISCARD_MAX_MS = 30_000

/**
 * The public capture endpoints. Bodies arrive in every wrapping the SDKs use (JSON, gzip with or without a
 * header, lz64, base64 forms), so this scope reads every body as bytes and decodes it itself.
 */
export function ingestRoutes(deps: { ingest: IngestService; trustedProxies: number; clock: () => Date }) {
  return async (app: FastifyInstance) => {
    app.removeAllContentTypeParsers()
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body))
    // Some browsers (IE11) send an empty Content-Type: the body is read as if none were named, not refused.
    app.addHook('onRequest', (req, _reply, done) => {
      const type = req.headers['content-type']
      if (type !== undefined && type.trim() === '') delete req.headers['content-type']
      done()
    })
    app.addHook('onSend', (req, reply, payload, done) => {
      // Fastify answers a declared length over the limit with `Connection: close` and closes while the client is
      // still sending: the client's socket is reset, and Node's fetch reports a network error, not the 413.
      if (reply.statusCode === 413 && discardRest(req.raw)) reply.removeHeader('connection')
      done(null, payload)
    })

    const handler = async (req: FastifyRequest) => {
      const query = req.query as Record<string, string | undefined>
      // A browser report sent to an event path: PostHog reads no event data from it.
      if (isReportContentType(mediaType(req.headers['content-type']))) {
        throw new ValidationError(
          'No data found. Make sure to use a POST request when sending the payload in the body of the request.',
          null,
          'no_data',
        )
      }
      let decoded: DecodedCapture
      try {
        decoded = await decodeCapturePayload({
          body: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
          contentType: req.headers['content-type'],
          contentEncoding: req.headers['content-encoding'] as string | undefined,
          query,
        })
      } catch (err) {
        if (err instanceof DecodeError) {
          if (err.statusCode === 413) throw new ApiError(413, 'invalid_request', 'request_too_large', err.message)
          throw new ValidationError(`Malformed request data: ${err.message}`, null, 'invalid_payload')
        }
        throw err
      }
      const { payload, tooDeep, form } = decoded
      let extracted: ReturnType<typeof extractEvents>
      try {
        extracted = extractEvents(payload, query, {
          engage: req.routeOptions.url === '/engage/',
          formToken: form?.apiKey,
          formSentAt: form?.sentAt,
        })
      } catch (err) {
        if (err instanceof CaptureValidationError) throw new ValidationError(err.message, err.attr, 'invalid_payload')
        if (err instanceof CaptureTokenError) throw new ApiError(401, 'authentication_error', err.code, err.message)
        throw err
      }
      const rejected = tooDeep.map((index) => ({
        index,
        type: 'validation_error',
        code: 'too_deep',
        detail: `Event ${index} nests deeper than ${MAX_JSON_DEPTH} levels and was not stored.`,
        attr: `batch__${index}`,
      }))
      if (rejected.length > 0 && rejected.length === extracted.events.length) {
        throw new ValidationError(
          `Every event in the batch nests deeper than ${MAX_JSON_DEPTH} levels; none was stored.`,
          rejected[0].attr,
          'too_deep',
        )
      }
      await deps.ingest.capture({
        token: extracted.token,
        events: extracted.events,
        skipped: rejected.length > 0 ? new Set(tooDeep) : undefined,
        historicalMigration: extracted.historicalMigration,
        sentAt: extracted.sentAt,
        isBatch: Array.isArray(payload) || (typeof payload === 'object' && payload !== null && 'batch' in payload),
        ip: clientIp(req.headers, req.socket.remoteAddress, deps.trustedProxies),
      })
      // The rest of the batch is stored: a 2xx, so SDKs do not send it again, naming what was left out.
      return rejected.length > 0 ? { status: 1, rejected } : { status: 1 }
    }

    for (const path of CAPTURE_PATHS) {
      const isBatch = path === '/batch/'
      const schema = {
        summary: isBatch ? 'Capture a batch of events' : 'Capture events',
        description:
          (isBatch
            ? 'Stores a batch (`{"api_key": "phc_…", "batch": [event, …]}`), as posthog-node and the other server ' +
              'SDKs send it. '
            : 'Stores one event (`{"api_key": "phc_…", "event": …, "distinct_id": …, "properties": {…}}`) or a ' +
              'list of them, as posthog-js sends them. ') +
          'The project API key may also travel as `token` or in each event’s properties. Bodies come as the SDKs ' +
          'send them: JSON, gzip (with or without a header), lz64 or base64 forms (`?compression=`). Answers once ' +
          'the events are stored; persons (`$set`, `$identify`, …), groups and GeoIP are applied on the way. An ' +
          'event that nests too deep is left out and named in `rejected`; the others are stored. `/e/`, ' +
          '`/capture/`, `/track/` and `/engage/` take the same bodies.',
        tags: ['capture'],
        hide: !isBatch && path !== '/i/v0/e/',
        response: { 200: CaptureAnswer },
      }
      app.post(path, { schema, config: { documentedBody: isBatch ? BatchBody : EventBody } }, handler)
      app.get(path, { schema: { hide: true } }, handler)
    }

    // Browser reports (CSP violations, crashes) as the browser posts them; any other body is an ordinary capture.
    const reportHandler = async (req: FastifyRequest, reply: FastifyReply) => {
      const contentType = mediaType(req.headers['content-type'])
      if (!isReportContentType(contentType)) return handler(req)
      const query = req.query as Record<string, string | undefined>
      let parsed: ReturnType<typeof parseReports>
      try {
        parsed = parseReports(
          {
            contentType,
            body: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
            query,
            userAgent: req.headers['user-agent'],
          },
          deps.clock(),
        )
      } catch (err) {
        if (err instanceof CspReportError) throw new ApiError(err.statusCode, 'validation_error', err.code, err.message)
        throw err
      }
      if (parsed.events.length > 0) {
        const token = [query.token, query.api_key].find((t) => t !== undefined && t.trim() !== '')?.trim()
        await deps.ingest.capture({
          token: token ?? tokenOfReport(parsed.data),
          events: parsed.events,
          historicalMigration: false,
          isBatch: parsed.events.length > 1,
          ip: clientIp(req.headers, req.socket.remoteAddress, deps.trustedProxies),
        })
      }
      return reply.code(204).send()
    }
    app.post(
      '/report/',
      {
        bodyLimit: CSP_MAX_BODY_BYTES,
        schema: {
          summary: 'Receive browser reports (CSP violations)',
          description:
            'The endpoint for a Content-Security-Policy `report-uri` or `report-to` directive: ' +
            '`/report/?token=phc_…` (optional `distinct_id`, `session_id`, `v`, `sample_rate`). Each violation is ' +
            'stored as a `$csp_violation` event (crash reports as `$browser_crash_report`); answers 204.',
          tags: ['capture'],
          hide: true,
        },
      },
      reportHandler,
    )
  }
}

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0].trim().toLowerCase()
}

/**
 * Reads and throws away the rest of a refused body, within {@link DISCARD_MAX_BYTES} and {@link DISCARD_MAX_MS};
 * false when there is nothing left to read.
 */
function discardRest(raw: IncomingMessage): boolean {
  // Only a request read from a real connection (not `inject`) has a rest to read.
  const socket = raw.socket
  if (raw.complete || raw.destroyed || !(socket instanceof Socket)) return false
  let left = DISCARD_MAX_BYTES
  const close = () => socket.destroy()
  const timer = setTimeout(close, DISCARD_MAX_MS)
  timer.unref()
  raw.on('data', (chunk: Buffer) => {
    left -= chunk.length
    if (left < 0) {
      clearTimeout(timer)
      close()
    }
  })
  raw.once('end', () => clearTimeout(timer))
  raw.once('close', () => clearTimeout(timer))
  raw.resume()
  return true
}
