import type { MetaMigration } from '../migrate.js'
import { notNull, withSerialId } from './columns.js'

/**
 * Saved insights (a query node with a name, PostHog's 8-character short id and soft delete), dashboards with
 * their filters and variables, the tiles that place an insight or a text card on a dashboard, and the text cards.
 */
export const insightsDashboards: MetaMigration = {
  name: '0010-insights-dashboards',
  async up(db, dialect) {
    await withSerialId(db.schema.createTable('insights'), dialect)
      .addColumn('team_id', 'integer', notNull)
      .addColumn('short_id', 'text', notNull)
      .addColumn('name', 'text')
      .addColumn('derived_name', 'text')
      .addColumn('description', 'text')
      .addColumn('query', 'text')
      .addColumn('filters', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('favorited', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('saved', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_by', 'integer')
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .addColumn('last_modified_at', 'text', notNull)
      .addColumn('last_modified_by', 'integer')
      .execute()
    await db.schema.createIndex('insights_team').on('insights').columns(['team_id', 'deleted']).execute()
    await db.schema.createIndex('insights_team_short_id').on('insights').columns(['team_id', 'short_id']).execute()

    await withSerialId(db.schema.createTable('dashboards'), dialect)
      .addColumn('team_id', 'integer', notNull)
      .addColumn('name', 'text')
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('pinned', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('filters', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('variables', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_by', 'integer')
      .addColumn('created_at', 'text', notNull)
      .addColumn('last_accessed_at', 'text')
      .execute()
    await db.schema.createIndex('dashboards_team').on('dashboards').columns(['team_id', 'deleted']).execute()

    await withSerialId(db.schema.createTable('dashboard_texts'), dialect)
      .addColumn('team_id', 'integer', notNull)
      .addColumn('body', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('created_by', 'integer')
      .addColumn('last_modified_at', 'text', notNull)
      .addColumn('last_modified_by', 'integer')
      .execute()

    await withSerialId(db.schema.createTable('dashboard_tiles'), dialect)
      .addColumn('team_id', 'integer', notNull)
      .addColumn('dashboard_id', 'integer', notNull)
      .addColumn('insight_id', 'integer')
      .addColumn('text_id', 'integer')
      .addColumn('layouts', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('color', 'text')
      /** null until a tile is removed (1) or put back (0), as PostHog shows it */
      .addColumn('deleted', 'integer')
      .addColumn('created_at', 'text', notNull)
      .execute()
    await db.schema.createIndex('dashboard_tiles_dashboard').on('dashboard_tiles').column('dashboard_id').execute()
    await db.schema.createIndex('dashboard_tiles_insight').on('dashboard_tiles').column('insight_id').execute()
  },
}
