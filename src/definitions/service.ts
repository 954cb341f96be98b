import type { ActivityStore } from '../activity/store.js'
import { NotFound, ValidationError } from '../http/errors.js'
import type { EventStore } from '../storage/events/types.js'
import { type CodegenLanguage, type CodegenPropertyType, generateEventCode } from './codegen/index.js'
import { isEventLinked } from './extract.js'
import {
  ALWAYS_HIDDEN_PROPERTIES,
  CORE_EVENT_LABELS,
  CORE_PROPERTY_LABELS,
  type EventDefinition,
  type EventDefinitionCreate,
  type EventDefinitionUpdate,
  HIDDEN_EVENT_PROPERTY_PREFIX,
  PROPERTY_KINDS,
  PROPERTY_TYPES,
  type PropertyDefinition,
  type PropertyDefinitionUpdate,
  type PropertyKind,
  SESSION_PROPERTIES,
  type UserBasic,
} from './schemas.js'
import type {
  DefinitionStore,
  DiscoveredProperty,
  EventDefinitionRow,
  EventListFilter,
  EventOrdering,
  PropertyDefinitionRow,
  SearchTerm,
} from './store.js'

type Sighting = { name: string; type: string | null }

/** What capture learned from one event, as the ingestion pipeline hands it over. */
export interface DiscoveryItem {
  eventName: string
  eventProperties: Sighting[]
  personProperties: Sighting[]
  groupProperties: (Sighting & { groupTypeIndex: number })[]
}

export interface PropertyTypes {
  event: Record<string, string>
  person: Record<string, string>
  group: Record<string, string>
}

export interface PropertyListParams {
  kind: PropertyKind
  groupTypeIndex: number | null
  search: string | null
  eventNames: string[] | null
  filterByEventNames: boolean
  properties: string[] | null
  excludedProperties: string[]
  excludeCoreProperties: boolean
  excludeHidden: boolean
  isNumerical: boolean
  isFeatureFlag: boolean | null
}

export interface EventListParams {
  search: string | null
  eventType: 'event' | 'event_custom' | 'event_posthog'
  excludeHidden: boolean
  /** Leave out events last seen more than STALE_EVENT_DAYS ago (never-seen ones stay). */
  excludeStale: boolean
  excludedNames: string[]
  names: string[]
  tags: string[]
  /** Empty: PostHog's default order (by the day last seen, newest first, then by name). */
  ordering: EventOrdering[]
}

// PostHog's default order; any other ends with `name`, unique per project, so pages never overlap.
const DEFAULT_EVENT_ORDERING: EventOrdering[] = [
  { field: 'last_seen_date', descending: true },
  { field: 'name', descending: false },
]

function eventOrdering(requested: EventOrdering[], searching: boolean): EventOrdering[] {
  const ordering = requested.length > 0 ? [...requested] : [...DEFAULT_EVENT_ORDERING]
  if (!ordering.some((o) => o.field === 'name')) ordering.push({ field: 'name', descending: false })
  // A search without an explicit order puts the shortest names (the closest matches) first, as PostHog does.
  if (searching && requested.length === 0) ordering.unshift({ field: 'name_length', descending: false })
  return ordering
}

/** Who makes a change, for `updated_by`/`verified_by` and the activity log. */
export interface Actor {
  userId: number
  organizationId: string
}

const HOUR_MS = 3_600_000
// PostHog's taxonomy: an event not seen for this many days is stale.
const STALE_EVENT_DAYS = 30
const TYPES_TTL_MS = 60_000
// Caches of what is already stored, so steady-state capture writes nothing; cleared whole when this big.
const MAX_CACHED_KEYS = 200_000
const KNOWN_TYPES = new Set<string>(PROPERTY_TYPES)
const HIDDEN_NAMES = new Set(ALWAYS_HIDDEN_PROPERTIES)

const floorToHour = (date: Date) => new Date(Math.floor(date.getTime() / HOUR_MS) * HOUR_MS).toISOString()
const asBoolean = (value: number | boolean | null) => Boolean(value)

/** PostHog's tagify: trimmed, lower-cased, each tag once. */
export const normalizeTags = (tags: string[]) => [...new Set(tags.map((t) => t.trim().toLowerCase()).filter(Boolean))]

// Person properties read as their latest value unless named `initial`, so PostHog lets a search word that is part of
// "latest" find every person property whose name does not contain "initial".
function searchTerms(
  search: string | null,
  labels: Record<string, string>,
  latestMeansNotInitial = false,
): SearchTerm[] {
  const words = (search ?? '').toLowerCase().split(/\s+/).filter(Boolean)
  return words.map((word) => ({
    contains: word,
    orNames: Object.keys(labels).filter((name) => labels[name].toLowerCase().includes(word)),
    ...(latestMeansNotInitial && 'latest'.includes(word) ? { orLacks: 'initial' } : {}),
  }))
}

function remember<V>(cache: Map<string, V>, key: string, value: V) {
  if (cache.size >= MAX_CACHED_KEYS) cache.clear()
  cache.set(key, value)
}

export function createDefinitionService(deps: {
  store: DefinitionStore
  activity: Pick<ActivityStore, 'log'>
  events: Pick<EventStore, 'query'>
  clock: () => Date
  /** Told when this process changed a team's property types (other processes drop theirs). */
  onPropertyTypesChanged?: (teamId: number) => void
}) {
  const { store, clock } = deps
  const seenEvents = new Map<string, string>()
  const knownProperties = new Map<string, boolean>()
  const knownPairs = new Map<string, true>()
  const typesByTeam = new Map<number, { expires: number; types: Promise<PropertyTypes> }>()
  const typesChanged = (teamId: number) => {
    typesByTeam.delete(teamId)
    deps.onPropertyTypesChanged?.(teamId)
  }

  const propertyKey = (teamId: number, type: number, groupTypeIndex: number, name: string) =>
    `${teamId}\u0000${type}\u0000${groupTypeIndex}\u0000${name}`

  async function usersById(ids: (number | null)[]): Promise<Map<number, UserBasic>> {
    const wanted = [...new Set(ids.filter((id): id is number => id !== null))]
    const users = await store.usersByIds(wanted)
    return new Map(
      users.map((u) => [
        u.id,
        { ...u, distinct_id: u.uuid, is_email_verified: asBoolean(u.is_email_verified) } satisfies UserBasic,
      ]),
    )
  }

  function toPropertyDefinition(
    row: PropertyDefinitionRow,
    isSeen: boolean | null,
    users: Map<number, UserBasic>,
  ): PropertyDefinition {
    return {
      id: row.id,
      name: row.name,
      description: row.description,
      tags: JSON.parse(row.tags) as string[],
      is_numerical: asBoolean(row.is_numerical),
      updated_at: row.updated_at,
      updated_by: (row.updated_by !== null && users.get(row.updated_by)) || null,
      is_seen_on_filtered_events: isSeen,
      property_type: row.property_type,
      verified: asBoolean(row.verified),
      verified_at: row.verified_at,
      verified_by: (row.verified_by !== null && users.get(row.verified_by)) || null,
      hidden: asBoolean(row.hidden),
    }
  }

  function toEventDefinition(row: EventDefinitionRow, users: Map<number, UserBasic>): EventDefinition {
    const user = (id: number | null) => (id !== null && users.get(id)) || null
    return {
      id: row.id,
      name: row.name,
      owner: user(row.owner),
      description: row.description,
      tags: JSON.parse(row.tags) as string[],
      created_at: row.created_at,
      updated_at: row.updated_at,
      updated_by: user(row.updated_by),
      last_seen_at: row.last_seen_at,
      last_updated_at: row.updated_at,
      verified: asBoolean(row.verified),
      verified_at: row.verified_at,
      verified_by: user(row.verified_by),
      hidden: asBoolean(row.hidden),
      is_action: false,
      action_id: null,
      is_calculating: false,
      last_calculated_at: null,
      created_by: user(row.created_by),
      post_to_slack: false,
      default_columns: [],
      volume_30_day: null,
      query_usage_30_day: null,
    }
  }

  const eventDefinitionOut = async (row: EventDefinitionRow) =>
    toEventDefinition(row, await usersById([row.owner, row.updated_by, row.verified_by, row.created_by]))

  async function logChange(
    actor: Actor,
    teamId: number,
    scope: 'PropertyDefinition' | 'EventDefinition',
    activity: 'created' | 'changed' | 'deleted',
    item: { id: string; name: string },
    changes: { field?: string; before?: unknown; after?: unknown }[],
  ) {
    await deps.activity.log({
      organizationId: actor.organizationId,
      teamId,
      userId: actor.userId,
      scope,
      itemId: item.id,
      activity,
      detail: {
        id: item.id,
        name: item.name,
        changes: changes.map((c) => ({ type: scope, action: activity, ...c })),
        merge: null,
        trigger: null,
        short_id: null,
        type: null,
      },
      createdAt: clock().toISOString(),
    })
  }

  function diff<T extends object>(before: T, after: T, fields: (keyof T & string)[]) {
    return fields
      .filter((f) => JSON.stringify(before[f]) !== JSON.stringify(after[f]))
      .map((field) => ({ field, before: before[field], after: after[field] }))
  }

  /** Verified and hidden exclude each other; verifying records who and when. */
  function verificationPatch(
    row: { verified: number; hidden: number },
    input: { verified?: boolean; hidden?: boolean },
    actor: Actor,
    now: string,
    subject: 'property' | 'event',
  ) {
    if (input.verified === true && input.hidden === true) {
      throw new ValidationError(`${subject === 'event' ? 'An event' : 'A property'} cannot be both hidden and verified`)
    }
    const patch: { verified?: number; verified_at?: string | null; verified_by?: number | null; hidden?: number } = {}
    const unverify = () => Object.assign(patch, { verified: 0, verified_at: null, verified_by: null })
    if (input.verified === true && !row.verified) {
      Object.assign(patch, { verified: 1, verified_at: now, verified_by: actor.userId, hidden: 0 })
    } else if (input.verified === false) unverify()
    if (input.hidden === true) {
      patch.hidden = 1
      unverify()
    } else if (input.hidden === false) patch.hidden = 0
    return patch
  }

  const sessionDefinitions = (p: PropertyListParams): PropertyDefinition[] => {
    const words = (p.search ?? '').toLowerCase().split(/\s+/).filter(Boolean)
    return SESSION_PROPERTIES.filter(
      ([name, type]) =>
        words.every((w) => name.toLowerCase().includes(w)) &&
        (!p.properties || p.properties.includes(name)) &&
        !p.excludedProperties.includes(name) &&
        (!p.isNumerical || type === 'Numeric') &&
        (p.isFeatureFlag !== true || name.startsWith('$feature/')),
    ).map(([name, type]) => ({
      id: name,
      name,
      description: null,
      tags: [],
      is_numerical: type === 'Numeric',
      updated_at: null,
      updated_by: null,
      is_seen_on_filtered_events: null,
      property_type: type,
      verified: false,
      verified_at: null,
      verified_by: null,
      hidden: false,
    }))
  }

  async function requireProperty(teamId: number, id: string) {
    const row = await store.getPropertyDefinition(teamId, id)
    if (!row) throw new NotFound()
    return row
  }

  async function requireEvent(teamId: number, id: string) {
    const row = await store.getEventDefinition(teamId, id)
    if (!row) throw new NotFound()
    return row
  }

  return {
    /**
     * Records what capture discovered: event definitions (with `last_seen_at`, floored to the hour as PostHog's
     * cache does), property definitions of each kind (first type wins) and (event, property) pairs. Deduplicated in
     * memory, skips what this process already wrote, and upserts the rest in a few statements.
     */
    async recordDiscoveries(teamId: number, items: DiscoveryItem[], seenAt: Date): Promise<void> {
      const lastSeenAt = floorToHour(seenAt)
      const events = new Set<string>()
      const properties = new Map<string, DiscoveredProperty>()
      const pairs = new Map<string, { event: string; property: string }>()
      const addProperty = (type: number, groupTypeIndex: number, s: Sighting) => {
        const key = propertyKey(teamId, type, groupTypeIndex, s.name)
        const propertyType = s.type !== null && KNOWN_TYPES.has(s.type) ? s.type : null
        const existing = properties.get(key)
        if (!existing) properties.set(key, { name: s.name, type, groupTypeIndex, propertyType })
        else if (existing.propertyType === null) existing.propertyType = propertyType
      }
      for (const item of items) {
        events.add(item.eventName)
        for (const s of item.eventProperties) {
          addProperty(PROPERTY_KINDS.event, -1, s)
          if (isEventLinked(s.name)) {
            pairs.set(`${teamId}\u0000${item.eventName}\u0000${s.name}`, { event: item.eventName, property: s.name })
          }
        }
        for (const s of item.personProperties) addProperty(PROPERTY_KINDS.person, -1, s)
        for (const s of item.groupProperties) {
          if (Number.isInteger(s.groupTypeIndex) && s.groupTypeIndex >= 0 && s.groupTypeIndex <= 4) {
            addProperty(PROPERTY_KINDS.group, s.groupTypeIndex, s)
          }
        }
      }

      const eventKey = (name: string) => `${teamId}\u0000${name}`
      const newEvents = [...events].filter((name) => (seenEvents.get(eventKey(name)) ?? '') < lastSeenAt)
      const newProperties = [...properties].filter(([key, p]) => {
        const hasType = knownProperties.get(key)
        return hasType === undefined || (!hasType && p.propertyType !== null)
      })
      const newPairs = [...pairs].filter(([key]) => !knownPairs.has(key))

      // Caches are filled only after the writes succeed, so a failed call is retried in full next time.
      if (newEvents.length > 0) {
        await store.upsertEventDefinitions(teamId, newEvents, lastSeenAt, seenAt.toISOString())
        for (const name of newEvents) {
          // A concurrent call for a later hour may have finished first; keep the later hour.
          if ((seenEvents.get(eventKey(name)) ?? '') < lastSeenAt) remember(seenEvents, eventKey(name), lastSeenAt)
        }
      }
      if (newProperties.length > 0) {
        await store.upsertPropertyDefinitions(
          teamId,
          newProperties.map(([, p]) => p),
          seenAt.toISOString(),
        )
        if (newProperties.some(([, p]) => p.propertyType !== null)) typesChanged(teamId)
        for (const [key, p] of newProperties) remember(knownProperties, key, p.propertyType !== null)
      }
      if (newPairs.length > 0) {
        await store.insertEventProperties(
          teamId,
          newPairs.map(([, pair]) => pair),
        )
        for (const [key] of newPairs) remember(knownPairs, key, true)
      }
    },

    /** Drops the team's cached property types (another process changed them). */
    forgetPropertyTypes(teamId: number): void {
      typesByTeam.delete(teamId)
    },

    /** Property name → type per kind, for casting in queries. Cached per team briefly; changes invalidate it. */
    getPropertyTypes(teamId: number): Promise<PropertyTypes> {
      const cached = typesByTeam.get(teamId)
      if (cached && cached.expires > Date.now()) return cached.types
      const types = store.typedProperties(teamId).then((rows) => {
        const out: PropertyTypes = { event: {}, person: {}, group: {} }
        for (const row of rows) {
          const bucket = row.type === 1 ? out.event : row.type === 2 ? out.person : out.group
          if (row.property_type && !(row.name in bucket)) bucket[row.name] = row.property_type
        }
        return out
      })
      typesByTeam.set(teamId, { expires: Date.now() + TYPES_TTL_MS, types })
      types.catch(() => typesByTeam.delete(teamId))
      return types
    },

    async listPropertyDefinitions(teamId: number, p: PropertyListParams, limit: number, offset: number) {
      if (p.kind === 'session') {
        const all = sessionDefinitions(p)
        return { count: all.length, results: all.slice(offset, offset + limit) }
      }
      // The always-hidden names are event properties ingestion adds; a person's `$initial_referrer` is listed.
      const excludedNames = [...(p.kind === 'event' ? ALWAYS_HIDDEN_PROPERTIES : []), ...p.excludedProperties]
      if (p.excludeCoreProperties) excludedNames.push(...Object.keys(CORE_PROPERTY_LABELS))
      const { count, rows } = await store.listPropertyDefinitions(
        teamId,
        {
          type: PROPERTY_KINDS[p.kind],
          groupTypeIndex: p.kind === 'group' ? (p.groupTypeIndex ?? 0) : -1,
          search: searchTerms(p.search, CORE_PROPERTY_LABELS, p.kind === 'person'),
          eventNames: p.eventNames,
          onlySeenOnEvents: p.filterByEventNames,
          names: p.properties,
          excludedNames,
          excludedPrefixes: p.kind === 'event' ? [HIDDEN_EVENT_PROPERTY_PREFIX] : [],
          excludeHidden: p.excludeHidden,
          numericalOnly: p.isNumerical,
          isFeatureFlag: p.isFeatureFlag,
        },
        limit,
        offset,
      )
      const users = await usersById(rows.flatMap((r) => [r.updated_by, r.verified_by]))
      const results = rows.map((r) =>
        toPropertyDefinition(r, p.eventNames === null ? null : asBoolean(r.is_seen as number | boolean), users),
      )
      return { count, results }
    },

    async getPropertyDefinition(teamId: number, id: string) {
      const row = await requireProperty(teamId, id)
      return toPropertyDefinition(row, null, await usersById([row.updated_by, row.verified_by]))
    },

    async updatePropertyDefinition(actor: Actor, teamId: number, id: string, input: PropertyDefinitionUpdate) {
      const row = await requireProperty(teamId, id)
      const now = clock().toISOString()
      const patch = {
        ...verificationPatch(row, input, actor, now, 'property'),
        updated_at: now,
        updated_by: actor.userId,
      } as Parameters<DefinitionStore['updatePropertyDefinition']>[2]
      if (input.name !== undefined && input.name !== row.name) {
        if (await store.findPropertyDefinition(teamId, input.name, row.type, row.group_type_index)) {
          throw new ValidationError(`Property definition with name '${input.name}' already exists`, 'name', 'unique')
        }
        patch.name = input.name
      }
      if (input.property_type !== undefined) {
        patch.property_type = input.property_type
        patch.is_numerical = input.property_type === 'Numeric' ? 1 : 0
      } else if (input.is_numerical !== undefined) patch.is_numerical = input.is_numerical ? 1 : 0
      if (input.tags !== undefined) patch.tags = JSON.stringify(normalizeTags(input.tags))
      if (input.description !== undefined) patch.description = input.description
      const updated = await store.updatePropertyDefinition(teamId, id, patch)
      if (!updated) throw new NotFound()
      typesChanged(teamId)
      knownProperties.delete(propertyKey(teamId, row.type, row.group_type_index, row.name))
      const users = await usersById([updated.updated_by, updated.verified_by])
      const before = toPropertyDefinition(row, null, users)
      const after = toPropertyDefinition(updated, null, users)
      const fields = ['name', 'is_numerical', 'property_type', 'tags', 'description', 'verified', 'hidden'] as const
      await logChange(actor, teamId, 'PropertyDefinition', 'changed', updated, diff(before, after, [...fields]))
      return after
    },

    async deletePropertyDefinition(actor: Actor, teamId: number, id: string) {
      const row = await requireProperty(teamId, id)
      await store.deletePropertyDefinition(teamId, id)
      typesChanged(teamId)
      knownProperties.delete(propertyKey(teamId, row.type, row.group_type_index, row.name))
      await logChange(actor, teamId, 'PropertyDefinition', 'deleted', row, [])
    },

    /** For each event name, whether `property` has ever been seen on it. */
    async seenTogether(teamId: number, eventNames: string[], property: string) {
      const seen = await store.eventsSeenWith(teamId, eventNames, property)
      return Object.fromEntries(eventNames.map((name) => [name, seen.has(name)]))
    },

    async listEventDefinitions(teamId: number, p: EventListParams, limit: number, offset: number) {
      const filter: EventListFilter = {
        search: searchTerms(p.search, CORE_EVENT_LABELS),
        posthogEvents: p.eventType === 'event' ? null : p.eventType === 'event_posthog',
        excludeHidden: p.excludeHidden,
        excludedNames: p.excludedNames,
        names: p.names,
        seenSince: p.excludeStale ? new Date(clock().getTime() - STALE_EVENT_DAYS * 24 * HOUR_MS).toISOString() : null,
        tags: p.tags,
      }
      const ordering = eventOrdering(p.ordering, filter.search.length > 0)
      const { count, rows } = await store.listEventDefinitions(teamId, filter, ordering, limit, offset)
      const users = await usersById(rows.flatMap((r) => [r.owner, r.updated_by, r.verified_by, r.created_by]))
      return { count, results: rows.map((r) => toEventDefinition(r, users)) }
    },

    getEventDefinition: async (teamId: number, id: string) => eventDefinitionOut(await requireEvent(teamId, id)),

    async getEventDefinitionByName(teamId: number, name: string) {
      const row = await store.getEventDefinitionByName(teamId, name)
      if (!row) throw new NotFound()
      return eventDefinitionOut(row)
    },

    async createEventDefinition(actor: Actor, teamId: number, input: EventDefinitionCreate) {
      const now = clock().toISOString()
      const duplicate = new ValidationError(`Event definition with name '${input.name}' already exists`, 'name')
      if (await store.getEventDefinitionByName(teamId, input.name)) throw duplicate
      if (input.owner != null) await requireUser(input.owner)
      const verification = verificationPatch({ verified: 0, hidden: 0 }, input, actor, now, 'event')
      const row = await store.insertEventDefinition({
        team_id: teamId,
        name: input.name,
        description: input.description ?? null,
        tags: JSON.stringify(normalizeTags(input.tags ?? [])),
        owner: input.owner ?? null,
        verified: verification.verified ?? 0,
        verified_at: verification.verified_at ?? null,
        verified_by: verification.verified_by ?? null,
        hidden: verification.hidden ?? 0,
        created_at: null,
        created_by: actor.userId,
        last_seen_at: null,
        updated_at: now,
        updated_by: actor.userId,
      })
      if (!row) throw duplicate
      await logChange(actor, teamId, 'EventDefinition', 'created', row, [])
      return eventDefinitionOut(row)
    },

    async updateEventDefinition(actor: Actor, teamId: number, id: string, input: EventDefinitionUpdate) {
      const row = await requireEvent(teamId, id)
      const now = clock().toISOString()
      const patch = {
        ...verificationPatch(row, input, actor, now, 'event'),
        updated_at: now,
        updated_by: actor.userId,
      } as Parameters<DefinitionStore['updateEventDefinition']>[2]
      if (input.owner !== undefined) {
        if (input.owner !== null) await requireUser(input.owner)
        patch.owner = input.owner
      }
      if (input.tags !== undefined) patch.tags = JSON.stringify(normalizeTags(input.tags))
      if (input.description !== undefined) patch.description = input.description
      const updated = await store.updateEventDefinition(teamId, id, patch)
      if (!updated) throw new NotFound()
      const users = await usersById([
        row.owner,
        updated.owner,
        updated.updated_by,
        updated.verified_by,
        updated.created_by,
      ])
      const before = toEventDefinition(row, users)
      const after = toEventDefinition(updated, users)
      const fields = ['description', 'tags', 'owner', 'verified', 'hidden'] as const
      await logChange(actor, teamId, 'EventDefinition', 'changed', updated, diff(before, after, [...fields]))
      return after
    },

    async deleteEventDefinition(actor: Actor, teamId: number, id: string) {
      const row = await requireEvent(teamId, id)
      await store.deleteEventDefinition(teamId, id)
      seenEvents.delete(`${teamId}\u0000${row.name}`)
      await logChange(actor, teamId, 'EventDefinition', 'deleted', row, [])
    },

    /** The event's volume over the last 30 days; how often it was queried is not tracked, so that is 0. */
    async eventMetrics(teamId: number, id: string) {
      const row = await requireEvent(teamId, id)
      const result = await deps.events.query<[number | string]>(
        `SELECT count() FROM events
         WHERE team_id = {team:Int64} AND event = {event:String} AND timestamp > now() - INTERVAL 30 DAY`,
        { params: { team: teamId, event: row.name } },
      )
      return { query_usage_30_day: 0, volume_30_day: Number(result.rows[0]?.[0] ?? 0) }
    },

    /** Typed capture wrappers for the project's events, each with the event properties seen on it (all optional). */
    async generateCode(teamId: number, language: CodegenLanguage) {
      const { events, pairs } = await store.eventSchemas(teamId)
      const byEvent = new Map(
        events.map((name) => [
          name,
          [] as { name: string; property_type: CodegenPropertyType; is_required: boolean }[],
        ]),
      )
      for (const pair of pairs) {
        if (HIDDEN_NAMES.has(pair.property)) continue
        const type = (
          pair.property_type && KNOWN_TYPES.has(pair.property_type) ? pair.property_type : null
        ) as CodegenPropertyType
        byEvent.get(pair.event)?.push({ name: pair.property, property_type: type, is_required: false })
      }
      return generateEventCode(
        language,
        [...byEvent].map(([name, properties]) => ({ name, properties })),
      )
    },
  }

  async function requireUser(id: number) {
    const [user] = await store.usersByIds([id])
    if (!user) throw new ValidationError(`Invalid pk "${id}" - object does not exist.`, 'owner', 'does_not_exist')
  }
}
export type DefinitionService = ReturnType<typeof createDefinitionService>
