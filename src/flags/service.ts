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
import type { FlagCondition, FlagDefinition, FlagFilters } from './types.js'

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

/** The live, active flags whose conditions depend on this flag (`type: "flag"`, key = its id), by key. */
export function dependentFlags(all: FlagRow[], flagId: number): FlagRow[] {
  return all
    .filter((f) => f.deleted === 0 && f.active === 1 && f.id !== flagId)
    .filter((f) => {
      const groups = (JSON.parse(f.filters) as FlagFilters).groups ?? []
      return groups.some((g) => (g.properties ?? []).some((p) => p.type === 'flag' && String(p.key) === String(flagId)))
    })
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
}

/** Filters whose super conditions' `$feature_enrollment/<old key>` now name the new key; undefined when none do. */
export function renameEnrollmentKey(filters: FlagFilters, oldKey: string, newKey: string): FlagFilters | undefined {
  const from = `$feature_enrollment/${oldKey}`
  if (!filters.super_groups?.some((g) => (g.properties ?? []).some((p) => p.key === from))) return undefined
  return {
    ...filters,
    super_groups: filters.super_groups.map((g) => ({
      ...g,
      properties: (g.properties ?? []).map((p) =>
        p.key === from ? { ...p, key: `$feature_enrollment/${newKey}` } : p,
      ),
    })),
  }
}

/** A condition that holds for everyone it reaches: no properties and a 100% rollout (unset reads as 100%). */
const isFullCondition = (c: FlagCondition) =>
  (c.properties ?? []).length === 0 &&
  (c.rollout_percentage === null || c.rollout_percentage === undefined ? true : c.rollout_percentage === 100)

/**
 * Whether a flag serves one answer to everyone, and which: PostHog's rule for stale flags (a condition for
 * everyone at 100%, and for a multivariate flag one variant at 100% or that condition's variant override).
 */
export function fullRollout(filters: FlagFilters): { full: boolean; variant: string | null } {
  const groups = filters.groups ?? []
  const variants = filters.multivariate?.variants ?? []
  if (variants.length > 0) {
    const full = groups.find(isFullCondition)
    if (!full) return { full: false, variant: null }
    if (full.variant) return { full: true, variant: full.variant }
    const winner = variants.find((v) => v.rollout_percentage === 100)
    return winner ? { full: true, variant: winner.key } : { full: false, variant: null }
  }
  return { full: groups.length === 0 || groups.some(isFullCondition), variant: null }
}

/** PostHog's bulk-delete vocabulary: fully rolled out (and to which variant), not rolled out, or partial. */
export function rolloutState(filters: FlagFilters): {
  rollout_state: 'fully_rolled_out' | 'not_rolled_out' | 'partial'
  active_variant: string | null
} {
  const { full, variant } = fullRollout(filters)
  if (full) return { rollout_state: 'fully_rolled_out', active_variant: variant }
  const groups = filters.groups ?? []
  if (groups.length > 0 && groups.every((g) => g.rollout_percentage === 0)) {
    return { rollout_state: 'not_rolled_out', active_variant: null }
  }
  return { rollout_state: 'partial', active_variant: null }
}

/** A value as Python prints it inside a list (PostHog's messages show lists that way). */
function pythonItem(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`
  if (value === null || value === undefined) return 'None'
  if (value === true) return 'True'
  if (value === false) return 'False'
  if (Array.isArray(value)) return `[${value.map(pythonItem).join(', ')}]`
  if (typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([k, v]) => `'${k}': ${pythonItem(v)}`)
      .join(', ')}}`
  }
  return String(value)
}

/** How old a flag must be before PostHog may call it stale. */
const STALE_AFTER_MS = 30 * 24 * 3600 * 1000

/** Flag ids a SQL integer column can hold; PostHog takes digit strings as ids too. */
const MAX_ID = 2 ** 31 - 1

/** An answer PostHog gives as `{"error": …}` with a status (bulk actions), not as a validation error body. */
export class BulkActionError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: Record<string, unknown>,
  ) {
    super(String(body.error))
  }
}

/** The list filters a bulk delete may select flags by (anything else is refused, never ignored). */
const BULK_DELETE_FILTERS = new Set(['search', 'active', 'type', 'created_by_id', 'evaluation_runtime'])

/** Fields of an edit compared with `original_flag` for PostHog's conflict check. */
const CONFLICT_FIELDS = ['key', 'name', 'filters', 'active', 'deleted', 'ensure_experience_continuity'] as const

export function createFlagService(deps: {
  flags: Pick<
    FlagStore,
    | 'list'
    | 'get'
    | 'getLiveByKey'
    | 'insert'
    | 'update'
    | 'allForTeam'
    | 'activeExperimentIds'
    | 'experimentIdsByFlag'
    | 'hasDeletedExperiment'
    | 'matchingIds'
    | 'liveByIds'
  >
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

  /**
   * The API view of a flag; `names` (the project's cohort names) and `experiments` (experiment ids by flag) save
   * lookups per flag in lists.
   */
  async function toApi(
    row: FlagRow,
    names?: Map<number, string>,
    experiments?: Map<number, number[]>,
  ): Promise<FeatureFlag> {
    const stored = JSON.parse(row.filters) as FlagFilters
    const { isSimple, rollout } = simpleRollout(stored)
    const [createdBy, modifiedBy, experimentSet] = await Promise.all([
      userBasic(row.created_by),
      userBasic(row.last_modified_by),
      experiments ?? deps.flags.experimentIdsByFlag(row.team_id, [row.id]),
    ])
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
      experiment_set: experimentSet.get(row.id) ?? [],
      surveys: [],
      features: [],
      can_edit: true,
      has_encrypted_payloads: false,
      is_remote_configuration: false,
      status: row.deleted === 1 ? 'DELETED' : isStale(row, stored) ? 'STALE' : row.active === 1 ? 'ACTIVE' : 'INACTIVE',
    }
  }

  /**
   * PostHog's stale flag judged by its configuration (what PostHog does for a flag without call records, and Burrow
   * keeps none): active, live, 30 days old or more, and serving one answer to everyone.
   */
  function isStale(row: FlagRow, filters: FlagFilters = JSON.parse(row.filters) as FlagFilters): boolean {
    if (row.deleted === 1 || row.active !== 1) return false
    if (deps.clock().getTime() - new Date(row.created_at).getTime() < STALE_AFTER_MS) return false
    return fullRollout(filters).full
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

  /**
   * PostHog's rule: evaluation tags sent must be among the tags sent in the same request (compared as PostHog's
   * tagify does, trimmed and lower-cased); an empty list of evaluation tags is always fine.
   */
  function checkEvaluationTags(input: FlagUpdate): void {
    if (!input.evaluation_tags || input.evaluation_tags.length === 0) return
    const norm = (tag: string) => tag.trim().toLowerCase()
    const tags = new Set((input.tags ?? []).map(norm))
    const invalid = [...new Set(input.evaluation_tags.map(norm))].filter((tag) => !tags.has(tag)).sort()
    if (invalid.length > 0) {
      throw new ValidationError(
        `Evaluation tags must be a subset of tags. Invalid evaluation tags: ${invalid.join(', ')}`,
      )
    }
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

  /**
   * Why PostHog refuses to delete this flag, if it does: an experiment (not deleted) runs on it, or an active flag
   * depends on it.
   */
  async function deleteBlocker(teamId: number, flag: FlagRow): Promise<string | null> {
    const experiments = await deps.flags.activeExperimentIds(teamId, flag.id)
    if (experiments.length > 0) {
      return `Cannot delete a feature flag that is linked to active experiment(s) with ID(s): ${experiments.join(', ')}. Please delete the experiment(s) before deleting the flag.`
    }
    const dependents = dependentFlags(await deps.flags.allForTeam(teamId), flag.id)
    if (dependents.length > 0) {
      const names = dependents.slice(0, 5).map((f) => `${f.key} (ID: ${f.id})`)
      if (dependents.length > 5) names.push(`and ${dependents.length - 5} more`)
      return `Cannot delete this feature flag because other flags depend on it: ${names.join(', ')}. Please update or delete the dependent flags first.`
    }
    return null
  }

  /** PostHog frees a deleted flag's key when a deleted experiment still points at it: `<key>:deleted:<id>`. */
  async function deletedKey(teamId: number, flag: FlagRow): Promise<string | undefined> {
    return (await deps.flags.hasDeletedExperiment(teamId, flag.id)) ? `${flag.key}:deleted:${flag.id}` : undefined
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
      query: Omit<FlagListFilter, 'limit' | 'offset'> & { limit: number; offset: number; stale?: boolean },
    ): Promise<Omit<Page<FeatureFlag>, 'next' | 'previous'>> {
      let { total, rows } = await deps.flags.list(
        teamId,
        query.stale ? { ...query, active: true, limit: 1_000_000_000, offset: 0 } : query,
      )
      if (query.stale) {
        // `active=STALE`: staleness is worked out per flag, so the page is cut after it
        const stale = rows.filter((row) => isStale(row))
        total = stale.length
        rows = stale.slice(query.offset, query.offset + query.limit)
      }
      const names = rows.some((row) => usesCohorts(row.filters)) ? await projectCohortNames(teamId) : new Map()
      const experiments = await deps.flags.experimentIdsByFlag(
        teamId,
        rows.map((row) => row.id),
      )
      return { count: total, results: await Promise.all(rows.map((row) => toApi(row, names, experiments))) }
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
    /** PostHog's `matching_ids`: every live flag id the list filters select, and how many. */
    async matchingIds(teamId: number, filter: Omit<FlagListFilter, 'limit' | 'offset'>) {
      const ids = await deps.flags.matchingIds(teamId, filter)
      return { ids, total: ids.length }
    },
    /** PostHog's `bulk_keys`: id → key of the live flags among `ids` (digit strings count as ids). */
    async bulkKeys(teamId: number, ids: unknown): Promise<Record<string, unknown>> {
      const list = Array.isArray(ids) ? ids : ids ? [ids] : []
      if (list.length === 0) return { keys: {} }
      const valid: number[] = []
      const invalid: unknown[] = []
      for (const id of list) {
        if ((typeof id === 'number' || typeof id === 'string') && /^\d+$/.test(String(id))) valid.push(Number(id))
        else invalid.push(id)
      }
      if (valid.length === 0) throw new BulkActionError(400, { error: 'Invalid flag IDs provided' })
      const rows = await deps.flags.liveByIds(
        teamId,
        valid.filter((id) => id <= MAX_ID),
      )
      const answer: Record<string, unknown> = { keys: Object.fromEntries(rows.map((r) => [String(r.id), r.key])) }
      if (invalid.length > 0) answer.warning = `Invalid flag IDs ignored: ${pythonItem(invalid)}`
      return answer
    },
    /**
     * PostHog's `bulk_delete`: the flags named by `ids`, or selected by list `filters` (not both), each deleted as
     * PATCH `deleted: true` would (same refusals, same activity log); refusals are reported per flag.
     */
    async bulkDelete(teamId: number, actor: Actor, body: unknown) {
      const input = isObject(body) ? body : {}
      const hasFilters = input.filters !== undefined && input.filters !== null
      const hasIds = input.ids !== undefined && input.ids !== null
      if (hasFilters && hasIds) {
        throw new BulkActionError(400, { error: 'Must provide either filters or ids, not both' })
      }
      if (!hasFilters && !hasIds) throw new BulkActionError(400, { error: 'Must provide either filters or ids' })
      let ids: number[]
      const errors: Array<{ id: unknown; key?: string; reason: string }> = []
      if (hasIds) {
        if (!Array.isArray(input.ids)) throw new BulkActionError(400, { error: 'ids must be a list' })
        ids = []
        for (const id of input.ids) {
          if ((typeof id === 'number' || typeof id === 'string') && /^\d+$/.test(String(id))) ids.push(Number(id))
          else errors.push({ id, reason: 'Invalid flag ID' })
        }
      } else {
        if (!isObject(input.filters)) throw new BulkActionError(400, { error: 'filters must be an object' })
        const unknown = Object.keys(input.filters)
          .filter((k) => !BULK_DELETE_FILTERS.has(k))
          .sort()
        if (unknown.length > 0) {
          throw new BulkActionError(400, { error: `Unknown filter keys: ${unknown.join(', ')}` })
        }
        const f = input.filters
        const active =
          f.active === true || f.active === 'true'
            ? true
            : f.active === false || f.active === 'false'
              ? false
              : undefined
        if (f.active !== undefined && active === undefined) {
          throw new BulkActionError(400, { error: 'active must be true or false' })
        }
        if (f.type !== undefined && f.type !== 'boolean' && f.type !== 'multivariant' && f.type !== 'experiment') {
          throw new BulkActionError(400, { error: 'type must be boolean, multivariant or experiment' })
        }
        ids = await deps.flags.matchingIds(teamId, {
          search: typeof f.search === 'string' && f.search !== '' ? f.search : undefined,
          active,
          type: f.type as FlagListFilter['type'],
          createdBy: f.created_by_id !== undefined && f.created_by_id !== null ? Number(f.created_by_id) : undefined,
          evaluationRuntime: typeof f.evaluation_runtime === 'string' ? f.evaluation_runtime : undefined,
        })
      }
      const live = new Map(
        (
          await deps.flags.liveByIds(
            teamId,
            ids.filter((id) => id <= MAX_ID),
          )
        ).map((r) => [r.id, r]),
      )
      const deleted: Array<{ id: number; key: string } & ReturnType<typeof rolloutState>> = []
      for (const id of ids) {
        const row = live.get(id)
        if (!row) {
          errors.push({ id, reason: 'Flag not found' })
          continue
        }
        try {
          await this.update(teamId, actor, id, { deleted: true })
          deleted.push({ id, key: row.key, ...rolloutState(JSON.parse(row.filters) as FlagFilters) })
        } catch (error) {
          if (!(error instanceof ApiError)) throw error
          errors.push({ id, key: row.key, reason: error.detail })
        }
      }
      return { deleted, errors }
    },
    /**
     * PostHog's flag status: deleted, stale (older than 30 days and serving one answer to everyone; Burrow does not
     * record when a flag was last called, which PostHog also judges without), or active.
     */
    async status(teamId: number, id: number): Promise<{ status: string; reason: string } | null> {
      const row = await deps.flags.get(teamId, id)
      if (!row) return null
      if (row.deleted === 1) return { status: 'deleted', reason: 'Flag has been deleted' }
      const ageMs = deps.clock().getTime() - new Date(row.created_at).getTime()
      const filters = JSON.parse(row.filters) as FlagFilters
      if (row.active === 1 && ageMs >= STALE_AFTER_MS) {
        const { full, variant } = fullRollout(filters)
        if (full) {
          return {
            status: 'stale',
            reason: variant
              ? `This flag will always use the variant "${variant}"`
              : 'This boolean flag will always evaluate to "true"',
          }
        }
      }
      return { status: 'active', reason: 'Flag is not fully rolled out and may still be actively called' }
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
      checkEvaluationTags(input)
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
        const freed = before.key.match(/^(.*):deleted:\d+$/)
        await checkKey(teamId, freed ? freed[1] : before.key, id)
        if (freed) patch.key = freed[1]
      }
      if (input.name !== undefined) patch.name = input.name
      // filters without `groups` on an update leave the conditions as they are, as PostHog's PATCH does
      if (input.filters !== undefined && !(isObject(input.filters) && !('groups' in input.filters))) {
        patch.filters = JSON.stringify(await checkFilters(teamId, input.filters, id))
      }
      if (input.active !== undefined) patch.active = input.active ? 1 : 0
      if (input.deleted !== undefined) patch.deleted = input.deleted ? 1 : 0
      if (patch.deleted === 1 && before.deleted === 0) {
        const blocker = await deleteBlocker(teamId, before)
        if (blocker) throw new ValidationError(blocker)
        const freed = await deletedKey(teamId, before)
        if (freed) patch.key = freed
      }
      // a new key carries the opt-in super condition's `$feature_enrollment/<key>` property along
      if (patch.key !== undefined && patch.key !== before.key && patch.deleted !== 1) {
        const current = JSON.parse(patch.filters ?? before.filters) as FlagFilters
        const renamed = renameEnrollmentKey(current, before.key, patch.key)
        if (renamed) patch.filters = JSON.stringify(renamed)
      }
      if (input.ensure_experience_continuity !== undefined) {
        patch.ensure_experience_continuity = input.ensure_experience_continuity ? 1 : 0
      }
      if (input.evaluation_runtime !== undefined) patch.evaluation_runtime = input.evaluation_runtime
      checkEvaluationTags(input)
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
