// A new insight of each kind as PostHog starts it, and the switch between kinds keeping what both share.
import type { EntityNode, InsightKind, InsightNode } from './nodes'

const pageview = (math?: string): EntityNode => ({
  kind: 'EventsNode',
  event: '$pageview',
  name: '$pageview',
  ...(math ? { math } : {}),
})

export function defaultSource(kind: InsightKind): InsightNode {
  const dateRange = { date_from: '-7d', date_to: null }
  switch (kind) {
    case 'TrendsQuery':
      return {
        kind,
        series: [pageview('total')],
        interval: 'day',
        dateRange,
        trendsFilter: { display: 'ActionsLineGraph' },
      }
    case 'FunnelsQuery':
      return {
        kind,
        series: [pageview(), pageview()],
        dateRange,
        funnelsFilter: { funnelOrderType: 'ordered', funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day' },
      }
    case 'RetentionQuery':
      return {
        kind,
        dateRange,
        retentionFilter: {
          targetEntity: { id: '$pageview', type: 'events', name: '$pageview' },
          returningEntity: { id: '$pageview', type: 'events', name: '$pageview' },
          retentionType: 'retention_first_time',
          period: 'Day',
          totalIntervals: 8,
        },
      }
    case 'LifecycleQuery':
      return { kind, series: [pageview()], interval: 'day', dateRange }
    case 'StickinessQuery':
      return { kind, series: [pageview()], interval: 'day', dateRange }
    case 'PathsQuery':
      return { kind, dateRange, pathsFilter: { includeEventTypes: ['$pageview'], stepLimit: 5 } }
  }
}

const stripMath = (s: EntityNode): EntityNode => {
  const { math: _m, math_property: _p, ...rest } = s
  return rest
}

/** The same question asked as another kind: date range, filters and events carried over where they fit. */
export function switchKind(from: InsightNode, kind: InsightKind): InsightNode {
  if (from.kind === kind) return from
  const next = defaultSource(kind)
  if (from.dateRange) next.dateRange = from.dateRange
  if (from.properties?.length) next.properties = from.properties
  if (from.filterTestAccounts) next.filterTestAccounts = true
  const series = from.series?.length ? from.series : undefined
  if (series) {
    if (kind === 'TrendsQuery') next.series = series.map((s) => ({ ...s, math: s.math ?? 'total' }))
    else if (kind === 'FunnelsQuery') next.series = (series.length > 1 ? series : [series[0], series[0]]).map(stripMath)
    else if (kind === 'LifecycleQuery') next.series = [stripMath(series[0])]
    else if (kind === 'StickinessQuery') next.series = series.map(stripMath)
  }
  if (from.interval && 'interval' in next) next.interval = from.interval
  return next
}

/** The node a saved insight stores: the query wrapped in an InsightVizNode, as PostHog saves it. */
export const vizNode = (source: InsightNode) => ({ kind: 'InsightVizNode', source })
