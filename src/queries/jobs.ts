/**
 * Asynchronous queries: each runs in the background under its query id and leaves a status (hogql.md §3.4
 * `QueryStatus`) that clients poll. Statuses live in the metadata store, so any process answers a poll or a
 * cancel, whichever process runs the query; they expire 10 minutes after the query ends, as PostHog's do.
 *
 * The process that runs a query owns its row: it renews the row's heartbeat every second (writing the engine's
 * progress into it), looks for cancels asked of it through another process, and writes the final status. A running
 * row whose heartbeat has stopped (its process died) is answered as failed.
 */

import crypto from 'node:crypto'
import { hostname } from 'node:os'
import type { Kysely } from 'kysely'
import type { EventStore, QueryProgress } from '../storage/events/types.js'
import { CANCELLED_DETAIL, QueryFailed } from './errors.js'

export const STATUS_TTL_MS = 600_000
/** How often an owner renews its running queries' rows (and looks for cancels). */
export const HEARTBEAT_MS = 1_000
/** A running row not renewed for this long belongs to a process that has stopped. */
export const ORPHAN_AFTER_MS = 15_000
/** Said of a query whose process stopped before it ended. */
export const ORPHANED_DETAIL = 'The query stopped: the process running it shut down. Please run it again.'

export interface QueryStatus {
  id: string
  query_async: true
  team_id: number
  insight_id: null
  dashboard_id: null
  error: boolean
  complete: boolean
  error_message: string | null
  /** the error's code (`hogql_query_error`, …) when the message is meant for the user */
  error_code: string | null
  /** what the engine read, once the query is complete */
  bytes_read: number | null
  /** the project's read budget left after this query, when a personal API key started it */
  budget_remaining_bytes: number | null
  cache_key: string | null
  /** what the run read and how long it took, once it has ended (PostHog's `QueryScanSummary`) */
  query_scan: QueryScan | null
  results: unknown
  start_time: string
  pickup_time: string | null
  end_time: string | null
  expiration_time: string | null
  task_id: string | null
  query_progress: QueryProgress | null
  labels: string[] | null
}

/**
 * PostHog's summary of a run's scan (`QueryScanSummary`), from what the engine reported for it: rows read, time
 * taken, and whether the engine stopped it at a limit (time, memory, result size). Null while the query runs and
 * for a run that never reached the engine (a HogQL error). PostHog's `status` tells how far its follow-up plan
 * analysis (an EXPLAIN of slow runs) has got; Burrow runs none, so it stays null, as PostHog's does for a run it
 * has not analysed.
 */
export interface QueryScan {
  mode: 'show'
  rows_read: number
  duration_ms: number
  status: null
  killed: boolean
}

/** Error codes of a run the engine stopped at one of its limits rather than finished. */
const ENGINE_STOPPED = new Set(['timeout', 'memory_limit_exceeded', 'too_many_rows_or_bytes'])

/** The query log columns a scan summary is made of (the log row the run wrote as it ended). */
type ScanLogTables = {
  query_log: {
    id: number
    team_id: number
    query_id: string
    clickhouse: string | null
    duration_ms: number | null
    rows_read: number | null
    created_at: string
  }
}

export type QueryStatusTables = {
  query_statuses: {
    team_id: number
    query_id: string
    owner: string
    engine_id: string
    status: string
    complete: number
    cancel_requested: number
    heartbeat_at: number
    expires_at: number | null
  }
}

interface Job {
  teamId: number
  queryId: string
  engineId: string
  controller: AbortController
  done: Promise<void>
  finish(patch: Partial<QueryStatus>): Promise<void>
  /** when the work started (ms, a monotonic clock), and the engine's last progress report for it */
  startedAt: number
  /** the clock's time at pickup (ms), from which the run's query log row is found */
  pickedUpAt: number
  lastProgress?: QueryProgress
}

/** An instant as PostHog writes it: ISO in UTC, without a fraction when it is whole seconds. */
export const isoInstant = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, 'Z')

/** What a finished background run hands back: its results, and what the engine read for them. */
export interface JobOutcome {
  results: unknown
  bytesRead?: number
  /** the read budget left once this run was debited (personal-API-key queries) */
  budgetRemaining?: number
}

/** How long a cancel waits for the engine to give up the query before answering anyway. */
const CANCEL_WAIT_MS = 5_000
const PRUNE_EVERY_MS = 60_000

export interface JobDeps {
  events: Pick<EventStore, 'cancel' | 'progress'>
  db: Kysely<any>
  clock: () => Date
  /** Told of store failures in the background (heartbeats), which never fail a query. */
  onError?: (error: unknown, what: string) => void
  /** This process's name (INSTANCE_ID), the start of its owner id in the statuses table. */
  instanceId?: string
}

export function createQueryJobs(deps: JobDeps) {
  const db = deps.db as unknown as Kysely<QueryStatusTables>
  const owner = `${deps.instanceId ?? hostname()}-${process.pid}-${crypto.randomUUID().slice(0, 8)}`
  /** The jobs this process runs, by `team:query`. */
  const local = new Map<string, Job>()
  const keyOf = (teamId: number, queryId: string) => `${teamId}:${queryId}`
  const now = () => deps.clock().getTime()
  const report = (what: string) => (error: unknown) => deps.onError?.(error, what)
  let lastPrune = 0

  const row = (teamId: number, queryId: string) =>
    db
      .selectFrom('query_statuses')
      .selectAll()
      .where('team_id', '=', teamId)
      .where('query_id', '=', queryId)
      .executeTakeFirst()

  async function prune() {
    const at = now()
    if (at - lastPrune < PRUNE_EVERY_MS) return
    lastPrune = at
    await db.deleteFrom('query_statuses').where('expires_at', '<', at).execute()
  }

  /** Renews this process's running rows with their progress, and stops the ones another process cancelled. */
  async function beat() {
    if (local.size === 0) return
    for (const job of local.values()) {
      const progress = await deps.events.progress(job.engineId).catch(() => undefined)
      if (progress) job.lastProgress = progress
      const current = await row(job.teamId, job.queryId)
      if (!current || current.owner !== owner || current.complete) continue
      if (current.cancel_requested) {
        void cancelLocal(job).catch(report('query cancel'))
        continue
      }
      const status = JSON.parse(current.status) as QueryStatus
      if (progress) status.query_progress = progress
      await db
        .updateTable('query_statuses')
        .set({ heartbeat_at: now(), status: JSON.stringify(status) })
        .where('team_id', '=', job.teamId)
        .where('query_id', '=', job.queryId)
        .where('owner', '=', owner)
        .where('complete', '=', 0)
        .execute()
    }
  }
  let beating = false
  const heartbeat = setInterval(() => {
    if (beating) return
    beating = true
    beat()
      .catch(report('query heartbeat'))
      .finally(() => {
        beating = false
      })
  }, HEARTBEAT_MS)
  heartbeat.unref()

  async function cancelLocal(job: Job) {
    job.controller.abort()
    await deps.events.cancel(job.engineId).catch(() => false)
    let timer: NodeJS.Timeout | undefined
    await Promise.race([job.done, new Promise((resolve) => (timer = setTimeout(resolve, CANCEL_WAIT_MS)))])
    clearTimeout(timer)
    const query_scan = await scanOf(job, false).catch(() => null)
    await job.finish({ error: true, error_message: CANCELLED_DETAIL, error_code: 'query_cancelled', query_scan })
  }

  /**
   * The scan summary of a job that has ended: the rows and time its query log row recorded (written as the run
   * ended), else the engine's last progress report and the time since pickup (a run stopped before it logged).
   */
  async function scanOf(job: Job, killed: boolean): Promise<QueryScan | null> {
    const logged = await (deps.db as unknown as Kysely<ScanLogTables>)
      .selectFrom('query_log')
      .select(['clickhouse', 'duration_ms', 'rows_read'])
      .where('team_id', '=', job.teamId)
      .where('query_id', '=', job.queryId)
      .where('created_at', '>=', new Date(job.pickedUpAt).toISOString())
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst()
    const rows = Math.max(Number(logged?.rows_read ?? 0), job.lastProgress?.rows_read ?? 0)
    // A run that never reached the engine (refused by the HogQL compiler) scanned nothing to summarise.
    if (!killed && rows === 0 && !logged?.clickhouse && !job.lastProgress) return null
    const duration = logged?.duration_ms ?? performance.now() - job.startedAt
    return { mode: 'show', rows_read: rows, duration_ms: Math.round(Number(duration)), status: null, killed }
  }

  /**
   * Writes a query's final status (the patch, `complete`, end and expiry) to its row, when the row still is as
   * `still` says (this owner's; or not renewed since `heartbeat_at`, for an orphan). Returns the status.
   */
  async function complete(
    teamId: number,
    queryId: string,
    status: QueryStatus,
    patch: Partial<QueryStatus>,
    still: { owner: string } | { heartbeatAt: number },
  ): Promise<QueryStatus> {
    const end = now()
    Object.assign(status, patch, {
      complete: true,
      end_time: isoInstant(end),
      expiration_time: isoInstant(end + STATUS_TTL_MS),
    })
    let update = db
      .updateTable('query_statuses')
      .set({ status: JSON.stringify(status), complete: 1, expires_at: end + STATUS_TTL_MS })
      .where('team_id', '=', teamId)
      .where('query_id', '=', queryId)
    update =
      'owner' in still
        ? update.where('owner', '=', still.owner)
        : update.where('complete', '=', 0).where('heartbeat_at', '=', still.heartbeatAt)
    await update.execute()
    return status
  }

  return {
    /**
     * Starts `run` in the background. A query id that is still running (on any process) keeps its job: PostHog
     * returns the existing status rather than starting the same query twice.
     */
    async start(
      teamId: number,
      queryId: string,
      engineId: string,
      run: (signal: AbortSignal) => Promise<JobOutcome>,
    ): Promise<QueryStatus> {
      await prune().catch(report('query status prune'))
      const at = now()
      const iso = isoInstant(at)
      const status: QueryStatus = {
        id: queryId,
        query_async: true,
        team_id: teamId,
        insight_id: null,
        dashboard_id: null,
        error: false,
        complete: false,
        error_message: null,
        error_code: null,
        bytes_read: null,
        budget_remaining_bytes: null,
        cache_key: null,
        query_scan: null,
        results: null,
        start_time: iso,
        // set when the work starts, as PostHog sets it when a worker picks the task up
        pickup_time: null,
        end_time: null,
        expiration_time: null,
        task_id: queryId,
        query_progress: null,
        labels: null,
      }
      // One statement: take the id when it is free, finished, or its owner stopped; else keep the running one.
      const taken = await db
        .insertInto('query_statuses')
        .values({
          team_id: teamId,
          query_id: queryId,
          owner,
          engine_id: engineId,
          status: JSON.stringify(status),
          complete: 0,
          cancel_requested: 0,
          heartbeat_at: at,
          expires_at: null,
        })
        .onConflict((oc) =>
          oc
            .columns(['team_id', 'query_id'])
            .doUpdateSet({
              owner,
              engine_id: engineId,
              status: JSON.stringify(status),
              complete: 0,
              cancel_requested: 0,
              heartbeat_at: at,
              expires_at: null,
            })
            .where((eb) =>
              eb.or([
                eb('query_statuses.complete', '=', 1),
                eb('query_statuses.heartbeat_at', '<', at - ORPHAN_AFTER_MS),
              ]),
            ),
        )
        .returning('owner')
        .executeTakeFirst()
      if (taken?.owner !== owner) {
        const running = await row(teamId, queryId)
        if (running) return JSON.parse(running.status) as QueryStatus
      }

      const controller = new AbortController()
      let finished = false
      const finish = async (patch: Partial<QueryStatus>) => {
        if (finished) return
        finished = true
        await complete(teamId, queryId, status, patch, { owner })
      }
      const key = keyOf(teamId, queryId)
      const job: Job = {
        teamId,
        queryId,
        engineId,
        controller,
        finish,
        done: Promise.resolve(),
        startedAt: performance.now(),
        pickedUpAt: at,
      }
      job.done = (async () => {
        // Let the caller see the status before the work starts.
        await Promise.resolve()
        try {
          job.pickedUpAt = now()
          job.startedAt = performance.now()
          status.pickup_time = isoInstant(job.pickedUpAt)
          await db
            .updateTable('query_statuses')
            .set({ status: JSON.stringify(status) })
            .where('team_id', '=', teamId)
            .where('query_id', '=', queryId)
            .where('owner', '=', owner)
            .where('complete', '=', 0)
            .execute()
          const outcome = await run(controller.signal)
          const query_scan = await scanOf(job, false).catch(() => null)
          if (controller.signal.aborted) {
            await finish({ error: true, error_message: CANCELLED_DETAIL, error_code: 'query_cancelled', query_scan })
          } else {
            await finish({
              results: outcome.results,
              bytes_read: outcome.bytesRead ?? null,
              budget_remaining_bytes: outcome.budgetRemaining ?? null,
              query_scan,
            })
          }
        } catch (error) {
          const userFacing = error instanceof QueryFailed && error.isUserFacing
          const message = controller.signal.aborted ? CANCELLED_DETAIL : userFacing ? error.detail : null
          const code = controller.signal.aborted ? 'query_cancelled' : userFacing ? error.code : null
          // A run the engine stopped at a limit has no results; its summary says so (PostHog's `killed`).
          const killed = !controller.signal.aborted && error instanceof QueryFailed && ENGINE_STOPPED.has(error.code)
          const query_scan = await scanOf(job, killed).catch(() => null)
          await finish({ error: true, error_message: message, error_code: code, query_scan }).catch(
            report('query status'),
          )
        } finally {
          if (local.get(key) === job) local.delete(key)
        }
      })()
      local.set(key, job)
      return { ...status }
    },

    /** The status of a query, with the engine's progress while it runs; undefined when unknown or expired. */
    async get(teamId: number, queryId: string): Promise<QueryStatus | undefined> {
      const found = await row(teamId, queryId)
      if (!found) return undefined
      if (found.expires_at !== null && Number(found.expires_at) < now()) return undefined
      const status = JSON.parse(found.status) as QueryStatus
      if (found.complete) return status
      const job = local.get(keyOf(teamId, queryId))
      if (job && found.owner === owner) {
        const progress = await deps.events.progress(job.engineId).catch(() => undefined)
        if (progress) {
          job.lastProgress = progress
          status.query_progress = progress
        }
        return status
      }
      if (Number(found.heartbeat_at) < now() - ORPHAN_AFTER_MS) {
        // Its process stopped renewing it: closed as failed, so pollers stop waiting.
        const patch = { error: true, error_message: ORPHANED_DETAIL }
        return complete(teamId, queryId, status, patch, { heartbeatAt: Number(found.heartbeat_at) })
      }
      return status
    },

    /**
     * Stops a running query: here when this process runs it, else by asking its owner (through the store) and
     * the engine (a shared server finds the query by id). Says whether the query was still running (`cancelled`)
     * or had ended (`complete`); false when this project has no such query.
     */
    async cancel(teamId: number, queryId: string): Promise<'cancelled' | 'complete' | false> {
      const job = local.get(keyOf(teamId, queryId))
      if (job) {
        await cancelLocal(job)
        return 'cancelled'
      }
      const found = await row(teamId, queryId)
      if (!found) return false
      if (found.complete) return 'complete'
      await db
        .updateTable('query_statuses')
        .set({ cancel_requested: 1 })
        .where('team_id', '=', teamId)
        .where('query_id', '=', queryId)
        .where('complete', '=', 0)
        .execute()
      await deps.events.cancel(found.engine_id).catch(() => false)
      // The owner sees the request on its next heartbeat and writes the cancelled status.
      const until = Date.now() + CANCEL_WAIT_MS
      while (Date.now() < until) {
        const current = await row(teamId, queryId)
        if (!current || current.complete) return 'cancelled'
        if (Number(current.heartbeat_at) < now() - ORPHAN_AFTER_MS) break
        await new Promise((resolve) => setTimeout(resolve, HEARTBEAT_MS / 4))
      }
      return 'cancelled'
    },

    /** Waits for a job this process runs to end (for shutdown and tests). */
    async settled(teamId: number, queryId: string): Promise<void> {
      await local.get(keyOf(teamId, queryId))?.done
    },

    /** Stops the heartbeat (the app's close); running jobs are the engine's to stop. */
    close(): void {
      clearInterval(heartbeat)
    },
  }
}

export type QueryJobs = ReturnType<typeof createQueryJobs>
