import { type Static, Type } from 'typebox'

export const CohortParams = Type.Object({ projectId: Type.String(), id: Type.Integer({ minimum: 1 }) })

const DistinctIds = Type.Array(Type.Union([Type.String({ minLength: 1, maxLength: 400 }), Type.Number()]), {
  maxItems: 100_000,
})

/**
 * Fields accepted on create and PATCH, as JSON or as multipart/form-data (src/cohorts/multipart.ts). Static cohorts
 * take their members as `distinct_ids` (JSON list) or `csv`: a CSV file uploaded in a form, as PostHog's UI does,
 * or its text in JSON.
 */
export const CohortInput = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 400 })),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  filters: Type.Optional(Type.Unknown()),
  /** Legacy form: a list of `{properties: [...]}` groups, ORed. */
  groups: Type.Optional(Type.Unknown()),
  is_static: Type.Optional(Type.Boolean()),
  deleted: Type.Optional(Type.Boolean()),
  distinct_ids: Type.Optional(DistinctIds),
  csv: Type.Optional(Type.String()),
  /** A static cohort's members as a query: PostHog's `ActorsQuery` with person property filters. */
  query: Type.Optional(Type.Unknown()),
})
export type CohortInput = Static<typeof CohortInput>

export const AddPersonsInput = Type.Object({ person_ids: Type.Array(Type.String(), { maxItems: 10_000 }) })
export type AddPersonsInput = Static<typeof AddPersonsInput>

export const CohortRecord = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  filters: Type.Unknown(),
  groups: Type.Array(Type.Unknown()),
  deleted: Type.Boolean(),
  is_static: Type.Boolean(),
  is_calculating: Type.Boolean(),
  errors_calculating: Type.Integer(),
  /** the last failed calculation's message, while the cohort has one */
  last_error_message: Type.Union([Type.String(), Type.Null()]),
  count: Type.Union([Type.Integer(), Type.Null()]),
  /** static, person_property, behavioral (performed events) or analytical (the other behavioural filters) */
  cohort_type: Type.Union([Type.String(), Type.Null()]),
  has_behavioral_filters: Type.Boolean(),
  is_analytical: Type.Boolean(),
  version: Type.Integer(),
  created_by: Type.Union([Type.Object({ id: Type.Integer(), email: Type.String() }), Type.Null()]),
  created_at: Type.String(),
  last_calculation: Type.Union([Type.String(), Type.Null()]),
})
export type CohortRecord = Static<typeof CohortRecord>

export const CohortListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
  /** part of the name, any case */
  search: Type.Optional(Type.String({ maxLength: 400 })),
  /** static, dynamic, person_property, behavioral or analytical */
  type: Type.Optional(Type.String({ maxLength: 40 })),
})
export type CohortListQuery = Static<typeof CohortListQuery>

export const CohortPage = Type.Object({
  count: Type.Integer(),
  next: Type.Union([Type.String(), Type.Null()]),
  previous: Type.Union([Type.String(), Type.Null()]),
  results: Type.Array(CohortRecord),
})
