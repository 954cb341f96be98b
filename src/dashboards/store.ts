import type { Insertable, Kysely, Selectable, Updateable } from 'kysely'
import type { DashboardTable, DashboardTextTable, DashboardTileTable, MetaDatabase } from '../storage/meta/schema.js'

export type DashboardRow = Selectable<DashboardTable>
export type TileRow = Selectable<DashboardTileTable>
export type TextRow = Selectable<DashboardTextTable>

/** A live tile of an insight on a live dashboard, with the dashboard's name (for activity and `dashboards`). */
export interface InsightTileRef {
  id: number
  insight_id: number
  dashboard_id: number
  dashboard_name: string | null
  deleted: number | null
}

export function createDashboardStore(db: Kysely<MetaDatabase>) {
  return {
    list: (teamId: number) =>
      db
        .selectFrom('dashboards')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('deleted', '=', 0)
        .orderBy('pinned', 'desc')
        .orderBy('name')
        .orderBy('id')
        .execute(),
    get: (teamId: number, id: number) =>
      db.selectFrom('dashboards').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    byIds: (teamId: number, ids: number[]) =>
      ids.length === 0
        ? Promise.resolve([] as DashboardRow[])
        : db.selectFrom('dashboards').selectAll().where('team_id', '=', teamId).where('id', 'in', ids).execute(),
    insert: (row: Insertable<DashboardTable>) =>
      db.insertInto('dashboards').values(row).returningAll().executeTakeFirstOrThrow(),
    update: (teamId: number, id: number, patch: Updateable<DashboardTable>) =>
      db
        .updateTable('dashboards')
        .set(patch)
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow(),

    /** Every tile of a dashboard, removed ones included, in creation order. */
    tilesOf: (teamId: number, dashboardId: number) =>
      db
        .selectFrom('dashboard_tiles')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('dashboard_id', '=', dashboardId)
        .orderBy('id')
        .execute(),
    /** Tiles of these insights (removed ones included) on dashboards that are not deleted. */
    tilesOfInsights: (teamId: number, insightIds: number[]): Promise<InsightTileRef[]> =>
      insightIds.length === 0
        ? Promise.resolve([])
        : (db
            .selectFrom('dashboard_tiles as t')
            .innerJoin('dashboards as d', 'd.id', 't.dashboard_id')
            .select(['t.id', 't.insight_id', 't.dashboard_id', 'd.name as dashboard_name', 't.deleted'])
            .where('t.team_id', '=', teamId)
            .where('d.deleted', '=', 0)
            .where('t.insight_id', 'in', insightIds)
            .orderBy('t.id')
            .execute() as Promise<InsightTileRef[]>),
    insertTile: (row: Insertable<DashboardTileTable>) =>
      db.insertInto('dashboard_tiles').values(row).returningAll().executeTakeFirstOrThrow(),
    updateTile: (teamId: number, id: number, patch: Updateable<DashboardTileTable>) =>
      db
        .updateTable('dashboard_tiles')
        .set(patch)
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow(),

    textsByIds: (teamId: number, ids: number[]) =>
      ids.length === 0
        ? Promise.resolve([] as TextRow[])
        : db.selectFrom('dashboard_texts').selectAll().where('team_id', '=', teamId).where('id', 'in', ids).execute(),
    insertText: (row: Insertable<DashboardTextTable>) =>
      db.insertInto('dashboard_texts').values(row).returningAll().executeTakeFirstOrThrow(),
    updateText: (teamId: number, id: number, patch: Updateable<DashboardTextTable>) =>
      db
        .updateTable('dashboard_texts')
        .set(patch)
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow(),
  }
}
export type DashboardStore = ReturnType<typeof createDashboardStore>
