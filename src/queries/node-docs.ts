// The query node kinds `POST /query/` runs, for the OpenAPI document: the fields each runner reads. Each runner
// checks its node itself (with PostHog's messages and `attr`), so these schemas describe and do not validate;
// test/http/openapi.test.ts checks that every registered kind is described here.
import { type TSchema, Type } from 'typebox'

const Any = Type.Unknown()
const AnyObject = Type.Object({}, { additionalProperties: true })
const opt = (schema: TSchema, description?: string) =>
  Type.Optional(description ? Type.Unsafe<unknown>({ ...schema, description }) : schema)

const DateRange = Type.Object(
  { date_from: opt(Type.String()), date_to: opt(Type.String()), explicitDate: opt(Type.Boolean()) },
  { description: 'Relative (`-7d`, `-1mStart`, `all`) or absolute dates, in the project’s timezone' },
)
const Properties = Type.Unsafe<unknown>({
  description: 'Property filters: a list, or a group `{type: AND|OR, values: […]}`',
})
const Series = Type.Array(AnyObject, {
  description: 'EventsNode `{kind, event, math, properties}`, ActionsNode `{kind, id}` or DataWarehouseNode items',
})

/** Fields every insight node shares. */
const insight = {
  dateRange: opt(DateRange),
  properties: opt(Properties),
  filterTestAccounts: opt(Type.Boolean(), 'Apply the project’s test-account filters'),
  samplingFactor: opt(Type.Number(), 'Sample this fraction of persons (0–1)'),
  aggregation_group_type_index: opt(Type.Integer(), 'Count groups of this type instead of persons'),
  modifiers: opt(AnyObject),
}

const node = (kind: string, description: string, fields: Record<string, TSchema>) =>
  Type.Object({ kind: Type.Literal(kind), ...fields }, { additionalProperties: true, description, title: kind })

/** Described kinds, by kind. */
export const NODE_DOCS: Record<string, TSchema> = {
  HogQLQuery: node('HogQLQuery', 'A HogQL SELECT, compiled to ClickHouse SQL over this project’s data only.', {
    query: Type.String({ description: 'e.g. `SELECT event, count() FROM events GROUP BY event`' }),
    values: opt(AnyObject, 'Values for `{placeholders}`'),
    variables: opt(AnyObject, 'Insight variables for `{variables.name}`'),
    filters: opt(AnyObject, 'dateRange and properties applied to `{filters}`'),
  }),
  EventsQuery: node('EventsQuery', 'Rows of events: chosen columns, filters and order (the events table).', {
    select: Type.Array(Type.String(), { description: 'HogQL expressions, e.g. `*`, `event`, `count()`' }),
    where: opt(Type.Array(Type.String())),
    orderBy: opt(Type.Array(Type.String())),
    event: opt(Type.String()),
    properties: opt(Properties),
    fixedProperties: opt(Properties),
    personId: opt(Type.String()),
    after: opt(Type.String()),
    before: opt(Type.String()),
    limit: opt(Type.Integer()),
    offset: opt(Type.Integer()),
  }),
  TrendsQuery: node('TrendsQuery', 'Counts or aggregates per interval, per series, with breakdowns and formulas.', {
    series: Series,
    interval: opt(Type.String(), 'minute, hour, day, week or month'),
    breakdownFilter: opt(AnyObject),
    trendsFilter: opt(AnyObject, 'display, formula(s), showValuesOnSeries…'),
    compareFilter: opt(AnyObject, '`{compare: true}` adds the previous period'),
    ...insight,
  }),
  FunnelsQuery: node('FunnelsQuery', 'Conversion through ordered steps, with breakdowns and time to convert.', {
    series: Series,
    funnelsFilter: opt(AnyObject, 'funnelVizType, funnelOrderType, funnelWindowInterval, exclusions…'),
    breakdownFilter: opt(AnyObject),
    interval: opt(Type.String()),
    ...insight,
  }),
  RetentionQuery: node('RetentionQuery', 'Of those who did the start event, who came back in later periods.', {
    retentionFilter: opt(AnyObject, 'targetEntity, returningEntity, period, totalIntervals, retentionType…'),
    breakdownFilter: opt(AnyObject),
    ...insight,
  }),
  StickinessQuery: node('StickinessQuery', 'How many actors were active in exactly k intervals of the range.', {
    series: Series,
    interval: opt(Type.String()),
    stickinessFilter: opt(AnyObject),
    compareFilter: opt(AnyObject),
    ...insight,
  }),
  LifecycleQuery: node('LifecycleQuery', 'New, returning, resurrecting and dormant actors per interval.', {
    series: Series,
    interval: opt(Type.String()),
    lifecycleFilter: opt(AnyObject),
    ...insight,
  }),
  PathsQuery: node('PathsQuery', 'The most common paths between events or pages.', {
    pathsFilter: opt(AnyObject, 'includeEventTypes, startPoint, endPoint, stepLimit, edgeLimit…'),
    funnelPathsFilter: opt(AnyObject),
    ...insight,
  }),
  SessionsQuery: node('SessionsQuery', 'Rows of sessions: chosen columns, filters and order.', {
    select: Type.Array(Type.String()),
    where: opt(Type.Array(Type.String())),
    orderBy: opt(Type.Array(Type.String())),
    properties: opt(Properties),
    personId: opt(Type.String()),
    after: opt(Type.String()),
    before: opt(Type.String()),
    limit: opt(Type.Integer()),
    offset: opt(Type.Integer()),
  }),
  WebOverviewQuery: node('WebOverviewQuery', 'Web analytics headline: visitors, views, sessions, duration, bounce.', {
    dateRange: opt(DateRange),
    properties: opt(Properties),
    compareFilter: opt(AnyObject),
    conversionGoal: opt(AnyObject),
    filterTestAccounts: opt(Type.Boolean()),
  }),
  WebStatsTableQuery: node('WebStatsTableQuery', 'Web analytics table broken down by page, source, device…', {
    breakdownBy: Type.String({ description: 'Page, InitialPage, ExitPage, InitialReferringDomain, Browser…' }),
    dateRange: opt(DateRange),
    properties: opt(Properties),
    includeBounceRate: opt(Type.Boolean()),
    orderBy: opt(Type.Array(Any)),
    limit: opt(Type.Integer()),
  }),
  ActorsQuery: node('ActorsQuery', 'Persons (or the persons or groups behind an insight’s data point, by `source`).', {
    source: opt(AnyObject, 'InsightActorsQuery, FunnelsActorsQuery or StickinessActorsQuery; none: all persons'),
    select: opt(Type.Array(Type.String()), 'e.g. `person`, `id`, `created_at`, `event_count`, any HogQL'),
    search: opt(Type.String(), 'Matches e-mail, name and distinct ids'),
    properties: opt(Properties),
    orderBy: opt(Type.Array(Type.String())),
    limit: opt(Type.Integer()),
    offset: opt(Type.Integer()),
  }),
  InsightActorsQuery: node('InsightActorsQuery', 'The actors behind one data point of a trends, lifecycle… insight.', {
    source: AnyObject,
    day: opt(Type.Union([Type.String(), Type.Integer()]), 'The interval of the data point'),
    series: opt(Type.Integer(), 'Series index'),
    breakdown: opt(Any, 'Breakdown value'),
    compare: opt(Type.String(), 'current or previous'),
    status: opt(Type.String(), 'Lifecycle: new, returning, resurrecting or dormant'),
    interval: opt(Type.Integer()),
  }),
  FunnelsActorsQuery: node('FunnelsActorsQuery', 'Who reached (or dropped off before, with a negative step) a step.', {
    source: AnyObject,
    funnelStep: opt(Type.Integer()),
    funnelStepBreakdown: opt(Any),
    funnelTrendsDropOff: opt(Type.Boolean()),
    funnelTrendsEntrancePeriodStart: opt(Type.String()),
  }),
  StickinessActorsQuery: node('StickinessActorsQuery', 'The actors active in exactly `day` intervals.', {
    source: AnyObject,
    day: opt(Type.Union([Type.String(), Type.Integer()])),
    series: opt(Type.Integer()),
    compare: opt(Type.String()),
  }),
  InsightActorsQueryOptions: node('InsightActorsQueryOptions', 'The coordinates a data point of `source` may take.', {
    source: AnyObject,
  }),
  ExperimentQuery: node('ExperimentQuery', 'An experiment metric’s results per variant, with its statistics.', {
    experiment_id: opt(Type.Integer()),
    metric: opt(AnyObject),
  }),
}

/** Nodes that wrap another: the inner `source` runs. */
const WRAPPERS = ['DataTableNode', 'DataVisualizationNode', 'InsightVizNode'].map((kind) =>
  node(kind, `Runs its \`source\` node (as the web app wraps queries).`, { source: AnyObject }),
)

/** The `query` of `POST /query/`: one of the described kinds, or a kind known to the server but not yet described. */
export function queryNodeDoc(kinds: readonly string[]): TSchema {
  const described = kinds.map((kind) => NODE_DOCS[kind] ?? node(kind, `${kind} node`, {}))
  return Type.Union([...described, ...WRAPPERS], {
    description: `A query node; \`kind\` is one of ${kinds.map((k) => `\`${k}\``).join(', ')}, or a wrapper of one.`,
  })
}

/** The kinds the query service runs in a default app (its own two and the insight runners). */
export const QUERY_KINDS = [
  'HogQLQuery',
  'EventsQuery',
  'TrendsQuery',
  'StickinessQuery',
  'LifecycleQuery',
  'RetentionQuery',
  'FunnelsQuery',
  'SessionsQuery',
  'WebOverviewQuery',
  'WebStatsTableQuery',
  'PathsQuery',
  'ActorsQuery',
  'InsightActorsQuery',
  'FunnelsActorsQuery',
  'StickinessActorsQuery',
  'InsightActorsQueryOptions',
  'ExperimentQuery',
]
