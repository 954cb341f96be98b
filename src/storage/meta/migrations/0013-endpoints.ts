import type { MetaMigration } from '../migrate.js'
import { notNull } from './columns.js'

/**
 * Saved endpoints (PostHog's `Endpoint`, looked up by name within a project), their versions (a query snapshot
 * each, a new one only when the query changes), and the materialization of a version: the table in the event
 * store, its schedule and its status, which every process reads and which the process holding the sync's lease
 * writes.
 */
export const endpoints: MetaMigration = {
  name: '0013-endpoints',
  async up(db) {
    await db.schema
      .createTable('endpoints')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'integer', notNull)
      .addColumn('name', 'text', notNull)
      .addColumn('derived_from_insight', 'text')
      .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('current_version', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('created_by', 'integer')
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .addColumn('last_executed_at', 'text')
      .execute()
    await db.schema.createIndex('endpoints_team_name').on('endpoints').columns(['team_id', 'name']).unique().execute()
    await db.schema
      .createTable('endpoint_versions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('endpoint_id', 'text', notNull)
      .addColumn('team_id', 'integer', notNull)
      .addColumn('version', 'integer', notNull)
      .addColumn('query', 'text', notNull)
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('cache_age_seconds', 'integer')
      .addColumn('is_materialized', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('created_by', 'integer')
      .addColumn('created_at', 'text', notNull)
      .execute()
    await db.schema
      .createIndex('endpoint_versions_endpoint_version')
      .on('endpoint_versions')
      .columns(['endpoint_id', 'version'])
      .unique()
      .execute()
    await db.schema
      .createTable('endpoint_materializations')
      .addColumn('version_id', 'text', (c) => c.primaryKey())
      .addColumn('endpoint_id', 'text', notNull)
      .addColumn('team_id', 'integer', notNull)
      // the table in the event store that holds the materialized rows
      .addColumn('table_name', 'text', notNull)
      .addColumn('sync_frequency', 'text', notNull)
      // Completed, Running, Failed (PostHog's saved-query statuses)
      .addColumn('status', 'text', notNull)
      .addColumn('last_run_at', 'text')
      .addColumn('last_materialized_at', 'text')
      .addColumn('next_run_at', 'text', notNull)
      .addColumn('last_error', 'text', (c) => c.notNull().defaultTo(''))
      // failed attempts since the last success: the retry backoff grows with them
      .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
      // what a run needs besides the rows: the variable column, the insight envelope
      .addColumn('shape', 'text')
      .execute()
    await db.schema
      .createIndex('endpoint_materializations_next_run')
      .on('endpoint_materializations')
      .columns(['next_run_at'])
      .execute()
  },
}
