import type { ActivityStore } from '../activity/store.js'
import type { UserStore } from '../users/store.js'
import type { UserBasic } from './schemas.js'

export interface Actor {
  userId: number | null
  organizationId: string | null
}

/** One change in an activity entry, as PostHog's `changes_between` lists it. */
export interface Change {
  type: string
  action: 'changed' | 'created' | 'deleted'
  field: string
  before: unknown
  after: unknown
}

/** Users as PostHog's UserBasicSerializer shows them, fetched once per id. */
export async function usersById(
  users: Pick<UserStore, 'get'>,
  ids: (number | null)[],
): Promise<Map<number, UserBasic>> {
  const out = new Map<number, UserBasic>()
  for (const id of new Set(ids)) {
    if (id === null) continue
    const user = await users.get(id)
    if (!user) continue
    out.set(id, {
      id: user.id,
      uuid: user.uuid,
      distinct_id: user.uuid,
      first_name: user.first_name,
      last_name: user.last_name,
      email: user.email,
      is_email_verified: user.is_email_verified === 1,
    })
  }
  return out
}

/** `GET …/activity/`: a scope's entries (or one item's), newest first. */
export async function activityPage(
  deps: { activity: Pick<ActivityStore, 'list'>; users: Pick<UserStore, 'get'> },
  teamId: number,
  scope: string,
  itemId?: string,
) {
  const rows = await deps.activity.list(teamId, scope, itemId)
  const users = await usersById(
    deps.users,
    rows.map((r) => r.user_id),
  )
  return {
    results: rows.map((row) => {
      const user = row.user_id === null ? undefined : users.get(row.user_id)
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
    next: null,
    previous: null,
  }
}

/** The changed fields between two plain views of an item. */
export function changesBetween(
  type: string,
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  fields: string[],
): Change[] {
  const changes: Change[] = []
  for (const field of fields) {
    if (!(field in after)) continue
    if (JSON.stringify(before[field] ?? null) === JSON.stringify(after[field] ?? null)) continue
    changes.push({ type, action: 'changed', field, before: before[field] ?? null, after: after[field] ?? null })
  }
  return changes
}
