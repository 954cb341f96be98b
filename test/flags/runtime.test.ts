import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { evaluateFlagSet } from '../../src/flags/matcher.js'
import {
  detectRuntime,
  excludedFlagKeys,
  filterFlagsForRequest,
  isFlagServedToRuntime,
  matchesEvaluationContexts,
  resolveRequestRuntime,
} from '../../src/flags/runtime.js'
import type { FlagDefinition } from '../../src/flags/types.js'

const vectors = JSON.parse(readFileSync(new URL('../fixtures/flag_vectors.json', import.meta.url), 'utf8')) as Record<
  string,
  any
>

describe('detectRuntime', () => {
  const cases = (vectors.runtime_detection_cases as any[]).map((c) => [
    `${c.user_agent ?? '(no user agent)'} ${JSON.stringify(c.headers)}`,
    c,
  ])
  it.each(cases)('%s', (_name, c: any) => {
    const headers: Record<string, string | undefined> = { ...c.headers }
    if (c.user_agent !== null) headers['user-agent'] = c.user_agent
    expect(detectRuntime(headers) ?? null).toBe(c.expected_runtime)
  })

  it('reads header names case-insensitively', () => {
    expect(detectRuntime({ 'User-Agent': 'posthog-node/4.0.0' })).toBe('server')
    expect(detectRuntime({ Origin: 'https://example.com' })).toBe('client')
  })

  it('checks the posthog- prefix before browser substrings', () => {
    expect(detectRuntime({ 'user-agent': 'posthog-python/3.0.0 Mozilla/5.0' })).toBe('server')
  })
})

describe('resolveRequestRuntime', () => {
  it('lets an explicit body runtime win, case-insensitively, with anything else meaning all', () => {
    expect(resolveRequestRuntime('SERVER', { 'user-agent': 'Mozilla/5.0' })).toBe('server')
    expect(resolveRequestRuntime('all', { 'user-agent': 'Mozilla/5.0' })).toBe('all')
    expect(resolveRequestRuntime('edge', {})).toBe('all')
    expect(resolveRequestRuntime(undefined, { 'user-agent': 'curl/8.0' })).toBe('server')
    expect(resolveRequestRuntime(undefined, {})).toBeUndefined()
  })
})

const flag = (key: string, extra: Partial<FlagDefinition> = {}): FlagDefinition => ({
  id: key.length,
  key,
  active: true,
  filters: { groups: [{ rollout_percentage: 100 }] },
  ...extra,
})

describe('runtime filter', () => {
  const flags = [
    flag('any'),
    flag('all', { evaluation_runtime: 'all' }),
    flag('server-only', { evaluation_runtime: 'server' }),
    flag('client-only', { evaluation_runtime: 'client' }),
    flag('odd', { evaluation_runtime: 'edge' }),
  ]
  const keys = (runtime: Parameters<typeof isFlagServedToRuntime>[1]) =>
    flags.filter((f) => isFlagServedToRuntime(f, runtime)).map((f) => f.key)

  it('serves runtime-specific flags only to that runtime', () => {
    expect(keys('server')).toEqual(['any', 'all', 'server-only', 'odd'])
    expect(keys('client')).toEqual(['any', 'all', 'client-only', 'odd'])
  })

  it('serves only runtime-agnostic flags when the runtime is undetermined, and everything for all', () => {
    expect(keys(undefined)).toEqual(['any', 'all', 'odd'])
    expect(keys('all')).toHaveLength(5)
  })
})

describe('evaluation contexts', () => {
  const tagged = flag('tagged', { evaluation_contexts: ['web', 'docs'] })
  const legacyTagged = flag('legacy', { evaluation_tags: ['mobile'] })
  const untagged = flag('untagged')

  it('keeps flags sharing a context, flags without contexts, and everything when none are requested', () => {
    expect(matchesEvaluationContexts(tagged, ['docs'])).toBe(true)
    expect(matchesEvaluationContexts(tagged, ['mobile'])).toBe(false)
    expect(matchesEvaluationContexts(legacyTagged, ['mobile'])).toBe(true)
    expect(matchesEvaluationContexts(untagged, ['mobile'])).toBe(true)
    expect(matchesEvaluationContexts(tagged, [])).toBe(true)
    expect(matchesEvaluationContexts(tagged, undefined)).toBe(true)
  })

  it('applies the context and runtime filters in sequence', () => {
    const flags = [
      tagged,
      flag('tagged-server', { evaluation_contexts: ['web'], evaluation_runtime: 'server' }),
      untagged,
    ]
    const kept = filterFlagsForRequest(flags, { runtime: 'client', evaluationEnvironments: ['web'] })
    expect(kept.map((f) => f.key)).toEqual(['tagged', 'untagged'])
    expect([...excludedFlagKeys(flags, { runtime: 'client', evaluationEnvironments: ['web'] })]).toEqual([
      'tagged-server',
    ])
  })

  it('keeps only survey targeting flags in survey-only mode', () => {
    const flags = [flag('survey-targeting-abc'), flag('other')]
    expect(filterFlagsForRequest(flags, { runtime: 'all', surveyFlagsOnly: true }).map((f) => f.key)).toEqual([
      'survey-targeting-abc',
    ])
  })

  it('omits excluded flags from the evaluation', () => {
    const flags = [tagged, untagged]
    const excludedKeys = excludedFlagKeys(flags, { runtime: undefined, evaluationEnvironments: ['mobile'] })
    const result = evaluateFlagSet(
      flags,
      { distinctId: 'u', personProperties: {}, groups: {}, groupProperties: {}, groupTypeMapping: {}, cohorts: {} },
      { excludedKeys },
    )
    expect(Object.keys(result.flags)).toEqual(['untagged'])
  })
})
