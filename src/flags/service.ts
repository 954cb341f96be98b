// Feature-flag management: validation, versioning, soft delete and the activity log. Every change invalidates
// the project's cached definitions so /flags sees it on the next request.
import type { ActivityStore } from '../activity/store.js'
import type { CohortStore } from '../cohorts/store.js'
import { NotFound, ValidationError } from '../http/errors.js'
import type { Page } from '../http/pagination.js'
import type { UserStore } from '../users/store.js'
import type { DefinitionsCache } from './cache.js'
import { validateFlagFilters } from './filters-validation.js'
import type { FeatureFlag, FlagCreate, FlagUpdate } from './schemas.js'
import type { FlagRow, FlagStore, NewFlagRow } from './store.js'
import type { FlagDefinition, FlagFilters } from './types.js'

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

export function createFlagService(deps: {
  flags: Pick<FlagStore, 'list' | 'get' | 'getLiveByKey' | 'insert' | 'update' | 'allForTeam'>
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

  async function toApi(row: FlagRow): Promise<FeatureFlag> {
    const filters = JSON.parse(row.filters) as FlagFilters
    const { isSimple, rollout } = simpleRollout(filters)
    const [createdBy, modifiedBy] = await Promise.all([userBasic(row.created_by), userBasic(row.last_modified_by)])
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
      cohortIds: new Set(cohorts.filter((c) => c.deleted === 0).map((c) => c.id)),
      flagIds: new Set(flags.filter((f) => f.deleted === 0 && f.id !== selfId).map((f) => f.id)),
    })
  }

  async function checkKey(teamId: number, key: string, selfId: number | null): Promise<void> {
    if (key === '') throw new ValidationError('This field may not be blank.', 'key', 'blank')
    if (!KEY_PATTERN.test(key)) {
      throw new ValidationError(
        'Only letters, numbers, hyphens ("-") & underscores ("_") are allowed.',
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
    toApi,
    async list(
      teamId: number,
      query: { limit: number; offset: number; search?: string; active?: boolean },
    ): Promise<Omit<Page<FeatureFlag>, 'next' | 'previous'>> {
      const { total, rows } = await deps.flags.list(teamId, query)
      return { count: total, results: await Promise.all(rows.map(toApi)) }
    },
    async get(teamId: number, id: number): Promise<FeatureFlag> {
      return toApi(await load(teamId, id))
    },
    async create(teamId: number, actor: Actor, input: FlagCreate): Promise<FeatureFlag> {
      await checkKey(teamId, input.key, null)
      let rawFilters = input.filters ?? { groups: [] }
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
      const filters = await checkFilters(teamId, rawFilters, null)
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
      if (input.filters !== undefined) patch.filters = JSON.stringify(await checkFilters(teamId, input.filters, id))
      if (input.active !== undefined) patch.active = input.active ? 1 : 0
      if (input.deleted !== undefined) patch.deleted = input.deleted ? 1 : 0
      if (input.ensure_experience_continuity !== undefined) {
        patch.ensure_experience_continuity = input.ensure_experience_continuity ? 1 : 0
      }
      if (input.evaluation_runtime !== undefined) patch.evaluation_runtime = input.evaluation_runtime
      if (input.evaluation_tags !== undefined) patch.evaluation_tags = JSON.stringify(input.evaluation_tags)
      if (input.tags !== undefined) patch.tags = JSON.stringify(input.tags)
      if (input.bucketing_identifier !== undefined) patch.bucketing_identifier = input.bucketing_identifier

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
      const saved = await deps.flags.update(teamId, id, {
        ...patch,
        version: before.version + 1,
        last_modified_by: actor.userId,
        updated_at: deps.clock().toISOString(),
      })
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

function readable(field: string, value: unknown): unknown {
  if (JSON_FIELDS.has(field) && typeof value === 'string') return JSON.parse(value)
  if (BOOLEAN_FIELDS.has(field)) return value === 1
  return value
}
