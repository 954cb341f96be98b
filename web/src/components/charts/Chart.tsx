// Apache ECharts in React: the library (only the chart kinds and parts Burrow draws) is loaded on first use, in
// its own chunk, so screens without charts never download it. `option` is a plain ECharts option object.
import { Box } from '@mantine/core'
import { useEffect, useLayoutEffect, useRef } from 'react'

type ECharts = import('echarts/core').EChartsType
type Option = Record<string, unknown>

let loading: Promise<typeof import('./echarts')> | null = null

/** echarts/core with the charts and components the app uses, registered once. */
export function loadECharts() {
  loading ??= import('./echarts')
  return loading
}

/** The option's top-level parts: an option of the same parts updates the chart in place. */
const shapeOf = (option: Option) => Object.keys(option).sort().join(',')

/**
 * Draws `option`, drawn complete in its first frame (no entry or update animation: it would redraw the canvas at
 * every frame for a second after each answer, on a machine that may be computing the next one). An option with the
 * parts of the previous one is merged into it, its series and axes replaced: the components it shares (tooltip,
 * legend, grid) are kept rather than made again, as `notMerge` did on every answer (the tooltip's measured the page
 * each time). Another shape (a line chart becoming a pie) starts from a blank chart.
 */
function apply(chart: ECharts, option: Option, previousShape: string | null) {
  const full = { aria: { enabled: true }, animation: false, ...option }
  if (previousShape === shapeOf(option)) chart.setOption(full, { replaceMerge: ['series', 'xAxis', 'yAxis'] })
  else chart.setOption(full, true)
}

export interface ChartProps {
  option: Option
  height?: number
  /** What screen readers call the chart. */
  label: string
  /** A click on a data point (series, category index, value). */
  onPointClick?: (point: { seriesIndex: number; dataIndex: number; name: string; value: unknown }) => void
  testId?: string
}

export function Chart({ option, height = 320, label, onPointClick, testId }: ChartProps) {
  const ref = useRef<HTMLDivElement>(null)
  const chart = useRef<ECharts | null>(null)
  const click = useRef(onPointClick)
  click.current = onPointClick
  const latest = useRef(option)
  latest.current = option

  useEffect(() => {
    let disposed = false
    let observer: ResizeObserver | undefined
    void loadECharts().then((echarts) => {
      if (disposed || !ref.current) return
      const instance = echarts.init(ref.current, undefined, { renderer: 'canvas' })
      chart.current = instance
      instance.on('click', (params) => {
        const p = params as { seriesIndex?: number; dataIndex: number; name: string; value: unknown }
        click.current?.({ seriesIndex: p.seriesIndex ?? 0, dataIndex: p.dataIndex, name: p.name, value: p.value })
      })
      observer = new ResizeObserver(() => instance.resize())
      observer.observe(ref.current)
      apply(instance, latest.current, null)
      shape.current = shapeOf(latest.current)
    })
    return () => {
      disposed = true
      observer?.disconnect()
      chart.current?.dispose()
      chart.current = null
    }
  }, [])

  // The instance is made once; a new option is applied to it in the commit that brought it (a layout effect), so
  // the new drawing is in the frame that shows the rest of the update rather than in a later one.
  const shape = useRef<string | null>(null)
  useLayoutEffect(() => {
    if (!chart.current) return
    apply(chart.current, option, shape.current)
    shape.current = shapeOf(option)
  }, [option])

  // ECharts writes its own aria-label on the element it draws in: that is an inner one, so the label given here
  // (the screen's own words) is what the image is called.
  return (
    <Box h={height} w="100%" role="img" aria-label={label} data-testid={testId ?? 'chart'}>
      <Box ref={ref} h="100%" w="100%" />
    </Box>
  )
}
