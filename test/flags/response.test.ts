import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { describeReason } from '../../src/flags/matcher.js'
import {
  projectResponse,
  type ResponseShape,
  selectResponseShape,
  serializeFlagsV2Parts,
  toFlagsV2Response,
} from '../../src/flags/response.js'
import type { FlagEvaluation, FlagSetEvaluation } from '../../src/flags/types.js'

const vectors = JSON.parse(readFileSync(new URL('../fixtures/flag_vectors.json', import.meta.url), 'utf8')) as Record<
  string,
  any
>

const meta = { requestId: '00000000-0000-4000-8000-000000000000', evaluatedAt: 1_710_000_000_000 }

function resultOf(outcome: any): FlagSetEvaluation {
  if (outcome.omitted) return { flags: {}, errorsWhileComputingFlags: false }
  const evaluation: FlagEvaluation = {
    key: outcome.key,
    enabled: outcome.enabled,
    variant: outcome.variant,
    failed: outcome.failed,
    reason: { ...outcome.reason, description: describeReason(outcome.reason.code, outcome.reason.condition_index) },
    payload: outcome.payload,
    metadata: { id: outcome.flag_id, version: outcome.flag_version, has_experiment: false },
  }
  return { flags: { [outcome.key]: evaluation }, errorsWhileComputingFlags: outcome.failed }
}

describe('response projections', () => {
  const cases = (vectors.response_projection_cases as any[]).flatMap((c) =>
    Object.entries(c.projections).map(([shape, expected]) => [`${c.id} → ${shape}`, c.outcome, shape, expected]),
  )
  it.each(cases)('%s', (_name, outcome: any, shape, expected: any) => {
    const response = projectResponse(shape as ResponseShape, resultOf(outcome), meta)
    expect(response).toMatchObject(expected)
    expect(response).toMatchObject({ requestId: meta.requestId, evaluatedAt: meta.evaluatedAt })
    // Only the asserted keys are listed in the vectors; the projection must not add flags or payloads.
    const body = response as Record<string, any>
    if (expected.flags) expect(Object.keys(body.flags)).toEqual(Object.keys(expected.flags))
    if (expected.featureFlagPayloads) expect(body.featureFlagPayloads).toEqual(expected.featureFlagPayloads)
    expect(body.featureFlags ?? {}).toEqual(expected.featureFlags ?? {})
  })
})

describe('flags v2 shape', () => {
  const evaluation: FlagEvaluation = {
    key: 'f',
    enabled: true,
    variant: null,
    failed: false,
    reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
    payload: null,
    metadata: { id: 1, version: 2, has_experiment: true },
  }
  const result = { flags: { f: evaluation }, errorsWhileComputingFlags: false }

  it('emits null variant, description and payload, and omits failed and quotaLimited when not applicable', () => {
    const body = toFlagsV2Response(result, meta)
    expect(body.flags.f).toEqual({
      key: 'f',
      enabled: true,
      variant: null,
      reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
      metadata: { id: 1, version: 2, description: null, payload: null, has_experiment: true },
    })
    expect(body).not.toHaveProperty('quotaLimited')
    expect(body).not.toHaveProperty('minimalFlagCalledEvents')
  })

  it('merges config at the top level and reports quota limits', () => {
    const body = toFlagsV2Response(
      { flags: {}, errorsWhileComputingFlags: false },
      { ...meta, quotaLimited: ['feature_flags'], config: { supportedCompression: ['gzip', 'gzip-js'] } },
    )
    expect(body).toMatchObject({
      flags: {},
      quotaLimited: ['feature_flags'],
      supportedCompression: ['gzip', 'gzip-js'],
    })
  })
})

describe('selectResponseShape', () => {
  it.each([
    ['flags', 2, false, 'flags_v2'],
    ['flags', 3, false, 'flags_v2'],
    ['flags', 1, false, 'flags_v1'],
    ['flags', undefined, false, 'flags_v2'],
    ['flags', undefined, true, 'flags_v1'],
    ['decide', 4, true, 'flags_v2'],
    ['decide', 3, true, 'flags_v1'],
    ['decide', 2, true, 'decide_v2'],
    ['decide', 1, true, 'decide_v1'],
    ['decide', undefined, true, 'decide_v1'],
  ] as const)('%s v=%s config=%s → %s', (endpoint, version, config, shape) => {
    expect(selectResponseShape(endpoint, version, config)).toBe(shape)
  })
})

describe('direct v2 serialisation', () => {
  const outcomes = (vectors.response_projection_cases as any[]).map((c) => c.outcome).filter((o) => !o.omitted)

  it.each(outcomes.map((o) => [o.key, o]))('writes the same text as the projected object for %s', (_key, outcome) => {
    const result = resultOf(outcome)
    for (const m of [
      meta,
      { ...meta, quotaLimited: ['feature_flags'] },
      { ...meta, config: { config: { enable_collect_everything: true }, supportedCompression: ['gzip', 'lz64'] } },
    ]) {
      expect(Buffer.concat(serializeFlagsV2Parts(result, m)).toString()).toBe(
        JSON.stringify(toFlagsV2Response(result, m)),
      )
    }
  })

  it('escapes keys, variants and payloads that need it', () => {
    const evaluation: FlagEvaluation = {
      key: 'quote"and\\slash',
      enabled: true,
      variant: 'vär"iant',
      failed: true,
      reason: { code: 'condition_match', condition_index: null, description: 'Matched "x"' },
      payload: '{"a":"\\n"}',
      metadata: { id: 3, version: 4, has_experiment: false },
    }
    const result = { flags: { [evaluation.key]: evaluation }, errorsWhileComputingFlags: true }
    expect(Buffer.concat(serializeFlagsV2Parts(result, meta)).toString()).toBe(
      JSON.stringify(toFlagsV2Response(result, meta)),
    )
  })
})
