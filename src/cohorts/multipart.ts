// Cohort create and PATCH as multipart/form-data, as PostHog's UI sends a static cohort's CSV file: the form's
// fields become the same body a JSON request carries (Django REST framework's form semantics: "True"/"false"
// booleans, JSON fields as JSON text), and the `csv` file its text, bounded in bytes.
import fastifyMultipart, { type MultipartFile } from '@fastify/multipart'
import type { FastifyInstance } from 'fastify'
import { ApiError, ValidationError } from '../http/errors.js'

/** The largest CSV file taken (the same bound as a JSON request body). */
export const MAX_CSV_BYTES = 20 * 1024 * 1024
/** The largest plain form field (a name, filters as JSON text…). */
const MAX_FIELD_BYTES = 1024 * 1024

/** Form fields read as booleans, and as JSON text, the way DRF's BooleanField and JSONField read form input. */
const BOOLEAN_FIELDS = new Set(['is_static', 'deleted'])
const JSON_FIELDS = new Set(['filters', 'groups', 'distinct_ids', 'query'])
const TRUE_WORDS = new Set(['true', '1', 'yes', 'on', 't', 'y'])
const FALSE_WORDS = new Set(['false', '0', 'no', 'off', 'f', 'n', ''])

const CSV_ENCODING_ERROR = 'CSV file encoding is not supported. Please save your file as UTF-8 and try again.'

async function readCsvFile(part: MultipartFile): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of part.file) chunks.push(chunk as Buffer)
  if (part.file.truncated) {
    throw new ApiError(
      413,
      'invalid_request',
      'request_too_large',
      `The CSV file is larger than ${MAX_CSV_BYTES / (1024 * 1024)} MiB.`,
      'csv',
    )
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks))
  } catch {
    throw new ValidationError(CSV_ENCODING_ERROR, 'csv')
  }
}

function formValue(field: string, value: unknown): unknown {
  if (typeof value !== 'string') return value
  if (BOOLEAN_FIELDS.has(field)) {
    const word = value.trim().toLowerCase()
    if (TRUE_WORDS.has(word)) return true
    if (FALSE_WORDS.has(word)) return false
    throw new ValidationError('Must be a valid boolean.', field, 'invalid')
  }
  if (JSON_FIELDS.has(field)) {
    try {
      return JSON.parse(value)
    } catch {
      throw new ValidationError('Value must be valid JSON.', field, 'invalid')
    }
  }
  return value
}

/** Lets this plugin's routes take multipart/form-data bodies; call before registering them. */
export async function acceptCohortForms(app: FastifyInstance): Promise<void> {
  await app.register(fastifyMultipart, {
    attachFieldsToBody: 'keyValues',
    limits: { fileSize: MAX_CSV_BYTES, files: 1, fields: 20, parts: 21, fieldSize: MAX_FIELD_BYTES },
    throwFileSizeLimit: false,
    async onFile(part) {
      if (part.fieldname !== 'csv') {
        part.file.resume()
        throw new ValidationError(`Unexpected file field "${part.fieldname}": only "csv" takes a file.`, part.fieldname)
      }
      ;(part as MultipartFile & { value: unknown }).value = await readCsvFile(part)
    },
  })
  app.addHook('preValidation', async (req) => {
    if (!req.isMultipart() || typeof req.body !== 'object' || req.body === null) return
    const body = req.body as Record<string, unknown>
    for (const [field, value] of Object.entries(body)) body[field] = formValue(field, value)
  })
}
