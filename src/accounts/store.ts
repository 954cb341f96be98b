import crypto from 'node:crypto'
import type { Kysely, Selectable } from 'kysely'
import type { MetaDatabase, UserTable } from '../storage/meta/schema.js'

/** The user columns the accounts migration (0009) adds. */
export interface AccountUserColumns {
  is_staff: number
  last_login: string | null
  requested_password_reset_at: string | null
  preferences: string
}

export interface SessionTable {
  id: string
  user_id: number
  state: 'active' | 'pending_2fa'
  created_at: number
  expires_at: number
  otp_setup_secret: string | null
  otp_setup_expires_at: number | null
}

export interface TotpDeviceTable {
  user_id: number
  secret_hex: string
  last_step: number
  created_at: string
}

export interface BackupCodeTable {
  user_id: number
  code_hash: string
  created_at: string
}

export interface InviteTable {
  id: string
  organization_id: string
  target_email: string
  first_name: string
  level: number
  message: string | null
  emailing_attempt_made: number
  created_by_id: number | null
  created_at: string
  updated_at: string
}

export type AccountsDatabase = Omit<MetaDatabase, 'users'> & {
  users: UserTable & AccountUserColumns
  sessions: SessionTable
  totp_devices: TotpDeviceTable
  backup_codes: BackupCodeTable
  organization_invites: InviteTable
  instance_secrets: { name: string; value: string }
}

export type AccountUserRow = Selectable<UserTable & AccountUserColumns>
export type SessionRow = Selectable<SessionTable>
export type InviteRow = Selectable<InviteTable>
export type TotpDeviceRow = Selectable<TotpDeviceTable>

/** SQL for sessions, second factors, invites and the user columns of accounts. */
export function createAccountStore(metaDb: Kysely<MetaDatabase>) {
  const db = metaDb as unknown as Kysely<AccountsDatabase>
  return {
    getUser: (id: number) => db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst(),
    getUserByUuid: (uuid: string) => db.selectFrom('users').selectAll().where('uuid', '=', uuid).executeTakeFirst(),
    getUserByEmail: (email: string) =>
      db.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirst(),
    /** Someone else already uses the address, as their e-mail or as the one they are changing to. */
    isEmailTaken: async (email: string, exceptUserId?: number) => {
      let query = db
        .selectFrom('users')
        .select('id')
        .where((eb) => eb.or([eb('email', '=', email.toLowerCase()), eb('pending_email', '=', email.toLowerCase())]))
      if (exceptUserId !== undefined) query = query.where('id', '!=', exceptUserId)
      return (await query.executeTakeFirst()) !== undefined
    },
    firstUserId: async () => (await db.selectFrom('users').select('id').orderBy('id').limit(1).executeTakeFirst())?.id,
    countUsers: async () => {
      const row = await db
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
      return Number(row.n)
    },
    insertUser: (row: Omit<AccountUserRow, 'id'>) =>
      db.insertInto('users').values(row).returningAll().executeTakeFirstOrThrow(),
    updateUser: (id: number, patch: Partial<Omit<AccountUserRow, 'id' | 'uuid'>>) =>
      db.updateTable('users').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow(),

    // Sessions
    getSession: (id: string) => db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst(),
    insertSession: (row: SessionRow) => db.insertInto('sessions').values(row).execute(),
    updateSession: (id: string, patch: Partial<Omit<SessionRow, 'id' | 'user_id'>>) =>
      db.updateTable('sessions').set(patch).where('id', '=', id).execute(),
    deleteSession: (id: string) => db.deleteFrom('sessions').where('id', '=', id).execute(),
    /** Ends every session of a user but one (after a password change, the one that changed it). */
    deleteSessionsOf: (userId: number, exceptId: string | null) => {
      let query = db.deleteFrom('sessions').where('user_id', '=', userId)
      if (exceptId) query = query.where('id', '!=', exceptId)
      return query.execute()
    },
    sweepSessions: (now: number) => db.deleteFrom('sessions').where('expires_at', '<=', now).execute(),

    // Second factors
    getTotpDevice: (userId: number) =>
      db.selectFrom('totp_devices').selectAll().where('user_id', '=', userId).executeTakeFirst(),
    saveTotpDevice: async (row: TotpDeviceRow) => {
      await db.deleteFrom('totp_devices').where('user_id', '=', row.user_id).execute()
      await db.insertInto('totp_devices').values(row).execute()
    },
    /**
     * Records `step` as used when it is later than the last used one; false when another request used it (or a
     * later one) first. One statement, so two processes never both accept the same code.
     */
    claimTotpStep: async (userId: number, step: number) => {
      const result = await db
        .updateTable('totp_devices')
        .set({ last_step: step })
        .where('user_id', '=', userId)
        .where('last_step', '<', step)
        .executeTakeFirst()
      return Number(result.numUpdatedRows) > 0
    },
    deleteSecondFactors: async (userId: number) => {
      await db.deleteFrom('totp_devices').where('user_id', '=', userId).execute()
      await db.deleteFrom('backup_codes').where('user_id', '=', userId).execute()
    },
    replaceBackupCodes: async (userId: number, hashes: string[], now: string) => {
      await db.deleteFrom('backup_codes').where('user_id', '=', userId).execute()
      if (hashes.length > 0) {
        await db
          .insertInto('backup_codes')
          .values(hashes.map((code_hash) => ({ user_id: userId, code_hash, created_at: now })))
          .execute()
      }
    },
    countBackupCodes: async (userId: number) => {
      const row = await db
        .selectFrom('backup_codes')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('user_id', '=', userId)
        .executeTakeFirstOrThrow()
      return Number(row.n)
    },
    /** Deletes the code if it is there; true only for the one request that deleted it. */
    consumeBackupCode: async (userId: number, codeHash: string) => {
      const result = await db
        .deleteFrom('backup_codes')
        .where('user_id', '=', userId)
        .where('code_hash', '=', codeHash)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },

    // Invites
    getInvite: (id: string) =>
      db.selectFrom('organization_invites').selectAll().where('id', '=', id).executeTakeFirst(),
    listInvites: (organizationId: string) =>
      db
        .selectFrom('organization_invites')
        .selectAll()
        .where('organization_id', '=', organizationId)
        .orderBy('created_at', 'desc')
        .execute(),
    insertInvite: (row: InviteRow) =>
      db.insertInto('organization_invites').values(row).returningAll().executeTakeFirstOrThrow(),
    updateInvite: (id: string, patch: Partial<Omit<InviteRow, 'id'>>) =>
      db.updateTable('organization_invites').set(patch).where('id', '=', id).execute(),
    deleteInvite: (organizationId: string, id: string) =>
      db
        .deleteFrom('organization_invites')
        .where('organization_id', '=', organizationId)
        .where('id', '=', id)
        .executeTakeFirst(),
    deleteInvitesFor: (organizationId: string, email: string) =>
      db
        .deleteFrom('organization_invites')
        .where('organization_id', '=', organizationId)
        .where('target_email', '=', email.toLowerCase())
        .execute(),

    // Members
    listMembers: (organizationId: string) =>
      db
        .selectFrom('memberships')
        .innerJoin('users', 'users.id', 'memberships.user_id')
        .selectAll('users')
        .select(['memberships.level', 'memberships.created_at as joined_at'])
        .where('memberships.organization_id', '=', organizationId)
        .orderBy('memberships.created_at')
        .orderBy('users.id')
        .execute(),
    setMemberLevel: (organizationId: string, userId: number, level: number) =>
      db
        .updateTable('memberships')
        .set({ level })
        .where('organization_id', '=', organizationId)
        .where('user_id', '=', userId)
        .execute(),
    removeMember: (organizationId: string, userId: number) =>
      db
        .deleteFrom('memberships')
        .where('organization_id', '=', organizationId)
        .where('user_id', '=', userId)
        .execute(),
    hasTotp: async (userIds: number[]) => {
      if (userIds.length === 0) return new Set<number>()
      const rows = await db.selectFrom('totp_devices').select('user_id').where('user_id', 'in', userIds).execute()
      return new Set(rows.map((r) => r.user_id))
    },

    /**
     * The instance's signing secret (for e-mail and password-reset tokens), made once and shared by every
     * process through the store.
     */
    async signingSecret(): Promise<string> {
      const existing = await db
        .selectFrom('instance_secrets')
        .select('value')
        .where('name', '=', 'signing_key')
        .executeTakeFirst()
      if (existing) return existing.value
      await db
        .insertInto('instance_secrets')
        .values({ name: 'signing_key', value: crypto.randomBytes(32).toString('hex') })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute()
      const row = await db
        .selectFrom('instance_secrets')
        .select('value')
        .where('name', '=', 'signing_key')
        .executeTakeFirstOrThrow()
      return row.value
    },
  }
}
export type AccountStore = ReturnType<typeof createAccountStore>
