import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { NoContent, serializeAsIs } from '../http/openapi.js'
import { QUERY_KINDS, queryNodeDoc } from './node-docs.js'
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

/** The query API (spec §4.1), under both the project and the environment prefix. */
export function queryRoutes(deps: { queries: QueryService }) {
  const { queries } = deps
  // Shown in the document in place of the route's body schema: the node kinds and their fields.
  const documentedBody = Type.Object({
    ...QueryRequestBody.properties,
    query: queryNodeDoc(QUERY_KINDS),
  })
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
        },
        async (req, reply) => {
          const team = { id: req.project.id, timezone: req.project.timezone || 'UTC' }
          const answer = await queries.query(team, req.body as QueryRequest)
          return reply.code(answer.statusCode).send(answer.body)
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
          return reply.code(answer.statusCode).send(answer.body)
        },
      )

      app.delete(
        `${prefix}/query/:queryId/`,
        {
          schema: {
            summary: 'Cancel a query',
            description: 'Stops a running query (async or blocking, by its `client_query_id`).',
            response: { 204: NoContent },
            tags,
            params: QueryIdParams,
          },
          config: { scope: 'query:read' },
        },
        async (req, reply) => {
          await queries.cancel(req.project.id, (req.params as { queryId: string }).queryId)
          return reply.code(204).send()
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
