import { type Static, Type } from 'typebox'
import { Nullable } from '../http/nullable.js'

export const GroupsParams = Type.Object({ projectId: Type.String() })

export const Group = Type.Object({
  group_type_index: Type.Integer(),
  group_key: Type.String(),
  group_properties: Type.Record(Type.String(), Type.Unknown()),
  created_at: Type.String(),
})
export type Group = Static<typeof Group>

export const GroupListQuery = Type.Object({
  group_type_index: Type.Optional(Type.Integer({ minimum: 0, maximum: 4 })),
  search: Type.Optional(Type.String({ description: 'Key or property values containing this' })),
  cursor: Type.Optional(Type.String({ description: 'From a `next` or `previous` link' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
})
export type GroupListQuery = Static<typeof GroupListQuery>

export const GroupPage = Type.Object({
  next: Nullable(Type.String()),
  previous: Nullable(Type.String()),
  results: Type.Array(Group),
})

export const GroupFindQuery = Type.Object({
  group_type_index: Type.Optional(Type.Integer({ minimum: 0, maximum: 4 })),
  group_key: Type.Optional(Type.String()),
})

export const GroupValuesQuery = Type.Object({
  group_type_index: Type.Optional(Type.Integer({ minimum: 0, maximum: 4 })),
  key: Type.Optional(Type.String()),
  value: Type.Optional(Type.String()),
})

export const GroupType = Type.Object({
  group_type: Type.String(),
  group_type_index: Type.Integer(),
  name_singular: Nullable(Type.String()),
  name_plural: Nullable(Type.String()),
})
export type GroupType = Static<typeof GroupType>

export const GroupTypeUpdate = Type.Array(
  Type.Object({
    group_type_index: Type.Integer({ minimum: 0, maximum: 4 }),
    name_singular: Type.Optional(Nullable(Type.String({ maxLength: 400 }))),
    name_plural: Type.Optional(Nullable(Type.String({ maxLength: 400 }))),
  }),
  { maxItems: 5 },
)
export type GroupTypeUpdate = Static<typeof GroupTypeUpdate>

export const NameCount = Type.Object({ name: Type.Unknown(), count: Type.Integer() })
