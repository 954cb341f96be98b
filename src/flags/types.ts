// Feature-flag definitions in PostHog's stored shape, and the evaluation context/result types of the matcher.

/** A property filter as stored in a flag condition or a cohort definition. */
export interface PropertyFilter {
  key: string
  value?: unknown
  /** Defaults to `exact` (or `in` for cohort filters). */
  operator?: string | null
  /** `person` | `group` | `cohort` | `flag` | … */
  type?: string | null
  group_type_index?: number | null
  /** Inverts the result; honoured inside cohort definitions. */
  negation?: boolean | null
  /** Local-evaluation feed only: ordered keys of the flags this filter depends on. */
  dependency_chain?: string[] | null
}

export interface FlagCondition {
  properties?: PropertyFilter[] | null
  rollout_percentage?: number | null
  variant?: string | null
  /** Absent: use the flag-level aggregation; `null`: explicitly person-aggregated. */
  aggregation_group_type_index?: number | null
  description?: string | null
  sort_key?: string | null
}

export interface FlagVariant {
  key: string
  name?: string | null
  rollout_percentage: number
}

export interface FlagHoldout {
  id: number
  exclusion_percentage: number
}

export interface FlagFilters {
  groups?: FlagCondition[] | null
  multivariate?: { variants: FlagVariant[] } | null
  /** Keyed by variant key or `"true"`; values are the stored JSON strings. */
  payloads?: Record<string, unknown> | null
  aggregation_group_type_index?: number | null
  super_groups?: FlagCondition[] | null
  /** Legacy holdout form: `[{properties: [], rollout_percentage, variant: "holdout-<id>"}]`. */
  holdout_groups?: FlagCondition[] | null
  holdout?: FlagHoldout | null
  feature_enrollment?: boolean | null
  early_exit?: boolean | null
}

export interface FlagDefinition {
  id: number
  key: string
  name?: string | null
  team_id?: number
  active: boolean
  deleted?: boolean | null
  filters: FlagFilters
  ensure_experience_continuity?: boolean | null
  version?: number | null
  evaluation_runtime?: string | null
  evaluation_tags?: string[] | null
  /** Newer name of `evaluation_tags`. */
  evaluation_contexts?: string[] | null
  bucketing_identifier?: 'distinct_id' | 'device_id' | null
  has_experiment?: boolean | null
}

/** A node of a cohort's property tree: `AND`/`OR` groups (legacy `property` = AND) over leaves or nested groups. */
export interface CohortPropertyGroup {
  type?: 'AND' | 'OR' | 'property' | string | null
  values: Array<CohortPropertyGroup | PropertyFilter>
}

export interface Cohort {
  id: number
  filters?: { properties?: CohortPropertyGroup | null } | null
  is_static?: boolean | null
  deleted?: boolean | null
  /** `behavioral` / `realtime` cohorts need event data; membership must come from `staticCohortIds`. */
  cohort_type?: string | null
}

export interface EvaluationContext {
  distinctId: string
  /** Person properties: stored ones overlaid by the request's `person_properties`. */
  personProperties: Record<string, unknown>
  /** Group type name → group key (strings; JSON numbers are accepted and stringified). */
  groups: Record<string, unknown>
  /** Group properties by group type name: stored ones overlaid by the request's. */
  groupProperties: Record<string, Record<string, unknown>>
  /** Group type index → group type name. */
  groupTypeMapping: Record<number, string>
  cohorts: ReadonlyMap<number, Cohort> | Record<number, Cohort>
  /** Cohorts whose membership the caller resolved (static, or realtime): the person is in each of these. */
  staticCohortIds?: ReadonlySet<number>
  /** Stored hash-key overrides (flag key → hash key) for experience continuity. */
  hashKeyOverrides?: Record<string, string>
  /** The request's `$anon_distinct_id`, used for continuity flags without a stored override. */
  anonDistinctId?: string
  /** The request's `$device_id`, for flags bucketed by device. */
  deviceId?: string
  /** Set when reading/writing hash-key overrides failed: continuity flags then fail. */
  hashKeyOverrideError?: boolean
  /** Team timezone (IANA) for naive dates and relative dates; UTC by default. */
  timezone?: string
  now?: Date
}

export interface FlagReason {
  code: string
  condition_index: number | null
  description: string
}

export interface FlagEvaluation {
  key: string
  enabled: boolean
  variant: string | null
  /** True when the flag could not be evaluated (the caller sets `errorsWhileComputingFlags`). */
  failed: boolean
  reason: FlagReason
  /** The stored payload (a JSON string) or null. */
  payload: unknown
  metadata: { id: number; version: number; has_experiment: boolean }
}

export interface FlagSetEvaluation {
  flags: Record<string, FlagEvaluation>
  errorsWhileComputingFlags: boolean
}

/** The value a flag evaluates to: its variant, else whether it is enabled. */
export function flagValueOf(evaluation: Pick<FlagEvaluation, 'enabled' | 'variant'>): string | boolean {
  return evaluation.variant ?? evaluation.enabled
}
