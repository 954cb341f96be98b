/** An OpenAPI 3.0 document for one endpoint's run operation, its variables as typed parameters. */
import { BREAKDOWN_VARIABLE_KINDS, breakdownsOf } from './materialize.js'

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function jsonType(value: unknown): Record<string, unknown> {
  if (typeof value === 'number') return { type: Number.isInteger(value) ? 'integer' : 'number' }
  if (typeof value === 'boolean') return { type: 'boolean' }
  return { type: 'string' }
}

/** The variables a caller may send, with a schema each (typed after the variable's stored value). */
export function variableSchemas(query: Record<string, unknown>, isMaterialized: boolean) {
  const out: Record<string, Record<string, unknown>> = {}
  if (query.kind === 'HogQLQuery') {
    if (isObject(query.variables)) {
      for (const spec of Object.values(query.variables)) {
        if (!isObject(spec) || typeof spec.code_name !== 'string') continue
        out[spec.code_name] = { ...jsonType(spec.value), description: `HogQL variable {variables.${spec.code_name}}` }
      }
    }
    return out
  }
  const breakdowns = breakdownsOf(query)
  if (BREAKDOWN_VARIABLE_KINDS.has(String(query.kind)) && breakdowns.length === 1) {
    out[breakdowns[0]] = { type: 'string', description: `Only rows whose breakdown value is this` }
  }
  if (!isMaterialized) {
    out.date_from = { type: 'string', description: 'Start of the date range (e.g. -7d or 2024-01-01)' }
    out.date_to = { type: 'string', description: 'End of the date range' }
  }
  return out
}

export function endpointOpenApi(args: {
  siteUrl: string
  teamId: number
  name: string
  description: string
  version: number
  query: Record<string, unknown>
  isMaterialized: boolean
}) {
  const variables = variableSchemas(args.query, args.isMaterialized)
  const path = `/api/environments/${args.teamId}/endpoints/${args.name}/run/`
  const runBody = {
    type: 'object',
    properties: {
      variables: { type: 'object', properties: variables, additionalProperties: false },
      refresh: { type: 'string', enum: ['cache', 'force', 'direct'], default: 'cache' },
      client_query_id: { type: 'string' },
      version: { type: 'integer', description: 'Version to run; the latest when left out' },
      limit: { type: 'integer', minimum: 1 },
      offset: { type: 'integer', minimum: 0 },
    },
  }
  const queryParameters = [
    { name: 'version', in: 'query', required: false, schema: { type: 'integer' } },
    { name: 'refresh', in: 'query', required: false, schema: { type: 'string', enum: ['cache', 'force', 'direct'] } },
    ...Object.entries(variables).map(([name, schema]) => ({
      name: `variables[${name}]`,
      in: 'query',
      required: false,
      description: schema.description,
      schema: { type: schema.type },
    })),
  ]
  const result = {
    type: 'object',
    properties: {
      results: { type: 'array', items: {} },
      columns: { type: 'array', items: { type: 'string' } },
      endpoint_version: { type: 'integer' },
      endpoint_version_created_at: { type: 'string', format: 'date-time' },
      endpoint_materialized: { type: 'boolean' },
    },
  }
  const error = { type: 'object', properties: { type: {}, code: {}, detail: {}, attr: {} } }
  const responses = {
    200: { description: 'The results', content: { 'application/json': { schema: result } } },
    202: { description: 'Still running', content: { 'application/json': { schema: result } } },
    400: { description: 'Bad input', content: { 'application/json': { schema: error } } },
    404: { description: 'No such endpoint or version', content: { 'application/json': { schema: error } } },
  }
  const operation = (method: string) => ({
    operationId: `${method}_${args.name.replace(/[^A-Za-z0-9_]/g, '_')}`,
    summary: `Run ${args.name}`,
    description: args.description,
    tags: ['endpoints'],
    responses,
  })
  return {
    openapi: '3.0.3',
    info: { title: args.name, description: args.description, version: String(args.version) },
    servers: [{ url: args.siteUrl }],
    components: { securitySchemes: { PersonalApiKey: { type: 'http', scheme: 'bearer' } } },
    security: [{ PersonalApiKey: [] }],
    paths: {
      [path]: {
        get: { ...operation('get'), parameters: queryParameters },
        post: {
          ...operation('post'),
          requestBody: { required: false, content: { 'application/json': { schema: runBody } } },
        },
      },
    },
  }
}
