import { ValidationError } from '../http/errors.js'

/** A request body as an object of fields (anything else reads as an empty body, so every field is missing). */
export function fieldsOf(body: unknown): Record<string, unknown> {
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {}
}

/**
 * A string field with DRF's CharField rules and messages: missing → `required`, null → `null`, blank → `blank`
 * (whitespace trimmed unless `trim` is false), numbers read as text, anything else `invalid_input`.
 */
export function stringField(
  body: Record<string, unknown>,
  name: string,
  options: { required?: boolean; allowBlank?: boolean; trim?: boolean; maxLength?: number } = {},
): string | undefined {
  const { required = true, allowBlank = false, trim = true, maxLength } = options
  const raw = body[name]
  if (raw === undefined) {
    if (required) throw new ValidationError('This field is required.', name, 'required')
    return undefined
  }
  if (raw === null) throw new ValidationError('This field may not be null.', name, 'null')
  if (typeof raw !== 'string' && typeof raw !== 'number') {
    throw new ValidationError('Not a valid string.', name, 'invalid_input')
  }
  const value = trim ? String(raw).trim() : String(raw)
  if (!value && !allowBlank) throw new ValidationError('This field may not be blank.', name, 'blank')
  if (maxLength !== undefined && value.length > maxLength) {
    throw new ValidationError(`Ensure this field has no more than ${maxLength} characters.`, name, 'max_length')
  }
  return value
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** An e-mail address, lower-cased (PostHog normalizes addresses at sign-up). */
export function emailField(body: Record<string, unknown>, name: string, required = true): string | undefined {
  const value = stringField(body, name, { required, maxLength: 254 })
  if (value === undefined) return undefined
  if (!EMAIL.test(value)) throw new ValidationError('Enter a valid email address.', name, 'invalid_input')
  return value.toLowerCase()
}
