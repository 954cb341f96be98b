import crypto from 'node:crypto'
import type { Kysely, Transaction } from 'kysely'
import type { PersonRow, PersonStore } from '../persons/store.js'
import type { MetaDatabase } from '../storage/meta/schema.js'
import { cleanText, isEventToPersonProperty, type NormalizedEvent, uuidV7 } from './normalize.js'

type Props = Record<string, unknown>

interface CachedPerson {
  id: string
  properties: Props
  isIdentified: boolean
  version: number
  createdAt: string
}

/** Rows for the event store's mirror tables, written with the events of the same commit. */
export interface MirrorRows {
  persons: object[]
  distinctIds: object[]
  groups: object[]
}

export interface ProcessedBatch {
  /** Person id for each event, in order. */
  personIds: string[]
  /** `$group_0..4` for each event, in order. */
  groupColumns: string[][]
  mirror: MirrorRows
}

const MAX_GROUP_TYPES = 5
const CACHE_LIMIT = 200_000
/** At most this many events of waiting requests are processed in one transaction. */
const MAX_COALESCED_EVENTS = 2_000

interface Waiting {
  events: NormalizedEvent[]
  resolve: (batch: ProcessedBatch) => void
  reject: (err: unknown) => void
}

/** PostHog's id for events of people without a profile: stable per (project, distinct id). */
export function personlessId(teamId: number, distinctId: string): string {
  const h = crypto.createHash('sha1').update(`${teamId}:${distinctId}`).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((Number.parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`
}

const chTime = (iso: string) => iso.replace('T', ' ').replace('Z', '')

/** A row changed since it was read (a writer that does not take the project's lock): the batch is run again. */
class StaleRow extends Error {
  constructor(what: string) {
    super(`${what} changed while the batch ran`)
  }
}
/** Runs of a batch that met a changed row, before its error is given to the caller. */
const MAX_ATTEMPTS = 3

const toCached = (row: PersonRow): CachedPerson => ({
  id: row.id,
  properties: JSON.parse(row.properties) as Props,
  isIdentified: Number(row.is_identified) === 1,
  version: Number(row.version),
  createdAt: row.created_at,
})

/**
 * Person and group processing, in event order: `$set`/`$set_once`/`$unset`, `$identify` and `$create_alias`
 * merges, `$merge_dangerously`, `$groupidentify`, group columns. The metadata store is the source of truth;
 * a bounded cache of (project, distinct id) → person keeps the common case (a known person, nothing to change)
 * free of queries. Batches of one project run one at a time, so two requests never create the same person twice;
 * requests that wait meanwhile are processed together, in order, in one transaction (one commit for many new
 * persons instead of one each), and should that fail, each on its own.
 *
 * With several processes on one PostgreSQL database (`persons.shared`), what this one has cached may be stale:
 * a batch that writes runs under the project's advisory lock (every writer of persons takes it) and reads the
 * current rows of its distinct ids first, keeping cached objects whose person and version still match; a batch
 * that writes nothing checks the person id and version of its distinct ids in one read, and one whose events have
 * no person profile (nothing to create) reads their persons without the lock. Either way each batch
 * sees every change committed before it, as one process would. Updates are checked against the version read,
 * and a batch that meets a changed row is run again.
 */
export function createPersonProcessor(deps: {
  persons: PersonStore
  clock: () => Date
  /** Told which distinct ids a batch touched, after it is committed (readers' caches drop them). */
  onChanged?: (teamId: number, distinctIds: string[]) => void
  /** Told after a batch created a group type (flag definitions carry the project's group types). */
  onGroupTypesChanged?: (teamId: number) => void
}) {
  const shared = deps.persons.shared
  const cache = new Map<string, CachedPerson | null>()
  const groupTypes = new Map<number, Map<string, number>>()
  /** Per project, the requests waiting while one of its batches runs. */
  const waiting = new Map<number, Waiting[]>()

  const cacheKey = (teamId: number, distinctId: string) => `${teamId}\u0000${distinctId}`
  function remember(key: string, person: CachedPerson | null) {
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string)
    cache.set(key, person)
  }

  /** Runs the project's waiting requests, those that wait together in one batch, until none is left. */
  async function runQueue(teamId: number, queue: Waiting[]) {
    while (queue.length > 0) {
      const take = [queue.shift() as Waiting]
      let events = take[0].events.length
      while (queue.length > 0 && events + queue[0].events.length <= MAX_COALESCED_EVENTS) {
        events += queue[0].events.length
        take.push(queue.shift() as Waiting)
      }
      await runTogether(teamId, take)
    }
    waiting.delete(teamId)
  }

  async function runTogether(teamId: number, items: Waiting[]) {
    try {
      const results = await processBatch(
        teamId,
        items.length === 1 ? items[0].events : items.flatMap((item) => item.events),
        items.map((item) => item.events.length),
      )
      for (let i = 0; i < items.length; i++) items[i].resolve(results[i])
    } catch (err) {
      if (items.length === 1) items[0].reject(err)
      // One request's events must not fail the others: each on its own (a failed batch changed nothing).
      else for (const item of items) await runTogether(teamId, [item])
    }
  }

  async function loadGroupTypes(teamId: number): Promise<Map<string, number>> {
    let types = groupTypes.get(teamId)
    if (!types) {
      const rows = await deps.persons.groupTypeMapping(teamId)
      types = new Map(rows.map((r) => [r.group_type, r.group_type_index]))
      groupTypes.set(teamId, types)
    }
    return types
  }

  function forgetPersons(persons: Set<CachedPerson>, keys: Iterable<string>) {
    for (const key of keys) cache.delete(key)
    if (persons.size === 0) return
    for (const [key, person] of cache) if (person && persons.has(person)) cache.delete(key)
  }

  return {
    /**
     * After a batch's rows failed to reach the event store: forget what the batch touched, and give the current
     * rows of its persons and groups from the metadata store, to write them to the event store again.
     */
    async remirror(teamId: number, distinctIds: string[], groupKeys: { index: number; key: string }[]) {
      const keys = distinctIds.map((d) => cacheKey(teamId, d))
      const touched = new Set<CachedPerson>()
      for (const key of keys) {
        const person = cache.get(key)
        if (person) touched.add(person)
      }
      forgetPersons(touched, keys)
      const mirror: MirrorRows = { persons: [], distinctIds: [], groups: [] }
      const personIds = new Set<string>()
      for (const distinctId of distinctIds) {
        const row = await deps.persons.getByDistinctId(teamId, distinctId)
        if (!row || personIds.has(row.id)) continue
        personIds.add(row.id)
        mirror.persons.push({
          team_id: teamId,
          id: row.id,
          properties: row.properties,
          created_at: chTime(row.created_at),
          is_identified: row.is_identified,
          is_deleted: 0,
          version: Number(row.version),
        })
        const ids = await deps.persons.db
          .selectFrom('person_distinct_ids')
          .select(['distinct_id', 'version'])
          .where('person_id', '=', row.id)
          .execute()
        for (const d of ids) {
          mirror.distinctIds.push({
            team_id: teamId,
            distinct_id: d.distinct_id,
            person_id: row.id,
            is_deleted: 0,
            version: Number(d.version),
          })
        }
      }
      for (const { index, key } of groupKeys) {
        const group = await deps.persons.getGroup(teamId, index, key)
        if (!group) continue
        mirror.groups.push({
          team_id: teamId,
          group_type_index: index,
          group_key: key,
          group_properties: group.properties,
          created_at: chTime(group.created_at),
          version: Number(group.version),
        })
      }
      return mirror
    },

    /** Forgets cached persons (tests, or after an outside change to the metadata store). */
    clearCache() {
      cache.clear()
      groupTypes.clear()
    },

    /** Forgets what another process changed: these distinct ids of a project, or all of it (`null`). */
    forget(teamId: number, distinctIds: Iterable<string> | null) {
      if (distinctIds) {
        for (const distinctId of distinctIds) cache.delete(cacheKey(teamId, distinctId))
        return
      }
      const prefix = cacheKey(teamId, '')
      for (const key of cache.keys()) if (key.startsWith(prefix)) cache.delete(key)
      groupTypes.delete(teamId)
    },

    /** Forgets a project's group types (another process created one), read again by the next batch. */
    forgetGroupTypes(teamId: number) {
      groupTypes.delete(teamId)
    },

    /** Group type name → index for a project (`$group_0..4`), as known so far. */
    groupTypeIndexes: loadGroupTypes,

    process(teamId: number, events: NormalizedEvent[]): Promise<ProcessedBatch> {
      return new Promise<ProcessedBatch>((resolve, reject) => {
        const queue = waiting.get(teamId)
        if (queue) {
          queue.push({ events, resolve, reject })
          return
        }
        const started = [{ events, resolve, reject }]
        waiting.set(teamId, started)
        // Started after the requests read in this turn of the event loop have joined: with an embedded store a
        // batch never yields to the loop, so only requests read together can share its transaction.
        setImmediate(() => void runQueue(teamId, started))
      })
    },
  }

  /**
   * Processes the events of one or more requests in order (`sizes`: how many events each request has) and gives
   * each request its part of the result; the event-store rows a request's events produced go with that request.
   */
  async function processBatch(teamId: number, events: NormalizedEvent[], sizes: number[]): Promise<ProcessedBatch[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await processOnce(teamId, events, sizes)
      } catch (err) {
        // What it had cached is forgotten: the next run reads the rows as they are now.
        if (!(err instanceof StaleRow) || attempt >= MAX_ATTEMPTS) throw err
      }
    }
  }

  async function processOnce(teamId: number, events: NormalizedEvent[], sizes: number[]): Promise<ProcessedBatch[]> {
    const mirrors: MirrorRows[] = sizes.map(() => ({ persons: [], distinctIds: [], groups: [] }))
    /** The mirror rows of the request whose event is being processed. */
    let mirror = mirrors[0]
    const personIds: string[] = new Array(events.length)
    const groupColumns: string[][] = new Array(events.length)
    const types = await loadGroupTypes(teamId)
    const split = (): ProcessedBatch[] => {
      let at = 0
      return sizes.map((size, i) => {
        const part = {
          personIds: sizes.length === 1 ? personIds : personIds.slice(at, at + size),
          groupColumns: sizes.length === 1 ? groupColumns : groupColumns.slice(at, at + size),
          mirror: mirrors[i],
        }
        at += size
        return part
      })
    }

    // Fast path: nothing to write when every event's person is cached and nothing about it changes.
    const staged = new Map<string, CachedPerson | null>()
    /** Of the staged: distinct ids given a person, and persons written (what readers' caches must drop). */
    const remapped = new Set<string>()
    const written = new Set<CachedPerson>()
    const newTypes: [string, number][] = []
    /** Persons updated (not created) by the batch, and their distinct ids. */
    const updatedPersons = new Set<string>()
    const alsoChanged: string[] = []
    /** Whether the project's group types were read under its lock in this batch. */
    let typesRead = false

    /** The cached person of each distinct id of the batch, when nothing needs writing. */
    const seen = new Map<string, CachedPerson | null>()
    let needsTx = events.some((ev) => {
      if (ev.event === '$identify' || ev.event === '$create_alias' || ev.event === '$merge_dangerously') return true
      if (ev.event === '$groupidentify' || ev.event === '$group_identify') return true
      for (const type of Object.keys(ev.groups)) if (!types.has(type)) return true
      const cached = cache.get(cacheKey(teamId, ev.distinctId))
      if (cached === undefined) return true
      seen.set(ev.distinctId, cached)
      if (!ev.processPerson) return false
      if (cached === null) return true
      return changesProperties(cached.properties, ev)
    })
    // Another process may have changed these persons since they were cached (a notification is on its way).
    if (!needsTx && shared) needsTx = !(await cacheHolds(teamId, seen))
    // Events that only need their persons looked up (no person profile, nothing to create) wait for no lock.
    if (needsTx && shared && events.every((ev) => readsOnly(ev, types))) {
      const found = await currentPersons(deps.persons.db, teamId, new Set(events.map((ev) => ev.distinctId)))
      for (const [key, person] of found) remember(key, person)
      for (let i = 0; i < events.length; i++) {
        const person = found.get(cacheKey(teamId, events[i].distinctId))
        personIds[i] = person ? person.id : personlessId(teamId, events[i].distinctId)
        groupColumns[i] = groupColumnsOf(events[i], types)
      }
      return split()
    }

    if (!needsTx) {
      for (let i = 0; i < events.length; i++) {
        const ev = events[i]
        const cached = seen.get(ev.distinctId)
        personIds[i] = cached ? cached.id : personlessId(teamId, ev.distinctId)
        groupColumns[i] = groupColumnsOf(ev, types)
      }
      return split()
    }

    const runTransaction = () =>
      deps.persons.db.transaction().execute(async (tx) => {
        if (shared) await readCurrent(tx)
        else await readUncached(tx)
        const lookup = async (distinctId: string): Promise<CachedPerson | null> => {
          const key = cacheKey(teamId, distinctId)
          if (staged.has(key)) return staged.get(key) ?? null
          const cached = cache.get(key)
          if (cached !== undefined) {
            // Staged too: this batch may change it, and readers' caches must hear of it.
            staged.set(key, cached)
            return cached
          }
          const row = await deps.persons.personFor(tx, teamId, distinctId)
          const person = row
            ? {
                id: row.id,
                properties: JSON.parse(row.properties) as Props,
                isIdentified: row.is_identified === 1,
                version: Number(row.version),
                createdAt: row.created_at,
              }
            : null
          staged.set(key, person)
          return person
        }
        const stage = (distinctId: string, person: CachedPerson | null) => {
          const key = cacheKey(teamId, distinctId)
          staged.set(key, person)
          remapped.add(key)
        }

        const mirrorPerson = (p: CachedPerson, deleted = false) => {
          written.add(p)
          const properties = JSON.stringify(p.properties)
          // A person not inserted yet is inserted with the properties serialised here, unless they change again.
          const pending = unwritten.get(p.id)
          if (pending) pending.json = { of: p.properties, text: properties }
          mirror.persons.push({
            team_id: teamId,
            id: p.id,
            properties,
            created_at: chTime(p.createdAt),
            is_identified: p.isIdentified ? 1 : 0,
            is_deleted: deleted ? 1 : 0,
            version: p.version,
          })
        }
        const mirrorDistinctId = (distinctId: string, personId: string, version: number) =>
          mirror.distinctIds.push({
            team_id: teamId,
            distinct_id: distinctId,
            person_id: personId,
            is_deleted: 0,
            version,
          })

        /**
         * Persons created by this batch and not yet inserted, with their distinct ids: written together, in one
         * statement per table, before any other statement of the batch (a launch or a bot wave brings thousands
         * of new persons a second, and a statement each made them wait on one another).
         */
        const unwritten = new Map<
          string,
          { person: CachedPerson; distinctIds: string[]; json?: { of: Props; text: string } }
        >()
        const writeCreated = async () => {
          if (unwritten.size === 0) return
          const rows = [...unwritten.values()]
          unwritten.clear()
          await deps.persons.insertPersons(
            tx,
            rows.map(({ person, json }) => ({
              id: person.id,
              team_id: teamId,
              properties: json?.of === person.properties ? json.text : JSON.stringify(person.properties),
              is_identified: person.isIdentified ? 1 : 0,
              version: person.version,
              created_at: person.createdAt,
            })),
            rows.flatMap(({ person, distinctIds }) =>
              distinctIds.map((d) => ({ team_id: teamId, distinct_id: d, person_id: person.id, version: 0 })),
            ),
          )
        }

        const createPerson = (distinctIds: string[], props: Props, identified: boolean, createdAt: string) => {
          const person: CachedPerson = {
            // Time-ordered (as PostHog's UUIDT person ids are): a new person's id goes to the end of the id
            // indexes instead of a random page of them, which halved the metadata store's work per new person
            // (SQLite: 41 -> 22 µs of CPU, and half the log written, measured alone).
            id: uuidV7(Date.now()),
            properties: props,
            isIdentified: identified,
            version: 0,
            createdAt,
          }
          unwritten.set(person.id, { person, distinctIds })
          for (const d of distinctIds) {
            stage(d, person)
            mirrorDistinctId(d, person.id, 0)
          }
          mirrorPerson(person)
          return person
        }

        const savePerson = async (person: CachedPerson) => {
          const read = person.version
          person.version += 1
          if (unwritten.has(person.id)) {
            // Not inserted yet: it is inserted as it is now.
            mirrorPerson(person)
            return
          }
          await writeCreated()
          const updated = await tx
            .updateTable('persons')
            .set({
              properties: JSON.stringify(person.properties),
              is_identified: person.isIdentified ? 1 : 0,
              version: person.version,
            })
            .where('id', '=', person.id)
            .where('version', '=', read)
            .executeTakeFirst()
          if (Number(updated.numUpdatedRows) !== 1) throw new StaleRow(`person ${person.id}`)
          updatedPersons.add(person.id)
          mirrorPerson(person)
        }

        const addDistinctId = async (person: CachedPerson, distinctId: string) => {
          await writeCreated()
          await tx
            .insertInto('person_distinct_ids')
            .values({ team_id: teamId, distinct_id: distinctId, person_id: person.id, version: 0 })
            .onConflict((oc) => oc.columns(['team_id', 'distinct_id']).doUpdateSet({ person_id: person.id }))
            .execute()
          stage(distinctId, person)
          mirrorDistinctId(distinctId, person.id, 0)
        }

        /** Moves every distinct id of `source` to `target` and removes `source`; target's properties win. */
        const merge = async (source: CachedPerson, target: CachedPerson) => {
          await writeCreated()
          const moved = await tx
            .selectFrom('person_distinct_ids')
            .select(['distinct_id', 'version'])
            .where('person_id', '=', source.id)
            .execute()
          await tx
            .updateTable('person_distinct_ids')
            .set((eb) => ({ person_id: target.id, version: eb('version', '+', 1) }))
            .where('person_id', '=', source.id)
            .execute()
          const overrides = await tx
            .selectFrom('feature_flag_hash_key_overrides')
            .selectAll()
            .where('team_id', '=', teamId)
            .where('person_id', '=', source.id)
            .execute()
          if (overrides.length > 0) {
            await tx
              .insertInto('feature_flag_hash_key_overrides')
              .values(overrides.map((o) => ({ ...o, person_id: target.id })))
              .onConflict((oc) => oc.doNothing())
              .execute()
            await tx.deleteFrom('feature_flag_hash_key_overrides').where('person_id', '=', source.id).execute()
          }
          const removed = await tx
            .deleteFrom('persons')
            .where('id', '=', source.id)
            .where('version', '=', source.version)
            .executeTakeFirst()
          if (Number(removed.numDeletedRows) !== 1) throw new StaleRow(`person ${source.id}`)
          for (const m of moved) {
            stage(m.distinct_id, target)
            mirrorDistinctId(m.distinct_id, target.id, Number(m.version) + 1)
          }
          source.version += 1
          mirrorPerson(source, true)
          target.properties = { ...source.properties, ...target.properties }
          if (Date.parse(source.createdAt) < Date.parse(target.createdAt)) target.createdAt = source.createdAt
          target.isIdentified = true
        }

        let owner = 0
        let ownerEnd = sizes[0]
        for (let i = 0; i < events.length; i++) {
          while (i >= ownerEnd) ownerEnd += sizes[++owner]
          mirror = mirrors[owner]
          const ev = events[i]
          groupColumns[i] = await groupColumnsFor(ev)
          if (ev.event === '$groupidentify' || ev.event === '$group_identify') await identifyGroup(ev)

          if (!ev.processPerson) {
            const existing = await lookup(ev.distinctId)
            personIds[i] = existing ? existing.id : personlessId(teamId, ev.distinctId)
            continue
          }

          let person = await lookup(ev.distinctId)
          const other = mergeTarget(ev)
          if (other !== undefined && other !== ev.distinctId) {
            const otherPerson = await lookup(other)
            const force = ev.event === '$merge_dangerously'
            if (!person && !otherPerson) {
              person = createPerson([ev.distinctId, other], {}, true, ev.timestamp.toISOString())
            } else if (person && !otherPerson) {
              await addDistinctId(person, other)
            } else if (!person && otherPerson) {
              if (otherPerson.isIdentified && !force && ev.event === '$identify') {
                person = createPerson([ev.distinctId], {}, true, ev.timestamp.toISOString())
              } else {
                await addDistinctId(otherPerson, ev.distinctId)
                person = otherPerson
              }
            } else if (person && otherPerson && person.id !== otherPerson.id) {
              if (force || !otherPerson.isIdentified) await merge(otherPerson, person)
            }
            if (person && !person.isIdentified && ev.event === '$identify') person.isIdentified = true
          }

          const hasChanges = !person || changesProperties(person.properties, ev)
          if (!person) {
            person = createPerson(
              [ev.distinctId],
              applyChanges({}, ev),
              ev.event === '$identify',
              ev.timestamp.toISOString(),
            )
          } else if (hasChanges || other !== undefined) {
            person.properties = applyChanges(person.properties, ev)
            await savePerson(person)
          }
          personIds[i] = person.id
        }

        await writeCreated()
        // Readers cache persons by distinct id: those of an updated person this batch did not name must hear too.
        if (deps.onChanged && updatedPersons.size > 0) {
          for (const distinctId of await deps.persons.distinctIdsOfPersons(tx, [...updatedPersons])) {
            alsoChanged.push(distinctId)
          }
        }

        async function groupColumnsFor(ev: NormalizedEvent): Promise<string[]> {
          for (const type of Object.keys(ev.groups)) await ensureGroupType(type)
          return groupColumnsOf(ev, types)
        }

        async function ensureGroupType(type: string): Promise<number | undefined> {
          const known = types.get(type)
          if (known !== undefined) return known
          if (shared && !typesRead) {
            // Under the project's lock: the types other processes created, so that no index is given twice.
            typesRead = true
            for (const r of await deps.persons.groupTypeMapping(teamId, tx)) types.set(r.group_type, r.group_type_index)
            const created = types.get(type)
            if (created !== undefined) return created
          }
          if (types.size >= MAX_GROUP_TYPES) return undefined
          await writeCreated()
          const index = types.size
          const inserted = await tx
            .insertInto('group_type_mappings')
            .values({
              team_id: teamId,
              group_type: type,
              group_type_index: index,
              name_singular: null,
              name_plural: null,
            })
            .onConflict((oc) => oc.doNothing())
            .executeTakeFirst()
          if (Number(inserted.numInsertedOrUpdatedRows ?? 0) !== 1) throw new StaleRow(`group type ${type}`)
          types.set(type, index)
          newTypes.push([type, index])
          return index
        }

        async function identifyGroup(ev: NormalizedEvent) {
          const type = typeof ev.properties.$group_type === 'string' ? cleanText(ev.properties.$group_type) : undefined
          const rawKey = ev.properties.$group_key
          const key =
            typeof rawKey === 'string' ? cleanText(rawKey) : typeof rawKey === 'number' ? String(rawKey) : undefined
          if (!type || !key) return
          const index = await ensureGroupType(type)
          if (index === undefined) return
          const set = isObject(ev.properties.$group_set) ? ev.properties.$group_set : {}
          await writeCreated()
          const existing = await tx
            .selectFrom('groups')
            .selectAll()
            .where('team_id', '=', teamId)
            .where('group_type_index', '=', index)
            .where('group_key', '=', key)
            .executeTakeFirst()
          const properties = { ...(existing ? (JSON.parse(existing.properties) as Props) : {}), ...set }
          const version = existing ? Number(existing.version) + 1 : 0
          const createdAt = existing?.created_at ?? ev.timestamp.toISOString()
          await tx
            .insertInto('groups')
            .values({
              team_id: teamId,
              group_type_index: index,
              group_key: key,
              properties: JSON.stringify(properties),
              version,
              created_at: createdAt,
            })
            .onConflict((oc) =>
              oc
                .columns(['team_id', 'group_type_index', 'group_key'])
                .doUpdateSet({ properties: JSON.stringify(properties), version }),
            )
            .execute()
          mirror.groups.push({
            team_id: teamId,
            group_type_index: index,
            group_key: key,
            group_properties: JSON.stringify(properties),
            created_at: chTime(createdAt),
            version,
          })
        }
      })

    try {
      await runTransaction()
    } catch (err) {
      // Cached persons may have been edited in place before the failure: forget them (under every distinct id
      // that shares the object), the store has the truth.
      for (const key of seen.keys()) cache.delete(cacheKey(teamId, key))
      forgetPersons(new Set([...staged.values()].filter((p): p is CachedPerson => p !== null)), staged.keys())
      groupTypes.delete(teamId)
      throw err
    }

    for (const [key, person] of staged) remember(key, person)
    const changed = new Set<string>(alsoChanged)
    for (const [key, person] of staged) {
      if (remapped.has(key) || (person && written.has(person))) changed.add(key.slice(key.indexOf('\u0000') + 1))
    }
    // Committed: a listener's failure must not make the caller redo the batch (readers' caches expire on their own).
    if (deps.onChanged && changed.size > 0) {
      try {
        deps.onChanged(teamId, [...changed])
      } catch {}
    }
    if (deps.onGroupTypesChanged && newTypes.length > 0) {
      try {
        deps.onGroupTypesChanged(teamId)
      } catch {}
    }
    return split()

    /**
     * One process owns the store (no lock): the persons of the distinct ids the batch names and the cache does not
     * hold, read in one statement and staged, instead of a look-up per new distinct id.
     */
    async function readUncached(tx: Transaction<MetaDatabase>) {
      const unknown = new Set<string>()
      for (const ev of events) {
        for (const distinctId of [ev.distinctId, mergeTarget(ev)]) {
          if (distinctId !== undefined && !cache.has(cacheKey(teamId, distinctId))) unknown.add(distinctId)
        }
      }
      if (unknown.size === 0) return
      for (const [key, person] of await currentPersons(tx, teamId, unknown)) staged.set(key, person)
    }

    /**
     * Under the project's lock, the current person of every distinct id the batch names, staged for it: a cached
     * object is kept when its person and version are unchanged (shared by the distinct ids of one person).
     */
    async function readCurrent(tx: Transaction<MetaDatabase>) {
      await deps.persons.lockProject(tx, teamId)
      const named = new Set<string>()
      for (const ev of events) {
        named.add(ev.distinctId)
        const other = mergeTarget(ev)
        if (other !== undefined) named.add(other)
      }
      for (const [key, person] of await currentPersons(tx, teamId, named)) staged.set(key, person)
    }
  }

  /**
   * The current person of each distinct id (`null`: none), by cache key: a cached object is kept when its person
   * and version are unchanged (shared by the distinct ids of one person).
   */
  async function currentPersons(
    db: Kysely<MetaDatabase> | Transaction<MetaDatabase>,
    teamId: number,
    distinctIds: Set<string>,
  ): Promise<Map<string, CachedPerson | null>> {
    const found = new Map<string, CachedPerson | null>()
    const byId = new Map<string, CachedPerson>()
    for (const row of await deps.persons.personsFor(db, teamId, [...distinctIds])) {
      let person = byId.get(row.id)
      if (!person) {
        const cached = cache.get(cacheKey(teamId, row.distinct_id))
        person = cached && cached.id === row.id && cached.version === Number(row.version) ? cached : toCached(row)
        byId.set(row.id, person)
      }
      found.set(cacheKey(teamId, row.distinct_id), person)
    }
    for (const distinctId of distinctIds) {
      const key = cacheKey(teamId, distinctId)
      if (!found.has(key)) found.set(key, null)
    }
    return found
  }

  /** Whether the cached persons of these distinct ids are still theirs, at the version cached; drops those not. */
  async function cacheHolds(teamId: number, seen: Map<string, CachedPerson | null>): Promise<boolean> {
    const current = new Map<string, { person_id: string; version: number | string }>()
    for (const row of await deps.persons.versionsFor(teamId, [...seen.keys()])) current.set(row.distinct_id, row)
    let holds = true
    for (const [distinctId, cached] of seen) {
      const row = current.get(distinctId)
      if (cached === null ? row === undefined : row?.person_id === cached.id && Number(row.version) === cached.version)
        continue
      cache.delete(cacheKey(teamId, distinctId))
      holds = false
    }
    return holds
  }
}

/** Whether an event only needs its person looked up: no profile to write, no merge, no group to create or set. */
function readsOnly(ev: NormalizedEvent, types: Map<string, number>): boolean {
  if (ev.processPerson || mergeTarget(ev) !== undefined) return false
  if (ev.event === '$groupidentify' || ev.event === '$group_identify') return false
  for (const type of Object.keys(ev.groups)) if (!types.has(type)) return false
  return true
}

function mergeTarget(ev: NormalizedEvent): string | undefined {
  const pick = (v: unknown) =>
    typeof v === 'string' && v !== '' ? cleanText(v) : typeof v === 'number' ? String(v) : undefined
  if (ev.event === '$identify') return pick(ev.properties.$anon_distinct_id)
  if (ev.event === '$create_alias' || ev.event === '$merge_dangerously') return pick(ev.properties.alias)
  return undefined
}

function groupColumnsOf(ev: NormalizedEvent, types: Map<string, number>): string[] {
  const columns = ['', '', '', '', '']
  for (const [type, key] of Object.entries(ev.groups)) {
    const index = types.get(type)
    if (index !== undefined) columns[index] = key
  }
  return columns
}

function changesProperties(current: Props, ev: NormalizedEvent): boolean {
  for (const k in ev.setProps) {
    if (!Object.hasOwn(current, k)) return true
    if (!isEventToPersonProperty(k) && !sameValue(current[k], ev.setProps[k])) return true
  }
  for (const k in ev.setOnceProps) if (!Object.hasOwn(current, k)) return true
  for (const k of ev.unsetProps) if (Object.hasOwn(current, k)) return true
  return false
}

/**
 * The person's properties after the event. Built with spreads, which keep the result's properties fast: stores of
 * computed keys into a copy turned it into a dictionary past a dozen keys (larger in the person cache, slower to
 * read). A `__proto__` key stays an ordinary property, as JSON.parse keeps it.
 */
function applyChanges(current: Props, ev: NormalizedEvent): Props {
  let setOnce = ev.setOnceProps
  for (const k in setOnce) {
    if (Object.hasOwn(current, k)) {
      setOnce = Object.fromEntries(Object.entries(setOnce).filter(([key]) => !Object.hasOwn(current, key)))
      break
    }
  }
  const next: Props = { ...current, ...setOnce, ...ev.setProps }
  for (const k of ev.unsetProps) delete next[k]
  return next
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  return JSON.stringify(a) === JSON.stringify(b)
}

const isObject = (v: unknown): v is Props => typeof v === 'object' && v !== null && !Array.isArray(v)

export type PersonProcessor = ReturnType<typeof createPersonProcessor>
export type { MetaDatabase, Transaction }
