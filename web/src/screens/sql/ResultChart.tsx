// The result as a chart: a line or bar chart of chosen y columns over an x column.
import { Group, MultiSelect, SegmentedControl, Select, Stack, Text } from '@mantine/core'
import { useMemo } from 'react'
import { Chart } from '../../components/charts/Chart'
import { formatCell } from './ResultsTable'

export type ChartDisplay = 'line' | 'bar'

export interface ChartSettings {
  display: ChartDisplay
  x: string | null
  y: string[]
}

/** Whether a column's ClickHouse type is a number. */
export function isNumericType(type: unknown): boolean {
  const name = Array.isArray(type) ? String(type[1]) : String(type ?? '')
  return /^(Nullable\()?(U?Int|Float|Decimal)/.test(name)
}

/** The columns to draw when none are chosen: the first column over x, the first number column after it as y. */
export function defaultChartColumns(columns: string[], types: unknown[] | undefined): { x: string; y: string[] } {
  const x = columns[0]
  const numeric = columns.filter((_, i) => i > 0 && isNumericType(types?.[i]))
  return { x, y: numeric.length ? [numeric[0]] : columns.length > 1 ? [columns[1]] : [columns[0]] }
}

export function ResultChart({
  columns,
  types,
  rows,
  settings,
  onChange,
}: {
  columns: string[]
  types: unknown[] | undefined
  rows: unknown[][]
  settings: ChartSettings
  onChange: (settings: ChartSettings) => void
}) {
  const fallback = defaultChartColumns(columns, types)
  const x = settings.x && columns.includes(settings.x) ? settings.x : fallback.x
  const chosen = settings.y.filter((c) => columns.includes(c))
  const y = chosen.length ? chosen : fallback.y

  const option = useMemo(() => {
    const xi = columns.indexOf(x)
    return {
      tooltip: { trigger: 'axis' },
      legend: { show: y.length > 1, bottom: 0 },
      grid: { left: 60, right: 24, top: 24, bottom: y.length > 1 ? 48 : 32 },
      xAxis: {
        type: 'category',
        data: rows.map((r) => formatCell(r[xi])),
        name: x,
        nameLocation: 'middle',
        nameGap: 26,
      },
      yAxis: { type: 'value' },
      series: y.map((column) => {
        const yi = columns.indexOf(column)
        return {
          name: column,
          type: settings.display,
          showSymbol: rows.length <= 100,
          data: rows.map((r) => (r[yi] === null || r[yi] === undefined ? null : Number(r[yi]))),
        }
      }),
    }
  }, [columns, rows, x, y, settings.display])

  return (
    <Stack gap="sm">
      <Group align="flex-end" gap="sm">
        <Stack gap={4}>
          <Text size="sm" fw={500} id="sql-chart-type">
            Chart type
          </Text>
          <SegmentedControl
            aria-labelledby="sql-chart-type"
            value={settings.display}
            onChange={(value) => onChange({ ...settings, display: value as ChartDisplay })}
            data={[
              { value: 'line', label: 'Line' },
              { value: 'bar', label: 'Bar' },
            ]}
          />
        </Stack>
        <Select
          label="X-axis"
          data={columns}
          value={x}
          allowDeselect={false}
          onChange={(value) => onChange({ ...settings, x: value })}
          w={200}
        />
        <MultiSelect
          label="Y-axis"
          data={columns}
          value={y}
          onChange={(value) => onChange({ ...settings, y: value })}
          miw={240}
        />
      </Group>
      <Chart option={option} height={360} label={`${settings.display} chart of ${y.join(', ')} over ${x}`} />
    </Stack>
  )
}
