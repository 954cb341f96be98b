/**
 * The events API (PostHog's `/events/`): newest first, filtered, a `before` cursor in the `next` link. Every read is
 * HogQL, so the compiler confines it to the project.
 */
import crypto from 'node:crypto'
import { NotFound, ValidationError } from '../http/errors.js'
import { isAnonymousId } from '../persons/service.js'
import type { PersonStore } from '../persons/store.js'
import { literal, propertiesToHogQL } from '../queries/filters.js'
import type { HogQLExecutor, RunContext } from '../queries/runner.js'
import type { ClickhouseEvent, EventListQuery } from './schemas.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const COLUMNS = 'uuid, event, properties, timestamp, distinct_id, elements_chain'
const DEFAULT_LIMIT = 100
/** PostHog's event list first looks at the recent week and reads further back only when that is not a full page. */
const RECENT_DAYS = 7
const HIDDEN_EVENTS = ['$autocapture', '$pageview', '$identify', '$pageleave', '$screen']

export interface EventTeam {
  id: number
  timezone: string
}

function isoOf(value: string | undefined, attr: string): string | undefined {
  if (value === undefined || value === '') return undefined
  const ms = Date.parse(value)
  if (Number.isNaN(ms)) throw new ValidationError(`"${value}" is not a valid date.`, attr)
  return new Date(ms).toISOString()
}

const hogqlTime = (iso: string) => `toDateTime64(${literal(iso.replace('T', ' ').replace('Z', ''))}, 6, 'UTC')`

function parseJson(text: unknown): Record<string, unknown> {
  if (typeof text !== 'string') return {}
  try {
    const value = JSON.parse(text)
    return value && typeof value === 'object' && !Array.isArray(value) ? value : {}
  } catch {
    return {}
  }
}

export function createEventService(deps: { execute: HogQLExecutor; persons: Pick<PersonStore, 'db'> }) {
  function context(team: EventTeam): RunContext {
    return {
      team,
      engineId: `e${team.id}x${crypto.randomUUID().replace(/-/g, '')}`,
      signal: new AbortController().signal,
      stats: { rowsRead: 0, bytesRead: 0, resultRows: 0 },
    }
  }

  /** PostHog's short person on each event: identified or not, the first distinct id, name-like properties. */
  async function peopleOf(teamId: number, distinctIds: string[]) {
    const out = new Map<string, ClickhouseEvent['person']>()
    const unique = [...new Set(distinctIds)]
    for (let i = 0; i < unique.length; i += 500) {
      const rows = await deps.persons.db
        .selectFrom('person_distinct_ids')
        .innerJoin('persons', 'persons.id', 'person_distinct_ids.person_id')
        .select(['person_distinct_ids.distinct_id', 'persons.id', 'persons.properties', 'persons.is_identified'])
        .where('person_distinct_ids.team_id', '=', teamId)
        .where('person_distinct_ids.distinct_id', 'in', unique.slice(i, i + 500))
        .execute()
      const firstIds = new Map<string, string>()
      const personIds = [...new Set(rows.map((r) => r.id))]
      if (personIds.length > 0) {
        const all = await deps.persons.db
          .selectFrom('person_distinct_ids')
          .select(['person_id', 'distinct_id'])
          .where('person_id', 'in', personIds)
          .orderBy('distinct_id')
          .execute()
        // The identified id first, as on the person itself.
        for (const r of all) {
          const known = firstIds.get(r.person_id)
          if (known === undefined || (isAnonymousId(known) && !isAnonymousId(r.distinct_id))) {
            firstIds.set(r.person_id, r.distinct_id)
          }
        }
      }
      for (const r of rows) {
        const props = parseJson(r.properties)
        const shown: Record<string, unknown> = {}
        for (const k of ['email', 'name', 'username']) if (k in props) shown[k] = props[k]
        out.set(r.distinct_id, {
          is_identified: Number(r.is_identified) === 1,
          distinct_ids: [firstIds.get(r.id) ?? r.distinct_id],
          properties: shown,
        })
      }
    }
    return out
  }

  async function shape(teamId: number, rows: unknown[][]): Promise<ClickhouseEvent[]> {
    const people = await peopleOf(
      teamId,
      rows.map((r) => String(r[4])),
    )
    return rows.map(([uuid, event, properties, timestamp, distinctId, elementsChain]) => ({
      id: String(uuid),
      distinct_id: String(distinctId),
      properties: parseJson(properties),
      event: String(event),
      timestamp: String(timestamp),
      person: people.get(String(distinctId)) ?? null,
      elements: [],
      elements_chain: String(elementsChain ?? ''),
    }))
  }

  function conditions(query: EventListQuery): string[] {
    const where: string[] = []
    if (query.event) where.push(`event = ${literal(query.event)}`)
    if (query.distinct_id !== undefined) where.push(`distinct_id = ${literal(query.distinct_id)}`)
    if (query.person_id !== undefined) {
      if (!UUID.test(query.person_id)) throw new ValidationError('person_id must be a person UUID.', 'person_id')
      where.push(
        `distinct_id IN (SELECT distinct_id FROM person_distinct_ids WHERE person_id = ${literal(query.person_id.toLowerCase())})`,
      )
    }
    if (query.properties !== undefined && query.properties !== '') {
      let filters: unknown
      try {
        filters = JSON.parse(query.properties)
      } catch {
        throw new ValidationError('Properties are unparsable!', 'properties')
      }
      try {
        const expr = propertiesToHogQL(filters)
        if (expr) where.push(expr)
      } catch (error) {
        if (error instanceof ValidationError) throw new ValidationError(error.detail, 'properties', error.code)
        throw error
      }
    }
    const before = isoOf(query.before, 'before')
    const after = isoOf(query.after, 'after')
    // Events from a skewed clock far in the future stay out, as in PostHog.
    where.push(before ? `timestamp < ${hogqlTime(before)}` : 'timestamp < now() + INTERVAL 5 SECOND')
    if (after) where.push(`timestamp > ${hogqlTime(after)}`)
    return where
  }

  const select = (where: string[], limit: number) =>
    `SELECT ${COLUMNS} FROM events WHERE ${where.map((w) => `(${w})`).join(' AND ')} ` +
    `ORDER BY timestamp DESC, uuid DESC LIMIT ${limit}`

  return {
    async list(team: EventTeam, query: EventListQuery) {
      const limit = query.limit ?? DEFAULT_LIMIT
      const where = conditions(query)
      let rows: unknown[][] | undefined
      if (!query.after) {
        const recent = await deps.execute(
          select([...where, `timestamp > now() - INTERVAL ${RECENT_DAYS} DAY`], limit + 1),
          context(team),
        )
        if (recent.rows.length > limit) rows = recent.rows
      }
      rows ??= (await deps.execute(select(where, limit + 1), context(team))).rows
      const page = rows.slice(0, limit)
      const results = await shape(team.id, page)
      const last = results.at(-1)
      return { results, nextBefore: rows.length > limit && last ? last.timestamp : null }
    },

    async get(team: EventTeam, id: string): Promise<ClickhouseEvent> {
      if (!UUID.test(id)) throw new NotFound()
      const executed = await deps.execute(
        `SELECT ${COLUMNS} FROM events WHERE uuid = ${literal(id.toLowerCase())} LIMIT 1`,
        context(team),
      )
      if (executed.rows.length === 0) throw new NotFound()
      return (await shape(team.id, executed.rows))[0]
    },

    /** A property's most common values over the last week (PostHog samples recent events the same way). */
    async values(team: EventTeam, key: string | undefined, value: string | undefined, eventName: string | undefined) {
      if (!key) throw new ValidationError('This field is required.', 'key', 'required')
      const recent = `timestamp > now() - INTERVAL ${RECENT_DAYS} DAY`
      if (key === 'custom_event') {
        const executed = await deps.execute(
          `SELECT event, count() AS c FROM events WHERE ${recent} AND event NOT IN (${HIDDEN_EVENTS.map(literal).join(', ')}) GROUP BY event ORDER BY c DESC, event LIMIT 100`,
          context(team),
        )
        return executed.rows.map(([name]) => ({ name }))
      }
      const field = `properties[${literal(key)}]`
      const where = [recent, `${field} IS NOT NULL`]
      if (value) where.push(`toString(${field}) ILIKE ${literal(`%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)}`)
      if (eventName) where.push(`event = ${literal(eventName)}`)
      const executed = await deps.execute(
        `SELECT ${field} AS value, count() AS c FROM events WHERE ${where.map((w) => `(${w})`).join(' AND ')} GROUP BY value ORDER BY c DESC, value LIMIT 50`,
        context(team),
      )
      return executed.rows.map(([name]) => ({ name }))
    },
  }
}

export type EventService = ReturnType<typeof createEventService>
