import { type Static, type TSchema, Type } from 'typebox'
import { Nullable as NullOr } from '../http/nullable.js'

/** An optional field that may also be null (queries' settings are all optional). */
const Nullable = <T extends TSchema>(schema: T) => Type.Optional(NullOr(schema))

export const ProjectParams = Type.Object({ projectId: Type.String() })
export const QueryIdParams = Type.Object({ projectId: Type.String(), queryId: Type.String({ maxLength: 200 }) })

/** A query node: any JSON object with a `kind`; each runner validates its own fields. */
export const QueryNodeSchema = Type.Object({ kind: Type.String({ minLength: 1 }) }, { additionalProperties: true })

export const QueryRequestBody = Type.Object(
  {
    query: QueryNodeSchema,
    client_query_id: Nullable(Type.String({ maxLength: 128 })),
    refresh: Nullable(Type.Union([Type.String(), Type.Boolean()])),
    async: Nullable(Type.Boolean()),
    filters_override: Nullable(Type.Object({}, { additionalProperties: true })),
    variables_override: Nullable(Type.Object({}, { additionalProperties: true })),
    name: Nullable(Type.String({ maxLength: 128 })),
    limit_context: Nullable(Type.String()),
    personal_api_key: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
)
export type QueryRequestBody = Static<typeof QueryRequestBody>

export const UpgradeBody = Type.Object(
  { query: QueryNodeSchema, personal_api_key: Type.Optional(Type.String()) },
  { additionalProperties: false },
)

export const AnyObject = Type.Object({}, { additionalProperties: true })
export const UpgradeResponse = Type.Object({ query: AnyObject })
export const QueryStatusResponse = Type.Object({ query_status: AnyObject })
