/**
 * Deleting a person's events: recorded in the metadata store in the same transaction that removes the person, then
 * carried out in the background as one ClickHouse lightweight `DELETE` on the events table (a mutation on chDB and on
 * a ClickHouse server alike). Each pending deletion is claimed with a job lease, so with several processes exactly one
 * runs it; a deletion whose process stopped half-way stays pending and is run again (the statement is idempotent)
 * by the next process that polls — after a restart, at start.
 */
import crypto from 'node:crypto'
import type { Kysely, Transaction } from 'kysely'
import { type JobLeases, runClaimed } from '../jobs/leases.js'
import { eventsMutationTarget } from '../storage/events/schema.js'
import type { EventStore } from '../storage/events/types.js'

export type PersonDeletionTables = {
  person_deletions: {
    id: string
    team_id: number
    person_id: string | null
    distinct_ids: string
    delete_events: number
    requested_at: string
    requested_by: number | null
    status: 'pending' | 'done'
    attempts: number
    last_error: string | null
    finished_at: string | null
  }
}

export type PersonDeletionRow = PersonDeletionTables['person_deletions']

const LEASE_MS = 60_000
const POLL_MS = 30_000
/** Nice value of the deletion's engine threads: below capture inserts and queries. */
const DELETE_THREAD_NICE = 19

const chTime = (iso: string) => iso.replace('T', ' ').replace('Z', '')

export interface DeletionRequest {
  teamId: number
  personId: string | null
  distinctIds: string[]
  deleteEvents: boolean
  requestedBy: number | null
}

export function createPersonDeletions(deps: {
  db: Kysely<any>
  events: Pick<EventStore, 'exec' | 'cluster'>
  /** Resolves once every acknowledged capture is in the event store (so the deletion sees it). */
  flushPending: () => Promise<void>
  leases: JobLeases
  /** Writes the metadata store's current rows for these distinct ids (a new person using one) to the event store. */
  remirror: (teamId: number, distinctIds: string[]) => Promise<void>
  clock: () => Date
  onError: (err: unknown, what: string) => void
  pollMs?: number
}) {
  const db = deps.db as unknown as Kysely<PersonDeletionTables>
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  let again = false
  let closed = false

  async function carryOut(row: PersonDeletionRow, signal: AbortSignal): Promise<void> {
    // Re-read under the lease: another process may have finished it between the listing and the claim.
    const current = await db.selectFrom('person_deletions').selectAll().where('id', '=', row.id).executeTakeFirst()
    if (current?.status !== 'pending') return
    await db
      .updateTable('person_deletions')
      .set({ attempts: Number(current.attempts) + 1 })
      .where('id', '=', row.id)
      .execute()
    const distinctIds = JSON.parse(current.distinct_ids) as string[]
    const team = current.team_id
    const settings = { os_thread_priority: DELETE_THREAD_NICE }
    try {
      await deps.flushPending()
      if (distinctIds.length > 0 && Number(current.delete_events) === 1) {
        await deps.events.exec(
          `DELETE FROM ${eventsMutationTarget(deps.events.cluster)}
           WHERE team_id = {team:Int64} AND distinct_id IN {ids:Array(String)} AND created_at <= {until:DateTime64(6)}`,
          { params: { team, ids: distinctIds, until: chTime(current.requested_at) }, settings, signal },
        )
      }
      // The event store's copy of the mapping goes whole: a distinct id used again later starts a new person at
      // version 0, which must not lose against the deleted mapping's higher version.
      if (distinctIds.length > 0) {
        await deps.events.exec(
          'DELETE FROM person_distinct_ids WHERE team_id = {team:Int64} AND distinct_id IN {ids:Array(String)}',
          { params: { team, ids: distinctIds }, settings, signal },
        )
      }
      if (current.person_id) {
        await deps.events.exec('DELETE FROM persons WHERE team_id = {team:Int64} AND id = {id:UUID}', {
          params: { team, id: current.person_id },
          settings,
          signal,
        })
      }
      // A capture meanwhile may have given an id a new person: its rows, as the metadata store has them now.
      if (distinctIds.length > 0) await deps.remirror(team, distinctIds)
    } catch (err) {
      await db
        .updateTable('person_deletions')
        .set({ last_error: err instanceof Error ? err.message.slice(0, 500) : 'error' })
        .where('id', '=', row.id)
        .execute()
        .catch(() => undefined)
      throw err
    }
    if (signal.aborted) return
    await db
      .updateTable('person_deletions')
      .set({ status: 'done', finished_at: deps.clock().toISOString(), last_error: null })
      .where('id', '=', row.id)
      .where('status', '=', 'pending')
      .execute()
  }

  async function runPendingOnce(): Promise<void> {
    const pending = await db
      .selectFrom('person_deletions')
      .selectAll()
      .where('status', '=', 'pending')
      .orderBy('requested_at')
      .limit(100)
      .execute()
    for (const row of pending) {
      if (closed) return
      try {
        await runClaimed(deps.leases, `person-deletion:${row.id}`, LEASE_MS, (signal) => carryOut(row, signal))
      } catch (err) {
        // Stays pending: the next poll (here or in another process) tries again.
        deps.onError(err, `deleting the events of person deletion ${row.id}`)
      }
    }
  }

  /** Runs the pending deletions; a call while a run is under way makes it go round once more. */
  function runPending(): Promise<void> {
    if (running) {
      again = true
      return running
    }
    running = (async () => {
      do {
        again = false
        await runPendingOnce()
      } while (again && !closed)
    })()
      .catch((err) => deps.onError(err, 'person deletions'))
      .finally(() => {
        running = undefined
      })
    return running
  }

  return {
    /** Records a deletion inside the caller's transaction (the one removing the person); returns its id. */
    async record(tx: Kysely<any> | Transaction<any>, request: DeletionRequest): Promise<string> {
      const id = crypto.randomUUID()
      await (tx as Kysely<PersonDeletionTables>)
        .insertInto('person_deletions')
        .values({
          id,
          team_id: request.teamId,
          person_id: request.personId,
          distinct_ids: JSON.stringify(request.distinctIds),
          delete_events: request.deleteEvents ? 1 : 0,
          requested_at: deps.clock().toISOString(),
          requested_by: request.requestedBy,
          status: 'pending',
          attempts: 0,
          last_error: null,
          finished_at: null,
        })
        .execute()
      return id
    },

    /** Starts the work on recorded deletions soon, off the request. */
    kick(): void {
      if (closed) return
      setImmediate(() => void runPending())
    },

    runPending,

    /** Polls for pending deletions (those another process left unfinished, or this one after a restart). */
    start(): void {
      if (timer || closed) return
      void runPending()
      timer = setInterval(() => void runPending(), deps.pollMs ?? POLL_MS)
      timer.unref()
    },

    get: (teamId: number, id: string) =>
      db
        .selectFrom('person_deletions')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .executeTakeFirst(),

    list: (teamId: number) =>
      db
        .selectFrom('person_deletions')
        .selectAll()
        .where('team_id', '=', teamId)
        .orderBy('requested_at', 'desc')
        .execute(),

    /** Stops polling and waits for the deletion under way (its lease is released when it ends). */
    async close(): Promise<void> {
      closed = true
      if (timer) clearInterval(timer)
      await running
    },
  }
}

export type PersonDeletions = ReturnType<typeof createPersonDeletions>
