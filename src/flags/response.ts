// Projections of evaluation results onto the wire shapes of /flags (v2 and legacy v1) and /decide (v1, v2).
import { type FlagEvaluation, type FlagSetEvaluation, flagValueOf } from './types.js'

export interface FlagDetailsWire {
  key: string
  enabled: boolean
  variant: string | null
  failed?: true
  reason: { code: string; condition_index: number | null; description: string }
  metadata: { id: number; version: number; description: null; payload: unknown; has_experiment: boolean }
}

export interface ResponseMeta {
  requestId: string
  evaluatedAt: number
  quotaLimited?: string[]
  /** Remote config merged at the top level (`config=true`, and always for /decide). */
  config?: Record<string, unknown>
  /** Only on the v2 shape, and only when the team opted in. */
  minimalFlagCalledEvents?: boolean
}

export type ResponseShape = 'flags_v2' | 'flags_v1' | 'decide_v2' | 'decide_v1'

/**
 * Version → shape: /flags v≥2 and /decide v≥4 get v2; /flags v1 and /decide v3 the legacy map. A /flags
 * request with neither `v` nor `config` gets v2; with `config` but no `v`, the legacy map.
 */
export function selectResponseShape(
  endpoint: 'flags' | 'decide',
  version: number | undefined,
  hasConfigParam = false,
): ResponseShape {
  if (endpoint === 'flags') {
    if (version === undefined) return hasConfigParam ? 'flags_v1' : 'flags_v2'
    return version >= 2 ? 'flags_v2' : 'flags_v1'
  }
  const v = version ?? 1
  if (v >= 4) return 'flags_v2'
  if (v === 3) return 'flags_v1'
  return v === 2 ? 'decide_v2' : 'decide_v1'
}

export function toFlagDetails(evaluation: FlagEvaluation): FlagDetailsWire {
  const details: FlagDetailsWire = {
    key: evaluation.key,
    enabled: evaluation.enabled,
    variant: evaluation.variant,
    reason: { ...evaluation.reason },
    metadata: {
      id: evaluation.metadata.id,
      version: evaluation.metadata.version,
      description: null,
      payload: evaluation.payload ?? null,
      has_experiment: evaluation.metadata.has_experiment,
    },
  }
  if (evaluation.failed) details.failed = true
  return details
}

function envelope(meta: ResponseMeta) {
  return {
    ...(meta.quotaLimited ? { quotaLimited: meta.quotaLimited } : {}),
    requestId: meta.requestId,
    evaluatedAt: meta.evaluatedAt,
  }
}

export function toFlagsV2Response(result: FlagSetEvaluation, meta: ResponseMeta) {
  const flags: Record<string, FlagDetailsWire> = {}
  for (const [key, evaluation] of Object.entries(result.flags)) flags[key] = toFlagDetails(evaluation)
  return {
    ...meta.config,
    flags,
    errorsWhileComputingFlags: result.errorsWhileComputingFlags,
    ...envelope(meta),
    ...(meta.minimalFlagCalledEvents ? { minimalFlagCalledEvents: true } : {}),
  }
}

/**
 * The v2 body as JSON text, written directly: the same text as JSON.stringify(toFlagsV2Response(…)) without
 * building the intermediate objects first (the hot path of /flags; a 50-flag answer is ~12 KB).
 */
export function serializeFlagsV2(result: FlagSetEvaluation, meta: ResponseMeta): string {
  let out = '{'
  if (meta.config) {
    for (const [key, value] of Object.entries(meta.config)) {
      if (value !== undefined) out += `${JSON.stringify(key)}:${JSON.stringify(value)},`
    }
  }
  out += '"flags":{'
  let first = true
  for (const key in result.flags) {
    if (!first) out += ','
    first = false
    out += flagFragment(key, result.flags[key])
  }
  out += `},"errorsWhileComputingFlags":${result.errorsWhileComputingFlags}`
  if (meta.quotaLimited) out += `,"quotaLimited":${JSON.stringify(meta.quotaLimited)}`
  out += `,"requestId":${JSON.stringify(meta.requestId)},"evaluatedAt":${meta.evaluatedAt}`
  if (meta.minimalFlagCalledEvents) out += ',"minimalFlagCalledEvents":true'
  return `${out}}`
}

/**
 * One flag's JSON text. A flag answers with few distinct texts (on/off per reason and variant), so they are
 * kept: building them anew for 50 flags on every request cost more than evaluating the flags.
 */
const fragments = new Map<string, string>()
const payloadIds = new WeakMap<object, number>()
let nextPayloadId = 1

function flagFragment(key: string, e: FlagEvaluation): string {
  const payload = e.payload ?? null
  // Payloads are strings or parsed JSON; objects are told apart by identity, strings by value.
  let payloadKey: string
  if (typeof payload === 'object' && payload !== null) {
    let id = payloadIds.get(payload)
    if (id === undefined) {
      id = nextPayloadId++
      payloadIds.set(payload, id)
    }
    payloadKey = `o${id}`
  } else payloadKey = `v${String(payload)}`
  const cacheKey = `${key}\u0000${e.key}\u0000${e.enabled}\u0000${e.variant}\u0000${e.reason.code}\u0000${e.reason.condition_index}\u0000${e.reason.description}\u0000${e.metadata.id}\u0000${e.metadata.version}\u0000${e.metadata.has_experiment}\u0000${e.failed === true}\u0000${payloadKey}`
  let text = fragments.get(cacheKey)
  if (text === undefined) {
    // The key order is toFlagDetails' order, so the text equals JSON.stringify of the projected object.
    text =
      `${JSON.stringify(key)}:{"key":${JSON.stringify(e.key)},"enabled":${e.enabled},` +
      `${e.variant === undefined ? '' : `"variant":${e.variant === null ? 'null' : JSON.stringify(e.variant)},`}` +
      `"reason":{"code":${JSON.stringify(e.reason.code)},"condition_index":${e.reason.condition_index ?? 'null'},` +
      `"description":${JSON.stringify(e.reason.description)}},` +
      `"metadata":{"id":${e.metadata.id},"version":${e.metadata.version},"description":null,` +
      `"payload":${JSON.stringify(payload)},` +
      `"has_experiment":${e.metadata.has_experiment}}${e.failed ? ',"failed":true' : ''}}`
    if (fragments.size >= 50_000) fragments.clear()
    fragments.set(cacheKey, text)
  }
  return text
}

/** `/flags` v1 and `/decide` v3: every evaluated flag's value (false included) plus the payloads present. */
export function toFlagsV1Response(result: FlagSetEvaluation, meta: ResponseMeta) {
  const featureFlags: Record<string, string | boolean> = {}
  const featureFlagPayloads: Record<string, unknown> = {}
  for (const [key, evaluation] of Object.entries(result.flags)) {
    featureFlags[key] = flagValueOf(evaluation)
    if (evaluation.payload !== null && evaluation.payload !== undefined) featureFlagPayloads[key] = evaluation.payload
  }
  return {
    ...meta.config,
    featureFlags,
    featureFlagPayloads,
    errorsWhileComputingFlags: result.errorsWhileComputingFlags,
    ...envelope(meta),
  }
}

/** `/decide` v2: values of the enabled flags only. */
export function toDecideV2Response(result: FlagSetEvaluation, meta: ResponseMeta) {
  const featureFlags: Record<string, string | boolean> = {}
  for (const [key, evaluation] of Object.entries(result.flags)) {
    if (evaluation.enabled) featureFlags[key] = flagValueOf(evaluation)
  }
  return { ...meta.config, featureFlags, ...envelope(meta) }
}

/** `/decide` v1: the keys of the enabled flags. */
export function toDecideV1Response(result: FlagSetEvaluation, meta: ResponseMeta) {
  const featureFlags = Object.values(result.flags)
    .filter((evaluation) => evaluation.enabled)
    .map((evaluation) => evaluation.key)
  return { ...meta.config, featureFlags, ...envelope(meta) }
}

export function projectResponse(shape: ResponseShape, result: FlagSetEvaluation, meta: ResponseMeta) {
  switch (shape) {
    case 'flags_v2':
      return toFlagsV2Response(result, meta)
    case 'flags_v1':
      return toFlagsV1Response(result, meta)
    case 'decide_v2':
      return toDecideV2Response(result, meta)
    case 'decide_v1':
      return toDecideV1Response(result, meta)
  }
}
