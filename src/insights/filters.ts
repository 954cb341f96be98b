/** Pieces of the list's query-string filters: insight types, id lists, yes/no flags. Pure. */
import { ValidationError } from '../http/errors.js'

/** `?insight=` values → the query kind they select (PostHog's `filter_by_insight_type`). */
export const KIND_OF_TYPE: Record<string, string> = {
  TRENDS: 'TrendsQuery',
  FUNNELS: 'FunnelsQuery',
  RETENTION: 'RetentionQuery',
  PATHS: 'PathsQuery',
  STICKINESS: 'StickinessQuery',
  LIFECYCLE: 'LifecycleQuery',
  SQL: 'HogQLQuery',
}
const WRAPPERS = new Set(['InsightVizNode', 'DataVisualizationNode', 'DataTableNode'])
export const ORDERS = ['created_at', 'last_modified_at', 'name', 'updated_at'] as const

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The node an insight actually runs: the source of a display wrapper. */
export function sourceKind(query: unknown): string | undefined {
  let node = query
  for (let depth = 0; isObject(node) && WRAPPERS.has(node.kind as string) && depth < 5; depth++) node = node.source
  return isObject(node) && typeof node.kind === 'string' ? node.kind : undefined
}

export function idList(text: string, attr: string): number[] {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new ValidationError(`${attr} must be a JSON list of ids.`, attr, 'parse_error')
  }
  const list = Array.isArray(parsed) ? parsed : [parsed]
  if (!list.every((v) => Number.isSafeInteger(v))) throw new ValidationError(`${attr} must be a list of ids.`, attr)
  return list as number[]
}

export const flag = (value: string | undefined) =>
  value === undefined ? undefined : ['true', '1', 'yes'].includes(value.toLowerCase())
