/**
 * Leases on background work, in the metadata store, so that with several processes on one database exactly one of
 * them runs a given job (a deletion, a scheduled sync, a recalculation) and another takes over when its owner dies:
 * the owner renews its lease while it works (a heartbeat); a lease that is not renewed expires and is free again.
 *
 * A claim is one statement (insert, or take over a row whose lease has run out), so two processes never both win.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'

export type JobLeaseTables = {
  job_leases: { key: string; owner: string; expires_at: number }
}

export interface Lease {
  readonly key: string
  readonly owner: string
  /** Extends the lease by its length from now; false when it is no longer held (it expired and was taken). */
  renew(): Promise<boolean>
  /** Gives the lease up at once, so another process may claim the job without waiting for it to expire. */
  release(): Promise<void>
}

export interface JobLeases {
  /** Takes job `key` for `ttlMs` when it is free or its lease has expired; null when another owner holds it. */
  claim(key: string, ttlMs: number): Promise<Lease | null>
  /** Whether some owner holds an unexpired lease on `key`. */
  isHeld(key: string): Promise<boolean>
}

export interface JobLeaseOptions {
  /** This process's name in the table; one random id per process by default. */
  owner?: string
  now?: () => number
}

/** Job leases over the metadata store (`job_leases`, migration 0011). */
export function createJobLeases(db: Kysely<any>, options: JobLeaseOptions = {}): JobLeases {
  const typed = db as unknown as Kysely<JobLeaseTables>
  const processOwner = options.owner ?? `${process.pid}-${randomUUID()}`
  const now = options.now ?? Date.now

  return {
    async claim(key, ttlMs) {
      // Each claim gets its own owner id, so two claims of one process are told apart as well.
      const owner = `${processOwner}/${randomUUID()}`
      const at = now()
      const row = await typed
        .insertInto('job_leases')
        .values({ key, owner, expires_at: at + ttlMs })
        .onConflict((oc) =>
          oc
            .column('key')
            .doUpdateSet({ owner, expires_at: at + ttlMs })
            .where('job_leases.expires_at', '<=', at),
        )
        .returning('owner')
        .executeTakeFirst()
      if (row?.owner !== owner) return null
      return {
        key,
        owner,
        async renew() {
          const result = await typed
            .updateTable('job_leases')
            .set({ expires_at: now() + ttlMs })
            .where('key', '=', key)
            .where('owner', '=', owner)
            .executeTakeFirst()
          return Number(result.numUpdatedRows) > 0
        },
        async release() {
          await typed.deleteFrom('job_leases').where('key', '=', key).where('owner', '=', owner).execute()
        },
      }
    },

    async isHeld(key) {
      const row = await typed.selectFrom('job_leases').select('expires_at').where('key', '=', key).executeTakeFirst()
      return row !== undefined && Number(row.expires_at) > now()
    },
  }
}

/**
 * Runs `work` under a lease on `key`: claims it (returns false at once when another owner holds it), renews it
 * every third of `ttlMs` while the work runs, and releases it when the work ends, however it ends. When a renewal
 * finds the lease lost (this process stalled past the lease and another took the job over), `signal` aborts so
 * the work can stop; the work must be safe to run again from the start (idempotent), as a takeover does.
 */
export async function runClaimed(
  leases: JobLeases,
  key: string,
  ttlMs: number,
  work: (signal: AbortSignal) => Promise<void>,
): Promise<boolean> {
  const lease = await leases.claim(key, ttlMs)
  if (!lease) return false
  const controller = new AbortController()
  let renewing: Promise<void> = Promise.resolve()
  const heartbeat = setInterval(
    () => {
      renewing = lease.renew().then(
        (held) => {
          if (!held) controller.abort(new Error(`lease on ${key} lost`))
        },
        () => {
          // A failed renewal (the database briefly away) is retried on the next beat; the lease still has time.
        },
      )
    },
    Math.max(10, Math.floor(ttlMs / 3)),
  )
  heartbeat.unref()
  try {
    await work(controller.signal)
  } finally {
    clearInterval(heartbeat)
    await renewing
    if (!controller.signal.aborted) await lease.release().catch(() => {})
  }
  return true
}
