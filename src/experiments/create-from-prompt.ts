// PostHog's `create_from_prompt/`: a draft experiment comparing 2–10 versions of a stored LLM prompt. Each version
// becomes a flag variant (`control`, then `test`, or `test-1`… for three or more; named `v{version}`; integer splits
// summing to 100, the last taking the remainder) whose JSON payload `{prompt_name, prompt_version}` tells the SDK which
// version to fetch, and each chosen template becomes one metric scoped to `$ai_prompt_name`. Everything the request
// could be refused for is checked before anything is written.
import type { FlagStore } from '../flags/store.js'
import { ValidationError } from '../http/errors.js'
import type { LlmPromptService } from '../llm-prompts/service.js'
import type { ExperimentActor } from './context.js'
import { PROMPT_TEMPLATES } from './prompt-templates.js'
import type { ExperimentService } from './service.js'
import { isObject, type Json } from './validation.js'

export const MIN_VERSIONS = 2
export const MAX_VERSIONS = 10
const TEMPLATE_KEYS = PROMPT_TEMPLATES.map((t) => t.key)

/** Python's `repr` of a string, as PostHog's messages quote names. */
export function pythonRepr(s: string): string {
  const escaped = s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')
  if (s.includes("'") && !s.includes('"')) return `"${escaped}"`
  return `'${escaped.replace(/'/g, "\\'")}'`
}

/** Django's `slugify`: ASCII letters, digits, `_` and `-`, lower case, runs of spaces and dashes as one dash. */
export function slugify(value: string): string {
  return value
    .normalize('NFKD')
    .replace(/[^\x00-\x7f]/g, '')
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .replace(/[-\s]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '')
}

/** The flag variants for the versions, in order. */
export function promptVariants(versions: number[]): { key: string; name: string; rollout_percentage: number }[] {
  const n = versions.length
  const base = Math.floor(100 / n)
  return versions.map((version, i) => ({
    key: i === 0 ? 'control' : n === 2 ? 'test' : `test-${i}`,
    name: `v${version}`,
    rollout_percentage: i === n - 1 ? 100 - base * (n - 1) : base,
  }))
}

/** The metric a template builds for a prompt (PostHog's llm_metric_templates, as `model_dump(exclude_none)`). */
export function templateMetric(template: string, promptName: string): Json {
  const byPrompt = { key: '$ai_prompt_name', operator: 'exact', type: 'event', value: promptName }
  const mean = (name: string, property: string) => ({
    kind: 'ExperimentMetric',
    metric_type: 'mean',
    name,
    goal: 'decrease',
    source: {
      kind: 'EventsNode',
      event: '$ai_generation',
      math: 'sum',
      math_property: property,
      properties: [byPrompt],
    },
  })
  if (template === 'cost') return mean('Cost', '$ai_total_cost_usd')
  if (template === 'latency') return mean('Latency', '$ai_latency')
  // Explicit JSON extraction, as PostHog writes it: a boolean result stored as a number elsewhere must not be cast.
  const hogql = (key: string) => ({ key, type: 'hogql' })
  const applicable = hogql("JSONExtractRaw(properties, '$ai_evaluation_applicable') != 'false'")
  const booleanOnly = hogql("JSONExtractString(properties, '$ai_evaluation_result_type') IN ('', 'boolean')")
  return {
    kind: 'ExperimentMetric',
    metric_type: 'ratio',
    name: 'Eval pass rate',
    numerator: {
      kind: 'EventsNode',
      event: '$ai_evaluation',
      properties: [byPrompt, hogql("JSONExtractBool(properties, '$ai_evaluation_result')"), applicable, booleanOnly],
    },
    denominator: { kind: 'EventsNode', event: '$ai_evaluation', properties: [byPrompt, applicable, booleanOnly] },
  }
}

function text(input: Json, key: string, required: boolean): string | undefined {
  const value = input[key]
  if (value === undefined) {
    if (required) throw new ValidationError('This field is required.', key, 'required')
    return undefined
  }
  if (value === null) throw new ValidationError('This field may not be null.', key, 'null')
  if (typeof value !== 'string' && typeof value !== 'number')
    throw new ValidationError('Not a valid string.', key, 'invalid')
  const trimmed = String(value).trim()
  if (trimmed === '' && required) throw new ValidationError('This field may not be blank.', key, 'blank')
  return trimmed
}

function list(input: Json, key: string): unknown[] {
  const value = input[key]
  if (value === undefined) throw new ValidationError('This field is required.', key, 'required')
  if (value === null) throw new ValidationError('This field may not be null.', key, 'null')
  if (!Array.isArray(value)) {
    const type =
      typeof value === 'string'
        ? 'str'
        : typeof value === 'number'
          ? Number.isInteger(value)
            ? 'int'
            : 'float'
          : typeof value === 'boolean'
            ? 'bool'
            : 'dict'
    throw new ValidationError(`Expected a list of items but got type "${type}".`, key, 'not_a_list')
  }
  return value
}

function lengthWithin(values: unknown[], key: string, min: number, max: number) {
  if (values.length < min)
    throw new ValidationError(`Ensure this field has at least ${min} elements.`, key, 'min_length')
  if (values.length > max) {
    throw new ValidationError(`Ensure this field has no more than ${max} elements.`, key, 'max_length')
  }
}

/** The body, checked field by field in PostHog's order; the first refusal is the one answered. */
export function checkPromptExperimentInput(input: Json) {
  const promptName = text(input, 'prompt_name', true) as string
  const versions = list(input, 'versions').map((v, i) => {
    const attr = `versions__${i}`
    let n: number | undefined
    if (typeof v === 'number' && Number.isInteger(v)) n = v
    else if (typeof v === 'string' && /^\s*-?\d+(\.0*)?\s*$/.test(v)) n = Number.parseInt(v, 10)
    if (n === undefined || !Number.isSafeInteger(n))
      throw new ValidationError('A valid integer is required.', attr, 'invalid')
    if (n < 1) throw new ValidationError('Ensure this value is greater than or equal to 1.', attr, 'min_value')
    return n
  })
  lengthWithin(versions, 'versions', MIN_VERSIONS, MAX_VERSIONS)
  if (new Set(versions).size !== versions.length) {
    throw new ValidationError('versions must not contain duplicates.', 'versions', 'invalid')
  }
  const templates = list(input, 'templates').map((t, i) => {
    if ((typeof t !== 'string' && typeof t !== 'number') || !TEMPLATE_KEYS.includes(String(t))) {
      throw new ValidationError(
        `"${isObject(t) || Array.isArray(t) ? JSON.stringify(t) : String(t)}" is not a valid choice.`,
        `templates__${i}`,
        'invalid_choice',
      )
    }
    return String(t)
  })
  lengthWithin(templates, 'templates', 1, TEMPLATE_KEYS.length)
  if (new Set(templates).size !== templates.length) {
    throw new ValidationError('templates must not contain duplicates.', 'templates', 'invalid')
  }
  return {
    promptName,
    versions,
    templates,
    name: text(input, 'name', false),
    featureFlagKey: text(input, 'feature_flag_key', false),
    description: text(input, 'description', false),
  }
}

export function createPromptExperiments(deps: {
  experiments: Pick<ExperimentService, 'create'>
  prompts: Pick<LlmPromptService, 'missingVersions'>
  flagRows: Pick<FlagStore, 'allForTeam'>
}) {
  return {
    async create(teamId: number, actor: ExperimentActor, input: Json) {
      const body = checkPromptExperimentInput(input)
      const missing = await deps.prompts.missingVersions(teamId, body.promptName, body.versions)
      if (missing.length > 0) {
        throw new ValidationError(
          `Versions not found for prompt ${pythonRepr(body.promptName)}: [${missing.join(', ')}]`,
          'versions',
          'invalid',
        )
      }
      // Any flag with the key counts, deleted ones too: the experiment must get a new flag carrying the payloads.
      const takenKeys = new Set((await deps.flagRows.allForTeam(teamId)).map((f) => f.key))
      if (body.featureFlagKey && takenKeys.has(body.featureFlagKey)) {
        throw new ValidationError(
          `Feature flag ${pythonRepr(body.featureFlagKey)} already exists for this team. Pick a different key, or omit this field to auto-generate one.`,
          'feature_flag_key',
          'invalid',
        )
      }
      const name =
        body.name ||
        `${body.promptName}: ${body.versions.map((v) => `v${v}`).join(', ')} (${body.templates.join(', ')})`
      let featureFlagKey = body.featureFlagKey
      if (!featureFlagKey) {
        const base = Array.from(slugify(name)).slice(0, 200).join('') || 'experiment'
        featureFlagKey = base
        for (let suffix = 2; takenKeys.has(featureFlagKey); suffix++) featureFlagKey = `${base}-${suffix}`
      }
      const variants = promptVariants(body.versions)
      const payloads = Object.fromEntries(
        // Python's json.dumps layout, as PostHog stores the payload text.
        variants.map((v, i) => [
          v.key,
          `{"prompt_name": ${JSON.stringify(body.promptName)}, "prompt_version": ${body.versions[i]}}`,
        ]),
      )
      return deps.experiments.create(teamId, actor, {
        name,
        feature_flag_key: featureFlagKey,
        description: body.description ?? '',
        parameters: {
          feature_flag_variants: variants,
          feature_flag_payloads: payloads,
          rollout_percentage: 100,
          prompt_metadata: { name: body.promptName, templates: body.templates, versions: body.versions },
        },
        metrics: body.templates.map((t) => templateMetric(t, body.promptName)),
      })
    },
  }
}
export type PromptExperiments = ReturnType<typeof createPromptExperiments>
