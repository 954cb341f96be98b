// The checks of a survey create or update, in the order of PostHog's serializer: each field's own validator (with
// its field as `attr`), then the cross-field rules of `validate()` (no attr, or the key of the dict it raises).
import { PermissionDenied, ValidationError } from '../http/errors.js'
import { hasScope } from '../http/scopes.js'
import type { SurveyInput } from './schemas.js'
import type { SurveyActor, SurveyDeps } from './service.js'
import type { SurveyRow } from './store.js'
import type { SurveyFlags } from './targeting.js'
import {
  actionIdsOf,
  checkExternalSurvey,
  checkShuffleWithBranching,
  checkTargetingFilters,
  validateAppearance,
  validateBaseLanguage,
  validateConditions,
  validateQuestions,
  validateSchedule,
  validateTranslations,
} from './validation.js'

const parseJson = <T>(text: string | null, fallback: T): T => (text === null ? fallback : (JSON.parse(text) as T))
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

const DATETIME_FORMAT_ERROR =
  'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].'

/** A request timestamp as stored (ISO, UTC); a value without offset is UTC. */
export function parseTimestamp(value: string, attr: string): string {
  const text = value.trim()
  const iso = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?(Z|[+-]\d{2}(:?\d{2})?)?$/i.exec(text)
  if (!iso) throw new ValidationError(DATETIME_FORMAT_ERROR, attr)
  let normalized = text.replace(' ', 'T')
  if (iso[1] && !iso[4]) normalized += 'Z'
  const date = new Date(normalized)
  if (Number.isNaN(date.getTime())) throw new ValidationError(DATETIME_FORMAT_ERROR, attr)
  return date.toISOString()
}

const optionalTimestamp = (value: string | null | undefined, attr: string) =>
  value === null || value === undefined ? (value ?? null) : parseTimestamp(value, attr)

export function createInputCheck(
  deps: Pick<SurveyDeps, 'surveys' | 'insightExists' | 'actions' | 'canWhiteLabel' | 'clock'> & { flags: SurveyFlags },
) {
  const { flags } = deps
  function requireFlagWrite(actor: SurveyActor): void {
    if (actor.scopes !== null && !hasScope(actor.scopes, 'feature_flag:write')) {
      throw new PermissionDenied("API key missing required scope 'feature_flag:write'")
    }
  }

  /** Field checks, then the cross-field rules of PostHog's `validate()`, in its order. */
  async function validate(teamId: number, actor: SurveyActor, input: SurveyInput, before: SurveyRow | null) {
    const baseLanguage =
      input.base_language !== undefined ? validateBaseLanguage(input.base_language) : (before?.base_language ?? 'en')
    const existingQuestions = parseJson<unknown[]>(before?.questions ?? null, [])
    const schedule = input.schedule !== undefined ? validateSchedule(input.schedule) : undefined
    const questions =
      input.questions !== undefined ? validateQuestions(input.questions, baseLanguage, existingQuestions) : undefined
    const conditions = input.conditions !== undefined ? validateConditions(input.conditions) : undefined
    const appearance =
      input.appearance !== undefined
        ? validateAppearance(input.appearance, await deps.canWhiteLabel(actor.organizationId))
        : undefined
    const translations =
      input.translations !== undefined
        ? validateTranslations(
            input.translations,
            baseLanguage,
            parseJson<Record<string, unknown>>(before?.translations ?? null, {}),
          )
        : undefined
    const dates = {
      start_date: optionalTimestamp(input.start_date, 'start_date'),
      end_date: optionalTimestamp(input.end_date, 'end_date'),
      current_iteration_start_date: optionalTimestamp(
        input.current_iteration_start_date,
        'current_iteration_start_date',
      ),
      response_sampling_start_date: optionalTimestamp(
        input.response_sampling_start_date,
        'response_sampling_start_date',
      ),
    }

    const actionIds = conditions ? actionIdsOf(conditions) : []
    if (actionIds.length > 0) {
      for (const action of await deps.actions(teamId, actionIds)) {
        const steps = Array.isArray(action.steps) ? (action.steps as { properties?: unknown }[]) : []
        if (steps.some((step) => Array.isArray(step?.properties) && step.properties.length > 0)) {
          throw new ValidationError(
            'Survey cannot be activated by an Action with property filters defined on it.',
            'conditions',
          )
        }
      }
    }

    let linkedFlag: Awaited<ReturnType<SurveyFlags['get']>>
    if (input.linked_flag_id) {
      linkedFlag = await flags.get(teamId, input.linked_flag_id)
      if (!linkedFlag || linkedFlag.deleted === 1) throw new ValidationError('Feature Flag with this ID does not exist')
    }
    if (input.targeting_flag_id) {
      const flag = await flags.get(teamId, input.targeting_flag_id)
      if (!flag || flag.deleted === 1) throw new ValidationError('Targeting Feature Flag with this ID does not exist')
    }
    if (input.linked_insight_id && !(await deps.insightExists(teamId, input.linked_insight_id))) {
      throw new ValidationError('Insight with this ID does not exist')
    }
    const variant = isObject(conditions) ? conditions.linkedFlagVariant : undefined
    if (variant && linkedFlag && variant !== 'any') {
      const filters = JSON.parse(linkedFlag.filters) as { multivariate?: { variants?: { key: string }[] } }
      const available = (filters.multivariate?.variants ?? []).map((v) => v.key)
      if (!available.includes(variant as string)) {
        throw new ValidationError(
          available.length > 0
            ? `Feature flag variant '${variant}' does not exist. Available variants: ${available.join(', ')}`
            : `Feature flag variant '${variant}' specified but the linked feature flag has no variants`,
        )
      }
    } else if (variant && !input.linked_flag_id) {
      throw new ValidationError('linkedFlagVariant can only be used when a linked_flag_id is specified')
    }

    if (!before && (await deps.surveys.nameTaken(teamId, input.name as string, null))) {
      throw new ValidationError('There is already a survey with this name.', null, 'unique')
    }
    if (before && input.name !== undefined && input.name !== before.name) {
      if (await deps.surveys.nameTaken(teamId, input.name, before.id)) {
        throw new ValidationError('There is already another survey with this name.', null, 'unique')
      }
    }
    if (input.targeting_flag_filters) checkTargetingFilters(input.targeting_flag_filters)

    if (dates.response_sampling_start_date) {
      const now = deps.clock()
      const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()))
      if (new Date(dates.response_sampling_start_date) < today) {
        const got = dates.response_sampling_start_date.replace('T', ' ').replace(/\.000Z$|Z$/, '+00:00')
        const todayText = today.toISOString().replace('T', ' ').replace('.000Z', '+00:00')
        throw new ValidationError(
          `Response sampling start date must be today or a future date in UTC. Got ${got} when current time is ${todayText}`,
          'response_sampling_start_date',
        )
      }
    }
    const interval = input.response_sampling_interval
    if (interval !== undefined && interval !== null && interval <= 0) {
      throw new ValidationError('Response sampling interval must be greater than 0.', 'response_sampling_interval')
    }
    const samplingLimit = input.response_sampling_limit ?? 0
    if (samplingLimit > 0 && (interval ?? 0) > 0 && !dates.response_sampling_start_date) {
      throw new ValidationError(
        'Response sampling start date should be set if response_sampling_start_date is not zero.',
        'response_sampling_start_date',
      )
    }
    const effectiveAppearance = {
      ...parseJson<Record<string, unknown>>(before?.appearance ?? null, {}),
      ...(appearance ?? {}),
    }
    const effectiveQuestions =
      questions !== undefined ? questions : parseJson<Record<string, unknown>[] | null>(before?.questions ?? null, [])
    checkShuffleWithBranching(effectiveAppearance, effectiveQuestions)
    if (input.type === 'external_survey') {
      checkExternalSurvey({
        linked_flag_id: input.linked_flag_id,
        targeting_flag_filters: input.targeting_flag_filters,
        conditions: conditions ?? null,
        appearance: appearance ?? null,
      })
    }
    if (input.base_language && input.translations === undefined && before) {
      const existing = parseJson<Record<string, unknown>>(before.translations, {})
      if (Object.keys(existing).some((k) => k.trim().toLowerCase().replace(/_/g, '-') === baseLanguage)) {
        throw new ValidationError(
          `'${input.base_language}' already exists as a translation key on this survey. Remove the translation first, or pick a different base language.`,
          'base_language',
        )
      }
    }
    if (input.targeting_flag_filters || input.targeting_flag_id || input.remove_targeting_flag) {
      requireFlagWrite(actor)
    }
    return { baseLanguage, schedule, questions, conditions, appearance, translations, dates }
  }
  return validate
}
export type CheckedInput = Awaited<ReturnType<ReturnType<typeof createInputCheck>>>
