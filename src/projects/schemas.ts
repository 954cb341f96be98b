import { type Static, Type } from 'typebox'

export const ProjectParams = Type.Object({ projectId: Type.String() })

/** One path cleaning rule, as PostHog stores it (`order` is the frontend's, kept as given). */
export const PathCleaningFilter = Type.Object(
  {
    alias: Type.Optional(Type.Union([Type.String({ maxLength: 400 }), Type.Null()])),
    regex: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
    order: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
  },
  { additionalProperties: false },
)

export const Project = Type.Object({
  id: Type.Integer(),
  uuid: Type.String(),
  organization: Type.String(),
  api_token: Type.String(),
  name: Type.String(),
  timezone: Type.String(),
  /** 0 = Sunday, 1 = Monday */
  week_start_day: Type.Union([Type.Literal(0), Type.Literal(1)]),
  /** property filters that mark test accounts (insights' `filterTestAccounts`) */
  test_account_filters: Type.Array(Type.Record(Type.String(), Type.Unknown())),
  /** person properties shown as a person's name, in order of preference; null for PostHog's defaults */
  person_display_name_properties: Type.Union([Type.Array(Type.String()), Type.Null()]),
  /** rules that clean page paths (`regex` matches become `alias`), in order, for `doPathCleaning` */
  path_cleaning_filters: Type.Array(PathCleaningFilter),
  created_at: Type.String(),
  updated_at: Type.String(),
})
export type Project = Static<typeof Project>

export const ProjectCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  timezone: Type.Optional(Type.String()),
})
export type ProjectCreate = Static<typeof ProjectCreate>

export const ProjectUpdate = Type.Partial(
  Type.Object({
    ...ProjectCreate.properties,
    week_start_day: Type.Union([Type.Literal(0), Type.Literal(1), Type.Null()]),
    test_account_filters: Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 100 }),
    // one schema with both types, not a union: the validator would coerce a refused list to null
    person_display_name_properties: Type.Unsafe<string[] | null>({
      type: ['array', 'null'],
      items: { type: 'string', minLength: 1, maxLength: 400 },
      maxItems: 100,
    }),
    path_cleaning_filters: Type.Unsafe<Static<typeof PathCleaningFilter>[] | null>({
      type: ['array', 'null'],
      items: PathCleaningFilter,
      maxItems: 100,
    }),
  }),
)
export type ProjectUpdate = Static<typeof ProjectUpdate>
