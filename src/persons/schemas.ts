import { type Static, Type } from 'typebox'
import { Nullable } from '../http/nullable.js'

export const PersonsParams = Type.Object({ projectId: Type.String() })
export const PersonParams = Type.Object({ projectId: Type.String(), id: Type.String() })

export const Person = Type.Object({
  /** The person's UUID (PostHog's integer primary key does not exist here; either form is accepted on reads). */
  id: Type.String(),
  uuid: Type.String(),
  name: Type.String(),
  distinct_ids: Type.Array(Type.String()),
  properties: Type.Record(Type.String(), Type.Unknown()),
  created_at: Type.String(),
  is_identified: Type.Boolean(),
})
export type Person = Static<typeof Person>

export const PersonListQuery = Type.Object({
  search: Type.Optional(Type.String({ description: 'Email or name (substring, any case) or a distinct id (exact)' })),
  properties: Type.Optional(Type.String({ description: 'JSON list (or group) of person property filters' })),
  distinct_id: Type.Optional(Type.String({ description: 'Only the person with this distinct id' })),
  email: Type.Optional(Type.String({ description: 'Persons whose `email` property is exactly this' })),
  cohort: Type.Optional(Type.Integer({ minimum: 1, description: 'Only members of this cohort' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
  format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')])),
})
export type PersonListQuery = Static<typeof PersonListQuery>

export const PersonPage = Type.Object({
  next: Nullable(Type.String()),
  previous: Nullable(Type.String()),
  results: Type.Array(Person),
})

export const PersonDeleteQuery = Type.Object({
  delete_events: Type.Optional(Type.Boolean({ description: 'Also delete every event of the person (in background)' })),
})

export const BulkDeleteBody = Type.Object({
  ids: Type.Optional(Type.Array(Type.String(), { maxItems: 1000 })),
  distinct_ids: Type.Optional(Type.Array(Type.String(), { maxItems: 1000 })),
  delete_events: Type.Optional(Type.Boolean()),
})
export type BulkDeleteBody = Static<typeof BulkDeleteBody>

export const UpdatePropertyBody = Type.Object({
  key: Type.Optional(Type.String()),
  value: Type.Optional(Type.Unknown()),
})
export const DeletePropertyBody = Type.Object({ $unset: Type.Optional(Type.String()) })
export const PersonUpdateBody = Type.Object({ properties: Type.Optional(Type.Record(Type.String(), Type.Unknown())) })
export const SplitBody = Type.Object({ main_distinct_id: Type.Optional(Nullable(Type.String())) })
export const Success = Type.Object({ success: Type.Boolean() })

export const PersonDeletion = Type.Object({
  id: Type.String(),
  person_id: Nullable(Type.String()),
  distinct_ids: Type.Array(Type.String()),
  delete_events: Type.Boolean(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('done')]),
  requested_at: Type.String(),
  finished_at: Nullable(Type.String()),
})
export type PersonDeletion = Static<typeof PersonDeletion>

export const BulkDeleteResult = Type.Object({ deletions: Type.Array(PersonDeletion) })

export const PropertyValue = Type.Object({ name: Type.Unknown(), count: Type.Integer() })
export const ValuesQuery = Type.Object({ key: Type.Optional(Type.String()), value: Type.Optional(Type.String()) })
export const CohortsQuery = Type.Object({ person_id: Type.Optional(Type.String()) })
