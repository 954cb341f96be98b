import type { MetaMigration } from '../migrate.js'
import { notNull, withSerialId } from './columns.js'

/** Feature flags, cohorts (with static members), and the monthly /flags request count per organization. */
export const flags: MetaMigration = {
  name: '0004-flags',
  async up(db, dialect) {
    await withSerialId(db.schema.createTable('feature_flags'), dialect)
      .addColumn('team_id', 'integer', notNull)
      .addColumn('key', 'text', notNull)
      .addColumn('name', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('filters', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('ensure_experience_continuity', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('evaluation_runtime', 'text', (c) => c.notNull().defaultTo('all'))
      .addColumn('evaluation_tags', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('bucketing_identifier', 'text')
      .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('created_by', 'integer')
      .addColumn('last_modified_by', 'integer')
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .execute()
    await db.schema.createIndex('feature_flags_team_key').on('feature_flags').columns(['team_id', 'key']).execute()

    await withSerialId(db.schema.createTable('cohorts'), dialect)
      .addColumn('team_id', 'integer', notNull)
      .addColumn('name', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('filters', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('is_static', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('created_by', 'integer')
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .execute()
    await db.schema.createIndex('cohorts_team').on('cohorts').column('team_id').execute()

    // Static cohorts list distinct ids, so people who are captured later still count as members.
    await db.schema
      .createTable('cohort_static_members')
      .addColumn('team_id', 'integer', notNull)
      .addColumn('cohort_id', 'integer', notNull)
      .addColumn('distinct_id', 'text', notNull)
      .addColumn('created_at', 'text', notNull)
      .addPrimaryKeyConstraint('cohort_static_members_pk', ['cohort_id', 'distinct_id'])
      .execute()
    await db.schema
      .createIndex('cohort_static_members_distinct')
      .on('cohort_static_members')
      .columns(['team_id', 'distinct_id'])
      .execute()

    await db.schema
      .createTable('flag_request_usage')
      .addColumn('organization_id', 'text', notNull)
      .addColumn('month', 'text', notNull)
      .addColumn('count', 'bigint', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('flag_request_usage_pk', ['organization_id', 'month'])
      .execute()
  },
}
