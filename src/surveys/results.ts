// What a team reads about its surveys: stats per survey and across surveys, response counts, archived responses,
// offline summaries of the answers, and the question labels.
import { ValidationError } from '../http/errors.js'
import type { SurveyResponses, Window } from './responses.js'
import { apiTime } from './schedule.js'
import type { PerQuestionStats } from './schemas.js'
import type { SurveyService } from './service.js'
import { questionStats, shapeStats, ZERO_RATES } from './stats.js'
import type { SurveyRow, SurveyStore } from './store.js'
import { headline, type QuestionDigest, summarizeTexts, summaryMarkdown } from './summaries.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const DATE_ERROR =
  'Invalid date format. Please use ISO 8601 format with timezone info (e.g. 2024-01-01T00:00:00Z or 2024-01-01T00:00:00+00:00)'
/** Answers read for one summary: the newest ones. */
const SUMMARY_SAMPLE = 1000
const HEADLINE_SAMPLE = 100
/** Questions beyond this many get no per-question stats (each costs a query). */
const MAX_QUESTION_STATS = 50

type Question = Record<string, unknown>

export interface ResponsesQuery {
  since?: string
  until?: string
  question_id?: string
  score_gte?: number
  score_lte?: number
  exclude_archived?: string
  limit?: number
  offset?: number
}

/** Python's `datetime.fromisoformat(...)` as the stats endpoint uses it: no offset means UTC. */
export function parseIsoDate(text: string | undefined): Date | null {
  if (text === undefined || text === '') return null
  const match =
    /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}(?::\d{2}(?::\d{2}(?:\.\d{1,6})?)?)?))?(Z|[+-]\d{2}(?::?\d{2})?)?$/i.exec(
      text.trim(),
    )
  if (!match) throw new ValidationError(DATE_ERROR)
  const [, day, time = '00:00:00', zone] = match
  const clock = time.length === 2 ? `${time}:00:00` : time.length === 5 ? `${time}:00` : time
  const date = new Date(`${day}T${clock}${zone && zone.toUpperCase() !== 'Z' ? zone : 'Z'}`)
  if (Number.isNaN(date.getTime())) throw new ValidationError(DATE_ERROR)
  return date
}

const isTrue = (value: string | undefined) => value !== undefined && ['true', '1', 'True'].includes(value)

const legacyKey = (index: number) => (index === 0 ? '$survey_response' : `$survey_response_${index}`)
const keysOf = (question: Question, index: number) => ({
  byId: typeof question.id === 'string' ? `$survey_response_${question.id}` : null,
  legacy: legacyKey(index),
})

export function createSurveyResults(deps: {
  surveys: SurveyStore
  service: Pick<SurveyService, 'load' | 'log'>
  responses: SurveyResponses
  clock: () => Date
}) {
  function window(query: { date_from?: string; date_to?: string }): Window {
    const from = parseIsoDate(query.date_from)
    const to = parseIsoDate(query.date_to)
    if (from && to && from > to) throw new ValidationError('date_from must be before date_to')
    return { from, to }
  }

  /** The survey's own window bounds the requested one. */
  function clamp(requested: Window, survey: SurveyRow): Window {
    const start = new Date(survey.start_date ?? survey.created_at)
    const end = survey.end_date ? new Date(survey.end_date) : null
    const from = requested.from && requested.from > start ? requested.from : start
    const to = end && (!requested.to || end < requested.to) ? end : requested.to
    return { from, to }
  }

  const questionsOf = (row: SurveyRow): Question[] => (row.questions ? (JSON.parse(row.questions) as Question[]) : [])

  async function perQuestion(row: SurveyRow, range: Window, archived: string[] | null): Promise<PerQuestionStats[]> {
    const questions = questionsOf(row).slice(0, MAX_QUESTION_STATS)
    const out: PerQuestionStats[] = []
    for (const [index, question] of questions.entries()) {
      if (question.type === 'link') continue
      const grouped = await deps.responses.distribution(row.team_id, row.id, keysOf(question, index), range, archived)
      out.push(questionStats(question, index, grouped))
    }
    return out
  }

  /** Free-text answers of a question: open questions, or the "Other" answers of choice questions. */
  async function textAnswers(row: SurveyRow, question: Question, index: number, limit: number): Promise<unknown[]> {
    const answers = await deps.responses.answers(
      row.team_id,
      row.id,
      keysOf(question, index),
      {
        from: null,
        to: null,
      },
      null,
      limit,
    )
    if (question.type !== 'single_choice' && question.type !== 'multiple_choice') return answers
    const choices = new Set(Array.isArray(question.choices) ? (question.choices as unknown[]).map(String) : [])
    return answers.flatMap((a) => (Array.isArray(a) ? a : [a])).filter((a) => !choices.has(String(a)))
  }

  async function headlineFor(row: SurveyRow) {
    const questions = questionsOf(row)
    if (questions.length === 0) return { headline: 'No questions in survey', responses_sampled: 0, has_more: false }
    const digests: QuestionDigest[] = []
    let sampled = 0
    let hasMore = false
    for (const [index, question] of questions.entries()) {
      if (question.type === 'link') continue
      const answers = await deps.responses.answers(
        row.team_id,
        row.id,
        keysOf(question, index),
        { from: null, to: null },
        null,
        HEADLINE_SAMPLE + 1,
      )
      if (answers.length > HEADLINE_SAMPLE) hasMore = true
      const sample = answers.slice(0, HEADLINE_SAMPLE)
      sampled = Math.max(sampled, sample.length)
      const type = String(question.type)
      if (type === 'rating') {
        const numbers = sample.map(Number).filter(Number.isFinite)
        digests.push({
          type,
          average: numbers.length ? numbers.reduce((a, b) => a + b, 0) / numbers.length : null,
        })
      } else if (type === 'single_choice' || type === 'multiple_choice') {
        const counts = new Map<string, number>()
        for (const a of sample.flatMap((x) => (Array.isArray(x) ? x : [x]))) {
          counts.set(String(a), (counts.get(String(a)) ?? 0) + 1)
        }
        const top = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]
        digests.push({
          type,
          topChoice:
            top && sample.length ? { choice: top[0], share: Math.round((top[1] / sample.length) * 100) } : null,
        })
      } else {
        digests.push({ type, text: summarizeTexts(sample) })
      }
    }
    if (sampled === 0) return { headline: 'No responses yet', responses_sampled: 0, has_more: false }
    return { headline: headline(sampled, digests), responses_sampled: sampled, has_more: hasMore }
  }

  return {
    async surveyStats(
      teamId: number,
      id: string,
      query: { date_from?: string; date_to?: string; exclude_archived?: string; include_per_question_stats?: string },
    ) {
      const requested = window(query)
      const row = await deps.service.load(teamId, id)
      const range = clamp(requested, row)
      const archived = isTrue(query.exclude_archived) ? await deps.surveys.archivedUuids(teamId, row.id) : null
      const { rows, dismissedAndSent } = await deps.responses.stats(teamId, [row.id], range, archived)
      const shaped = shapeStats(rows, dismissedAndSent)
      return {
        ...shaped,
        survey_id: row.id,
        start_date: apiTime(row.start_date),
        end_date: apiTime(row.end_date),
        ...(isTrue(query.include_per_question_stats)
          ? { per_question_stats: await perQuestion(row, range, archived) }
          : {}),
      }
    },

    async globalStats(teamId: number, query: { date_from?: string; date_to?: string }) {
      const range = window(query)
      const ids = (await deps.surveys.allForTeam(teamId)).filter((s) => s.archived === 0).map((s) => s.id)
      if (ids.length === 0) return { stats: {}, rates: { ...ZERO_RATES } }
      const { rows, dismissedAndSent } = await deps.responses.stats(teamId, ids, range, null)
      return shapeStats(rows, dismissedAndSent)
    },

    async responsesCount(teamId: number, query: { exclude_archived?: string; survey_ids?: string }) {
      const earliest = await deps.surveys.earliestStart(teamId)
      if (!earliest) return {}
      const ids = query.survey_ids
        ? query.survey_ids
            .split(',')
            .map((s) => s.trim())
            .filter((s) => s !== '')
        : null
      const archived = isTrue(query.exclude_archived) ? await deps.surveys.archivedUuids(teamId) : null
      return deps.responses.counts(teamId, new Date(earliest), ids, archived)
    },

    /** Deduplicated response counts of some surveys since each project's first start (the limit job's view). */
    async countsFor(teamId: number, ids: string[]): Promise<Record<string, number>> {
      const earliest = await deps.surveys.earliestStart(teamId)
      if (!earliest) return {}
      return deps.responses.counts(teamId, new Date(earliest), ids, null)
    },

    async archive(
      teamId: number,
      actor: { userId: number | null; organizationId: string },
      id: string,
      uuid: string,
      archive: boolean,
    ): Promise<void> {
      const row = await deps.service.load(teamId, id)
      if (!UUID.test(uuid)) throw new ValidationError('Invalid UUID format')
      const normalized = uuid.toLowerCase()
      const changed = archive
        ? await deps.surveys.archiveResponse(teamId, row.id, normalized, deps.clock().toISOString())
        : await deps.surveys.unarchiveResponse(teamId, row.id, normalized)
      if (!changed) return
      await deps.service.log(
        teamId,
        actor,
        { ...row, name: `Response ${normalized}` },
        archive ? 'response_archived' : 'response_unarchived',
      )
    },

    async archivedUuids(teamId: number, id: string): Promise<string[]> {
      const row = await deps.service.load(teamId, id)
      return deps.surveys.archivedUuids(teamId, row.id)
    },

    async summarizeQuestion(
      teamId: number,
      id: string,
      which: { question_id?: string; question_index?: string },
      forceRefresh: boolean,
    ) {
      const row = await deps.service.load(teamId, id)
      const questions = questionsOf(row)
      let index = -1
      if (which.question_id !== undefined) index = questions.findIndex((q) => q.id === which.question_id)
      else if (which.question_index !== undefined && /^\d+$/.test(which.question_index)) {
        index = Number(which.question_index)
      }
      const question = questions[index]
      if (!question) throw new ValidationError('the text of the question is required')
      const questionId = typeof question.id === 'string' ? question.id : String(index)
      const cache = row.question_summaries ? (JSON.parse(row.question_summaries) as Record<string, Cached>) : {}
      const cached = cache[questionId]
      if (cached && !forceRefresh) {
        return {
          content: cached.summary,
          response_count: cached.responseCount,
          generated_at: cached.generatedAt,
          trace_id: cached.traceId,
          cached: true,
        }
      }
      const generatedAt = apiTime(deps.clock()) as string
      const answers = await textAnswers(row, question, index, SUMMARY_SAMPLE)
      if (answers.length === 0) {
        return { content: 'No responses to analyze.', response_count: 0, generated_at: generatedAt, cached: false }
      }
      const summary = summarizeTexts(answers)
      const content = summaryMarkdown(String(question.question ?? ''), summary)
      cache[questionId] = { summary: content, responseCount: summary.responses, generatedAt, traceId: null }
      await deps.surveys.update(teamId, row.id, { question_summaries: JSON.stringify(cache) })
      return { content, response_count: summary.responses, generated_at: generatedAt, trace_id: null, cached: false }
    },

    async summaryHeadline(teamId: number, id: string, forceRefresh: boolean) {
      const row = await deps.service.load(teamId, id)
      if (row.headline_summary !== null && !forceRefresh) {
        return { headline: row.headline_summary, responses_sampled: row.headline_response_count ?? 0, has_more: false }
      }
      const result = await headlineFor(row)
      if (result.responses_sampled > 0) {
        await deps.surveys.update(teamId, row.id, {
          headline_summary: result.headline,
          headline_response_count: result.responses_sampled,
        })
      }
      return result
    },

    /** `GET responses/`: submissions merged per submission id, newest first, with their answers and context. */
    async listResponses(teamId: number, id: string, query: ResponsesQuery) {
      const row = await deps.service.load(teamId, id)
      if ((query.score_gte !== undefined || query.score_lte !== undefined) && query.question_id === undefined) {
        throw new ValidationError('score_lte and score_gte require question_id to be specified')
      }
      const questions = questionsOf(row).slice(0, MAX_QUESTION_STATS)
      let score: { index: number; gte?: number; lte?: number } | undefined
      if (query.question_id !== undefined) {
        const index = questions.findIndex((q) => q.id === query.question_id)
        if (index < 0) throw new ValidationError('Question not found in this survey', 'question_id')
        if (query.score_gte !== undefined || query.score_lte !== undefined) {
          score = { index, gte: query.score_gte, lte: query.score_lte }
        }
      }
      const limit = query.limit ?? 100
      const offset = query.offset ?? 0
      const range = { from: parseIsoDate(query.since), to: parseIsoDate(query.until) }
      if (range.from && range.to && range.from > range.to) throw new ValidationError('since must be before until')
      const archived = isTrue(query.exclude_archived) ? await deps.surveys.archivedUuids(teamId, row.id) : null
      const rows = await deps.responses.submissions(
        teamId,
        row.id,
        questions.map((q, i) => keysOf(q, i)),
        { window: range, archived, score, limit: limit + 1, offset },
      )
      const parse = (raw: string | null): unknown => {
        if (raw === null) return null
        try {
          return JSON.parse(raw) as unknown
        } catch {
          return raw
        }
      }
      return {
        results: rows.slice(0, limit).map((r) => {
          const props = parse(r.properties) as Record<string, unknown>
          const text = (key: string) => (typeof props[key] === 'string' ? (props[key] as string) : null)
          return {
            uuid: r.uuid,
            distinct_id: r.distinctId,
            session_id: r.sessionId || text('$session_id'),
            submitted_at: r.submittedAt,
            answers: questions.map((q, i) => ({
              question_id: typeof q.id === 'string' ? q.id : null,
              question_index: i,
              question_text: typeof q.question === 'string' ? q.question : '',
              question_type: typeof q.type === 'string' ? q.type : null,
              answer: parse(r.answers[i] ?? null),
            })),
            extra: {
              device_type: text('$device_type'),
              browser: text('$browser'),
              os: text('$os'),
              geoip_country_code: text('$geoip_country_code'),
              geoip_country_name: text('$geoip_country_name'),
              geoip_city_name: text('$geoip_city_name'),
              current_url: text('$current_url'),
              iteration: typeof props.$survey_iteration === 'number' ? props.$survey_iteration : null,
            },
          }
        }),
        has_more: rows.length > limit,
        limit,
        offset,
      }
    },

    async questionLabels(teamId: number) {
      const rows = await deps.surveys.allForTeam(teamId)
      return {
        labels: rows.flatMap((row) =>
          questionsOf(row).map((q, index) => ({
            question_id: typeof q.id === 'string' ? q.id : '',
            question_text: typeof q.question === 'string' ? q.question : '',
            question_index: index,
            survey_id: row.id,
            survey_name: row.name,
          })),
        ),
      }
    },
  }
}
export type SurveyResults = ReturnType<typeof createSurveyResults>

interface Cached {
  summary: string
  responseCount: number
  generatedAt: string
  traceId: string | null
}
