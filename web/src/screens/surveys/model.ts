// Surveys as the API gives and takes them (PostHog's shapes), the editor's draft of one, and the rules the editor
// checks before sending it (the server checks them again with PostHog's messages).
import { cleanFilters, type PropertyFilter } from '../../components/PropertyFiltersEditor'

export type QuestionType = 'open' | 'link' | 'rating' | 'single_choice' | 'multiple_choice'

export interface Question {
  id?: string
  type: QuestionType
  question: string
  description?: string
  optional?: boolean
  buttonText?: string
  link?: string
  display?: 'number' | 'emoji'
  scale?: number
  lowerBoundLabel?: string
  upperBoundLabel?: string
  isNpsQuestion?: boolean
  choices?: string[]
  hasOpenChoice?: boolean
  shuffleOptions?: boolean
  [extra: string]: unknown
}

export interface Appearance {
  backgroundColor?: string
  borderColor?: string
  textColor?: string
  submitButtonColor?: string
  submitButtonTextColor?: string
  submitButtonText?: string
  ratingButtonColor?: string
  ratingButtonActiveColor?: string
  placeholder?: string
  displayThankYouMessage?: boolean
  thankYouMessageHeader?: string
  thankYouMessageDescription?: string
  whiteLabel?: boolean
  position?: string
  surveyPopupDelaySeconds?: number
  [extra: string]: unknown
}

export interface Conditions {
  url?: string
  urlMatchType?: string
  selector?: string
  seenSurveyWaitPeriodInDays?: number
  [extra: string]: unknown
}

export interface MinimalFlag {
  id: number
  key: string
  filters: { groups?: { properties?: PropertyFilter[]; rollout_percentage?: number | null }[] } | null
}

export interface Survey {
  id: string
  name: string
  description: string
  type: string
  schedule: string | null
  linked_flag_id: number | null
  linked_flag: MinimalFlag | null
  targeting_flag: MinimalFlag | null
  questions: Question[] | null
  conditions: Conditions | null
  appearance: Appearance | null
  created_at: string
  created_by: { first_name: string; email: string } | null
  start_date: string | null
  end_date: string | null
  archived: boolean
  responses_limit: number | null
  iteration_count: number | null
  iteration_frequency_days: number | null
  [extra: string]: unknown
}

export type Status = 'draft' | 'running' | 'complete'

export function statusOf(survey: Pick<Survey, 'start_date' | 'end_date'>): Status {
  if (!survey.start_date) return 'draft'
  if (survey.end_date) return 'complete'
  return 'running'
}

export const STATUS_LABEL: Record<Status, string> = { draft: 'Draft', running: 'Running', complete: 'Complete' }
export const STATUS_COLOR: Record<Status, string> = { draft: 'gray', running: 'green', complete: 'blue' }

export const QUESTION_TYPES: { value: QuestionType; label: string }[] = [
  { value: 'open', label: 'Freeform text' },
  { value: 'link', label: 'Link / Notification' },
  { value: 'rating', label: 'Rating' },
  { value: 'single_choice', label: 'Single choice select' },
  { value: 'multiple_choice', label: 'Multiple choice select' },
]

/** posthog-js's own defaults, which the preview draws when the survey sets nothing. */
export const DEFAULT_APPEARANCE = {
  backgroundColor: '#eeeded',
  borderColor: '#c9c6c6',
  submitButtonColor: '#000000',
  submitButtonTextColor: '#ffffff',
  ratingButtonColor: '#ffffff',
  ratingButtonActiveColor: '#000000',
  placeholder: 'Start typing...',
  thankYouMessageHeader: 'Thank you for your feedback!',
  position: 'right',
}

/** A fresh question of a type, carrying over the text (and id) of the one it replaces. */
export function questionOfType(type: QuestionType, from?: Question): Question {
  const base: Question = {
    ...(from?.id ? { id: from.id } : {}),
    type,
    question: from?.question ?? '',
    description: from?.description ?? '',
    optional: from?.optional ?? false,
  }
  switch (type) {
    case 'open':
      return base
    case 'link':
      return { ...base, link: '', buttonText: 'Learn more' }
    case 'rating':
      return {
        ...base,
        display: 'number',
        scale: 10,
        isNpsQuestion: true,
        lowerBoundLabel: 'Unlikely',
        upperBoundLabel: 'Very likely',
      }
    case 'single_choice':
    case 'multiple_choice':
      return { ...base, choices: from?.choices?.length ? from.choices : ['Yes', 'No'], hasOpenChoice: false }
  }
}

/** The scales posthog-js draws for each rating display. */
export const SCALES = {
  number: [
    { value: '5', label: '1 – 5' },
    { value: '7', label: '1 – 7' },
    { value: '10', label: '0 – 10 (NPS)' },
  ],
  emoji: [
    { value: '3', label: '3 faces' },
    { value: '5', label: '5 faces' },
  ],
} as const

/** The values a rating question takes: 0–10 for the NPS scale, else 1 to the scale. */
export function ratingValues(scale: number): number[] {
  if (scale === 10) return Array.from({ length: 11 }, (_, i) => i)
  return Array.from({ length: scale }, (_, i) => i + 1)
}

export interface Draft {
  name: string
  description: string
  type: 'popover' | 'api'
  questions: Question[]
  appearance: Appearance
  conditions: Conditions
  linked_flag_id: number | null
  targetingProperties: PropertyFilter[]
  rollout: number
  hadTargeting: boolean
  schedule: 'once' | 'recurring' | 'always'
  iteration_count: number | null
  iteration_frequency_days: number | null
  responses_limit: number | null
  start_date: string | null
  end_date: string | null
}

export const NEW_DRAFT: Draft = {
  name: '',
  description: '',
  type: 'popover',
  questions: [questionOfType('open')],
  appearance: { displayThankYouMessage: true, thankYouMessageHeader: 'Thank you for your feedback!' },
  conditions: {},
  linked_flag_id: null,
  targetingProperties: [],
  rollout: 100,
  hadTargeting: false,
  schedule: 'once',
  iteration_count: null,
  iteration_frequency_days: null,
  responses_limit: null,
  start_date: null,
  end_date: null,
}

export function draftOf(survey: Survey): Draft {
  const group = survey.targeting_flag?.filters?.groups?.[0]
  return {
    name: survey.name,
    description: survey.description ?? '',
    type: survey.type === 'api' ? 'api' : 'popover',
    questions: (survey.questions ?? []).map((q) => ({ ...q })),
    appearance: { ...(survey.appearance ?? {}) },
    conditions: { ...(survey.conditions ?? {}) },
    linked_flag_id: survey.linked_flag_id,
    targetingProperties: (group?.properties ?? []).map((p) => ({ ...p })),
    rollout: group?.rollout_percentage ?? 100,
    hadTargeting: survey.targeting_flag !== null,
    schedule: survey.schedule === 'recurring' || survey.schedule === 'always' ? survey.schedule : 'once',
    iteration_count: survey.iteration_count,
    iteration_frequency_days: survey.iteration_frequency_days,
    responses_limit: survey.responses_limit,
    start_date: survey.start_date,
    end_date: survey.end_date,
  }
}

const blank = (s: string | undefined) => !s || s.trim() === ''

/** What stops the draft from saving, by field (`name`, `q0.question`, `q1.choices`, …). */
export function problems(draft: Draft): Record<string, string> {
  const out: Record<string, string> = {}
  if (blank(draft.name)) out.name = 'A survey needs a name.'
  if (draft.questions.length === 0) out.questions = 'Add at least one question.'
  draft.questions.forEach((q, i) => {
    if (blank(q.question)) out[`q${i}.question`] = 'Write the question.'
    if (q.type === 'link' && !/^(https:\/\/[^/?#\s]+|mailto:\S+@\S+\.\S+)/i.test(q.link ?? '')) {
      out[`q${i}.link`] = 'A link starts with https:// or mailto:.'
    }
    if (q.type === 'single_choice' || q.type === 'multiple_choice') {
      const choices = q.choices ?? []
      if (choices.length < 2) out[`q${i}.choices`] = 'Give at least two choices.'
      else if (choices.length > 20) out[`q${i}.choices`] = 'At most 20 choices.'
      else if (choices.some((c) => c.trim() === '')) out[`q${i}.choices`] = 'Every choice needs a text.'
    }
  })
  if (draft.rollout < 0 || draft.rollout > 100) out.rollout = 'Between 0 and 100.'
  if (draft.start_date && draft.end_date && draft.start_date > draft.end_date) {
    out.end_date = 'The end is before the start.'
  }
  return out
}

/** The body of POST / PATCH for a draft. */
export function bodyOf(draft: Draft): Record<string, unknown> {
  const properties = cleanFilters(draft.targetingProperties).map((f) => ({ ...f, type: 'person' }))
  const body: Record<string, unknown> = {
    name: draft.name.trim(),
    description: draft.description,
    type: draft.type,
    questions: draft.questions.map((q) => {
      const out: Question = { ...q, question: q.question.trim() }
      if (q.type === 'rating') out.isNpsQuestion = q.display !== 'emoji' && q.scale === 10
      if (q.type !== 'link') delete out.link
      return out
    }),
    appearance: draft.appearance,
    conditions: Object.fromEntries(
      Object.entries(draft.conditions).filter(([, v]) => v !== '' && v !== undefined && v !== null),
    ),
    linked_flag_id: draft.linked_flag_id,
    schedule: draft.schedule,
    iteration_count: draft.schedule === 'recurring' ? draft.iteration_count : null,
    iteration_frequency_days: draft.schedule === 'recurring' ? draft.iteration_frequency_days : null,
    responses_limit: draft.responses_limit,
    start_date: draft.start_date,
    end_date: draft.end_date,
  }
  // A targeting flag must target someone: everyone at 100% is no flag at all.
  if (properties.length > 0 || draft.rollout < 100) {
    body.targeting_flag_filters = { groups: [{ properties, rollout_percentage: draft.rollout, variant: null }] }
  } else if (draft.hadTargeting) {
    body.remove_targeting_flag = true
  }
  return body
}

/** A date-time as `<input type="datetime-local">` shows it (local time), and back to ISO. */
export function toLocalInput(iso: string | null): string {
  if (!iso) return ''
  const d = new Date(iso)
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`
}
export function fromLocalInput(value: string): string | null {
  if (!value) return null
  const d = new Date(value)
  return Number.isNaN(d.getTime()) ? null : d.toISOString()
}

/** Black or white, whichever reads on the colour (posthog-js picks the text colour the same way). */
export function contrastText(color: string | undefined): string {
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec((color ?? '').trim())?.[1]
  if (!hex) {
    const named = (color ?? '').trim().toLowerCase()
    return named === 'black' || named === 'navy' || named === 'darkblue' ? '#ffffff' : '#000000'
  }
  const full = hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex
  const [r, g, b] = [0, 2, 4].map((i) => Number.parseInt(full.slice(i, i + 2), 16))
  return r * 0.299 + g * 0.587 + b * 0.114 > 150 ? '#000000' : '#ffffff'
}

export interface SurveyStats {
  stats: Record<string, { total_count: number; unique_persons: number }>
  rates: { response_rate: number; dismissal_rate: number; unique_users_response_rate: number }
  per_question_stats?: {
    question_id: string | null
    question_index: number
    question_text: string
    question_type: string | null
    response_count: number
    distribution: Record<string, number>
    average?: number | null
  }[]
}

export interface SurveyResponse {
  uuid: string
  distinct_id: string
  submitted_at: string
  answers: { question_id: string | null; question_index: number; question_text: string; answer: unknown }[]
}

/** Net Promoter Score from a 0–10 distribution: promoters (9–10) less detractors (0–6), in percent. */
export function npsOf(distribution: Record<string, number>): number | null {
  let total = 0
  let promoters = 0
  let detractors = 0
  for (const [k, n] of Object.entries(distribution)) {
    const v = Number(k)
    if (!Number.isFinite(v)) continue
    total += n
    if (v >= 9) promoters += n
    else if (v <= 6) detractors += n
  }
  return total === 0 ? null : Math.round(((promoters - detractors) / total) * 100)
}
