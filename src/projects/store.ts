import type { Kysely, Selectable } from 'kysely'
import type { MetaDatabase, ProjectTable } from '../storage/meta/schema.js'

export type ProjectRow = Selectable<ProjectTable>

export function createProjectStore(db: Kysely<MetaDatabase>) {
  return {
    get: (id: number) => db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst(),
    getByToken: (token: string) =>
      db.selectFrom('projects').selectAll().where('api_token', '=', token).executeTakeFirst(),
    listForOrganizations: (organizationIds: string[]) =>
      organizationIds.length === 0
        ? Promise.resolve([] as ProjectRow[])
        : db.selectFrom('projects').selectAll().where('organization_id', 'in', organizationIds).orderBy('id').execute(),
    async insert(
      row: Omit<
        ProjectRow,
        'id' | 'week_start_day' | 'test_account_filters' | 'person_display_name_properties' | 'path_cleaning_filters'
      >,
    ): Promise<ProjectRow> {
      return db.insertInto('projects').values(row).returningAll().executeTakeFirstOrThrow()
    },
    async update(
      id: number,
      patch: Partial<
        Pick<
          ProjectRow,
          | 'name'
          | 'timezone'
          | 'week_start_day'
          | 'test_account_filters'
          | 'person_display_name_properties'
          | 'path_cleaning_filters'
          | 'updated_at'
        >
      >,
    ) {
      return db.updateTable('projects').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow()
    },
  }
}
export type ProjectStore = ReturnType<typeof createProjectStore>
