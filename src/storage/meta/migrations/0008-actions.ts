import type { MetaMigration } from '../migrate.js'
import { notNull, withSerialId } from './columns.js'

/**
 * Actions (saved ORs of event steps, used by insights and `matchesAction()`), and the project settings insights
 * read: the first day of the week (0 Sunday, 1 Monday) and the filters that mark test accounts.
 */
export const actions: MetaMigration = {
  name: '0008-actions',
  async up(db, dialect) {
    await withSerialId(db.schema.createTable('actions'), dialect)
      .addColumn('team_id', 'integer', notNull)
      .addColumn('name', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('steps', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('post_to_slack', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('slack_message_format', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('pinned_at', 'text')
      .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_by', 'integer')
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .execute()
    await db.schema.createIndex('actions_team').on('actions').column('team_id').execute()
    await db.schema
      .alterTable('projects')
      .addColumn('week_start_day', 'integer', (c) => c.notNull().defaultTo(0))
      .execute()
    await db.schema
      .alterTable('projects')
      .addColumn('test_account_filters', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute()
  },
}
