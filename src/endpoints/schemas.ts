import { type Static, Type } from 'typebox'
import { Nullable } from '../http/nullable.js'
import { UserBasic } from '../insights/schemas.js'

export const ProjectParams = Type.Object({ projectId: Type.String() })
export const EndpointParams = Type.Object({ projectId: Type.String(), name: Type.String({ maxLength: 400 }) })
export const VersionParams = Type.Object({
  projectId: Type.String(),
  name: Type.String({ maxLength: 400 }),
  versionNumber: Type.Integer({ minimum: 0 }),
})

const QueryNode = Type.Object({ kind: Type.String({ maxLength: 100 }) }, { additionalProperties: true })

/** Spec §2.4: fields accepted on create and PATCH. */
export const EndpointInput = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 400 })),
  description: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
  query: Type.Optional(Nullable(QueryNode)),
  derived_from_insight: Type.Optional(Nullable(Type.String({ maxLength: 12 }))),
  is_active: Type.Optional(Type.Boolean()),
  is_materialized: Type.Optional(Type.Boolean()),
  cache_age_seconds: Type.Optional(Nullable(Type.Number())),
  sync_frequency: Type.Optional(Nullable(Type.String({ maxLength: 20 }))),
})
export type EndpointInput = Static<typeof EndpointInput>

export const EndpointListQuery = Type.Object({
  is_active: Type.Optional(Type.Boolean()),
  created_by: Type.Optional(Type.Integer()),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
})

export const VersionQuery = Type.Object({ version: Type.Optional(Type.Integer({ minimum: 0 })) })

export const Materialization = Type.Object({
  status: Type.Optional(Type.String()),
  can_materialize: Type.Boolean(),
  reason: Type.Optional(Nullable(Type.String())),
  last_materialized_at: Type.Optional(Nullable(Type.String())),
  error: Type.Optional(Type.String()),
  sync_frequency: Type.Optional(Type.String()),
  last_run_at: Type.Optional(Nullable(Type.String())),
  next_run_at: Type.Optional(Nullable(Type.String())),
})

const AnyObject = Type.Object({}, { additionalProperties: true })

export const Endpoint = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  query: AnyObject,
  is_active: Type.Boolean(),
  cache_age_seconds: Nullable(Type.Number()),
  endpoint_path: Type.String(),
  url: Type.String(),
  ui_url: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  created_by: Nullable(UserBasic),
  is_materialized: Type.Boolean(),
  current_version: Type.Integer(),
  versions_count: Type.Integer(),
  derived_from_insight: Nullable(Type.String()),
  last_executed_at: Nullable(Type.String()),
  materialization: Materialization,
  // present when one version is asked for (`?version=N`)
  version: Type.Optional(Type.Integer()),
  version_id: Type.Optional(Type.String()),
  endpoint_is_active: Type.Optional(Type.Boolean()),
  version_created_at: Type.Optional(Type.String()),
  version_created_by: Type.Optional(Nullable(UserBasic)),
})

export const EndpointPage = Type.Object({
  count: Type.Integer(),
  next: Nullable(Type.String()),
  previous: Nullable(Type.String()),
  results: Type.Array(Endpoint),
})

export const EndpointVersion = Type.Object({
  id: Type.String(),
  version: Type.Integer(),
  query: AnyObject,
  description: Type.String(),
  cache_age_seconds: Nullable(Type.Number()),
  is_active: Type.Boolean(),
  is_materialized: Type.Boolean(),
  created_at: Type.String(),
  created_by: Nullable(UserBasic),
})

/** Run options (POST body, or the query string of GET). */
export const RunBody = Type.Object({
  client_query_id: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  refresh: Type.Optional(Nullable(Type.String({ maxLength: 40 }))),
  variables: Type.Optional(Nullable(AnyObject)),
  version: Type.Optional(Nullable(Type.Union([Type.Integer(), Type.String({ maxLength: 40 })]))),
  debug: Type.Optional(Nullable(Type.Boolean())),
  filters_override: Type.Optional(Nullable(AnyObject)),
  query_override: Type.Optional(Type.Unknown()),
  limit: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 50_000 }))),
  offset: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 10_000_000 }))),
})

export const RunQuery = Type.Object(
  {
    client_query_id: Type.Optional(Type.String({ maxLength: 200 })),
    refresh: Type.Optional(Type.String({ maxLength: 40 })),
    variables: Type.Optional(Type.String({ maxLength: 100_000 })),
    version: Type.Optional(Type.String({ maxLength: 40 })),
    debug: Type.Optional(Type.Boolean()),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50_000 })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000 })),
  },
  { additionalProperties: true },
)

export const RunResult = Type.Object(
  {
    results: Type.Unknown(),
    endpoint_version: Type.Integer(),
    endpoint_version_created_at: Type.String(),
  },
  { additionalProperties: true },
)

export const LastExecutionBody = Type.Object({ names: Type.Array(Type.Unknown(), { maxItems: 1000 }) })

export const QueryStatusEnvelope = Type.Object({
  query_status: Type.Object({
    id: Type.String(),
    team_id: Type.Integer(),
    complete: Type.Boolean(),
    results: Nullable(Type.Array(Type.Array(Nullable(Type.String())))),
    query_async: Type.Boolean(),
    dashboard_id: Type.Null(),
    end_time: Type.Null(),
    error: Type.Boolean(),
    error_message: Type.Null(),
    expiration_time: Type.Null(),
    insight_id: Type.Null(),
    labels: Type.Null(),
    pickup_time: Type.Null(),
    query_progress: Type.Null(),
    start_time: Type.Null(),
    task_id: Type.Null(),
  }),
})

export const ErrorBody = Type.Object(
  { type: Type.String(), code: Type.String(), detail: Type.String(), attr: Nullable(Type.String()) },
  { additionalProperties: true },
)
export { AnyObject }
