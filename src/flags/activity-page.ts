// PostHog's activity log pages for flags and cohorts: newest first, `limit` (10 by default) a page, `page` from 1,
// with `next`/`previous` links and the total.
import type { Kysely } from 'kysely'
import { usersById } from '../insights/activity.js'
import type { MetaDatabase } from '../storage/meta/schema.js'
import type { UserStore } from '../users/store.js'

export const ACTIVITY_PAGE_SIZE = 10

export function createActivityPages(db: Kysely<MetaDatabase>, users: Pick<UserStore, 'get'>) {
  const entries = (teamId: number, scope: string, itemId?: string) => {
    let q = db.selectFrom('activity_log').where('team_id', '=', teamId).where('scope', '=', scope)
    if (itemId !== undefined) q = q.where('item_id', '=', itemId)
    return q
  }

  return async function activityPage(
    url: string,
    siteUrl: string,
    teamId: number,
    scope: string,
    query: { limit?: number; page?: number },
    itemId?: string,
  ) {
    const limit = query.limit ?? ACTIVITY_PAGE_SIZE
    const page = query.page ?? 1
    const [counted, rows] = await Promise.all([
      entries(teamId, scope, itemId)
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow(),
      entries(teamId, scope, itemId)
        .selectAll()
        .orderBy('id', 'desc')
        .limit(limit)
        .offset((page - 1) * limit)
        .execute(),
    ])
    const total = Number(counted.n)
    const people = await usersById(
      users,
      rows.map((r) => r.user_id),
    )
    const link = (to: number) => {
      const next = new URL(url, siteUrl)
      next.searchParams.set('page', String(to))
      next.searchParams.set('limit', String(limit))
      return next.toString()
    }
    return {
      results: rows.map((row) => {
        const user = row.user_id === null ? undefined : people.get(row.user_id)
        return {
          id: row.id,
          user: user ? { first_name: user.first_name, email: user.email } : null,
          activity: row.activity,
          scope: row.scope,
          item_id: row.item_id,
          detail: JSON.parse(row.detail) as unknown,
          created_at: row.created_at,
        }
      }),
      next: page * limit < total ? link(page + 1) : null,
      previous: page > 1 ? link(page - 1) : null,
      total_count: total,
    }
  }
}
export type ActivityPages = ReturnType<typeof createActivityPages>
