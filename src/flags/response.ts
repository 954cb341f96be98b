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
 * The v2 body as UTF-8 JSON bytes — the same text as JSON.stringify(toFlagsV2Response(…)) without building the
 * intermediate objects (a 50-flag answer is ~12 KB) — in three runs: head, the flags section (kept with a reused
 * answer; each flag's bytes are kept with its shared outcome) and tail. The caller writes them without joining
 * them: a new 12 KB buffer per request is memory outside the JavaScript heap, and thousands a second of them made
 * the garbage collector run full collections twice a second.
 */
export function serializeFlagsV2Parts(result: FlagSetEvaluation, meta: ResponseMeta): [Buffer, Buffer, Buffer] {
  let head = '{'
  if (meta.config) {
    for (const [key, value] of Object.entries(meta.config)) {
      if (value !== undefined) head += `${JSON.stringify(key)}:${JSON.stringify(value)},`
    }
  }
  let tail = ''
  if (meta.quotaLimited) tail += `,"quotaLimited":${JSON.stringify(meta.quotaLimited)}`
  tail += `,"requestId":${JSON.stringify(meta.requestId)},"evaluatedAt":${meta.evaluatedAt}`
  if (meta.minimalFlagCalledEvents) tail += ',"minimalFlagCalledEvents":true'
  tail += '}'
  return [Buffer.from(head), flagsSection(result), Buffer.from(tail)]
}

/** Bytes of a frozen (reused) answer's `"flags":{…},"errorsWhileComputingFlags":…` section. */
const sections = new WeakMap<FlagSetEvaluation, Buffer>()

function flagsSection(result: FlagSetEvaluation): Buffer {
  const shared = Object.isFrozen(result)
  if (shared) {
    const known = sections.get(result)
    if (known !== undefined) return known
  }
  const parts: Buffer[] = [FLAGS_OPEN]
  let length = FLAGS_OPEN.length
  for (const key in result.flags) {
    if (parts.length > 1) {
      parts.push(COMMA)
      length += 1
    }
    const fragment = flagFragment(key, result.flags[key])
    parts.push(fragment)
    length += fragment.length
  }
  const close = Buffer.from(`},"errorsWhileComputingFlags":${result.errorsWhileComputingFlags}`)
  parts.push(close)
  const bytes = Buffer.concat(parts, length + close.length)
  if (shared) sections.set(result, bytes)
  return bytes
}

const FLAGS_OPEN = Buffer.from('"flags":{')
const COMMA = Buffer.from(',')
/** Wire bytes of shared (frozen) outcomes; a one-off evaluation is written afresh. */
const fragments = new WeakMap<FlagEvaluation, Buffer>()

function flagFragment(key: string, e: FlagEvaluation): Buffer {
  const shared = key === e.key && Object.isFrozen(e)
  if (shared) {
    const known = fragments.get(e)
    if (known !== undefined) return known
  }
  const payload = e.payload ?? null
  // The key order is toFlagDetails' order, so the text equals JSON.stringify of the projected object.
  const text =
    `${JSON.stringify(key)}:{"key":${JSON.stringify(e.key)},"enabled":${e.enabled},` +
    `${e.variant === undefined ? '' : `"variant":${e.variant === null ? 'null' : JSON.stringify(e.variant)},`}` +
    `"reason":{"code":${JSON.stringify(e.reason.code)},"condition_index":${e.reason.condition_index ?? 'null'},` +
    `"description":${JSON.stringify(e.reason.description)}},` +
    `"metadata":{"id":${e.metadata.id},"version":${e.metadata.version},"description":null,` +
    `"payload":${JSON.stringify(payload)},` +
    `"has_experiment":${e.metadata.has_experiment}}${e.failed ? ',"failed":true' : ''}}`
  const bytes = Buffer.from(text)
  if (shared) fragments.set(e, bytes)
  return bytes
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
