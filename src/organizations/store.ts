import type { Kysely, Selectable } from 'kysely'
import type { MetaDatabase, OrganizationTable } from '../storage/meta/schema.js'

export type OrganizationRow = Selectable<OrganizationTable>

export function createOrganizationStore(db: Kysely<MetaDatabase>) {
  return {
    get: (id: string) => db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst(),
    insert: (row: OrganizationRow) =>
      db.insertInto('organizations').values(row).returningAll().executeTakeFirstOrThrow(),
    update: (id: string, patch: Partial<Omit<OrganizationRow, 'id'>>) =>
      db.updateTable('organizations').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow(),
    addMember: (organizationId: string, userId: number, level: number, now: string) =>
      db
        .insertInto('memberships')
        .values({ organization_id: organizationId, user_id: userId, level, created_at: now })
        .execute(),
    memberships: (userId: number) =>
      db.selectFrom('memberships').select(['organization_id', 'level']).where('user_id', '=', userId).execute(),
    listForUser: (userId: number) =>
      db
        .selectFrom('organizations')
        .innerJoin('memberships', 'memberships.organization_id', 'organizations.id')
        .selectAll('organizations')
        .select('memberships.level')
        .where('memberships.user_id', '=', userId)
        .orderBy('organizations.created_at')
        .execute(),
  }
}
export type OrganizationStore = ReturnType<typeof createOrganizationStore>
