import type { MetaMigration } from '../migrate.js'
import { notNull } from './columns.js'

/**
 * Accounts: logged-in sessions (shared by every process), TOTP devices and hashed backup codes, organization
 * invites, the instance's signing secret, and the user fields PostHog's user API reads and writes.
 */
export const accounts: MetaMigration = {
  name: '0009-accounts',
  async up(db) {
    await db.schema
      .alterTable('users')
      .addColumn('is_staff', 'integer', (c) => c.notNull().defaultTo(0))
      .execute()
    await db.schema.alterTable('users').addColumn('last_login', 'text').execute()
    await db.schema.alterTable('users').addColumn('requested_password_reset_at', 'text').execute()
    // notification_settings, theme_mode, hedgehog_config, … (PostHog's user preferences) as one JSON object.
    await db.schema
      .alterTable('users')
      .addColumn('preferences', 'text', (c) => c.notNull().defaultTo('{}'))
      .execute()

    await db.schema
      .createTable('sessions')
      // SHA-256 of the cookie value: a leaked table holds no usable session.
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      // 'active', or 'pending_2fa' between the password and the second factor.
      .addColumn('state', 'text', notNull)
      .addColumn('created_at', 'bigint', notNull)
      .addColumn('expires_at', 'bigint', notNull)
      .addColumn('otp_setup_secret', 'text')
      .addColumn('otp_setup_expires_at', 'bigint')
      .execute()
    await db.schema.createIndex('sessions_user_id').on('sessions').column('user_id').execute()
    await db.schema.createIndex('sessions_expires_at').on('sessions').column('expires_at').execute()

    await db.schema
      .createTable('totp_devices')
      .addColumn('user_id', 'integer', (c) => c.primaryKey().references('users.id'))
      .addColumn('secret_hex', 'text', notNull)
      // The last 30-second step accepted: a code is never accepted twice.
      .addColumn('last_step', 'bigint', (c) => c.notNull().defaultTo(-1))
      .addColumn('created_at', 'text', notNull)
      .execute()

    await db.schema
      .createTable('backup_codes')
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('code_hash', 'text', notNull)
      .addColumn('created_at', 'text', notNull)
      .addPrimaryKeyConstraint('backup_codes_pk', ['user_id', 'code_hash'])
      .execute()

    await db.schema
      .createTable('organization_invites')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('target_email', 'text', notNull)
      .addColumn('first_name', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('level', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('message', 'text')
      .addColumn('emailing_attempt_made', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_by_id', 'integer')
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .execute()
    await db.schema
      .createIndex('organization_invites_organization')
      .on('organization_invites')
      .column('organization_id')
      .execute()

    await db.schema
      .createTable('instance_secrets')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', notNull)
      .execute()
  },
}
