/**
 * One error hierarchy, one mapper: services throw these; the Fastify error handler turns them into PostHog's
 * `{type, code, detail, attr}` body (drf-exceptions-hog).
 */
export type ErrorType =
  | 'validation_error'
  | 'invalid_request'
  | 'authentication_error'
  | 'throttled_error'
  | 'server_error'

export interface ErrorBody {
  type: ErrorType
  code: string
  detail: string
  attr: string | null
}

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly type: ErrorType,
    readonly code: string,
    readonly detail: string,
    readonly attr: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail)
  }

  toBody(): ErrorBody {
    return { type: this.type, code: this.code, detail: this.detail, attr: this.attr }
  }
}

export class ValidationError extends ApiError {
  constructor(detail: string, attr: string | null = null, code = 'invalid_input') {
    super(400, 'validation_error', code, detail, attr)
  }
}

export class ParseError extends ApiError {
  constructor(detail = 'Malformed request') {
    super(400, 'invalid_request', 'parse_error', detail)
  }
}

export class AuthenticationError extends ApiError {
  constructor(
    detail = 'Authentication credentials were not provided.',
    code: 'not_authenticated' | 'authentication_failed' = 'not_authenticated',
  ) {
    super(401, 'authentication_error', code, detail, null, { 'www-authenticate': 'Bearer' })
  }
}

export class PermissionDenied extends ApiError {
  constructor(detail = 'You do not have permission to perform this action.') {
    super(403, 'authentication_error', 'permission_denied', detail)
  }
}

export class NotFound extends ApiError {
  constructor(detail = 'Not found.') {
    super(404, 'invalid_request', 'not_found', detail)
  }
}

export class MethodNotAllowed extends ApiError {
  constructor(method: string) {
    super(405, 'invalid_request', 'method_not_allowed', `Method "${method}" not allowed.`)
  }
}

export class Conflict extends ApiError {
  constructor(detail: string, attr: string | null = null) {
    super(400, 'validation_error', 'unique', detail, attr)
  }
}

export class Throttled extends ApiError {
  constructor(retryAfterSeconds: number) {
    super(
      429,
      'throttled_error',
      'throttled',
      `Request was throttled. Expected available in ${retryAfterSeconds} seconds.`,
      null,
      { 'retry-after': String(retryAfterSeconds) },
    )
  }
}

export class QuotaExceeded extends ApiError {
  constructor(detail: string, code = 'payment_required') {
    super(402, 'server_error', code, detail)
  }
}

export class UnsupportedMediaType extends ApiError {
  constructor(contentType: string) {
    super(415, 'invalid_request', 'unsupported_media_type', `Unsupported media type "${contentType}" in request.`)
  }
}

/** A query that failed to compile or run; `code` tells syntax from validation from execution. */
export class QueryError extends ApiError {
  constructor(detail: string, code: 'syntax_error' | 'validation_error' | 'query_error' | 'timeout' = 'query_error') {
    super(400, 'validation_error', code, detail)
  }
}
