// Surveys: create and update with PostHog's validation and save hooks, the flags each survey keeps, lifecycle
// (draft → running → stopped, archived), deletion, and the record shapes the API answers with.
import crypto from 'node:crypto'
import type { ActivityStore } from '../activity/store.js'
import { NotFound, ValidationError } from '../http/errors.js'
import type { UserStore } from '../users/store.js'
import { createInputCheck } from './input.js'
import { apiTime, iterations, samplingSchedule } from './schedule.js'
import type { MinimalFlag, PublicSurvey, SurveyInput, SurveyRecord, SurveyWritten } from './schemas.js'
import type { SurveyRow, SurveyStore } from './store.js'
import {
  createSurveyFlags,
  type FlagActor,
  internalTargetingFilters,
  minimalFlag,
  SAMPLING_FILTERS,
  type SurveyFlags,
} from './targeting.js'
import { actionIdsOf } from './validation.js'

export interface SurveyActor extends FlagActor {
  /** The key's scopes; null for a logged-in session (no scope limits it). */
  scopes: string[] | null
}

type ActionInfo = { id: number; name: string; steps: unknown }

export interface SurveyDeps {
  surveys: SurveyStore
  flags: Parameters<typeof createSurveyFlags>[0]
  users: Pick<UserStore, 'get'>
  activity: Pick<ActivityStore, 'log'>
  insightExists: (teamId: number, id: number) => Promise<boolean>
  actions: (teamId: number, ids: number[]) => Promise<ActionInfo[]>
  canWhiteLabel: (organizationId: string) => Promise<boolean>
  organizationOf: (teamId: number) => Promise<string>
  /** Called after every write, so the public survey list and remote config are fresh in this process. */
  onChange?: (teamId: number) => void
  clock: () => Date
}

const parseJson = <T>(text: string | null, fallback: T): T => (text === null ? fallback : (JSON.parse(text) as T))

/** Every question gets an id (a UUID) if it has none. */
function withQuestionIds(questions: Record<string, unknown>[] | null): Record<string, unknown>[] | null {
  return questions?.map((q) => (q.id ? q : { ...q, id: crypto.randomUUID() })) ?? null
}

export const isRunning = (row: Pick<SurveyRow, 'start_date' | 'end_date' | 'archived'>) =>
  row.start_date !== null && row.end_date === null && row.archived === 0

const FIELDS_LOGGED = [
  'name',
  'description',
  'type',
  'schedule',
  'linked_flag_id',
  'linked_insight_id',
  'targeting_flag_id',
  'questions',
  'conditions',
  'appearance',
  'start_date',
  'end_date',
  'archived',
  'responses_limit',
  'iteration_count',
  'iteration_frequency_days',
  'response_sampling_start_date',
  'response_sampling_interval_type',
  'response_sampling_interval',
  'response_sampling_limit',
  'enable_partial_responses',
  'enable_iframe_embedding',
  'base_language',
  'translations',
  'form_content',
] as const
const JSON_FIELDS = new Set(['questions', 'conditions', 'appearance', 'translations', 'form_content'])
const BOOLEAN_FIELDS = new Set(['archived', 'enable_partial_responses', 'enable_iframe_embedding'])

function loggedValue(field: string, row: SurveyRow): unknown {
  const value = row[field as keyof SurveyRow]
  if (JSON_FIELDS.has(field)) return parseJson(value as string | null, null)
  if (BOOLEAN_FIELDS.has(field)) return value === 1
  if (field.endsWith('_date') && typeof value === 'string') return apiTime(value)
  return value
}

export function createSurveyService(deps: SurveyDeps) {
  const flags: SurveyFlags = createSurveyFlags(deps.flags)
  const validate = createInputCheck({ ...deps, flags })

  async function load(teamId: number, id: string): Promise<SurveyRow> {
    const row = /^[0-9a-f-]{36}$/i.test(id) ? await deps.surveys.get(teamId, id.toLowerCase()) : undefined
    if (!row) throw new NotFound()
    return row
  }

  async function userBasic(id: number | null) {
    if (id === null) return null
    const user = await deps.users.get(id)
    if (!user) return null
    return {
      id: user.id,
      uuid: user.uuid,
      distinct_id: user.uuid,
      first_name: user.first_name,
      last_name: user.last_name,
      email: user.email,
      is_email_verified: user.is_email_verified === 1,
    }
  }

  /** Conditions as read: `actions.values` replaced by the linked actions themselves. */
  async function conditionsOf(row: SurveyRow, full: boolean): Promise<unknown> {
    const conditions = parseJson<Record<string, unknown> | null>(row.conditions, null)
    const ids = parseJson<number[]>(row.action_ids, [])
    if (ids.length === 0) return conditions
    const actions = await deps.actions(row.team_id, ids)
    if (actions.length === 0) return conditions
    const values = actions.map((a) => (full ? a : { id: a.id, name: a.name, steps: a.steps }))
    return { ...(conditions ?? {}), actions: { values } }
  }

  async function written(row: SurveyRow): Promise<SurveyWritten> {
    const [linked, targeting, internal, createdBy, conditions] = await Promise.all([
      flags.get(row.team_id, row.linked_flag_id),
      flags.get(row.team_id, row.targeting_flag_id),
      flags.get(row.team_id, row.internal_targeting_flag_id),
      userBasic(row.created_by),
      conditionsOf(row, true),
    ])
    return {
      id: row.id,
      name: row.name,
      description: row.description,
      type: row.type,
      schedule: row.schedule,
      linked_flag: minimalFlag(linked),
      linked_flag_id: row.linked_flag_id,
      linked_insight_id: row.linked_insight_id,
      targeting_flag: minimalFlag(targeting),
      internal_targeting_flag: minimalFlag(internal),
      questions: parseJson(row.questions, null),
      conditions,
      appearance: parseJson(row.appearance, null),
      created_at: apiTime(row.created_at) as string,
      created_by: createdBy,
      start_date: apiTime(row.start_date),
      end_date: apiTime(row.end_date),
      archived: row.archived === 1,
      responses_limit: row.responses_limit,
      iteration_count: row.iteration_count,
      iteration_frequency_days: row.iteration_frequency_days,
      iteration_start_dates: parseJson(row.iteration_start_dates, null),
      current_iteration: row.current_iteration,
      current_iteration_start_date: apiTime(row.current_iteration_start_date),
      response_sampling_start_date: apiTime(row.response_sampling_start_date),
      response_sampling_interval_type: row.response_sampling_interval_type,
      response_sampling_interval: row.response_sampling_interval,
      response_sampling_limit: row.response_sampling_limit,
      response_sampling_daily_limits: row.response_sampling_daily_limits,
      enable_partial_responses: row.enable_partial_responses === 1,
      enable_iframe_embedding: row.enable_iframe_embedding === 1,
      base_language: row.base_language,
      translations: parseJson(row.translations, null),
      form_content: parseJson(row.form_content, null),
    }
  }

  async function record(row: SurveyRow): Promise<SurveyRecord> {
    const base = await written(row)
    const sampling = await flags.get(row.team_id, row.internal_response_sampling_flag_id)
    const keyOf = (flag: MinimalFlag) => flag?.key ?? null
    return {
      ...base,
      feature_flag_keys: [
        { key: 'linked_flag_key', value: keyOf(base.linked_flag) },
        { key: 'targeting_flag_key', value: keyOf(base.targeting_flag) },
        { key: 'internal_targeting_flag_key', value: keyOf(base.internal_targeting_flag) },
        { key: 'internal_response_sampling_flag_key', value: keyOf(minimalFlag(sampling)) },
      ],
      user_access_level: 'editor',
      search_match_type: null,
    }
  }

  async function log(teamId: number, actor: FlagActor, row: SurveyRow, activity: string, changes: unknown[] = []) {
    await deps.activity.log({
      organizationId: actor.organizationId,
      teamId,
      userId: actor.userId,
      scope: 'Survey',
      itemId: row.id,
      activity,
      detail: { id: row.id, changes, merge: null, trigger: null, name: row.name, short_id: null, type: null },
      createdAt: deps.clock().toISOString(),
    })
  }

  /** The derived fields of PostHog's model save: question ids, iterations, the sampling schedule. */
  function withSaveHooks(row: SurveyRow): SurveyRow {
    const questions = withQuestionIds(parseJson<Record<string, unknown>[] | null>(row.questions, null))
    const iteration = iterations(row)
    return {
      ...row,
      questions: questions === null ? null : JSON.stringify(questions),
      iteration_start_dates:
        iteration.iteration_start_dates === null ? null : JSON.stringify(iteration.iteration_start_dates),
      current_iteration: iteration.current_iteration,
      current_iteration_start_date: iteration.current_iteration_start_date
        ? new Date(iteration.current_iteration_start_date).toISOString()
        : null,
      response_sampling_daily_limits: samplingSchedule(row),
    }
  }

  /** Keeps the internal flags in line with the survey: filters, existence, and `active` = running. */
  async function syncFlags(actor: FlagActor, row: SurveyRow): Promise<SurveyRow> {
    const running = isRunning(row)
    const conditions = parseJson<Record<string, unknown> | null>(row.conditions, null)
    const wait = conditions?.seenSurveyWaitPeriodInDays
    const filters = internalTargetingFilters({
      id: row.id,
      iteration_count: row.iteration_count,
      current_iteration: row.current_iteration,
      waitPeriodDays: typeof wait === 'number' ? wait : null,
    })
    const patch: Partial<SurveyRow> = {}
    const internal = await flags.get(row.team_id, row.internal_targeting_flag_id)
    if (!internal || internal.deleted === 1) {
      patch.internal_targeting_flag_id = await flags.create(row.team_id, actor, filters, row.name, running, '-custom')
    } else {
      if (internal.filters !== JSON.stringify(filters)) await flags.setFilters(row.team_id, actor, internal.id, filters)
      await flags.setActive(row.team_id, actor, internal.id, running)
    }
    if (row.response_sampling_daily_limits !== null && row.internal_response_sampling_flag_id === null) {
      patch.internal_response_sampling_flag_id = await flags.create(
        row.team_id,
        actor,
        SAMPLING_FILTERS,
        row.name,
        running,
        '-sampling',
      )
    } else {
      await flags.setActive(row.team_id, actor, row.internal_response_sampling_flag_id, running)
    }
    await flags.setActive(row.team_id, actor, row.targeting_flag_id, running)
    if (Object.keys(patch).length === 0) return row
    return deps.surveys.update(row.team_id, row.id, patch)
  }

  function changed(teamId: number) {
    deps.onChange?.(teamId)
  }

  return {
    record,
    written,
    load,

    async list(teamId: number, filter: Parameters<SurveyStore['list']>[1]) {
      const { total, rows } = await deps.surveys.list(teamId, filter)
      return { count: total, results: await Promise.all(rows.map(record)) }
    },

    async get(teamId: number, id: string): Promise<SurveyRecord> {
      return record(await load(teamId, id))
    },

    async create(teamId: number, actor: SurveyActor, input: SurveyInput): Promise<SurveyWritten> {
      if (input.name === undefined) throw new ValidationError('This field is required.', 'name', 'required')
      if (input.type === undefined) throw new ValidationError('This field is required.', 'type', 'required')
      const v = await validate(teamId, actor, input, null)
      const now = deps.clock().toISOString()
      const id = crypto.randomUUID()
      let targetingFlagId = input.targeting_flag_id ?? null
      const running = v.dates.start_date !== null && v.dates.end_date === null && input.archived !== true
      if (input.targeting_flag_filters) {
        targetingFlagId = await flags.create(teamId, actor, input.targeting_flag_filters, input.name, running)
      }
      const conditions = v.conditions ?? null
      const row = withSaveHooks({
        id,
        team_id: teamId,
        name: input.name,
        description: input.description ?? '',
        type: input.type,
        schedule: v.schedule ?? 'once',
        linked_flag_id: input.linked_flag_id ?? null,
        linked_insight_id: input.linked_insight_id ?? null,
        targeting_flag_id: targetingFlagId,
        internal_targeting_flag_id: null,
        internal_response_sampling_flag_id: null,
        questions: v.questions ? JSON.stringify(v.questions) : null,
        conditions: conditions ? JSON.stringify(conditions) : null,
        appearance: v.appearance ? JSON.stringify(v.appearance) : null,
        created_at: now,
        created_by: actor.userId,
        updated_at: now,
        start_date: v.dates.start_date,
        end_date: v.dates.end_date,
        archived: input.archived ? 1 : 0,
        responses_limit: input.responses_limit ?? null,
        iteration_count: input.iteration_count ?? null,
        iteration_frequency_days: input.iteration_frequency_days ?? null,
        iteration_start_dates: null,
        current_iteration: input.current_iteration ?? null,
        current_iteration_start_date: v.dates.current_iteration_start_date,
        response_sampling_start_date: v.dates.response_sampling_start_date,
        response_sampling_interval_type: input.response_sampling_interval_type ?? 'week',
        response_sampling_interval: input.response_sampling_interval ?? null,
        response_sampling_limit: input.response_sampling_limit ?? null,
        response_sampling_daily_limits: null,
        enable_partial_responses: input.enable_partial_responses ? 1 : 0,
        enable_iframe_embedding: input.enable_iframe_embedding ? 1 : 0,
        headline_summary: null,
        headline_response_count: null,
        question_summaries: null,
        base_language: v.baseLanguage,
        translations: v.translations ? JSON.stringify(v.translations) : null,
        form_content: input.form_content === undefined ? null : JSON.stringify(input.form_content),
        action_ids: JSON.stringify(actionIdsOf(conditions)),
      })
      let saved = await deps.surveys.insert(row)
      saved = await syncFlags(actor, saved)
      await log(teamId, actor, saved, 'created')
      changed(teamId)
      return written(saved)
    },

    async update(teamId: number, actor: SurveyActor, id: string, input: SurveyInput): Promise<SurveyWritten> {
      const before = await load(teamId, id)
      const v = await validate(teamId, actor, input, before)
      const changes: unknown[] = []
      const patch: Partial<SurveyRow> = {}

      if (input.remove_targeting_flag) {
        const flag = await flags.get(teamId, before.targeting_flag_id)
        if (flag && flag.deleted === 0) {
          changes.push({ type: 'Survey', action: 'deleted', field: 'targeting_flag', before: minimalFlag(flag) })
          await flags.remove(teamId, actor, flag.id)
        }
        patch.targeting_flag_id = null
      }
      if (input.targeting_flag_id !== undefined && input.targeting_flag_id !== null) {
        patch.targeting_flag_id = input.targeting_flag_id
      }
      if (input.targeting_flag_filters) {
        const currentId = patch.targeting_flag_id !== undefined ? patch.targeting_flag_id : before.targeting_flag_id
        const current = await flags.get(teamId, currentId)
        const incoming = input.targeting_flag_filters as Record<string, unknown>
        if (current && current.deleted === 0) {
          const existing = JSON.parse(current.filters) as Record<string, unknown>
          changes.push({
            type: 'Survey',
            action: 'changed',
            field: 'targeting_flag_filters',
            before: existing,
            after: incoming,
          })
          await flags.setFilters(teamId, actor, current.id, { ...existing, ...incoming })
        } else {
          const name = input.name ?? before.name
          patch.targeting_flag_id = await flags.create(teamId, actor, incoming, name, before.start_date !== null)
          changes.push({ type: 'Survey', action: 'created', field: 'targeting_flag_filters', after: incoming })
        }
      }
      const iterationCount = input.iteration_count
      if (
        before.current_iteration !== null &&
        iterationCount !== undefined &&
        iterationCount !== null &&
        before.current_iteration > iterationCount &&
        iterationCount > 0
      ) {
        throw new ValidationError(
          `Cannot change survey recurrence to ${iterationCount}, should be at least ${before.current_iteration}`,
        )
      }

      if (input.name !== undefined) patch.name = input.name
      if (input.description !== undefined) patch.description = input.description
      if (input.type !== undefined) patch.type = input.type
      if (v.schedule !== undefined) patch.schedule = v.schedule
      if (input.linked_flag_id !== undefined) patch.linked_flag_id = input.linked_flag_id
      if (input.linked_insight_id !== undefined) patch.linked_insight_id = input.linked_insight_id
      if (v.questions !== undefined) patch.questions = v.questions === null ? null : JSON.stringify(v.questions)
      if (v.conditions !== undefined) {
        patch.conditions = v.conditions === null ? null : JSON.stringify(v.conditions)
        patch.action_ids = JSON.stringify(actionIdsOf(v.conditions))
      }
      if (v.appearance !== undefined) patch.appearance = v.appearance === null ? null : JSON.stringify(v.appearance)
      if (input.start_date !== undefined) patch.start_date = v.dates.start_date
      if (input.end_date !== undefined) patch.end_date = v.dates.end_date
      if (input.archived !== undefined) patch.archived = input.archived ? 1 : 0
      if (input.responses_limit !== undefined) patch.responses_limit = input.responses_limit
      if (iterationCount !== undefined && iterationCount !== null) {
        patch.iteration_count = iterationCount
        patch.iteration_frequency_days = input.iteration_frequency_days ?? null
      } else if (input.iteration_frequency_days !== undefined) {
        patch.iteration_frequency_days = input.iteration_frequency_days
      }
      if (input.current_iteration !== undefined) patch.current_iteration = input.current_iteration
      if (input.current_iteration_start_date !== undefined) {
        patch.current_iteration_start_date = v.dates.current_iteration_start_date
      }
      if (input.response_sampling_start_date !== undefined) {
        patch.response_sampling_start_date = v.dates.response_sampling_start_date
      }
      if (input.response_sampling_interval_type !== undefined) {
        patch.response_sampling_interval_type = input.response_sampling_interval_type
      }
      if (input.response_sampling_interval !== undefined) {
        patch.response_sampling_interval = input.response_sampling_interval
      }
      if (input.response_sampling_limit !== undefined) patch.response_sampling_limit = input.response_sampling_limit
      if (input.enable_partial_responses !== undefined) {
        patch.enable_partial_responses = input.enable_partial_responses ? 1 : 0
      }
      if (input.enable_iframe_embedding !== undefined) {
        patch.enable_iframe_embedding = input.enable_iframe_embedding ? 1 : 0
      }
      if (input.base_language !== undefined) patch.base_language = v.baseLanguage
      if (v.translations !== undefined) {
        patch.translations = v.translations === null ? null : JSON.stringify(v.translations)
      }
      if (input.form_content !== undefined) patch.form_content = JSON.stringify(input.form_content)

      const merged = withSaveHooks({ ...before, ...patch, updated_at: deps.clock().toISOString() })
      const { id: _id, team_id: _team, ...rest } = merged
      let saved = await deps.surveys.update(teamId, before.id, rest)
      saved = await syncFlags(actor, saved)
      for (const field of FIELDS_LOGGED) {
        const a = loggedValue(field, before)
        const b = loggedValue(field, saved)
        if (JSON.stringify(a) !== JSON.stringify(b)) {
          changes.push({ type: 'Survey', action: 'changed', field, before: a, after: b })
        }
      }
      await log(teamId, actor, saved, 'updated', changes)
      changed(teamId)
      return written(saved)
    },

    async remove(teamId: number, actor: SurveyActor, id: string): Promise<void> {
      const row = await load(teamId, id)
      await flags.remove(teamId, actor, row.targeting_flag_id)
      await flags.remove(teamId, actor, row.internal_targeting_flag_id)
      await flags.remove(teamId, actor, row.internal_response_sampling_flag_id)
      await log(teamId, actor, row, 'deleted')
      await deps.surveys.delete(teamId, row.id)
      changed(teamId)
    },

    /** `launch/`: start now (a no-op when started already). */
    async launch(teamId: number, actor: SurveyActor, id: string): Promise<SurveyRecord> {
      const row = await load(teamId, id)
      if (row.archived === 1) throw new ValidationError('Cannot launch an archived survey. Unarchive it first.')
      const now = deps.clock()
      if (row.end_date !== null && new Date(row.end_date) < now) {
        throw new ValidationError('Cannot launch a survey with end_date in the past. Extend the end_date first.')
      }
      if (row.start_date !== null) return record(row)
      let saved = withSaveHooks({ ...row, start_date: now.toISOString(), updated_at: now.toISOString() })
      const { id: _id, team_id: _team, ...rest } = saved
      saved = await syncFlags(actor, await deps.surveys.update(teamId, row.id, rest))
      await log(teamId, actor, saved, 'launched', [
        { type: 'Survey', action: 'changed', field: 'start_date', before: null, after: apiTime(saved.start_date) },
      ])
      changed(teamId)
      return record(saved)
    },

    /** `stop/`: end now (a no-op when ended already). */
    async stop(teamId: number, actor: SurveyActor, id: string): Promise<SurveyRecord> {
      const row = await load(teamId, id)
      if (row.archived === 1) throw new ValidationError('Cannot stop an archived survey. Unarchive it first if needed.')
      if (row.end_date !== null) return record(row)
      const saved = await stopSurvey(actor, row)
      return record(saved ?? (await load(teamId, id)))
    },

    /** Stops every running survey that reached its response limit; true for each one this call stopped. */
    async enforceResponseLimits(counts: (teamId: number, ids: string[]) => Promise<Record<string, number>>) {
      const stopped: string[] = []
      const candidates = await deps.surveys.runningWithLimit()
      const byTeam = new Map<number, SurveyRow[]>()
      for (const row of candidates) byTeam.set(row.team_id, [...(byTeam.get(row.team_id) ?? []), row])
      for (const [teamId, rows] of byTeam) {
        const found = await counts(
          teamId,
          rows.map((r) => r.id),
        )
        for (const row of rows) {
          if ((found[row.id] ?? 0) < (row.responses_limit ?? Number.POSITIVE_INFINITY)) continue
          const system = { userId: null, organizationId: await deps.organizationOf(teamId) }
          if (await stopSurvey(system, row)) stopped.push(row.id)
        }
      }
      return stopped
    },

    /**
     * Recurring surveys: moves each to the iteration its start dates say it is in (the internal flag then asks
     * about the new iteration, so people see the survey again), and stops one whose last iteration has elapsed.
     */
    async advanceIterations(): Promise<{ advanced: string[]; stopped: string[] }> {
      const now = deps.clock()
      const advanced: string[] = []
      const stopped: string[] = []
      for (const row of await deps.surveys.runningWithIterations()) {
        const dates = parseJson<string[] | null>(row.iteration_start_dates, null)
        if (!dates || dates.length === 0) continue
        const system = { userId: null, organizationId: await deps.organizationOf(row.team_id) }
        const lastEnds = new Date(dates[dates.length - 1]).getTime() + (row.iteration_frequency_days ?? 0) * 86_400_000
        if (now.getTime() >= lastEnds) {
          if (await stopSurvey(system, row)) stopped.push(row.id)
          continue
        }
        const reached = dates.filter((d) => new Date(d).getTime() <= now.getTime()).length
        if (reached <= (row.current_iteration ?? 0)) continue
        const start = new Date(dates[reached - 1]).toISOString()
        const moved = await deps.surveys.advanceIteration(
          row.team_id,
          row.id,
          row.current_iteration,
          reached,
          start,
          now.toISOString(),
        )
        if (!moved) continue
        await syncFlags(system, moved)
        await log(row.team_id, system, moved, 'updated', [
          {
            type: 'Survey',
            action: 'changed',
            field: 'current_iteration',
            before: row.current_iteration,
            after: reached,
          },
        ])
        changed(row.team_id)
        advanced.push(row.id)
      }
      return { advanced, stopped }
    },

    /** The SDK's view of a project's surveys (not archived). */
    async publicSurveys(
      teamId: number,
      limit: number,
      flagKeys: (teamId: number) => Promise<Map<number, string>>,
    ): Promise<PublicSurvey[]> {
      const [rows, keys] = await Promise.all([deps.surveys.publicForTeam(teamId, limit), flagKeys(teamId)])
      const keyOf = (id: number | null) => (id === null ? null : (keys.get(id) ?? null))
      return Promise.all(
        rows.map(async (row) => ({
          id: row.id,
          name: row.name,
          type: row.type,
          linked_flag_key: keyOf(row.linked_flag_id),
          targeting_flag_key: keyOf(row.targeting_flag_id),
          internal_targeting_flag_key: keyOf(row.internal_targeting_flag_id),
          questions: parseJson(row.questions, []),
          conditions: await conditionsOf(row, false),
          appearance: parseJson(row.appearance, null),
          start_date: apiTime(row.start_date),
          end_date: apiTime(row.end_date),
          current_iteration: row.current_iteration,
          current_iteration_start_date: apiTime(row.current_iteration_start_date),
          schedule: row.schedule,
          enable_partial_responses: row.enable_partial_responses === 1,
        })),
      )
    },

    log,
  }

  /** Sets end_date to now only if it is still open: of several processes, one stops it and logs it. */
  async function stopSurvey(actor: FlagActor, row: SurveyRow): Promise<SurveyRow | undefined> {
    const now = deps.clock().toISOString()
    const saved = await deps.surveys.closeIfOpen(row.team_id, row.id, now)
    if (!saved) return undefined
    const synced = await syncFlags(actor, saved)
    await log(row.team_id, actor, synced, 'stopped', [
      { type: 'Survey', action: 'changed', field: 'end_date', before: null, after: apiTime(now) },
    ])
    changed(row.team_id)
    return synced
  }
}
export type SurveyService = ReturnType<typeof createSurveyService>
