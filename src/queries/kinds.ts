/**
 * The node kinds PostHog's query endpoint accepts (the `kind` tags of its `QueryRequest.query` union, in its
 * order), and the refusals it answers: an unknown kind fails the request's parse, a known one that nothing here
 * runs is an unsupported kind. Pure.
 */
import { ParseError, ValidationError } from '../http/errors.js'

export const POSTHOG_QUERY_KINDS = [
  'EventsNode',
  'ActionsNode',
  'PersonsNode',
  'DataWarehouseNode',
  'EventsQuery',
  'ActorsQuery',
  'GroupsQuery',
  'InsightActorsQuery',
  'InsightActorsQueryOptions',
  'SessionsTimelineQuery',
  'HogQuery',
  'HogQLQuery',
  'HogQLMetadata',
  'HogQLAutocomplete',
  'HogQLASTQuery',
  'SessionAttributionExplorerQuery',
  'RevenueExampleEventsQuery',
  'RevenueExampleDataWarehouseTablesQuery',
  'ErrorTrackingQuery',
  'ErrorTrackingSimilarIssuesQuery',
  'ErrorTrackingIssueCorrelationQuery',
  'ExperimentFunnelsQuery',
  'ExperimentTrendsQuery',
  'ExperimentQuery',
  'ExperimentExposureQuery',
  'DocumentSimilarityQuery',
  'WebOverviewQuery',
  'WebStatsTableQuery',
  'WebExternalClicksTableQuery',
  'WebGoalsQuery',
  'WebVitalsQuery',
  'WebVitalsPathBreakdownQuery',
  'WebPageURLSearchQuery',
  'WebAnalyticsExternalSummaryQuery',
  'RevenueAnalyticsGrossRevenueQuery',
  'RevenueAnalyticsMetricsQuery',
  'RevenueAnalyticsMRRQuery',
  'RevenueAnalyticsOverviewQuery',
  'RevenueAnalyticsTopCustomersQuery',
  'MarketingAnalyticsTableQuery',
  'MarketingAnalyticsAggregatedQuery',
  'DataVisualizationNode',
  'DataTableNode',
  'SavedInsightNode',
  'InsightVizNode',
  'TrendsQuery',
  'FunnelsQuery',
  'RetentionQuery',
  'PathsQuery',
  'StickinessQuery',
  'LifecycleQuery',
  'FunnelCorrelationQuery',
  'DatabaseSchemaQuery',
  'LogsQuery',
  'SuggestedQuestionsQuery',
  'TeamTaxonomyQuery',
  'EventTaxonomyQuery',
  'ActorsPropertyTaxonomyQuery',
  'TracesQuery',
  'TraceQuery',
  'VectorSearchQuery',
  'UsageMetricsQuery',
]

const KNOWN = new Set(POSTHOG_QUERY_KINDS)

/** The one value PostHog's request schema allows for `limit_context`. */
export const LIMIT_CONTEXTS = ['posthog_ai']

const show = (value: unknown) => (typeof value === 'string' ? `'${value}'` : JSON.stringify(value))

/** Refuses a request whose top-level `kind` PostHog does not know, as its request parser does (400 parse_error). */
export function checkKnownKind(query: Record<string, unknown>, runnable: (kind: string) => boolean): void {
  const kind = query.kind
  if (typeof kind !== 'string' || KNOWN.has(kind) || runnable(kind)) return
  const tags = POSTHOG_QUERY_KINDS.map((k) => `'${k}'`).join(', ')
  throw new ParseError(
    `JSON parse error - 1 validation error for QueryRequest\nquery\n  Input tag ${show(kind)} found using 'kind' does not match any of the expected tags: ${tags} [type=union_tag_invalid, input_value={'kind': ${show(kind)}}, input_type=dict]`,
  )
}

/** A kind PostHog knows that nothing here runs. */
export const unsupportedKind = (kind: string) =>
  new ValidationError(`Unsupported query kind: ${kind}`, null, 'invalid_input')

/** `limit_context`: absent, null or one of PostHog's values. */
export function checkLimitContext(value: unknown): void {
  if (value === undefined || value === null || LIMIT_CONTEXTS.includes(value as string)) return
  throw new ParseError(
    `JSON parse error - 1 validation error for QueryRequest\nlimit_context\n  Input should be ${LIMIT_CONTEXTS.map((v) => `'${v}'`).join(' or ')} [type=enum, input_value=${show(value)}, input_type=${typeof value === 'string' ? 'str' : typeof value}]`,
  )
}
