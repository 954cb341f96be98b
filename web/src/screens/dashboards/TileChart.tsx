// A saved insight's result in a dashboard tile, drawn by the insights' own InsightChart. The tile adds what a
// dashboard needs around it: a note when the result was never calculated, and a one-line summary of the values
// (`data-summary`, also read by screen readers) for the series and steps it shows.
import { Center, Text, VisuallyHidden } from '@mantine/core'
import { InsightChart } from '../../components/insights/InsightChart'

type Node = Record<string, unknown>

const format = (n: unknown) =>
  typeof n === 'number' ? n.toLocaleString('en-US', { maximumFractionDigits: 2 }) : String(n ?? '—')

function sourceKind(query: unknown): string {
  const node = (query ?? {}) as Node
  const source = (node.source ?? node) as Node
  return String(source.kind ?? '')
}

/** "label: total" for each trends series, "step: count" for each funnel step; empty for other kinds. */
export function summaryOf(query: unknown, result: unknown): string {
  if (!Array.isArray(result)) return ''
  const kind = sourceKind(query)
  if (kind === 'FunnelsQuery' && !Array.isArray(result[0])) {
    return (result as Node[]).map((s) => `${s.custom_name || s.name}: ${format(s.count)}`).join('; ')
  }
  if (kind === 'TrendsQuery' || kind === 'StickinessQuery' || kind === 'LifecycleQuery') {
    return (result as Node[])
      .map((s) => {
        const breakdown = s.breakdown_value
        const name =
          breakdown === undefined || breakdown === null || breakdown === ''
            ? String(s.label ?? 'Series')
            : `${s.label} - ${Array.isArray(breakdown) ? breakdown.join(', ') : String(breakdown)}`
        return `${name}: ${format(s.aggregated_value ?? s.count ?? 0)}`
      })
      .join('; ')
  }
  return ''
}

export function TileChart({
  query,
  result,
  height = 240,
  name,
}: {
  query: unknown
  result: unknown
  height?: number
  name: string
}) {
  if (result === null || result === undefined) {
    return (
      <Center h={height}>
        <Text size="sm" c="dimmed">
          No results yet. Refresh the dashboard to calculate them.
        </Text>
      </Center>
    )
  }
  const summary = summaryOf(query, result)
  return (
    <div data-testid="tile-chart" data-summary={summary}>
      {summary ? <VisuallyHidden>{`${name}: ${summary}`}</VisuallyHidden> : null}
      <InsightChart query={query} result={result} height={height} />
    </div>
  )
}
