import { type Generated, type Kysely, type Selectable, sql } from 'kysely'
import { likePattern } from '../cohorts/store.js'
import type { MetaDatabase } from '../storage/meta/schema.js'

export type FeatureFlagTable = {
  id: Generated<number>
  team_id: number
  key: string
  name: string
  /** JSON text of PostHog's `filters` object. */
  filters: string
  active: number
  deleted: number
  ensure_experience_continuity: number
  evaluation_runtime: string
  /** JSON text: array of evaluation-context tags. */
  evaluation_tags: string
  /** JSON text: array of organising tags. */
  tags: string
  bucketing_identifier: string | null
  version: number
  created_by: number | null
  last_modified_by: number | null
  created_at: string
  updated_at: string
}

export type FlagRequestUsageTable = {
  organization_id: string
  month: string
  count: number
}

export type FlagTables = {
  feature_flags: FeatureFlagTable
  flag_request_usage: FlagRequestUsageTable
}

export type FlagRow = Selectable<FeatureFlagTable>
export type NewFlagRow = Omit<FlagRow, 'id'>

export interface FlagListFilter {
  /** matches the key, the name, or the name of an experiment (not deleted) running on the flag */
  search?: string
  active?: boolean
  /** boolean: no variants; multivariant: variants; experiment: an experiment (not deleted) runs on it */
  type?: 'boolean' | 'multivariant' | 'experiment'
  createdBy?: number
  /** `server`, `client` or `all` (PostHog's list filter of the same name) */
  evaluationRuntime?: string
  limit: number
  offset: number
}

/** Feature flag rows and the monthly flag-request counters. */
export function createFlagStore(meta: Kysely<MetaDatabase>) {
  const db = meta.withTables<FlagTables>()

  const listQuery = (teamId: number, filter: Omit<FlagListFilter, 'limit' | 'offset'>) => {
    let q = db.selectFrom('feature_flags').where('team_id', '=', teamId).where('deleted', '=', 0)
    if (filter.active !== undefined) q = q.where('active', '=', filter.active ? 1 : 0)
    if (filter.search) {
      // ESCAPE names the escape character: SQLite has none by default, so `_` would match any character
      const pattern = likePattern(filter.search)
      q = q.where(
        sql<boolean>`(lower(key) like ${pattern} escape '\\' or lower(name) like ${pattern} escape '\\' or exists (
          select 1 from experiments e where e.feature_flag_id = feature_flags.id and e.team_id = feature_flags.team_id
            and e.deleted = 0 and lower(e.name) like ${pattern} escape '\\'))`,
      )
    }
    // Stored filters are normalized JSON, so a flag without variants holds exactly `"multivariate":null`.
    const withoutVariants = sql<boolean>`filters like ${'%"multivariate":null%'}`
    if (filter.type === 'boolean') q = q.where(withoutVariants)
    if (filter.type === 'multivariant') q = q.where(sql<boolean>`not (${withoutVariants})`)
    if (filter.type === 'experiment') {
      q = q.where(
        sql<boolean>`exists (select 1 from experiments e where e.feature_flag_id = feature_flags.id
          and e.team_id = feature_flags.team_id and e.deleted = 0)`,
      )
    }
    if (filter.createdBy !== undefined) q = q.where('created_by', '=', filter.createdBy)
    if (filter.evaluationRuntime !== undefined) q = q.where('evaluation_runtime', '=', filter.evaluationRuntime)
    return q
  }

  return {
    async list(teamId: number, filter: FlagListFilter): Promise<{ total: number; rows: FlagRow[] }> {
      const [counted, rows] = await Promise.all([
        listQuery(teamId, filter)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow(),
        listQuery(teamId, filter).selectAll().orderBy('id', 'desc').limit(filter.limit).offset(filter.offset).execute(),
      ])
      return { total: Number(counted.n), rows }
    },
    /** The ids of every live flag the list filters select, newest first (PostHog's `matching_ids`). */
    async matchingIds(teamId: number, filter: Omit<FlagListFilter, 'limit' | 'offset'>): Promise<number[]> {
      const rows = await listQuery(teamId, filter).select('id').orderBy('id', 'desc').execute()
      return rows.map((r) => Number(r.id))
    },
    /** The team's live flags among these ids. */
    liveByIds: (teamId: number, ids: number[]) =>
      ids.length === 0
        ? Promise.resolve([] as FlagRow[])
        : db
            .selectFrom('feature_flags')
            .selectAll()
            .where('team_id', '=', teamId)
            .where('deleted', '=', 0)
            .where('id', 'in', ids)
            .orderBy('id')
            .execute(),
    /** Each flag's experiments (not deleted), oldest first: PostHog's `experiment_set`. */
    async experimentIdsByFlag(teamId: number, flagIds: number[]): Promise<Map<number, number[]>> {
      const out = new Map<number, number[]>()
      if (flagIds.length === 0) return out
      const { rows } = await sql<{ id: number; feature_flag_id: number }>`
        select id, feature_flag_id from experiments where team_id = ${teamId} and deleted = 0
          and feature_flag_id in (${sql.join(flagIds)}) order by id
      `.execute(db)
      for (const row of rows) {
        const flagId = Number(row.feature_flag_id)
        out.set(flagId, [...(out.get(flagId) ?? []), Number(row.id)])
      }
      return out
    },
    /** Whether a deleted experiment still points at the flag (PostHog then frees the key when the flag is deleted). */
    async hasDeletedExperiment(teamId: number, flagId: number): Promise<boolean> {
      const { rows } = await sql<{ n: number }>`
        select count(*) as n from experiments where team_id = ${teamId} and feature_flag_id = ${flagId} and deleted = 1
      `.execute(db)
      return Number(rows[0]?.n ?? 0) > 0
    },
    /** The ids of the team's experiments (not deleted) that run on this flag, oldest first. */
    async activeExperimentIds(teamId: number, flagId: number): Promise<number[]> {
      const { rows } = await sql<{ id: number }>`
        select id from experiments where team_id = ${teamId} and feature_flag_id = ${flagId} and deleted = 0 order by id
      `.execute(db)
      return rows.map((r) => Number(r.id))
    },
    /** Every flag of a team, deleted ones included (the evaluator needs them to resolve dependencies). */
    allForTeam: (teamId: number) =>
      db.selectFrom('feature_flags').selectAll().where('team_id', '=', teamId).orderBy('id').execute(),
    get: (teamId: number, id: number) =>
      db.selectFrom('feature_flags').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    /** The live (non-deleted) flag holding a key, if any. */
    getLiveByKey: (teamId: number, key: string) =>
      db
        .selectFrom('feature_flags')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('key', '=', key)
        .where('deleted', '=', 0)
        .executeTakeFirst(),
    insert: (row: NewFlagRow) => db.insertInto('feature_flags').values(row).returningAll().executeTakeFirstOrThrow(),
    /** Writes a flag if it is still at `expectedVersion` (undefined when another write came first). */
    update: (teamId: number, id: number, expectedVersion: number, patch: Partial<NewFlagRow>) =>
      db
        .updateTable('feature_flags')
        .set(patch)
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .where('version', '=', expectedVersion)
        .returningAll()
        .executeTakeFirst(),

    usage: async (organizationId: string, month: string): Promise<number> => {
      const row = await db
        .selectFrom('flag_request_usage')
        .select('count')
        .where('organization_id', '=', organizationId)
        .where('month', '=', month)
        .executeTakeFirst()
      return row ? Number(row.count) : 0
    },
    /** Adds to an organization's monthly count and returns the new total (shared by every process). */
    addUsage: async (organizationId: string, month: string, n: number): Promise<number> => {
      const row = await db
        .insertInto('flag_request_usage')
        .values({ organization_id: organizationId, month, count: n })
        .onConflict((oc) =>
          oc
            .columns(['organization_id', 'month'])
            .doUpdateSet((eb) => ({ count: eb('flag_request_usage.count', '+', n) })),
        )
        .returning('count')
        .executeTakeFirstOrThrow()
      return Number(row.count)
    },
  }
}
export type FlagStore = ReturnType<typeof createFlagStore>
