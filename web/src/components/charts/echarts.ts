// The parts of Apache ECharts the app draws, registered once. Loaded only through `loadECharts` (its own chunks):
// named imports let the bundler leave out every chart kind and component the app never draws (the namespaces of
// `echarts/charts` and `echarts/components` brought all of them). The world map's parts (MapChart, GeoComponent)
// are registered by the web analytics screen, the only one that draws it.
import { BarChart, FunnelChart, HeatmapChart, LineChart, PieChart, SankeyChart, ScatterChart } from 'echarts/charts'
import {
  AriaComponent,
  DatasetComponent,
  GridComponent,
  LegendComponent,
  MarkLineComponent,
  TitleComponent,
  TooltipComponent,
  VisualMapComponent,
} from 'echarts/components'
import { use } from 'echarts/core'
import { CanvasRenderer } from 'echarts/renderers'

use([
  LineChart,
  BarChart,
  PieChart,
  FunnelChart,
  HeatmapChart,
  SankeyChart,
  ScatterChart,
  GridComponent,
  TooltipComponent,
  LegendComponent,
  TitleComponent,
  DatasetComponent,
  VisualMapComponent,
  MarkLineComponent,
  AriaComponent,
  CanvasRenderer,
])

export * from 'echarts/core'
