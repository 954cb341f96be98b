/**
 * Running a saved endpoint (PostHog's endpoint `run`): version selection, variables, refresh modes, the
 * materialized table while it is fresh, else the live query through the query service; and the last execution
 * times of personal-API-key runs.
 */
import { ApiError, type ErrorBody, NotFound, ValidationError } from '../http/errors.js'
import { EXECUTION_MODES, type QueryAnswer, type QueryRequest, type QueryService } from '../queries/service.js'
import { BREAKDOWN_VARIABLE_KINDS, breakdownsOf, materializability } from './materialize.js'
import { ENDPOINT_NAME, type EndpointService, type EndpointTeam } from './service.js'
import type { EndpointStore, EndpointVersionRow } from './store.js'
import { type EndpointSync, isFresh, type MaterializedShape } from './sync.js'

export interface RunInput {
  client_query_id?: string | null
  refresh?: string | null
  variables?: Record<string, unknown> | null
  version?: number | string | null
  debug?: boolean | null
  filters_override?: Record<string, unknown> | null
  query_override?: unknown
  limit?: number | null
  offset?: number | null
}

/** PostHog's bare `{error: …}` bodies on run, kept beside the usual error fields. */
class RunRefusal extends ApiError {
  constructor(
    statusCode: number,
    code: string,
    detail: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(statusCode, statusCode === 404 ? 'invalid_request' : 'validation_error', code, detail)
  }
  override toBody(): ErrorBody {
    return { ...super.toBody(), error: this.detail, ...this.extra } as ErrorBody
  }
}

/** Fields left out of a run's answer unless `debug` is set. */
const DEBUG_ONLY = [
  'calculation_trigger',
  'cache_key',
  'explain',
  'modifiers',
  'resolved_date_range',
  'timings',
  'hogql',
]
const SIX_MONTHS_MS = 183 * 86_400_000
const DEFAULT_ROWS = 100

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function versionNumberOf(input: RunInput, queryVersion: string | undefined): number | undefined {
  const raw = input.version ?? queryVersion
  if (raw === undefined || raw === null || raw === '') return undefined
  const n = typeof raw === 'number' ? raw : /^\d+$/.test(String(raw).trim()) ? Number(String(raw).trim()) : Number.NaN
  if (!Number.isSafeInteger(n)) throw new RunRefusal(400, 'invalid_input', `Invalid version parameter: ${raw}`)
  return n
}

function modeOf(refresh: string | null | undefined): 'blocking' | 'force_blocking' | string {
  if (refresh === undefined || refresh === null || refresh === 'cache') return 'blocking'
  if (refresh === 'force' || refresh === 'direct') return 'force_blocking'
  if ((EXECUTION_MODES as string[]).includes(refresh)) return refresh
  throw new ValidationError(`"${refresh}" is not a valid choice.`, 'refresh', 'invalid_choice')
}

/** `{variableId: {code_name, …}}` of a HogQL node, by code name. */
function hogqlVariables(query: Record<string, unknown>): Map<string, { id: string; spec: Record<string, unknown> }> {
  const out = new Map<string, { id: string; spec: Record<string, unknown> }>()
  if (!isObject(query.variables)) return out
  for (const [id, spec] of Object.entries(query.variables)) {
    if (isObject(spec) && typeof spec.code_name === 'string') out.set(spec.code_name, { id, spec })
  }
  return out
}

export function createEndpointRunner(deps: {
  endpoints: Pick<EndpointStore, 'version' | 'materialization' | 'recordExecution' | 'byNames'>
  service: Pick<EndpointService, 'getRow' | 'latest'>
  queries: Pick<QueryService, 'query' | 'cached'>
  sync: Pick<EndpointSync, 'readHogQL' | 'readInsight'>
  clock: () => Date
}) {
  const { endpoints: store } = deps

  /** The variable keys a version accepts, and the one a materialized version needs. */
  function variableRules(query: Record<string, unknown>, materialized: boolean) {
    if (query.kind === 'HogQLQuery') {
      const declared = hogqlVariables(query)
      let required: string | null = null
      if (materialized) {
        const check = materializability(query)
        if (check.ok && check.plan.kind === 'hogql') required = check.plan.variable
      }
      return { allowed: new Set(declared.keys()), required }
    }
    const allowed = new Set<string>()
    const breakdowns = breakdownsOf(query)
    const breakdown = BREAKDOWN_VARIABLE_KINDS.has(String(query.kind)) && breakdowns.length === 1 ? breakdowns[0] : null
    if (breakdown !== null) allowed.add(breakdown)
    if (!materialized) {
      allowed.add('date_from')
      allowed.add('date_to')
    }
    return { allowed, required: materialized ? breakdown : null }
  }

  function checkVariables(query: Record<string, unknown>, variables: Record<string, unknown>, materialized: boolean) {
    const rules = variableRules(query, materialized)
    const unknown = Object.keys(variables).filter((k) => !rules.allowed.has(k))
    if (unknown.length > 0) {
      const detail =
        query.kind === 'HogQLQuery' && unknown.length === 1
          ? `Variable '${unknown[0]}' not found in query`
          : `Unknown variable(s): ${unknown.join(', ')}`
      throw new ValidationError(detail, 'variables')
    }
    if (rules.required !== null && !(rules.required in variables)) {
      throw new ValidationError(`Required variable '${rules.required}' not provided`, 'variables')
    }
  }

  /** The live query request: variables as HogQL variable overrides, or as a dashboard-style filters override. */
  function liveRequest(
    name: string,
    query: Record<string, unknown>,
    input: RunInput,
    variables: Record<string, unknown>,
  ): QueryRequest {
    let node = query
    const request: QueryRequest = {
      query: node,
      client_query_id: input.client_query_id ?? null,
      refresh: modeOf(input.refresh),
      name,
    }
    if (query.kind === 'HogQLQuery') {
      const declared = hogqlVariables(query)
      const overrides: Record<string, unknown> = {}
      for (const [code, value] of Object.entries(variables)) {
        const found = declared.get(code)
        if (found) overrides[found.id] = { variableId: found.id, code_name: code, value }
      }
      if (Object.keys(overrides).length > 0) request.variables_override = overrides
      if (input.limit !== undefined && input.limit !== null) {
        node = {
          ...query,
          query: `SELECT * FROM (${query.query as string}) LIMIT ${input.limit} OFFSET ${input.offset ?? 0}`,
        }
        request.query = node
      }
      return request
    }
    const filters: Record<string, unknown> = { ...(input.filters_override ?? {}) }
    if ('date_from' in variables) filters.date_from = variables.date_from
    if ('date_to' in variables) filters.date_to = variables.date_to
    const breakdowns = breakdownsOf(query)
    const breakdown = breakdowns.length === 1 ? breakdowns[0] : null
    if (breakdown !== null && breakdown in variables) {
      const filter = isObject(query.breakdownFilter) ? query.breakdownFilter : {}
      const existing = Array.isArray(filters.properties) ? filters.properties : []
      filters.properties = [
        ...existing,
        {
          key: breakdown,
          value: variables[breakdown],
          operator: 'exact',
          type: typeof filter.breakdown_type === 'string' ? filter.breakdown_type : 'event',
        },
      ]
    }
    if (Object.keys(filters).length > 0) request.filters_override = filters
    return request
  }

  /** PostHog's run answer: results first, debug-only fields gone, the version added. */
  function shape(body: Record<string, unknown>, version: EndpointVersionRow, debug: boolean) {
    const { results, ...rest } = body
    // `results` first, as PostHog answers (null while an asynchronous run is still going)
    const out: Record<string, unknown> = { results: results ?? null }
    for (const [k, v] of Object.entries(rest)) if (debug || !DEBUG_ONLY.includes(k)) out[k] = v
    out.endpoint_version = version.version
    out.endpoint_version_created_at = version.created_at
    return out
  }

  function page<T>(items: T[], input: RunInput): T[] {
    if (input.limit === undefined || input.limit === null) return items
    const offset = input.offset ?? 0
    return items.slice(offset, offset + input.limit)
  }

  async function materialized(
    query: Record<string, unknown>,
    version: EndpointVersionRow,
    input: RunInput,
    variables: Record<string, unknown>,
  ): Promise<Record<string, unknown> | undefined> {
    if (version.is_materialized !== 1 || input.refresh === 'direct') return undefined
    const row = await store.materialization(version.id)
    if (!row?.shape || !isFresh(row, deps.clock())) return undefined
    const stored = JSON.parse(row.shape) as MaterializedShape
    const at = row.last_materialized_at
    if (stored.kind === 'hogql') {
      const variable = stored.variable === null ? null : { name: stored.variable, value: variables[stored.variable] }
      const limit = input.limit ?? DEFAULT_ROWS
      const offset = input.offset ?? 0
      const read = await deps.sync.readHogQL(row, variable, { limit, offset })
      const hasMore = read.rows.length > limit
      return {
        results: read.rows.slice(0, limit),
        columns: read.columns,
        types: read.columns.map((c, i) => [c, read.types[i]]),
        hasMore,
        limit,
        offset,
        query: query.query,
        error: null,
        is_cached: false,
        last_refresh: at,
        endpoint_materialized: true,
        endpoint_materialized_at: at,
      }
    }
    const value = stored.breakdown === null ? null : variables[stored.breakdown]
    const items = await deps.sync.readInsight(row, value === null || value === undefined ? null : String(value))
    return {
      ...stored.envelope,
      results: page(items, input),
      is_cached: false,
      last_refresh: at,
      endpoint_materialized: true,
      endpoint_materialized_at: at,
    }
  }

  /** The live answer, from the result cache while younger than the version's cache age. */
  async function live(team: EndpointTeam, request: QueryRequest, version: EndpointVersionRow): Promise<QueryAnswer> {
    if (version.cache_age_seconds !== null && request.refresh === 'blocking') {
      const cached = await deps.queries.cached(team, request)
      const at =
        cached && typeof cached.last_refresh === 'string' ? new Date(cached.last_refresh).getTime() : Number.NaN
      if (cached && deps.clock().getTime() < at + version.cache_age_seconds * 1000) {
        return { statusCode: 200, body: cached }
      }
      request = { ...request, refresh: 'force_blocking' }
    }
    try {
      return await deps.queries.query(team, request)
    } catch (error) {
      if (error instanceof ApiError && error.statusCode === 400 && error.type === 'validation_error') {
        throw new ApiError(400, 'validation_error', error.code, `Query execution failed: ${error.detail}`, error.attr)
      }
      throw error
    }
  }

  return {
    async run(
      team: EndpointTeam,
      name: string,
      input: RunInput,
      options: { queryVersion?: string; personalKey: boolean },
    ): Promise<QueryAnswer> {
      const row = await deps.service.getRow(team.id, name)
      if (row.is_active !== 1) throw new NotFound()
      if (input.query_override !== undefined && input.query_override !== null) {
        throw new ValidationError('query_override is not allowed. Use variables instead.', 'query_override')
      }
      if (input.offset !== undefined && input.offset !== null && (input.limit === undefined || input.limit === null)) {
        throw new ValidationError('offset requires limit to be set', 'offset')
      }
      const versionNumber = versionNumberOf(input, options.queryVersion)
      const version =
        versionNumber === undefined ? await deps.service.latest(row) : await store.version(row.id, versionNumber)
      if (!version) {
        throw new RunRefusal(404, 'not_found', `Version ${versionNumber} not found for endpoint '${name}'`, {
          current_version: row.current_version,
        })
      }
      if (version.is_active !== 1) {
        throw new RunRefusal(400, 'invalid_input', `Version ${version.version} is inactive and cannot be executed.`)
      }
      const query = JSON.parse(version.query) as Record<string, unknown>
      const isMaterialized = version.is_materialized === 1
      if (input.refresh === 'direct' && !isMaterialized) {
        throw new ValidationError(
          "'direct' refresh mode is only valid for materialized endpoints. Use 'cache' or 'force' instead, or " +
            'enable materialization on this endpoint.',
          'refresh',
        )
      }
      modeOf(input.refresh)
      if (isObject(input.filters_override) && query.kind === 'HogQLQuery') {
        throw new ValidationError(
          'filters_override is not supported for HogQL endpoints. Use variables instead.',
          'filters_override',
        )
      }
      const variables = isObject(input.variables) ? input.variables : {}
      checkVariables(query, variables, isMaterialized)

      if (options.personalKey) await store.recordExecution(row.id, deps.clock().toISOString())

      const fromTable = await materialized(query, version, input, variables)
      if (fromTable) return { statusCode: 200, body: shape(fromTable, version, input.debug === true) }

      const answer = await live(team, liveRequest(name, query, input, variables), version)
      const body = answer.body
      if (query.kind !== 'HogQLQuery' && Array.isArray(body.results)) body.results = page(body.results, input)
      const status = isObject(body.query_status) && body.query_status.complete === false ? 202 : answer.statusCode
      return { statusCode: status, body: shape(body, version, input.debug === true) }
    },

    /** `POST last_execution_times/`: when each named endpoint last ran with a personal API key (6 months). */
    async lastExecutionTimes(teamId: number, names: unknown[]) {
      for (const name of names) {
        if (typeof name !== 'string' || !ENDPOINT_NAME.test(name)) {
          throw new ValidationError(`Invalid endpoint name: ${String(name)}`, 'names')
        }
      }
      const status = {
        id: '',
        team_id: teamId,
        complete: true,
        results: null as unknown[] | null,
        query_async: true,
        dashboard_id: null,
        end_time: null,
        error: false,
        error_message: null,
        expiration_time: null,
        insight_id: null,
        labels: null,
        pickup_time: null,
        query_progress: null,
        start_time: null,
        task_id: null,
      }
      if (names.length === 0) return { query_status: status }
      const since = deps.clock().getTime() - SIX_MONTHS_MS
      const rows = await store.byNames(teamId, names as string[])
      status.results = rows
        .filter((r) => r.last_executed_at !== null && new Date(r.last_executed_at).getTime() >= since)
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((r) => [r.name, r.last_executed_at])
      return { query_status: status }
    },
  }
}

export type EndpointRunner = ReturnType<typeof createEndpointRunner>
