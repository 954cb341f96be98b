import type { MetaMigration } from '../migrate.js'
import { notNull } from './columns.js'

/** Persons and groups: the source of truth lives here; the event store holds a mirror for queries. */
export const persons: MetaMigration = {
  name: '0002-persons',
  async up(db) {
    await db.schema
      .createTable('persons')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'integer', notNull)
      .addColumn('properties', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('is_identified', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', notNull)
      .execute()
    await db.schema.createIndex('persons_team').on('persons').columns(['team_id', 'created_at']).execute()

    await db.schema
      .createTable('person_distinct_ids')
      .addColumn('team_id', 'integer', notNull)
      .addColumn('distinct_id', 'text', notNull)
      .addColumn('person_id', 'text', (c) => c.notNull().references('persons.id'))
      .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('person_distinct_ids_pk', ['team_id', 'distinct_id'])
      .execute()
    await db.schema.createIndex('person_distinct_ids_person').on('person_distinct_ids').column('person_id').execute()

    await db.schema
      .createTable('group_type_mappings')
      .addColumn('team_id', 'integer', notNull)
      .addColumn('group_type', 'text', notNull)
      .addColumn('group_type_index', 'integer', notNull)
      .addColumn('name_singular', 'text')
      .addColumn('name_plural', 'text')
      .addPrimaryKeyConstraint('group_type_mappings_pk', ['team_id', 'group_type'])
      .addUniqueConstraint('group_type_mappings_index', ['team_id', 'group_type_index'])
      .execute()

    await db.schema
      .createTable('groups')
      .addColumn('team_id', 'integer', notNull)
      .addColumn('group_type_index', 'integer', notNull)
      .addColumn('group_key', 'text', notNull)
      .addColumn('properties', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', notNull)
      .addPrimaryKeyConstraint('groups_pk', ['team_id', 'group_type_index', 'group_key'])
      .execute()

    // Experience continuity: the distinct id a person's flag hash is pinned to, per flag.
    await db.schema
      .createTable('feature_flag_hash_key_overrides')
      .addColumn('team_id', 'integer', notNull)
      .addColumn('person_id', 'text', notNull)
      .addColumn('feature_flag_key', 'text', notNull)
      .addColumn('hash_key', 'text', notNull)
      .addPrimaryKeyConstraint('ff_hash_key_overrides_pk', ['team_id', 'person_id', 'feature_flag_key'])
      .execute()
  },
}
