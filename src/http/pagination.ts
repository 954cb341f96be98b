import { Type } from 'typebox'
import { ValidationError } from './errors.js'

export const PaginationQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
})

/**
 * Limit and offset of a validated query string. Schema validation lets `1e400` through as Infinity (it coerces
 * before it checks), so the numbers are checked once more here.
 */
export function pageParams(
  query: { limit?: number; offset?: number },
  defaultLimit: number,
): { limit: number; offset: number } {
  const limit = query.limit ?? defaultLimit
  const offset = query.offset ?? 0
  if (!Number.isSafeInteger(limit)) throw new ValidationError('A valid integer is required.', 'limit')
  if (!Number.isSafeInteger(offset)) throw new ValidationError('A valid integer is required.', 'offset')
  return { limit, offset }
}

export interface Page<T> {
  count: number
  next: string | null
  previous: string | null
  results: T[]
}

/** PostHog's limit/offset envelope; `next`/`previous` keep the request's other query parameters. */
export function paginate<T>(
  requestUrl: string,
  siteUrl: string,
  total: number,
  results: T[],
  limit: number,
  offset: number,
): Page<T> {
  const link = (newOffset: number) => {
    const url = new URL(requestUrl, siteUrl)
    url.searchParams.set('limit', String(limit))
    url.searchParams.set('offset', String(newOffset))
    return url.toString()
  }
  return {
    count: total,
    next: offset + results.length < total ? link(offset + limit) : null,
    previous: offset > 0 ? link(Math.max(0, offset - limit)) : null,
    results,
  }
}
