/**
 * The persons API: lists through HogQL over the event store's copy of persons (tenant isolation by the compiler),
 * the rows themselves from the metadata store (the source of truth); property changes go through capture as
 * PostHog's do (a `$set` / `$delete_person_property` event), so every cache and copy hears of them; split and delete
 * write the metadata store under the project's person lock (the one ingestion takes in every process), drop the
 * changed distinct ids from the person caches (`invalidate` tells the other processes too) and write the event
 * store's copy.
 */
import crypto from 'node:crypto'
import type { ActivityStore } from '../activity/store.js'
import { NotFound, ValidationError } from '../http/errors.js'
import type { CommitBatch } from '../ingest/committer.js'
import { literal, propertiesToHogQL } from '../queries/filters.js'
import type { HogQLExecutor, RunContext } from '../queries/runner.js'
import type { PersonDeletions } from './deletions.js'
import { cheapCondition, type PersonListConditions, personListHogQL } from './list-query.js'
import type { Person, PersonDeletion, PersonListQuery } from './schemas.js'
import type { PersonRow, PersonStore } from './store.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const DISPLAY_NAME_PROPERTIES = ['email', 'Email', '$email', 'name', 'Name', 'username', 'Username', 'UserName']
export const CSV_EXPORT_LIMIT = 10_000
const DEFAULT_LIMIT = 100

export interface PersonTeam {
  id: number
  timezone: string
  organizationId: string
  apiToken: string
}

export interface PersonActor {
  userId: number | null
}

const chTime = (iso: string) => iso.replace('T', ' ').replace('Z', '')

/** PostHog's `is_anonymous_id`: a UUID-looking distinct id was made up by an SDK, not given by the product. */
export const isAnonymousId = (id: string) => UUID.test(id) || /^[0-9a-f]{16,}-/i.test(id)

export function toPerson(row: PersonRow, distinctIds: string[]): Person {
  const properties = parseObject(row.properties)
  // Identified ids first (PostHog sorts by is_anonymous_id, stable otherwise).
  const ids = [...distinctIds].sort((a, b) => Number(isAnonymousId(a)) - Number(isAnonymousId(b)))
  const named = DISPLAY_NAME_PROPERTIES.map((k) => properties[k]).find((v) => v !== undefined && v !== null && v !== '')
  return {
    id: row.id,
    uuid: row.id,
    name: named !== undefined ? String(named) : (ids[0] ?? row.id),
    distinct_ids: ids,
    properties,
    created_at: row.created_at,
    is_identified: Number(row.is_identified) === 1,
  }
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text)
    return value && typeof value === 'object' && !Array.isArray(value) ? value : {}
  } catch {
    return {}
  }
}

/** `%` and `_` in a search term match themselves. */
const likeEscaped = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`)

function parseFilters(text: string | undefined, attr: string): unknown {
  if (text === undefined || text === '') return undefined
  try {
    return JSON.parse(text)
  } catch {
    throw new ValidationError('Properties are unparsable!', attr)
  }
}

export function toDeletion(row: Awaited<ReturnType<PersonDeletions['get']>> & object): PersonDeletion {
  return {
    id: row.id,
    person_id: row.person_id,
    distinct_ids: JSON.parse(row.distinct_ids) as string[],
    delete_events: Number(row.delete_events) === 1,
    status: row.status,
    requested_at: row.requested_at,
    finished_at: row.finished_at,
  }
}

export function createPersonService(deps: {
  persons: PersonStore
  execute: HogQLExecutor
  capture: (token: string, events: unknown[]) => Promise<unknown>
  /** Forgets the distinct ids in this process's person caches and gives their current event-store rows. */
  remirror: (teamId: number, distinctIds: string[]) => Promise<Omit<CommitBatch, 'events'>>
  commit: (batch: CommitBatch) => Promise<unknown>
  invalidate: (teamId: number, distinctIds: string[]) => void
  deletions: PersonDeletions
  activity: Pick<ActivityStore, 'log'>
  cohortIds: (teamId: number) => Promise<number[]>
  clock: () => Date
}) {
  const db = deps.persons.db

  function context(team: PersonTeam): RunContext {
    return {
      team: { id: team.id, timezone: team.timezone },
      engineId: `p${team.id}x${crypto.randomUUID().replace(/-/g, '')}`,
      signal: new AbortController().signal,
      stats: { rowsRead: 0, bytesRead: 0, resultRows: 0 },
    }
  }

  async function distinctIdsOf(personIds: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>(personIds.map((id) => [id, []]))
    for (let i = 0; i < personIds.length; i += 500) {
      const rows = await db
        .selectFrom('person_distinct_ids')
        .select(['person_id', 'distinct_id'])
        .where('person_id', 'in', personIds.slice(i, i + 500))
        .orderBy('distinct_id')
        .execute()
      for (const r of rows) out.get(r.person_id)?.push(r.distinct_id)
    }
    return out
  }

  async function rowsByIds(teamId: number, ids: string[]): Promise<Person[]> {
    if (ids.length === 0) return []
    const rows = new Map<string, PersonRow>()
    for (let i = 0; i < ids.length; i += 500) {
      // By id alone: with `team_id = ?` beside a list of ids, SQLite picks the (team_id, created_at) index and
      // walks every person of the project instead of looking up each id.
      const chunk = await db
        .selectFrom('persons')
        .selectAll()
        .where('id', 'in', ids.slice(i, i + 500))
        .execute()
      for (const r of chunk) if (Number(r.team_id) === teamId) rows.set(r.id, r)
    }
    const found = ids.filter((id) => rows.has(id))
    const distinctIds = await distinctIdsOf(found)
    return found.map((id) => toPerson(rows.get(id) as PersonRow, distinctIds.get(id) ?? []))
  }

  /** The HogQL conditions of a list request, over `raw_persons` (see list-query.ts). */
  function conditions(query: PersonListQuery): PersonListConditions {
    const rows: string[] = []
    const cheap: string[] = []
    const ids: string[] = []
    const byDistinctId = (id: string) =>
      `id IN (SELECT person_id FROM person_distinct_ids WHERE distinct_id = ${literal(id)})`
    if (query.properties !== undefined) {
      let expr: string | undefined
      const filters = parseFilters(query.properties, 'properties')
      try {
        expr = propertiesToHogQL(filters, 'persons')
      } catch (error) {
        if (error instanceof ValidationError) throw new ValidationError(error.detail, 'properties', error.code)
        throw error
      }
      if (expr) {
        rows.push(expr)
        const necessary = cheapCondition(filters)
        if (necessary) cheap.push(necessary)
      }
    }
    if (query.email !== undefined) {
      rows.push(`properties.email = ${literal(query.email)}`)
      const necessary = cheapCondition({ key: 'email', value: query.email })
      if (necessary) cheap.push(necessary)
    }
    if (query.distinct_id !== undefined) ids.push(byDistinctId(query.distinct_id))
    if (query.cohort !== undefined) ids.push(`id IN COHORT ${query.cohort}`)
    const search = query.search?.trim()
    if (search) {
      const pattern = literal(`%${likeEscaped(search)}%`)
      const parts = [`properties.email ILIKE ${pattern}`, `properties.name ILIKE ${pattern}`, byDistinctId(search)]
      if (UUID.test(search)) parts.push(`id = ${literal(search.toLowerCase())}`)
      rows.push(parts.join(' OR '))
    }
    return { rows, cheap, ids }
  }

  async function load(teamId: number, idOrUuid: string): Promise<PersonRow> {
    if (!UUID.test(idOrUuid)) {
      throw new ValidationError(
        `The ID provided does not look like a personID. If you are using a distinctId, please use /persons?distinct_id=${idOrUuid} instead.`,
        'id',
      )
    }
    const row = await deps.persons.getById(teamId, idOrUuid.toLowerCase())
    if (!row) throw new NotFound('Person not found.')
    return row
  }

  async function log(team: PersonTeam, actor: PersonActor, personId: string, activity: string, detail: object) {
    await deps.activity.log({
      organizationId: team.organizationId,
      teamId: team.id,
      userId: actor.userId,
      scope: 'Person',
      itemId: personId,
      activity,
      detail: { id: personId, ...detail },
      createdAt: deps.clock().toISOString(),
    })
  }

  async function captureFor(team: PersonTeam, row: PersonRow, event: string, properties: object) {
    const [distinctId] = (await distinctIdsOf([row.id])).get(row.id) ?? []
    if (distinctId === undefined) throw new NotFound('Person not found.')
    await deps.capture(team.apiToken, [
      { event, distinct_id: distinctId, properties, timestamp: deps.clock().toISOString() },
    ])
  }

  /** Removes persons and their distinct ids, recording (in the same transaction) what the event store must drop. */
  async function remove(
    team: PersonTeam,
    actor: PersonActor,
    targets: { row: PersonRow | null; distinctIds: string[] }[],
    deleteEvents: boolean,
  ): Promise<string[]> {
    const ids: string[] = []
    const removed: { row: PersonRow | null; distinctIds: string[] }[] = []
    await db.transaction().execute(async (tx) => {
      // Ingestion in any process writes these persons under the same lock.
      await deps.persons.lockProject(tx, team.id)
      for (const target of targets) {
        let distinctIds = target.distinctIds
        if (target.row) {
          // Read inside the transaction: the ids the person has now, not when the request was read.
          distinctIds = (
            await tx
              .selectFrom('person_distinct_ids')
              .select('distinct_id')
              .where('person_id', '=', target.row.id)
              .execute()
          ).map((r) => r.distinct_id)
          await tx.deleteFrom('person_distinct_ids').where('person_id', '=', target.row.id).execute()
          await tx
            .deleteFrom('feature_flag_hash_key_overrides')
            .where('team_id', '=', team.id)
            .where('person_id', '=', target.row.id)
            .execute()
          const gone = await tx
            .deleteFrom('persons')
            .where('team_id', '=', team.id)
            .where('id', '=', target.row.id)
            .executeTakeFirst()
          if (Number(gone.numDeletedRows) === 0) continue
        }
        if (!target.row && !deleteEvents) continue
        ids.push(
          await deps.deletions.record(tx, {
            teamId: team.id,
            personId: target.row?.id ?? null,
            distinctIds,
            deleteEvents,
            requestedBy: actor.userId,
          }),
        )
        removed.push({ row: target.row, distinctIds })
      }
    })
    const persons: object[] = []
    for (const { row, distinctIds } of removed) {
      deps.invalidate(team.id, distinctIds)
      await deps.remirror(team.id, distinctIds)
      if (!row) continue
      // Gone from person lists at once; the background job then removes the event store's rows for good.
      persons.push({
        team_id: team.id,
        id: row.id,
        properties: row.properties,
        created_at: chTime(row.created_at),
        is_identified: Number(row.is_identified),
        is_deleted: 1,
        version: Number(row.version) + 100,
      })
      await log(team, actor, row.id, 'deleted', { name: row.id, delete_events: deleteEvents })
    }
    if (persons.length > 0) await deps.commit({ events: [], persons, distinctIds: [], groups: [] })
    deps.deletions.kick()
    return ids
  }

  return {
    async list(team: PersonTeam, query: PersonListQuery, csv: boolean) {
      const limit = csv ? CSV_EXPORT_LIMIT : (query.limit ?? DEFAULT_LIMIT)
      const offset = csv ? 0 : (query.offset ?? 0)
      const hogql = personListHogQL(conditions(query), limit, offset)
      const executed = await deps.execute(hogql, context(team))
      const ids = executed.rows.map((r) => String(r[0]))
      const results = await rowsByIds(team.id, ids.slice(0, limit))
      return { results, hasMore: ids.length > limit, limit, offset }
    },

    async get(teamId: number, idOrUuid: string): Promise<Person> {
      const row = await load(teamId, idOrUuid)
      return toPerson(row, (await distinctIdsOf([row.id])).get(row.id) ?? [])
    },

    /** PATCH: `$set` of the given properties, through capture (PostHog's way: 202, applied by ingestion). */
    async setProperties(team: PersonTeam, actor: PersonActor, idOrUuid: string, properties: unknown) {
      if (properties === undefined || properties === null) {
        throw new ValidationError('This field is required.', 'properties', 'required')
      }
      const row = await load(team.id, idOrUuid)
      await captureFor(team, row, '$set', { $set: properties })
      await log(team, actor, row.id, 'updated', {
        changes: [{ type: 'Person', action: 'changed', field: 'properties' }],
      })
    },

    async updateProperty(
      team: PersonTeam,
      actor: PersonActor,
      idOrUuid: string,
      body: { key?: string; value?: unknown },
    ) {
      if (body.value === undefined || body.value === null) {
        throw new ValidationError('This field is required.', 'value', 'required')
      }
      if (body.key === undefined || body.key === '')
        throw new ValidationError('This field is required.', 'key', 'required')
      const row = await load(team.id, idOrUuid)
      await captureFor(team, row, '$set', { $set: { [body.key]: body.value } })
      await log(team, actor, row.id, 'updated', {
        changes: [{ type: 'Person', action: 'changed', field: 'properties' }],
      })
    },

    async deleteProperty(team: PersonTeam, actor: PersonActor, idOrUuid: string, key: string | undefined) {
      if (key === undefined || key === '') throw new ValidationError('This field is required.', '$unset', 'required')
      const row = await load(team.id, idOrUuid)
      await captureFor(team, row, '$delete_person_property', { $unset: [key] })
      await log(team, actor, row.id, 'delete_property', { changes: [{ type: 'Person', action: 'changed' }] })
    },

    /**
     * Gives every distinct id but the main one (the first, unless named) a person of its own, with no properties;
     * the main id keeps the person. Runs at once (PostHog queues it).
     */
    async split(team: PersonTeam, actor: PersonActor, idOrUuid: string, mainDistinctId: string | null | undefined) {
      const row = await load(team.id, idOrUuid)
      const moved: string[] = []
      await db.transaction().execute(async (tx) => {
        await deps.persons.lockProject(tx, team.id)
        const ids = (
          await tx
            .selectFrom('person_distinct_ids')
            .select(['distinct_id', 'version'])
            .where('person_id', '=', row.id)
            .orderBy('distinct_id')
            .execute()
        ).map((r) => ({ id: r.distinct_id, version: Number(r.version) }))
        if (mainDistinctId && !ids.some((d) => d.id === mainDistinctId)) {
          throw new ValidationError('main_distinct_id is not a distinct id of this person.', 'main_distinct_id')
        }
        const main = mainDistinctId ?? ids[0]?.id
        const createdAt = deps.clock().toISOString()
        for (const d of ids) {
          if (d.id === main) continue
          const id = crypto.randomUUID()
          await tx
            .insertInto('persons')
            .values({ id, team_id: team.id, properties: '{}', is_identified: 0, version: 0, created_at: createdAt })
            .execute()
          await tx
            .updateTable('person_distinct_ids')
            .set({ person_id: id, version: d.version + 1 })
            .where('team_id', '=', team.id)
            .where('distinct_id', '=', d.id)
            .execute()
          moved.push(d.id)
        }
      })
      if (moved.length > 0) {
        deps.invalidate(team.id, moved)
        await deps.commit({ events: [], ...(await deps.remirror(team.id, moved)) })
      }
      await log(team, actor, row.id, 'split_person', {
        name: row.id,
        changes: [{ type: 'Person', action: 'split', after: { distinct_ids: moved } }],
      })
    },

    async delete(team: PersonTeam, actor: PersonActor, idOrUuid: string, deleteEvents: boolean) {
      const row = await load(team.id, idOrUuid)
      const [id] = await remove(team, actor, [{ row, distinctIds: [] }], deleteEvents)
      return id
    },

    /**
     * Bulk deletion by person ids or distinct ids (a GDPR request names the user's distinct id): each person with
     * all its distinct ids; a distinct id without a person still has its events deleted when asked.
     */
    async bulkDelete(
      team: PersonTeam,
      actor: PersonActor,
      body: { ids?: string[]; distinct_ids?: string[]; delete_events?: boolean },
    ) {
      const targets: { row: PersonRow | null; distinctIds: string[] }[] = []
      const seen = new Set<string>()
      if (body.distinct_ids && body.distinct_ids.length > 0) {
        const personless: string[] = []
        for (const distinctId of new Set(body.distinct_ids)) {
          const row = await deps.persons.getByDistinctId(team.id, distinctId)
          if (!row) personless.push(distinctId)
          else if (!seen.has(row.id)) {
            seen.add(row.id)
            targets.push({ row, distinctIds: [] })
          }
        }
        if (personless.length > 0) targets.push({ row: null, distinctIds: personless })
      } else if (body.ids && body.ids.length > 0) {
        for (const id of new Set(body.ids)) {
          if (!UUID.test(id)) continue
          const row = await deps.persons.getById(team.id, id.toLowerCase())
          if (row && !seen.has(row.id)) {
            seen.add(row.id)
            targets.push({ row, distinctIds: [] })
          }
        }
      } else {
        throw new ValidationError('You need to specify either distinct_ids or ids', 'ids')
      }
      const ids = await remove(team, actor, targets, body.delete_events === true)
      const rows = await Promise.all(ids.map((id) => deps.deletions.get(team.id, id)))
      return rows.filter((r) => r !== undefined).map((r) => toDeletion(r))
    },

    async deletion(teamId: number, id: string): Promise<PersonDeletion> {
      const row = UUID.test(id) ? await deps.deletions.get(teamId, id) : undefined
      if (!row) throw new NotFound()
      return toDeletion(row)
    },

    /** The cohorts the person is in (dynamic ones evaluated now, static ones by membership). */
    async cohorts(team: PersonTeam, idOrUuid: string | undefined): Promise<number[]> {
      if (idOrUuid === undefined || idOrUuid === '') {
        throw new ValidationError('This field is required.', 'person_id', 'required')
      }
      const row = await load(team.id, idOrUuid)
      const cohortIds = await deps.cohortIds(team.id)
      if (cohortIds.length === 0) return []
      const found: number[] = []
      // One query per cohort: a cohort whose definition cannot be evaluated leaves the others their answer.
      for (const cohortId of cohortIds) {
        try {
          const executed = await deps.execute(
            `SELECT count() FROM persons WHERE id = ${literal(row.id)} AND id IN COHORT ${cohortId}`,
            context(team),
          )
          if (Number(executed.rows[0]?.[0] ?? 0) > 0) found.push(cohortId)
        } catch {}
      }
      return found
    },

    /** A person property's most common values (the property filter's suggestions). */
    async values(team: PersonTeam, key: string | undefined, value: string | undefined) {
      if (!key) return []
      const where = [`properties[${literal(key)}] IS NOT NULL`]
      if (value) where.push(`toString(properties[${literal(key)}]) ILIKE ${literal(`%${likeEscaped(value)}%`)}`)
      const executed = await deps.execute(
        `SELECT properties[${literal(key)}] AS value, count() AS c FROM persons WHERE ${where.join(' AND ')} GROUP BY value ORDER BY c DESC, value LIMIT 100`,
        context(team),
      )
      return executed.rows.map(([name, count]) => ({ name, count: Number(count) }))
    },
  }
}

export type PersonService = ReturnType<typeof createPersonService>

/** rest_framework_csv's flattening: nested keys joined with dots, list items by index. */
export function toCsv(rows: Record<string, unknown>[]): string {
  const flat = rows.map((row) => {
    const out: Record<string, string> = {}
    const walk = (value: unknown, path: string) => {
      if (value !== null && typeof value === 'object') {
        const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value)
        for (const [k, v] of entries) walk(v, path ? `${path}.${k}` : k)
      } else out[path] = value === null || value === undefined ? '' : String(value)
    }
    walk(row, '')
    return out
  })
  const header: string[] = []
  const seen = new Set<string>()
  for (const row of flat) {
    for (const k of Object.keys(row)) {
      if (!seen.has(k)) {
        seen.add(k)
        header.push(k)
      }
    }
  }
  const cell = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v)
  const lines = [header.map(cell).join(',')]
  for (const row of flat) lines.push(header.map((k) => cell(row[k] ?? '')).join(','))
  return `${lines.join('\r\n')}\r\n`
}
