// The feature flags a survey keeps: the user's targeting flag (from `targeting_flag_filters`), the internal
// targeting flag that hides the survey from people who dismissed or answered it, and the response-sampling flag.
// They are real flags, written through the flag service, so /flags evaluates them and every change invalidates
// the flag caches; each one's `active` follows whether the survey runs.
import crypto from 'node:crypto'
import type { FlagService } from '../flags/service.js'
import type { FlagRow, FlagStore } from '../flags/store.js'
import type { MinimalFlag } from './schemas.js'

export const TARGETING_FLAG_PREFIX = 'survey-targeting-'
const HEX = '1234567890abcdef'

export interface FlagActor {
  userId: number | null
  organizationId: string
}

/** `survey-targeting-` + 10 random characters of PostHog's alphabet + suffix (already a slug). */
export function targetingFlagKey(suffix = ''): string {
  const bytes = crypto.randomBytes(10)
  let id = ''
  for (const b of bytes) id += HEX[b % HEX.length]
  return `${TARGETING_FLAG_PREFIX}${id}${suffix}`
}

/** Whether a flag key is a survey's internal targeting flag (remote config reads this to report surveys on). */
export function isInternalTargetingKey(key: string): boolean {
  return key.startsWith(TARGETING_FLAG_PREFIX) && key.endsWith('-custom')
}

/** Filters of the internal targeting flag: not dismissed, not answered (this iteration), and the wait period. */
export function internalTargetingFilters(survey: {
  id: string
  iteration_count: number | null
  current_iteration: number | null
  waitPeriodDays: number | null
}): Record<string, unknown> {
  const key =
    survey.iteration_count !== null && survey.iteration_count > 0
      ? `${survey.id}/${survey.current_iteration || 1}`
      : survey.id
  const base = [
    { key: `$survey_dismissed/${key}`, value: 'is_not_set', operator: 'is_not_set', type: 'person' },
    { key: `$survey_responded/${key}`, value: 'is_not_set', operator: 'is_not_set', type: 'person' },
  ]
  const wait = survey.waitPeriodDays
  if (wait !== null && wait > 0) {
    return {
      groups: [
        {
          rollout_percentage: 100,
          properties: [
            ...base,
            { key: '$last_seen_survey_date', value: 'is_not_set', operator: 'is_not_set', type: 'person' },
          ],
        },
        {
          rollout_percentage: 100,
          properties: [
            ...base,
            { key: '$last_seen_survey_date', value: `${wait}d`, operator: 'is_date_before', type: 'person' },
          ],
        },
      ],
    }
  }
  return { groups: [{ rollout_percentage: 100, properties: base }] }
}

export const SAMPLING_FILTERS = { groups: [{ rollout_percentage: 100, properties: [] }] }

export function minimalFlag(row: FlagRow | undefined): MinimalFlag {
  if (!row || row.deleted === 1) return null
  return {
    id: row.id,
    team_id: row.team_id,
    name: row.name,
    key: row.key,
    filters: JSON.parse(row.filters) as unknown,
    deleted: row.deleted === 1,
    active: row.active === 1,
    ensure_experience_continuity: row.ensure_experience_continuity === 1,
    has_encrypted_payloads: false,
    version: row.version,
    evaluation_runtime: row.evaluation_runtime,
    evaluation_tags: JSON.parse(row.evaluation_tags) as string[],
  }
}

export function createSurveyFlags(deps: {
  flags: Pick<FlagService, 'create' | 'update'>
  flagRows: Pick<FlagStore, 'get'>
}) {
  return {
    get: (teamId: number, id: number | null) =>
      id === null ? Promise.resolve(undefined) : deps.flagRows.get(teamId, id),
    async create(
      teamId: number,
      actor: FlagActor,
      filters: unknown,
      surveyName: string,
      active: boolean,
      suffix = '',
    ): Promise<number> {
      const flag = await deps.flags.create(teamId, actor, {
        key: targetingFlagKey(suffix),
        name: `Targeting flag for survey ${surveyName}`,
        filters,
        active,
      })
      return flag.id
    },
    async setFilters(teamId: number, actor: FlagActor, id: number, filters: unknown): Promise<void> {
      await deps.flags.update(teamId, actor, id, { filters })
    },
    /** Sets `active` when it differs (the flag service records nothing for an unchanged flag). */
    async setActive(teamId: number, actor: FlagActor, id: number | null, active: boolean): Promise<void> {
      if (id === null) return
      const row = await deps.flagRows.get(teamId, id)
      if (!row || row.deleted === 1 || (row.active === 1) === active) return
      await deps.flags.update(teamId, actor, id, { active })
    },
    async remove(teamId: number, actor: FlagActor, id: number | null): Promise<void> {
      if (id === null) return
      const row = await deps.flagRows.get(teamId, id)
      if (!row || row.deleted === 1) return
      await deps.flags.update(teamId, actor, id, { deleted: true, active: false })
    },
  }
}
export type SurveyFlags = ReturnType<typeof createSurveyFlags>
