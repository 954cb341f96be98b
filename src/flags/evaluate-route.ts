// Public flag evaluation: `/flags` (v2 by default, legacy v1 map) and the legacy `/decide` shapes. Bodies come
// as the SDKs send them (JSON, gzip, base64 or lz64, raw or as a `data=` form field), so this plugin takes the
// raw bytes and decodes them itself; the project key in the body authenticates.
import crypto from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { ApiError, ValidationError } from '../http/errors.js'
import { sendJsonParts } from '../http/send-parts.js'
import { DecodeError, decodeCaptureBody } from '../ingest/decode.js'
import { clientIp, type TrustedProxies } from '../ingest/geoip.js'
import type { DefinitionsCache } from './cache.js'
import { type FlagsEvaluator, FlagsRequestError, readFlagsRequest } from './evaluation-service.js'
import { buildRemoteConfig } from './remote-config.js'
import { projectResponse, selectResponseShape, serializeFlagsV2Parts } from './response.js'

type Query = Record<string, string | undefined>

const FlagsQuery = Type.Object(
  {
    v: Type.Optional(Type.String({ description: 'Answer version: 2 (default for /flags), 1, or /decide’s 1–4' })),
    config: Type.Optional(Type.String({ description: 'true adds the remote config' })),
    compression: Type.Optional(Type.String({ description: 'gzip, gzip-js, base64 or lz64' })),
    ip: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
)

const FlagsBody = Type.Object(
  {
    token: Type.Optional(Type.String({ description: 'The project API key (`phc_…`); `api_key` works too' })),
    distinct_id: Type.String(),
    groups: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Group type → group key' })),
    person_properties: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    group_properties: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()))),
    flag_keys_to_evaluate: Type.Optional(Type.Array(Type.String())),
    $anon_distinct_id: Type.Optional(Type.String({ description: 'For experience continuity after identify' })),
    geoip_disable: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
)

const FlagDetail = Type.Object({
  key: Type.String(),
  enabled: Type.Boolean(),
  variant: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  reason: Type.Object({
    code: Type.String({ description: 'condition_match, no_condition_match, out_of_rollout_bound…' }),
    condition_index: Type.Union([Type.Integer(), Type.Null()]),
    description: Type.Union([Type.String(), Type.Null()]),
  }),
  metadata: Type.Object({
    id: Type.Integer(),
    version: Type.Integer(),
    payload: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    description: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  }),
})

const FlagsAnswer = Type.Object(
  {
    flags: Type.Optional(Type.Record(Type.String(), FlagDetail, { description: 'v2: each flag by key' })),
    featureFlags: Type.Optional(
      Type.Record(Type.String(), Type.Union([Type.Boolean(), Type.String()]), { description: 'v1 and /decide' }),
    ),
    featureFlagPayloads: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    errorsWhileComputingFlags: Type.Boolean(),
    requestId: Type.Optional(Type.String()),
    quotaLimited: Type.Optional(Type.Array(Type.String())),
    config: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { additionalProperties: true },
)

/**
 * Largest /flags body, as sent and once decoded. Requests carry a distinct id and a few properties (kilobytes);
 * anyone with a project key can send one, and every byte is parsed on the event loop all projects share (about
 * 5 ms a megabyte, while a whole /flags answer takes ~0.1 ms), so a larger body is refused (413) before it is read.
 */
export const MAX_FLAGS_BODY_BYTES = 256 * 1024

const TRUE_VALUES = new Set(['', 'true', '1', 'yes', 'on'])
const isTrueParam = (value: string | undefined) => value !== undefined && TRUE_VALUES.has(value.toLowerCase())

const missingKey = () =>
  new ApiError(
    401,
    'authentication_error',
    'missing_api_key',
    'API key not provided. You can find your project API key in your project settings.',
  )
const invalidKey = () =>
  new ApiError(
    401,
    'authentication_error',
    'invalid_api_key',
    'Project API key invalid. You can find your project API key in your project settings.',
  )

function tokenOf(body: Record<string, unknown>, query: Query): string | undefined {
  for (const value of [body.token, body.api_key, body.$token, query.token, query.api_key]) {
    if (typeof value === 'string' && value !== '') return value
  }
  return undefined
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

/** A decoder's message as a sentence: one final full stop, whether the message brought its own or not. */
const sentence = (message: string) => (/[.!?]$/.test(message) ? message : `${message}.`)

export function flagsEndpointRoutes(deps: {
  cache: DefinitionsCache
  evaluator: FlagsEvaluator
  trustedProxies: number
}) {
  // A caller can override any person property in the body anyway, so believing its X-Forwarded-For for the
  // location overrides gives it nothing new; behind configured proxies, only their hops are trusted.
  const proxies: TrustedProxies = deps.trustedProxies > 0 ? deps.trustedProxies : 'all'

  async function decodeBody(req: FastifyRequest): Promise<Record<string, unknown>> {
    const query = req.query as Query
    let decoded: unknown
    try {
      decoded = await decodeCaptureBody({
        body: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
        contentType: headerText(req.headers['content-type']),
        contentEncoding: headerText(req.headers['content-encoding']),
        query,
        maxBytes: MAX_FLAGS_BODY_BYTES,
      })
    } catch (error) {
      if (!(error instanceof DecodeError)) throw error
      if (error.statusCode === 413) {
        throw new ApiError(
          413,
          'invalid_request',
          'request_too_large',
          `Request body is too large: ${sentence(error.message)}`,
        )
      }
      throw new ValidationError(`Malformed request data: ${sentence(error.message)}`, null, 'invalid_payload')
    }
    if (typeof decoded !== 'object' || decoded === null || Array.isArray(decoded)) {
      throw new ValidationError('Malformed request data: the body must be a JSON object.', null, 'invalid_payload')
    }
    return decoded as Record<string, unknown>
  }

  async function handle(endpoint: 'flags' | 'decide', req: FastifyRequest, reply: FastifyReply) {
    const query = req.query as Query
    const version = query.v === undefined ? undefined : Number.parseInt(query.v, 10)
    const hasConfigParam = query.config !== undefined
    const shape = selectResponseShape(endpoint, Number.isNaN(version) ? undefined : version, hasConfigParam)
    const withConfig = endpoint === 'decide' || isTrueParam(query.config) || (version === undefined && !hasConfigParam)
    const meta = { requestId: crypto.randomUUID(), evaluatedAt: Date.now() }

    const hasBody = Buffer.isBuffer(req.body) && req.body.length > 0
    if (req.method === 'GET' && !hasBody && query.data === undefined) {
      return reply.send(projectResponse(shape, { flags: {}, errorsWhileComputingFlags: false }, meta))
    }
    const body = await decodeBody(req)
    const token = tokenOf(body, query)
    if (!token) throw missingKey()
    const project = await deps.cache.projectByToken(token)
    if (!project) throw invalidKey()
    let request: ReturnType<typeof readFlagsRequest>
    try {
      request = readFlagsRequest(body, query)
    } catch (error) {
      if (error instanceof FlagsRequestError) throw new ValidationError(error.message, 'distinct_id', 'required')
      throw error
    }
    const definitions = await deps.cache.definitions(project.teamId)
    const ip = clientIp(req.headers, req.socket.remoteAddress, proxies)
    const outcome = await deps.evaluator.evaluate(project, definitions, request, req.headers, ip || undefined)
    const responseMeta = {
      ...meta,
      ...(outcome.quotaLimited ? { quotaLimited: ['feature_flags'] } : {}),
      ...(withConfig ? { config: buildRemoteConfig(project, definitions) } : {}),
    }
    if (shape === 'flags_v2') {
      return sendJsonParts(reply, serializeFlagsV2Parts(outcome.result, responseMeta))
    }
    return reply.send(projectResponse(shape, outcome.result, responseMeta))
  }

  return async (app: FastifyInstance) => {
    // Raw bytes for every content type (SDKs send gzip as text/plain, base64 as a form): decoded in handle().
    app.removeAllContentTypeParsers()
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body))

    for (const url of ['/flags', '/decide']) {
      const endpoint = url === '/flags' ? 'flags' : 'decide'
      const schema = {
        summary: url === '/flags' ? 'Evaluate feature flags' : 'Evaluate feature flags (legacy /decide)',
        description:
          url === '/flags'
            ? 'The flags of the project named by the API key in the body (`token` or `api_key`, `phc_…`) for one ' +
              '`distinct_id`, with variants, payloads and the reason for each (`?v=2`, the default; `?v=1` answers ' +
              'the older `featureFlags` map). `?config=true` adds remote config. Bodies come as the SDKs send them: ' +
              'JSON, gzip, base64 or lz64 (`?compression=`), raw or as a `data=` form field.'
            : 'PostHog’s older endpoint for posthog-js and older SDKs: the same evaluation, answered in the ' +
              '`featureFlags`/`featureFlagPayloads` shape of the version asked for (`?v=`), with remote config.',
        tags: ['flags'],
        querystring: FlagsQuery,
        response: { 200: FlagsAnswer },
      }
      const config = { scope: null, documentedBody: FlagsBody }
      // The answer is serialized by the response module (one shape per version); the schema documents it.
      const serializerCompiler = () => (data: unknown) => JSON.stringify(data)
      app.post(url, { schema, config, serializerCompiler, bodyLimit: MAX_FLAGS_BODY_BYTES }, (req, reply) =>
        handle(endpoint, req, reply),
      )
      app.get(url, { schema, config, serializerCompiler }, (req, reply) => handle(endpoint, req, reply))
    }
  }
}
