import type { MetaMigration } from '../migrate.js'
import { notNull, withSerialId } from './columns.js'

export const foundation: MetaMigration = {
  name: '0001-foundation',
  async up(db, dialect) {
    await db.schema
      .createTable('organizations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', notNull)
      .addColumn('plan', 'text', (c) => c.notNull().defaultTo('free'))
      .addColumn('flag_request_quota', 'bigint')
      .addColumn('created_at', 'text', notNull)
      .execute()

    await withSerialId(db.schema.createTable('projects'), dialect)
      .addColumn('uuid', 'text', (c) => c.notNull().unique())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', notNull)
      .addColumn('timezone', 'text', (c) => c.notNull().defaultTo('UTC'))
      .addColumn('api_token', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .execute()

    await withSerialId(db.schema.createTable('users'), dialect)
      .addColumn('uuid', 'text', (c) => c.notNull().unique())
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('password_hash', 'text', notNull)
      .addColumn('first_name', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('last_name', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('is_email_verified', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('pending_email', 'text')
      .addColumn('current_organization_id', 'text')
      .addColumn('current_project_id', 'integer')
      .addColumn('created_at', 'text', notNull)
      .execute()

    await db.schema
      .createTable('memberships')
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('level', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('created_at', 'text', notNull)
      .addPrimaryKeyConstraint('memberships_pk', ['organization_id', 'user_id'])
      .execute()

    await db.schema
      .createTable('personal_api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('label', 'text', notNull)
      .addColumn('secure_value', 'text', (c) => c.notNull().unique())
      .addColumn('mask_value', 'text', notNull)
      .addColumn('scopes', 'text', notNull)
      .addColumn('scoped_teams', 'text')
      .addColumn('scoped_organizations', 'text')
      .addColumn('created_at', 'text', notNull)
      .addColumn('last_used_at', 'text')
      .addColumn('last_rolled_at', 'text')
      .execute()

    await withSerialId(db.schema.createTable('activity_log'), dialect)
      .addColumn('organization_id', 'text')
      .addColumn('team_id', 'integer')
      .addColumn('user_id', 'integer')
      .addColumn('scope', 'text', notNull)
      .addColumn('item_id', 'text')
      .addColumn('activity', 'text', notNull)
      .addColumn('detail', 'text', notNull)
      .addColumn('created_at', 'text', notNull)
      .execute()
    await db.schema
      .createIndex('activity_log_team_scope')
      .on('activity_log')
      .columns(['team_id', 'scope', 'created_at'])
      .execute()
  },
}
