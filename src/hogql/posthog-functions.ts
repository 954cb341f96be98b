/**
 * PostHog's own HogQL functions (functions/posthog.py), rewritten into plain HogQL before printing, as PostHog's
 * resolver expands them: UI tags as HogQLX tuples (`sparkline`, `recordingButton`, `explainCSPReport`), semantic
 * versions as sortable arrays, language names, and survey responses. Pure.
 */
import type * as ast from './ast.js'
import { HogQLValidationError } from './errors.js'
import { checkArity, type FunctionMeta } from './functions.js'
import { LANGUAGE_CODES, LANGUAGE_NAMES } from './languages.js'
import { parseExpr } from './parser.js'

const meta = (name: string, min: number, max: number): FunctionMeta => ({ name, ch: name, min, max })

const constant = (value: string | number | boolean): ast.Constant => ({ kind: 'Constant', value })
const field = (...chain: string[]): ast.Field => ({ kind: 'Field', chain })
const call = (name: string, ...args: ast.Expr[]): ast.Call => ({ kind: 'Call', name, args })
const hxTag = (tag: string, attributes: [string, ast.Expr][]): ast.Tuple => ({
  kind: 'Tuple',
  exprs: [constant('__hx_tag'), constant(tag), ...attributes.flatMap(([k, v]) => [constant(k), v])],
})

/** Fills `{name}` placeholders of a template our own code wrote with expressions. */
function fill(template: string, values: Record<string, ast.Expr>): ast.Expr {
  const replace = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(replace)
    if (!node || typeof node !== 'object') return node
    const obj = node as Record<string, unknown>
    if (obj.kind === 'Placeholder') return values[(obj as unknown as ast.Placeholder).chain.join('.')]
    return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, replace(v)]))
  }
  return replace(parseExpr(template)) as ast.Expr
}

/** X.Y.Z without leading zeros, an optional `v` before and a pre-release or build suffix after (Rust's semver). */
const SEMVER = String.raw`^\s*v?((0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*))(?:[-+][^\s]*)?\s*$`

/** `sortableSemVer(v)`: the version's numbers as an array that sorts like versions; `[NULL]` when it is not one. */
const sortableSemVer = (arg: ast.Expr) =>
  fill("arrayMap(x -> toInt(x), splitByChar('.', coalesce(nullIf(extract(assumeNotNull({v}), {re}), ''), '_')))", {
    v: arg,
    re: constant(SEMVER),
  })

const languageCodeToName = (arg: ast.Expr): ast.Call =>
  call(
    'transform',
    arg,
    { kind: 'Array', exprs: LANGUAGE_CODES.map(constant) },
    { kind: 'Array', exprs: LANGUAGE_NAMES.map(constant) },
    constant('Unknown'),
  )

function constantArg(call: ast.Call, index: number, what: string): ast.Constant {
  const arg = call.args[index]
  if (arg.kind !== 'Constant')
    throw new HogQLValidationError(`${call.name} ${what} argument must be a constant`, call.start)
  return arg
}

/** `getSurveyResponse(index[, questionId[, isMultipleChoice]])`: a survey answer by question id, else by index. */
function getSurveyResponse(node: ast.Call): ast.Expr {
  const first = constantArg(node, 0, 'first')
  if (!/^-?\d+$/.test(String(first.value))) {
    throw new HogQLValidationError('getSurveyResponse first argument must be a valid integer', node.start)
  }
  const index = Number(first.value)
  const second = node.args[1]
  const third = node.args[2]
  const questionId = second?.kind === 'Constant' && second.value ? String(second.value) : undefined
  const isMultipleChoice = third?.kind === 'Constant' ? Boolean(third.value) : false
  const byIndex = index === 0 ? '$survey_response' : `$survey_response_${index}`
  const byId: ast.Expr = questionId
    ? constant(`$survey_response_${questionId}`)
    : fill(
        "concat('$survey_response_', JSONExtractString(JSONExtractArrayRaw(properties, '$survey_questions')[{i}], 'id'))",
        {
          i: constant(index + 1),
        },
      )
  if (isMultipleChoice) {
    return fill(
      'if(JSONHas(properties, {id}) AND length(JSONExtractArrayRaw(properties, {id})) > 0, JSONExtractArrayRaw(properties, {id}), JSONExtractArrayRaw(properties, {index}))',
      { id: byId, index: constant(byIndex) },
    )
  }
  return fill(
    "coalesce(nullif(JSONExtractString(properties, {id}), ''), nullif(JSONExtractString(properties, {index}), ''))",
    {
      id: byId,
      index: constant(byIndex),
    },
  )
}

/** `uniqueSurveySubmissionsFilter(surveyId[, from[, to]])`: one `survey sent` event per submission, the latest. */
function uniqueSurveySubmissionsFilter(node: ast.Call): ast.Expr {
  const survey = constantArg(node, 0, 'first')
  let where = fill("event = 'survey sent' AND properties.$survey_id = {survey}", { survey })
  if (node.args[1]) {
    const from = constantArg(node, 1, 'second')
    where = fill('{where} AND timestamp >= {from}', { where, from })
  }
  if (node.args[2]) {
    const to = constantArg(node, 2, 'third')
    where = fill('{where} AND timestamp <= {to}', { where, to })
  }
  return fill(
    "uuid IN (SELECT argMax(uuid, timestamp) FROM events WHERE {where} GROUP BY if(coalesce(properties.$survey_submission_id, '') = '', toString(uuid), properties.$survey_submission_id))",
    { where },
  )
}

type Expansion = { meta: FunctionMeta; expand: (call: ast.Call) => ast.Expr }

const EXPANSIONS: Record<string, Expansion> = {
  sparkline: { meta: meta('sparkline', 1, 1), expand: (c) => hxTag('Sparkline', [['data', c.args[0]]]) },
  recordingButton: {
    meta: meta('recordingButton', 1, 2),
    expand: (c) =>
      hxTag('RecordingButton', [
        ['sessionId', c.args[0]],
        ['recordingStatus', c.args[1] ?? field('properties', '$recording_status')],
      ]),
  },
  explainCSPReport: {
    meta: meta('explainCSPReport', 1, 1),
    expand: (c) => hxTag('ExplainCSPReport', [['properties', c.args[0]]]),
  },
  languageCodeToName: { meta: meta('languageCodeToName', 1, 1), expand: (c) => languageCodeToName(c.args[0]) },
  getSurveyResponse: { meta: meta('getSurveyResponse', 1, 3), expand: getSurveyResponse },
  uniqueSurveySubmissionsFilter: {
    meta: meta('uniqueSurveySubmissionsFilter', 1, 3),
    expand: uniqueSurveySubmissionsFilter,
  },
}
/** Looked up case-insensitively: people rarely know "SemVer" is the right capitalization. */
const SEMVER_FUNCTION: Expansion = { meta: meta('sortableSemVer', 1, 1), expand: (c) => sortableSemVer(c.args[0]) }

/** The names of PostHog's own functions (the web app's SQL editor offers them for completion). */
export const POSTHOG_FUNCTION_NAMES: readonly string[] = [...Object.keys(EXPANSIONS), 'sortableSemVer']

export function findPostHogFunction(name: string): Expansion | undefined {
  return Object.hasOwn(EXPANSIONS, name)
    ? EXPANSIONS[name]
    : name.toLowerCase() === 'sortablesemver'
      ? SEMVER_FUNCTION
      : undefined
}

/** Quick text test: whether a query may call one of these functions at all. */
export const MAY_CALL_POSTHOG_FUNCTION =
  /sparkline|recordingButton|explainCSPReport|languageCodeToName|getSurveyResponse|uniqueSurveySubmissionsFilter|sortablesemver/i

function expand<T>(node: T): T {
  if (Array.isArray(node)) return node.map(expand) as T
  if (!node || typeof node !== 'object') return node
  const obj = node as Record<string, unknown>
  if (obj.kind === 'Call') {
    const found = findPostHogFunction(obj.name as string)
    if (found) {
      const c = obj as unknown as ast.Call
      checkArity(found.meta, c.args.length, c.params?.length, c.start)
      return expand(found.expand({ ...c, args: c.args.map(expand) })) as T
    }
  }
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(obj)) out[k] = v && typeof v === 'object' ? expand(v) : v
  return out as T
}

/** Replaces every call of PostHog's own functions in the tree by the HogQL it stands for. */
export function expandPostHogFunctions<T>(tree: T): T {
  return expand(tree)
}
