// Cohorts: dynamic (person-property trees) and static (lists of distinct ids). Flags target them with
// `{type: 'cohort', key: 'id', value: <id>, operator: 'in'|'not_in'}`; every change invalidates the project's
// cached flag definitions.
import type { ActivityStore } from '../activity/store.js'
import type { DefinitionsCache } from '../flags/cache.js'
import type { Cohort } from '../flags/types.js'
import { NotFound, ValidationError } from '../http/errors.js'
import type { PersonStore } from '../persons/store.js'
import type { UserStore } from '../users/store.js'
import type { AddPersonsInput, CohortInput, CohortRecord } from './schemas.js'
import type { CohortRow, CohortStore, NewCohortRow } from './store.js'
import { distinctIdsFromCsv, filtersFromLegacyGroups, validateCohortFilters } from './validation.js'

export interface CohortActor {
  userId: number | null
  organizationId: string
}

/** The evaluator's view of a stored cohort. */
export function toCohortDefinition(row: CohortRow): Cohort {
  return {
    id: row.id,
    filters: JSON.parse(row.filters) as Cohort['filters'],
    is_static: row.is_static === 1,
    deleted: row.deleted === 1,
  }
}

function referencesOf(filters: unknown, into: Set<number>): void {
  if (!filters || typeof filters !== 'object') return
  const node = filters as { properties?: unknown; values?: unknown; type?: unknown; value?: unknown }
  if (node.properties) referencesOf(node.properties, into)
  if (Array.isArray(node.values)) for (const value of node.values) referencesOf(value, into)
  else if (node.type === 'cohort' && Number.isInteger(Number(node.value))) into.add(Number(node.value))
}

export function createCohortService(deps: {
  cohorts: CohortStore
  persons: Pick<PersonStore, 'getById' | 'distinctIds'>
  users: Pick<UserStore, 'get'>
  activity: Pick<ActivityStore, 'log'>
  cache: Pick<DefinitionsCache, 'invalidate'>
  clock: () => Date
}) {
  async function toApi(row: CohortRow): Promise<CohortRecord> {
    const [count, user] = await Promise.all([
      row.is_static === 1 ? deps.cohorts.memberCount(row.id) : Promise.resolve(null),
      row.created_by === null ? Promise.resolve(undefined) : deps.users.get(row.created_by),
    ])
    return {
      id: row.id,
      name: row.name,
      description: row.description,
      filters: JSON.parse(row.filters),
      groups: [],
      deleted: row.deleted === 1,
      is_static: row.is_static === 1,
      is_calculating: false,
      errors_calculating: 0,
      count,
      cohort_type: row.is_static === 1 ? 'static' : 'person_property',
      version: row.version,
      created_by: user ? { id: user.id, email: user.email } : null,
      created_at: row.created_at,
      last_calculation: row.is_static === 1 ? row.updated_at : null,
    }
  }

  /** Dynamic filters, checked against the project's cohorts: references must exist and must not loop back. */
  async function checkFilters(teamId: number, input: CohortInput, selfId: number | null): Promise<string> {
    const raw = input.filters ?? (input.groups !== undefined ? filtersFromLegacyGroups(input.groups) : undefined)
    if (raw === undefined) throw new ValidationError('Dynamic cohorts need filters.', 'filters', 'required')
    const { filters, references } = validateCohortFilters(raw)
    if (references.size > 0) {
      const all = new Map((await deps.cohorts.allForTeam(teamId)).map((row) => [row.id, row]))
      const seen = new Set<number>()
      const queue = [...references]
      while (queue.length > 0) {
        const id = queue.pop() as number
        const row = all.get(id)
        if (!row || row.deleted === 1) throw new ValidationError(`Cohort with id ${id} does not exist.`, 'filters')
        if (id === selfId) throw new ValidationError('Cohorts cannot reference themselves.', 'filters')
        if (seen.has(id)) continue
        seen.add(id)
        const nested = new Set<number>()
        referencesOf(JSON.parse(row.filters), nested)
        queue.push(...nested)
      }
    }
    return JSON.stringify(filters)
  }

  function membersOf(input: CohortInput): string[] {
    const ids = (input.distinct_ids ?? []).map(String)
    if (input.csv !== undefined) ids.push(...distinctIdsFromCsv(input.csv))
    return [...new Set(ids)]
  }

  async function log(teamId: number, actor: CohortActor, row: CohortRow, activity: string, changes: unknown[]) {
    await deps.activity.log({
      organizationId: actor.organizationId,
      teamId,
      userId: actor.userId,
      scope: 'Cohort',
      itemId: String(row.id),
      activity,
      detail: { id: row.id, name: row.name, changes, trigger: null },
      createdAt: deps.clock().toISOString(),
    })
  }

  async function load(teamId: number, id: number): Promise<CohortRow> {
    const row = await deps.cohorts.get(teamId, id)
    if (!row) throw new NotFound()
    return row
  }

  return {
    toApi,
    async list(teamId: number, limit: number, offset: number) {
      const { total, rows } = await deps.cohorts.list(teamId, limit, offset)
      return { count: total, results: await Promise.all(rows.map(toApi)) }
    },
    async get(teamId: number, id: number) {
      return toApi(await load(teamId, id))
    },
    async create(teamId: number, actor: CohortActor, input: CohortInput): Promise<CohortRecord> {
      const isStatic = input.is_static === true
      const members = membersOf(input)
      if (!isStatic && members.length > 0) {
        throw new ValidationError('Only static cohorts take a list of distinct ids.', 'distinct_ids')
      }
      const now = deps.clock().toISOString()
      const row: NewCohortRow = {
        team_id: teamId,
        name: input.name ?? '',
        description: input.description ?? '',
        filters: isStatic ? JSON.stringify({}) : await checkFilters(teamId, input, null),
        is_static: isStatic ? 1 : 0,
        deleted: 0,
        version: 1,
        created_by: actor.userId,
        created_at: now,
        updated_at: now,
      }
      const saved = await deps.cohorts.insert(row)
      if (members.length > 0) await deps.cohorts.addMembers(teamId, saved.id, members, now)
      await log(teamId, actor, saved, 'created', [])
      deps.cache.invalidate(teamId)
      return toApi(saved)
    },
    async update(teamId: number, actor: CohortActor, id: number, input: CohortInput): Promise<CohortRecord> {
      const before = await load(teamId, id)
      if (input.is_static !== undefined && input.is_static !== (before.is_static === 1)) {
        throw new ValidationError('A cohort cannot change between static and dynamic.', 'is_static')
      }
      const patch: Partial<NewCohortRow> = {}
      if (input.name !== undefined) patch.name = input.name
      if (input.description !== undefined) patch.description = input.description
      if (input.deleted !== undefined) patch.deleted = input.deleted ? 1 : 0
      if ((input.filters !== undefined || input.groups !== undefined) && before.is_static === 0) {
        patch.filters = await checkFilters(teamId, input, id)
      }
      const members = membersOf(input)
      if (members.length > 0 && before.is_static === 0) {
        throw new ValidationError('Only static cohorts take a list of distinct ids.', 'distinct_ids')
      }
      const now = deps.clock().toISOString()
      const added = members.length > 0 ? await deps.cohorts.addMembers(teamId, id, members, now) : 0
      const changes = Object.entries(patch)
        .filter(([field, value]) => before[field as keyof CohortRow] !== value)
        .map(([field, value]) => ({
          type: 'Cohort',
          action: 'changed',
          field,
          before: before[field as keyof CohortRow],
          after: value,
        }))
      if (added > 0) changes.push({ type: 'Cohort', action: 'changed', field: 'people', before: null, after: added })
      if (changes.length === 0) return toApi(before)
      const saved = await deps.cohorts.update(teamId, id, { ...patch, version: before.version + 1, updated_at: now })
      await log(teamId, actor, saved, patch.deleted === 1 && before.deleted === 0 ? 'deleted' : 'updated', changes)
      deps.cache.invalidate(teamId)
      return toApi(saved)
    },
    /** PostHog's `add_persons_to_static_cohort`: person ids (UUIDs) → all their distinct ids become members. */
    async addPersons(teamId: number, actor: CohortActor, id: number, input: AddPersonsInput): Promise<CohortRecord> {
      const row = await load(teamId, id)
      if (row.is_static === 0) throw new ValidationError('Can only add persons to a static cohort.', 'person_ids')
      const distinctIds: string[] = []
      for (const personId of input.person_ids) {
        const person = await deps.persons.getById(teamId, personId)
        if (person) distinctIds.push(...(await deps.persons.distinctIds(person.id)))
      }
      return this.update(teamId, actor, id, { distinct_ids: distinctIds })
    },
  }
}
export type CohortService = ReturnType<typeof createCohortService>
