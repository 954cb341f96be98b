// Which flags a request may see: the caller's runtime (server or client SDK), detected from the body or the
// headers as PostHog's /flags does, and the request's evaluation contexts (formerly environments/tags).
import type { FlagDefinition } from './types.js'

export type Runtime = 'server' | 'client'

const SERVER_SDKS = new Set(['python', 'ruby', 'php', 'java', 'go', 'node', 'dotnet', 'elixir', 'rs', 'server'])
const CLIENT_SDKS = new Set(['js', 'android', 'ios', 'react-native', 'flutter'])
const BROWSER_MARKERS = ['Mozilla/', 'Chrome/', 'Safari/', 'Firefox/', 'Edge/']
const HTTP_CLIENT_MARKERS = ['python-requests/', 'curl/']
const BROWSER_HEADERS = ['origin', 'referer', 'sec-fetch-mode', 'sec-fetch-site']

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  let value = headers[name]
  if (value === undefined) {
    for (const key of Object.keys(headers)) {
      if (key.toLowerCase() === name) {
        value = headers[key]
        break
      }
    }
  }
  return Array.isArray(value) ? value[0] : value
}

/** `posthog-<sdk>/<version>`: the SDK decides; null when the agent is not in that form. */
function sdkRuntime(userAgent: string): Runtime | 'unknown' | null {
  const match = /^posthog-([^/\s]+)\/(\S*)/.exec(userAgent)
  if (!match || match[2] === '') return null
  if (SERVER_SDKS.has(match[1])) return 'server'
  if (CLIENT_SDKS.has(match[1])) return 'client'
  return 'unknown'
}

function userAgentRuntime(userAgent: string): Runtime | undefined {
  const sdk = sdkRuntime(userAgent)
  if (sdk !== null) return sdk === 'unknown' ? undefined : sdk
  if (BROWSER_MARKERS.some((marker) => userAgent.includes(marker))) return 'client'
  if (HTTP_CLIENT_MARKERS.some((marker) => userAgent.includes(marker))) return 'server'
  return undefined
}

/** The caller's runtime from its headers: User-Agent first, then browser-only headers; else undetermined. */
export function detectRuntime(headers: Record<string, string | string[] | undefined>): Runtime | undefined {
  const userAgent = header(headers, 'user-agent')
  const fromAgent = userAgent ? userAgentRuntime(userAgent) : undefined
  if (fromAgent) return fromAgent
  return BROWSER_HEADERS.some((name) => header(headers, name) !== undefined) ? 'client' : undefined
}

/**
 * The runtime a request evaluates for: an explicit body `evaluation_runtime` wins (`all`/`client`/`server`,
 * any case; other values mean `all`), otherwise the detected one.
 */
export function resolveRequestRuntime(
  bodyRuntime: unknown,
  headers: Record<string, string | string[] | undefined>,
): Runtime | 'all' | undefined {
  if (typeof bodyRuntime === 'string') {
    const value = bodyRuntime.toLowerCase()
    return value === 'client' || value === 'server' ? value : 'all'
  }
  return detectRuntime(headers)
}

/** Flags without a runtime (or `all`) serve everyone; client/server flags only that runtime. */
export function isFlagServedToRuntime(flag: FlagDefinition, runtime: Runtime | 'all' | undefined): boolean {
  const required = flag.evaluation_runtime
  if (required !== 'client' && required !== 'server') return true
  if (runtime === 'all') return true
  return required === runtime
}

/** With request contexts, a flag that declares contexts must share one of them; otherwise no filtering. */
export function matchesEvaluationContexts(flag: FlagDefinition, requested: readonly string[] | undefined): boolean {
  if (!requested || requested.length === 0) return true
  const own = flag.evaluation_contexts ?? flag.evaluation_tags
  if (!own || own.length === 0) return true
  return own.some((context) => requested.includes(context))
}

export interface RequestFlagFilter {
  runtime: Runtime | 'all' | undefined
  evaluationEnvironments?: readonly string[]
  /** `only_evaluate_survey_feature_flags`: only `survey-targeting-*` flags. */
  surveyFlagsOnly?: boolean
}

export function isFlagIncluded(flag: FlagDefinition, filter: RequestFlagFilter): boolean {
  if (filter.surveyFlagsOnly && !flag.key.startsWith('survey-targeting-')) return false
  return matchesEvaluationContexts(flag, filter.evaluationEnvironments) && isFlagServedToRuntime(flag, filter.runtime)
}

export function filterFlagsForRequest(flags: readonly FlagDefinition[], filter: RequestFlagFilter): FlagDefinition[] {
  return flags.filter((flag) => isFlagIncluded(flag, filter))
}

/** The keys the request filters leave out, for `evaluateFlagSet`'s `excludedKeys` (dependants see them as false). */
export function excludedFlagKeys(flags: readonly FlagDefinition[], filter: RequestFlagFilter): Set<string> {
  const excluded = new Set<string>()
  for (const flag of flags) {
    if (!isFlagIncluded(flag, filter)) excluded.add(flag.key)
  }
  return excluded
}
