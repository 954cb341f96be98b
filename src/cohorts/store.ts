import type { Generated, Kysely, Selectable } from 'kysely'
import type { MetaDatabase } from '../storage/meta/schema.js'

export type CohortTable = {
  id: Generated<number>
  team_id: number
  name: string
  description: string
  /** JSON text of `{properties: {type, values}}`. */
  filters: string
  is_static: number
  deleted: number
  version: number
  created_by: number | null
  created_at: string
  updated_at: string
}

export type CohortStaticMemberTable = {
  team_id: number
  cohort_id: number
  distinct_id: string
  created_at: string
}

export type CohortTables = {
  cohorts: CohortTable
  cohort_static_members: CohortStaticMemberTable
  person_distinct_ids: MetaDatabase['person_distinct_ids']
}

export type CohortRow = Selectable<CohortTable>
export type NewCohortRow = Omit<CohortRow, 'id'>

const INSERT_CHUNK = 500

/** Cohort rows and static cohort memberships. */
export function createCohortStore(meta: Kysely<MetaDatabase>) {
  const db = meta.withTables<CohortTables>()
  const live = (teamId: number) => db.selectFrom('cohorts').where('team_id', '=', teamId).where('deleted', '=', 0)

  return {
    async list(teamId: number, limit: number, offset: number): Promise<{ total: number; rows: CohortRow[] }> {
      const [counted, rows] = await Promise.all([
        live(teamId)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow(),
        live(teamId).selectAll().orderBy('id', 'desc').limit(limit).offset(offset).execute(),
      ])
      return { total: Number(counted.n), rows }
    },
    /** Every cohort of a team, deleted ones included (a deleted cohort still referenced by a flag fails it). */
    allForTeam: (teamId: number) =>
      db.selectFrom('cohorts').selectAll().where('team_id', '=', teamId).orderBy('id').execute(),
    get: (teamId: number, id: number) =>
      db.selectFrom('cohorts').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    insert: (row: NewCohortRow) => db.insertInto('cohorts').values(row).returningAll().executeTakeFirstOrThrow(),
    update: (teamId: number, id: number, patch: Partial<NewCohortRow>) =>
      db
        .updateTable('cohorts')
        .set(patch)
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow(),

    /** Adds distinct ids to a static cohort (existing ones are kept); returns how many were new. */
    async addMembers(teamId: number, cohortId: number, distinctIds: string[], now: string): Promise<number> {
      let added = 0
      for (let i = 0; i < distinctIds.length; i += INSERT_CHUNK) {
        const chunk = distinctIds.slice(i, i + INSERT_CHUNK)
        const result = await db
          .insertInto('cohort_static_members')
          .values(chunk.map((distinct_id) => ({ team_id: teamId, cohort_id: cohortId, distinct_id, created_at: now })))
          .onConflict((oc) => oc.doNothing())
          .executeTakeFirst()
        added += Number(result.numInsertedOrUpdatedRows ?? 0)
      }
      return added
    },
    removeMembers: (cohortId: number, distinctIds: string[]) =>
      db
        .deleteFrom('cohort_static_members')
        .where('cohort_id', '=', cohortId)
        .where('distinct_id', 'in', distinctIds)
        .execute(),
    memberCount: async (cohortId: number): Promise<number> => {
      const row = await db
        .selectFrom('cohort_static_members')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('cohort_id', '=', cohortId)
        .executeTakeFirstOrThrow()
      return Number(row.n)
    },
    members: (cohortId: number, limit: number, offset: number) =>
      db
        .selectFrom('cohort_static_members')
        .select('distinct_id')
        .where('cohort_id', '=', cohortId)
        .orderBy('distinct_id')
        .limit(limit)
        .offset(offset)
        .execute()
        .then((rows) => rows.map((r) => r.distinct_id)),
    /**
     * Which of the given static cohorts list the person: any of the person's distinct ids counts, so a member
     * added by an anonymous id stays a member after identify.
     */
    staticMemberships: async (teamId: number, personId: string, cohortIds: number[]): Promise<number[]> => {
      if (cohortIds.length === 0) return []
      const rows = await db
        .selectFrom('cohort_static_members as m')
        .innerJoin('person_distinct_ids as p', (join) =>
          join.onRef('p.team_id', '=', 'm.team_id').onRef('p.distinct_id', '=', 'm.distinct_id'),
        )
        .select('m.cohort_id')
        .distinct()
        .where('p.team_id', '=', teamId)
        .where('p.person_id', '=', personId)
        .where('m.cohort_id', 'in', cohortIds)
        .execute()
      return rows.map((r) => r.cohort_id)
    },
  }
}
export type CohortStore = ReturnType<typeof createCohortStore>
