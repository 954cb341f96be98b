// The experiments' sibling resources: holdout groups (written into the flags of the experiments that use them)
// and saved metrics (shared ExperimentMetric definitions linked into experiments).
import { randomUUID } from 'node:crypto'
import type { FlagService } from '../flags/service.js'
import type { FlagStore } from '../flags/store.js'
import { NotFound, ValidationError } from '../http/errors.js'
import type { UserStore } from '../users/store.js'
import type { ExperimentActor } from './service.js'
import type { ExperimentStore, HoldoutRow, SavedMetricRow } from './store.js'

type Json = Record<string, any>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const parse = <T = any>(text: string | null, fallback: T): T => (text === null ? fallback : (JSON.parse(text) as T))

function checkName(input: Json, required: boolean) {
  if (input.name === undefined) {
    if (required) throw new ValidationError('This field is required.', 'name', 'required')
    return
  }
  if (typeof input.name !== 'string' || input.name.trim() === '')
    throw new ValidationError('This field may not be blank.', 'name', 'blank')
  if (input.name.length > 400)
    throw new ValidationError('Ensure this field has no more than 400 characters.', 'name', 'max_length')
}

function checkHoldoutFilters(filters: unknown): Json[] {
  if (!Array.isArray(filters) || filters.length === 0)
    throw new ValidationError('Filters must not be empty.', 'filters')
  for (const f of filters) {
    if (!isObject(f)) throw new ValidationError('Each filter group must be an object.', 'filters')
    if (f.rollout_percentage === undefined || f.rollout_percentage === null) {
      throw new ValidationError('Rollout percentage must be present.', 'filters')
    }
    if (typeof f.rollout_percentage !== 'number' || f.rollout_percentage < 0 || f.rollout_percentage > 100) {
      throw new ValidationError('Rollout percentage must be between 0 and 100.', 'filters')
    }
  }
  return filters as Json[]
}

function checkSavedQuery(query: unknown): Json {
  if (!isObject(query)) throw new ValidationError('Query is required to create a saved metric', 'query')
  if (query.kind !== 'ExperimentMetric') {
    throw new ValidationError('Metric query kind must be ExperimentMetric', 'query')
  }
  if (!['mean', 'funnel', 'ratio', 'retention'].includes(query.metric_type)) {
    throw new ValidationError('ExperimentMetric metric_type must be mean, funnel, ratio or retention', 'query')
  }
  return { ...query, uuid: typeof query.uuid === 'string' && query.uuid !== '' ? query.uuid : randomUUID() }
}

export function createExperimentResources(deps: {
  store: ExperimentStore
  flags: Pick<FlagService, 'update'>
  flagRows: Pick<FlagStore, 'get'>
  users: Pick<UserStore, 'get'>
  clock: () => Date
}) {
  const { store } = deps
  async function createdBy(id: number | null) {
    if (id === null) return null
    const u = await deps.users.get(id)
    return u
      ? {
          id: u.id,
          uuid: u.uuid,
          distinct_id: u.uuid,
          first_name: u.first_name,
          last_name: u.last_name,
          email: u.email,
        }
      : null
  }
  const holdoutApi = async (h: HoldoutRow) => ({
    id: h.id,
    name: h.name,
    description: h.description,
    filters: parse(h.filters, []),
    created_by: await createdBy(h.created_by),
    created_at: h.created_at,
    updated_at: h.updated_at,
  })
  const savedApi = async (s: SavedMetricRow) => ({
    id: s.id,
    name: s.name,
    description: s.description,
    query: parse(s.query, {}),
    metadata: parse(s.metadata, null),
    created_by: await createdBy(s.created_by),
    created_at: s.created_at,
    updated_at: s.updated_at,
  })
  async function loadHoldout(teamId: number, id: number) {
    const row = Number.isSafeInteger(id) ? await store.holdouts.get(teamId, id) : undefined
    if (!row) throw new NotFound()
    return row
  }
  async function loadSaved(teamId: number, id: number) {
    const row = Number.isSafeInteger(id) ? await store.savedMetrics.get(teamId, id) : undefined
    if (!row) throw new NotFound()
    return row
  }
  /** Rewrites the holdout into the flags of the experiments that use it (or takes it out when removed). */
  async function syncFlags(teamId: number, actor: ExperimentActor, holdout: HoldoutRow, removed: boolean) {
    const groups = parse<Json[]>(holdout.filters, [])
    for (const experiment of await store.usingHoldout(teamId, holdout.id)) {
      const flag = await deps.flagRows.get(teamId, experiment.feature_flag_id)
      if (!flag || flag.deleted === 1) continue
      const filters = parse<Json>(flag.filters, {})
      if (removed) delete filters.holdout
      else filters.holdout = { id: holdout.id, exclusion_percentage: Number(groups[0]?.rollout_percentage ?? 0) }
      await deps.flags.update(teamId, actor, flag.id, { filters })
    }
  }

  return {
    holdouts: {
      async list(teamId: number) {
        return Promise.all((await store.holdouts.list(teamId)).map(holdoutApi))
      },
      async get(teamId: number, id: number) {
        return holdoutApi(await loadHoldout(teamId, id))
      },
      async create(teamId: number, actor: ExperimentActor, input: Json) {
        checkName(input, true)
        if (input.filters === undefined || (Array.isArray(input.filters) && input.filters.length === 0)) {
          throw new ValidationError('Filters are required to create an holdout group', 'filters')
        }
        const filters = checkHoldoutFilters(input.filters)
        const now = deps.clock().toISOString()
        const row = await store.holdouts.insert({
          team_id: teamId,
          name: input.name,
          description: input.description ?? null,
          filters: '[]',
          created_by: actor.userId,
          created_at: now,
          updated_at: now,
        })
        const stamped = filters.map((f) => ({ ...f, variant: `holdout-${row.id}` }))
        return holdoutApi(await store.holdouts.update(teamId, row.id, { filters: JSON.stringify(stamped) }))
      },
      async update(teamId: number, actor: ExperimentActor, id: number, input: Json) {
        const before = await loadHoldout(teamId, id)
        checkName(input, false)
        const patch: Json = { updated_at: deps.clock().toISOString() }
        if (input.name !== undefined) patch.name = input.name
        if (input.description !== undefined) patch.description = input.description
        if (input.filters !== undefined) {
          patch.filters = JSON.stringify(
            checkHoldoutFilters(input.filters).map((f) => ({ ...f, variant: `holdout-${before.id}` })),
          )
        }
        const after = await store.holdouts.update(teamId, id, patch)
        if (patch.filters !== undefined) await syncFlags(teamId, actor, after, false)
        return holdoutApi(after)
      },
      async remove(teamId: number, actor: ExperimentActor, id: number) {
        const row = await loadHoldout(teamId, id)
        await syncFlags(teamId, actor, row, true)
        for (const experiment of await store.usingHoldout(teamId, id)) {
          await store.update(teamId, experiment.id, { holdout_id: null, updated_at: deps.clock().toISOString() })
        }
        await store.holdouts.remove(teamId, id)
      },
    },
    savedMetrics: {
      async list(teamId: number) {
        return Promise.all((await store.savedMetrics.list(teamId)).map(savedApi))
      },
      async get(teamId: number, id: number) {
        return savedApi(await loadSaved(teamId, id))
      },
      async create(teamId: number, actor: ExperimentActor, input: Json) {
        checkName(input, true)
        const query = checkSavedQuery(input.query)
        const now = deps.clock().toISOString()
        const row = await store.savedMetrics.insert({
          team_id: teamId,
          name: input.name,
          description: input.description ?? null,
          query: JSON.stringify(query),
          metadata: input.metadata === undefined ? null : JSON.stringify(input.metadata),
          created_by: actor.userId,
          created_at: now,
          updated_at: now,
        })
        return savedApi(row)
      },
      async update(teamId: number, _actor: ExperimentActor, id: number, input: Json) {
        const before = await loadSaved(teamId, id)
        checkName(input, false)
        const patch: Json = { updated_at: deps.clock().toISOString() }
        if (input.name !== undefined) patch.name = input.name
        if (input.description !== undefined) patch.description = input.description
        if (input.metadata !== undefined) patch.metadata = JSON.stringify(input.metadata)
        if (input.query !== undefined) {
          const query = checkSavedQuery(input.query)
          // The uuid identifies the metric in experiments' ordering arrays: it stays.
          query.uuid = parse<Json>(before.query, {}).uuid ?? query.uuid
          patch.query = JSON.stringify(query)
        }
        return savedApi(await store.savedMetrics.update(teamId, id, patch))
      },
      async remove(teamId: number, _actor: ExperimentActor, id: number) {
        await loadSaved(teamId, id)
        await store.savedMetrics.remove(teamId, id)
      },
    },
  }
}
export type ExperimentResources = ReturnType<typeof createExperimentResources>
