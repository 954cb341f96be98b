import type { MetaMigration } from '../migrate.js'
import { notNull } from './columns.js'

/** Per-organization, per-month event counts: billable events and historical imports apart. */
export const ingest: MetaMigration = {
  name: '0006-ingest',
  async up(db) {
    await db.schema
      .createTable('usage_events')
      .addColumn('organization_id', 'text', notNull)
      .addColumn('month', 'text', notNull)
      .addColumn('billable_events', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('historical_events', 'bigint', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('usage_events_pk', ['organization_id', 'month'])
      .execute()
  },
}
