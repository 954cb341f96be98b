import { type Static, Type } from 'typebox'

export const ProjectParams = Type.Object({ projectId: Type.String() })

export const Project = Type.Object({
  id: Type.Integer(),
  uuid: Type.String(),
  organization: Type.String(),
  api_token: Type.String(),
  name: Type.String(),
  timezone: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
})
export type Project = Static<typeof Project>

export const ProjectCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  timezone: Type.Optional(Type.String()),
})
export type ProjectCreate = Static<typeof ProjectCreate>

export const ProjectUpdate = Type.Partial(ProjectCreate)
export type ProjectUpdate = Static<typeof ProjectUpdate>
