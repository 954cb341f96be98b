import type { Kysely, Selectable, Transaction } from 'kysely'
import type { MetaDatabase } from '../storage/meta/schema.js'

export type SurveyTable = {
  id: string
  team_id: number
  name: string
  description: string
  type: string
  schedule: string | null
  linked_flag_id: number | null
  linked_insight_id: number | null
  targeting_flag_id: number | null
  internal_targeting_flag_id: number | null
  internal_response_sampling_flag_id: number | null
  /** JSON text columns: questions (array), conditions, appearance (objects), the rest as named. */
  questions: string | null
  conditions: string | null
  appearance: string | null
  created_at: string
  created_by: number | null
  updated_at: string
  start_date: string | null
  end_date: string | null
  archived: number
  responses_limit: number | null
  iteration_count: number | null
  iteration_frequency_days: number | null
  /** JSON text: array of ISO timestamps, or null */
  iteration_start_dates: string | null
  current_iteration: number | null
  current_iteration_start_date: string | null
  response_sampling_start_date: string | null
  response_sampling_interval_type: string | null
  response_sampling_interval: number | null
  response_sampling_limit: number | null
  /** PostHog stores this as a JSON *string* inside its JSON column; here it is that string. */
  response_sampling_daily_limits: string | null
  enable_partial_responses: number
  enable_iframe_embedding: number
  headline_summary: string | null
  headline_response_count: number | null
  /** JSON text: {questionId: {summary, responseCount, generatedAt, traceId}} */
  question_summaries: string | null
  base_language: string
  /** JSON text */
  translations: string | null
  form_content: string | null
  /** JSON text: ids of the actions in `conditions.actions` (PostHog's M2M) */
  action_ids: string
}

export type SurveyResponseArchiveTable = {
  team_id: number
  survey_id: string
  response_uuid: string
  archived_at: string
}

export type SurveyTables = {
  surveys: SurveyTable
  survey_response_archives: SurveyResponseArchiveTable
}

export type SurveyRow = Selectable<SurveyTable>

export interface SurveyListFilter {
  search?: string
  archived?: boolean
  type?: string
  ids?: string[]
  limit: number
  offset: number
}

type Db = Kysely<MetaDatabase & SurveyTables>
type Tx = Transaction<MetaDatabase & SurveyTables>

const escapeLike = (text: string) => text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)

/** Survey rows and archived response uuids. */
export function createSurveyStore(meta: Kysely<MetaDatabase>) {
  const db: Db = meta.withTables<SurveyTables>()

  const listQuery = (teamId: number, filter: Omit<SurveyListFilter, 'limit' | 'offset'>) => {
    let q = db.selectFrom('surveys').where('team_id', '=', teamId)
    if (filter.archived !== undefined) q = q.where('archived', '=', filter.archived ? 1 : 0)
    if (filter.type !== undefined) q = q.where('type', '=', filter.type)
    if (filter.ids !== undefined) q = q.where('id', 'in', filter.ids.length > 0 ? filter.ids : [''])
    if (filter.search) {
      const pattern = `%${escapeLike(filter.search)}%`
      q = q.where((eb) =>
        eb.or([
          eb(eb.fn('lower', ['name']), 'like', eb.val(pattern)),
          eb(eb.fn('lower', ['description']), 'like', eb.val(pattern)),
        ]),
      )
    }
    return q
  }

  const store = {
    db,
    async list(teamId: number, filter: SurveyListFilter): Promise<{ total: number; rows: SurveyRow[] }> {
      const [counted, rows] = await Promise.all([
        listQuery(teamId, filter)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow(),
        listQuery(teamId, filter)
          .selectAll()
          .orderBy('created_at', 'desc')
          .orderBy('id')
          .limit(filter.limit)
          .offset(filter.offset)
          .execute(),
      ])
      return { total: Number(counted.n), rows }
    },
    allForTeam: (teamId: number) =>
      db.selectFrom('surveys').selectAll().where('team_id', '=', teamId).orderBy('created_at', 'desc').execute(),
    /** Surveys the SDK may show: not archived, newest first, at most `limit`. */
    publicForTeam: (teamId: number, limit: number) =>
      db
        .selectFrom('surveys')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('archived', '=', 0)
        .orderBy('created_at', 'desc')
        .limit(limit)
        .execute(),
    /** Running surveys with a response limit, across every project (the limit job reads them). */
    runningWithLimit: () =>
      db
        .selectFrom('surveys')
        .selectAll()
        .where('responses_limit', 'is not', null)
        .where('start_date', 'is not', null)
        .where('end_date', 'is', null)
        .where('archived', '=', 0)
        .execute(),
    /** Running recurring surveys, across every project (the iteration job reads them). */
    runningWithIterations: () =>
      db
        .selectFrom('surveys')
        .selectAll()
        .where('iteration_count', '>', 0)
        .where('start_date', 'is not', null)
        .where('end_date', 'is', null)
        .where('archived', '=', 0)
        .execute(),
    /** Moves a survey to a later iteration if it is still at `from`; the row when this call moved it. */
    advanceIteration: (teamId: number, id: string, from: number | null, to: number, startDate: string, at: string) => {
      let q = db
        .updateTable('surveys')
        .set({ current_iteration: to, current_iteration_start_date: startDate, updated_at: at })
        .where('team_id', '=', teamId)
        .where('id', '=', id)
      q = from === null ? q.where('current_iteration', 'is', null) : q.where('current_iteration', '=', from)
      return q.returningAll().executeTakeFirst()
    },
    get: (teamId: number, id: string) =>
      db.selectFrom('surveys').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    nameTaken: async (teamId: number, name: string, exceptId: string | null, tx?: Tx): Promise<boolean> => {
      let q = (tx ?? db).selectFrom('surveys').select('id').where('team_id', '=', teamId).where('name', '=', name)
      if (exceptId !== null) q = q.where('id', '!=', exceptId)
      return (await q.executeTakeFirst()) !== undefined
    },
    insert: (row: SurveyRow, tx?: Tx) =>
      (tx ?? db).insertInto('surveys').values(row).returningAll().executeTakeFirstOrThrow(),
    update: (teamId: number, id: string, patch: Partial<Omit<SurveyRow, 'id' | 'team_id'>>) =>
      db
        .updateTable('surveys')
        .set(patch)
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow(),
    /** Sets end_date when it is still null; the row when this call closed it, else undefined. */
    closeIfOpen: (teamId: number, id: string, at: string) =>
      db
        .updateTable('surveys')
        .set({ end_date: at, updated_at: at })
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .where('end_date', 'is', null)
        .returningAll()
        .executeTakeFirst(),
    async delete(teamId: number, id: string): Promise<void> {
      await db.transaction().execute(async (tx) => {
        await tx
          .deleteFrom('survey_response_archives')
          .where('team_id', '=', teamId)
          .where('survey_id', '=', id)
          .execute()
        await tx.deleteFrom('surveys').where('team_id', '=', teamId).where('id', '=', id).execute()
      })
    },
    /** Earliest start date among the project's surveys, or null when none has started. */
    async earliestStart(teamId: number): Promise<string | null> {
      const row = await db
        .selectFrom('surveys')
        .select((eb) => eb.fn.min('start_date').as('first'))
        .where('team_id', '=', teamId)
        .executeTakeFirst()
      return (row?.first as string | null | undefined) ?? null
    },
    /** Runs `fn` in one metadata transaction: every write through `tx` commits together or not at all. */
    transaction: <T>(fn: (tx: Tx) => Promise<T>): Promise<T> => db.transaction().execute(fn),

    /** True when a row was added (false: it was archived already). */
    async archiveResponse(teamId: number, surveyId: string, uuid: string, at: string): Promise<boolean> {
      const existing = await db
        .selectFrom('survey_response_archives')
        .select('response_uuid')
        .where('team_id', '=', teamId)
        .where('response_uuid', '=', uuid)
        .executeTakeFirst()
      if (existing) return false
      const result = await db
        .insertInto('survey_response_archives')
        .values({ team_id: teamId, survey_id: surveyId, response_uuid: uuid, archived_at: at })
        .onConflict((oc) => oc.columns(['team_id', 'response_uuid']).doNothing())
        .executeTakeFirst()
      return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0
    },
    /** True when a row was removed. */
    async unarchiveResponse(teamId: number, surveyId: string, uuid: string): Promise<boolean> {
      const result = await db
        .deleteFrom('survey_response_archives')
        .where('team_id', '=', teamId)
        .where('survey_id', '=', surveyId)
        .where('response_uuid', '=', uuid)
        .executeTakeFirst()
      return Number(result.numDeletedRows) > 0
    },
    async archivedUuids(teamId: number, surveyId?: string): Promise<string[]> {
      let q = db.selectFrom('survey_response_archives').select('response_uuid').where('team_id', '=', teamId)
      if (surveyId !== undefined) q = q.where('survey_id', '=', surveyId)
      return (await q.orderBy('archived_at').orderBy('response_uuid').execute()).map((r) => r.response_uuid)
    },
  }
  return store
}
export type SurveyStore = ReturnType<typeof createSurveyStore>
export type SurveyTx = Tx
