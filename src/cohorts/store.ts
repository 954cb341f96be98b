import { type Generated, type Kysely, type Selectable, sql } from 'kysely'
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
  /** 1 while a calculation of the current definition is pending or running */
  is_calculating: Generated<number>
  /** 1 when the definition changed (or the schedule came round) since the last calculation */
  calculation_due: Generated<number>
  last_calculation: string | null
  /** persons in the cohort at the last calculation */
  count: number | string | null
  errors_calculating: Generated<number>
  last_error: string | null
  last_attempt: string | null
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
type CalculationFields =
  | 'is_calculating'
  | 'calculation_due'
  | 'last_calculation'
  | 'count'
  | 'errors_calculating'
  | 'last_error'
  | 'last_attempt'
export type NewCohortRow = Omit<CohortRow, 'id' | CalculationFields> & Partial<Pick<CohortRow, CalculationFields>>

export interface CohortListFilter {
  limit: number
  offset: number
  /** part of the name, any case */
  search?: string
  isStatic?: boolean
  /** dynamic cohorts with (true) or without (false) a behavioural filter */
  isBehavioral?: boolean
}

/** `LIKE` pattern for a literal piece of text (`\\` escapes `%`, `_` and itself; both dialects honour ESCAPE). */
export const likePattern = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`

const INSERT_CHUNK = 500

/** Cohort rows and static cohort memberships. */
export function createCohortStore(meta: Kysely<MetaDatabase>) {
  const db = meta.withTables<CohortTables>()
  const live = (teamId: number, filter: Omit<CohortListFilter, 'limit' | 'offset'> = {}) => {
    let q = db.selectFrom('cohorts').where('team_id', '=', teamId).where('deleted', '=', 0)
    if (filter.isStatic !== undefined) q = q.where('is_static', '=', filter.isStatic ? 1 : 0)
    if (filter.isBehavioral !== undefined) {
      const behavioral = sql<boolean>`filters like ${'%"type":"behavioral"%'}`
      q = q.where('is_static', '=', 0).where(filter.isBehavioral ? behavioral : sql<boolean>`not (${behavioral})`)
    }
    if (filter.search) {
      const pattern = likePattern(filter.search)
      q = q.where(sql<boolean>`lower(name) like ${pattern} escape '\\'`)
    }
    return q
  }

  return {
    async list(teamId: number, filter: CohortListFilter): Promise<{ total: number; rows: CohortRow[] }> {
      const [counted, rows] = await Promise.all([
        live(teamId, filter)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow(),
        live(teamId, filter).selectAll().orderBy('id', 'desc').limit(filter.limit).offset(filter.offset).execute(),
      ])
      return { total: Number(counted.n), rows }
    },
    /**
     * Dynamic cohorts whose calculation is due: asked for, last attempted before `staleBefore`, or left calculating
     * by a process that died (attempted before `stuckBefore` and never finished).
     */
    due: (staleBefore: string, stuckBefore: string, limit: number) =>
      db
        .selectFrom('cohorts')
        .select(['id', 'team_id'])
        .where('deleted', '=', 0)
        .where('is_static', '=', 0)
        .where((eb) =>
          eb.or([
            eb('calculation_due', '=', 1),
            eb('last_attempt', 'is', null),
            eb('last_attempt', '<', staleBefore),
            eb.and([eb('is_calculating', '=', 1), eb('last_attempt', '<', stuckBefore)]),
          ]),
        )
        .orderBy('calculation_due', 'desc')
        .orderBy('id')
        .limit(limit)
        .execute(),
    /** Marks a cohort's definition as needing a calculation (its answer is pending until one finishes). */
    requestCalculation: (id: number) =>
      db.updateTable('cohorts').set({ calculation_due: 1, is_calculating: 1 }).where('id', '=', id).execute(),
    /** Takes a due calculation: clears `calculation_due`, so a change made while it runs asks for another. */
    startCalculation: (id: number, at: string) =>
      db
        .updateTable('cohorts')
        .set({ calculation_due: 0, is_calculating: 1, last_attempt: at })
        .where('id', '=', id)
        .execute(),
    /** Records a finished calculation; the cohort stays `is_calculating` when another was asked for meanwhile. */
    finishCalculation: (id: number, outcome: { count: number; at: string } | { error: string; at: string }) =>
      db
        .updateTable('cohorts')
        .set((eb) => ({
          is_calculating: eb.ref('calculation_due'),
          ...('count' in outcome
            ? { count: outcome.count, last_calculation: outcome.at, last_error: null }
            : { errors_calculating: eb('errors_calculating', '+', 1), last_error: outcome.error }),
        }))
        .where('id', '=', id)
        .execute(),
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
