import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { ValidationError } from '../http/errors.js'
import { pageParams, paginate } from '../http/pagination.js'
import type { Actor } from '../insights/activity.js'
import { endpointOpenApi } from './openapi.js'
import type { EndpointRunner, RunInput } from './run.js'
import {
  AnyObject,
  Endpoint,
  EndpointInput,
  EndpointListQuery,
  EndpointPage,
  EndpointParams,
  EndpointVersion,
  ErrorBody,
  LastExecutionBody,
  Materialization,
  ProjectParams,
  QueryStatusEnvelope,
  RunBody,
  RunQuery,
  RunResult,
  VersionParams,
  VersionQuery,
} from './schemas.js'
import type { EndpointService } from './service.js'

const PREFIXES = ['/api/projects/:projectId/endpoints', '/api/environments/:projectId/endpoints']
const tags = ['endpoints']
const errors = { 400: ErrorBody, 404: ErrorBody }
const RunVersionQuery = Type.Object({ version: Type.Optional(Type.String({ maxLength: 40 })) })

const teamOf = (req: FastifyRequest) => ({ id: req.project.id, timezone: req.project.timezone || 'UTC' })
const actorOf = (req: FastifyRequest): Actor => ({
  userId: req.auth.user.id,
  organizationId: req.project.organization_id,
})

/** GET run options from the query string: `variables` as JSON, or one `variables[name]=value` per variable. */
function runInputOfQuery(query: Record<string, unknown>): { input: RunInput; version?: string } {
  let variables: Record<string, unknown> = {}
  if (typeof query.variables === 'string' && query.variables !== '') {
    let parsed: unknown
    try {
      parsed = JSON.parse(query.variables)
    } catch {
      throw new ValidationError('variables must be a JSON object.', 'variables')
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new ValidationError('variables must be a JSON object.', 'variables')
    }
    variables = parsed as Record<string, unknown>
  }
  for (const [key, value] of Object.entries(query)) {
    const match = /^variables\[(.+)\]$/.exec(key)
    if (match) variables[match[1]] = value
  }
  const input: RunInput = {
    client_query_id: query.client_query_id as string | undefined,
    refresh: query.refresh as string | undefined,
    debug: query.debug as boolean | undefined,
    limit: query.limit as number | undefined,
    offset: query.offset as number | undefined,
    variables,
  }
  return { input, version: query.version as string | undefined }
}

/** Saved endpoints (spec §4.4), under both the project and the environment prefix. */
export function endpointRoutes(deps: { endpoints: EndpointService; runner: EndpointRunner; siteUrl: string }) {
  const { endpoints, runner } = deps
  return async (app: FastifyInstance) => {
    for (const prefix of PREFIXES) {
      app.get(
        `${prefix}/`,
        {
          schema: {
            summary: 'List endpoints',
            description:
              'The saved endpoints of the project, newest first; filters `is_active` and `created_by` (a user id).',
            tags,
            params: ProjectParams,
            querystring: EndpointListQuery,
            response: { 200: EndpointPage, 400: ErrorBody },
          },
          config: { scope: 'endpoint:read' },
        },
        async (req) => {
          const query = req.query as { is_active?: boolean; created_by?: number; limit?: number; offset?: number }
          const { limit, offset } = pageParams(query, 100)
          const all = await endpoints.list(teamOf(req), { isActive: query.is_active, createdBy: query.created_by })
          return paginate(req.url, deps.siteUrl, all.length, all.slice(offset, offset + limit), limit, offset)
        },
      )
      app.post(
        `${prefix}/`,
        {
          schema: {
            summary: 'Create an endpoint',
            description:
              'Saves a HogQL or insight query under a name (unique in the project) as version 1; `is_materialized` with `sync_frequency` also stores its results in a table refreshed on that schedule.',
            tags,
            params: ProjectParams,
            body: EndpointInput,
            response: { 201: Endpoint, 400: ErrorBody },
          },
          config: { scope: 'endpoint:write' },
        },
        async (req, reply) =>
          reply.code(201).send(await endpoints.create(teamOf(req), actorOf(req), req.body as EndpointInput)),
      )
      app.post(
        `${prefix}/last_execution_times/`,
        {
          schema: {
            summary: 'When endpoints last ran with a personal API key (past 6 months)',
            description:
              'For each name given, the last time the endpoint ran with a personal API key within the past 6 months, in a query status object.',
            tags,
            params: ProjectParams,
            body: LastExecutionBody,
            response: { 200: QueryStatusEnvelope, 400: ErrorBody },
          },
          config: { scope: 'endpoint:read' },
        },
        async (req) => runner.lastExecutionTimes(req.project.id, (req.body as { names: unknown[] }).names),
      )
      app.get(
        `${prefix}/:name/`,
        {
          schema: {
            summary: 'Retrieve an endpoint, or one version of it with ?version=N',
            description:
              'The endpoint with its latest version; with `?version=N`, that version with its own query, description and state.',
            tags,
            params: EndpointParams,
            querystring: VersionQuery,
            response: { 200: Endpoint, ...errors },
          },
          config: { scope: 'endpoint:read' },
        },
        async (req) => {
          const { name } = req.params as { name: string }
          const { version } = req.query as { version?: number }
          if (version !== undefined) return endpoints.getAtVersion(teamOf(req), name, version)
          return endpoints.get(teamOf(req), name)
        },
      )
      app.patch(
        `${prefix}/:name/`,
        {
          schema: {
            summary: 'Update an endpoint; a changed query makes a new version',
            description:
              'A changed query (compared by value) makes a new version; description and cache age do not. With a version (body or `?version=N`) only that version changes.',
            tags,
            params: EndpointParams,
            querystring: VersionQuery,
            body: EndpointInput,
            response: { 200: Endpoint, ...errors },
          },
          config: { scope: 'endpoint:write' },
        },
        async (req) => {
          const { name } = req.params as { name: string }
          const body = req.body as EndpointInput & { version?: number }
          // the version to change: in the body or in the query string (the body wins, as in PostHog)
          const version = Number.isSafeInteger(body.version)
            ? body.version
            : (req.query as { version?: number }).version
          return endpoints.update(teamOf(req), actorOf(req), name, body, version)
        },
      )
      app.delete(
        `${prefix}/:name/`,
        {
          schema: {
            summary: 'Delete an endpoint and drop its materialized tables',
            description:
              'Deletes the endpoint with all its versions and drops the tables of its materializations. Answers 204 with no body.',
            tags,
            params: EndpointParams,
            response: { 204: Type.Null(), 404: ErrorBody },
          },
          config: { scope: 'endpoint:write' },
        },
        async (req, reply) => {
          await endpoints.remove(teamOf(req), actorOf(req), (req.params as { name: string }).name)
          return reply.code(204).send()
        },
      )
      app.get(
        `${prefix}/:name/materialization_status/`,
        {
          schema: {
            summary: "The materialization status of the endpoint's latest version",
            description:
              'Status (`Completed`, `Running`, `Failed`), last and next sync, sync frequency and the last error; or whether the query could be materialized.',
            tags,
            params: EndpointParams,
            response: { 200: Materialization, 404: ErrorBody },
          },
          config: { scope: 'endpoint:read' },
        },
        async (req) => endpoints.materializationStatus(req.project.id, (req.params as { name: string }).name),
      )
      app.get(
        `${prefix}/:name/versions/`,
        {
          schema: {
            summary: 'All versions of an endpoint, newest first',
            description: 'Every version with its query snapshot and state, as a plain list, newest first.',
            tags,
            params: EndpointParams,
            response: { 200: Type.Array(EndpointVersion), 404: ErrorBody },
          },
          config: { scope: 'endpoint:read' },
        },
        async (req) => endpoints.versions(req.project.id, (req.params as { name: string }).name),
      )
      app.get(
        `${prefix}/:name/versions/:versionNumber/`,
        {
          schema: {
            summary: 'One version of an endpoint',
            description: 'One version by its number.',
            tags,
            params: VersionParams,
            response: { 200: EndpointVersion, 404: ErrorBody },
          },
          config: { scope: 'endpoint:read' },
        },
        async (req) => {
          const { name, versionNumber } = req.params as { name: string; versionNumber: number }
          return endpoints.version(req.project.id, name, versionNumber)
        },
      )
      app.get(
        `${prefix}/:name/openapi.json`,
        {
          schema: {
            summary: "OpenAPI 3.0 document of the endpoint's run operation, its variables as parameters",
            description:
              'An OpenAPI 3.0 document for running this endpoint, its variables typed, so a client can be generated from it.',
            tags,
            params: EndpointParams,
            querystring: VersionQuery,
            response: { 200: AnyObject, 404: ErrorBody },
          },
          config: { scope: 'endpoint:read' },
        },
        async (req) => {
          const { name } = req.params as { name: string }
          const { version } = req.query as { version?: number }
          const view =
            version === undefined
              ? await endpoints.get(teamOf(req), name)
              : await endpoints.getAtVersion(teamOf(req), name, version)
          return endpointOpenApi({
            siteUrl: deps.siteUrl,
            teamId: req.project.id,
            name,
            description: view.description,
            version: 'version' in view ? (view.version as number) : view.current_version,
            query: view.query,
            isMaterialized: view.is_materialized,
          })
        },
      )
      const runSchema = {
        summary: 'Run the endpoint (the latest version unless one is asked for)',
        description:
          'Runs the latest version (or `version`) with `variables`; reads the materialized table while it is fresh, else runs the query live. Answers 202 with the query status while an asynchronous run goes on.',
        tags,
        params: EndpointParams,
        response: { 200: RunResult, 202: RunResult, ...errors },
      }
      app.get(
        `${prefix}/:name/run/`,
        { schema: { ...runSchema, querystring: RunQuery }, config: { scope: 'endpoint:read' } },
        async (req, reply) => {
          const { input, version } = runInputOfQuery(req.query as Record<string, unknown>)
          const answer = await runner.run(teamOf(req), (req.params as { name: string }).name, input, {
            queryVersion: version,
            personalKey: req.auth.key !== null,
          })
          return reply.code(answer.statusCode).send(answer.body)
        },
      )
      app.post(
        `${prefix}/:name/run/`,
        {
          schema: { ...runSchema, querystring: RunVersionQuery, body: RunBody },
          config: { scope: 'endpoint:read' },
          // a run without a body is a run with every default
          preValidation: async (req: FastifyRequest) => {
            if (req.body === undefined || req.body === null) req.body = {}
          },
        },
        async (req, reply) => {
          const answer = await runner.run(teamOf(req), (req.params as { name: string }).name, req.body as RunInput, {
            queryVersion: (req.query as { version?: string }).version,
            personalKey: req.auth.key !== null,
          })
          return reply.code(answer.statusCode).send(answer.body)
        },
      )
    }
  }
}
