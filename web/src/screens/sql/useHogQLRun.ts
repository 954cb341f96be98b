// Running a HogQL query the way PostHog's SQL editor does: `POST /query/` with `async: true` starts a job, `GET
// /query/{id}/` is polled for its progress until it ends, `DELETE /query/{id}/` cancels it. A HogQL error's
// position (which the async status does not carry) is read from the query endpoint's own error body.
import { useCallback, useEffect, useRef, useState } from 'react'
import { ApiError, api, type QueryResponse } from '../../api'

export interface QueryProgress {
  rows_read: number
  bytes_read: number
  estimated_rows_total: number
  time_elapsed: number
}

interface QueryStatus {
  id: string
  complete: boolean
  error: boolean
  error_message: string | null
  error_code: string | null
  results: QueryResponse | null
  query_progress: QueryProgress | null
}

export interface RunError {
  message: string
  code: string | null
  /** offsets in the query text, when the server says where the error is */
  start: number | null
  end: number | null
}

export type RunState =
  | { phase: 'idle' }
  | { phase: 'running'; query: string; queryId: string; startedAt: number; progress: QueryProgress | null }
  | { phase: 'done'; query: string; response: QueryResponse; seconds: number }
  | { phase: 'error'; query: string; error: RunError }
  | { phase: 'cancelled'; query: string }

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => {
      clearTimeout(timer)
      reject(new DOMException('aborted', 'AbortError'))
    })
  })

/** A query id of our own, so the run can be cancelled before its first answer arrives. */
function newQueryId(): string {
  const bytes = new Uint8Array(16)
  crypto.getRandomValues(bytes)
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

interface ErrorBody {
  query_status?: QueryStatus
  extra?: { hogql_metadata?: { errors?: { message: string; start: number | null; end: number | null }[] } }
}

/** The error of a failed query, with its position when the body has one. */
function runErrorOf(error: unknown): RunError {
  if (error instanceof ApiError) {
    const body = (error.body ?? {}) as ErrorBody
    const status = body.query_status
    if (status?.error) {
      return {
        message: status.error_message ?? 'The query failed on the server.',
        code: status.error_code,
        start: null,
        end: null,
      }
    }
    const located = body.extra?.hogql_metadata?.errors?.[0]
    return { message: error.detail, code: error.code, start: located?.start ?? null, end: located?.end ?? null }
  }
  return { message: error instanceof Error ? error.message : String(error), code: null, start: null, end: null }
}

export function useHogQLRun(projectId: number) {
  const [state, setState] = useState<RunState>({ phase: 'idle' })
  const controller = useRef<AbortController | null>(null)
  const base = `/api/projects/${projectId}/query/`

  useEffect(() => () => controller.current?.abort(), [])

  const run = useCallback(
    async (query: string) => {
      controller.current?.abort()
      const own = new AbortController()
      controller.current = own
      const { signal } = own
      const queryId = newQueryId()
      const startedAt = performance.now()
      const node = { kind: 'HogQLQuery', query }
      setState({ phase: 'running', query, queryId, startedAt, progress: null })
      try {
        type Answer = Partial<QueryResponse> & { query_status?: QueryStatus }
        let answer = await api<Answer>(
          'POST',
          base,
          { query: node, async: true, refresh: 'force_async', client_query_id: queryId },
          { signal },
        )
        let delay = 150
        while (answer.query_status && !answer.query_status.complete) {
          const progress = answer.query_status.query_progress
          setState({ phase: 'running', query, queryId, startedAt, progress })
          await sleep(delay, signal)
          delay = Math.min(1000, delay * 1.5)
          answer = await api<Answer>('GET', `${base}${queryId}/`, undefined, { signal })
        }
        const response = answer.query_status?.results ?? (answer as QueryResponse)
        setState({ phase: 'done', query, response, seconds: (performance.now() - startedAt) / 1000 })
      } catch (error) {
        if (signal.aborted) return
        let failure = runErrorOf(error)
        if (failure.code === 'query_cancelled') {
          setState({ phase: 'cancelled', query })
          return
        }
        // A HogQL error fails before anything runs; the query endpoint's answer to the same text says where.
        if (failure.code?.startsWith('hogql_') && failure.start === null) {
          try {
            await api('POST', base, { query: node, refresh: 'force_blocking' }, { signal })
          } catch (located) {
            if (signal.aborted) return
            const where = runErrorOf(located)
            if (where.start !== null) failure = where
          }
        }
        setState({ phase: 'error', query, error: failure })
      }
    },
    [base],
  )

  const cancel = useCallback(async () => {
    if (state.phase !== 'running') return
    controller.current?.abort()
    try {
      await api('DELETE', `${base}${state.queryId}/`)
      setState({ phase: 'cancelled', query: state.query })
    } catch (error) {
      setState({ phase: 'error', query: state.query, error: runErrorOf(error) })
    }
  }, [state, base])

  return { state, run, cancel }
}
