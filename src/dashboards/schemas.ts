import { type Static, Type } from 'typebox'
import { Nullable } from '../http/nullable.js'
import { Insight, UserBasic } from '../insights/schemas.js'

export const ProjectParams = Type.Object({ projectId: Type.String() })
export const DashboardParams = Type.Object({ projectId: Type.String(), id: Type.Integer({ minimum: 1 }) })

const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { maxItems: 100 })

/** Dashboard-level filters, applied to every tile's query when the dashboard is read with results. */
export const DashboardFilters = Type.Object(
  {
    date_from: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
    date_to: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
    explicitDate: Type.Optional(Nullable(Type.Boolean())),
    properties: Type.Optional(
      Nullable(
        Type.Union([
          Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: 200 }),
          Type.Object({ type: Type.String(), values: Type.Array(Type.Unknown()) }, { additionalProperties: true }),
        ]),
      ),
    ),
    breakdown_filter: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
  },
  { additionalProperties: false },
)
export type DashboardFilters = Static<typeof DashboardFilters>

/** A tile as PATCH `tiles` changes it: layouts, colour, removal, or a text card's body. */
export const TileInput = Type.Object({
  id: Type.Optional(Type.Integer({ minimum: 1 })),
  layouts: Type.Optional(Type.Object({}, { additionalProperties: true })),
  color: Type.Optional(Nullable(Type.String({ maxLength: 400 }))),
  deleted: Type.Optional(Type.Boolean()),
  text: Type.Optional(
    Nullable(Type.Object({ body: Type.String({ maxLength: 4000 }) }, { additionalProperties: true })),
  ),
  insight: Type.Optional(Type.Unknown()),
})
export type TileInput = Static<typeof TileInput>

export const DashboardInput = Type.Object({
  name: Type.Optional(Nullable(Type.String({ maxLength: 400 }))),
  description: Type.Optional(Type.String({ maxLength: 4000 })),
  pinned: Type.Optional(Type.Boolean()),
  tags: Type.Optional(Tags),
  filters: Type.Optional(DashboardFilters),
  variables: Type.Optional(Nullable(Type.Record(Type.String(), Type.Object({}, { additionalProperties: true })))),
  deleted: Type.Optional(Type.Boolean()),
  delete_insights: Type.Optional(Type.Boolean()),
  tiles: Type.Optional(Type.Array(TileInput, { maxItems: 500 })),
  /** Create-time: copy another dashboard's tiles. */
  use_dashboard: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  creation_mode: Type.Optional(Type.String({ maxLength: 40 })),
})
export type DashboardInput = Static<typeof DashboardInput>

export const DashboardReadQuery = Type.Object({
  refresh: Type.Optional(Type.String({ maxLength: 40 })),
  filters_override: Type.Optional(Type.String({ maxLength: 100_000 })),
  variables_override: Type.Optional(Type.String({ maxLength: 100_000 })),
})
export type DashboardReadQuery = Static<typeof DashboardReadQuery>

export const DashboardListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
  search: Type.Optional(Type.String({ maxLength: 400 })),
  pinned: Type.Optional(Type.String({ maxLength: 10 })),
})
export type DashboardListQuery = Static<typeof DashboardListQuery>

const AnyRecord = Type.Record(Type.String(), Type.Unknown())

/** PostHog's DashboardBasicSerializer: what the list shows. */
export const DashboardBasic = Type.Object({
  id: Type.Integer(),
  name: Nullable(Type.String()),
  description: Type.String(),
  pinned: Type.Boolean(),
  created_at: Type.String(),
  created_by: Nullable(UserBasic),
  last_accessed_at: Nullable(Type.String()),
  is_shared: Type.Boolean(),
  deleted: Type.Boolean(),
  creation_mode: Type.String(),
  tags: Type.Array(Type.String()),
  restriction_level: Type.Integer(),
  effective_restriction_level: Type.Integer(),
  effective_privilege_level: Type.Integer(),
  user_access_level: Type.String(),
  access_control_version: Type.String(),
  last_refreshed: Nullable(Type.String()),
  team_id: Type.Integer(),
})
export type DashboardBasic = Static<typeof DashboardBasic>

export const TextCard = Type.Object({
  id: Type.Integer(),
  body: Type.String(),
  created_by: Nullable(UserBasic),
  last_modified_at: Type.String(),
  last_modified_by: Nullable(UserBasic),
})

export const Tile = Type.Object({
  id: Type.Integer(),
  layouts: AnyRecord,
  color: Nullable(Type.String()),
  insight: Nullable(Insight),
  text: Nullable(TextCard),
  deleted: Nullable(Type.Boolean()),
  is_cached: Type.Boolean(),
  last_refresh: Nullable(Type.String()),
  order: Type.Integer(),
  error: Nullable(Type.Object({ type: Type.String(), code: Type.String(), detail: Type.String() })),
})
export type Tile = Static<typeof Tile>

export const Dashboard = Type.Object({
  ...DashboardBasic.properties,
  filters: AnyRecord,
  variables: AnyRecord,
  persisted_filters: AnyRecord,
  persisted_variables: AnyRecord,
  breakdown_colors: Type.Array(Type.Unknown()),
  data_color_theme_id: Nullable(Type.Integer()),
  tiles: Type.Array(Tile),
})
export type Dashboard = Static<typeof Dashboard>

export const DashboardPage = Type.Object({
  count: Type.Integer(),
  next: Nullable(Type.String()),
  previous: Nullable(Type.String()),
  results: Type.Array(DashboardBasic),
})
