import { type Static, Type } from 'typebox'

export const FlagParams = Type.Object({ projectId: Type.String(), id: Type.Integer({ minimum: 1 }) })
export const ProjectOnlyParams = Type.Object({ projectId: Type.String() })

export const FlagListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
  search: Type.Optional(Type.String()),
  active: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('STALE')])),
  type: Type.Optional(Type.Union([Type.Literal('boolean'), Type.Literal('multivariant'), Type.Literal('experiment')])),
  created_by_id: Type.Optional(Type.Integer({ minimum: 1 })),
  evaluation_runtime: Type.Optional(Type.String()),
})
export type FlagListQuery = Static<typeof FlagListQuery>

const Runtime = Type.Union([Type.Literal('server'), Type.Literal('client'), Type.Literal('all')])
const Bucketing = Type.Union([Type.Literal('distinct_id'), Type.Literal('device_id'), Type.Null()])
const Tags = Type.Array(Type.String({ minLength: 1, maxLength: 400 }), { maxItems: 100 })

/** Fields accepted on PATCH; POST also requires `key`. `filters` is checked by the service (clear messages). */
export const FlagUpdate = Type.Object({
  key: Type.Optional(Type.String({ maxLength: 400 })),
  name: Type.Optional(Type.String({ maxLength: 4000 })),
  filters: Type.Optional(Type.Unknown()),
  active: Type.Optional(Type.Boolean()),
  deleted: Type.Optional(Type.Boolean()),
  ensure_experience_continuity: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  evaluation_runtime: Type.Optional(Runtime),
  evaluation_tags: Type.Optional(Tags),
  tags: Type.Optional(Tags),
  bucketing_identifier: Type.Optional(Bucketing),
  /** The version the editor loaded: with `original_flag`, a stale version that touches changed fields is a 409. */
  version: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  /** The flag as the editor loaded it (PostHog's conflict check compares against it). */
  original_flag: Type.Optional(Type.Unknown()),
  /** Create-time shortcut: one condition without properties at this rollout. */
  rollout_percentage: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 100 }), Type.Null()])),
})
export type FlagUpdate = Static<typeof FlagUpdate>

export const FlagCreate = Type.Object({ ...FlagUpdate.properties, key: Type.String({ maxLength: 400 }) })
export type FlagCreate = Static<typeof FlagCreate>

const UserBasic = Type.Union([
  Type.Object({
    id: Type.Integer(),
    uuid: Type.String(),
    distinct_id: Type.String(),
    first_name: Type.String(),
    last_name: Type.String(),
    email: Type.String(),
  }),
  Type.Null(),
])

export const FeatureFlag = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  key: Type.String(),
  filters: Type.Unknown(),
  deleted: Type.Boolean(),
  active: Type.Boolean(),
  created_by: UserBasic,
  last_modified_by: UserBasic,
  created_at: Type.String(),
  updated_at: Type.String(),
  version: Type.Integer(),
  is_simple_flag: Type.Boolean(),
  rollout_percentage: Type.Union([Type.Number(), Type.Null()]),
  ensure_experience_continuity: Type.Boolean(),
  evaluation_runtime: Runtime,
  evaluation_tags: Type.Array(Type.String()),
  tags: Type.Array(Type.String()),
  bucketing_identifier: Bucketing,
  experiment_set: Type.Array(Type.Integer()),
  surveys: Type.Array(Type.Unknown()),
  features: Type.Array(Type.Unknown()),
  can_edit: Type.Boolean(),
  has_encrypted_payloads: Type.Boolean(),
  is_remote_configuration: Type.Boolean(),
  status: Type.String(),
})
export type FeatureFlag = Static<typeof FeatureFlag>

export const FeatureFlagPage = Type.Object({
  count: Type.Integer(),
  next: Type.Union([Type.String(), Type.Null()]),
  previous: Type.Union([Type.String(), Type.Null()]),
  results: Type.Array(FeatureFlag),
})

export const ActivityQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  page: Type.Optional(Type.Integer({ minimum: 1 })),
})
export type ActivityQuery = Static<typeof ActivityQuery>

export const ActivityPage = Type.Object({
  results: Type.Array(
    Type.Object({
      id: Type.Integer(),
      user: Type.Union([Type.Object({ first_name: Type.String(), email: Type.String() }), Type.Null()]),
      activity: Type.String(),
      scope: Type.String(),
      item_id: Type.Union([Type.String(), Type.Null()]),
      detail: Type.Unknown(),
      created_at: Type.String(),
    }),
  ),
  next: Type.Union([Type.String(), Type.Null()]),
  previous: Type.Union([Type.String(), Type.Null()]),
  total_count: Type.Optional(Type.Integer()),
})
