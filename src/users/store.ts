import type { Kysely, Selectable } from 'kysely'
import type { MetaDatabase, PersonalApiKeyTable, UserTable } from '../storage/meta/schema.js'

export type UserRow = Selectable<UserTable>
export type PersonalApiKeyRow = Selectable<PersonalApiKeyTable>

export function createUserStore(db: Kysely<MetaDatabase>) {
  return {
    get: (id: number) => db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst(),
    getByUuid: (uuid: string) => db.selectFrom('users').selectAll().where('uuid', '=', uuid).executeTakeFirst(),
    /** The first user made (on a fresh install, the demo user). */
    first: () => db.selectFrom('users').selectAll().orderBy('id').limit(1).executeTakeFirst(),
    getByEmail: (email: string) =>
      db.selectFrom('users').selectAll().where('email', '=', email.toLowerCase()).executeTakeFirst(),
    insert: (row: Omit<UserRow, 'id'>) => db.insertInto('users').values(row).returningAll().executeTakeFirstOrThrow(),
    update: (id: number, patch: Partial<Omit<UserRow, 'id' | 'uuid'>>) =>
      db.updateTable('users').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow(),
  }
}
export type UserStore = ReturnType<typeof createUserStore>

export function createPersonalApiKeyStore(db: Kysely<MetaDatabase>) {
  return {
    getBySecureValue: (secureValue: string) =>
      db.selectFrom('personal_api_keys').selectAll().where('secure_value', '=', secureValue).executeTakeFirst(),
    get: (userId: number, id: string) =>
      db
        .selectFrom('personal_api_keys')
        .selectAll()
        .where('user_id', '=', userId)
        .where('id', '=', id)
        .executeTakeFirst(),
    listForUser: (userId: number) =>
      db
        .selectFrom('personal_api_keys')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('created_at', 'desc')
        .execute(),
    countForUser: async (userId: number) => {
      const row = await db
        .selectFrom('personal_api_keys')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('user_id', '=', userId)
        .executeTakeFirstOrThrow()
      return Number(row.n)
    },
    insert: (row: PersonalApiKeyRow) =>
      db.insertInto('personal_api_keys').values(row).returningAll().executeTakeFirstOrThrow(),
    update: (id: string, patch: Partial<Omit<PersonalApiKeyRow, 'id' | 'user_id'>>) =>
      db.updateTable('personal_api_keys').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow(),
    delete: (userId: number, id: string) =>
      db.deleteFrom('personal_api_keys').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst(),
    touch: (id: string, now: string) =>
      db.updateTable('personal_api_keys').set({ last_used_at: now }).where('id', '=', id).execute(),
  }
}
export type PersonalApiKeyStore = ReturnType<typeof createPersonalApiKeyStore>
