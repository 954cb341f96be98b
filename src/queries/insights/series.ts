/**
 * Series of insight nodes (`EventsNode`, `ActionsNode`): what events they match, their labels and the `action`
 * object of PostHog's results; plus the filters every series shares (global properties, test accounts). Pure.
 */
import { ValidationError } from '../../http/errors.js'
import { literal, propertiesToHogQL } from '../filters.js'

export interface SeriesNode {
  kind: 'EventsNode' | 'ActionsNode'
  event?: string | null
  id?: number
  name?: string | null
  custom_name?: string | null
  math?: string | null
  math_property?: string | null
  math_property_type?: string | null
  math_hogql?: string | null
  math_group_type_index?: number | null
  properties?: unknown
  fixedProperties?: unknown
}

/** What an insight runner needs to know of a project's actions. */
export interface ActionInfo {
  id: number
  name: string
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Validates `series` (a non-empty list of EventsNode / ActionsNode) with PostHog's attribute paths. */
export function seriesOf(value: unknown, options: { max?: number; attr?: string } = {}): SeriesNode[] {
  const attr = options.attr ?? 'series'
  if (!Array.isArray(value) || value.length === 0) {
    throw new ValidationError('At least one series is required.', attr, 'required')
  }
  if (options.max !== undefined && value.length > options.max) {
    throw new ValidationError(`At most ${options.max} series are allowed.`, attr)
  }
  return value.map((item, i) => {
    const at = `${attr}__${i}`
    if (!isObject(item)) throw new ValidationError('A series must be an object.', at)
    if (item.kind === 'EventsNode') {
      if (item.event !== undefined && item.event !== null && typeof item.event !== 'string') {
        throw new ValidationError('event must be a string or null.', `${at}__event`)
      }
    } else if (item.kind === 'ActionsNode') {
      if (typeof item.id !== 'number' || !Number.isInteger(item.id)) {
        throw new ValidationError('An ActionsNode needs the action id.', `${at}__id`, 'required')
      }
    } else {
      throw new ValidationError(
        `Series of kind ${JSON.stringify(item.kind)} are not supported: use EventsNode or ActionsNode.`,
        `${at}__kind`,
        'invalid_choice',
      )
    }
    for (const key of ['properties', 'fixedProperties']) {
      try {
        propertiesToHogQL(item[key])
      } catch (error) {
        if (error instanceof ValidationError) throw new ValidationError(error.detail, `${at}__${key}`, error.code)
        throw error
      }
    }
    return item as unknown as SeriesNode
  })
}

/** The events a series counts, before its property filters. */
export function seriesEventCondition(series: SeriesNode): string {
  if (series.kind === 'ActionsNode') return `matchesAction(${series.id})`
  return typeof series.event === 'string' ? `event = ${literal(series.event)}` : 'true'
}

/** The series' own property filters (undefined when it has none). */
export function seriesPropertyCondition(series: SeriesNode): string | undefined {
  const parts = [propertiesToHogQL(series.properties), propertiesToHogQL(series.fixedProperties)].filter(
    (p): p is string => p !== undefined,
  )
  return parts.length === 0 ? undefined : parts.map((p) => `(${p})`).join(' AND ')
}

/** A series' name: its event (`All events` for null), or its action's name. */
export function seriesName(series: SeriesNode, actions: Map<number, ActionInfo>): string {
  if (series.kind === 'ActionsNode') {
    const action = actions.get(series.id as number)
    return action?.name ?? series.name ?? String(series.id)
  }
  return typeof series.event === 'string' ? series.event : (series.name ?? 'All events')
}

/** The label of a series in results: its custom name, else its name. */
export function seriesLabel(series: SeriesNode, actions: Map<number, ActionInfo>): string {
  return series.custom_name || seriesName(series, actions)
}

/** The `action` object of a result row (PostHog's legacy entity dict). */
export function actionObject(
  series: SeriesNode,
  order: number,
  actions: Map<number, ActionInfo>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const isAction = series.kind === 'ActionsNode'
  return {
    id: isAction ? series.id : (series.event ?? null),
    type: isAction ? 'actions' : 'events',
    order,
    name: seriesName(series, actions),
    custom_name: series.custom_name ?? null,
    math: series.math ?? 'total',
    math_property: series.math_property ?? null,
    math_hogql: series.math_hogql ?? null,
    math_group_type_index: series.math_group_type_index ?? null,
    properties: propertiesObject(series.properties),
    ...extra,
  }
}

function propertiesObject(properties: unknown): unknown {
  if (Array.isArray(properties)) return properties
  if (isObject(properties)) return properties
  return {}
}

/** The action ids a list of series (and filters) refers to, for loading. */
export function actionIdsOf(series: SeriesNode[]): number[] {
  return [...new Set(series.filter((s) => s.kind === 'ActionsNode').map((s) => s.id as number))]
}

/**
 * The filters every series of an insight shares: global `properties`, and the project's test-account filters
 * when `filterTestAccounts` is on. Undefined when there are none.
 */
export function sharedCondition(node: Record<string, unknown>, testAccountFilters: unknown[]): string | undefined {
  const parts: string[] = []
  let global: string | undefined
  try {
    global = propertiesToHogQL(node.properties)
  } catch (error) {
    if (error instanceof ValidationError) throw new ValidationError(error.detail, 'properties', error.code)
    throw error
  }
  if (global) parts.push(global)
  if (node.filterTestAccounts === true) {
    const test = propertiesToHogQL(testAccountFilters)
    if (test) parts.push(test)
  }
  return parts.length === 0 ? undefined : parts.map((p) => `(${p})`).join(' AND ')
}

/** `samplingFactor` validated: a ratio in (0, 1], or undefined for no sampling. */
export function samplingOf(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !(value > 0) || value > 1) {
    throw new ValidationError('samplingFactor must be a number greater than 0 and at most 1.', 'samplingFactor')
  }
  return value === 1 ? undefined : value
}

/** `FROM events`, sampled when asked. */
export const eventsFrom = (sampling: number | undefined) =>
  sampling === undefined ? 'events' : `events SAMPLE ${sampling}`
