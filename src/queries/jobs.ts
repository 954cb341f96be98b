/**
 * Asynchronous queries: each runs in the background under its query id and leaves a status (hogql.md §3.4
 * `QueryStatus`) that clients poll. Statuses live in process memory and expire 10 minutes after the query ends,
 * as PostHog's do.
 */
import type { EventStore, QueryProgress } from '../storage/events/types.js'
import { CANCELLED_DETAIL, QueryFailed } from './errors.js'

export const STATUS_TTL_MS = 600_000

export interface QueryStatus {
  id: string
  query_async: true
  team_id: number
  insight_id: null
  dashboard_id: null
  error: boolean
  complete: boolean
  error_message: string | null
  results: unknown
  start_time: string
  pickup_time: string | null
  end_time: string | null
  expiration_time: string | null
  task_id: string | null
  query_progress: QueryProgress | null
  labels: string[] | null
}

interface Job {
  status: QueryStatus
  engineId: string
  controller: AbortController
  done: Promise<void>
  finish(patch: Partial<QueryStatus>): void
}

/** How long a cancel waits for the engine to give up the query before answering anyway. */
const CANCEL_WAIT_MS = 5_000

export interface JobDeps {
  events: Pick<EventStore, 'cancel' | 'progress'>
  clock: () => Date
}

export function createQueryJobs(deps: JobDeps) {
  const jobs = new Map<string, Job>()
  const keyOf = (teamId: number, queryId: string) => `${teamId}:${queryId}`

  function prune() {
    const now = deps.clock().getTime()
    for (const [key, job] of jobs) {
      const expires = job.status.expiration_time
      if (expires && Date.parse(expires) < now) jobs.delete(key)
    }
  }

  return {
    /**
     * Starts `run` in the background. A query id that is still running keeps its job (PostHog returns the
     * existing status rather than starting the same query twice).
     */
    start(
      teamId: number,
      queryId: string,
      engineId: string,
      run: (signal: AbortSignal) => Promise<unknown>,
    ): QueryStatus {
      prune()
      const key = keyOf(teamId, queryId)
      const existing = jobs.get(key)
      if (existing && !existing.status.complete) return existing.status
      const now = deps.clock().toISOString()
      const status: QueryStatus = {
        id: queryId,
        query_async: true,
        team_id: teamId,
        insight_id: null,
        dashboard_id: null,
        error: false,
        complete: false,
        error_message: null,
        results: null,
        start_time: now,
        pickup_time: now,
        end_time: null,
        expiration_time: null,
        task_id: queryId,
        query_progress: null,
        labels: null,
      }
      const controller = new AbortController()
      const finish = (patch: Partial<QueryStatus>) => {
        if (status.complete) return
        const end = deps.clock()
        Object.assign(status, patch, {
          complete: true,
          end_time: end.toISOString(),
          expiration_time: new Date(end.getTime() + STATUS_TTL_MS).toISOString(),
        })
      }
      const done = (async () => {
        // Let the caller see the status before the work starts.
        await Promise.resolve()
        try {
          const results = await run(controller.signal)
          if (controller.signal.aborted) finish({ error: true, error_message: CANCELLED_DETAIL })
          else finish({ results })
        } catch (error) {
          const message = controller.signal.aborted
            ? CANCELLED_DETAIL
            : error instanceof QueryFailed && error.isUserFacing
              ? error.detail
              : null
          finish({ error: true, error_message: message })
        }
      })()
      jobs.set(key, { status, engineId, controller, done, finish })
      return status
    },

    /** The status of a query, with the engine's progress while it runs; undefined when unknown or expired. */
    async get(teamId: number, queryId: string): Promise<QueryStatus | undefined> {
      prune()
      const job = jobs.get(keyOf(teamId, queryId))
      if (!job) return undefined
      if (!job.status.complete) {
        const progress = await deps.events.progress(job.engineId).catch(() => undefined)
        if (progress) job.status.query_progress = progress
      }
      return job.status
    },

    /** Stops a running query in the engine; false when this project has no such query. */
    async cancel(teamId: number, queryId: string): Promise<boolean> {
      const job = jobs.get(keyOf(teamId, queryId))
      if (!job) return false
      if (job.status.complete) return true
      job.controller.abort()
      await deps.events.cancel(job.engineId).catch(() => false)
      let timer: NodeJS.Timeout | undefined
      await Promise.race([job.done, new Promise((resolve) => (timer = setTimeout(resolve, CANCEL_WAIT_MS)))])
      clearTimeout(timer)
      job.finish({ error: true, error_message: CANCELLED_DETAIL })
      return true
    },

    /** Waits for a job to end (for shutdown and tests). */
    async settled(teamId: number, queryId: string): Promise<void> {
      await jobs.get(keyOf(teamId, queryId))?.done
    },
  }
}

export type QueryJobs = ReturnType<typeof createQueryJobs>
