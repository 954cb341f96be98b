// One /flags request: the project's cached definitions, the quota, the request filters (runtime, evaluation
// contexts, flag keys), the person and group data the evaluated flags actually read, experience-continuity
// overrides, and then the pure evaluator. A failed lookup fails only the flags that needed it.
import type { CohortStore } from '../cohorts/store.js'
import type { GeoIp } from '../ingest/geoip.js'
import type { PersonStore } from '../persons/store.js'
import { AnswerCache, type AnswerCacheLimits, ByteBudget, DEFAULT_ANSWER_CACHE_LIMITS } from './answer-cache.js'
import type { ProjectContext, TeamDefinitions } from './cache.js'
import { evaluateFlagSet, normalizeDistinctId } from './matcher.js'
import type { FlagQuota } from './quota.js'
import { excludedFlagKeys, type RequestFlagFilter, resolveRequestRuntime } from './runtime.js'
import type { EvaluationContext, FlagDefinition, FlagEvaluation, FlagSetEvaluation } from './types.js'

type Headers = Record<string, string | string[] | undefined>
type Json = Record<string, unknown>

/** The body fields /flags reads, under PostHog's names and aliases. */
export interface FlagsRequest {
  distinctId: string
  groups: Json
  personProperties: Json
  groupProperties: Record<string, Json>
  anonDistinctId?: string
  deviceId?: string
  flagKeys?: string[]
  evaluationContexts?: string[]
  evaluationRuntime?: unknown
  geoipDisable: boolean
  disableFlags: boolean
  surveyFlagsOnly: boolean
}

export interface FlagsOutcome {
  result: FlagSetEvaluation
  quotaLimited: boolean
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)
const objectOr = (value: unknown): Json => (isObject(value) ? value : {})
const stringList = (value: unknown): string[] | undefined =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined
const truthy = (value: unknown) => value === true || value === 'true' || value === 1 || value === '1'

export class FlagsRequestError extends Error {}

/** Reads the decoded body; throws FlagsRequestError when it cannot name a distinct id. */
export function readFlagsRequest(body: Json, query: Record<string, string | undefined>): FlagsRequest {
  const rawDistinctId = body.distinct_id ?? body.$distinct_id
  if (typeof rawDistinctId !== 'string' && typeof rawDistinctId !== 'number') {
    throw new FlagsRequestError('The distinct_id field is missing from the request')
  }
  const personProperties = objectOr(body.person_properties ?? body.$properties)
  const groupProperties: Record<string, Json> = {}
  for (const [type, props] of Object.entries(objectOr(body.group_properties ?? body.$group_properties))) {
    if (isObject(props)) groupProperties[type] = props
  }
  const anon = body.$anon_distinct_id ?? body.anon_distinct_id ?? personProperties.$anon_distinct_id
  const deviceId = body.$device_id ?? personProperties.$device_id
  return {
    distinctId: normalizeDistinctId(rawDistinctId),
    groups: objectOr(body.groups ?? body.$groups),
    personProperties,
    groupProperties,
    anonDistinctId: typeof anon === 'string' && anon !== '' ? anon : undefined,
    deviceId: typeof deviceId === 'string' && deviceId !== '' ? deviceId : undefined,
    flagKeys: stringList(body.flag_keys_to_evaluate ?? body.flag_keys),
    evaluationContexts: stringList(body.evaluation_contexts ?? body.evaluation_environments),
    evaluationRuntime: body.evaluation_runtime,
    geoipDisable: truthy(body.geoip_disable),
    disableFlags: truthy(body.disable_flags),
    surveyFlagsOnly: truthy(query.only_evaluate_survey_feature_flags),
  }
}

function failedEvaluation(flag: FlagDefinition): FlagEvaluation {
  return {
    key: flag.key,
    enabled: false,
    variant: null,
    failed: true,
    reason: { code: 'database_error', condition_index: null, description: 'Database error while reading flag data' },
    payload: null,
    metadata: { id: flag.id, version: flag.version ?? 0, has_experiment: Boolean(flag.has_experiment) },
  }
}

function parseProperties(text: string | undefined): Json {
  if (!text) return {}
  try {
    return objectOr(JSON.parse(text))
  } catch {
    return {}
  }
}

/** Parsed properties per stored row: cached rows are shared between requests, and read-only here. */
const parsedRows = new WeakMap<object, Json>()

function rowProperties(row: { properties?: string } | undefined): Json {
  if (!row) return NO_PROPERTIES
  let parsed = parsedRows.get(row)
  if (parsed === undefined) {
    parsed = parseProperties(row.properties)
    parsedRows.set(row, parsed)
  }
  return parsed
}

interface PersonData {
  failed: boolean
  properties: Json
  /** Length of the stored properties' JSON: what an answer that holds on to `properties` keeps alive. */
  propertiesChars: number
  staticCohortIds: Set<number> | undefined
  overrides: Record<string, string> | undefined
  overrideFailed: boolean
}

/** What a request's filters leave to evaluate, and the data those flags read. */
interface RequestPlan {
  excluded: Set<string>
  candidates: FlagDefinition[]
  /** Some candidate reads the person (flag_keys narrows the output, not the lookups: flags may depend on others). */
  needsPerson: boolean
  groupIndexes: Set<number>
  /**
   * Recent answers under this plan, by request inputs (see evaluate); none when answers may not be reused:
   * something besides the person row and the request is read (clock-dependent dates, static cohort memberships,
   * continuity overrides or group rows), or the plan is not kept with the definitions.
   */
  answers: AnswerCache<ReusableAnswer> | undefined
}

interface ReusableAnswer {
  /** The stored person's parsed properties the answer was computed from (one object per stored row). */
  person: Json | undefined
  result: FlagSetEvaluation
}

const NO_PROPERTIES: Json = Object.freeze({})

const MAX_PLANS_PER_TEAM = 64

/**
 * The plan for a filter, kept with the team's cached definitions (most requests share a handful of filters).
 * `newAnswerCache` makes the plan's answer cache, counted against the team's byte budget.
 */
function requestPlan(
  definitions: TeamDefinitions,
  filter: RequestFlagFilter,
  newAnswerCache: (definitions: TeamDefinitions) => AnswerCache<ReusableAnswer>,
): RequestPlan {
  const memoKey = `plan:${filter.runtime}:${filter.surveyFlagsOnly === true}:${JSON.stringify(filter.evaluationEnvironments ?? null)}`
  const known = definitions.memo.get(memoKey) as RequestPlan | undefined
  if (known) return known
  const excluded = excludedFlagKeys(definitions.flags, filter)
  const candidates = definitions.flags.filter((flag) => flag.active && !flag.deleted && !excluded.has(flag.key))
  let needsPerson = false
  const groupIndexes = new Set<number>()
  for (const flag of candidates) {
    const needs = definitions.needs.get(flag.key)
    if (!needs) continue
    needsPerson ||= needs.person
    for (const index of needs.groupTypeIndexes) groupIndexes.add(index)
  }
  const kept = definitions.memo.size < MAX_PLANS_PER_TEAM
  const reusable =
    kept &&
    !definitions.readsClock &&
    definitions.staticCohortIds.length === 0 &&
    groupIndexes.size === 0 &&
    !candidates.some((flag) => flag.ensure_experience_continuity)
  const plan = {
    excluded,
    candidates,
    needsPerson,
    groupIndexes,
    answers: reusable ? newAnswerCache(definitions) : undefined,
  }
  if (kept) definitions.memo.set(memoKey, plan)
  return plan
}

export function createFlagsEvaluator(deps: {
  quota: Pick<FlagQuota, 'admit'>
  persons: Pick<PersonStore, 'getByDistinctId' | 'getGroup' | 'hashKeyOverrides' | 'setHashKeyOverrides'>
  cohorts: Pick<CohortStore, 'staticMemberships'>
  geoip: () => Promise<GeoIp | null>
  clock: () => Date
  answerCacheLimits?: AnswerCacheLimits
}) {
  const limits = deps.answerCacheLimits ?? DEFAULT_ANSWER_CACHE_LIMITS
  const allAnswers = new ByteBudget(limits.totalBytes)
  const teamAnswers = new WeakMap<TeamDefinitions, ByteBudget>()
  // A team's answers live as long as its loaded definitions: when those are collected, so are the answers.
  const released = new FinalizationRegistry<ByteBudget>((team) => allAnswers.add(-team.used))
  const answerCacheFor = (definitions: TeamDefinitions) => {
    let team = teamAnswers.get(definitions)
    if (team === undefined) {
      team = new ByteBudget(limits.teamBytes, allAnswers)
      teamAnswers.set(definitions, team)
      released.register(definitions, team)
    }
    return new AnswerCache<ReusableAnswer>(limits, team)
  }

  /** Stored overrides, after pinning the continuity flags the person lacks to the request's anonymous id. */
  async function hashKeyOverrides(
    teamId: number,
    personId: string,
    request: FlagsRequest,
    continuityKeys: string[],
  ): Promise<Record<string, string>> {
    const overrides: Record<string, string> = {}
    for (const row of await deps.persons.hashKeyOverrides(teamId, personId))
      overrides[row.feature_flag_key] = row.hash_key
    const anon = request.anonDistinctId
    const missing = continuityKeys.filter((key) => overrides[key] === undefined)
    if (anon === undefined || missing.length === 0) return overrides
    const anonPerson = anon === request.distinctId ? undefined : await deps.persons.getByDistinctId(teamId, anon)
    await deps.persons.setHashKeyOverrides(teamId, personId, missing, anon)
    if (anonPerson && anonPerson.id !== personId) {
      await deps.persons.setHashKeyOverrides(teamId, anonPerson.id, missing, anon)
    }
    for (const key of missing) overrides[key] = anon
    return overrides
  }

  return {
    async evaluate(
      project: ProjectContext,
      definitions: TeamDefinitions,
      request: FlagsRequest,
      headers: Headers,
      clientIp: string | undefined,
    ): Promise<FlagsOutcome> {
      const empty: FlagSetEvaluation = { flags: {}, errorsWhileComputingFlags: false }
      if (!(await deps.quota.admit(project.organizationId, project.flagRequestQuota))) {
        return { result: empty, quotaLimited: true }
      }
      if (request.disableFlags) return { result: empty, quotaLimited: false }
      const plan = requestPlan(
        definitions,
        {
          runtime: resolveRequestRuntime(request.evaluationRuntime, headers),
          evaluationEnvironments: request.evaluationContexts,
          surveyFlagsOnly: request.surveyFlagsOnly,
        },
        answerCacheFor,
      )
      if (plan.candidates.length === 0) return { result: empty, quotaLimited: false }
      const personOutcome = plan.needsPerson
        ? await this.personData(project, definitions, request, plan.candidates)
        : undefined
      const answers = plan.answers
      if (answers === undefined || personOutcome?.failed) {
        return {
          result: await this.compute(project, definitions, plan, request, clientIp, personOutcome),
          quotaLimited: false,
        }
      }
      // Evaluation is a pure function of the definitions (this plan belongs to one loaded set), the stored person
      // (one parsed object per stored row: a changed person is a new object) and the request's own inputs; the
      // IP stands for its location. The same inputs get the same (frozen, shared) answer.
      const key = JSON.stringify([
        request.distinctId,
        request.personProperties,
        request.groups,
        request.groupProperties,
        request.anonDistinctId ?? null,
        request.deviceId ?? null,
        request.flagKeys ?? null,
        request.geoipDisable ? null : (clientIp ?? null),
        project.timezone,
      ])
      const known = answers.get(key)
      if (known && known.person === personOutcome?.properties) return { result: known.result, quotaLimited: false }
      const result = await this.compute(project, definitions, plan, request, clientIp, personOutcome)
      // Kept from the second time the same inputs arrive: one-off requests (a new visitor, a changing property)
      // would otherwise fill the memory with answers never asked for again. Large inputs are never kept.
      if (!result.errorsWhileComputingFlags) {
        if (answers.isRepeat(key)) {
          Object.freeze(result.flags)
          Object.freeze(result)
        }
        const person = personOutcome?.properties
        answers.offer(key, { person, result }, plan.candidates.length, 2 * (personOutcome?.propertiesChars ?? 0))
      }
      return { result, quotaLimited: false }
    },

    /** Evaluates the plan's flags with the person data already read, reading groups and the location. */
    async compute(
      project: ProjectContext,
      definitions: TeamDefinitions,
      plan: RequestPlan,
      request: FlagsRequest,
      clientIp: string | undefined,
      personOutcome: PersonData | undefined,
    ): Promise<FlagSetEvaluation> {
      const { excluded, candidates, groupIndexes } = plan
      const [groupOutcome, geo] = await Promise.all([
        this.groupData(project.teamId, definitions, request, groupIndexes),
        request.geoipDisable || !clientIp ? undefined : deps.geoip().then((g) => g?.lookupWhenReady(clientIp)),
      ])

      const ctx: EvaluationContext = {
        distinctId: request.distinctId,
        personProperties: { ...personOutcome?.properties, ...geo, ...request.personProperties },
        groups: request.groups,
        groupProperties: groupOutcome.properties,
        groupTypeMapping: definitions.groupTypeMapping,
        cohorts: definitions.cohorts,
        staticCohortIds: personOutcome?.staticCohortIds,
        hashKeyOverrides: personOutcome?.overrides,
        hashKeyOverrideError: personOutcome?.overrideFailed,
        anonDistinctId: request.anonDistinctId,
        deviceId: request.deviceId,
        timezone: project.timezone,
        now: deps.clock(),
      }

      const someLookupFailed = personOutcome?.failed === true || groupOutcome.failed.size > 0
      const failed = !someLookupFailed
        ? []
        : candidates.filter((flag) => {
            const needs = definitions.needs.get(flag.key)
            if (!needs) return false
            return (
              (needs.person && personOutcome?.failed === true) ||
              needs.groupTypeIndexes.some((index) => groupOutcome.failed.has(index))
            )
          })
      const skip = failed.length > 0 ? new Set([...excluded, ...failed.map((f) => f.key)]) : excluded
      const result = evaluateFlagSet(definitions.flags, ctx, { flagKeys: request.flagKeys, excludedKeys: skip })
      if (failed.length > 0) {
        const wanted = request.flagKeys ? new Set(request.flagKeys) : null
        for (const flag of failed) if (!wanted || wanted.has(flag.key)) result.flags[flag.key] = failedEvaluation(flag)
        result.errorsWhileComputingFlags = true
      }
      return result
    },

    /** Stored person properties, static cohort memberships and continuity overrides (one person lookup). */
    async personData(
      project: ProjectContext,
      definitions: TeamDefinitions,
      request: FlagsRequest,
      candidates: FlagDefinition[],
    ): Promise<PersonData> {
      const { teamId } = project
      let person: Awaited<ReturnType<typeof deps.persons.getByDistinctId>>
      let staticCohortIds: Set<number> | undefined
      try {
        person = await deps.persons.getByDistinctId(teamId, request.distinctId)
        if (person && definitions.staticCohortIds.length > 0) {
          staticCohortIds = new Set(
            await deps.cohorts.staticMemberships(teamId, person.id, definitions.staticCohortIds),
          )
        }
      } catch {
        return {
          failed: true,
          properties: {},
          propertiesChars: 0,
          staticCohortIds: undefined,
          overrides: undefined,
          overrideFailed: false,
        }
      }
      const continuityKeys = candidates.filter((f) => f.ensure_experience_continuity).map((f) => f.key)
      let overrides: Record<string, string> | undefined
      let overrideFailed = false
      if (person && continuityKeys.length > 0) {
        try {
          overrides = await hashKeyOverrides(teamId, person.id, request, continuityKeys)
        } catch {
          overrideFailed = true
        }
      }
      return {
        failed: false,
        properties: rowProperties(person ?? undefined),
        propertiesChars: person?.properties?.length ?? 0,
        staticCohortIds,
        overrides,
        overrideFailed,
      }
    },

    /** Stored properties of the request's groups that some flag reads; each lookup may fail on its own. */
    async groupData(teamId: number, definitions: TeamDefinitions, request: FlagsRequest, indexes: Set<number>) {
      const properties: Record<string, Json> = {}
      const failed = new Set<number>()
      await Promise.all(
        [...indexes].map(async (index) => {
          const type = definitions.groupTypeMapping[index]
          if (type === undefined) return
          const key = request.groups[type]
          if (typeof key !== 'string' && typeof key !== 'number') return
          try {
            const group = await deps.persons.getGroup(teamId, index, String(key))
            if (group) properties[type] = rowProperties(group)
          } catch {
            failed.add(index)
          }
        }),
      )
      for (const [type, props] of Object.entries(request.groupProperties)) {
        properties[type] = { ...properties[type], ...props }
      }
      return { properties, failed }
    },
  }
}
export type FlagsEvaluator = ReturnType<typeof createFlagsEvaluator>
