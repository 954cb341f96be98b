// Any insight's result drawn the way PostHog draws it: trends as line, bar, area, number, pie or table; stickiness
// as lines; lifecycle as stacked bars (dormant below zero); funnels as step bars with conversion; retention as the
// cohort grid; paths as a sankey; a HogQL table as a table. Dashboards import it for their tiles.
//
//   <InsightChart query={insight.query} result={insight.result} height={240} />
//
// `query` is the stored node (InsightVizNode, DataVisualizationNode or the bare query); `result` is the query
// API's `results` (or the whole response). `onPointClick` receives the data point clicked (see nodes.ts for the
// ActorsQuery behind it).
import { Center, Stack, Table, Text, Title, UnstyledButton } from '@mantine/core'
import { useMemo } from 'react'
import { Chart } from '../charts/Chart'
import { Empty } from '../States'
import classes from './InsightChart.module.css'
import {
  breakdownLabel,
  type FunnelStep,
  type InsightPoint,
  type PathEdge,
  type RetentionRow,
  type SeriesResult,
  seriesName,
  sourceOf,
  TOTAL_VALUE_DISPLAYS,
} from './nodes'

export interface InsightChartProps {
  query: unknown
  result: unknown
  height?: number
  onPointClick?: (point: InsightPoint) => void
}

export const PALETTE = [
  '#1d4aff',
  '#621da6',
  '#42827e',
  '#ce0e74',
  '#f14f58',
  '#7c440e',
  '#529a0a',
  '#0476fb',
  '#fe729e',
  '#35416b',
  '#41cbc4',
  '#b64b02',
]

export const LIFECYCLE_COLORS: Record<string, string> = {
  new: '#1d4aff',
  returning: '#388600',
  resurrecting: '#a56eff',
  dormant: '#db3707',
}

/** `results` of a response, or the value itself when it is already the results. */
function resultsOf(result: unknown): unknown {
  if (result && typeof result === 'object' && !Array.isArray(result) && 'results' in result) {
    return (result as { results: unknown }).results
  }
  return result
}

// Made once: `toLocaleString` builds a new formatter on every call, and a table of a month by five series called it
// hundreds of times per answer (a quarter of the page's script time when an insight was recomputed).
const INTEGER = new Intl.NumberFormat('en-US')
const DECIMAL = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 })

export const formatNumber = (v: unknown): string => {
  if (typeof v !== 'number') return v === null || v === undefined ? '—' : String(v)
  return Number.isInteger(v) ? INTEGER.format(v) : DECIMAL.format(v)
}

export function InsightChart({ query, result, height = 320, onPointClick }: InsightChartProps) {
  const source = sourceOf(query)
  const results = resultsOf(result)
  if (!source) return <Empty title="Nothing to show">This insight has no query.</Empty>
  if (results === null || results === undefined) return <Empty title="No results yet" />
  switch (source.kind) {
    case 'FunnelsQuery':
      return <FunnelChart results={results} height={height} onPointClick={onPointClick} />
    case 'RetentionQuery':
      return (
        <RetentionGrid
          rows={(Array.isArray(results) ? results : []).filter((r) => Array.isArray(r?.values)) as RetentionRow[]}
          onPointClick={onPointClick}
        />
      )
    case 'PathsQuery':
      return (
        <PathsChart
          edges={(Array.isArray(results) ? results : []).filter((r) => typeof r?.source === 'string') as PathEdge[]}
          height={height}
          showTable={!!onPointClick}
        />
      )
    case 'TrendsQuery':
    case 'StickinessQuery':
    case 'LifecycleQuery':
      return (
        <SeriesChart
          kind={source.kind}
          display={source.kind === 'TrendsQuery' ? (source.trendsFilter?.display ?? 'ActionsLineGraph') : undefined}
          results={results}
          height={height}
          onPointClick={onPointClick}
        />
      )
    default:
      return <TableResult result={result} />
  }
}

function SeriesChart({
  kind,
  display,
  results,
  height,
  onPointClick,
}: {
  kind: string
  display?: string
  results: unknown
  height: number
  onPointClick?: (point: InsightPoint) => void
}) {
  // One option per answer: a parent's re-render with the same answer (an edit of the query while its result is on
  // its way, a keystroke in the name) does not draw the chart again.
  const series = useMemo(
    () => (Array.isArray(results) ? results : []).filter((r) => Array.isArray(r?.data)) as SeriesResult[],
    [results],
  )
  const several = new Set(series.map((s) => s.action?.order ?? s.label)).size > 1
  const total = kind === 'TrendsQuery' && TOTAL_VALUE_DISPLAYS.includes(display ?? '')
  const option = useMemo(() => {
    if (total) {
      const named = series.map((s, i) => ({ name: seriesName(s, several), value: s.aggregated_value ?? s.count, i }))
      if (display === 'ActionsPie') {
        return {
          tooltip: { trigger: 'item' },
          legend: { type: 'scroll', bottom: 0 },
          color: PALETTE,
          series: [{ type: 'pie', radius: ['35%', '70%'], data: named.map((n) => ({ name: n.name, value: n.value })) }],
        }
      }
      return {
        tooltip: { trigger: 'axis' },
        grid: { left: 8, right: 24, top: 8, bottom: 8, containLabel: true },
        xAxis: { type: 'value' },
        yAxis: { type: 'category', data: named.map((n) => n.name), inverse: true },
        series: [
          {
            type: 'bar',
            data: named.map((n, i) => ({ value: n.value, itemStyle: { color: PALETTE[i % PALETTE.length] } })),
            label: { show: true, position: 'right' },
          },
        ],
      }
    }
    const lifecycle = kind === 'LifecycleQuery'
    const bar =
      lifecycle || display === 'ActionsBar' || display === 'ActionsStackedBar' || display === 'ActionsUnstackedBar'
    const area = display === 'ActionsAreaGraph'
    const labels = series[0]?.labels ?? []
    return {
      tooltip: { trigger: 'axis' },
      legend: { type: 'scroll', bottom: 0 },
      grid: { left: 8, right: 24, top: 16, bottom: 36, containLabel: true },
      xAxis: { type: 'category', data: labels, boundaryGap: bar },
      yAxis: { type: 'value' },
      series: series.map((s, i) => ({
        type: bar ? 'bar' : 'line',
        name: lifecycle ? (s.status ?? s.label) : seriesName(s, several),
        data: s.data,
        color: lifecycle ? LIFECYCLE_COLORS[s.status ?? ''] : PALETTE[i % PALETTE.length],
        stack:
          lifecycle || display === 'ActionsStackedBar' || (bar && display === 'ActionsBar') || area
            ? 'total'
            : undefined,
        areaStyle: area ? {} : undefined,
        lineStyle: s.compare_label === 'previous' ? { type: 'dashed' } : undefined,
        smooth: false,
        symbolSize: 6,
      })),
    }
  }, [series, display, kind, total, several])

  if (series.length === 0) return <Empty title="No results">There were no matching events in this date range.</Empty>
  if (total && display === 'BoldNumber') {
    const first = series[0]
    const value = first.aggregated_value ?? first.count
    return (
      <Center h={height} data-testid="insight-number">
        <Stack align="center" gap={4}>
          {onPointClick ? (
            <UnstyledButton
              onClick={() => onPointClick({ resultIndex: 0, dataIndex: 0, label: seriesName(first), value })}
              aria-label={`${formatNumber(value)}: show persons`}
            >
              <Title order={2} fz={56}>
                {formatNumber(value)}
              </Title>
            </UnstyledButton>
          ) : (
            <Title order={2} fz={56}>
              {formatNumber(value)}
            </Title>
          )}
          <Text c="dimmed">{seriesName(first, several)}</Text>
        </Stack>
      </Center>
    )
  }
  if (total && display === 'ActionsTable') {
    return <TotalsTable series={series} several={several} onPointClick={onPointClick} />
  }
  return (
    <Chart
      option={option}
      height={height}
      label={`${kind === 'LifecycleQuery' ? 'Lifecycle' : kind === 'StickinessQuery' ? 'Stickiness' : 'Trends'} chart of ${series.length} series`}
      testId="insight-chart"
      onPointClick={
        onPointClick
          ? (p) =>
              onPointClick(
                total
                  ? { resultIndex: p.dataIndex, dataIndex: 0, label: p.name, value: p.value }
                  : { resultIndex: p.seriesIndex, dataIndex: p.dataIndex, label: p.name, value: p.value },
              )
          : undefined
      }
    />
  )
}

function ValueCell({
  value,
  point,
  onPointClick,
}: {
  value: unknown
  point: InsightPoint
  onPointClick?: (point: InsightPoint) => void
}) {
  const text = formatNumber(value)
  if (!onPointClick) return <>{text}</>
  // A plain button (the component library's resolves its style props on every render, and a series table has one
  // per data point).
  return (
    <button
      type="button"
      className={classes.value}
      onClick={() => onPointClick(point)}
      aria-label={`${text} (${point.label}): show persons`}
    >
      {text}
    </button>
  )
}

function TotalsTable({
  series,
  several,
  onPointClick,
}: {
  series: SeriesResult[]
  several: boolean
  onPointClick?: (point: InsightPoint) => void
}) {
  return (
    <Table striped data-testid="insight-totals-table">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Series</Table.Th>
          <Table.Th ta="right">Value</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {series.map((s, i) => {
          const name = seriesName(s, several)
          const value = s.aggregated_value ?? s.count
          return (
            <Table.Tr key={name}>
              <Table.Td>{name}</Table.Td>
              <Table.Td ta="right">
                <ValueCell
                  value={value}
                  point={{ resultIndex: i, dataIndex: 0, label: name, value }}
                  onPointClick={s.action === null ? undefined : onPointClick}
                />
              </Table.Td>
            </Table.Tr>
          )
        })}
      </Table.Tbody>
    </Table>
  )
}

/** The series of a trends, stickiness or lifecycle result as a table: one row per series, one column per point. */
export function SeriesTable({
  query,
  result,
  onPointClick,
}: {
  query: unknown
  result: unknown
  onPointClick?: (point: InsightPoint) => void
}) {
  const source = sourceOf(query)
  const all = resultsOf(result)
  const series = (Array.isArray(all) ? all : []).filter((r) => Array.isArray(r?.data)) as SeriesResult[]
  if (series.length === 0) return null
  const several = new Set(series.map((s) => s.action?.order ?? s.label)).size > 1
  const display = source?.trendsFilter?.display ?? ''
  if (source?.kind === 'TrendsQuery' && TOTAL_VALUE_DISPLAYS.includes(display)) {
    return display === 'ActionsTable' ? null : (
      <TotalsTable series={series} several={several} onPointClick={onPointClick} />
    )
  }
  const labels = series[0]?.labels ?? []
  const lifecycle = source?.kind === 'LifecycleQuery'
  return (
    <Table.ScrollContainer minWidth={500}>
      <Table striped withColumnBorders data-testid="insight-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Series</Table.Th>
            {lifecycle ? null : <th className={classes.head}>Total</th>}
            {labels.map((l) => (
              <th key={l} className={classes.head}>
                {l}
              </th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {series.map((s, i) => {
            const name = lifecycle ? (s.status ?? s.label) : seriesName(s, several)
            return (
              <Table.Tr key={name}>
                <Table.Th scope="row" fw={500}>
                  {name}
                </Table.Th>
                {lifecycle ? null : <td className={classes.cell}>{formatNumber(s.count)}</td>}
                {s.data.map((v, j) => (
                  <td key={String(s.days[j] ?? labels[j])} className={classes.cell}>
                    <ValueCell
                      value={v}
                      point={{ resultIndex: i, dataIndex: j, label: `${name}, ${labels[j]}`, value: v }}
                      onPointClick={s.action === null || v === 0 ? undefined : onPointClick}
                    />
                  </td>
                ))}
              </Table.Tr>
            )
          })}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  )
}

/** Funnel results: steps (one breakdown) or one list of steps per breakdown value. */
export function funnelGroups(results: unknown): FunnelStep[][] {
  if (!Array.isArray(results) || results.length === 0) return []
  const groups = Array.isArray(results[0]) ? (results as FunnelStep[][]) : [results as FunnelStep[]]
  return groups.filter((g) => g.length > 0 && g.every((step) => typeof step?.count === 'number'))
}

export const conversion = (count: number, first: number) => (first > 0 ? (100 * count) / first : 0)
export const percent = (v: number) => `${Number.isInteger(v) ? v : v.toFixed(1)}%`

function FunnelChart({
  results,
  height,
  onPointClick,
}: {
  results: unknown
  height: number
  onPointClick?: (point: InsightPoint) => void
}) {
  const groups = funnelGroups(results)
  const option = useMemo(() => {
    const steps = groups[0] ?? []
    return {
      tooltip: { trigger: 'axis' },
      legend: groups.length > 1 ? { type: 'scroll', bottom: 0 } : undefined,
      grid: { left: 8, right: 24, top: 24, bottom: groups.length > 1 ? 36 : 8, containLabel: true },
      xAxis: { type: 'category', data: steps.map((s) => `${s.order + 1}. ${s.custom_name || s.name}`) },
      yAxis: { type: 'value' },
      series: groups.map((g, i) => ({
        type: 'bar',
        name: groups.length > 1 ? breakdownLabel(g[0]?.breakdown_value) : 'Persons',
        color: PALETTE[i % PALETTE.length],
        data: g.map((s) => s.count),
        label: {
          show: true,
          position: 'top',
          formatter: (p: { dataIndex: number }) => percent(conversion(g[p.dataIndex].count, g[0].count)),
        },
      })),
    }
  }, [groups])
  if (groups.length === 0)
    return <Empty title="No one entered this funnel">No one did the first step in this date range.</Empty>
  return (
    <Chart
      option={option}
      height={height}
      label={`Funnel of ${groups[0].length} steps: ${groups[0].map((s) => `${s.name} ${s.count}`).join(', ')}`}
      testId="insight-chart"
      onPointClick={
        onPointClick
          ? (p) => onPointClick({ resultIndex: p.seriesIndex, dataIndex: p.dataIndex, label: p.name, value: p.value })
          : undefined
      }
    />
  )
}

/** The retention cohort grid: a row per cohort, its size, then the share of it back in each interval. */
export function RetentionGrid({
  rows,
  onPointClick,
}: {
  rows: RetentionRow[]
  onPointClick?: (p: InsightPoint) => void
}) {
  if (!Array.isArray(rows) || rows.length === 0) return <Empty title="No results">No one did the start event.</Empty>
  const width = Math.max(...rows.map((r) => r.values.length))
  const headers = rows.find((r) => r.values.length === width)?.values.map((v) => v.label) ?? []
  return (
    <Table.ScrollContainer minWidth={600}>
      <Table withColumnBorders data-testid="retention-grid">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Cohort</Table.Th>
            <Table.Th ta="right">Size</Table.Th>
            {headers.map((h) => (
              <Table.Th key={h} ta="center">
                {h}
              </Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((row, r) => {
            const size = row.values[0]?.count ?? 0
            const name = `${row.label}${row.breakdown_value !== undefined && row.breakdown_value !== null ? ` · ${breakdownLabel(row.breakdown_value)}` : ''} (${row.date.slice(0, 10)})`
            return (
              <Table.Tr key={`${row.date}-${String(row.breakdown_value)}`}>
                <Table.Th scope="row" fw={500}>
                  {name}
                </Table.Th>
                <Table.Td ta="right">
                  <ValueCell
                    value={size}
                    point={{ resultIndex: 0, dataIndex: 0, row: r, label: name, value: size }}
                    onPointClick={size > 0 ? onPointClick : undefined}
                  />
                </Table.Td>
                {row.values.map((v) => {
                  const share = size > 0 ? (100 * v.count) / size : 0
                  return (
                    <Table.Td
                      key={v.label}
                      ta="center"
                      title={`${v.count} of ${size}`}
                      data-count={v.count}
                      style={{
                        background: size > 0 ? `rgba(29, 74, 255, ${0.1 + (0.9 * share) / 100})` : undefined,
                        color: share > 50 ? '#fff' : undefined,
                      }}
                    >
                      {size > 0 ? percent(Math.round(share * 10) / 10) : '—'}
                    </Table.Td>
                  )
                })}
              </Table.Tr>
            )
          })}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  )
}

function PathsChart({ edges, height, showTable }: { edges: PathEdge[]; height: number; showTable: boolean }) {
  const option = useMemo(() => {
    const names = new Set<string>()
    for (const e of edges) {
      names.add(e.source)
      names.add(e.target)
    }
    const short = (n: string) => n.replace(/^\d+_/, '')
    return {
      tooltip: { trigger: 'item' },
      series: [
        {
          type: 'sankey',
          emphasis: { focus: 'adjacency' },
          nodeAlign: 'left',
          data: [...names].map((name) => ({ name })),
          links: edges.map((e) => ({ source: e.source, target: e.target, value: e.value })),
          label: { formatter: (p: { name: string }) => short(p.name) },
          lineStyle: { color: 'gradient', opacity: 0.4 },
        },
      ],
    }
  }, [edges])
  if (!Array.isArray(edges) || edges.length === 0)
    return <Empty title="No paths">No one moved between pages or events in this date range.</Empty>
  return (
    <Stack gap="sm">
      <Chart
        option={option}
        height={Math.max(height, 400)}
        label={`Paths: ${edges.length} transitions, the largest ${edges[0].source} to ${edges[0].target} (${edges[0].value})`}
        testId="insight-chart"
      />
      {showTable ? (
        <Table striped data-testid="paths-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>From</Table.Th>
              <Table.Th>To</Table.Th>
              <Table.Th ta="right">Sessions</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {edges.slice(0, 20).map((e) => (
              <Table.Tr key={`${e.source}>${e.target}`}>
                <Table.Td>{e.source}</Table.Td>
                <Table.Td>{e.target}</Table.Td>
                <Table.Td ta="right">{formatNumber(e.value)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      ) : null}
    </Stack>
  )
}

/** A HogQL (or any tabular) result: `results` rows under `columns`. */
function TableResult({ result }: { result: unknown }) {
  const r = (result && typeof result === 'object' && !Array.isArray(result) ? result : { results: result }) as {
    results?: unknown
    columns?: string[]
  }
  const rows = Array.isArray(r.results) ? (r.results as unknown[]) : []
  if (rows.length === 0) return <Empty title="No results" />
  const first = rows[0]
  const columns = r.columns ?? (Array.isArray(first) ? first.map((_, i) => `Column ${i + 1}`) : ['Value'])
  const cell = (v: unknown) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : formatNumber(v))
  return (
    <Table.ScrollContainer minWidth={400}>
      <Table striped data-testid="insight-results-table">
        <Table.Thead>
          <Table.Tr>
            {columns.map((c) => (
              <Table.Th key={c}>{c}</Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.slice(0, 500).map((row, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: result rows have no identity of their own
            <Table.Tr key={i}>
              {(Array.isArray(row) ? row : [row]).map((v, j) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: columns are positional
                <Table.Td key={j}>{cell(v)}</Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  )
}
