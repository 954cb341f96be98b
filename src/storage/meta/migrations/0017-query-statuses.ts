import type { MetaMigration } from '../migrate.js'
import { notNull } from './columns.js'

/**
 * Asynchronous query statuses, shared by every process: any process answers a status poll or a cancel for a
 * query another one runs. The owner renews `heartbeat_at` while the query runs and writes the final status.
 */
export const queryStatuses: MetaMigration = {
  name: '0017-query-statuses',
  async up(db) {
    await db.schema
      .createTable('query_statuses')
      .addColumn('team_id', 'bigint', notNull)
      .addColumn('query_id', 'text', notNull)
      .addColumn('owner', 'text', notNull)
      .addColumn('engine_id', 'text', notNull)
      .addColumn('status', 'text', notNull)
      .addColumn('complete', 'integer', notNull)
      .addColumn('cancel_requested', 'integer', notNull)
      .addColumn('heartbeat_at', 'bigint', notNull)
      .addColumn('expires_at', 'bigint')
      .addPrimaryKeyConstraint('query_statuses_pk', ['team_id', 'query_id'])
      .execute()
    await db.schema.createIndex('query_statuses_owner').on('query_statuses').columns(['owner', 'complete']).execute()
    await db.schema.createIndex('query_statuses_expires_at').on('query_statuses').column('expires_at').execute()
  },
}
