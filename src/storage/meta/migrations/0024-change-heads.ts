import type { MetaMigration } from '../migrate.js'
import { notNull } from './columns.js'

/**
 * How far each process has numbered the change notifications it sent (its head), so that the others can tell a
 * notification they never heard from one still on its way (`src/storage/meta/change-gaps.ts`).
 */
export const changeHeads: MetaMigration = {
  name: '0024-change-heads',
  async up(db) {
    await db.schema
      .createTable('change_heads')
      .addColumn('origin', 'text', (c) => c.primaryKey())
      .addColumn('seq', 'bigint', notNull)
      .addColumn('updated_at', 'bigint', notNull)
      .execute()
  },
}
