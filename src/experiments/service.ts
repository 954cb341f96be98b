// Experiments: create (reusing an eligible flag or creating one through the flag service), update with PostHog's
// rules and messages, soft delete, lifecycle helpers, duplication, the exposure cohort and the list filters. Metric
// uuids, ordering arrays and fingerprints are kept as PostHog keeps them.
import { randomUUID } from 'node:crypto'
import type { ActivityStore } from '../activity/store.js'
import type { CohortService } from '../cohorts/service.js'
import type { FeatureFlag } from '../flags/schemas.js'
import type { FlagService } from '../flags/service.js'
import type { FlagRow, FlagStore } from '../flags/store.js'
import { NotFound, ValidationError } from '../http/errors.js'
import type { UserStore } from '../users/store.js'
import { metricFingerprint } from './fingerprint.js'
import type { ExperimentRow, ExperimentStore, HoldoutRow, NewExperimentRow } from './store.js'
import { createExperimentSubjects } from './subject.js'

export interface ExperimentActor {
  userId: number | null
  organizationId: string
}

type Json = Record<string, any>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const parse = <T = any>(text: string | null, fallback: T): T => (text === null ? fallback : (JSON.parse(text) as T))

export const DEFAULT_VARIANTS = [
  { key: 'control', name: 'Control Group', rollout_percentage: 50 },
  { key: 'test', name: 'Test Variant', rollout_percentage: 50 },
]

const CREATE_KEYS = new Set([
  'name',
  'description',
  'start_date',
  'end_date',
  'feature_flag_key',
  'parameters',
  'secondary_metrics',
  'saved_metrics_ids',
  'filters',
  'archived',
  'deleted',
  'type',
  'holdout_id',
  'exposure_criteria',
  'metrics',
  'metrics_secondary',
  'stats_config',
  'scheduling_config',
  'only_count_matured_users',
  '_create_in_folder',
  'conclusion',
  'conclusion_comment',
  'primary_metrics_ordered_uuids',
  'secondary_metrics_ordered_uuids',
  'allow_unknown_events',
  'update_feature_flag_params',
])
const UPDATE_KEYS = new Set([
  'name',
  'description',
  'start_date',
  'end_date',
  'filters',
  'parameters',
  'archived',
  'deleted',
  'secondary_metrics',
  'holdout',
  'holdout_id',
  'exposure_criteria',
  'metrics',
  'metrics_secondary',
  'stats_config',
  'conclusion',
  'conclusion_comment',
  'primary_metrics_ordered_uuids',
  'secondary_metrics_ordered_uuids',
  'saved_metrics_ids',
  'scheduling_config',
  'only_count_matured_users',
  'update_feature_flag_params',
  'allow_unknown_events',
  '_create_in_folder',
])
const CONCLUSIONS = ['won', 'lost', 'inconclusive', 'stopped_early', 'invalid']
const TYPES = ['web', 'product']
const ORDER_FIELDS = ['name', 'created_at', 'updated_at', 'start_date', 'end_date', 'duration', 'status', 'created_by']

export interface ExperimentInput extends Json {}

function dateOf(value: unknown, attr: string): string | null {
  if (value === null || value === undefined || value === '') return null
  const d =
    typeof value === 'string'
      ? new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) || value.length <= 10 ? value : `${value}Z`)
      : null
  if (!d || Number.isNaN(d.getTime())) {
    throw new ValidationError(
      'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].',
      attr,
      'invalid',
    )
  }
  return d.toISOString()
}

function flagVariants(flag: FlagRow): Json[] {
  const filters = parse<Json>(flag.filters, {})
  return Array.isArray(filters.multivariate?.variants) ? filters.multivariate.variants : []
}

/** Eligible for an experiment: multivariate with at least 2 variants, the first one `control`. */
export function isEligibleFlag(flag: FlagRow): boolean {
  const variants = flagVariants(flag)
  return variants.length > 1 && variants[0]?.key === 'control'
}

function checkParameters(value: unknown): Json | null {
  if (value === null || value === undefined) return null
  if (!isObject(value)) throw new ValidationError('Parameters must be an object.', 'parameters')
  if (Object.keys(value).length === 0) return value
  const variants = value.feature_flag_variants ?? []
  if (!Array.isArray(variants)) throw new ValidationError('feature_flag_variants must be a list.', 'parameters')
  for (const v of variants) {
    if (!isObject(v) || typeof v.key !== 'string') {
      throw new ValidationError('Each feature flag variant must be an object with a key.', 'parameters')
    }
  }
  // A case-insensitive "Control" becomes `control` when no exact `control` exists (PostHog's normalisation).
  if (!variants.some((v: Json) => v.key === 'control')) {
    for (const v of variants as Json[]) if (v.key.toLowerCase() === 'control') v.key = 'control'
  }
  if (variants.length >= 21) throw new ValidationError('Feature flag variants must be less than 21', 'parameters')
  if (variants.length > 0) {
    if (variants.length < 2) {
      throw new ValidationError(
        'Feature flag must have at least 2 variants (control and at least one test variant)',
        'parameters',
      )
    }
    if (!variants.some((v: Json) => v.key === 'control')) {
      throw new ValidationError('Feature flag variants must contain a control variant', 'parameters')
    }
  }
  const excluded = value.excluded_variants
  if (excluded !== undefined && excluded !== null) {
    if (!Array.isArray(excluded) || excluded.some((k) => typeof k !== 'string')) {
      throw new ValidationError('excluded_variants must be a list of variant keys.', 'parameters')
    }
  }
  return value
}

function checkExposureCriteria(value: unknown): Json {
  if (value === null || value === undefined) return {}
  if (!isObject(value)) throw new ValidationError('Invalid exposure criteria', 'exposure_criteria')
  if ('filterTestAccounts' in value && typeof value.filterTestAccounts !== 'boolean') {
    throw new ValidationError('filterTestAccounts must be a boolean', 'exposure_criteria')
  }
  const handling = value.multiple_variant_handling
  if (handling !== undefined && handling !== null && handling !== 'exclude' && handling !== 'first_seen') {
    throw new ValidationError('Invalid exposure criteria', 'exposure_criteria')
  }
  const config = value.exposure_config
  if (config !== undefined && config !== null) {
    const ok =
      isObject(config) &&
      ((config.kind === 'ExperimentEventExposureConfig' && typeof config.event === 'string') ||
        (config.kind === 'ActionsNode' && Number.isInteger(config.id)))
    if (!ok) throw new ValidationError('Invalid exposure criteria', 'exposure_criteria')
  }
  return value
}

function checkMetrics(value: unknown, attr: string): Json[] {
  if (value === null || value === undefined) return []
  if (!Array.isArray(value)) throw new ValidationError('Metrics must be a list.', attr)
  value.forEach((m, i) => {
    if (!isObject(m)) throw new ValidationError(`Invalid metric at index ${i}: a metric must be an object.`, attr)
    if (m.kind === 'ExperimentTrendsQuery' || m.kind === 'ExperimentFunnelsQuery') {
      throw new ValidationError(
        `Invalid metric at index ${i}: legacy metric kind '${m.kind}' is no longer supported for new experiments. Use 'ExperimentMetric' instead.`,
        attr,
      )
    }
    if (m.kind !== 'ExperimentMetric') {
      throw new ValidationError(`Invalid metric at index ${i}: kind must be 'ExperimentMetric'.`, attr)
    }
    if (!['mean', 'funnel', 'ratio', 'retention'].includes(m.metric_type)) {
      throw new ValidationError(
        `Invalid metric at index ${i}: metric_type must be one of mean, funnel, ratio, retention.`,
        attr,
      )
    }
    const nodes: unknown[] =
      m.metric_type === 'mean'
        ? [m.source]
        : m.metric_type === 'funnel'
          ? Array.isArray(m.series)
            ? m.series
            : []
          : m.metric_type === 'ratio'
            ? [m.numerator, m.denominator]
            : [m.start_event, m.completion_event]
    if (m.metric_type === 'funnel' && nodes.length === 0) {
      throw new ValidationError(`Invalid metric at index ${i}: a funnel metric needs at least one step.`, attr)
    }
    for (const node of nodes) {
      if (!isObject(node) || !['EventsNode', 'ActionsNode', 'ExperimentDataWarehouseNode'].includes(node.kind)) {
        throw new ValidationError(
          `Invalid metric at index ${i}: every source must be an EventsNode or ActionsNode.`,
          attr,
        )
      }
      if (node.kind === 'EventsNode' && node.id !== undefined && node.id !== null) {
        throw new ValidationError(
          `Invalid metric at index ${i}: EventsNode has an 'id' field. Use ActionsNode for actions.`,
          attr,
        )
      }
    }
  })
  return structuredClone(value) as Json[]
}

export function createExperimentService(deps: {
  store: ExperimentStore
  flags: Pick<FlagService, 'create' | 'update' | 'toApi'>
  flagRows: Pick<FlagStore, 'get' | 'getLiveByKey' | 'allForTeam'>
  cohorts: Pick<CohortService, 'create' | 'get'>
  users: Pick<UserStore, 'get'>
  activity: Pick<ActivityStore, 'log'>
  projectTimezone: (teamId: number) => Promise<string>
  /** distinct ids that sent `$feature_flag_called` for the flag in the window (for the exposure cohort) */
  exposedDistinctIds: (teamId: number, flagKey: string, from: string, to: string | null) => Promise<string[]>
  clock: () => Date
}) {
  const { store } = deps

  async function load(teamId: number, id: number, includeDeleted = false): Promise<ExperimentRow> {
    if (!Number.isSafeInteger(id)) throw new NotFound()
    const row = await store.get(teamId, id)
    if (!row || (row.deleted === 1 && !includeDeleted)) throw new NotFound()
    return row
  }

  async function flagOf(row: ExperimentRow): Promise<FlagRow> {
    const flag = await deps.flagRows.get(row.team_id, row.feature_flag_id)
    if (!flag) throw new NotFound('Feature flag not found.')
    return flag
  }

  async function userBasic(id: number | null) {
    if (id === null) return null
    const u = await deps.users.get(id)
    if (!u) return null
    return {
      id: u.id,
      uuid: u.uuid,
      distinct_id: u.uuid,
      first_name: u.first_name,
      last_name: u.last_name,
      email: u.email,
      is_email_verified: false,
      hedgehog_config: null,
      role_at_organization: null,
    }
  }

  function holdoutApi(h: HoldoutRow | undefined) {
    if (!h) return null
    return {
      id: h.id,
      name: h.name,
      description: h.description,
      filters: parse(h.filters, []),
      created_by: null,
      created_at: h.created_at,
      updated_at: h.updated_at,
    }
  }

  function statusOf(row: ExperimentRow, flag: FlagRow | undefined): string {
    if (row.start_date === null) return 'draft'
    if (row.end_date !== null) return 'stopped'
    return flag && flag.active === 0 ? 'paused' : 'running'
  }

  function fingerprinted(
    row: Pick<
      ExperimentRow,
      'start_date' | 'stats_config' | 'exposure_criteria' | 'only_count_matured_users' | 'parameters'
    >,
    metrics: Json[],
  ): Json[] {
    const stats = parse<Json>(row.stats_config, {})
    const criteria = parse<Json>(row.exposure_criteria, {})
    const excluded = parse<Json>(row.parameters, {})?.excluded_variants ?? []
    return metrics.map((m) => ({
      ...m,
      fingerprint: metricFingerprint(
        m,
        row.start_date,
        stats.method,
        criteria,
        row.only_count_matured_users === 1,
        excluded,
      ),
    }))
  }

  async function savedMetricsOf(row: ExperimentRow) {
    const links = await store.savedMetrics.links(row.id)
    const out = []
    for (const link of links) {
      const saved = await store.savedMetrics.get(row.team_id, link.saved_metric_id)
      if (!saved) continue
      const query = parse<Json>(saved.query, {})
      const [withPrint] = fingerprinted(row, [query])
      out.push({
        id: link.id,
        experiment: row.id,
        saved_metric: saved.id,
        metadata: parse(link.metadata, {}),
        created_at: link.created_at,
        query: withPrint,
        name: saved.name,
      })
    }
    return out
  }

  async function toApi(row: ExperimentRow, light = false) {
    const flag = await deps.flagRows.get(row.team_id, row.feature_flag_id)
    const holdout = row.holdout_id === null ? undefined : await store.holdouts.get(row.team_id, row.holdout_id)
    const record: Json = {
      id: row.id,
      name: row.name,
      description: row.description,
      start_date: row.start_date,
      end_date: row.end_date,
      feature_flag_key: flag?.key ?? null,
      feature_flag: flag
        ? {
            id: flag.id,
            team_id: flag.team_id,
            name: flag.name,
            key: flag.key,
            filters: parse(flag.filters, {}),
            deleted: flag.deleted === 1,
            active: flag.active === 1,
            ensure_experience_continuity: flag.ensure_experience_continuity === 1,
            has_encrypted_payloads: false,
            version: flag.version,
            evaluation_runtime: flag.evaluation_runtime,
            evaluation_tags: parse(flag.evaluation_tags, []),
          }
        : null,
      holdout: holdoutApi(holdout),
      holdout_id: row.holdout_id,
      exposure_cohort: row.exposure_cohort_id,
      parameters: parse(row.parameters, null),
      secondary_metrics: parse(row.secondary_metrics, []),
      saved_metrics_ids: null,
      filters: parse(row.filters, {}),
      archived: row.archived === 1,
      deleted: row.deleted === 1,
      created_by: await userBasic(row.created_by),
      created_at: row.created_at,
      updated_at: row.updated_at,
      type: row.type,
      exposure_criteria: parse(row.exposure_criteria, {}),
      stats_config: parse(row.stats_config, {}),
      scheduling_config: parse(row.scheduling_config, {}),
      only_count_matured_users: row.only_count_matured_users === 1,
      status: statusOf(row, flag),
      conclusion: row.conclusion,
      conclusion_comment: row.conclusion_comment,
      primary_metrics_ordered_uuids: parse(row.primary_metrics_ordered_uuids, null),
      secondary_metrics_ordered_uuids: parse(row.secondary_metrics_ordered_uuids, null),
      user_access_level: 'editor',
    }
    if (!light) {
      record.metrics = parse(row.metrics, [])
      record.metrics_secondary = parse(row.metrics_secondary, [])
      record.saved_metrics = await savedMetricsOf(row)
    }
    return record
  }

  async function log(
    teamId: number,
    actor: ExperimentActor,
    row: ExperimentRow,
    activity: string,
    changes: unknown[] = [],
  ) {
    await deps.activity.log({
      organizationId: actor.organizationId,
      teamId,
      userId: actor.userId,
      scope: 'Experiment',
      itemId: String(row.id),
      activity,
      detail: { id: row.id, name: row.name, short_id: null, type: null, changes, trigger: null },
      createdAt: deps.clock().toISOString(),
    })
  }

  /** Saved metric links: `[{id, metadata?: {type}}]`, each id a saved metric of the project. */
  async function checkSavedMetrics(teamId: number, value: unknown) {
    if (value === null || value === undefined) return undefined
    if (!Array.isArray(value)) throw new ValidationError('Saved metrics must be a list', 'saved_metrics_ids')
    const out: { savedMetricId: number; metadata: Json; uuid: string | undefined; type: string }[] = []
    for (const item of value) {
      if (!isObject(item)) throw new ValidationError('Saved metric must be an object', 'saved_metrics_ids')
      if (!('id' in item)) throw new ValidationError('Saved metric must have an id', 'saved_metrics_ids')
      if ('metadata' in item && item.metadata !== null) {
        if (!isObject(item.metadata)) throw new ValidationError('Metadata must be an object', 'saved_metrics_ids')
        if (!('type' in item.metadata)) throw new ValidationError('Metadata must have a type key', 'saved_metrics_ids')
      }
      const saved = Number.isSafeInteger(item.id) ? await store.savedMetrics.get(teamId, item.id) : undefined
      if (!saved) {
        throw new ValidationError('Saved metric does not exist or does not belong to this project', 'saved_metrics_ids')
      }
      const metadata = isObject(item.metadata) ? item.metadata : {}
      out.push({
        savedMetricId: saved.id,
        metadata,
        uuid: parse<Json>(saved.query, {}).uuid,
        type: metadata.type === 'secondary' ? 'secondary' : 'primary',
      })
    }
    return out
  }

  /** Fills missing or colliding metric uuids. */
  function withUuids(metrics: Json[], taken: Set<string>): Json[] {
    return metrics.map((m) => {
      let uuid = typeof m.uuid === 'string' && m.uuid !== '' ? m.uuid : ''
      if (uuid === '' || taken.has(uuid)) uuid = randomUUID()
      taken.add(uuid)
      return { ...m, uuid }
    })
  }

  /** Appends new uuids, drops removed ones, then checks the array holds every expected uuid. */
  function syncOrder(
    name: 'primary' | 'secondary',
    given: unknown,
    previous: string[] | null,
    expected: string[],
    previousExpected: string[],
  ): string[] | null {
    let order: string[] | null
    if (given !== undefined) {
      if (given !== null && (!Array.isArray(given) || given.some((u) => typeof u !== 'string'))) {
        throw new ValidationError(
          `${name}_metrics_ordered_uuids must be a list of UUIDs.`,
          `${name}_metrics_ordered_uuids`,
        )
      }
      order = given as string[] | null
    } else order = previous
    const added = expected.filter((u) => !previousExpected.includes(u))
    const removed = previousExpected.filter((u) => !expected.includes(u))
    if (order === null && expected.length > 0 && given === undefined) order = []
    if (order !== null) {
      order = order.filter((u) => !removed.includes(u))
      for (const u of added) if (!order.includes(u)) order.push(u)
    }
    if (expected.length > 0) {
      if (order === null) {
        throw new ValidationError(
          `${name}_metrics_ordered_uuids is null but ${name} metrics exist. This is likely a frontend bug - please refresh and try again.`,
          `${name}_metrics_ordered_uuids`,
        )
      }
      const missing = expected.filter((u) => !(order as string[]).includes(u))
      if (missing.length > 0) {
        throw new ValidationError(
          `${name}_metrics_ordered_uuids is missing UUIDs: [${missing.map((u) => `'${u}'`).join(', ')}]. This is likely a frontend bug - please refresh and try again.`,
          `${name}_metrics_ordered_uuids`,
        )
      }
    }
    return order
  }

  function checkKeys(input: Json, allowed: Set<string>, verb: string) {
    const bad = Object.keys(input).filter((k) => !allowed.has(k))
    if (bad.length > 0) throw new ValidationError(`Can't ${verb} keys: ${bad.join(', ')} on Experiment`)
  }

  function checkConclusion(input: Json) {
    if (input.conclusion !== undefined && input.conclusion !== null && !CONCLUSIONS.includes(input.conclusion)) {
      throw new ValidationError(`"${input.conclusion}" is not a valid choice.`, 'conclusion', 'invalid_choice')
    }
  }

  async function holdoutFilters(teamId: number, holdoutId: number | null) {
    if (holdoutId === null) return { holdout: null as HoldoutRow | null, filters: undefined }
    const holdout = await store.holdouts.get(teamId, holdoutId)
    if (!holdout) throw new ValidationError('Holdout does not exist or does not belong to this project', 'holdout_id')
    const groups = parse<Json[]>(holdout.filters, [])
    return {
      holdout,
      filters: { id: holdout.id, exclusion_percentage: Number(groups[0]?.rollout_percentage ?? 0) },
    }
  }

  const service = {
    toApi,
    load,

    async list(
      teamId: number,
      query: {
        status?: string
        archived?: string
        search?: string
        created_by_id?: number
        feature_flag_id?: number
        order?: string
      },
    ) {
      const rows = await store.list(teamId, {
        archived: query.archived === undefined ? false : query.archived === 'true',
        search: query.search,
        createdById: query.created_by_id,
        featureFlagId: query.feature_flag_id,
      })
      const flags = new Map((await deps.flagRows.allForTeam(teamId)).map((f) => [f.id, f]))
      let filtered = rows
      const status = query.status === 'complete' ? 'stopped' : query.status
      if (status && status !== 'all') {
        if (!['draft', 'running', 'paused', 'stopped'].includes(status)) {
          throw new ValidationError(`"${query.status}" is not a valid choice.`, 'status', 'invalid_choice')
        }
        filtered = rows.filter((r) => {
          const s = statusOf(r, flags.get(r.feature_flag_id))
          return status === 'running' ? s === 'running' : s === status
        })
      }
      if (query.order) {
        const desc = query.order.startsWith('-')
        const field = desc ? query.order.slice(1) : query.order
        if (!ORDER_FIELDS.includes(field)) {
          throw new ValidationError(`Invalid order field: ${field}`, 'order', 'invalid_choice')
        }
        const now = deps.clock().getTime()
        const rank = { draft: 0, running: 1, paused: 1, stopped: 2 } as Record<string, number>
        const keyOf = (r: ExperimentRow): string | number | null => {
          if (field === 'duration') {
            if (r.start_date === null) return null
            return (r.end_date ? Date.parse(r.end_date) : now) - Date.parse(r.start_date)
          }
          if (field === 'status') return rank[statusOf(r, flags.get(r.feature_flag_id))]
          if (field === 'created_by') return r.created_by
          return r[field as keyof ExperimentRow] as string | null
        }
        filtered = [...filtered].sort((a, b) => {
          const x = keyOf(a)
          const y = keyOf(b)
          // nulls last ascending, first descending (PostgreSQL's default)
          if (x === y) return 0
          if (x === null) return desc ? -1 : 1
          if (y === null) return desc ? 1 : -1
          return (x < y ? -1 : 1) * (desc ? -1 : 1)
        })
      }
      return filtered
    },

    async create(teamId: number, actor: ExperimentActor, input: Json) {
      checkKeys(input, CREATE_KEYS, 'create')
      if (typeof input.name !== 'string' || input.name.trim() === '') {
        throw new ValidationError(
          input.name === undefined ? 'This field is required.' : 'This field may not be blank.',
          'name',
          input.name === undefined ? 'required' : 'blank',
        )
      }
      if (input.name.length > 400)
        throw new ValidationError('Ensure this field has no more than 400 characters.', 'name', 'max_length')
      if (typeof input.feature_flag_key !== 'string' || input.feature_flag_key === '') {
        throw new ValidationError('This field is required.', 'feature_flag_key', 'required')
      }
      checkConclusion(input)
      if (input.type !== undefined && input.type !== null && !TYPES.includes(input.type)) {
        throw new ValidationError(`"${input.type}" is not a valid choice.`, 'type', 'invalid_choice')
      }
      const startDate = dateOf(input.start_date, 'start_date')
      const endDate = dateOf(input.end_date, 'end_date')
      if (startDate && endDate && startDate >= endDate) throw new ValidationError('End date must be after start date')
      const parameters = checkParameters(input.parameters)
      const criteria = checkExposureCriteria(input.exposure_criteria)
      if (
        input.exposure_criteria === undefined ||
        (isObject(input.exposure_criteria) && !('filterTestAccounts' in input.exposure_criteria))
      ) {
        criteria.filterTestAccounts = true
      }
      const filters = isObject(input.filters) ? input.filters : {}
      if (Array.isArray(filters.properties) && filters.properties.length > 0) {
        throw new ValidationError('Experiments do not support global filter properties')
      }
      const statsConfig = isObject(input.stats_config) ? { ...input.stats_config } : {}
      if (!statsConfig.method) statsConfig.method = 'bayesian'
      const saved = (await checkSavedMetrics(teamId, input.saved_metrics_ids)) ?? []
      const holdoutId = input.holdout_id ?? null
      if (holdoutId !== null && !Number.isSafeInteger(holdoutId))
        throw new ValidationError('A valid integer is required.', 'holdout_id', 'invalid')
      const { holdout, filters: holdoutSpec } = await holdoutFilters(teamId, holdoutId)

      // The flag: reuse an eligible one, or create it (inactive until launch).
      let flag = await deps.flagRows.getLiveByKey(teamId, input.feature_flag_key)
      if (flag) {
        const variants = flagVariants(flag)
        if (variants.length > 1) {
          if (variants[0].key !== 'control')
            throw new ValidationError('Feature flag must have control as the first variant.')
        } else throw new ValidationError('Feature flag is not eligible for experiments.')
      } else {
        const variants = parameters?.feature_flag_variants?.length ? parameters.feature_flag_variants : DEFAULT_VARIANTS
        const flagFilters: Json = {
          groups: [{ properties: [], rollout_percentage: parameters?.rollout_percentage ?? 100 }],
          multivariate: {
            variants: variants.map((v: Json) => ({
              key: v.key,
              name: v.name,
              rollout_percentage: v.rollout_percentage ?? v.split_percent,
            })),
          },
          aggregation_group_type_index: parameters?.aggregation_group_type_index ?? null,
        }
        if (holdoutSpec) flagFilters.holdout = holdoutSpec
        if (isObject(parameters?.feature_flag_payloads)) flagFilters.payloads = parameters.feature_flag_payloads
        const created = await deps.flags.create(teamId, actor, {
          key: input.feature_flag_key,
          name: `Feature Flag for Experiment ${input.name}`,
          filters: flagFilters,
          active: startDate !== null,
          ensure_experience_continuity: parameters?.ensure_experience_continuity === true,
        })
        flag = (await deps.flagRows.get(teamId, created.id)) as FlagRow
      }

      const taken = new Set(saved.map((s) => s.uuid).filter((u): u is string => typeof u === 'string'))
      const metrics = withUuids(checkMetrics(input.metrics, 'metrics'), taken)
      const secondary = withUuids(checkMetrics(input.metrics_secondary, 'metrics_secondary'), taken)
      const primaryUuids = [
        ...metrics.map((m) => m.uuid),
        ...saved.filter((s) => s.type === 'primary' && s.uuid).map((s) => s.uuid as string),
      ]
      const secondaryUuids = [
        ...secondary.map((m) => m.uuid),
        ...saved.filter((s) => s.type === 'secondary' && s.uuid).map((s) => s.uuid as string),
      ]
      const givenPrimary = input.primary_metrics_ordered_uuids
      const givenSecondary = input.secondary_metrics_ordered_uuids
      const primaryOrder = syncOrder('primary', givenPrimary ?? [], null, primaryUuids, [])
      const secondaryOrder = syncOrder('secondary', givenSecondary ?? [], null, secondaryUuids, [])

      const now = deps.clock().toISOString()
      const base = {
        start_date: startDate,
        stats_config: JSON.stringify(statsConfig),
        exposure_criteria: JSON.stringify(criteria),
        only_count_matured_users: input.only_count_matured_users === true ? 1 : 0,
        parameters: parameters === null ? null : JSON.stringify(parameters),
      }
      const type = input.type ?? 'product'
      const webVariants: Json = {}
      if (type === 'web') {
        for (const v of flagVariants(flag)) webVariants[v.key] = { rollout_percentage: v.rollout_percentage }
      }
      const row: NewExperimentRow = {
        team_id: teamId,
        name: input.name,
        description: input.description ?? '',
        filters: JSON.stringify(filters),
        secondary_metrics: JSON.stringify(input.secondary_metrics ?? []),
        created_by: actor.userId,
        feature_flag_id: flag.id,
        holdout_id: holdout?.id ?? null,
        end_date: endDate,
        created_at: now,
        updated_at: now,
        archived: input.archived === true ? 1 : 0,
        deleted: input.deleted === true ? 1 : 0,
        type,
        variants: JSON.stringify(webVariants),
        metrics: JSON.stringify(fingerprinted(base as ExperimentRow, metrics)),
        metrics_secondary: JSON.stringify(fingerprinted(base as ExperimentRow, secondary)),
        primary_metrics_ordered_uuids: JSON.stringify(primaryOrder),
        secondary_metrics_ordered_uuids: JSON.stringify(secondaryOrder),
        scheduling_config: JSON.stringify(isObject(input.scheduling_config) ? input.scheduling_config : {}),
        conclusion: input.conclusion ?? null,
        conclusion_comment: input.conclusion_comment ?? null,
        ...base,
      }
      const saved_row = await store.insert(row)
      if (saved.length > 0) await store.savedMetrics.replaceLinks(saved_row.id, saved, now)
      await log(teamId, actor, saved_row, 'created')
      return toApi(saved_row)
    },

    async update(teamId: number, actor: ExperimentActor, id: number, input: Json) {
      const before = await load(teamId, id, 'deleted' in input)
      const flag = await flagOf(before)
      if (input.feature_flag_key !== undefined && input.feature_flag_key !== flag.key) {
        throw new ValidationError("Can't update keys: feature_flag_key on Experiment")
      }
      const { feature_flag_key: _ignored, ...rest } = input
      checkKeys(rest, UPDATE_KEYS, 'update')
      checkConclusion(input)
      const patch: Json = {}
      const has = (k: string) => k in input
      if (has('name')) {
        if (typeof input.name !== 'string' || input.name.trim() === '')
          throw new ValidationError('This field may not be blank.', 'name', 'blank')
        patch.name = input.name
      }
      if (has('description')) patch.description = input.description
      const startDate = has('start_date') ? dateOf(input.start_date, 'start_date') : before.start_date
      const endDate = has('end_date') ? dateOf(input.end_date, 'end_date') : before.end_date
      if (startDate && endDate && startDate >= endDate) throw new ValidationError('End date must be after start date')
      if (has('start_date')) patch.start_date = startDate
      if (has('end_date')) patch.end_date = endDate
      if (has('filters')) {
        const filters = isObject(input.filters) ? input.filters : {}
        if (Array.isArray(filters.properties) && filters.properties.length > 0) {
          throw new ValidationError('Experiments do not support global filter properties')
        }
        patch.filters = JSON.stringify(filters)
      }
      let parameters = parse<Json | null>(before.parameters, null)
      if (has('parameters')) {
        parameters = checkParameters(input.parameters)
        if (before.start_date !== null) {
          const old = (parse<Json | null>(before.parameters, null)?.feature_flag_variants ?? []) as Json[]
          const now = (parameters?.feature_flag_variants ?? []) as Json[]
          const same = old.length === now.length && old.every((v) => now.some((n) => n.key === v.key))
          if (!same && (old.length > 0 || now.length > 0)) {
            throw new ValidationError("Can't update feature_flag_variants on Experiment")
          }
        }
        patch.parameters = parameters === null ? null : JSON.stringify(parameters)
      }
      const holdoutKey = has('holdout_id') ? 'holdout_id' : has('holdout') ? 'holdout' : null
      let holdoutChanged = false
      if (holdoutKey) {
        const raw = input[holdoutKey]
        const holdoutId = isObject(raw) ? raw.id : (raw ?? null)
        if (holdoutId !== before.holdout_id) {
          if (before.start_date !== null) throw new ValidationError("Can't update holdout on running Experiment")
          await holdoutFilters(teamId, holdoutId)
          patch.holdout_id = holdoutId
          holdoutChanged = true
        }
      }
      if (has('archived')) patch.archived = input.archived ? 1 : 0
      if (has('deleted')) patch.deleted = input.deleted ? 1 : 0
      if (has('deleted') && input.deleted === false && before.deleted === 1 && flag.deleted === 1) {
        throw new ValidationError('Cannot restore experiment: the linked feature flag has been deleted.')
      }
      if (has('secondary_metrics')) patch.secondary_metrics = JSON.stringify(input.secondary_metrics ?? [])
      const criteria = has('exposure_criteria')
        ? checkExposureCriteria(input.exposure_criteria)
        : parse<Json>(before.exposure_criteria, {})
      if (has('exposure_criteria')) patch.exposure_criteria = JSON.stringify(criteria)
      if (has('stats_config'))
        patch.stats_config = JSON.stringify(isObject(input.stats_config) ? input.stats_config : {})
      if (has('scheduling_config'))
        patch.scheduling_config = JSON.stringify(isObject(input.scheduling_config) ? input.scheduling_config : {})
      if (has('only_count_matured_users'))
        patch.only_count_matured_users = input.only_count_matured_users === true ? 1 : 0
      if (has('conclusion')) patch.conclusion = input.conclusion
      if (has('conclusion_comment')) patch.conclusion_comment = input.conclusion_comment

      // Saved metrics, metrics and ordering arrays.
      const oldLinks = await store.savedMetrics.links(before.id)
      const oldSaved = await Promise.all(
        oldLinks.map(async (l) => {
          const s = await store.savedMetrics.get(teamId, l.saved_metric_id)
          const meta = parse<Json>(l.metadata, {})
          return {
            uuid: s ? parse<Json>(s.query, {}).uuid : undefined,
            type: meta.type === 'secondary' ? 'secondary' : 'primary',
          }
        }),
      )
      const saved = has('saved_metrics_ids')
        ? ((await checkSavedMetrics(teamId, input.saved_metrics_ids)) ?? [])
        : undefined
      const savedNow = saved ?? oldSaved
      const taken = new Set(savedNow.map((s) => s.uuid).filter((u): u is string => typeof u === 'string'))
      const oldMetrics = parse<Json[]>(before.metrics, [])
      const oldSecondary = parse<Json[]>(before.metrics_secondary, [])
      const metrics = has('metrics') ? withUuids(checkMetrics(input.metrics, 'metrics'), taken) : oldMetrics
      if (!has('metrics')) for (const m of metrics) taken.add(m.uuid)
      const secondary = has('metrics_secondary')
        ? withUuids(checkMetrics(input.metrics_secondary, 'metrics_secondary'), taken)
        : oldSecondary
      const uuidsOf = (ms: Json[], type: string, links: { uuid?: string; type: string }[]) => [
        ...ms.map((m) => m.uuid as string),
        ...links.filter((s) => s.type === type && s.uuid).map((s) => s.uuid as string),
      ]
      const primaryOrder = syncOrder(
        'primary',
        input.primary_metrics_ordered_uuids,
        parse(before.primary_metrics_ordered_uuids, null),
        uuidsOf(metrics, 'primary', savedNow),
        uuidsOf(oldMetrics, 'primary', oldSaved),
      )
      const secondaryOrder = syncOrder(
        'secondary',
        input.secondary_metrics_ordered_uuids,
        parse(before.secondary_metrics_ordered_uuids, null),
        uuidsOf(secondary, 'secondary', savedNow),
        uuidsOf(oldSecondary, 'secondary', oldSaved),
      )
      patch.primary_metrics_ordered_uuids = JSON.stringify(primaryOrder)
      patch.secondary_metrics_ordered_uuids = JSON.stringify(secondaryOrder)
      const effective = {
        start_date: startDate,
        stats_config: patch.stats_config ?? before.stats_config,
        exposure_criteria: patch.exposure_criteria ?? before.exposure_criteria,
        only_count_matured_users: patch.only_count_matured_users ?? before.only_count_matured_users,
        parameters: patch.parameters !== undefined ? patch.parameters : before.parameters,
      }
      patch.metrics = JSON.stringify(fingerprinted(effective as ExperimentRow, metrics))
      patch.metrics_secondary = JSON.stringify(fingerprinted(effective as ExperimentRow, secondary))

      // The flag: launch through PATCH, and draft parameter / holdout changes.
      const launching = before.start_date === null && startDate !== null
      if (launching && flag.deleted === 1) {
        throw new ValidationError('Experiment cannot be launched because its feature flag has been deleted.')
      }
      const flagPatch: Json = {}
      if (before.start_date === null && (has('parameters') || holdoutChanged)) {
        const filters = parse<Json>(flag.filters, {})
        if (has('parameters')) {
          const variants = parameters?.feature_flag_variants?.length
            ? parameters.feature_flag_variants
            : DEFAULT_VARIANTS
          filters.multivariate = { ...(filters.multivariate ?? {}), variants }
          filters.aggregation_group_type_index = parameters?.aggregation_group_type_index ?? null
        }
        const { filters: spec } = await holdoutFilters(
          teamId,
          (patch.holdout_id !== undefined ? patch.holdout_id : before.holdout_id) ?? null,
        )
        if (spec) filters.holdout = spec
        else delete filters.holdout
        flagPatch.filters = filters
      }
      if (launching) flagPatch.active = true
      if (Object.keys(flagPatch).length > 0) await deps.flags.update(teamId, actor, flag.id, flagPatch)
      if (saved !== undefined) await store.savedMetrics.replaceLinks(before.id, saved, deps.clock().toISOString())

      patch.updated_at = deps.clock().toISOString()
      const after = await store.update(teamId, id, patch)
      const activity =
        has('deleted') && input.deleted === true && before.deleted === 0
          ? 'deleted'
          : has('deleted') && input.deleted === false && before.deleted === 1
            ? 'restored'
            : 'updated'
      await log(teamId, actor, after, activity)
      return toApi(after)
    },

    // Lifecycle helpers (PostHog 2026): each one a state change with its own precondition.
    async launch(teamId: number, actor: ExperimentActor, id: number) {
      const row = await load(teamId, id)
      if (row.start_date !== null) throw new ValidationError('Experiment has already been launched.')
      const flag = await flagOf(row)
      if (flag.deleted === 1)
        throw new ValidationError('Experiment cannot be launched because its feature flag has been deleted.')
      await deps.flags.update(teamId, actor, flag.id, { active: true })
      const now = deps.clock().toISOString()
      const after = await store.update(teamId, id, {
        start_date: now,
        updated_at: now,
        ...refingerprint(row, { start_date: now }),
      })
      await log(teamId, actor, after, 'launched')
      return toApi(after)
    },
    async end(teamId: number, actor: ExperimentActor, id: number, input: Json) {
      const row = await load(teamId, id)
      if (row.start_date === null) throw new ValidationError('Experiment has not been launched yet.')
      if (row.end_date !== null) throw new ValidationError('Experiment has already ended.')
      if (input.conclusion !== undefined) checkConclusion(input)
      const now = deps.clock().toISOString()
      const after = await store.update(teamId, id, {
        end_date: now,
        updated_at: now,
        conclusion: input.conclusion ?? row.conclusion,
        conclusion_comment: input.conclusion_comment ?? row.conclusion_comment,
      })
      await log(teamId, actor, after, 'ended')
      return toApi(after)
    },
    /** Serves one variant to everyone (the flag's release condition at 100% and that variant at 100%), ending the experiment. */
    async shipVariant(teamId: number, actor: ExperimentActor, id: number, input: Json) {
      const row = await load(teamId, id)
      const flag = await flagOf(row)
      const key = input.variant_key
      if (typeof key !== 'string' || key === '')
        throw new ValidationError('This field is required.', 'variant_key', 'required')
      const variants = flagVariants(flag)
      if (!variants.some((v) => v.key === key)) {
        throw new ValidationError(`Variant '${key}' does not exist on the feature flag.`, 'variant_key')
      }
      if (input.conclusion !== undefined) checkConclusion(input)
      const filters = parse<Json>(flag.filters, {})
      filters.groups = [{ properties: [], rollout_percentage: 100, variant: null }]
      filters.multivariate = {
        ...(filters.multivariate ?? {}),
        variants: variants.map((v) => ({ ...v, rollout_percentage: v.key === key ? 100 : 0 })),
      }
      delete filters.holdout
      delete filters.holdout_groups
      await deps.flags.update(teamId, actor, flag.id, { filters, active: true })
      const now = deps.clock().toISOString()
      const after = await store.update(teamId, id, {
        start_date: row.start_date ?? now,
        end_date: row.end_date ?? now,
        updated_at: now,
        conclusion: input.conclusion ?? row.conclusion ?? 'won',
        conclusion_comment: input.conclusion_comment ?? row.conclusion_comment,
      })
      await log(teamId, actor, after, 'variant_shipped')
      return toApi(after)
    },
    async pause(teamId: number, actor: ExperimentActor, id: number) {
      const row = await load(teamId, id)
      const flag = await flagOf(row)
      if (row.start_date === null || row.end_date !== null)
        throw new ValidationError('Only a running experiment can be paused.')
      if (flag.active === 0) throw new ValidationError('Experiment is already paused.')
      await deps.flags.update(teamId, actor, flag.id, { active: false })
      await log(teamId, actor, row, 'paused')
      return toApi(await store.update(teamId, id, { updated_at: deps.clock().toISOString() }))
    },
    async resume(teamId: number, actor: ExperimentActor, id: number) {
      const row = await load(teamId, id)
      const flag = await flagOf(row)
      if (row.start_date === null || row.end_date !== null || flag.active === 1) {
        throw new ValidationError('Only a paused experiment can be resumed.')
      }
      await deps.flags.update(teamId, actor, flag.id, { active: true })
      await log(teamId, actor, row, 'resumed')
      return toApi(await store.update(teamId, id, { updated_at: deps.clock().toISOString() }))
    },
    /** Back to draft: no dates, no conclusion, the flag off. */
    async reset(teamId: number, actor: ExperimentActor, id: number) {
      const row = await load(teamId, id)
      const flag = await flagOf(row)
      if (flag.active === 1 && flag.deleted === 0) await deps.flags.update(teamId, actor, flag.id, { active: false })
      const after = await store.update(teamId, id, {
        start_date: null,
        end_date: null,
        conclusion: null,
        conclusion_comment: null,
        archived: 0,
        updated_at: deps.clock().toISOString(),
        ...refingerprint(row, { start_date: null }),
      })
      await log(teamId, actor, after, 'reset')
      return toApi(after)
    },
    async setArchived(teamId: number, actor: ExperimentActor, id: number, archived: boolean) {
      const row = await load(teamId, id)
      if (archived && row.start_date !== null && row.end_date === null) {
        throw new ValidationError('A running experiment cannot be archived: end it first.')
      }
      const after = await store.update(teamId, id, {
        archived: archived ? 1 : 0,
        updated_at: deps.clock().toISOString(),
      })
      await log(teamId, actor, after, archived ? 'archived' : 'unarchived')
      return toApi(after)
    },

    async duplicate(teamId: number, actor: ExperimentActor, id: number, input: Json) {
      const row = await load(teamId, id)
      const flag = await flagOf(row)
      const key =
        typeof input.feature_flag_key === 'string' && input.feature_flag_key !== '' ? input.feature_flag_key : flag.key
      const names = new Set(await store.names(teamId))
      let name = typeof input.name === 'string' && input.name.trim() !== '' ? input.name : `${row.name} (Copy)`
      if (names.has(name)) {
        const stem = name
        let i = 1
        while (names.has(`${stem} ${i}`)) i++
        name = `${stem} ${i}`
      }
      let parameters = parse<Json | null>(row.parameters, null)
      const existing = await deps.flagRows.getLiveByKey(teamId, key)
      if (existing && flagVariants(existing).length > 0) {
        parameters = { ...(parameters ?? {}), feature_flag_variants: flagVariants(existing) }
      }
      const links = await store.savedMetrics.links(row.id)
      const fresh = (ms: Json[]) => ms.map(({ fingerprint: _f, ...m }) => ({ ...m, uuid: randomUUID() }))
      const metrics = fresh(parse<Json[]>(row.metrics, []))
      const secondary = fresh(parse<Json[]>(row.metrics_secondary, []))
      const savedUuids = await Promise.all(
        links.map(async (l) => {
          const s = await store.savedMetrics.get(teamId, l.saved_metric_id)
          return {
            uuid: s ? (parse<Json>(s.query, {}).uuid as string | undefined) : undefined,
            type: parse<Json>(l.metadata, {}).type,
          }
        }),
      )
      return service.create(teamId, actor, {
        name,
        description: row.description ?? '',
        type: row.type ?? 'product',
        parameters,
        filters: parse(row.filters, {}),
        metrics,
        metrics_secondary: secondary,
        stats_config: parse(row.stats_config, {}),
        exposure_criteria: parse(row.exposure_criteria, {}),
        feature_flag_key: key,
        saved_metrics_ids: links.map((l) => ({ id: l.saved_metric_id, metadata: parse(l.metadata, {}) })),
        primary_metrics_ordered_uuids: [
          ...metrics.map((m) => m.uuid),
          ...savedUuids.filter((s) => s.type !== 'secondary' && s.uuid).map((s) => s.uuid),
        ],
        secondary_metrics_ordered_uuids: [
          ...secondary.map((m) => m.uuid),
          ...savedUuids.filter((s) => s.type === 'secondary' && s.uuid).map((s) => s.uuid),
        ],
      })
    },

    async createExposureCohort(teamId: number, actor: ExperimentActor, id: number) {
      const row = await load(teamId, id)
      const flag = await deps.flagRows.get(teamId, row.feature_flag_id)
      if (!flag) throw new ValidationError('Experiment does not have a feature flag')
      if (row.start_date === null) throw new ValidationError('Experiment does not have a start date')
      if (row.exposure_cohort_id !== null) throw new ValidationError('Experiment already has an exposure cohort')
      // A static cohort of the persons exposed so far (the cohort service has no behavioral filters): flags and
      // queries use it like any cohort; it is a snapshot taken now.
      const distinctIds = await deps.exposedDistinctIds(teamId, flag.key, row.start_date, row.end_date)
      const cohort = await deps.cohorts.create(teamId, actor, {
        name: `Users exposed to experiment "${row.name}"`,
        description: `Persons who called the feature flag "${flag.key}" since ${row.start_date}.`,
        is_static: true,
        distinct_ids: distinctIds,
      })
      await store.update(teamId, id, { exposure_cohort_id: cohort.id, updated_at: deps.clock().toISOString() })
      return { cohort }
    },

    /** Velocity: launches in the last 30 days vs the 30 before, running now, completed in the last 30 days. */
    async stats(teamId: number) {
      const rows = await store.list(teamId, { archived: false })
      const tz = await deps.projectTimezone(teamId)
      const today = localMidnight(deps.clock(), tz)
      const day = 86_400_000
      const inRange = (d: string | null, from: number, to: number) =>
        d !== null && Date.parse(d) >= from && Date.parse(d) < to
      const t = today.getTime()
      const last = rows.filter((r) => inRange(r.start_date, t - 30 * day, t + day)).length
      const previous = rows.filter((r) => inRange(r.start_date, t - 60 * day, t - 30 * day)).length
      const percent = previous === 0 ? (last > 0 ? 100 : 0) : Math.round(((last - previous) / previous) * 1000) / 10
      return {
        launched_last_30d: last,
        launched_previous_30d: previous,
        percent_change: percent,
        active_experiments: rows.filter((r) => r.start_date !== null && r.end_date === null).length,
        completed_last_30d: rows.filter((r) => inRange(r.end_date, t - 30 * day, t + day)).length,
      }
    },

    /** The runner's view of an experiment (undefined when it is missing or deleted). */
    subject: createExperimentSubjects(store, deps.flagRows),

    async eligibleFlags(
      teamId: number,
      query: {
        search?: string
        active?: string
        created_by_id?: number
        evaluation_runtime?: string
        has_evaluation_tags?: string
        order?: string
      },
    ): Promise<FlagRow[]> {
      let flags = (await deps.flagRows.allForTeam(teamId)).filter((f) => f.deleted === 0 && isEligibleFlag(f))
      // Survey-internal flags and product tours are not experiment flags.
      flags = flags.filter((f) => !f.key.startsWith('survey-targeting-') && !f.key.startsWith('product-tour-'))
      if (query.search) {
        const s = query.search.toLowerCase()
        flags = flags.filter((f) => f.key.toLowerCase().includes(s) || f.name.toLowerCase().includes(s))
      }
      if (query.active === 'true' || query.active === 'false')
        flags = flags.filter((f) => (f.active === 1) === (query.active === 'true'))
      if (query.created_by_id !== undefined) flags = flags.filter((f) => f.created_by === query.created_by_id)
      if (query.evaluation_runtime) flags = flags.filter((f) => f.evaluation_runtime === query.evaluation_runtime)
      if (query.has_evaluation_tags === 'true' || query.has_evaluation_tags === 'false') {
        flags = flags.filter(
          (f) => parse<string[]>(f.evaluation_tags, []).length > 0 === (query.has_evaluation_tags === 'true'),
        )
      }
      const order = query.order || '-created_at'
      const desc = order.startsWith('-')
      const field = (desc ? order.slice(1) : order) as keyof FlagRow
      if (!['created_at', 'updated_at', 'key', 'name', 'id'].includes(field)) {
        throw new ValidationError(`Invalid order field: ${String(field)}`, 'order', 'invalid_choice')
      }
      return flags.sort((a, b) => {
        const x = a[field] as string | number
        const y = b[field] as string | number
        if (x === y) return (a.id - b.id) * (desc ? -1 : 1)
        return (x < y ? -1 : 1) * (desc ? -1 : 1)
      })
    },
    flagApi: (flag: FlagRow): Promise<FeatureFlag> => deps.flags.toApi(flag),
  }

  function refingerprint(row: ExperimentRow, change: { start_date: string | null }) {
    const effective = { ...row, ...change }
    return {
      metrics: JSON.stringify(fingerprinted(effective, parse<Json[]>(row.metrics, []))),
      metrics_secondary: JSON.stringify(fingerprinted(effective, parse<Json[]>(row.metrics_secondary, []))),
    }
  }

  return service
}
export type ExperimentService = ReturnType<typeof createExperimentService>

/** Midnight of the day `now` falls on in `timezone`, as an instant. */
export function localMidnight(now: Date, timezone: string): Date {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: timezone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(now)
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value)
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'))
  const offset = wall - Math.floor(now.getTime() / 1000) * 1000
  return new Date(Date.UTC(get('year'), get('month') - 1, get('day')) - offset)
}
