import { describe, expect, it } from 'vitest'
import { openMetaDb } from '../../src/storage/meta/db.js'
import { migrateMeta } from '../../src/storage/meta/migrate.js'
import { migrations } from '../../src/storage/meta/migrations/index.js'
import { metaTargets } from '../helpers/meta.js'

const targets = metaTargets()

describe.each(targets)('metadata migrations on $name', ({ open }) => {
  it('applies every migration once, then nothing on a second run', async () => {
    const { url, done } = await open()
    try {
      const first = openMetaDb(url)
      expect(await migrateMeta(first.db, first.dialect)).toEqual(migrations.map((m) => m.name).sort())
      await first.close()
      const second = openMetaDb(url)
      expect(await migrateMeta(second.db, second.dialect)).toEqual([])

      // The tables take and give back the same values in both dialects.
      await second.db
        .insertInto('organizations')
        .values({
          id: 'o1',
          name: 'Org',
          plan: 'paid',
          flag_request_quota: 1000,
          created_at: '2026-01-01T00:00:00.000Z',
        })
        .execute()
      const project = await second.db
        .insertInto('projects')
        .values({
          uuid: 'u1',
          organization_id: 'o1',
          name: 'P',
          timezone: 'UTC',
          api_token: 'phc_x',
          created_at: 'now',
          updated_at: 'now',
        })
        .returningAll()
        .executeTakeFirstOrThrow()
      expect(project.id).toBeTypeOf('number')
      const org = await second.db.selectFrom('organizations').selectAll().executeTakeFirstOrThrow()
      expect(org).toEqual({
        id: 'o1',
        name: 'Org',
        plan: 'paid',
        flag_request_quota: 1000,
        created_at: '2026-01-01T00:00:00.000Z',
      })
      await expect(
        second.db
          .insertInto('projects')
          .values({
            uuid: 'u2',
            organization_id: 'o1',
            name: 'Q',
            timezone: 'UTC',
            api_token: 'phc_x',
            created_at: 'n',
            updated_at: 'n',
          })
          .execute(),
      ).rejects.toThrow()
      await second.close()
    } finally {
      await done()
    }
  })
})
