// Cohorts: dynamic (person properties, behaviour, other cohorts) and static (lists of distinct ids). Flags target
// them with `{type: 'cohort', key: 'id', value: <id>, operator: 'in'|'not_in'}` (never behavioural ones); every
// change invalidates the project's cached flag definitions and asks for a background calculation.
import type { ActivityStore } from '../activity/store.js'
import type { DefinitionsCache } from '../flags/cache.js'
import type { Cohort } from '../flags/types.js'
import { NotFound, ValidationError } from '../http/errors.js'
import type { PersonStore } from '../persons/store.js'
import type { UserStore } from '../users/store.js'
import { parseCohortCsv } from './csv.js'
import type { AddPersonsInput, CohortInput, CohortRecord } from './schemas.js'
import type { CohortListFilter, CohortRow, CohortStore, NewCohortRow } from './store.js'
import {
  type CheckedFilters,
  filtersFromLegacyGroups,
  hasBehavioralFilters,
  validateCohortFilters,
} from './validation.js'

/** How a static cohort's CSV names persons other than by distinct id: the caller's lookups, bound to the project. */
export interface MemberLookups {
  /** the distinct ids of the persons whose `email` property is one of these */
  distinctIdsByEmail?: (emails: string[]) => Promise<string[]>
  /** the distinct ids of the persons matching these person property filters */
  distinctIdsByProperties?: (filters: unknown[]) => Promise<string[]>
}

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

/** Cohort ids a filter tree references (nested groups, flag conditions' properties). */
export function referencesOf(filters: unknown, into: Set<number>): void {
  if (!filters || typeof filters !== 'object') return
  if (Array.isArray(filters)) {
    for (const item of filters) referencesOf(item, into)
    return
  }
  const node = filters as { properties?: unknown; values?: unknown; type?: unknown; value?: unknown; groups?: unknown }
  if (node.groups) referencesOf(node.groups, into)
  if (node.properties) referencesOf(node.properties, into)
  if (Array.isArray(node.values)) for (const value of node.values) referencesOf(value, into)
  else if (node.type === 'cohort' && Number.isInteger(Number(node.value))) into.add(Number(node.value))
}

/** A flag as the cohort rules read it (active, not deleted, its filters). */
export interface FlagUsingCohorts {
  key: string
  name: string
  active: number
  deleted: number
  filters: string
}

type CohortType = 'static' | 'person_property' | 'behavioral' | 'analytical'

function cohortTypeOf(row: CohortRow): CohortType {
  if (row.is_static === 1) return 'static'
  try {
    return validateCohortFilters(JSON.parse(row.filters)).cohortType
  } catch {
    return hasBehavioralFilters(JSON.parse(row.filters)) ? 'behavioral' : 'person_property'
  }
}

/** List `type`: PostHog's static/dynamic, or one of the computed cohort types. */
function typeFilter(type: string | undefined): Pick<CohortListFilter, 'isStatic' | 'isBehavioral'> {
  switch (type) {
    case undefined:
    case '':
      return {}
    case 'static':
      return { isStatic: true }
    case 'dynamic':
      return { isStatic: false }
    case 'person_property':
      return { isBehavioral: false }
    case 'behavioral':
    case 'analytical':
      return { isBehavioral: true }
    default:
      throw new ValidationError(
        `"${type}" is not a valid cohort type: static, dynamic, person_property, behavioral or analytical.`,
        'type',
        'invalid_choice',
      )
  }
}

export function createCohortService(deps: {
  cohorts: CohortStore
  persons: Pick<PersonStore, 'getById' | 'distinctIds'>
  users: Pick<UserStore, 'get'>
  activity: Pick<ActivityStore, 'log'>
  cache: Pick<DefinitionsCache, 'invalidate'>
  /** The project's flags, for the rules on cohorts that flags use. */
  flags: (teamId: number) => Promise<FlagUsingCohorts[]>
  /** Asks the background calculator to look for due cohorts now. */
  calculate?: () => void
  clock: () => Date
}) {
  async function toApi(row: CohortRow): Promise<CohortRecord> {
    const isStatic = row.is_static === 1
    const [count, user] = await Promise.all([
      isStatic ? deps.cohorts.memberCount(row.id) : Promise.resolve(row.count === null ? null : Number(row.count)),
      row.created_by === null ? Promise.resolve(undefined) : deps.users.get(row.created_by),
    ])
    const type = cohortTypeOf(row)
    return {
      id: row.id,
      name: row.name,
      description: row.description,
      filters: JSON.parse(row.filters),
      groups: [],
      deleted: row.deleted === 1,
      is_static: isStatic,
      is_calculating: !isStatic && row.is_calculating === 1,
      errors_calculating: row.errors_calculating,
      last_error_message: row.last_error,
      count,
      cohort_type: type,
      has_behavioral_filters: type === 'behavioral' || type === 'analytical',
      is_analytical: type === 'analytical',
      version: row.version,
      created_by: user ? { id: user.id, email: user.email } : null,
      created_at: row.created_at,
      last_calculation: isStatic ? row.updated_at : row.last_calculation,
    }
  }

  /** Every cohort a tree reaches, following nested references, in a team's cohort map. */
  function reach(start: Iterable<number>, all: Map<number, CohortRow>): number[] {
    const seen = new Set<number>()
    const queue = [...start]
    while (queue.length > 0) {
      const id = queue.pop() as number
      if (seen.has(id)) continue
      seen.add(id)
      const row = all.get(id)
      if (row && row.is_static === 0) {
        const nested = new Set<number>()
        referencesOf(JSON.parse(row.filters), nested)
        queue.push(...nested)
      }
    }
    return [...seen]
  }

  /** The active flags that use a cohort, directly or through cohorts that reference it. */
  async function activeFlagsUsing(teamId: number, cohortId: number): Promise<FlagUsingCohorts[]> {
    const [flags, rows] = await Promise.all([deps.flags(teamId), deps.cohorts.allForTeam(teamId)])
    const all = new Map(rows.map((row) => [row.id, row]))
    return flags.filter((flag) => {
      if (flag.deleted === 1 || flag.active === 0) return false
      const direct = new Set<number>()
      referencesOf(JSON.parse(flag.filters), direct)
      return reach(direct, all).includes(cohortId)
    })
  }

  /** Dynamic filters, checked against the project's cohorts: references must exist and must not loop back. */
  async function checkFilters(teamId: number, input: CohortInput, self: CohortRow | null): Promise<CheckedFilters> {
    const raw = input.filters ?? (input.groups !== undefined ? filtersFromLegacyGroups(input.groups) : undefined)
    if (raw === undefined) {
      if (self) return validateCohortFilters(JSON.parse(self.filters))
      throw new ValidationError("Must contain a 'properties' key with type and values", 'filters', 'required')
    }
    const checked = validateCohortFilters(raw)
    const all = new Map((await deps.cohorts.allForTeam(teamId)).map((row) => [row.id, row]))
    for (const id of checked.references) {
      const row = all.get(id)
      if (!row || row.deleted === 1) throw new ValidationError('Invalid Cohort ID in filter', 'filters')
    }
    if (self && reach(checked.references, all).includes(self.id)) {
      throw new ValidationError('Cohorts cannot reference other cohorts in a loop.', 'filters')
    }
    if (self) {
      // a cohort that active flags use cannot gain conditions on events (flags cannot evaluate them)
      const flags = await activeFlagsUsing(teamId, self.id)
      if (flags.length > 0) {
        if (checked.isBehavioral) {
          throw new ValidationError(
            'Behavioral filters cannot be added to cohorts used in feature flags.',
            'filters',
            'behavioral_cohort_found',
          )
        }
        for (const id of reach(checked.references, all)) {
          const row = all.get(id)
          if (row && row.is_static === 0 && hasBehavioralFilters(JSON.parse(row.filters))) {
            throw new ValidationError(
              `A cohort dependency (${row.name}) has filters based on events. These cohorts can't be used in feature flags.`,
              'filters',
              'behavioral_cohort_found',
            )
          }
        }
      }
    }
    return checked
  }

  /** The distinct ids a request names: `distinct_ids`, and the CSV's distinct ids or its persons' distinct ids. */
  async function membersOf(teamId: number, input: CohortInput, lookups: MemberLookups): Promise<string[]> {
    const ids = (input.distinct_ids ?? []).map(String)
    if (input.csv !== undefined) {
      const csv = parseCohortCsv(input.csv)
      if (csv.type === 'distinct_id') ids.push(...csv.ids)
      else if (csv.type === 'person_id') ids.push(...(await personsDistinctIds(teamId, csv.ids)))
      else if (lookups.distinctIdsByEmail) ids.push(...(await lookups.distinctIdsByEmail([...new Set(csv.ids)])))
      else {
        throw new ValidationError('Matching persons by email needs the persons store: upload distinct ids.', 'csv')
      }
    }
    if (input.query !== undefined) ids.push(...(await queryMembers(input.query, lookups)))
    return [...new Set(ids)]
  }

  // PostHog fills a static cohort from an `ActorsQuery`; Burrow reads its person property filters.
  const isRecord = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
  async function queryMembers(query: unknown, lookups: MemberLookups): Promise<string[]> {
    if (!isRecord(query) || query.kind !== 'ActorsQuery') {
      throw new ValidationError('Only an ActorsQuery can fill a static cohort.', 'query')
    }
    const properties = query.properties ?? []
    if (!Array.isArray(properties) || !properties.every((p) => isRecord(p) && p.type === 'person')) {
      throw new ValidationError('The query may only filter on person properties.', 'query')
    }
    if (!lookups.distinctIdsByProperties) {
      throw new ValidationError('Filling a cohort from a query needs the persons store.', 'query')
    }
    return lookups.distinctIdsByProperties(properties)
  }

  async function personsDistinctIds(teamId: number, personIds: string[]): Promise<string[]> {
    const ids: string[] = []
    for (const personId of new Set(personIds)) {
      const person = await deps.persons.getById(teamId, personId)
      if (person) ids.push(...(await deps.persons.distinctIds(person.id)))
    }
    return ids
  }

  async function log(teamId: number, actor: CohortActor, row: CohortRow, activity: string, changes: unknown[]) {
    await deps.activity.log({
      organizationId: actor.organizationId,
      teamId,
      userId: actor.userId,
      scope: 'Cohort',
      itemId: String(row.id),
      activity,
      detail: { id: row.id, name: row.name, short_id: null, type: null, changes, trigger: null },
      createdAt: deps.clock().toISOString(),
    })
  }

  async function load(teamId: number, id: number): Promise<CohortRow> {
    const row = await deps.cohorts.get(teamId, id)
    if (!row) throw new NotFound()
    return row
  }

  async function calculateSoon(id: number): Promise<void> {
    await deps.cohorts.requestCalculation(id)
    deps.calculate?.()
  }

  return {
    toApi,
    activeFlagsUsing,
    async list(teamId: number, query: { limit: number; offset: number; search?: string; type?: string }) {
      const { total, rows } = await deps.cohorts.list(teamId, {
        limit: query.limit,
        offset: query.offset,
        search: query.search,
        ...typeFilter(query.type),
      })
      return { count: total, results: await Promise.all(rows.map(toApi)) }
    },
    async get(teamId: number, id: number) {
      return toApi(await load(teamId, id))
    },
    async create(
      teamId: number,
      actor: CohortActor,
      input: CohortInput,
      lookups: MemberLookups = {},
    ): Promise<CohortRecord> {
      const isStatic = input.is_static === true
      if (!isStatic && input.query !== undefined) {
        throw new ValidationError('Only static cohorts can be filled from a query.', 'query')
      }
      const members = await membersOf(teamId, input, lookups)
      if (!isStatic && members.length > 0) {
        throw new ValidationError('Only static cohorts take a list of distinct ids.', 'distinct_ids')
      }
      const now = deps.clock().toISOString()
      const row: NewCohortRow = {
        team_id: teamId,
        name: input.name ?? '',
        description: input.description ?? '',
        filters: isStatic ? JSON.stringify({}) : JSON.stringify((await checkFilters(teamId, input, null)).filters),
        is_static: isStatic ? 1 : 0,
        deleted: 0,
        version: 1,
        created_by: actor.userId,
        created_at: now,
        updated_at: now,
        ...(isStatic ? {} : { is_calculating: 1, calculation_due: 1 }),
      }
      const saved = await deps.cohorts.insert(row)
      if (members.length > 0) await deps.cohorts.addMembers(teamId, saved.id, members, now)
      await log(teamId, actor, saved, 'created', [])
      deps.cache.invalidate(teamId)
      if (!isStatic) deps.calculate?.()
      return toApi(saved)
    },
    async update(
      teamId: number,
      actor: CohortActor,
      id: number,
      input: CohortInput,
      lookups: MemberLookups = {},
    ): Promise<CohortRecord> {
      const before = await load(teamId, id)
      const wasStatic = before.is_static === 1
      if (input.is_static === true && !wasStatic) {
        throw new ValidationError('A dynamic cohort cannot become static: create a static copy instead.', 'is_static')
      }
      const becomesDynamic = input.is_static === false && wasStatic
      const patch: Partial<NewCohortRow> = {}
      if (input.name !== undefined) patch.name = input.name
      if (input.description !== undefined) patch.description = input.description
      if (input.deleted === true && before.deleted === 0) {
        const flags = await activeFlagsUsing(teamId, id)
        if (flags.length > 0) {
          throw new ValidationError(
            `This cohort is used in ${flags.length} active feature flag(s): ${flags.map((f) => f.name || f.key).join(', ')}. ` +
              'Please remove the cohort from these feature flags before deleting it.',
          )
        }
        // cohorts whose definitions name this one would stop working
        const dependents = (await deps.cohorts.allForTeam(teamId)).filter((row) => {
          if (row.deleted === 1 || row.id === id || row.is_static === 1) return false
          const nested = new Set<number>()
          referencesOf(JSON.parse(row.filters), nested)
          return nested.has(id)
        })
        if (dependents.length > 0) {
          const names = dependents.slice(0, 5).map((row) => row.name || 'Unnamed')
          const more = dependents.length > 5 ? `, and ${dependents.length - 5} more` : ''
          throw new ValidationError(
            `This cohort is used as criteria in ${dependents.length} other cohort(s): ${names.join(', ')}${more}. ` +
              'Please remove this cohort from those cohort definitions before deleting it.',
          )
        }
      }
      if (input.deleted !== undefined) patch.deleted = input.deleted ? 1 : 0
      if (becomesDynamic) {
        if (input.filters === undefined && input.groups === undefined) {
          throw new ValidationError('A cohort that becomes dynamic needs filters.', 'filters', 'required')
        }
        patch.is_static = 0
      }
      if (wasStatic && !becomesDynamic && hasConditions(input.filters)) {
        throw new ValidationError(
          'Editing the criteria of a static cohort is not supported yet. Create a new static cohort instead.',
        )
      }
      if ((input.filters !== undefined || input.groups !== undefined) && (!wasStatic || becomesDynamic)) {
        patch.filters = JSON.stringify((await checkFilters(teamId, input, before)).filters)
      }
      const members = await membersOf(teamId, input, lookups)
      if (members.length > 0 && (!wasStatic || becomesDynamic)) {
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
          before: readable(field, before[field as keyof CohortRow]),
          after: readable(field, value),
        }))
      if (added > 0) changes.push({ type: 'Cohort', action: 'changed', field: 'people', before: null, after: added })
      if (changes.length === 0) return toApi(before)
      const saved = await deps.cohorts.update(teamId, id, { ...patch, version: before.version + 1, updated_at: now })
      await log(teamId, actor, saved, patch.deleted === 1 && before.deleted === 0 ? 'deleted' : 'updated', changes)
      deps.cache.invalidate(teamId)
      if (saved.is_static === 0 && saved.deleted === 0 && (patch.filters !== undefined || becomesDynamic)) {
        await calculateSoon(id)
        return toApi((await deps.cohorts.get(teamId, id)) ?? saved)
      }
      return toApi(saved)
    },
    /** PostHog's `add_persons_to_static_cohort`: person ids (UUIDs) → all their distinct ids become members. */
    async addPersons(teamId: number, actor: CohortActor, id: number, input: AddPersonsInput): Promise<CohortRecord> {
      const row = await load(teamId, id)
      if (row.is_static === 0) throw new ValidationError('Can only add persons to a static cohort.', 'person_ids')
      return this.update(teamId, actor, id, { distinct_ids: await personsDistinctIds(teamId, input.person_ids) })
    },
    /** PostHog's `duplicate_as_static_cohort`: a static copy holding the dynamic cohort's members now. */
    async duplicateAsStatic(
      teamId: number,
      actor: CohortActor,
      id: number,
      members: (cohortId: number) => Promise<string[]>,
    ): Promise<CohortRecord> {
      const row = await load(teamId, id)
      const distinctIds = await members(row.id)
      return this.create(teamId, actor, {
        name: `${row.name} (static copy)`,
        description: row.description,
        is_static: true,
        distinct_ids: distinctIds,
      })
    },
  }
}
export type CohortService = ReturnType<typeof createCohortService>

/** Whether filters as sent hold any condition (PostHog's `cohort_filters_have_values`). */
function hasConditions(filters: unknown): boolean {
  const walk = (node: unknown): boolean => {
    if (!node || typeof node !== 'object') return false
    const values = (node as { values?: unknown }).values
    return Array.isArray(values)
      ? values.some((v) => walk(v) || (v && typeof v === 'object' && !('values' in v)))
      : false
  }
  return !!filters && typeof filters === 'object' && walk((filters as { properties?: unknown }).properties)
}

function readable(field: string, value: unknown): unknown {
  if (field === 'filters' && typeof value === 'string') return JSON.parse(value)
  if (field === 'deleted' || field === 'is_static') return value === 1
  return value
}
