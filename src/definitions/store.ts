import { randomUUID } from 'node:crypto'
import {
  type Expression,
  type ExpressionBuilder,
  type Generated,
  type Kysely,
  type Selectable,
  type SqlBool,
  sql,
  type Updateable,
} from 'kysely'
import type { MetaDatabase } from '../storage/meta/schema.js'

export interface PropertyDefinitionTable {
  id: string
  team_id: number
  name: string
  /** 1 event, 2 person, 3 group, 4 session. */
  type: number
  /** -1 unless `type` is group. */
  group_type_index: number
  is_numerical: number
  property_type: string | null
  tags: Generated<string>
  description: string | null
  verified: Generated<number>
  verified_at: string | null
  verified_by: number | null
  hidden: Generated<number>
  volume_30_day: number | null
  query_usage_30_day: number | null
  updated_at: string | null
  updated_by: number | null
}

export interface EventDefinitionTable {
  id: string
  team_id: number
  name: string
  description: string | null
  tags: Generated<string>
  owner: number | null
  verified: Generated<number>
  verified_at: string | null
  verified_by: number | null
  hidden: Generated<number>
  created_at: string | null
  created_by: number | null
  last_seen_at: string | null
  updated_at: string | null
  updated_by: number | null
}

export interface EventPropertyTable {
  team_id: number
  event: string
  property: string
}

export type DefinitionTables = {
  property_definitions: PropertyDefinitionTable
  event_definitions: EventDefinitionTable
  event_properties: EventPropertyTable
}

export type PropertyDefinitionRow = Selectable<PropertyDefinitionTable>
export type EventDefinitionRow = Selectable<EventDefinitionTable>
type Db = Kysely<MetaDatabase & DefinitionTables>

/**
 * One search word: the name contains `contains` (ignoring case), or is one of `orNames` (matched by its label), or,
 * when `orLacks` is set, does not contain that text (PostHog's "latest" finds every person property not `initial`).
 */
export interface SearchTerm {
  contains: string
  orNames: string[]
  orLacks?: string
}

export interface PropertyListFilter {
  type: number
  groupTypeIndex: number
  search: SearchTerm[]
  /** null: `is_seen_on_filtered_events` is not computed. */
  eventNames: string[] | null
  onlySeenOnEvents: boolean
  names: string[] | null
  excludedNames: string[]
  excludedPrefixes: string[]
  excludeHidden: boolean
  numericalOnly: boolean
  isFeatureFlag: boolean | null
}

export interface EventListFilter {
  search: SearchTerm[]
  /** Exact names to keep; empty keeps every name. */
  names: string[]
  /** Keep only definitions seen since this instant, or never seen (declared by hand); null keeps all. */
  seenSince: string | null
  /** true: only names starting with `$`; false: only the others; null: both. */
  posthogEvents: boolean | null
  excludeHidden: boolean
  excludedNames: string[]
  tags: string[]
}

export type EventOrdering = {
  field: 'name' | 'name_length' | 'last_seen_at' | 'last_seen_date' | 'created_at' | 'created_date'
  descending: boolean
}

export interface DiscoveredProperty {
  name: string
  type: number
  groupTypeIndex: number
  propertyType: string | null
}

// Well under SQLite's 32,766 and PostgreSQL's 65,535 bound parameters per statement.
const ROWS_PER_STATEMENT = 500

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += ROWS_PER_STATEMENT) out.push(items.slice(i, i + ROWS_PER_STATEMENT))
  return out
}

const containsPattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

// substr rather than LIKE: exact and case-sensitive on both dialects (SQLite's LIKE ignores ASCII case).
const startsWith = (ref: Expression<string>, prefix: string) =>
  sql<SqlBool>`substr(${ref}, 1, ${sql.lit(prefix.length)}) = ${prefix}`

function searchCondition<T extends 'property_definitions' | 'event_definitions'>(
  eb: ExpressionBuilder<DefinitionTables, T>,
  column: 'name',
  term: SearchTerm,
) {
  const ref = eb.ref(column as never)
  const options = [sql<SqlBool>`lower(${ref}) like ${containsPattern(term.contains.toLowerCase())} escape '\\'`]
  if (term.orNames.length > 0) options.push(sql<SqlBool>`${ref} in (${sql.join(term.orNames)})`)
  if (term.orLacks)
    options.push(sql<SqlBool>`lower(${ref}) not like ${containsPattern(term.orLacks.toLowerCase())} escape '\\'`)
  return eb.or(options)
}

/** Property and event definitions and the (event, property) pairs seen together: the SQL for this domain. */
export function createDefinitionStore(metaDb: Kysely<MetaDatabase>) {
  const db: Db = metaDb.withTables<DefinitionTables>()

  const propertyFilter =
    (teamId: number, f: PropertyListFilter) => (eb: ExpressionBuilder<DefinitionTables, 'property_definitions'>) => {
      const conditions: Expression<SqlBool>[] = [
        eb('team_id', '=', teamId),
        eb('type', '=', f.type),
        eb('group_type_index', '=', f.groupTypeIndex),
        ...f.search.map((term) => searchCondition(eb, 'name', term)),
      ]
      if (f.names) conditions.push(f.names.length > 0 ? eb('name', 'in', f.names) : sql<SqlBool>`1 = 0`)
      if (f.excludedNames.length > 0) conditions.push(eb('name', 'not in', f.excludedNames))
      for (const prefix of f.excludedPrefixes) conditions.push(eb.not(startsWith(eb.ref('name'), prefix)))
      if (f.excludeHidden) conditions.push(eb('hidden', '=', 0))
      if (f.numericalOnly) {
        conditions.push(eb('is_numerical', '=', 1), eb('name', 'not in', ['distinct_id', 'timestamp']))
      }
      if (f.isFeatureFlag !== null) {
        const isFlag = startsWith(eb.ref('name'), '$feature/')
        conditions.push(f.isFeatureFlag ? isFlag : eb.not(isFlag))
      }
      if (f.eventNames && f.onlySeenOnEvents) conditions.push(seenOn(eb, teamId, f.eventNames))
      return eb.and(conditions)
    }

  const seenOn = (eb: ExpressionBuilder<DefinitionTables, 'property_definitions'>, teamId: number, events: string[]) =>
    events.length === 0
      ? sql<SqlBool>`1 = 0`
      : eb.exists(
          eb
            .selectFrom('event_properties')
            .select(sql`1`.as('one'))
            .whereRef('event_properties.property', '=', 'property_definitions.name')
            .where('event_properties.team_id', '=', teamId)
            .where('event_properties.event', 'in', events),
        )

  const eventFilter =
    (teamId: number, f: EventListFilter) => (eb: ExpressionBuilder<DefinitionTables, 'event_definitions'>) => {
      const conditions: Expression<SqlBool>[] = [
        eb('team_id', '=', teamId),
        ...f.search.map((term) => searchCondition(eb, 'name', term)),
      ]
      if (f.posthogEvents !== null) {
        const isPosthog = startsWith(eb.ref('name'), '$')
        conditions.push(f.posthogEvents ? isPosthog : eb.not(isPosthog))
      }
      if (f.excludeHidden) conditions.push(eb('hidden', '=', 0))
      if (f.excludedNames.length > 0) conditions.push(eb('name', 'not in', f.excludedNames))
      if (f.names.length > 0) conditions.push(eb('name', 'in', f.names))
      if (f.seenSince !== null)
        conditions.push(eb.or([eb('last_seen_at', 'is', null), eb('last_seen_at', '>', f.seenSince)]))
      if (f.tags.length > 0) {
        // Tags are stored as a JSON array of strings, so a quoted tag can only match a whole element.
        const hasTag = (tag: string) => sql<SqlBool>`tags like ${containsPattern(JSON.stringify(tag))} escape '\\'`
        conditions.push(eb.or(f.tags.map(hasTag)))
      }
      return eb.and(conditions)
    }

  return {
    // ---- discovery -------------------------------------------------------------------------------------------

    /** Creates missing event definitions and moves `last_seen_at` forward, never back. */
    async upsertEventDefinitions(teamId: number, names: string[], lastSeenAt: string, createdAt: string) {
      for (const part of chunks([...names].sort())) {
        await db
          .insertInto('event_definitions')
          .values(
            part.map((name) => ({
              id: randomUUID(),
              team_id: teamId,
              name,
              created_at: createdAt,
              last_seen_at: lastSeenAt,
            })),
          )
          .onConflict((oc) =>
            oc
              .columns(['team_id', 'name'])
              .doUpdateSet({ last_seen_at: (eb) => eb.ref('excluded.last_seen_at') })
              .where((eb) =>
                eb.or([
                  eb('event_definitions.last_seen_at', 'is', null),
                  eb('event_definitions.last_seen_at', '<', eb.ref('excluded.last_seen_at')),
                ]),
              ),
          )
          .execute()
      }
    },

    /** Creates missing property definitions; a type is written only while the stored one is null (first type wins). */
    async upsertPropertyDefinitions(teamId: number, properties: DiscoveredProperty[], now: string) {
      const sorted = [...properties].sort(
        (a, b) =>
          a.type - b.type || a.groupTypeIndex - b.groupTypeIndex || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
      )
      for (const part of chunks(sorted)) {
        await db
          .insertInto('property_definitions')
          .values(
            part.map((p) => ({
              id: randomUUID(),
              team_id: teamId,
              name: p.name,
              type: p.type,
              group_type_index: p.groupTypeIndex,
              property_type: p.propertyType,
              is_numerical: p.propertyType === 'Numeric' ? 1 : 0,
              updated_at: now,
            })),
          )
          .onConflict((oc) =>
            oc
              .columns(['team_id', 'type', 'group_type_index', 'name'])
              .doUpdateSet({
                property_type: (eb) => eb.ref('excluded.property_type'),
                is_numerical: (eb) => eb.ref('excluded.is_numerical'),
              })
              .where((eb) =>
                eb.and([
                  eb('property_definitions.property_type', 'is', null),
                  eb('excluded.property_type', 'is not', null),
                ]),
              ),
          )
          .execute()
      }
    },

    async insertEventProperties(teamId: number, pairs: { event: string; property: string }[]) {
      const sorted = [...pairs].sort((a, b) =>
        a.event < b.event ? -1 : a.event > b.event ? 1 : a.property < b.property ? -1 : a.property > b.property ? 1 : 0,
      )
      for (const part of chunks(sorted)) {
        await db
          .insertInto('event_properties')
          .values(part.map((p) => ({ team_id: teamId, event: p.event, property: p.property })))
          .onConflict((oc) => oc.doNothing())
          .execute()
      }
    },

    typedProperties: (teamId: number) =>
      db
        .selectFrom('property_definitions')
        .select(['name', 'type', 'property_type'])
        .where('team_id', '=', teamId)
        .where('type', 'in', [1, 2, 3])
        .where('property_type', 'is not', null)
        .orderBy('type')
        .orderBy('group_type_index')
        .execute(),

    // ---- property definitions ---------------------------------------------------------------------------------

    async listPropertyDefinitions(teamId: number, f: PropertyListFilter, limit: number, offset: number) {
      const where = propertyFilter(teamId, f)
      const counted = await db
        .selectFrom('property_definitions')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where(where)
        .executeTakeFirstOrThrow()
      const eventNames = f.eventNames
      const rows = await db
        .selectFrom('property_definitions')
        .selectAll()
        .select((eb) => {
          const isSeen = eventNames ? seenOn(eb, teamId, eventNames) : sql<SqlBool>`null`
          return sql<number | boolean | null>`${isSeen}`.as('is_seen')
        })
        .where(where)
        .$if(eventNames !== null, (q) => q.orderBy('is_seen', 'desc'))
        .orderBy('verified', 'desc')
        .orderBy('name', 'asc')
        .limit(limit)
        .offset(offset)
        .execute()
      return { count: Number(counted.count), rows }
    },

    getPropertyDefinition: (teamId: number, id: string) =>
      db
        .selectFrom('property_definitions')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .executeTakeFirst(),

    findPropertyDefinition: (teamId: number, name: string, type: number, groupTypeIndex: number) =>
      db
        .selectFrom('property_definitions')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('name', '=', name)
        .where('type', '=', type)
        .where('group_type_index', '=', groupTypeIndex)
        .executeTakeFirst(),

    updatePropertyDefinition: (teamId: number, id: string, patch: Updateable<PropertyDefinitionTable>) =>
      db
        .updateTable('property_definitions')
        .set(patch)
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst(),

    deletePropertyDefinition: (teamId: number, id: string) =>
      db.deleteFrom('property_definitions').where('team_id', '=', teamId).where('id', '=', id).execute(),

    /** The subset of `events` on which `property` has been seen. */
    async eventsSeenWith(teamId: number, events: string[], property: string): Promise<Set<string>> {
      if (events.length === 0) return new Set()
      const rows = await db
        .selectFrom('event_properties')
        .select('event')
        .where('team_id', '=', teamId)
        .where('property', '=', property)
        .where('event', 'in', events)
        .execute()
      return new Set(rows.map((r) => r.event))
    },

    // ---- event definitions ------------------------------------------------------------------------------------

    async listEventDefinitions(
      teamId: number,
      f: EventListFilter,
      ordering: EventOrdering[],
      limit: number,
      offset: number,
    ) {
      const where = eventFilter(teamId, f)
      const counted = await db
        .selectFrom('event_definitions')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where(where)
        .executeTakeFirstOrThrow()
      let q = db.selectFrom('event_definitions').selectAll().where(where)
      for (const o of ordering) {
        const direction = o.descending ? sql`desc` : sql`asc`
        if (o.field === 'name') q = q.orderBy(sql`name ${direction}`)
        else if (o.field === 'name_length') q = q.orderBy(sql`length(name) ${direction}`)
        else {
          // Never-seen definitions (created by hand) sort last either way, on both dialects.
          const column = o.field === 'created_at' || o.field === 'created_date' ? sql`created_at` : sql`last_seen_at`
          const byDay = o.field === 'last_seen_date' || o.field === 'created_date'
          const value = byDay ? sql`substr(${column}, 1, 10)` : column
          q = q.orderBy(sql`case when ${column} is null then 1 else 0 end`).orderBy(sql`${value} ${direction}`)
        }
      }
      const rows = await q.orderBy('id').limit(limit).offset(offset).execute()
      return { count: Number(counted.count), rows }
    },

    getEventDefinition: (teamId: number, id: string) =>
      db
        .selectFrom('event_definitions')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .executeTakeFirst(),

    getEventDefinitionByName: (teamId: number, name: string) =>
      db
        .selectFrom('event_definitions')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('name', '=', name)
        .executeTakeFirst(),

    /** Undefined when the name is taken (also when a concurrent insert won the race). */
    insertEventDefinition: (row: Omit<EventDefinitionRow, 'id'>) =>
      db
        .insertInto('event_definitions')
        .values({ ...row, id: randomUUID() })
        .onConflict((oc) => oc.columns(['team_id', 'name']).doNothing())
        .returningAll()
        .executeTakeFirst(),

    updateEventDefinition: (teamId: number, id: string, patch: Updateable<EventDefinitionTable>) =>
      db
        .updateTable('event_definitions')
        .set(patch)
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst(),

    deleteEventDefinition: (teamId: number, id: string) =>
      db.deleteFrom('event_definitions').where('team_id', '=', teamId).where('id', '=', id).execute(),

    /** Every event definition's name with the typed event properties seen on it. */
    async eventSchemas(teamId: number) {
      const events = await db.selectFrom('event_definitions').select('name').where('team_id', '=', teamId).execute()
      const pairs = await db
        .selectFrom('event_properties')
        .leftJoin('property_definitions', (join) =>
          join
            .onRef('property_definitions.name', '=', 'event_properties.property')
            .on('property_definitions.team_id', '=', teamId)
            .on('property_definitions.type', '=', 1)
            .on('property_definitions.group_type_index', '=', -1),
        )
        .select(['event_properties.event', 'event_properties.property', 'property_definitions.property_type'])
        .where('event_properties.team_id', '=', teamId)
        .execute()
      return { events: events.map((e) => e.name), pairs }
    },

    usersByIds: (ids: number[]) =>
      ids.length === 0
        ? Promise.resolve([])
        : db
            .selectFrom('users')
            .select(['id', 'uuid', 'first_name', 'last_name', 'email', 'is_email_verified'])
            .where('id', 'in', ids)
            .execute(),
  }
}
export type DefinitionStore = ReturnType<typeof createDefinitionStore>
