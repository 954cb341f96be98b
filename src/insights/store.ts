import type { Insertable, Kysely, Selectable, Updateable } from 'kysely'
import type { InsightTable, MetaDatabase } from '../storage/meta/schema.js'

export type InsightRow = Selectable<InsightTable>

export interface InsightFilter {
  saved?: boolean
  favorited?: boolean
  createdBy?: number[]
  shortId?: string
}

export function createInsightStore(db: Kysely<MetaDatabase>) {
  return {
    /** The project's live insights matching the simple filters, most recently changed first. */
    list: (teamId: number, filter: InsightFilter = {}) => {
      let q = db.selectFrom('insights').selectAll().where('team_id', '=', teamId).where('deleted', '=', 0)
      if (filter.saved !== undefined) q = q.where('saved', '=', filter.saved ? 1 : 0)
      if (filter.favorited !== undefined) q = q.where('favorited', '=', filter.favorited ? 1 : 0)
      if (filter.createdBy !== undefined) {
        if (filter.createdBy.length === 0) return Promise.resolve([] as InsightRow[])
        q = q.where('created_by', 'in', filter.createdBy)
      }
      if (filter.shortId !== undefined) q = q.where('short_id', '=', filter.shortId)
      return q.orderBy('last_modified_at', 'desc').orderBy('id', 'desc').execute()
    },
    get: (teamId: number, id: number) =>
      db.selectFrom('insights').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    byIds: (teamId: number, ids: number[]) =>
      ids.length === 0
        ? Promise.resolve([] as InsightRow[])
        : db.selectFrom('insights').selectAll().where('team_id', '=', teamId).where('id', 'in', ids).execute(),
    shortIdTaken: async (teamId: number, shortId: string) =>
      (await db
        .selectFrom('insights')
        .select('id')
        .where('team_id', '=', teamId)
        .where('short_id', '=', shortId)
        .executeTakeFirst()) !== undefined,
    insert: (row: Insertable<InsightTable>) =>
      db.insertInto('insights').values(row).returningAll().executeTakeFirstOrThrow(),
    update: (teamId: number, id: number, patch: Updateable<InsightTable>) =>
      db
        .updateTable('insights')
        .set(patch)
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow(),
    /** Soft-deletes the given insights (a dashboard deleted with `delete_insights`). */
    markDeleted: async (teamId: number, ids: number[], at: string) => {
      if (ids.length === 0) return
      await db
        .updateTable('insights')
        .set({ deleted: 1, updated_at: at })
        .where('team_id', '=', teamId)
        .where('id', 'in', ids)
        .execute()
    },
  }
}
export type InsightStore = ReturnType<typeof createInsightStore>
