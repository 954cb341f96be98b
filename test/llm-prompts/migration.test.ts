// Migration 0023 arrived after 0024 was released: a data dir that already ran 0024 still gets it, and the partial
// unique indexes hold one live row per version and one latest row per name in both dialects.
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { openMetaDb } from '../../src/storage/meta/db.js'
import { migrateMeta } from '../../src/storage/meta/migrate.js'
import { metaTargets } from '../helpers/meta.js'

describe.each(metaTargets())('migration 0023-llm-prompts on $name', ({ open }) => {
  it('runs on a database that ran 0024 before 0023 existed, and its indexes refuse a second live row', async () => {
    const { url, done } = await open()
    try {
      const first = openMetaDb(url)
      await migrateMeta(first.db, first.dialect)
      // As a data dir migrated before 0023 was written: 0024 ran, 0023 did not.
      await sql`DROP TABLE llm_prompts`.execute(first.db)
      await sql`DELETE FROM kysely_migration WHERE name = '0023-llm-prompts'`.execute(first.db)
      await first.close()

      const second = openMetaDb(url)
      expect(await migrateMeta(second.db, second.dialect)).toEqual(['0023-llm-prompts'])
      const db = second.db as any
      const row = (id: string, version: number, isLatest: number, deleted = 0) => ({
        id,
        team_id: 1,
        name: 'p',
        prompt: '"x"',
        config: null,
        version,
        version_description: null,
        is_latest: isLatest,
        deleted,
        created_by: null,
        created_at: 'now',
        updated_at: 'now',
      })
      await db
        .insertInto('llm_prompts')
        .values(row('a', 1, 0))
        .execute()
      await db
        .insertInto('llm_prompts')
        .values(row('b', 2, 1))
        .execute()
      // another live row of version 2, and another latest row: both refused
      await expect(
        db
          .insertInto('llm_prompts')
          .values(row('c', 2, 0))
          .execute(),
      ).rejects.toThrow()
      await expect(
        db
          .insertInto('llm_prompts')
          .values(row('d', 3, 1))
          .execute(),
      ).rejects.toThrow()
      // archived rows do not count
      await db
        .insertInto('llm_prompts')
        .values(row('e', 2, 1, 1))
        .execute()
      const count = await db.selectFrom('llm_prompts').select(db.fn.countAll().as('n')).executeTakeFirst()
      expect(Number(count.n)).toBe(3)
      await second.close()
    } finally {
      await done()
    }
  })
})
