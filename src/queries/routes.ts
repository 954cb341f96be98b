import type { FastifyInstance } from 'fastify'
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
const tags = ['query']

/** The query API (spec §4.1), under both the project and the environment prefix. */
export function queryRoutes(deps: { queries: QueryService }) {
  const { queries } = deps
  return async (app: FastifyInstance) => {
    for (const prefix of PREFIXES) {
      app.post(
        `${prefix}/query/`,
        { schema: { tags, params: ProjectParams, body: QueryRequestBody }, config: { scope: 'query:read' } },
        async (req, reply) => {
          const team = { id: req.project.id, timezone: req.project.timezone || 'UTC' }
          const answer = await queries.query(team, req.body as QueryRequest)
          return reply.code(answer.statusCode).send(answer.body)
        },
      )

      app.post(
        `${prefix}/query/upgrade/`,
        {
          schema: { tags, params: ProjectParams, body: UpgradeBody, response: { 200: UpgradeResponse } },
          config: { scope: 'query:read' },
        },
        async (req) => ({ query: queries.upgrade((req.body as { query: Record<string, unknown> }).query) }),
      )

      app.post(
        `${prefix}/query/check_auth_for_async/`,
        {
          schema: { tags, params: ProjectParams, response: { 200: AnyObject } },
          config: { scope: 'query:read' },
        },
        async () => ({ user: 'ok' }),
      )

      // SQL drafting from a prompt needs an AI model, which Burrow does not ship: the endpoint exists and is empty.
      app.get(
        `${prefix}/query/draft_sql/`,
        { schema: { tags, params: ProjectParams }, config: { scope: 'query:read' } },
        async (_req, reply) => reply.code(200).send(),
      )

      app.get(
        `${prefix}/query/:queryId/`,
        {
          schema: { tags, params: QueryIdParams, response: { '2xx': QueryStatusResponse, '4xx': AnyObject } },
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
        { schema: { tags, params: QueryIdParams }, config: { scope: 'query:read' } },
        async (req, reply) => {
          await queries.cancel(req.project.id, (req.params as { queryId: string }).queryId)
          return reply.code(204).send()
        },
      )

      app.get(
        `${prefix}/query/:queryId/log/`,
        { schema: { tags, params: QueryIdParams, response: { 200: AnyObject } }, config: { scope: 'query:read' } },
        async (req) => queries.log(req.project.id, (req.params as { queryId: string }).queryId),
      )
    }
  }
}
