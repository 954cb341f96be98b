/**
 * WebStatsTableQuery (hogql.md §4.10; PostHog's `WebStatsTableQueryRunner`): the web analytics dashboard's
 * breakdown tables — top pages, entry and exit pages, referrers, channel types, UTM values, browsers, operating
 * systems, device types, countries, regions, cities, languages, timezones — with visitors, views and (optionally)
 * bounce rate per value, each a `[current, previous]` pair, or conversions with a conversion goal; and the
 * frustration table (rage clicks, dead clicks and errors per page). Per session and value first, then per value,
 * as PostHog counts them. With `doPathCleaning`, page paths go through the project's path cleaning rules.
 */
import { ValidationError } from '../../http/errors.js'
import { literal } from '../filters.js'
import { sessionChannelTypeHogQL } from '../insights/channel-type.js'
import { type InsightDeps, loadInsightContext, type PathCleaningRule } from '../insights/context.js'
import { eventsFrom } from '../insights/series.js'
import { inPeriods, periodPair, samplingRate, unsample, type WebPlan, webPlanOf } from '../insights/web.js'
import type { NodeRunner } from '../runner.js'

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

const DEFAULT_LIMIT = 100
const MAX_LIMIT = 50_000
/** PostHog's display for a missing part of a combined UTM value */
const NULL_DISPLAY = '(none)'

/** A page path through the project's path cleaning rules, in order (each rule's regex replaced by its alias). */
export function cleanPath(path: string, rules: PathCleaningRule[]): string {
  return rules.reduce((expr, rule) => `replaceRegexpAll(${expr}, ${literal(rule.regex)}, ${literal(rule.alias)})`, path)
}

/**
 * Each breakdown's value (HogQL over events and their session; `clean` cleans a page path when the query asks for
 * path cleaning) and which rows it keeps.
 */
const BREAKDOWNS: Record<string, { value: string | ((clean: (path: string) => string) => string); keep: string }> = {
  Page: { value: (clean) => clean('properties.$pathname'), keep: 'breakdown_value IS NOT NULL' },
  InitialPage: { value: (clean) => clean('session.$entry_pathname'), keep: 'breakdown_value IS NOT NULL' },
  ExitPage: { value: (clean) => clean('session.$end_pathname'), keep: 'breakdown_value IS NOT NULL' },
  ExitClick: { value: 'session.$last_external_click_url', keep: 'breakdown_value IS NOT NULL' },
  PreviousPage: {
    // the previous page of the same site is a path (cleaned); an external referrer stays whole
    value: (clean) =>
      `multiIf(isNotNull(properties.$prev_pageview_pathname), ${clean('properties.$prev_pageview_pathname')}, ` +
      'domain(toString(properties.$current_url)) = domain(toString(properties.$referrer)), ' +
      `${clean('path(toString(properties.$referrer))')}, properties.$referrer)`,
    keep: 'breakdown_value IS NOT NULL',
  },
  // PostHog checks for '' too, which a session without entry values may give
  InitialChannelType: {
    value: sessionChannelTypeHogQL(),
    keep: "breakdown_value IS NOT NULL AND breakdown_value != ''",
  },
  FrustrationMetrics: { value: (clean) => clean('properties.$pathname'), keep: 'breakdown_value IS NOT NULL' },
  ScreenName: { value: 'properties.$screen_name', keep: 'breakdown_value IS NOT NULL' },
  InitialReferringDomain: { value: 'session.$entry_referring_domain', keep: 'breakdown_value IS NOT NULL' },
  InitialReferringURL: {
    value: 'cutQueryStringAndFragment(session.$entry_referrer)',
    keep: 'breakdown_value IS NOT NULL',
  },
  InitialUTMSource: { value: 'session.$entry_utm_source', keep: 'true' },
  InitialUTMCampaign: { value: 'session.$entry_utm_campaign', keep: 'true' },
  InitialUTMMedium: { value: 'session.$entry_utm_medium', keep: 'true' },
  InitialUTMTerm: { value: 'session.$entry_utm_term', keep: 'true' },
  InitialUTMContent: { value: 'session.$entry_utm_content', keep: 'true' },
  InitialUTMSourceMediumCampaign: {
    value:
      "concatWithSeparator(' / ', if(isNotNull(session.$entry_utm_source), session.$entry_utm_source, " +
      `if(isNotNull(session.$entry_referring_domain), concat('referrer:', session.$entry_referring_domain), '${NULL_DISPLAY}')), ` +
      `coalesce(session.$entry_utm_medium, '${NULL_DISPLAY}'), coalesce(session.$entry_utm_campaign, '${NULL_DISPLAY}'))`,
    keep: 'breakdown_value IS NOT NULL',
  },
  Browser: { value: 'properties.$browser', keep: 'breakdown_value IS NOT NULL' },
  OS: { value: 'properties.$os', keep: 'breakdown_value IS NOT NULL' },
  Viewport: {
    value: 'tuple(toFloat(properties.$viewport_width), toFloat(properties.$viewport_height))',
    keep:
      'tupleElement(breakdown_value, 1) IS NOT NULL AND tupleElement(breakdown_value, 2) IS NOT NULL AND ' +
      'tupleElement(breakdown_value, 1) != 0 AND tupleElement(breakdown_value, 2) != 0',
  },
  DeviceType: { value: 'properties.$device_type', keep: 'breakdown_value IS NOT NULL' },
  Country: { value: 'properties.$geoip_country_code', keep: 'breakdown_value IS NOT NULL' },
  Region: {
    value:
      'tuple(properties.$geoip_country_code, properties.$geoip_subdivision_1_code, properties.$geoip_subdivision_1_name)',
    keep: 'tupleElement(breakdown_value, 2) IS NOT NULL',
  },
  City: {
    value: 'tuple(properties.$geoip_country_code, properties.$geoip_city_name)',
    keep: 'tupleElement(breakdown_value, 2) IS NOT NULL',
  },
  Language: { value: 'properties.$browser_language', keep: 'breakdown_value IS NOT NULL' },
  Timezone: { value: '-toFloat(properties.$timezone_offset) / 60', keep: 'breakdown_value IS NOT NULL' },
}

export const WEB_STATS_BREAKDOWNS = Object.keys(BREAKDOWNS)

/** `orderBy` field → the column it sorts. */
const ORDER_FIELDS: Record<string, string> = {
  Visitors: 'visitors',
  Views: 'views',
  BounceRate: 'bounce_rate',
  TotalConversions: 'total_conversions',
  UniqueConversions: 'unique_conversions',
  ConversionRate: 'conversion_rate',
}

/** The frustration table's counts: column → the event it counts. */
const FRUSTRATIONS: [string, string][] = [
  ['rage_clicks', '$rageclick'],
  ['dead_clicks', '$dead_click'],
  ['errors', '$exception'],
]

/** Counted columns, each a `[current, previous]` pair scaled back from a sample. */
const PAIR_COLUMNS = new Set([
  'visitors',
  'views',
  'total_conversions',
  'unique_conversions',
  ...FRUSTRATIONS.map(([c]) => c),
])

/** Columns whose fill fraction is their share of the table's total; the others are fractions already. */
const SHARE_COLUMNS = new Set(['visitors', 'views', 'total_conversions', 'unique_conversions'])

interface TablePlan {
  web: WebPlan
  breakdown: string
  /** the project's path cleaning rules when the query asks for path cleaning (else none) */
  cleaning: PathCleaningRule[]
  includeBounceRate: boolean
  limit: number
  offset: number
  order: { column?: string; direction: 'ASC' | 'DESC' }
}

function tablePlanOf(node: Record<string, unknown>, web: WebPlan, rules: PathCleaningRule[]): TablePlan {
  const breakdown = node.breakdownBy
  if (typeof breakdown !== 'string' || !(breakdown in BREAKDOWNS)) {
    throw new ValidationError(
      `breakdownBy must be one of ${WEB_STATS_BREAKDOWNS.map((b) => `'${b}'`).join(', ')}.`,
      'breakdownBy',
      breakdown === undefined ? 'required' : 'invalid_choice',
    )
  }
  const intOf = (value: unknown, attr: string, fallback: number, min: number) => {
    if (value === undefined || value === null) return fallback
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
      throw new ValidationError(`${attr} must be an integer of at least ${min}.`, attr)
    }
    return value
  }
  const limit = Math.min(intOf(node.limit, 'limit', DEFAULT_LIMIT, 1), MAX_LIMIT)
  const offset = intOf(node.offset, 'offset', 0, 0)
  const order: TablePlan['order'] = { direction: 'DESC' }
  if (node.orderBy !== undefined && node.orderBy !== null) {
    const [field, direction] = Array.isArray(node.orderBy) ? node.orderBy : []
    if (typeof field !== 'string' || !(direction === 'ASC' || direction === 'DESC')) {
      throw new ValidationError('orderBy is [field, "ASC" | "DESC"].', 'orderBy')
    }
    order.column = ORDER_FIELDS[field]
    order.direction = direction
  }
  if (node.doPathCleaning !== undefined && node.doPathCleaning !== null && typeof node.doPathCleaning !== 'boolean') {
    throw new ValidationError('doPathCleaning must be a boolean.', 'doPathCleaning')
  }
  return {
    web,
    breakdown,
    cleaning: node.doPathCleaning === true ? rules : [],
    includeBounceRate: node.includeBounceRate === true,
    limit,
    offset,
    order,
  }
}

const and = (parts: (string | undefined)[]) =>
  parts
    .filter((p): p is string => !!p)
    .map((p) => `(${p})`)
    .join(' AND ')

/** Per session and breakdown value: the person, pageviews, bounce and start (PostHog's MAIN_INNER_QUERY). */
function innerQuery(plan: TablePlan, value: string, filters: string | undefined): string {
  const web = plan.web
  const select = [
    'any(person_id) AS filtered_person_id',
    web.goal
      ? "countIf(event = '$pageview' OR event = '$screen') AS filtered_pageview_count"
      : 'count() AS filtered_pageview_count',
    `${value} AS breakdown_value`,
    'session.session_id AS session_id',
    'any(session.$is_bounce) AS is_bounce',
    'min(session.$start_timestamp) AS start_timestamp',
  ]
  if (web.goal) {
    select.push(
      `countIf(${web.goal}) AS conversion_count`,
      `any(if(${web.goal}, person_id, NULL)) AS conversion_person_id`,
    )
  }
  const events = web.goal
    ? `event = '$pageview' OR event = '$screen' OR ${web.goal}`
    : "event = '$pageview' OR event = '$screen'"
  return (
    `SELECT ${select.join(', ')} FROM ${eventsFrom(web.sampling)} ` +
    `WHERE ${and([inPeriods(web, 'timestamp'), events, filters])} GROUP BY session_id, breakdown_value`
  )
}

/** A breakdown's value expression for a plan (its paths cleaned when asked). */
function breakdownValueOf(plan: TablePlan, breakdown: string): string {
  const value = BREAKDOWNS[breakdown].value
  return typeof value === 'string' ? value : value((path) => cleanPath(path, plan.cleaning))
}

/**
 * The frustration table (PostHog's frustration metrics query): rage clicks, dead clicks and errors per page, each a
 * `[current, previous]` pair, pages without any left out, the most errors first.
 */
function frustrationHogQL(plan: TablePlan): { hogql: string; columns: string[] } {
  const web = plan.web
  const inner =
    `SELECT ${breakdownValueOf(plan, 'FrustrationMetrics')} AS breakdown_value, ` +
    `${FRUSTRATIONS.map(([column, event]) => `countIf(event = ${literal(event)}) AS ${column}_count`).join(', ')}, ` +
    'session.session_id AS session_id, min(session.$start_timestamp) AS start_timestamp ' +
    `FROM ${eventsFrom(web.sampling)} WHERE ${and([
      inPeriods(web, 'timestamp'),
      "event IN ('$pageview', '$screen', '$rageclick', '$dead_click', '$exception')",
      web.filters,
    ])} GROUP BY session_id, breakdown_value`
  const columns = ['breakdown_value', ...FRUSTRATIONS.map(([column]) => column)]
  const pairs = FRUSTRATIONS.map(
    ([column]) => `tuple(${periodPair(web, 'sum', `${column}_count`).join(', ')}) AS ${column}`,
  )
  // a page with any of them in either period
  const having = FRUSTRATIONS.map(([c]) => `tupleElement(${c}, 1) > 0 OR tupleElement(${c}, 2) > 0`).join(' OR ')
  return {
    hogql:
      `SELECT breakdown_value, ${pairs.join(', ')} FROM (${inner}) WHERE ${BREAKDOWNS.FrustrationMetrics.keep} ` +
      `GROUP BY breakdown_value HAVING ${having} ` +
      `ORDER BY errors DESC, rage_clicks DESC, dead_clicks DESC, breakdown_value ASC LIMIT ${plan.limit + 1} OFFSET ${plan.offset}`,
    columns,
  }
}

/** The table's HogQL and its columns' names (PostHog's `context.columns.*`, without the prefix). */
export function webStatsTableHogQL(plan: TablePlan): { hogql: string; columns: string[] } {
  if (plan.breakdown === 'FrustrationMetrics') return frustrationHogQL(plan)
  const web = plan.web
  const spec = BREAKDOWNS[plan.breakdown]
  const language = plan.breakdown === 'Language'
  const pair = (fn: string, column: string) => `tuple(${periodPair(web, fn, column).join(', ')})`
  const selects: [string, string][] = [
    [
      'breakdown_value',
      language ? "arrayElement(splitByChar('-', assumeNotNull(breakdown_value), 2), 1)" : 'breakdown_value',
    ],
    ['visitors', pair('uniq', 'filtered_person_id')],
  ]
  if (web.goal) {
    selects.push(
      ['total_conversions', pair('sum', 'conversion_count')],
      ['unique_conversions', pair('uniq', 'conversion_person_id')],
      [
        'conversion_rate',
        'tuple(if(tupleElement(visitors, 1) = 0, NULL, tupleElement(unique_conversions, 1) / tupleElement(visitors, 1)), ' +
          'if(tupleElement(visitors, 2) = 0, NULL, tupleElement(unique_conversions, 2) / tupleElement(visitors, 2)))',
      ],
    )
  } else {
    selects.push(['views', pair('sum', 'filtered_pageview_count')])
    if (language) {
      selects.push([
        'aggregation_value',
        "arrayElement(topK(1)(arrayElement(splitByChar('-', assumeNotNull(breakdown_value), 2), 2)), 1)",
      ])
    }
  }
  const pageBounce = plan.includeBounceRate && plan.breakdown === 'Page' && !web.goal
  if (plan.includeBounceRate && !web.goal && !pageBounce) selects.push(['bounce_rate', pair('avg', 'is_bounce')])
  const columns = selects.map(([alias]) => alias)
  if (pageBounce) columns.push('bounce_rate')

  // ORDER BY: the asked column first, then conversions, visitors, views, and the value
  const order: string[] = []
  if (plan.order.column && columns.includes(plan.order.column))
    order.push(`${plan.order.column} ${plan.order.direction}`)
  for (const c of ['unique_conversions', 'total_conversions', 'visitors', 'views']) {
    if (c !== plan.order.column && columns.includes(c)) order.push(`${c} ${plan.order.direction}`)
  }
  order.push('breakdown_value ASC')
  const first = plan.order.column && columns.includes(plan.order.column) ? plan.order.column : columns[1]
  const fill = SHARE_COLUMNS.has(first)
    ? `tupleElement(${first}, 1) / sum(tupleElement(${first}, 1)) OVER ()`
    : `tupleElement(${first}, 1)`
  columns.push('ui_fill_fraction')

  const value = breakdownValueOf(plan, plan.breakdown)
  // joins compare a non-null key (equality of nullable values is not a join condition the engine takes)
  const joinKey = "ifNull(toString(breakdown_value), '') AS join_key"
  const counts =
    `SELECT ${selects.map(([alias, expr]) => `${expr} AS ${alias}`).join(', ')}${pageBounce ? `, ${joinKey}` : ''} ` +
    `FROM (${innerQuery(plan, value, web.filters)}) WHERE ${spec.keep} GROUP BY breakdown_value`
  let body: string
  if (pageBounce) {
    // bounce rate of the sessions that started on the page (PostHog's PATH_BOUNCE_QUERY), its filters without
    // the pathname ones
    const bounce =
      `SELECT ${joinKey}, tuple(${periodPair(web, 'avg', 'is_bounce').join(', ')}) AS bounce_rate ` +
      `FROM (${innerQuery(plan, cleanPath('session.$entry_pathname', plan.cleaning), web.filtersWithoutPathname)}) GROUP BY breakdown_value`
    body =
      `SELECT counts.breakdown_value AS breakdown_value, counts.visitors AS visitors, counts.views AS views, ` +
      `bounce.bounce_rate AS bounce_rate, ${fill.replaceAll(first, `counts.${first}`)} AS ui_fill_fraction ` +
      `FROM (${counts}) AS counts LEFT JOIN (${bounce}) AS bounce ON counts.join_key = bounce.join_key`
  } else {
    body =
      `SELECT ${columns.filter((c) => c !== 'ui_fill_fraction').join(', ')}, ${fill} AS ui_fill_fraction ` +
      `FROM (${counts})`
  }
  return {
    hogql: `${body} ORDER BY ${order.join(', ')} LIMIT ${plan.limit + 1} OFFSET ${plan.offset}`,
    columns,
  }
}

export function createWebStatsTableRunner(deps: InsightDeps): NodeRunner {
  return async (node, ctx, run) => {
    const started = performance.now()
    const insight = await loadInsightContext(ctx, deps)
    const plan = tablePlanOf(node, webPlanOf(node, insight), insight.pathCleaningFilters)
    const { hogql, columns } = webStatsTableHogQL(plan)
    const executed = await run(hogql, ctx)
    const hasMore = executed.rows.length > plan.limit
    const sampling = plan.web.sampling
    const pairOf = (v: unknown) =>
      Array.isArray(v) ? [unsample(v[0], sampling), unsample(v[1], sampling)] : [unsample(v, sampling), null]
    const language = plan.breakdown === 'Language'
    const aggregationAt = columns.indexOf('aggregation_value')
    const results = executed.rows.slice(0, plan.limit).map((row) => {
      const out: unknown[] = []
      columns.forEach((column, i) => {
        if (column === 'aggregation_value') return
        let value = row[i]
        if (column === 'breakdown_value' && language && value !== null) value = `${value}-${row[aggregationAt]}`
        if (PAIR_COLUMNS.has(column)) value = pairOf(value)
        out.push(value)
      })
      out.push('')
      return out
    })
    ctx.stats.resultRows += results.length
    const shown = columns.filter((c) => c !== 'aggregation_value')
    return {
      results,
      columns: [...shown.map((c) => `context.columns.${c}`), 'context.columns.cross_sell'],
      types: [
        ...shown.map((c) => [`context.columns.${c}`, executed.types[columns.indexOf(c)] ?? 'Unknown']),
        ['context.columns.cross_sell', 'String'],
      ],
      hogql: executed.hogql,
      hasMore,
      limit: plan.limit,
      offset: plan.offset,
      samplingRate: samplingRate(sampling),
      usedPreAggregatedTables: false,
      modifiers: isObject(node.modifiers) ? node.modifiers : {},
      timings: [{ k: '.', t: (performance.now() - started) / 1000 }],
      error: null,
    }
  }
}
