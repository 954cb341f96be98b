import type { FastifyError, FastifyInstance } from 'fastify'
import { ApiError, MethodNotAllowed, NotFound, ParseError, UnsupportedMediaType, ValidationError } from './errors.js'

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
  return new ValidationError(`Invalid value: ${issue.message ?? 'invalid'}.`, attr, 'invalid_input')
}

/**
 * Maps every error to PostHog's body. Unknown errors become a 500 with a generic detail and the request id,
 * logged with their context, never with a stack trace to the client.
 */
export function installErrorHandling(app: FastifyInstance): void {
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
      mapped = new ApiError(error.statusCode, 'invalid_request', error.code ?? 'invalid_request', error.message)
    }
    if (mapped) {
      for (const [k, v] of Object.entries(mapped.headers)) reply.header(k, v)
      return reply.code(mapped.statusCode).send(mapped.toBody())
    }
    req.log.error({ err: error, url: req.url, method: req.method }, 'unhandled error')
    return reply.code(500).send({
      type: 'server_error',
      code: 'error',
      detail: `A server error occurred. (request id ${req.id})`,
      attr: null,
    })
  })
}
