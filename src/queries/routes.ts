import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { ApiError, ValidationError } from '../http/errors.js'
import { NoContent, serializeAsIs } from '../http/openapi.js'
import { formatResultsForLLM } from './format.js'
import { QUERY_KINDS, queryNodeDoc } from './node-docs.js'
import type { ReadBudget } from './read-budget.js'
import {
  AnyObject,
  ProjectParams,
  QueryIdParams,
  QueryRequestBody,
  QueryStatusResponse,
  UpgradeBody,
  UpgradeResponse,
} from './schemas.js'
import type { QueryRequest, QueryService } from './service.js'

const PREFIXES = ['/api/projects/:projectId', '/api/environments/:projectId']

const QueryResults = Type.Object(
  {
    results: Type.Unknown({ description: 'Rows, or the insight’s result shape' }),
    columns: Type.Optional(Type.Array(Type.Unknown())),
    types: Type.Optional(Type.Array(Type.Unknown())),
    hogql: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'The HogQL that ran' })),
    hasMore: Type.Optional(Type.Boolean()),
    is_cached: Type.Optional(Type.Boolean()),
    last_refresh: Type.Optional(Type.String()),
    cache_key: Type.Optional(Type.String()),
    timings: Type.Optional(Type.Array(Type.Unknown())),
    query_status: Type.Optional(AnyObject),
  },
  { additionalProperties: true, description: 'Results, computed or from the cache' },
)
const QueryAnswers = {
  200: QueryResults,
  202: Type.Object(
    { query_status: AnyObject, cache_key: Type.Optional(Type.String()) },
    { additionalProperties: true, description: 'Started: poll `GET /query/{query_status.id}/`' },
  ),
}
const tags = ['query']
const CancelAnswer = Type.Object({ message: Type.String() }, { description: 'What was done' })
const CancelQuerystring = Type.Object({
  dequeue_only: Type.Optional(Type.String({ description: '`true`: only take the query out of the queue' })),
})

/**
 * Largest query request body: a HogQL text at its limit (MAX_QUERY_LENGTH characters) written as six-byte JSON
 * escapes (`\u` and four hex digits each) is 3 MiB, and the rest of a query node is small. A larger body is refused
 * before it is read (413): under the app's 20 MiB limit one body was parsed for ~250 ms of the request thread before
 * the query in it was refused.
 */
export const MAX_QUERY_BODY_BYTES = 4 * 1024 * 1024

const BYTES_READ = 'x-posthog-query-bytes-read'
const BUDGET_REMAINING = 'x-posthog-query-budget-remaining-bytes'

/** The query API (spec §4.1), under both the project and the environment prefix. */
export function queryRoutes(deps: { queries: QueryService; budget: ReadBudget }) {
  const { queries, budget } = deps
  /** Queries made with a personal API key draw from the project's read budget, as PostHog's do. */
  const paysForReads = (req: FastifyRequest) => budget.enabled && req.auth?.key != null
  const costHeaders = (reply: FastifyReply, bytesRead: number, remaining: number) =>
    reply.header(BYTES_READ, String(bytesRead)).header(BUDGET_REMAINING, String(remaining))
  // Shown in the document in place of the route's body schema: the node kinds and their fields.
  const documentedBody = Type.Object({
    ...QueryRequestBody.properties,
    query: queryNodeDoc(QUERY_KINDS),
  })
  async function runQuery(req: FastifyRequest, reply: FastifyReply) {
    const team = { id: req.project.id, timezone: req.project.timezone || 'UTC' }
    const request = req.body as QueryRequest
    const pays = paysForReads(req)
    if (pays && (await budget.remaining(team.id)) <= 0) {
      // an exhausted budget still serves what is cached
      const cached = await queries.cached(team, request)
      if (cached) return costHeaders(reply, 0, 0).code(200).send(cached)
      const wait = await budget.retryAfterSeconds(team.id)
      throw new ApiError(
        429,
        'throttled_error',
        'api_queries_budget_exceeded',
        `The project's hourly query read budget is used up. Expected available in ${wait} seconds.`,
        null,
        { 'retry-after': String(wait), [BUDGET_REMAINING]: '0' },
      )
    }
    // The connection closing before the answer is sent means the client has gone away.
    const gone = new AbortController()
    const onClose = () => {
      if (!reply.raw.headersSent) gone.abort()
    }
    req.raw.socket?.once('close', onClose)
    const answer = await queries
      .query(team, request, {
        ...(pays ? { debit: (bytes: number) => budget.debit(team.id, bytes) } : {}),
        clientGone: gone.signal,
      })
      .finally(() => req.raw.socket?.off('close', onClose))
    if (pays) costHeaders(reply, answer.bytesRead ?? 0, answer.budgetRemaining ?? (await budget.remaining(team.id)))
    // PostHog's MCP clients get HogQL results as text too
    if (req.headers['x-posthog-client'] === 'mcp' && request.query?.kind === 'HogQLQuery') {
      const formatted = formatResultsForLLM(answer.body)
      if (formatted !== undefined) answer.body.formatted_results = formatted
    }
    return reply.code(answer.statusCode).send(answer.body)
  }

  return async (app: FastifyInstance) => {
    for (const prefix of PREFIXES) {
      app.post(
        `${prefix}/query/`,
        {
          schema: {
            summary: 'Run a query',
            description:
              'Runs a query node (HogQL, events, an insight kind, web analytics…) over this project’s data. `refresh` chooses between cached results and computing (`blocking` by default, `async` or `force_async` to start a job and poll `GET /query/{id}/`, `force_blocking`, `force_cache`, `lazy_async`); `client_query_id` names the run so it can be cancelled. Results are cached per query and project settings.',
            tags,
            params: ProjectParams,
            body: QueryRequestBody,
            response: QueryAnswers,
          },
          config: { scope: 'query:read', documentedBody },
          serializerCompiler: serializeAsIs,
          bodyLimit: MAX_QUERY_BODY_BYTES,
        },
        runQuery,
      )

      // PostHog's kind-in-the-path form (`POST /query/HogQLQuery/`): the same, when the body's kind agrees.
      app.post(
        `${prefix}/query/:queryKind/`,
        {
          schema: {
            summary: 'Run a query of a named kind',
            description:
              'As `POST /query/`, with the node’s kind in the path; a body of another kind is refused (400).',
            tags,
            params: Type.Object({ projectId: Type.String(), queryKind: Type.String({ pattern: '^[A-Z][A-Za-z]*$' }) }),
            body: QueryRequestBody,
            response: QueryAnswers,
          },
          config: { scope: 'query:read', documentedBody },
          serializerCompiler: serializeAsIs,
          bodyLimit: MAX_QUERY_BODY_BYTES,
        },
        async (req, reply) => {
          const pathKind = (req.params as { queryKind: string }).queryKind
          const bodyKind = (req.body as QueryRequest).query?.kind
          if (pathKind !== bodyKind) {
            throw new ValidationError(
              `Query kind mismatch: path kind "${pathKind}" does not match body kind "${String(bodyKind)}".`,
            )
          }
          return runQuery(req, reply)
        },
      )

      app.post(
        `${prefix}/query/upgrade/`,
        {
          schema: {
            summary: 'Upgrade a query node',
            description:
              'Rewrites an older query node (legacy fields and kinds) to the current shape, as the web app does before showing it.',
            tags,
            params: ProjectParams,
            body: UpgradeBody,
            response: { 200: UpgradeResponse },
          },
          config: { scope: 'query:read' },
        },
        async (req) => ({ query: queries.upgrade((req.body as { query: Record<string, unknown> }).query) }),
      )

      app.post(
        `${prefix}/query/check_auth_for_async/`,
        {
          schema: {
            summary: 'Check access for async queries',
            description:
              'Answers 200 when the caller may start asynchronous queries in the project (PostHog’s pre-flight).',
            tags,
            params: ProjectParams,
            response: { 200: AnyObject },
          },
          config: { scope: 'query:read' },
        },
        async () => ({ user: 'ok' }),
      )

      // SQL drafting from a prompt needs an AI model, which Burrow does not ship: the endpoint exists and is empty.
      app.get(
        `${prefix}/query/draft_sql/`,
        {
          schema: {
            summary: 'Draft SQL from a prompt (not offered)',
            description:
              'PostHog drafts SQL with an AI model, which Burrow does not ship: answers 200 with an empty body.',
            response: { 200: NoContent },
            tags,
            params: ProjectParams,
          },
          config: { scope: 'query:read' },
        },
        async (_req, reply) => reply.code(200).send(),
      )

      app.get(
        `${prefix}/query/:queryId/`,
        {
          schema: {
            summary: 'Poll an async query',
            description:
              'The status of a query started with `refresh: async` (or a `client_query_id`): 202 while running, 200 with `results` when done, 400/500 with the error when it failed.',
            tags,
            params: QueryIdParams,
            response: { '2xx': QueryStatusResponse, '4xx': AnyObject },
          },
          config: { scope: 'query:read' },
        },
        async (req, reply) => {
          const { queryId } = req.params as { queryId: string }
          const answer = await queries.status(req.project.id, queryId)
          const status = answer.body.query_status
          if (paysForReads(req) && status.complete && status.bytes_read !== null) {
            const remaining = status.budget_remaining_bytes ?? (await budget.remaining(req.project.id))
            costHeaders(reply, status.bytes_read, remaining)
          }
          return reply.code(answer.statusCode).send(answer.body)
        },
      )

      app.delete(
        `${prefix}/query/:queryId/`,
        {
          schema: {
            summary: 'Cancel a query',
            description:
              'Stops a running query (async or blocking, by its `client_query_id`) and answers what was done, in PostHog’s words: `Cancelled query on clickhouse`, `Query already complete`, or with `dequeue_only=true` (leave a started query running) `Only tried to dequeue, not cancelling query on clickhouse`.',
            response: { 200: CancelAnswer },
            tags,
            params: QueryIdParams,
            querystring: CancelQuerystring,
          },
          config: { scope: 'query:read' },
        },
        async (req) => {
          const dequeueOnly = (req.query as { dequeue_only?: string }).dequeue_only === 'true'
          const { queryId } = req.params as { queryId: string }
          return { message: await queries.cancel(req.project.id, queryId, { dequeueOnly }) }
        },
      )

      app.get(
        `${prefix}/query/:queryId/log/`,
        {
          schema: {
            summary: 'A query’s log',
            description:
              'What the engine recorded for a recent run: the ClickHouse query, timings, rows and bytes read.',
            tags,
            params: QueryIdParams,
            response: { 200: AnyObject },
          },
          config: { scope: 'query:read' },
        },
        async (req) => queries.log(req.project.id, (req.params as { queryId: string }).queryId),
      )
    }
  }
}
