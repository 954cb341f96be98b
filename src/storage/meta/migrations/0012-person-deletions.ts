import type { MetaMigration } from '../migrate.js'
import { notNull } from './columns.js'

/**
 * Person deletions, recorded with the person's removal so that the event-store side (the person's events when asked
 * for, and its copy of the person and distinct ids) runs in the background, again after a restart, until done.
 */
export const personDeletions: MetaMigration = {
  name: '0012-person-deletions',
  async up(db) {
    await db.schema
      .createTable('person_deletions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'integer', notNull)
      // null for a distinct id that had no person (events captured without a profile)
      .addColumn('person_id', 'text')
      .addColumn('distinct_ids', 'text', notNull)
      // 1: the events go too; 0: only the event store's copy of the person and its distinct ids
      .addColumn('delete_events', 'integer', notNull)
      // events ingested up to this instant are deleted; later ones belong to whoever uses the id next
      .addColumn('requested_at', 'text', notNull)
      .addColumn('requested_by', 'integer')
      .addColumn('status', 'text', notNull)
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_error', 'text')
      .addColumn('finished_at', 'text')
      .execute()
    await db.schema.createIndex('person_deletions_status').on('person_deletions').columns(['status']).execute()
    await db.schema
      .createIndex('person_deletions_team')
      .on('person_deletions')
      .columns(['team_id', 'person_id'])
      .execute()
  },
}
