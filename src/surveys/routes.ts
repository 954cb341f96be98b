import type { FastifyInstance, FastifyRequest } from 'fastify'
import { type Static, Type } from 'typebox'
import type { ActivityStore } from '../activity/store.js'
import { ApiError, PermissionDenied } from '../http/errors.js'
import { pageParams, paginate } from '../http/pagination.js'
import { hasScope } from '../http/scopes.js'
import { ProjectParams } from '../projects/schemas.js'
import type { UserStore } from '../users/store.js'
import type { createSurveyDuplicator } from './duplicate.js'
import type { SurveyResults } from './results.js'
import {
  ActivityPage,
  ActivityQuery,
  CountQuery,
  DuplicateInput,
  DuplicateResult,
  GlobalStats,
  HeadlineSummary,
  PublicQuery,
  PublicSurveys,
  QuestionLabels,
  QuestionSummary,
  ResponseParams,
  ResponsesPage,
  ResponsesQuery,
  StatsQuery,
  SummaryInput,
  SummaryQuery,
  SurveyInput,
  SurveyListQuery,
  SurveyPage,
  SurveyParams,
  SurveyRecord,
  SurveyStatsRecord,
  SurveyWritten,
} from './schemas.js'
import type { SurveyActor, SurveyService } from './service.js'

const PREFIXES = ['/api/projects/:projectId/surveys', '/api/environments/:projectId/surveys']
const ErrorBody = Type.Object({
  type: Type.String(),
  code: Type.String(),
  detail: Type.String(),
  attr: Type.Union([Type.String(), Type.Null()]),
})
const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody }

type Req = FastifyRequest & { params: { id: string; uuid?: string } }

export function surveyRoutes(deps: {
  surveys: SurveyService
  results: SurveyResults
  duplicate: ReturnType<typeof createSurveyDuplicator>
  activity: Pick<ActivityStore, 'list'>
  users: Pick<UserStore, 'get'>
  /** The project of a public token, or undefined. */
  projectByToken: (token: string) => Promise<{ teamId: number } | undefined>
  /** The SDK's survey list of a project (cached briefly by the module). */
  publicSurveys: (teamId: number) => Promise<unknown[]>
  siteUrl: string
}) {
  const actorOf = (req: FastifyRequest): SurveyActor => ({
    userId: req.auth.user.id,
    organizationId: req.project.organization_id,
    scopes: req.auth.key ? req.auth.scopes : null,
  })
  const idOf = (req: FastifyRequest) => (req.params as { id: string }).id

  async function activityPage(req: FastifyRequest, itemId?: string) {
    const { limit = 10, page = 1 } = req.query as { limit?: number; page?: number }
    const rows = await deps.activity.list(req.project.id, 'Survey', itemId)
    const slice = rows.slice((page - 1) * limit, page * limit)
    const users = new Map<number, { first_name: string; email: string | null }>()
    for (const id of new Set(slice.map((r) => r.user_id))) {
      if (id === null) continue
      const user = await deps.users.get(id)
      if (user) users.set(id, { first_name: user.first_name, email: user.email })
    }
    const link = (p: number) => {
      const url = new URL(req.url, deps.siteUrl)
      url.searchParams.set('page', String(p))
      url.searchParams.set('limit', String(limit))
      return url.toString()
    }
    return {
      results: slice.map((row) => ({
        id: row.id,
        user:
          row.user_id === null
            ? { first_name: 'System', email: null, is_system: true }
            : (users.get(row.user_id) ?? null),
        activity: row.activity,
        scope: row.scope,
        item_id: row.item_id,
        detail: JSON.parse(row.detail) as unknown,
        created_at: row.created_at,
      })),
      next: page * limit < rows.length ? link(page + 1) : null,
      previous: page > 1 ? link(page - 1) : null,
      total_count: rows.length,
    }
  }

  return async (app: FastifyInstance) => {
    const tags = ['surveys']
    const read = { scope: 'survey:read' }
    const write = { scope: 'survey:write' }
    for (const prefix of PREFIXES) {
      app.get(
        `${prefix}/`,
        {
          schema: {
            summary: 'List surveys',
            description:
              'Newest first. Filters: `search` (name or description), `archived`, `type`, `ids` (comma-separated). Needs scope `survey:read`.',
            tags,
            params: ProjectParams,
            querystring: SurveyListQuery,
            response: { 200: SurveyPage, ...errors },
          },
          config: read,
        },
        async (req) => {
          const query = req.query as SurveyListQuery
          const { limit, offset } = pageParams(query, 100)
          const page = await deps.surveys.list(req.project.id, {
            limit,
            offset,
            search: query.search,
            archived: query.archived === undefined ? undefined : query.archived === 'true',
            type: query.type,
            ids: query.ids
              ?.split(',')
              .map((s) => s.trim().toLowerCase())
              .filter((s) => s !== ''),
          })
          return paginate(req.url, deps.siteUrl, page.count, page.results, limit, offset)
        },
      )
      app.post(
        `${prefix}/`,
        {
          schema: {
            summary: 'Create a survey',
            description:
              "Validates questions, appearance, conditions and translations with PostHog's messages; creates the targeting flag from `targeting_flag_filters` and the internal targeting flag. Needs scope `survey:write` (and `feature_flag:write` for targeting).",
            tags,
            params: ProjectParams,
            body: SurveyInput,
            response: { 201: SurveyWritten, ...errors },
          },
          config: write,
        },
        async (req, reply) =>
          reply.code(201).send(await deps.surveys.create(req.project.id, actorOf(req), req.body as SurveyInput)),
      )
      app.get(
        `${prefix}/activity/`,
        {
          schema: {
            summary: 'Survey activity of the project',
            description: 'Page-based (`limit`, `page`), newest first. Needs scope `activity_log:read`.',
            tags,
            params: ProjectParams,
            querystring: ActivityQuery,
            response: { 200: ActivityPage, ...errors },
          },
          config: { scope: 'activity_log:read' },
        },
        async (req) => activityPage(req),
      )
      app.get(
        `${prefix}/responses_count/`,
        {
          schema: {
            summary: 'Responses per survey',
            description:
              'Deduplicated `survey sent` events per survey since the first survey start; `exclude_archived`, `survey_ids`. Needs scope `survey:read`.',
            tags,
            params: ProjectParams,
            querystring: CountQuery,
            response: { 200: Type.Record(Type.String(), Type.Integer()), ...errors },
          },
          config: read,
        },
        async (req) => deps.results.responsesCount(req.project.id, req.query as { survey_ids?: string }),
      )
      app.get(
        `${prefix}/stats/`,
        {
          schema: {
            summary: 'Response statistics across surveys',
            description:
              'Shown, dismissed and sent counts and rates over every survey that is not archived; `date_from`, `date_to`. Needs scope `survey:read`.',
            tags,
            params: ProjectParams,
            querystring: StatsQuery,
            response: { 200: GlobalStats, ...errors },
          },
          config: read,
        },
        async (req) => deps.results.globalStats(req.project.id, req.query as StatsQuery),
      )
      app.get(
        `${prefix}/question_labels/`,
        {
          schema: {
            summary: 'Question labels of every survey',
            description: 'Each question of each survey with its id, text and index. Needs scope `survey:read`.',
            tags,
            params: ProjectParams,
            response: { 200: QuestionLabels, ...errors },
          },
          config: read,
        },
        async (req) => deps.results.questionLabels(req.project.id),
      )
      app.get(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Get a survey',
            description: 'The survey with its flags and `feature_flag_keys`. Needs scope `survey:read`.',
            tags,
            params: SurveyParams,
            response: { 200: SurveyRecord, ...errors },
          },
          config: read,
        },
        async (req) => deps.surveys.get(req.project.id, idOf(req)),
      )
      app.patch(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Update a survey',
            description:
              "Partial update; the survey's flags follow its state (active only while running). Needs scope `survey:write` (and `feature_flag:write` for targeting).",
            tags,
            params: SurveyParams,
            body: SurveyInput,
            response: { 200: SurveyWritten, ...errors },
          },
          config: write,
        },
        async (req) => deps.surveys.update(req.project.id, actorOf(req), idOf(req), req.body as SurveyInput),
      )
      app.delete(
        `${prefix}/:id/`,
        {
          schema: {
            summary: 'Delete a survey and its flags',
            description:
              'Hard delete; its targeting, internal and sampling flags are deleted. Needs scope `survey:write`.',
            tags,
            params: SurveyParams,
            response: { 204: Type.Null(), ...errors },
          },
          config: write,
        },
        async (req, reply) => {
          await deps.surveys.remove(req.project.id, actorOf(req), idOf(req))
          return reply.code(204).send()
        },
      )
      for (const [action, summary] of [
        ['launch', 'Launch a survey now'],
        ['stop', 'Stop a survey now'],
      ] as const) {
        app.post(
          `${prefix}/:id/${action}/`,
          {
            schema: {
              summary,
              description:
                'Sets the start (or end) date to now; nothing changes when it is set already. Needs scope `survey:write`.',
              tags,
              params: SurveyParams,
              response: { 200: SurveyRecord, ...errors },
            },
            config: write,
          },
          async (req) => deps.surveys[action](req.project.id, actorOf(req), idOf(req)),
        )
      }
      app.get(
        `${prefix}/:id/activity/`,
        {
          schema: {
            summary: 'Activity of a survey',
            description: 'Page-based (`limit`, `page`), newest first. Needs scope `activity_log:read`.',
            tags,
            params: SurveyParams,
            querystring: ActivityQuery,
            response: { 200: ActivityPage, ...errors },
          },
          config: { scope: 'activity_log:read' },
        },
        async (req) => {
          const row = await deps.surveys.load(req.project.id, idOf(req))
          return activityPage(req, row.id)
        },
      )
      app.get(
        `${prefix}/:id/stats/`,
        {
          schema: {
            summary: 'Response statistics of a survey',
            description:
              "Counts and rates within the survey's window (`date_from`, `date_to` inclusive); `exclude_archived`, `include_per_question_stats`. Needs scope `survey:read`.",
            tags,
            params: SurveyParams,
            querystring: StatsQuery,
            response: { 200: SurveyStatsRecord, ...errors },
          },
          config: read,
        },
        async (req) => deps.results.surveyStats(req.project.id, idOf(req), req.query as StatsQuery),
      )
      app.get(
        `${prefix}/:id/responses/`,
        {
          schema: {
            summary: 'Responses of a survey, one per submission',
            description:
              'Newest first, the latest answer per question; `since`, `until`, `question_id` with `score_gte`/`score_lte`, `exclude_archived`, `limit` (≤ 500), `offset`. Needs scopes `survey:read` and `query:read`.',
            tags,
            params: SurveyParams,
            querystring: ResponsesQuery,
            response: { 200: ResponsesPage, ...errors },
          },
          config: read,
        },
        async (req) => {
          // PostHog asks for both survey:read and query:read here.
          if (req.auth.key && !hasScope(req.auth.scopes, 'query:read')) {
            throw new PermissionDenied("API key missing required scope 'query:read'")
          }
          return deps.results.listResponses(req.project.id, idOf(req), req.query as Static<typeof ResponsesQuery>)
        },
      )
      app.get(
        `${prefix}/:id/archived-response-uuids/`,
        {
          schema: {
            summary: 'UUIDs of archived responses',
            description: "The event uuids of this survey's archived responses. Needs scope `survey:read`.",
            tags,
            params: SurveyParams,
            response: { 200: Type.Array(Type.String()), ...errors },
          },
          config: read,
        },
        async (req) => deps.results.archivedUuids(req.project.id, idOf(req)),
      )
      for (const action of ['archive', 'unarchive'] as const) {
        app.post(
          `${prefix}/:id/responses/:uuid/${action}/`,
          {
            schema: {
              summary: `${action === 'archive' ? 'Archive' : 'Unarchive'} a response`,
              description: 'Answers the bare number 200, as PostHog does. Needs scope `survey:write`.',
              tags,
              params: ResponseParams,
              response: { 200: Type.Integer(), 400: Type.Object({ detail: Type.String() }), 404: ErrorBody },
            },
            config: write,
          },
          async (req, reply) => {
            const { id, uuid } = (req as Req).params
            try {
              await deps.results.archive(req.project.id, actorOf(req), id, uuid as string, action === 'archive')
            } catch (error) {
              // PostHog answers a bad uuid with a bare `{detail}` body.
              if (error instanceof ApiError && error.statusCode === 400) {
                return reply.code(400).send({ detail: error.detail })
              }
              throw error
            }
            // PostHog passes the status constant as the body: the bare number 200.
            return reply.code(200).send(200)
          },
        )
      }
      app.post(
        `${prefix}/:id/duplicate_to_projects/`,
        {
          schema: {
            summary: 'Copy a survey into other projects, all or none',
            description:
              '`target_team_ids`: projects of the same organization. One transaction: if one copy fails, none remains. Needs scope `survey:write`.',
            tags,
            params: SurveyParams,
            body: DuplicateInput,
            response: { 201: DuplicateResult, ...errors },
          },
          config: write,
        },
        async (req, reply) =>
          reply
            .code(201)
            .send(
              await deps.duplicate(
                req.project.id,
                { ...actorOf(req), scopedTeams: req.auth.key ? req.auth.scopedTeams : null },
                idOf(req),
                (req.body as { target_team_ids?: unknown } | undefined)?.target_team_ids,
              ),
            ),
      )
      app.post(
        `${prefix}/:id/summarize_responses/`,
        {
          schema: {
            summary: 'Summarize the answers to a question (offline), or the headline without a question',
            description:
              '`question_id` or `question_index`: themes, quotes and sentiment of the free-text answers, computed offline and cached on the survey. Needs scope `survey:read`.',
            tags,
            params: SurveyParams,
            querystring: SummaryQuery,
            body: Type.Optional(SummaryInput),
            response: { 200: Type.Union([QuestionSummary, HeadlineSummary]), ...errors },
          },
          config: read,
        },
        async (req, reply) => {
          const query = req.query as { question_id?: string; question_index?: string }
          const force = (req.body as { force_refresh?: boolean } | null | undefined)?.force_refresh === true
          if (query.question_id === undefined && query.question_index === undefined) {
            return deps.results.summaryHeadline(req.project.id, idOf(req), force)
          }
          const summary = await deps.results.summarizeQuestion(req.project.id, idOf(req), query, force)
          return reply.header('cache-control', 'max-age=15').send(summary)
        },
      )
      app.post(
        `${prefix}/:id/summary_headline/`,
        {
          schema: {
            summary: 'One-sentence headline of the responses (offline)',
            description:
              'At most 20 words over the latest 100 responses, kept on the survey until `force_refresh`. Needs scope `survey:read`.',
            tags,
            params: SurveyParams,
            body: Type.Optional(SummaryInput),
            response: { 200: HeadlineSummary, ...errors },
          },
          config: read,
        },
        async (req) =>
          deps.results.summaryHeadline(
            req.project.id,
            idOf(req),
            (req.body as { force_refresh?: boolean } | null | undefined)?.force_refresh === true,
          ),
      )
    }

    // The SDK's survey list: public, authenticated by the project token, read-only.
    app.get(
      '/api/surveys/',
      {
        schema: {
          summary: 'Active surveys of a project, for the SDKs',
          description:
            "Public: authenticated by the project token (`token`); surveys that are not archived, in posthog-js's shape. Read-only.",
          tags,
          querystring: PublicQuery,
          response: { 200: PublicSurveys, 401: ErrorBody },
        },
        config: { scope: null },
      },
      async (req, reply) => {
        const query = req.query as { token?: string; api_key?: string }
        const token = query.token || query.api_key
        if (!token) {
          throw new ApiError(
            401,
            'authentication_error',
            'missing_api_key',
            'API key not provided. You can find your project API key in your project settings.',
          )
        }
        const project = await deps.projectByToken(token)
        if (!project) {
          throw new ApiError(
            401,
            'authentication_error',
            'invalid_api_key',
            'Project API key invalid. You can find your project API key in your project settings.',
          )
        }
        const surveys = await deps.publicSurveys(project.teamId)
        return reply.header('cache-control', 'no-cache').send({ surveys, survey_config: null })
      },
    )
  }
}
