// The input rules of PostHog's LLM prompt serializers, as pure functions: each throws PostHog's first error (the one
// drf-exceptions-hog reports), with its `attr` and `code`.
import { ApiError, ValidationError } from '../http/errors.js'

export const MAX_PROMPT_PAYLOAD_BYTES = 1_000_000
export const MAX_PROMPT_VERSION = 2000
export const DEFAULT_VERSION_PAGE_SIZE = 50
const RESERVED_NAMES = new Set(['new'])
const NAME_PATTERN = /^[a-zA-Z0-9_-]+$/
export const LIST_ORDERINGS = [
  'name',
  'created_at',
  'updated_at',
  'version',
  'latest_version',
  'version_count',
  'first_version_created_at',
  'prompt_size_bytes',
].flatMap((f) => [f, `-${f}`])
export const CONTENT_MODES = ['full', 'preview', 'none'] as const
export type ContentMode = (typeof CONTENT_MODES)[number]

export type Json = Record<string, any>
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Bytes of a value as compact UTF-8 JSON (how PostHog measures a prompt payload). */
export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8')

/** DRF's `CharField`: numbers become text, whitespace is trimmed, blank and null refused unless allowed. */
export function charField(
  input: Json,
  key: string,
  options: { required?: boolean; maxLength?: number; allowBlank?: boolean; attr?: string } = {},
): string | undefined {
  const attr = options.attr ?? key
  const value = input[key]
  if (value === undefined) {
    if (options.required) throw new ValidationError('This field is required.', attr, 'required')
    return undefined
  }
  if (value === null) throw new ValidationError('This field may not be null.', attr, 'null')
  if (typeof value !== 'string' && typeof value !== 'number') {
    throw new ValidationError('Not a valid string.', attr, 'invalid')
  }
  const text = String(value).trim()
  if (text === '' && !options.allowBlank) throw new ValidationError('This field may not be blank.', attr, 'blank')
  if (options.maxLength !== undefined && Array.from(text).length > options.maxLength) {
    throw new ValidationError(`Ensure this field has no more than ${options.maxLength} characters.`, attr, 'max_length')
  }
  return text
}

/** DRF's `IntegerField`: integers, integral floats and their text; bounds with PostHog's messages. */
export function integerValue(value: unknown, attr: string, bounds: { min?: number; max?: number } = {}): number {
  let n: number | undefined
  if (typeof value === 'number' && Number.isInteger(value)) n = value
  else if (typeof value === 'string' && /^\s*-?\d+(\.0*)?\s*$/.test(value)) n = Number.parseInt(value, 10)
  if (n === undefined || !Number.isSafeInteger(n))
    throw new ValidationError('A valid integer is required.', attr, 'invalid')
  if (bounds.min !== undefined && n < bounds.min) {
    throw new ValidationError(`Ensure this value is greater than or equal to ${bounds.min}.`, attr, 'min_value')
  }
  if (bounds.max !== undefined && n > bounds.max) {
    throw new ValidationError(`Ensure this value is less than or equal to ${bounds.max}.`, attr, 'max_value')
  }
  return n
}

export function choiceValue<T extends string>(value: unknown, attr: string, choices: readonly T[]): T {
  if (typeof value !== 'string' || !choices.includes(value as T)) {
    throw new ValidationError(`"${String(value)}" is not a valid choice.`, attr, 'invalid_choice')
  }
  return value as T
}

export function checkName(input: Json, key = 'name'): string {
  const name = charField(input, key, { required: true, maxLength: 255 }) as string
  if (RESERVED_NAMES.has(name.toLowerCase())) {
    throw new ValidationError("'new' is a reserved name and cannot be used.", key, 'reserved_name')
  }
  if (!NAME_PATTERN.test(name)) {
    throw new ValidationError(
      'Only letters, numbers, hyphens (-) and underscores (_) are allowed.',
      key,
      'invalid_name',
    )
  }
  return name
}

export function checkPayloadSize(value: unknown, attr: string, label = 'Prompt payload'): void {
  if (jsonBytes(value) > MAX_PROMPT_PAYLOAD_BYTES) {
    throw new ValidationError(`${label} must be ${MAX_PROMPT_PAYLOAD_BYTES} bytes or fewer.`, attr, 'max_size')
  }
}

/** The prompt content: any JSON but null, within the size limit. */
export function checkPrompt(input: Json, required: boolean): unknown {
  if (!('prompt' in input) || input.prompt === undefined) {
    if (required) throw new ValidationError('This field is required.', 'prompt', 'required')
    return undefined
  }
  if (input.prompt === null) throw new ValidationError('This field may not be null.', 'prompt', 'null')
  checkPayloadSize(input.prompt, 'prompt')
  return input.prompt
}

/** `config`: a JSON object or null; undefined when the body does not carry it. */
export function checkConfig(input: Json): Json | null | undefined {
  if (!('config' in input) || input.config === undefined) return undefined
  if (input.config === null) return null
  if (!isObject(input.config)) {
    throw new ValidationError(
      'Config must be a JSON object, e.g. {"model": "your-model-name", "temperature": 0}.',
      'config',
      'invalid_config',
    )
  }
  checkPayloadSize(input.config, 'config', 'Config')
  return input.config
}

/** `version_description`: trimmed text of at most 400 characters, null when empty. */
export function checkVersionDescription(input: Json, allowNull: boolean): string | null | undefined {
  if (input.version_description === null && allowNull) return null
  const text = charField(input, 'version_description', { maxLength: 400, allowBlank: true })
  if (text === undefined) return undefined
  return text === '' ? null : text
}

export interface PromptEdit {
  old: string
  new: string
}

/** The publish body: `prompt` or `edits` (not both), and/or `config`, against `base_version`. */
export function checkPublishInput(input: Json): {
  prompt?: unknown
  edits?: PromptEdit[]
  config?: Json | null
  baseVersion: number
  versionDescription: string | null
} {
  const prompt = checkPrompt(input, false)
  let edits: PromptEdit[] | undefined
  if (input.edits !== undefined) {
    if (!Array.isArray(input.edits)) {
      throw new ValidationError(
        `Expected a list of items but got type "${pythonType(input.edits)}".`,
        'edits',
        input.edits === null ? 'null' : 'not_a_list',
      )
    }
    edits = input.edits.map((item: unknown, i: number) => {
      if (!isObject(item)) {
        throw new ValidationError(
          `Invalid data. Expected a dictionary, but got ${pythonType(item)}.`,
          `edits__${i}__non_field_errors`,
          'invalid',
        )
      }
      return {
        old: charField(item, 'old', { required: true, attr: `edits__${i}__old` }) as string,
        new: charField(item, 'new', { required: true, attr: `edits__${i}__new` }) as string,
      }
    })
    if (edits.length === 0) throw new ValidationError('At least one edit operation is required.', 'edits', 'invalid')
  }
  const config = checkConfig(input)
  if (input.base_version === undefined) throw new ValidationError('This field is required.', 'base_version', 'required')
  if (input.base_version === null) throw new ValidationError('This field may not be null.', 'base_version', 'null')
  const baseVersion = integerValue(input.base_version, 'base_version', { min: 1 })
  const versionDescription = checkVersionDescription(input, false) ?? null
  if (prompt !== undefined && edits !== undefined) {
    throw new ValidationError("Provide either 'prompt' or 'edits', not both.")
  }
  if (prompt === undefined && edits === undefined && config === undefined) {
    throw new ValidationError("Either 'prompt', 'edits' or 'config' is required.")
  }
  return { prompt, edits, config, baseVersion, versionDescription }
}

/** A refused find/replace edit: PostHog's 400 names the edit by its index. */
export class PromptEditError extends ApiError {
  constructor(
    detail: string,
    readonly editIndex: number,
  ) {
    super(400, 'validation_error', 'invalid_input', detail)
  }
  override toBody() {
    return { ...super.toBody(), edit_index: this.editIndex }
  }
}

/**
 * Applies find/replace edits in order to a prompt: on its text, or on a JSON prompt's two-space-indented JSON text
 * (parsed back afterwards). Each `old` must occur exactly once at its turn.
 */
export function applyEdits(prompt: unknown, edits: PromptEdit[]): unknown {
  const isText = typeof prompt === 'string'
  let text = isText ? prompt : JSON.stringify(prompt, null, 2)
  edits.forEach((edit, i) => {
    const count = text.split(edit.old).length - 1
    if (count === 0) throw new PromptEditError('Text to replace was not found in the prompt.', i)
    if (count > 1) {
      throw new PromptEditError(`Text to replace matches ${count} times — provide more context to make it unique.`, i)
    }
    const at = text.indexOf(edit.old)
    text = text.slice(0, at) + edit.new + text.slice(at + edit.old.length)
  })
  let result: unknown = text
  if (!isText) {
    try {
      result = JSON.parse(text)
    } catch (err) {
      throw new PromptEditError(`Edits produced invalid JSON: ${(err as Error).message}`, edits.length - 1)
    }
  }
  if (jsonBytes(result) > MAX_PROMPT_PAYLOAD_BYTES) {
    throw new PromptEditError(
      `Resulting prompt exceeds the ${MAX_PROMPT_PAYLOAD_BYTES} byte size limit.`,
      edits.length - 1,
    )
  }
  return result
}

/** Python's `json.dumps(value, ensure_ascii=False)` layout (`, ` and `: ` separators), for previews. */
export function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`
  if (isObject(value)) {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pythonJson(v)}`)
      .join(', ')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/** The first 160 characters of a prompt (text, or JSON text), with `...` when cut. */
export function promptPreview(prompt: unknown): string {
  const chars = Array.from(typeof prompt === 'string' ? prompt : pythonJson(prompt))
  return chars.slice(0, 160).join('') + (chars.length > 160 ? '...' : '')
}

/** The Python type name DRF puts in its "got type" messages. */
export function pythonType(value: unknown): string {
  if (value === null) return 'NoneType'
  if (Array.isArray(value)) return 'list'
  if (typeof value === 'string') return 'str'
  if (typeof value === 'boolean') return 'bool'
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float'
  return 'dict'
}
