// Experiments: create (reusing an eligible flag or creating one through the flag service), update with PostHog's
// rules and messages, soft delete and the exposure cohort. The lifecycle helpers live in lifecycle.ts, the list,
// stats and eligible flags in listing.ts, copies (duplicate, copy_to_project) in copy.ts, the shared loading and the
// API record in context.ts, the pure body rules in validation.ts.
import type { ActivityStore } from '../activity/store.js'
import type { CohortService } from '../cohorts/service.js'
import type { FlagService } from '../flags/service.js'
import type { FlagRow, FlagStore } from '../flags/store.js'
import { ValidationError } from '../http/errors.js'
import type { UserStore } from '../users/store.js'
import { createExperimentContext, type ExperimentActor } from './context.js'
import { createExperimentLifecycle } from './lifecycle.js'
import { createExperimentListing } from './listing.js'
import type { ExperimentRow, ExperimentStore, NewExperimentRow } from './store.js'
import { createExperimentSubjects } from './subject.js'
import {
  CREATE_KEYS,
  checkConclusion,
  checkExposureCriteria,
  checkKeys,
  checkMetrics,
  checkParameters,
  DEFAULT_VARIANTS,
  dateOf,
  flagVariants,
  isObject,
  type Json,
  parse,
  syncOrder,
  TYPES,
  UPDATE_KEYS,
  withUuids,
} from './validation.js'

export type { ExperimentActor } from './context.js'
export { isEligibleFlag } from './validation.js'

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

  const context = createExperimentContext(deps)
  const { load, flagOf, fingerprinted, toApi, log, checkSavedMetrics, holdoutFilters } = context
  const lifecycle = createExperimentLifecycle({ store, flags: deps.flags, context, clock: deps.clock })
  const listing = createExperimentListing({
    store,
    flags: deps.flags,
    flagRows: deps.flagRows,
    projectTimezone: deps.projectTimezone,
    clock: deps.clock,
  })

  const service = {
    toApi,
    load,

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

    ...lifecycle,
    ...listing,

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

    /** The runner's view of an experiment (undefined when it is missing or deleted). */
    subject: createExperimentSubjects(store, deps.flagRows),
  }

  return service
}
export type ExperimentService = ReturnType<typeof createExperimentService>
