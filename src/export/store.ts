/** The metadata store's side of an export: a project's persons with their distinct ids, a page at a time. */
import type { Kysely } from 'kysely'
import type { MetaDatabase } from '../storage/meta/schema.js'

export interface PersonExportRow {
  id: string
  created_at: string
  properties: string
  is_identified: number
  version: number
  distinct_id: string
}

export function createExportStore(db: Kysely<MetaDatabase>) {
  return {
    /**
     * Persons created in [after, before), one row per distinct id, by (created_at, person id, distinct id), from
     * just past `cursor` (the last row of the page before).
     */
    async personPage(
      teamId: number,
      range: { after: string; before: string },
      cursor: { createdAt: string; id: string; distinctId: string } | undefined,
      limit: number,
    ): Promise<PersonExportRow[]> {
      let query = db
        .selectFrom('persons')
        .innerJoin('person_distinct_ids', (join) =>
          join
            .onRef('person_distinct_ids.person_id', '=', 'persons.id')
            .onRef('person_distinct_ids.team_id', '=', 'persons.team_id'),
        )
        .select([
          'persons.id',
          'persons.created_at',
          'persons.properties',
          'persons.is_identified',
          'persons.version',
          'person_distinct_ids.distinct_id',
        ])
        .where('persons.team_id', '=', teamId)
        .where('persons.created_at', '>=', range.after)
        .where('persons.created_at', '<', range.before)
      if (cursor) {
        const { createdAt, id, distinctId } = cursor
        query = query.where((eb) =>
          eb.or([
            eb('persons.created_at', '>', createdAt),
            eb.and([eb('persons.created_at', '=', createdAt), eb('persons.id', '>', id)]),
            eb.and([
              eb('persons.created_at', '=', createdAt),
              eb('persons.id', '=', id),
              eb('person_distinct_ids.distinct_id', '>', distinctId),
            ]),
          ]),
        )
      }
      return query
        .orderBy('persons.created_at')
        .orderBy('persons.id')
        .orderBy('person_distinct_ids.distinct_id')
        .limit(limit)
        .execute()
    },
  }
}

export type ExportStore = ReturnType<typeof createExportStore>
