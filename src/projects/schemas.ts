import { type Static, Type } from 'typebox'

export const ProjectParams = Type.Object({ projectId: Type.String() })

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
  }),
)
export type ProjectUpdate = Static<typeof ProjectUpdate>
