import { sql } from 'kysely'
import type { MetaDialect } from '../db.js'
import type { MetaMigration } from '../migrate.js'
import { notNull } from './columns.js'

// Names sort and compare byte-wise on both dialects, so lists come back in the same order everywhere
// (PostgreSQL's default collation would otherwise follow the server's locale).
const byteOrder = (dialect: MetaDialect) => (dialect === 'postgres' ? sql`collate "C"` : sql`collate binary`)

/** Property and event definitions discovered at ingestion, and which properties were seen on which events. */
export const definitions: MetaMigration = {
  name: '0003-definitions',
  async up(db, dialect) {
    await db.schema
      .createTable('property_definitions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'integer', notNull)
      .addColumn('name', 'text', (c) => c.notNull().modifyEnd(byteOrder(dialect)))
      // 1 event, 2 person, 3 group, 4 session
      .addColumn('type', 'integer', notNull)
      // -1 for every non-group row: a plain unique constraint then does what PostHog's coalesce(…, -1) index does.
      .addColumn('group_type_index', 'integer', (c) => c.notNull().defaultTo(-1))
      .addColumn('is_numerical', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('property_type', 'text')
      .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('description', 'text')
      .addColumn('verified', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('verified_at', 'text')
      .addColumn('verified_by', 'integer')
      .addColumn('hidden', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('volume_30_day', 'bigint')
      .addColumn('query_usage_30_day', 'bigint')
      .addColumn('updated_at', 'text')
      .addColumn('updated_by', 'integer')
      .addUniqueConstraint('property_definitions_key', ['team_id', 'type', 'group_type_index', 'name'])
      .execute()

    await db.schema
      .createTable('event_definitions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'integer', notNull)
      .addColumn('name', 'text', (c) => c.notNull().modifyEnd(byteOrder(dialect)))
      .addColumn('description', 'text')
      .addColumn('tags', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('owner', 'integer')
      .addColumn('verified', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('verified_at', 'text')
      .addColumn('verified_by', 'integer')
      .addColumn('hidden', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text')
      .addColumn('created_by', 'integer')
      .addColumn('last_seen_at', 'text')
      .addColumn('updated_at', 'text')
      .addColumn('updated_by', 'integer')
      .addUniqueConstraint('event_definitions_key', ['team_id', 'name'])
      .execute()

    await db.schema
      .createTable('event_properties')
      .addColumn('team_id', 'integer', notNull)
      .addColumn('event', 'text', (c) => c.notNull().modifyEnd(byteOrder(dialect)))
      .addColumn('property', 'text', (c) => c.notNull().modifyEnd(byteOrder(dialect)))
      .addPrimaryKeyConstraint('event_properties_pk', ['team_id', 'event', 'property'])
      .execute()
    // seen_together and is_seen_on_filtered_events look pairs up by property.
    await db.schema
      .createIndex('event_properties_property')
      .on('event_properties')
      .columns(['team_id', 'property'])
      .execute()
  },
}
