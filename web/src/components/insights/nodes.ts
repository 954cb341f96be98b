// The insight query nodes the screens build and read (hogql.md §4): their shapes as far as the web app uses them,
// the wrapper a saved insight keeps (`InsightVizNode`), and "who is behind this data point" as an ActorsQuery.

export type InsightKind =
  | 'TrendsQuery'
  | 'FunnelsQuery'
  | 'RetentionQuery'
  | 'LifecycleQuery'
  | 'StickinessQuery'
  | 'PathsQuery'

export const INSIGHT_KINDS: { value: InsightKind; label: string }[] = [
  { value: 'TrendsQuery', label: 'Trends' },
  { value: 'FunnelsQuery', label: 'Funnels' },
  { value: 'RetentionQuery', label: 'Retention' },
  { value: 'PathsQuery', label: 'User paths' },
  { value: 'StickinessQuery', label: 'Stickiness' },
  { value: 'LifecycleQuery', label: 'Lifecycle' },
]

export interface PropertyFilter {
  type: 'event' | 'person' | 'session' | 'cohort' | 'hogql' | string
  key: string
  value?: unknown
  operator?: string
}

export interface EntityNode {
  kind: 'EventsNode' | 'ActionsNode'
  event?: string | null
  id?: number
  name?: string
  custom_name?: string
  math?: string
  math_property?: string
  properties?: PropertyFilter[]
}

export interface InsightNode {
  kind: InsightKind | string
  series?: EntityNode[]
  dateRange?: { date_from?: string | null; date_to?: string | null }
  interval?: string
  properties?: PropertyFilter[]
  filterTestAccounts?: boolean
  breakdownFilter?: { breakdown_type?: string; breakdown?: string | number | null; breakdown_limit?: number }
  compareFilter?: { compare?: boolean }
  trendsFilter?: { display?: string; formula?: string; formulaNodes?: { formula: string }[] }
  funnelsFilter?: { funnelOrderType?: string; funnelWindowInterval?: number; funnelWindowIntervalUnit?: string }
  retentionFilter?: {
    targetEntity?: { id: string | number; type: 'events' | 'actions'; name?: string }
    returningEntity?: { id: string | number; type: 'events' | 'actions'; name?: string }
    retentionType?: string
    period?: string
    totalIntervals?: number
  }
  lifecycleFilter?: Record<string, unknown>
  stickinessFilter?: Record<string, unknown>
  pathsFilter?: { includeEventTypes?: string[]; startPoint?: string; endPoint?: string; stepLimit?: number }
  [key: string]: unknown
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The runnable node of a query as stored: `InsightVizNode.source`, `DataTableNode.source`, or the node itself. */
export function sourceOf(query: unknown): InsightNode | null {
  if (!isObject(query)) return null
  if (
    (query.kind === 'InsightVizNode' || query.kind === 'DataTableNode' || query.kind === 'DataVisualizationNode') &&
    isObject(query.source)
  ) {
    return query.source as InsightNode
  }
  return typeof query.kind === 'string' ? (query as InsightNode) : null
}

export const TOTAL_VALUE_DISPLAYS = ['BoldNumber', 'ActionsPie', 'ActionsBarValue', 'ActionsTable', 'WorldMap']

/** One trends / stickiness / lifecycle result series, as the runners answer it. */
export interface SeriesResult {
  data: number[]
  labels: string[]
  days: (string | number)[]
  count: number
  aggregated_value?: number
  label: string
  breakdown_value?: unknown
  compare?: boolean
  compare_label?: 'current' | 'previous'
  status?: string
  action?: { order?: number; custom_name?: string | null; name?: string } | null
}

export interface FunnelStep {
  action_id: string | number | null
  name: string
  custom_name?: string | null
  order: number
  count: number
  average_conversion_time: number | null
  median_conversion_time: number | null
  breakdown_value?: unknown
}

export interface RetentionRow {
  date: string
  label: string
  values: { count: number; label: string }[]
  breakdown_value?: unknown
}

export interface PathEdge {
  source: string
  target: string
  value: number
  average_conversion_time?: number
}

const BREAKDOWN_NULL = '$$_posthog_breakdown_null_$$'
const BREAKDOWN_OTHER = '$$_posthog_breakdown_other_$$'

/** A breakdown value as people read it. */
export function breakdownLabel(value: unknown): string {
  if (Array.isArray(value)) return value.map(breakdownLabel).join(' · ')
  if (value === BREAKDOWN_NULL || value === '' || value === null || value === undefined) return 'None'
  if (value === BREAKDOWN_OTHER || value === 'Other') return 'Other'
  return String(value)
}

/** The name of a series in legends and tables: its custom name or label, its breakdown, its period. */
export function seriesName(s: SeriesResult, several = true): string {
  const base = s.action?.custom_name || s.label
  let name = base
  if (s.breakdown_value !== undefined && s.breakdown_value !== null && !String(base).includes(' - ')) {
    name = several ? `${base} - ${breakdownLabel(s.breakdown_value)}` : breakdownLabel(s.breakdown_value)
  }
  if (s.compare_label === 'previous') name += ' (previous)'
  return name
}

/** A data point a person clicked: enough to ask for the actors behind it. */
export interface InsightPoint {
  /** index of the result object (series × breakdown × compare) */
  resultIndex: number
  /** index inside the series (a day, a stickiness count, a retention interval, a funnel step) */
  dataIndex: number
  /** a retention cohort row */
  row?: number
  /** a funnel step's drop-off (those who did the step before and not this one) */
  dropOff?: boolean
  label: string
  value: unknown
}

/** The ActorsQuery listing the persons behind a data point, or null where the insight has none. */
export function actorsQueryFor(query: unknown, result: unknown, point: InsightPoint): Record<string, unknown> | null {
  const source = sourceOf(query)
  if (!source) return null
  const select = ['actor', 'created_at', 'event_count']
  if (source.kind === 'FunnelsQuery') {
    const steps = Array.isArray(result) ? result : []
    const breakdown = Array.isArray(steps[0]) ? (steps[point.resultIndex] as FunnelStep[])?.[0]?.breakdown_value : null
    return {
      kind: 'ActorsQuery',
      select: ['actor', 'created_at'],
      source: {
        kind: 'FunnelsActorsQuery',
        source,
        funnelStep: point.dropOff ? -(point.dataIndex + 1) : point.dataIndex + 1,
        ...(breakdown !== null && breakdown !== undefined ? { funnelStepBreakdown: breakdown } : {}),
      },
      orderBy: [],
    }
  }
  if (source.kind === 'RetentionQuery') {
    const rows = (Array.isArray(result) ? result : []) as RetentionRow[]
    const row = rows[point.row ?? 0]
    return {
      kind: 'ActorsQuery',
      select: ['actor', 'created_at'],
      source: {
        kind: 'InsightActorsQuery',
        source,
        interval: point.row ?? 0,
        ...(row?.breakdown_value !== undefined && row?.breakdown_value !== null
          ? { breakdown: row.breakdown_value }
          : {}),
      },
      orderBy: [],
    }
  }
  if (source.kind === 'PathsQuery') return null
  const series = (Array.isArray(result) ? result : []) as SeriesResult[]
  const s = series[point.resultIndex]
  // a formula's values are no one's events
  if (!s || s.action === null) return null
  const insight: Record<string, unknown> = { kind: 'InsightActorsQuery', source }
  const total = source.kind === 'TrendsQuery' && TOTAL_VALUE_DISPLAYS.includes(source.trendsFilter?.display ?? '')
  if (source.kind === 'StickinessQuery') insight.day = s.days[point.dataIndex]
  else if (!total && s.days?.length) insight.day = s.days[point.dataIndex]
  if (source.kind !== 'LifecycleQuery') insight.series = s.action?.order ?? 0
  if (source.kind === 'LifecycleQuery' && s.status) insight.status = s.status
  if (s.breakdown_value !== undefined && s.breakdown_value !== null) insight.breakdown = s.breakdown_value
  if (s.compare_label) insight.compare = s.compare_label
  return {
    kind: 'ActorsQuery',
    select: source.kind === 'LifecycleQuery' ? ['actor', 'created_at'] : select,
    source: insight,
    orderBy: [],
  }
}
