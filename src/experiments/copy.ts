// Copies of an experiment, each a new draft made through the normal create (PostHog's clone): `duplicate/` in the
// same project (new metric uuids, saved metric links kept) and `copy_to_project/` into another project of the same
// organization — the flag reused there when one has the key (its variants then replace the copy's), else created
// inactive; inline metrics, settings and ordering arrays come along; saved metric links do not, since saved metrics
// belong to their project.
import { randomUUID } from 'node:crypto'
import type { FlagStore } from '../flags/store.js'
import { NotFound, PermissionDenied, ValidationError } from '../http/errors.js'
import type { ProjectStore } from '../projects/store.js'
import type { ExperimentActor } from './context.js'
import type { ExperimentService } from './service.js'
import type { ExperimentStore } from './store.js'
import { flagVariants, isObject, type Json, parse } from './validation.js'

/** PostHog's `OrganizationMembership.Level.MEMBER`: the least a caller needs to write in the target project. */
const MEMBER_LEVEL = 1

export interface CopyActor extends ExperimentActor {
  /** The caller's membership level in the organization, null when not a member. */
  level: number | null
  /** The projects a personal API key is limited to, null when it is not (or for a session). */
  scopedTeams: number[] | null
}

export function createExperimentCopies(deps: {
  experiments: Pick<ExperimentService, 'load' | 'create'>
  store: Pick<ExperimentStore, 'names' | 'savedMetrics'>
  flagRows: Pick<FlagStore, 'get' | 'getLiveByKey'>
  projects: Pick<ProjectStore, 'get'>
}) {
  async function copyToProject(teamId: number, actor: CopyActor, id: number, input: Json) {
    const source = await deps.experiments.load(teamId, id)
    const targetId = input.target_team_id
    if (targetId === undefined || targetId === null) {
      throw new ValidationError('This field is required.', 'target_team_id', 'required')
    }
    if (!Number.isSafeInteger(targetId)) {
      throw new ValidationError('A valid integer is required.', 'target_team_id', 'invalid')
    }
    for (const key of ['feature_flag_key', 'name'] as const) {
      if (input[key] !== undefined && input[key] !== null && typeof input[key] !== 'string') {
        throw new ValidationError('Not a valid string.', key, 'invalid')
      }
    }
    const target = await deps.projects.get(targetId)
    if (!target || target.organization_id !== actor.organizationId) throw new NotFound('Target team not found.')
    const keyReaches = actor.scopedTeams === null || actor.scopedTeams.includes(target.id)
    if (actor.level === null || actor.level < MEMBER_LEVEL || !keyReaches) {
      throw new PermissionDenied('You do not have write access to the target project.')
    }

    const sourceFlag = await deps.flagRows.get(teamId, source.feature_flag_id)
    const flagKey: string =
      typeof input.feature_flag_key === 'string' && input.feature_flag_key !== ''
        ? input.feature_flag_key
        : (sourceFlag?.key ?? '')
    let parameters = parse<Json | null>(source.parameters, null)
    const existing = flagKey === '' ? undefined : await deps.flagRows.getLiveByKey(target.id, flagKey)
    if (existing && flagVariants(existing).length > 0) {
      parameters = { ...(parameters ?? {}), feature_flag_variants: structuredClone(flagVariants(existing)) }
    }
    let name = typeof input.name === 'string' && input.name !== '' ? input.name : ''
    if (name === '') {
      const taken = new Set(await deps.store.names(target.id))
      const stem = `${source.name} (Copy)`
      name = stem
      for (let i = 1; taken.has(name); i++) name = `${stem} ${i}`
    }
    const scheduling = parse<Json>(source.scheduling_config, {})
    return deps.experiments.create(target.id, actor, {
      name,
      feature_flag_key: flagKey,
      description: source.description ?? '',
      type: source.type ?? 'product',
      parameters,
      filters: parse(source.filters, {}),
      metrics: parse<Json[]>(source.metrics, []),
      metrics_secondary: parse<Json[]>(source.metrics_secondary, []),
      stats_config: parse(source.stats_config, {}),
      scheduling_config: isObject(scheduling) ? scheduling : {},
      exposure_criteria: parse(source.exposure_criteria, {}),
      primary_metrics_ordered_uuids: parse(source.primary_metrics_ordered_uuids, null),
      secondary_metrics_ordered_uuids: parse(source.secondary_metrics_ordered_uuids, null),
      only_count_matured_users: source.only_count_matured_users === 1,
    })
  }

  async function duplicate(teamId: number, actor: ExperimentActor, id: number, input: Json) {
    const row = await deps.experiments.load(teamId, id)
    const flag = await deps.flagRows.get(teamId, row.feature_flag_id)
    if (!flag) throw new NotFound('Feature flag not found.')
    const key =
      typeof input.feature_flag_key === 'string' && input.feature_flag_key !== '' ? input.feature_flag_key : flag.key
    const names = new Set(await deps.store.names(teamId))
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
    const links = await deps.store.savedMetrics.links(row.id)
    const fresh = (ms: Json[]) => ms.map(({ fingerprint: _f, ...m }) => ({ ...m, uuid: randomUUID() }))
    const metrics = fresh(parse<Json[]>(row.metrics, []))
    const secondary = fresh(parse<Json[]>(row.metrics_secondary, []))
    const savedUuids = await Promise.all(
      links.map(async (l) => {
        const s = await deps.store.savedMetrics.get(teamId, l.saved_metric_id)
        return {
          uuid: s ? (parse<Json>(s.query, {}).uuid as string | undefined) : undefined,
          type: parse<Json>(l.metadata, {}).type,
        }
      }),
    )
    return deps.experiments.create(teamId, actor, {
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
  }

  return { duplicate, copyToProject }
}
export type ExperimentCopies = ReturnType<typeof createExperimentCopies>
