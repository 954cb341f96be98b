import { Type } from 'typebox'

export const PaginationQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
})

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
