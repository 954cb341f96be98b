// Flag evaluation with the semantics of PostHog's /flags server (Rust flag_matching.rs): conditions in
// stored order, first match wins, reasons ranked by priority, holdouts, early access, group aggregation,
// experience continuity and flag dependencies. Pure: everything it needs arrives in the EvaluationContext.
import { CohortEvaluator, FlagEvaluationError } from './cohorts.js'
import { flagHash, holdoutHash, isWithinRollout, pickVariant } from './hash.js'
import { type MatchOptions, matchProperty } from './operators.js'
import type {
  EvaluationContext,
  FlagCondition,
  FlagDefinition,
  FlagEvaluation,
  FlagSetEvaluation,
  PropertyFilter,
} from './types.js'

export { FlagEvaluationError } from './cohorts.js'

type FlagValue = string | boolean

const PRIORITY: Record<string, number> = {
  super_condition_value: 6,
  holdout_condition_value: 5,
  condition_match: 4,
  out_of_rollout_bound: 3,
  no_condition_match: 2,
  no_group_type: 1,
  flag_disabled: 0,
  missing_dependency: -1,
}

const GROUPS_NOT_EVALUATED = 'groups_not_evaluated'

/** PostHog's wording of each reason code. */
export function describeReason(code: string, conditionIndex: number | null): string {
  switch (code) {
    case 'condition_match':
      return `Matched condition set ${(conditionIndex ?? 0) + 1}`
    case 'no_condition_match':
      return 'No matching condition set'
    case GROUPS_NOT_EVALUATED:
      return 'No matching condition set (group conditions were not evaluated because no group type was provided)'
    case 'out_of_rollout_bound':
      return 'Out of rollout bound'
    case 'no_group_type':
      return 'No group type'
    case 'super_condition_value':
      return 'Super condition value'
    case 'holdout_condition_value':
      return 'Holdout condition value'
    case 'flag_disabled':
      return 'Feature flag is disabled'
    case 'missing_dependency':
      return 'Flag cannot be evaluated due to missing dependency'
    default:
      return code
  }
}

// Missing `$initial_X` person properties are filled from `X` (ingestion may lag behind the first event).
const INITIAL_PROPERTY_SOURCES = [
  ...['app_build', 'app_name', 'app_namespace', 'app_version', 'browser', 'browser_version', 'device_type'],
  ...['current_url', 'pathname', 'os', 'os_version', 'referring_domain', 'referrer', 'screen_height'],
  ...['screen_width', 'viewport_height', 'viewport_width', 'raw_user_agent'],
].map((name) => [`$${name}`, `$initial_${name}`] as const)
const INITIAL_CAMPAIGN_SOURCES = [
  ...['utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term', 'gclid', 'gad_source', 'gclsrc'],
  ...['dclid', 'gbraid', 'wbraid', 'fbclid', 'msclkid', 'twclid', 'li_fat_id', 'mc_cid', 'igshid', 'ttclid'],
  ...['rdt_cid', 'epik', 'qclid', 'sccid', 'irclid', '_kx'],
].map((name) => [name, `$initial_${name}`] as const)
const INITIAL_PROPERTIES = [...INITIAL_PROPERTY_SOURCES, ...INITIAL_CAMPAIGN_SOURCES]

function isSet(properties: Record<string, unknown>, key: string): boolean {
  return Object.hasOwn(properties, key) && properties[key] !== undefined
}

/** Adds `distinct_id` and the `$initial_` fill-ins the server derives; copies only when something is added. */
export function derivePersonProperties(
  distinctId: string,
  properties: Record<string, unknown>,
): Record<string, unknown> {
  let result: Record<string, unknown> | null = null
  if (!isSet(properties, 'distinct_id')) result = { ...properties, distinct_id: distinctId }
  for (const [source, initial] of INITIAL_PROPERTIES) {
    if (isSet(properties, source) && !isSet(properties, initial)) {
      result ??= { ...properties }
      result[initial] = properties[source]
    }
  }
  return result ?? properties
}

/** Request distinct ids: numbers are stringified, and only the first 200 code points count. */
export function normalizeDistinctId(value: unknown): string {
  const text = typeof value === 'string' ? value : typeof value === 'number' ? String(value) : ''
  if (text.length <= 200) return text
  return Array.from(text).slice(0, 200).join('')
}

function groupKeyToString(value: unknown): string | null {
  if (typeof value === 'string') return value
  if (typeof value === 'number') return String(value)
  return null
}

interface Match {
  enabled: boolean
  variant: string | null
  code: string
  index: number | null
  payload: unknown
}

/** Everything one request evaluates against, computed lazily and shared by its flags. */
class RequestState {
  readonly options: MatchOptions
  readonly values = new Map<number, FlagValue>()
  readonly cohorts: CohortEvaluator
  private person: Record<string, unknown> | null = null
  private readonly groupProps = new Map<number, Record<string, unknown>>()

  constructor(readonly ctx: EvaluationContext) {
    this.options = { timezone: ctx.timezone, now: ctx.now ?? new Date() }
    this.cohorts = new CohortEvaluator(ctx, () => this.personProperties(), this.options)
  }

  personProperties(): Record<string, unknown> {
    this.person ??= derivePersonProperties(this.ctx.distinctId, this.ctx.personProperties)
    return this.person
  }

  groupTypeName(index: number): string | undefined {
    return this.ctx.groupTypeMapping[index]
  }

  groupKey(index: number): string | null {
    const name = this.groupTypeName(index)
    return name === undefined ? null : groupKeyToString(this.ctx.groups[name])
  }

  groupProperties(index: number): Record<string, unknown> {
    let props = this.groupProps.get(index)
    if (!props) {
      const name = this.groupTypeName(index)
      props = (name !== undefined && this.ctx.groupProperties[name]) || {}
      const key = this.groupKey(index)
      if (key !== null && !isSet(props, '$group_key')) props = { ...props, $group_key: key }
      this.groupProps.set(index, props)
    }
    return props
  }
}

function effectiveAggregation(flag: FlagDefinition, condition: FlagCondition): number | null {
  if (condition.aggregation_group_type_index !== undefined) return condition.aggregation_group_type_index
  return flag.filters.aggregation_group_type_index ?? null
}

function bucketingIdentifier(flag: FlagDefinition, aggregation: number | null, state: RequestState): string {
  if (aggregation !== null) return state.groupKey(aggregation) ?? ''
  const { ctx } = state
  if (flag.bucketing_identifier === 'device_id' && ctx.deviceId) return ctx.deviceId
  const stored = ctx.hashKeyOverrides?.[flag.key]
  if (stored !== undefined) return stored
  if (flag.ensure_experience_continuity && ctx.anonDistinctId !== undefined) return ctx.anonDistinctId
  return ctx.distinctId
}

function variantsOf(flag: FlagDefinition) {
  return flag.filters.multivariate?.variants ?? []
}

function hashedVariant(flag: FlagDefinition, aggregation: number | null, state: RequestState): string | null {
  const variants = variantsOf(flag)
  if (variants.length === 0) return null
  return pickVariant(flagHash(flag.key, bucketingIdentifier(flag, aggregation, state), 'variant'), variants)
}

function payloadFor(flag: FlagDefinition, variant: string | null): unknown {
  return flag.filters.payloads?.[variant ?? 'true'] ?? null
}

function isInRollout(flag: FlagDefinition, condition: FlagCondition, aggregation: number | null, state: RequestState) {
  const rollout = condition.rollout_percentage ?? 100
  if (rollout === 100) return true
  return isWithinRollout(flagHash(flag.key, bucketingIdentifier(flag, aggregation, state), ''), rollout)
}

function propertiesFor(filter: PropertyFilter, aggregation: number | null, state: RequestState) {
  if (filter.type === 'group') {
    const index = filter.group_type_index ?? aggregation
    return index === null ? {} : state.groupProperties(index)
  }
  if (filter.type === 'person' || aggregation === null) return state.personProperties()
  return state.groupProperties(aggregation)
}

/** Dependency filters hold the target flag's id (server) or key (local-evaluation feed). */
function dependencyMatches(filter: PropertyFilter, target: FlagDefinition | undefined, state: RequestState) {
  if (filter.operator !== 'flag_evaluates_to' || !target) return false
  const value = state.values.get(target.id)
  if (value === undefined) return false
  if (filter.value === true) return value !== false
  if (filter.value === false) return value === false
  if (typeof filter.value === 'string') return value === filter.value
  return false
}

/** Properties (flag dependencies and plain filters in order, cohorts last) and then the rollout. */
function conditionOutcome(
  flag: FlagDefinition,
  condition: FlagCondition,
  aggregation: number | null,
  state: RequestState,
  index: FlagIndex,
): 'condition_match' | 'no_condition_match' | 'out_of_rollout_bound' {
  const filters = condition.properties ?? []
  let cohortFilters: PropertyFilter[] | null = null
  for (const filter of filters) {
    if (filter.type === 'flag') {
      if (!dependencyMatches(filter, index.resolve(filter.key), state)) return 'no_condition_match'
    } else if (filter.type === 'cohort') {
      cohortFilters ??= []
      cohortFilters.push(filter)
    } else if (!matchProperty(filter, propertiesFor(filter, aggregation, state), state.options)) {
      return 'no_condition_match'
    }
  }
  if (cohortFilters && !state.cohorts.matchFilters(cohortFilters)) return 'no_condition_match'
  return isInRollout(flag, condition, aggregation, state) ? 'condition_match' : 'out_of_rollout_bound'
}

function earlyAccessMatch(flag: FlagDefinition, state: RequestState, index: FlagIndex): Match | null {
  const { filters } = flag
  if (filters.feature_enrollment === true) {
    const person = state.personProperties()
    const key = `$feature_enrollment/${flag.key}`
    if (!isSet(person, key)) return null
    const value = person[key]
    const enabled = value === true || value === 'true'
    return { enabled, variant: null, code: 'super_condition_value', index: 0, payload: payloadFor(flag, null) }
  }
  const superCondition = filters.super_groups?.[0]
  if (!superCondition?.properties?.length) return null
  const person = state.personProperties()
  if (!superCondition.properties.some((p) => isSet(person, p.key))) return null
  const outcome = conditionOutcome(flag, superCondition, null, state, index)
  return {
    enabled: outcome === 'condition_match',
    variant: null,
    code: 'super_condition_value',
    index: 0,
    payload: payloadFor(flag, null),
  }
}

// Holdouts bucket on the flag-level aggregation and ignore stored hash-key overrides.
function holdoutIdentifier(flag: FlagDefinition, aggregation: number | null, state: RequestState): string {
  if (aggregation !== null) return state.groupKey(aggregation) ?? ''
  if (flag.bucketing_identifier === 'device_id' && state.ctx.deviceId) return state.ctx.deviceId
  if (flag.ensure_experience_continuity && state.ctx.anonDistinctId !== undefined) return state.ctx.anonDistinctId
  return state.ctx.distinctId
}

function holdoutMatch(flag: FlagDefinition, state: RequestState): Match | null {
  const { holdout, holdout_groups: legacy } = flag.filters
  const aggregation = flag.filters.aggregation_group_type_index ?? null
  let variant: string | null = null
  if (holdout) {
    const percentage = Math.min(100, Math.max(0, holdout.exclusion_percentage))
    if (percentage < 100 && holdoutHash(holdoutIdentifier(flag, aggregation, state)) > percentage / 100) return null
    variant = `holdout-${holdout.id}`
  } else if (legacy?.[0]) {
    const group = legacy[0]
    const percentage = group.rollout_percentage ?? 100
    if (percentage < 100 && holdoutHash(holdoutIdentifier(flag, aggregation, state)) > percentage / 100) return null
    variant = group.variant ?? hashedVariant(flag, aggregation, state) ?? 'holdout'
  } else {
    return null
  }
  return { enabled: true, variant, code: 'holdout_condition_value', index: null, payload: payloadFor(flag, variant) }
}

function matchFlag(flag: FlagDefinition, state: RequestState, index: FlagIndex): Match {
  const early = earlyAccessMatch(flag, state, index)
  if (early) return early
  const holdout = holdoutMatch(flag, state)
  if (holdout) return holdout

  // Later conditions win ties: a reason replaces the best one when its priority is at least as high.
  let bestCode = 'no_group_type'
  let bestIndex: number | null = null
  let skippedGroupCondition = false
  const conditions = flag.filters.groups ?? []
  for (let i = 0; i < conditions.length; i++) {
    const condition = conditions[i]
    const aggregation = effectiveAggregation(flag, condition)
    if (aggregation === null && flag.bucketing_identifier === 'device_id' && !state.ctx.deviceId) {
      if (PRIORITY[bestCode] <= PRIORITY.out_of_rollout_bound) [bestCode, bestIndex] = ['out_of_rollout_bound', i]
      continue
    }
    if (aggregation !== null) {
      const key = state.groupKey(aggregation)
      if (key === null || key === '') {
        skippedGroupCondition = true
        if (PRIORITY[bestCode] <= PRIORITY.no_group_type) [bestCode, bestIndex] = ['no_group_type', i]
        continue
      }
    }
    const outcome = conditionOutcome(flag, condition, aggregation, state, index)
    if (PRIORITY[bestCode] <= PRIORITY[outcome]) [bestCode, bestIndex] = [outcome, i]
    if (outcome === 'condition_match') {
      const declared = condition.variant && variantsOf(flag).some((v) => v.key === condition.variant)
      const variant = declared ? (condition.variant as string) : hashedVariant(flag, aggregation, state)
      return { enabled: true, variant, code: bestCode, index: bestIndex, payload: payloadFor(flag, variant) }
    }
    if (outcome === 'out_of_rollout_bound' && flag.filters.early_exit === true) break
  }
  if (bestCode === 'no_condition_match' && skippedGroupCondition) bestCode = GROUPS_NOT_EVALUATED
  return { enabled: false, variant: null, code: bestCode, index: bestIndex, payload: null }
}

/**
 * A flag answers with few distinct outcomes (per reason, condition and variant), so each is built once per flag
 * definition and shared, frozen, by every request that reaches it: no per-request objects or reason texts, and
 * the wire text can be kept per outcome (response.ts). A changed definition is a new object, so its outcomes go
 * with the old one.
 */
const outcomesByFlag = new WeakMap<FlagDefinition, SharedOutcome[]>()
const MAX_OUTCOMES_PER_FLAG = 64

interface SharedOutcome {
  code: string
  evaluation: FlagEvaluation
}

function toEvaluation(flag: FlagDefinition, match: Match): FlagEvaluation {
  let outcomes = outcomesByFlag.get(flag)
  if (outcomes === undefined) {
    outcomes = []
    outcomesByFlag.set(flag, outcomes)
  }
  // A short scan: a flag has a handful of outcomes, and comparing fields allocates nothing.
  for (const outcome of outcomes) {
    const e = outcome.evaluation
    if (
      outcome.code === match.code &&
      e.enabled === match.enabled &&
      e.reason.condition_index === match.index &&
      e.variant === match.variant &&
      e.payload === match.payload
    ) {
      return e
    }
  }
  const evaluation = Object.freeze({
    key: flag.key,
    enabled: match.enabled,
    variant: match.variant,
    failed: false,
    reason: Object.freeze({
      // The "group conditions were not evaluated" case keeps the wire code no_condition_match.
      code: match.code === GROUPS_NOT_EVALUATED ? 'no_condition_match' : match.code,
      condition_index: match.index,
      description: describeReason(match.code, match.index),
    }),
    payload: match.payload,
    metadata: Object.freeze({ id: flag.id, version: flag.version ?? 0, has_experiment: Boolean(flag.has_experiment) }),
  })
  if (outcomes.length < MAX_OUTCOMES_PER_FLAG) outcomes.push({ code: match.code, evaluation })
  return evaluation
}

function failedEvaluation(flag: FlagDefinition, code: string, description: string): FlagEvaluation {
  return {
    key: flag.key,
    enabled: false,
    variant: null,
    failed: true,
    reason: { code, condition_index: null, description },
    payload: null,
    metadata: { id: flag.id, version: flag.version ?? 0, has_experiment: Boolean(flag.has_experiment) },
  }
}

function missingDependency(flag: FlagDefinition): FlagEvaluation {
  return toEvaluation(flag, { enabled: false, variant: null, code: 'missing_dependency', index: null, payload: null })
}

/** Lookups over one flag list, cached per list so a cached definition set is indexed once. */
class FlagIndex {
  private readonly byId = new Map<number, FlagDefinition>()
  private readonly byKey = new Map<string, FlagDefinition>()
  private readonly dependencies = new WeakMap<FlagDefinition, string[]>()

  constructor(flags: readonly FlagDefinition[]) {
    for (const flag of flags) {
      if (flag.deleted) continue
      this.byId.set(flag.id, flag)
      this.byKey.set(flag.key, flag)
    }
  }

  resolve(reference: string): FlagDefinition | undefined {
    if (/^\d+$/.test(reference)) {
      const byId = this.byId.get(Number(reference))
      if (byId) return byId
    }
    return this.byKey.get(reference)
  }

  dependencyReferences(flag: FlagDefinition): string[] {
    let references = this.dependencies.get(flag)
    if (!references) {
      references = []
      for (const condition of [...(flag.filters.groups ?? []), ...(flag.filters.super_groups ?? [])]) {
        for (const filter of condition.properties ?? []) {
          if (filter.type === 'flag') references.push(String(filter.key))
        }
      }
      this.dependencies.set(flag, references)
    }
    return references
  }
}

const indexes = new WeakMap<readonly FlagDefinition[], FlagIndex>()

function indexFor(flags: readonly FlagDefinition[]): FlagIndex {
  let index = indexes.get(flags)
  if (!index) {
    index = new FlagIndex(flags)
    indexes.set(flags, index)
  }
  return index
}

export interface EvaluateFlagsOptions {
  /** Evaluate only these flags (and what they depend on). */
  flagKeys?: readonly string[]
  /** Flags left out by the runtime/context filters: absent from the result, `false` to dependants. */
  excludedKeys?: ReadonlySet<string>
}

/** One request's pass over a flag list: dependency checks, dependency-first order, results. */
class FlagSetRun {
  readonly results: Record<string, FlagEvaluation> = {}
  hasErrors = false
  private readonly health = new Map<FlagDefinition, boolean>()
  private readonly onPath = new Set<FlagDefinition>()
  private readonly evaluated = new Set<FlagDefinition>()

  constructor(
    private readonly index: FlagIndex,
    private readonly state: RequestState,
    private readonly excluded: ReadonlySet<string> | undefined,
  ) {}

  isEvaluated(flag: FlagDefinition): boolean {
    return flag.active && !flag.deleted && !this.excluded?.has(flag.key)
  }

  /** Evaluable when every flag it depends on exists and no dependency loops back to it. */
  private isHealthy(flag: FlagDefinition): boolean {
    const references = this.index.dependencyReferences(flag)
    if (references.length === 0) return true
    const known = this.health.get(flag)
    if (known !== undefined) return known
    if (this.onPath.has(flag)) {
      this.hasErrors = true
      return false
    }
    this.onPath.add(flag)
    let healthy = true
    for (const reference of references) {
      const target = this.index.resolve(reference)
      if (!target || !this.isHealthy(target)) healthy = false
    }
    this.onPath.delete(flag)
    this.health.set(flag, healthy)
    return healthy
  }

  evaluate(flag: FlagDefinition): void {
    if (this.evaluated.has(flag)) return
    this.evaluated.add(flag)
    if (!this.isHealthy(flag)) {
      this.results[flag.key] = missingDependency(flag)
      return
    }
    for (const reference of this.index.dependencyReferences(flag)) {
      const target = this.index.resolve(reference)
      if (target && this.isEvaluated(target)) this.evaluate(target)
    }
    if (flag.ensure_experience_continuity && this.state.ctx.hashKeyOverrideError) {
      this.hasErrors = true
      this.results[flag.key] = failedEvaluation(
        flag,
        'hash_key_override_error',
        'Failed to fetch hash key override for experience continuity',
      )
      return
    }
    try {
      const evaluation = toEvaluation(flag, matchFlag(flag, this.state, this.index))
      this.state.values.set(flag.id, evaluation.variant ?? evaluation.enabled)
      this.results[flag.key] = evaluation
    } catch (error) {
      if (!(error instanceof FlagEvaluationError)) throw error
      this.hasErrors = true
      this.results[flag.key] = failedEvaluation(flag, error.code, error.description)
    }
  }
}

/**
 * Evaluates a team's flags for one request. Inactive, deleted and excluded flags are omitted; failures are
 * marked `failed` and raise `errorsWhileComputingFlags`, as does a dependency cycle.
 */
export function evaluateFlagSet(
  flags: readonly FlagDefinition[],
  ctx: EvaluationContext,
  options: EvaluateFlagsOptions = {},
): FlagSetEvaluation {
  const state = new RequestState(ctx)
  const excluded = options.excludedKeys
  const run = new FlagSetRun(indexFor(flags), state, excluded)
  if (excluded && excluded.size > 0) {
    for (const flag of flags) {
      if (excluded.has(flag.key) && !flag.deleted) state.values.set(flag.id, false)
    }
  }
  const wanted = options.flagKeys ? new Set(options.flagKeys) : null
  for (const flag of flags) {
    if (run.isEvaluated(flag) && (!wanted || wanted.has(flag.key))) run.evaluate(flag)
  }
  return { flags: run.results, errorsWhileComputingFlags: run.hasErrors }
}

/** Evaluates a team's flags for one request (see evaluateFlagSet for the error flag). */
export function evaluateFlags(
  flags: readonly FlagDefinition[],
  ctx: EvaluationContext,
): Record<string, FlagEvaluation> {
  return evaluateFlagSet(flags, ctx).flags
}

/** Evaluates one flag on its own; flag dependencies resolve only against itself. */
export function evaluateFlag(flag: FlagDefinition, ctx: EvaluationContext): FlagEvaluation {
  if (!flag.active || flag.deleted) {
    return toEvaluation(flag, { enabled: false, variant: null, code: 'flag_disabled', index: null, payload: null })
  }
  return evaluateFlagSet([flag], ctx).flags[flag.key]
}
