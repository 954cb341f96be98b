// Feature-flag management: validation, versioning, soft delete and the activity log. Every change invalidates
// the project's cached definitions so /flags sees it on the next request.
import type { ActivityStore } from '../activity/store.js'
import type { CohortRow, CohortStore } from '../cohorts/store.js'
import { hasBehavioralFilters } from '../cohorts/validation.js'
import { ApiError, NotFound, ValidationError } from '../http/errors.js'
import type { Page } from '../http/pagination.js'
import type { UserStore } from '../users/store.js'
import type { DefinitionsCache } from './cache.js'
import { validateFlagFilters } from './filters-validation.js'
import type { FeatureFlag, FlagCreate, FlagUpdate } from './schemas.js'
import type { FlagListFilter, FlagRow, FlagStore, NewFlagRow } from './store.js'
import type { FlagDefinition, FlagFilters } from './types.js'

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Whether filters' `groups` holds a condition set; anything but a list is left to the filters' own checks. */
const hasConditionSets = (groups: unknown) =>
  groups !== undefined && groups !== null && !(Array.isArray(groups) && groups.length === 0)

export interface Actor {
  userId: number | null
  organizationId: string
}

const KEY_PATTERN = /^[a-zA-Z0-9_-]+$/
const parseList = (text: string): string[] => JSON.parse(text) as string[]

/** The evaluator's view of a stored flag. */
export function toFlagDefinition(row: FlagRow): FlagDefinition {
  const tags = parseList(row.evaluation_tags)
  return {
    id: row.id,
    team_id: row.team_id,
    key: row.key,
    name: row.name,
    active: row.active === 1,
    deleted: row.deleted === 1,
    filters: JSON.parse(row.filters) as FlagFilters,
    ensure_experience_continuity: row.ensure_experience_continuity === 1,
    version: row.version,
    evaluation_runtime: row.evaluation_runtime,
    evaluation_tags: tags,
    evaluation_contexts: tags,
    bucketing_identifier: (row.bucketing_identifier as FlagDefinition['bucketing_identifier']) ?? null,
    has_experiment: false,
  }
}

function simpleRollout(filters: FlagFilters): { isSimple: boolean; rollout: number | null } {
  const groups = filters.groups ?? []
  const isSimple =
    groups.length === 1 &&
    (groups[0].properties ?? []).length === 0 &&
    (filters.aggregation_group_type_index ?? null) === null &&
    !filters.multivariate?.variants?.length
  return { isSimple, rollout: isSimple ? (groups[0].rollout_percentage ?? 100) : null }
}

type UserBasic = FeatureFlag['created_by']

/** PostHog's 409: someone else changed what this edit changes since the editor loaded the flag. */
export class FlagConflict extends ApiError {
  constructor(detail: string) {
    super(409, 'invalid_request', 'conflict', detail)
  }
}

/** Each live cohort's name, and the first cohort with behavioural filters it reaches (itself or nested). */
export function cohortsForFlags(rows: CohortRow[]): Map<number, { name: string; behavioralName: string | null }> {
  const byId = new Map(rows.filter((c) => c.deleted === 0).map((c) => [c.id, c]))
  const nestedOf = (row: CohortRow): number[] => {
    const ids: number[] = []
    const walk = (node: unknown) => {
      if (!node || typeof node !== 'object') return
      const n = node as { values?: unknown; type?: unknown; value?: unknown }
      if (Array.isArray(n.values)) n.values.forEach(walk)
      else if (n.type === 'cohort' && Number.isInteger(Number(n.value))) ids.push(Number(n.value))
    }
    walk((JSON.parse(row.filters) as { properties?: unknown }).properties)
    return ids
  }
  const out = new Map<number, { name: string; behavioralName: string | null }>()
  for (const row of byId.values()) {
    let behavioralName: string | null = null
    const seen = new Set<number>()
    const queue = [row.id]
    while (queue.length > 0 && behavioralName === null) {
      const id = queue.shift() as number
      if (seen.has(id)) continue
      seen.add(id)
      const current = byId.get(id)
      if (!current || current.is_static === 1) continue
      if (hasBehavioralFilters(JSON.parse(current.filters))) behavioralName = current.name
      else queue.push(...nestedOf(current))
    }
    out.set(row.id, { name: row.name, behavioralName })
  }
  return out
}

/** Adds `cohort_name` to each cohort condition, as PostHog shows flags. */
function withCohortNames(filters: FlagFilters, names: ReadonlyMap<number, string>): FlagFilters {
  const name = (property: Record<string, unknown>) =>
    property.type === 'cohort' ? { ...property, cohort_name: names.get(Number(property.value)) ?? null } : property
  const conditions = (list: unknown) =>
    Array.isArray(list)
      ? list.map((c: Record<string, unknown>) =>
          Array.isArray(c.properties) ? { ...c, properties: c.properties.map(name) } : c,
        )
      : list
  return {
    ...filters,
    groups: conditions(filters.groups) as FlagFilters['groups'],
    ...(filters.super_groups ? { super_groups: conditions(filters.super_groups) as FlagFilters['super_groups'] } : {}),
  }
}

/** Fields of an edit compared with `original_flag` for PostHog's conflict check. */
const CONFLICT_FIELDS = ['key', 'name', 'filters', 'active', 'deleted', 'ensure_experience_continuity'] as const

export function createFlagService(deps: {
  flags: Pick<FlagStore, 'list' | 'get' | 'getLiveByKey' | 'insert' | 'update' | 'allForTeam' | 'activeExperimentIds'>
  cohorts: Pick<CohortStore, 'allForTeam'>
  groupTypeIndexes: (teamId: number) => Promise<number[]>
  users: Pick<UserStore, 'get'>
  activity: Pick<ActivityStore, 'log'>
  cache: Pick<DefinitionsCache, 'invalidate'>
  clock: () => Date
}) {
  const userCache = new Map<number, Promise<UserBasic>>()
  const userBasic = (id: number | null): Promise<UserBasic> => {
    if (id === null) return Promise.resolve(null)
    let found = userCache.get(id)
    if (!found) {
      found = deps.users.get(id).then((u) =>
        u
          ? {
              id: u.id,
              uuid: u.uuid,
              distinct_id: u.uuid,
              first_name: u.first_name,
              last_name: u.last_name,
              email: u.email,
            }
          : null,
      )
      userCache.set(id, found)
      if (userCache.size > 1000) userCache.delete(userCache.keys().next().value as number)
    }
    return found
  }

  const projectCohortNames = async (teamId: number) =>
    new Map((await deps.cohorts.allForTeam(teamId)).map((c) => [c.id, c.name]))
  const usesCohorts = (filtersText: string) => filtersText.includes('"cohort"')

  /** The API view of a flag; `names` (the project's cohort names) saves a lookup per flag in lists. */
  async function toApi(row: FlagRow, names?: Map<number, string>): Promise<FeatureFlag> {
    const stored = JSON.parse(row.filters) as FlagFilters
    const { isSimple, rollout } = simpleRollout(stored)
    const [createdBy, modifiedBy] = await Promise.all([userBasic(row.created_by), userBasic(row.last_modified_by)])
    names ??= usesCohorts(row.filters) ? await projectCohortNames(row.team_id) : new Map()
    const filters = names.size > 0 ? withCohortNames(stored, names) : stored
    return {
      id: row.id,
      name: row.name,
      key: row.key,
      filters,
      deleted: row.deleted === 1,
      active: row.active === 1,
      created_by: createdBy,
      last_modified_by: modifiedBy,
      created_at: row.created_at,
      updated_at: row.updated_at,
      version: row.version,
      is_simple_flag: isSimple,
      rollout_percentage: rollout,
      ensure_experience_continuity: row.ensure_experience_continuity === 1,
      evaluation_runtime: row.evaluation_runtime as FeatureFlag['evaluation_runtime'],
      evaluation_tags: parseList(row.evaluation_tags),
      tags: parseList(row.tags),
      bucketing_identifier: (row.bucketing_identifier as FeatureFlag['bucketing_identifier']) ?? null,
      experiment_set: [],
      surveys: [],
      features: [],
      can_edit: true,
      has_encrypted_payloads: false,
      is_remote_configuration: false,
      status: row.deleted === 1 ? 'DELETED' : row.active === 1 ? 'ACTIVE' : 'INACTIVE',
    }
  }

  async function checkFilters(teamId: number, raw: unknown, selfId: number | null): Promise<FlagFilters> {
    const [indexes, cohorts, flags] = await Promise.all([
      deps.groupTypeIndexes(teamId),
      deps.cohorts.allForTeam(teamId),
      deps.flags.allForTeam(teamId),
    ])
    return validateFlagFilters(raw, {
      groupTypeIndexes: new Set(indexes),
      cohorts: cohortsForFlags(cohorts),
      flagIds: new Set(flags.filter((f) => f.deleted === 0 && f.id !== selfId).map((f) => f.id)),
    })
  }

  /** PostHog refuses experience continuity with device-id bucketing (continuity keys on the person). */
  function checkBucketing(continuity: boolean, bucketing: string | null): void {
    if (continuity && bucketing === 'device_id') {
      throw new ValidationError(
        'Experience continuity cannot be used with device_id bucketing: continuity follows the person, device_id bucketing follows the device.',
        'ensure_experience_continuity',
      )
    }
  }

  async function checkKey(teamId: number, key: string, selfId: number | null): Promise<void> {
    if (key === '') throw new ValidationError('This field may not be blank.', 'key', 'blank')
    if (!KEY_PATTERN.test(key)) {
      throw new ValidationError(
        'Only letters, numbers, hyphens (-) & underscores (_) are allowed.',
        'key',
        'invalid_key',
      )
    }
    const existing = await deps.flags.getLiveByKey(teamId, key)
    if (existing && existing.id !== selfId) {
      throw new ValidationError('There is already a feature flag with this key.', 'key', 'unique')
    }
  }

  async function log(teamId: number, actor: Actor, row: FlagRow, activity: string, changes: unknown[]) {
    await deps.activity.log({
      organizationId: actor.organizationId,
      teamId,
      userId: actor.userId,
      scope: 'FeatureFlag',
      itemId: String(row.id),
      activity,
      detail: { id: row.id, name: row.key, short_id: null, type: null, changes, trigger: null },
      createdAt: deps.clock().toISOString(),
    })
  }

  async function load(teamId: number, id: number): Promise<FlagRow> {
    const row = await deps.flags.get(teamId, id)
    if (!row) throw new NotFound()
    return row
  }

  return {
    toApi: (row: FlagRow) => toApi(row),
    async list(
      teamId: number,
      query: Omit<FlagListFilter, 'limit' | 'offset'> & { limit: number; offset: number },
    ): Promise<Omit<Page<FeatureFlag>, 'next' | 'previous'>> {
      const { total, rows } = await deps.flags.list(teamId, query)
      const names = rows.some((row) => usesCohorts(row.filters)) ? await projectCohortNames(teamId) : new Map()
      return { count: total, results: await Promise.all(rows.map((row) => toApi(row, names))) }
    },
    async get(teamId: number, id: number): Promise<FeatureFlag> {
      return toApi(await load(teamId, id))
    },
    /** A remote-config flag's payload (the `true` payload, as JSON text), found by id or by key; null when unset. */
    async remoteConfig(teamId: number, idOrKey: string): Promise<unknown> {
      const row = /^\d+$/.test(idOrKey)
        ? await deps.flags.get(teamId, Number(idOrKey))
        : await deps.flags.getLiveByKey(teamId, idOrKey)
      if (!row || row.deleted === 1) throw new NotFound()
      const payloads = (JSON.parse(row.filters) as { payloads?: Record<string, unknown> }).payloads ?? {}
      return payloads.true ?? null
    },
    async create(teamId: number, actor: Actor, input: FlagCreate): Promise<FeatureFlag> {
      await checkKey(teamId, input.key, null)
      // no filters at all reads, as PostHog's legacy default does, as one condition set that holds for everyone
      let rawFilters = input.filters ?? { groups: [{ properties: [], rollout_percentage: null }] }
      if (input.rollout_percentage !== undefined) {
        const base = (rawFilters && typeof rawFilters === 'object' ? rawFilters : {}) as Record<string, unknown>
        const groups = Array.isArray(base.groups) && base.groups.length > 0 ? base.groups : [{ properties: [] }]
        rawFilters = {
          ...base,
          groups: groups.map((g: Record<string, unknown>, i: number) =>
            i === 0 ? { ...g, rollout_percentage: input.rollout_percentage } : g,
          ),
        }
      }
      if (isObject(rawFilters) && !hasConditionSets(rawFilters.groups)) {
        // PostHog refuses a new flag whose filters hold no condition set (an update may clear them)
        throw new ValidationError('Feature flags must have at least one condition set (group).', 'filters')
      }
      const filters = await checkFilters(teamId, rawFilters, null)
      checkBucketing(input.ensure_experience_continuity === true, input.bucketing_identifier ?? null)
      const now = deps.clock().toISOString()
      const row: NewFlagRow = {
        team_id: teamId,
        key: input.key,
        name: input.name ?? '',
        filters: JSON.stringify(filters),
        active: input.active === false ? 0 : 1,
        deleted: input.deleted ? 1 : 0,
        ensure_experience_continuity: input.ensure_experience_continuity ? 1 : 0,
        evaluation_runtime: input.evaluation_runtime ?? 'all',
        evaluation_tags: JSON.stringify(input.evaluation_tags ?? []),
        tags: JSON.stringify(input.tags ?? []),
        bucketing_identifier: input.bucketing_identifier ?? null,
        version: 1,
        created_by: actor.userId,
        last_modified_by: actor.userId,
        created_at: now,
        updated_at: now,
      }
      const saved = await deps.flags.insert(row)
      await log(teamId, actor, saved, 'created', [])
      deps.cache.invalidate(teamId)
      return toApi(saved)
    },
    async update(teamId: number, actor: Actor, id: number, input: FlagUpdate): Promise<FeatureFlag> {
      const before = await load(teamId, id)
      const patch: Partial<NewFlagRow> = {}
      const undeleting = input.deleted === false && before.deleted === 1
      if (input.key !== undefined && (input.key !== before.key || undeleting)) {
        await checkKey(teamId, input.key, id)
        patch.key = input.key
      } else if (undeleting) {
        await checkKey(teamId, before.key, id)
      }
      if (input.name !== undefined) patch.name = input.name
      // filters without `groups` on an update leave the conditions as they are, as PostHog's PATCH does
      if (input.filters !== undefined && !(isObject(input.filters) && !('groups' in input.filters))) {
        patch.filters = JSON.stringify(await checkFilters(teamId, input.filters, id))
      }
      if (input.active !== undefined) patch.active = input.active ? 1 : 0
      if (input.deleted !== undefined) patch.deleted = input.deleted ? 1 : 0
      if (patch.deleted === 1 && before.deleted === 0) {
        const experiments = await deps.flags.activeExperimentIds(teamId, id)
        if (experiments.length > 0) {
          throw new ValidationError(
            `Cannot delete a feature flag that is linked to active experiment(s) with ID(s): ${experiments.join(', ')}. Please delete the experiment(s) before deleting the flag.`,
          )
        }
      }
      if (input.ensure_experience_continuity !== undefined) {
        patch.ensure_experience_continuity = input.ensure_experience_continuity ? 1 : 0
      }
      if (input.evaluation_runtime !== undefined) patch.evaluation_runtime = input.evaluation_runtime
      if (input.evaluation_tags !== undefined) patch.evaluation_tags = JSON.stringify(input.evaluation_tags)
      if (input.tags !== undefined) patch.tags = JSON.stringify(input.tags)
      if (input.bucketing_identifier !== undefined) patch.bucketing_identifier = input.bucketing_identifier
      checkBucketing(
        (patch.ensure_experience_continuity ?? before.ensure_experience_continuity) === 1,
        patch.bucketing_identifier !== undefined ? patch.bucketing_identifier : before.bucketing_identifier,
      )

      if (input.version !== undefined && input.version !== null && input.version !== before.version) {
        const conflicts = conflictingFields(before, patch, input.original_flag)
        if (conflicts.length > 0) {
          const editor = await userBasic(before.last_modified_by)
          throw new FlagConflict(
            `The feature flag was updated by ${editor?.email ?? 'another user'} since you started editing it. Please refresh and try again.`,
          )
        }
      }

      const changes = Object.entries(patch)
        .filter(([field, value]) => before[field as keyof FlagRow] !== value)
        .map(([field, value]) => ({
          type: 'FeatureFlag',
          action: 'changed',
          field,
          before: readable(field, before[field as keyof FlagRow]),
          after: readable(field, value),
        }))
      if (changes.length === 0) return toApi(before)
      changes.push({
        type: 'FeatureFlag',
        action: 'changed',
        field: 'version',
        before: before.version,
        after: before.version + 1,
      })
      const saved = await deps.flags.update(teamId, id, before.version, {
        ...patch,
        version: before.version + 1,
        last_modified_by: actor.userId,
        updated_at: deps.clock().toISOString(),
      })
      if (!saved) {
        // another write landed between the read and this one: the edit was based on a version that is gone
        throw new FlagConflict(
          'The feature flag was updated by another user since you started editing it. Please refresh and try again.',
        )
      }
      const activity = patch.deleted === 1 && before.deleted === 0 ? 'deleted' : 'updated'
      await log(teamId, actor, saved, activity, changes)
      deps.cache.invalidate(teamId)
      return toApi(saved)
    },
  }
}
export type FlagService = ReturnType<typeof createFlagService>

const JSON_FIELDS = new Set(['filters', 'evaluation_tags', 'tags'])
const BOOLEAN_FIELDS = new Set(['active', 'deleted', 'ensure_experience_continuity'])

/**
 * PostHog's conflict rule: a field conflicts when this edit changes it (differs from `original_flag`, what the
 * editor loaded) and someone else changed it too (the stored value differs from `original_flag` and from this
 * edit). Without `original_flag` nothing conflicts.
 */
function conflictingFields(current: FlagRow, patch: Partial<NewFlagRow>, original: unknown): string[] {
  if (!original || typeof original !== 'object' || Array.isArray(original)) return []
  const loaded = original as Record<string, unknown>
  const same = (a: unknown, b: unknown) => JSON.stringify(normalise(a)) === JSON.stringify(normalise(b))
  return CONFLICT_FIELDS.filter((field) => {
    if (!(field in patch) || !(field in loaded)) return false
    const mine = readable(field, patch[field])
    const stored = readable(field, current[field])
    return !same(mine, loaded[field]) && !same(loaded[field], stored) && !same(mine, stored)
  })
}

/** Key order and cohort names do not make two filter objects different. */
function normalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalise)
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => k !== 'cohort_name')
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, normalise(v)]),
    )
  }
  return value
}

function readable(field: string, value: unknown): unknown {
  if (JSON_FIELDS.has(field) && typeof value === 'string') return JSON.parse(value)
  if (BOOLEAN_FIELDS.has(field)) return value === 1
  return value
}
