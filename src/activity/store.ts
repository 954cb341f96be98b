import type { Kysely } from 'kysely'
import type { MetaDatabase } from '../storage/meta/schema.js'

export interface ActivityEntry {
  organizationId: string | null
  teamId: number | null
  userId: number | null
  scope: string
  itemId: string | null
  activity: string
  detail: Record<string, unknown>
  createdAt: string
}

export function createActivityStore(db: Kysely<MetaDatabase>) {
  return {
    async log(entry: ActivityEntry) {
      await db
        .insertInto('activity_log')
        .values({
          organization_id: entry.organizationId,
          team_id: entry.teamId,
          user_id: entry.userId,
          scope: entry.scope,
          item_id: entry.itemId,
          activity: entry.activity,
          detail: JSON.stringify(entry.detail),
          created_at: entry.createdAt,
        })
        .execute()
    },
    list: (teamId: number, scope: string, itemId?: string) => {
      let q = db.selectFrom('activity_log').selectAll().where('team_id', '=', teamId).where('scope', '=', scope)
      if (itemId !== undefined) q = q.where('item_id', '=', itemId)
      return q.orderBy('id', 'desc').limit(500).execute()
    },
  }
}
export type ActivityStore = ReturnType<typeof createActivityStore>
