/**
 * Groups and group types (PostHog's `/groups/` and `/groups_types/`): rows from the metadata store, where they are
 * kept; property statistics through HogQL over the event store's copy (confined to the project by the compiler).
 */
import crypto from 'node:crypto'
import { NotFound, ValidationError } from '../http/errors.js'
import type { PersonStore } from '../persons/store.js'
import { literal } from '../queries/filters.js'
import type { HogQLExecutor, RunContext } from '../queries/runner.js'
import type { Group, GroupListQuery, GroupType, GroupTypeUpdate } from './schemas.js'

const DEFAULT_LIMIT = 100

function parseObject(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text)
    return value && typeof value === 'object' && !Array.isArray(value) ? value : {}
  } catch {
    return {}
  }
}

/** The opaque cursor of a page link: the position it starts at. */
export const encodeCursor = (offset: number) => Buffer.from(JSON.stringify({ o: offset })).toString('base64url')
function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined || cursor === '') return 0
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { o?: unknown }
    if (typeof value.o === 'number' && Number.isSafeInteger(value.o) && value.o >= 0) return value.o
  } catch {}
  throw new ValidationError('Invalid cursor', 'cursor')
}

const requiredIndex = (index: number | undefined): number => {
  if (index === undefined) throw new ValidationError('This field is required.', 'group_type_index', 'required')
  return index
}

export function createGroupService(deps: { persons: Pick<PersonStore, 'db'>; execute: HogQLExecutor }) {
  const db = deps.persons.db
  const toGroup = (r: { group_type_index: number; group_key: string; properties: string; created_at: string }) => ({
    group_type_index: Number(r.group_type_index),
    group_key: r.group_key,
    group_properties: parseObject(r.properties),
    created_at: r.created_at,
  })
  const context = (teamId: number, timezone: string): RunContext => ({
    team: { id: teamId, timezone },
    engineId: `g${teamId}x${crypto.randomUUID().replace(/-/g, '')}`,
    signal: new AbortController().signal,
    stats: { rowsRead: 0, bytesRead: 0, resultRows: 0 },
  })

  async function types(teamId: number): Promise<GroupType[]> {
    const rows = await db
      .selectFrom('group_type_mappings')
      .selectAll()
      .where('team_id', '=', teamId)
      .orderBy('group_type_index')
      .execute()
    return rows.map((r) => ({
      group_type: r.group_type,
      group_type_index: Number(r.group_type_index),
      name_singular: r.name_singular,
      name_plural: r.name_plural,
    }))
  }

  return {
    /** Newest first; `search` matches the key or the properties' text (any case). */
    async list(teamId: number, query: GroupListQuery) {
      const index = requiredIndex(query.group_type_index)
      const limit = query.limit ?? DEFAULT_LIMIT
      const offset = decodeCursor(query.cursor)
      let q = db.selectFrom('groups').selectAll().where('team_id', '=', teamId).where('group_type_index', '=', index)
      const search = query.search?.trim()
      if (search) {
        const pattern = `%${search.toLowerCase()}%`
        q = q.where((eb) =>
          eb.or([
            eb(eb.fn('lower', ['group_key']), 'like', pattern),
            eb(eb.fn('lower', ['properties']), 'like', pattern),
          ]),
        )
      }
      const rows = await q
        .orderBy('created_at', 'desc')
        .orderBy('group_key')
        .limit(limit + 1)
        .offset(offset)
        .execute()
      return {
        results: rows.slice(0, limit).map(toGroup),
        next: rows.length > limit ? encodeCursor(offset + limit) : null,
        previous: offset > 0 ? encodeCursor(Math.max(0, offset - limit)) : null,
      }
    },

    async find(teamId: number, index: number | undefined, key: string | undefined): Promise<Group> {
      const typeIndex = requiredIndex(index)
      if (key === undefined) throw new ValidationError('This field is required.', 'group_key', 'required')
      const row = await db
        .selectFrom('groups')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('group_type_index', '=', typeIndex)
        .where('group_key', '=', key)
        .executeTakeFirst()
      if (!row) throw new NotFound()
      return toGroup(row)
    },

    /** Per group type index, the property names its groups have, with how many groups have each. */
    async propertyDefinitions(teamId: number, timezone: string) {
      const executed = await deps.execute(
        'SELECT index, arrayJoin(JSONExtractKeys(properties)) AS name, count() AS c FROM groups GROUP BY index, name ORDER BY index, c DESC, name LIMIT 10000',
        context(teamId, timezone),
      )
      const out: Record<string, { name: string; count: number }[]> = {}
      for (const [index, name, count] of executed.rows) {
        const list = out[String(index)] ?? []
        list.push({ name: String(name), count: Number(count) })
        out[String(index)] = list
      }
      return out
    },

    async propertyValues(teamId: number, timezone: string, index: number | undefined, key: string | undefined) {
      const typeIndex = requiredIndex(index)
      if (!key) throw new ValidationError('This field is required.', 'key', 'required')
      const field = `properties[${literal(key)}]`
      const executed = await deps.execute(
        `SELECT ${field} AS value, count() AS c FROM groups WHERE index = ${typeIndex} AND ${field} IS NOT NULL GROUP BY value ORDER BY c DESC, value LIMIT 50`,
        context(teamId, timezone),
      )
      return executed.rows.map(([name, count]) => ({ name, count: Number(count) }))
    },

    types,

    async updateTypes(teamId: number, updates: GroupTypeUpdate): Promise<GroupType[]> {
      const known = new Set((await types(teamId)).map((t) => t.group_type_index))
      for (const u of updates) {
        if (!known.has(u.group_type_index)) throw new NotFound()
      }
      await db.transaction().execute(async (tx) => {
        for (const u of updates) {
          const set: { name_singular?: string | null; name_plural?: string | null } = {}
          if (u.name_singular !== undefined) set.name_singular = u.name_singular
          if (u.name_plural !== undefined) set.name_plural = u.name_plural
          if (Object.keys(set).length === 0) continue
          await tx
            .updateTable('group_type_mappings')
            .set(set)
            .where('team_id', '=', teamId)
            .where('group_type_index', '=', u.group_type_index)
            .execute()
        }
      })
      return types(teamId)
    },
  }
}

export type GroupService = ReturnType<typeof createGroupService>
