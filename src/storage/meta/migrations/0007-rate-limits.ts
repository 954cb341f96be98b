import type { MetaMigration } from '../migrate.js'
import { notNull } from './columns.js'

/**
 * Rate-limit state every process shares: fixed-window hit counters (one row per subject and window) and
 * leased slots for work limited by concurrency (a row per slot in use; an expired lease is free again).
 */
export const rateLimits: MetaMigration = {
  name: '0007-rate-limits',
  async up(db) {
    await db.schema
      .createTable('rate_limit_counters')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('hits', 'integer', notNull)
      .addColumn('expires_at', 'bigint', notNull)
      .execute()
    await db.schema
      .createIndex('rate_limit_counters_expires_at')
      .on('rate_limit_counters')
      .column('expires_at')
      .execute()
    await db.schema
      .createTable('rate_limit_slots')
      .addColumn('bucket', 'text', notNull)
      .addColumn('slot', 'integer', notNull)
      .addColumn('holder', 'text', notNull)
      .addColumn('expires_at', 'bigint', notNull)
      .addPrimaryKeyConstraint('rate_limit_slots_pk', ['bucket', 'slot'])
      .execute()
  },
}
