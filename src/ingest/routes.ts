import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError, ValidationError } from '../http/errors.js'
import { DecodeError, decodeCaptureBody } from './decode.js'
import { clientIp } from './geoip.js'
import { CaptureValidationError, extractEvents } from './normalize.js'
import type { IngestService } from './service.js'

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
      let payload: unknown
      try {
        payload = await decodeCaptureBody({
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
      let extracted: ReturnType<typeof extractEvents>
      try {
        extracted = extractEvents(payload, query)
      } catch (err) {
        if (err instanceof CaptureValidationError) throw new ValidationError(err.message, err.attr, 'invalid_payload')
        throw err
      }
      await deps.ingest.capture({
        token: extracted.token,
        events: extracted.events,
        historicalMigration: extracted.historicalMigration,
        sentAt: extracted.sentAt,
        isBatch: Array.isArray(payload) || (typeof payload === 'object' && payload !== null && 'batch' in payload),
        ip: clientIp(req.headers, req.socket.remoteAddress, deps.trustedProxies),
      })
      return { status: 1 }
    }

    for (const path of CAPTURE_PATHS) {
      app.post(path, { schema: { tags: ['capture'], hide: path !== '/batch/' && path !== '/i/v0/e/' } }, handler)
      app.get(path, { schema: { hide: true } }, handler)
    }
  }
}
