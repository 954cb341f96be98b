// `duplicate_to_projects/`: a copy of a survey in each target project of the same organization, all in one
// metadata transaction — if any copy fails, none remains.
import crypto from 'node:crypto'
import type { ActivityStore } from '../activity/store.js'
import { ValidationError } from '../http/errors.js'
import type { SurveyService } from './service.js'
import type { SurveyRow, SurveyStore } from './store.js'

const pad = (n: number) => String(n).padStart(2, '0')
/** `YYYY-MM-DD HH:MM:SS` in UTC, as the copy's name carries it. */
const stamp = (d: Date) =>
  `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`

export function createSurveyDuplicator(deps: {
  surveys: Pick<SurveyStore, 'transaction' | 'nameTaken' | 'insert'>
  service: Pick<SurveyService, 'load'>
  /** The projects among `ids` that belong to the organization (and that the caller may reach). */
  projectsIn: (organizationId: string, ids: number[]) => Promise<number[]>
  activity: Pick<ActivityStore, 'log'>
  onChange?: (teamId: number) => void
  clock: () => Date
}) {
  return async function duplicate(
    teamId: number,
    actor: { userId: number | null; organizationId: string; scopedTeams: number[] | null },
    id: string,
    targets: unknown,
  ) {
    const source = await deps.service.load(teamId, id)
    if (!Array.isArray(targets) || targets.length === 0) {
      throw new ValidationError('target_team_ids must be a non-empty list of team IDs')
    }
    const notFound = () => new ValidationError("One or more target teams not found or you don't have access to them")
    if (!targets.every((t) => Number.isSafeInteger(t))) throw notFound()
    const ids = targets as number[]
    const found = await deps.projectsIn(actor.organizationId, ids)
    const allowed = found.filter((t) => actor.scopedTeams === null || actor.scopedTeams.includes(t))
    // A repeated id counts twice in the request but once in the projects found.
    if (allowed.length !== ids.length) throw notFound()

    const now = deps.clock()
    const name = `${source.name} (duplicated at ${stamp(now)})`
    const conditions = source.conditions ? (JSON.parse(source.conditions) as Record<string, unknown>) : null
    if (conditions) {
      delete conditions.linkedFlagVariant
      delete conditions.actions
      delete conditions.events
    }
    const questions = source.questions
      ? (JSON.parse(source.questions) as Record<string, unknown>[]).map(({ id: _id, ...q }) => q)
      : null

    const created: SurveyRow[] = await deps.surveys.transaction(async (tx) => {
      const rows: SurveyRow[] = []
      for (const target of [...allowed].sort((a, b) => ids.indexOf(a) - ids.indexOf(b))) {
        if (await deps.surveys.nameTaken(target, name, null, tx)) {
          throw new ValidationError('There is already a survey with this name.', null, 'unique')
        }
        const copy: SurveyRow = {
          ...emptyCopy(),
          id: crypto.randomUUID(),
          team_id: target,
          name,
          description: source.description,
          type: source.type,
          schedule: source.schedule,
          questions:
            questions === null ? null : JSON.stringify(questions.map((q) => ({ ...q, id: crypto.randomUUID() }))),
          appearance: source.appearance,
          conditions: conditions === null ? null : JSON.stringify(conditions),
          responses_limit: source.responses_limit,
          iteration_count: source.iteration_count,
          iteration_frequency_days: source.iteration_frequency_days,
          enable_partial_responses: source.enable_partial_responses,
          base_language: source.base_language,
          created_at: now.toISOString(),
          updated_at: now.toISOString(),
          created_by: actor.userId,
        }
        rows.push(await deps.surveys.insert(copy, tx))
      }
      return rows
    })
    for (const row of created) {
      await deps.activity.log({
        organizationId: actor.organizationId,
        teamId: row.team_id,
        userId: actor.userId,
        scope: 'Survey',
        itemId: row.id,
        activity: 'created',
        detail: {
          id: row.id,
          name: row.name,
          changes: [{ type: 'Survey', action: 'created', field: 'source_survey_id', after: source.id }],
          merge: null,
          trigger: null,
          short_id: null,
          type: null,
        },
        createdAt: now.toISOString(),
      })
      deps.onChange?.(row.team_id)
    }
    return {
      created_surveys: created.map((row) => ({ team_id: row.team_id, survey_id: row.id, name: row.name })),
      count: created.length,
    }
  }
}

function emptyCopy(): Omit<SurveyRow, 'id' | 'team_id' | 'name' | 'type' | 'created_at' | 'updated_at'> {
  return {
    description: '',
    schedule: 'once',
    linked_flag_id: null,
    linked_insight_id: null,
    targeting_flag_id: null,
    internal_targeting_flag_id: null,
    internal_response_sampling_flag_id: null,
    questions: null,
    conditions: null,
    appearance: null,
    created_by: null,
    start_date: null,
    end_date: null,
    archived: 0,
    responses_limit: null,
    iteration_count: null,
    iteration_frequency_days: null,
    iteration_start_dates: null,
    current_iteration: null,
    current_iteration_start_date: null,
    response_sampling_start_date: null,
    response_sampling_interval_type: 'week',
    response_sampling_interval: null,
    response_sampling_limit: null,
    response_sampling_daily_limits: null,
    enable_partial_responses: 0,
    enable_iframe_embedding: 0,
    headline_summary: null,
    headline_response_count: null,
    question_summaries: null,
    base_language: 'en',
    translations: null,
    form_content: null,
    action_ids: '[]',
  }
}
