import type { MetaMigration } from '../migrate.js'
import { notNull } from './columns.js'

/**
 * Leases on background work (deletions, scheduled syncs, recalculations): one row per job key, held by one process
 * until `expires_at`; an expired lease is free for any process to take over.
 */
export const jobLeases: MetaMigration = {
  name: '0011-job-leases',
  async up(db) {
    await db.schema
      .createTable('job_leases')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('owner', 'text', notNull)
      .addColumn('expires_at', 'bigint', notNull)
      .execute()
  },
}
