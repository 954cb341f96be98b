import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, MethodNotAllowed, NotFound, ParseError, UnsupportedMediaType, ValidationError } from './errors.js'
import { redactUrl } from './logging.js'

interface AjvIssue {
  instancePath: string
  keyword: string
  message?: string
  params: Record<string, unknown>
}

/** Field path of a schema-validation failure, joined with `__` as DRF does (`filters__groups__0`). */
function attrOf(issue: AjvIssue): string | null {
  const parts = issue.instancePath.split('/').filter(Boolean)
  if (issue.keyword === 'required' && typeof issue.params.missingProperty === 'string') {
    parts.push(issue.params.missingProperty)
  }
  if (issue.keyword === 'additionalProperties' && typeof issue.params.additionalProperty === 'string') {
    parts.push(issue.params.additionalProperty)
  }
  return parts.length > 0 ? parts.map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~')).join('__') : null
}

function validationErrorOf(error: FastifyError): ValidationError {
  const issue = (error.validation as AjvIssue[])[0]
  const attr = attrOf(issue)
  if (issue.keyword === 'required') return new ValidationError('This field is required.', attr, 'required')
  if (issue.keyword === 'enum' || issue.keyword === 'const') {
    return new ValidationError(
      `Invalid choice: must be ${issue.message ?? 'one of the allowed values'}.`,
      attr,
      'invalid_choice',
    )
  }
  if (issue.keyword === 'additionalProperties') return new ValidationError('Unknown field.', attr, 'invalid_input')
  // DRF's wording and codes for string lengths, which PostHog's clients show as they are
  if (issue.keyword === 'maxLength') {
    return new ValidationError(
      `Ensure this field has no more than ${issue.params.limit} characters.`,
      attr,
      'max_length',
    )
  }
  if (issue.keyword === 'minLength') {
    if (issue.params.limit === 1) return new ValidationError('This field may not be blank.', attr, 'blank')
    return new ValidationError(`Ensure this field has at least ${issue.params.limit} characters.`, attr, 'min_length')
  }
  return new ValidationError(`Invalid value: ${issue.message ?? 'invalid'}.`, attr, 'invalid_input')
}

/**
 * Errors Fastify raises before a route is found (a URL that does not decode, a parameter past the length
 * limit): the Fastify `frameworkErrors` option, answered in PostHog's shape.
 */
export function answerFrameworkError(error: FastifyError, _req: FastifyRequest, reply: FastifyReply): void {
  const body =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ApiError(414, 'invalid_request', 'request_uri_too_long', 'A path segment of the URL is too long.')
      : error.code === 'FST_ERR_BAD_URL'
        ? new ApiError(400, 'invalid_request', 'invalid_url', 'Malformed URL: it is not valid percent-encoding.')
        : new ApiError(400, 'invalid_request', 'invalid_request', 'Malformed request.')
  reply.code(body.statusCode).send(body.toBody())
}

const CLIENT_ERRORS: Record<string, { status: string; code: string; detail: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: '408 Request Timeout', code: 'request_timeout', detail: 'Request timed out.' },
  HPE_HEADER_OVERFLOW: {
    status: '431 Request Header Fields Too Large',
    code: 'request_headers_too_large',
    detail: 'Request headers are too large.',
  },
}

/**
 * Requests Node's HTTP parser refuses (a malformed request line or header, headers too large, a timeout): the
 * Fastify `clientErrorHandler` option, answered in PostHog's shape on the raw socket as Fastify's own would.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const known = CLIENT_ERRORS[error.code ?? '']
  const { status, code, detail } = known ?? {
    status: '400 Bad Request',
    code: 'parse_error',
    detail: 'Malformed request.',
  }
  const body = JSON.stringify({ type: 'invalid_request', code, detail, attr: null })
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\n\r\n${body}`,
    )
  }
  socket.destroy(error)
}

/**
 * Maps every error to PostHog's body. Unknown errors become a 500 with a generic detail and the request id,
 * logged with their context, never with a stack trace to the client. `throttleFailure` sees every client
 * error first and may answer a 429 instead (failed requests count against rate limits).
 */
export function installErrorHandling(
  app: FastifyInstance,
  options: {
    throttleFailure?: (req: FastifyRequest, error: ApiError) => Promise<ApiError | undefined>
  } = {},
): void {
  // URL patterns of every route, so that a known path with another method answers 405 rather than 404.
  const patterns: { regex: RegExp; methods: Set<string> }[] = []
  app.addHook('onRoute', (route) => {
    // Catch-all routes (CORS preflight, static docs assets) say nothing about which methods a path allows.
    if (route.url.includes('*')) return
    const source = route.url
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/')
    const regex = new RegExp(`^${source}$`)
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const existing = patterns.find((p) => p.regex.source === regex.source)
    if (existing) for (const m of methods) existing.methods.add(m)
    else patterns.push({ regex, methods: new Set(methods) })
  })

  app.setNotFoundHandler(async (req, reply) => {
    const path = req.url.split('?')[0]
    const known = patterns.some((p) => p.regex.test(path) && !p.methods.has(req.method))
    const error = known ? new MethodNotAllowed(req.method) : new NotFound()
    return reply.code(error.statusCode).send(error.toBody())
  })

  app.setErrorHandler(async (error: FastifyError, req, reply) => {
    let mapped: ApiError | undefined
    if (error instanceof ApiError) mapped = error
    else if (error.validation) mapped = validationErrorOf(error)
    else if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      mapped = new UnsupportedMediaType(req.headers['content-type'] ?? '')
    } else if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      mapped = new ApiError(413, 'invalid_request', 'request_too_large', 'Request body is too large.')
    } else if (
      error instanceof SyntaxError ||
      error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
      error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
      error.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH'
    ) {
      mapped = new ParseError(`JSON parse error - ${error.message}`)
    } else if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      // Other framework refusals: Fastify's message, PostHog's shape.
      mapped = new ApiError(error.statusCode, 'invalid_request', 'invalid_request', error.message)
    }
    if (mapped) {
      mapped = (await options.throttleFailure?.(req, mapped)) ?? mapped
      for (const [k, v] of Object.entries(mapped.headers)) reply.header(k, v)
      return reply.code(mapped.statusCode).send(mapped.toBody())
    }
    req.log.error({ err: error, url: redactUrl(req.url), method: req.method }, 'unhandled error')
    return reply.code(500).send({
      type: 'server_error',
      code: 'error',
      detail: `A server error occurred. (request id ${req.id})`,
      attr: null,
    })
  })
}
