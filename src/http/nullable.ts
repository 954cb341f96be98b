import { type Static, type TSchema, Type } from 'typebox'

const SCALARS = new Set(['string', 'number', 'integer', 'boolean'])

/**
 * A value or null. Request bodies are validated with type coercion, and ajv coerces a union branch by branch: as
 * `anyOf [number, null]` a client's `null` became `0` before the null branch was seen (and as `anyOf [null,
 * number]` a `0` would become `null`). A scalar is therefore written as one schema with `type: [T, 'null']`, which
 * ajv coerces only when the value is neither. Other schemas (objects, arrays, unions) stay a union: ajv does not
 * coerce null into them.
 */
export function Nullable<T extends TSchema>(schema: T) {
  const { type, const: only, enum: among } = schema as { type?: unknown; const?: unknown; enum?: unknown }
  if (typeof type === 'string' && SCALARS.has(type) && only === undefined && among === undefined) {
    return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'] })
  }
  return Type.Union([schema, Type.Null()])
}
