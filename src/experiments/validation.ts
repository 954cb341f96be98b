// The pure rules of an experiment's create and update bodies (products.md §1.4–1.5): allowed keys, dates,
// parameters, exposure criteria, metrics, metric uuids and ordering arrays, each failing with PostHog's message.
import { randomUUID } from 'node:crypto'
import type { FlagRow } from '../flags/store.js'
import { ValidationError } from '../http/errors.js'

export type Json = Record<string, any>
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
export const parse = <T = any>(text: string | null, fallback: T): T =>
  text === null ? fallback : (JSON.parse(text) as T)

export const DEFAULT_VARIANTS = [
  { key: 'control', name: 'Control Group', rollout_percentage: 50 },
  { key: 'test', name: 'Test Variant', rollout_percentage: 50 },
]

export const CREATE_KEYS = new Set([
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
export const UPDATE_KEYS = new Set([
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
export const CONCLUSIONS = ['won', 'lost', 'inconclusive', 'stopped_early', 'invalid']
export const TYPES = ['web', 'product']
export const ORDER_FIELDS = [
  'name',
  'created_at',
  'updated_at',
  'start_date',
  'end_date',
  'duration',
  'status',
  'created_by',
]

export interface ExperimentInput extends Json {}

export function dateOf(value: unknown, attr: string): string | null {
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

export function flagVariants(flag: FlagRow): Json[] {
  const filters = parse<Json>(flag.filters, {})
  return Array.isArray(filters.multivariate?.variants) ? filters.multivariate.variants : []
}

/** Eligible for an experiment: multivariate with at least 2 variants, the first one `control`. */
export function isEligibleFlag(flag: FlagRow): boolean {
  const variants = flagVariants(flag)
  return variants.length > 1 && variants[0]?.key === 'control'
}

export function checkParameters(value: unknown): Json | null {
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

export function checkExposureCriteria(value: unknown): Json {
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

export function checkMetrics(value: unknown, attr: string): Json[] {
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

/** Fills missing or colliding metric uuids. */
export function withUuids(metrics: Json[], taken: Set<string>): Json[] {
  return metrics.map((m) => {
    let uuid = typeof m.uuid === 'string' && m.uuid !== '' ? m.uuid : ''
    if (uuid === '' || taken.has(uuid)) uuid = randomUUID()
    taken.add(uuid)
    return { ...m, uuid }
  })
}

/** Appends new uuids, drops removed ones, then checks the array holds every expected uuid. */
export function syncOrder(
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

export function checkKeys(input: Json, allowed: Set<string>, verb: string) {
  const bad = Object.keys(input).filter((k) => !allowed.has(k))
  if (bad.length > 0) throw new ValidationError(`Can't ${verb} keys: ${bad.join(', ')} on Experiment`)
}

export function checkConclusion(input: Json) {
  if (input.conclusion !== undefined && input.conclusion !== null && !CONCLUSIONS.includes(input.conclusion)) {
    throw new ValidationError(`"${input.conclusion}" is not a valid choice.`, 'conclusion', 'invalid_choice')
  }
}
