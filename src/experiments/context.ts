// What every experiment operation shares: loading a row (and its flag), the API record of an experiment
// (products.md §1.7), the activity log, saved metric links, holdout flag specs and refingerprinting.
import type { ActivityStore } from '../activity/store.js'
import type { FlagRow, FlagStore } from '../flags/store.js'
import { NotFound, ValidationError } from '../http/errors.js'
import type { UserStore } from '../users/store.js'
import { metricFingerprint } from './fingerprint.js'
import type { ExperimentRow, ExperimentStore, HoldoutRow } from './store.js'
import { isObject, type Json, parse } from './validation.js'

export interface ExperimentActor {
  userId: number | null
  organizationId: string
}

/** draft, running, paused (running with its flag off) or stopped. */
export function statusOf(row: ExperimentRow, flag: FlagRow | undefined): string {
  if (row.start_date === null) return 'draft'
  if (row.end_date !== null) return 'stopped'
  return flag && flag.active === 0 ? 'paused' : 'running'
}

/** The metrics with their fingerprints (products.md §1.9) under the experiment's current settings. */
export function fingerprinted(
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

export function createExperimentContext(deps: {
  store: ExperimentStore
  flagRows: Pick<FlagStore, 'get'>
  users: Pick<UserStore, 'get'>
  activity: Pick<ActivityStore, 'log'>
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

  function refingerprint(row: ExperimentRow, change: { start_date: string | null }) {
    const effective = { ...row, ...change }
    return {
      metrics: JSON.stringify(fingerprinted(effective, parse<Json[]>(row.metrics, []))),
      metrics_secondary: JSON.stringify(fingerprinted(effective, parse<Json[]>(row.metrics_secondary, []))),
    }
  }

  return { load, flagOf, fingerprinted, toApi, log, checkSavedMetrics, holdoutFilters, refingerprint }
}
export type ExperimentContext = ReturnType<typeof createExperimentContext>
