// The web app's only way to the server: the public API, with the session cookie and Django's CSRF token, and
// PostHog's error body turned into an ApiError the screens can show.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly attr: string | null = null,
    readonly body: unknown = null,
  ) {
    super(detail)
  }

  get detail(): string {
    return this.message
  }
}

function cookie(name: string): string | undefined {
  for (const part of document.cookie.split(';')) {
    const [k, ...v] = part.trim().split('=')
    if (k === name) return decodeURIComponent(v.join('='))
  }
  return undefined
}

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'

/** One API call: JSON in, JSON out; any non-2xx answer throws an ApiError with PostHog's `code` and `detail`. */
export async function api<T = unknown>(
  method: Method,
  path: string,
  body?: unknown,
  init: { signal?: AbortSignal } = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (body !== undefined) headers['content-type'] = 'application/json'
  if (method !== 'GET') {
    const csrf = cookie('posthog_csrftoken')
    if (csrf) headers['x-csrftoken'] = csrf
  }
  let res: Response
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      signal: init.signal,
    })
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error
    throw new ApiError(0, 'network_error', 'The server could not be reached. Check your connection and try again.')
  }
  return readAnswer<T>(res)
}

/** A response's JSON body; a non-2xx answer throws an ApiError with PostHog's `code` and `detail`. */
export async function readAnswer<T = unknown>(res: Response): Promise<T> {
  const text = await res.text()
  let data: unknown = null
  if (text) {
    try {
      data = JSON.parse(text)
    } catch {
      data = text
    }
  }
  if (!res.ok) {
    const e = (data && typeof data === 'object' ? data : {}) as { code?: string; detail?: string; attr?: string }
    throw new ApiError(res.status, e.code ?? `http_${res.status}`, e.detail ?? res.statusText, e.attr ?? null, data)
  }
  return data as T
}

export const get = <T>(path: string, signal?: AbortSignal) => api<T>('GET', path, undefined, { signal })

/** A query string from the defined entries of an object. */
export function qs(params: Record<string, string | number | boolean | null | undefined>): string {
  const search = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') search.set(k, String(v))
  const s = search.toString()
  return s ? `?${s}` : ''
}

/** A page of a PostHog list endpoint. */
export interface Page<T> {
  count?: number
  next: string | null
  previous?: string | null
  results: T[]
}

/** `POST /api/projects/{id}/query/`: the query API, as every insight and the SQL editor use it. */
export function runQuery<T = QueryResponse>(projectId: number | string, query: unknown, signal?: AbortSignal) {
  return api<T>('POST', `/api/projects/${projectId}/query/`, { query }, { signal })
}

/**
 * The answer to this query if `early.ts` already asked for it while the app's code was loading (once; a refused
 * or failed early request is asked again the ordinary way), else a new request.
 */
export function runQueryOrTakeEarly<T = QueryResponse>(projectId: number, query: unknown, signal?: AbortSignal) {
  const early = window.__burrowEarlyQuery
  if (!early || early.projectId !== projectId || early.body !== JSON.stringify(query)) {
    return runQuery<T>(projectId, query, signal)
  }
  window.__burrowEarlyQuery = undefined
  return early.response.then(
    (res) => (res.ok ? readAnswer<T>(res) : runQuery<T>(projectId, query, signal)),
    () => runQuery<T>(projectId, query, signal),
  )
}

export interface QueryResponse {
  results: unknown
  columns?: string[]
  types?: unknown[]
  hogql?: string
  error?: string
  hasMore?: boolean
  [key: string]: unknown
}
