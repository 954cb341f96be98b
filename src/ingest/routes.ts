import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { ApiError, ValidationError } from '../http/errors.js'
import { type DecodedCapture, DecodeError, decodeCapturePayload } from './decode.js'
import { clientIp } from './geoip.js'
import { MAX_JSON_DEPTH } from './json-nesting.js'
import { CaptureValidationError, extractEvents } from './normalize.js'
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
 * The public capture endpoints. Bodies arrive in every wrapping the SDKs use (JSON, gzip with or without a
 * header, lz64, base64 forms), so this scope reads every body as bytes and decodes it itself.
 */
export function ingestRoutes(deps: { ingest: IngestService; trustedProxies: number }) {
  return async (app: FastifyInstance) => {
    app.removeAllContentTypeParsers()
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body))

    const handler = async (req: FastifyRequest) => {
      const query = req.query as Record<string, string | undefined>
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
      const { payload, tooDeep } = decoded
      let extracted: ReturnType<typeof extractEvents>
      try {
        extracted = extractEvents(payload, query)
      } catch (err) {
        if (err instanceof CaptureValidationError) throw new ValidationError(err.message, err.attr, 'invalid_payload')
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
  }
}
