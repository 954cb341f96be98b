import type { Generated, Kysely, Selectable } from 'kysely'
import type { MetaDatabase } from '../storage/meta/schema.js'

export type ActionTable = {
  id: Generated<number>
  team_id: number
  name: string
  description: string
  /** JSON text of the tag list */
  tags: string
  /** JSON text of the steps */
  steps: string
  post_to_slack: number
  slack_message_format: string
  pinned_at: string | null
  deleted: number
  created_by: number | null
  created_at: string
  updated_at: string
}

export type ActionRow = Selectable<ActionTable>
type Db = Kysely<MetaDatabase & { actions: ActionTable }>

export function createActionStore(db: Kysely<MetaDatabase>) {
  const d = db as unknown as Db
  return {
    list: (teamId: number) =>
      d
        .selectFrom('actions')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('deleted', '=', 0)
        .orderBy('id')
        .execute(),
    get: (teamId: number, id: number) =>
      d.selectFrom('actions').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst(),
    insert: (row: Omit<ActionRow, 'id'>) =>
      d.insertInto('actions').values(row).returningAll().executeTakeFirstOrThrow(),
    update: (teamId: number, id: number, patch: Partial<Omit<ActionRow, 'id' | 'team_id'>>) =>
      d
        .updateTable('actions')
        .set(patch)
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow(),
  }
}
export type ActionStore = ReturnType<typeof createActionStore>
