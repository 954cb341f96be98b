import { type Static, Type } from 'typebox'
import { Nullable } from '../http/nullable.js'

export const ProjectParams = Type.Object({ projectId: Type.String() })
export const InsightParams = Type.Object({ projectId: Type.String(), id: Type.Integer({ minimum: 1 }) })

/** A query node: a JSON object with a `kind`; the query service checks the rest when it runs. */
export const QueryNodeInput = Type.Object(
  { kind: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: true },
)

const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 })

/** Fields accepted on create and PATCH (PostHog's InsightSerializer writable fields). */
export const InsightInput = Type.Object({
  name: Type.Optional(Nullable(Type.String({ maxLength: 400 }))),
  derived_name: Type.Optional(Nullable(Type.String({ maxLength: 400 }))),
  description: Type.Optional(Nullable(Type.String({ maxLength: 400 }))),
  query: Type.Optional(Nullable(QueryNodeInput)),
  filters: Type.Optional(Type.Object({}, { additionalProperties: true })),
  tags: Type.Optional(Tags),
  favorited: Type.Optional(Type.Boolean()),
  saved: Type.Optional(Type.Boolean()),
  deleted: Type.Optional(Type.Boolean()),
  dashboards: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 500 })),
})
export type InsightInput = Static<typeof InsightInput>

/** `?refresh=` and the dashboard context an insight may be read in. */
export const InsightReadQuery = Type.Object({
  refresh: Type.Optional(Type.String({ maxLength: 40 })),
  from_dashboard: Type.Optional(Type.Integer({ minimum: 1 })),
  filters_override: Type.Optional(Type.String({ maxLength: 100_000 })),
  variables_override: Type.Optional(Type.String({ maxLength: 100_000 })),
})
export type InsightReadQuery = Static<typeof InsightReadQuery>

export const InsightListQuery = Type.Object({
  ...InsightReadQuery.properties,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
  saved: Type.Optional(Type.String({ maxLength: 10 })),
  favorited: Type.Optional(Type.String({ maxLength: 10 })),
  user: Type.Optional(Type.String({ maxLength: 10 })),
  basic: Type.Optional(Type.String({ maxLength: 10 })),
  search: Type.Optional(Type.String({ maxLength: 400 })),
  short_id: Type.Optional(Type.String({ maxLength: 20 })),
  created_by: Type.Optional(Type.String({ maxLength: 2000 })),
  insight: Type.Optional(Type.String({ maxLength: 40 })),
  dashboards: Type.Optional(Type.String({ maxLength: 2000 })),
  tags: Type.Optional(Type.String({ maxLength: 4000 })),
  order: Type.Optional(Type.String({ maxLength: 40 })),
})
export type InsightListQuery = Static<typeof InsightListQuery>

export const UserBasic = Type.Object({
  id: Type.Integer(),
  uuid: Type.String(),
  distinct_id: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
  email: Type.String(),
  is_email_verified: Nullable(Type.Boolean()),
})
export type UserBasic = Static<typeof UserBasic>

export const DashboardTileRef = Type.Object({
  id: Type.Integer(),
  dashboard_id: Type.Integer(),
  deleted: Nullable(Type.Boolean()),
})

const AnyValue = Type.Unknown()

/** PostHog's insight as the list (`basic=true`) shows it. */
export const InsightBasic = Type.Object({
  id: Type.Integer(),
  short_id: Type.String(),
  name: Nullable(Type.String()),
  derived_name: Nullable(Type.String()),
  favorited: Type.Boolean(),
  filters: Type.Record(Type.String(), AnyValue),
  query: Nullable(Type.Record(Type.String(), AnyValue)),
  dashboards: Type.Array(Type.Integer()),
  dashboard_tiles: Type.Array(DashboardTileRef),
  description: Nullable(Type.String()),
  last_refresh: Nullable(Type.String()),
  refreshing: Type.Boolean(),
  saved: Type.Boolean(),
  updated_at: Type.String(),
  created_by: Nullable(UserBasic),
  created_at: Type.String(),
  last_modified_at: Type.String(),
  tags: Type.Array(Type.String()),
  user_access_level: Type.String(),
  last_viewed_at: Nullable(Type.String()),
})
export type InsightBasic = Static<typeof InsightBasic>

/** PostHog's full insight, with its result when one was asked for or is cached. */
export const Insight = Type.Object({
  ...InsightBasic.properties,
  order: Nullable(Type.Integer()),
  deleted: Type.Boolean(),
  result: AnyValue,
  hasMore: AnyValue,
  columns: AnyValue,
  types: AnyValue,
  hogql: AnyValue,
  is_cached: Type.Boolean(),
  cache_target_age: Nullable(Type.String()),
  next_allowed_client_refresh: Nullable(Type.String()),
  query_status: AnyValue,
  resolved_date_range: AnyValue,
  timezone: Nullable(Type.String()),
  last_modified_by: Nullable(UserBasic),
  is_sample: Type.Boolean(),
  effective_restriction_level: Type.Integer(),
  effective_privilege_level: Type.Integer(),
  alerts: Type.Array(AnyValue),
})
export type Insight = Static<typeof Insight>

export const InsightPage = Type.Object({
  count: Type.Integer(),
  next: Nullable(Type.String()),
  previous: Nullable(Type.String()),
  results: Type.Array(Type.Union([Insight, InsightBasic])),
})

export const ActivityPage = Type.Object({
  results: Type.Array(
    Type.Object({
      id: Type.Integer(),
      user: Nullable(Type.Object({ first_name: Type.String(), email: Type.String() })),
      activity: Type.String(),
      scope: Type.String(),
      item_id: Nullable(Type.String()),
      detail: AnyValue,
      created_at: Type.String(),
    }),
  ),
  next: Nullable(Type.String()),
  previous: Nullable(Type.String()),
})
