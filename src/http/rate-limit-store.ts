import type { Kysely } from 'kysely'

export type RateLimitTables = {
  rate_limit_counters: { key: string; hits: number; expires_at: number }
  rate_limit_slots: { bucket: string; slot: number; holder: string; expires_at: number }
}

/** Shared rate-limit state in the metadata store: every process counting against the same rows. */
export function createRateLimitStore(db: Kysely<any>) {
  const typed = db as unknown as Kysely<RateLimitTables>
  return {
    /** Adds one hit to a window's counter and returns the window's total, this hit included. */
    async hit(key: string, expiresAt: number): Promise<number> {
      const row = await typed
        .insertInto('rate_limit_counters')
        .values({ key, hits: 1, expires_at: expiresAt })
        .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ hits: eb('rate_limit_counters.hits', '+', 1) })))
        .returning('hits')
        .executeTakeFirstOrThrow()
      return Number(row.hits)
    },

    /** Adds `amount` to a window's counter (the query read budget counts KiB this way); returns the new total. */
    async add(key: string, amount: number, expiresAt: number): Promise<number> {
      const row = await typed
        .insertInto('rate_limit_counters')
        .values({ key, hits: amount, expires_at: expiresAt })
        .onConflict((oc) =>
          oc.column('key').doUpdateSet((eb) => ({ hits: eb('rate_limit_counters.hits', '+', amount) })),
        )
        .returning('hits')
        .executeTakeFirstOrThrow()
      return Number(row.hits)
    },

    /** A window's total so far (0 when nothing was counted). */
    async hits(key: string): Promise<number> {
      const row = await typed.selectFrom('rate_limit_counters').select('hits').where('key', '=', key).executeTakeFirst()
      return row ? Number(row.hits) : 0
    },

    /**
     * Takes slot `slot` of a bucket for `holder` until `expiresAt`, when it is free or its lease has run out;
     * one statement, so two processes never both get it.
     */
    async claimSlot(bucket: string, slot: number, holder: string, now: number, expiresAt: number): Promise<boolean> {
      const row = await typed
        .insertInto('rate_limit_slots')
        .values({ bucket, slot, holder, expires_at: expiresAt })
        .onConflict((oc) =>
          oc
            .columns(['bucket', 'slot'])
            .doUpdateSet({ holder, expires_at: expiresAt })
            .where('rate_limit_slots.expires_at', '<=', now),
        )
        .returning('holder')
        .executeTakeFirst()
      return row?.holder === holder
    },

    /** Extends a held slot's lease; false when it is no longer this holder's. */
    async renewSlot(bucket: string, slot: number, holder: string, expiresAt: number): Promise<boolean> {
      const result = await typed
        .updateTable('rate_limit_slots')
        .set({ expires_at: expiresAt })
        .where('bucket', '=', bucket)
        .where('slot', '=', slot)
        .where('holder', '=', holder)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },

    async releaseSlot(bucket: string, slot: number, holder: string): Promise<void> {
      await typed
        .deleteFrom('rate_limit_slots')
        .where('bucket', '=', bucket)
        .where('slot', '=', slot)
        .where('holder', '=', holder)
        .execute()
    },

    /** Drops counters of past windows and leases that ran out. */
    async sweep(now: number): Promise<void> {
      await typed.deleteFrom('rate_limit_counters').where('expires_at', '<=', now).execute()
      await typed.deleteFrom('rate_limit_slots').where('expires_at', '<=', now).execute()
    },
  }
}
export type RateLimitStore = ReturnType<typeof createRateLimitStore>
