// Web analytics: PostHog's web dashboard over captured page views — the WebOverviewQuery's visitors, views,
// sessions, session duration and bounce rate (beside the previous period when compared), and WebStatsTableQuery
// breakdowns: top pages with their bounce rate, sources (the sessions' first referring domain), device types,
// browsers, and countries drawn on a world map. Date range, filters, comparison and test-account filtering live in
// the URL; a click on a page, device, browser or country adds it as a filter.
import {
  Badge,
  Card,
  Checkbox,
  Group,
  Paper,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
  UnstyledButton,
} from '@mantine/core'
import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useEffect, useMemo, useState } from 'react'
import { ApiError, runQuery } from '../../api'
import { Chart } from '../../components/charts/Chart'
import { type DateRange, DateRangePicker } from '../../components/insights/DateRangePicker'
import type { PropertyFilter } from '../../components/insights/nodes'
import { completeFilters, PropertyFilters } from '../../components/insights/PropertyFilters'
import { Empty, ErrorState, Loading } from '../../components/States'
import { useSearchState } from '../../components/useSearchState'
import { useProjectId } from '../../session'

/**
 * The server runs at most 3 queries of a project at once (PostHog's limit) and refuses more with 429: the panels'
 * queries go 2 at a time, leaving room for anything else the user has open, and a refusal is retried.
 */
const AT_ONCE = 2
let running = 0
const waiting: (() => void)[] = []
async function limited<T>(work: () => Promise<T>): Promise<T> {
  if (running >= AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve))
  running++
  try {
    return await work()
  } finally {
    running--
    waiting.shift()?.()
  }
}
const retry = (count: number, error: unknown) =>
  error instanceof ApiError && error.status === 429
    ? count < 5
    : count < 2 && (!(error instanceof ApiError) || error.status === 0 || error.status >= 500)
const retryDelay = (count: number) => 1000 * (count + 1)

function webQuery<T>(projectId: number, node: unknown, signal: AbortSignal) {
  return limited(() => {
    if (signal.aborted) throw new DOMException('Aborted', 'AbortError')
    return runQuery<T>(projectId, node, signal)
  })
}

interface OverviewItem {
  key: string
  kind: 'unit' | 'duration_s' | 'percentage'
  isIncreaseBad: boolean | null
  value: number | null
  previous: number | null
  changeFromPreviousPct: number | null
}

const LABELS: Record<string, string> = {
  visitors: 'Visitors',
  views: 'Page views',
  sessions: 'Sessions',
  'session duration': 'Session duration',
  'bounce rate': 'Bounce rate',
}

/** 95 → "1m 35s", 3700 → "1h 1m 40s", 42.5 → "42.5s". */
export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds * 10) / 10}s`
  const whole = Math.round(seconds)
  const h = Math.floor(whole / 3600)
  const m = Math.floor((whole % 3600) / 60)
  const s = whole % 60
  return [h ? `${h}h` : '', m || h ? `${m}m` : '', `${s}s`].filter(Boolean).join(' ')
}

export function formatValue(kind: OverviewItem['kind'], value: number | null): string {
  if (value === null) return '—'
  if (kind === 'duration_s') return formatDuration(value)
  if (kind === 'percentage') return `${Math.round(value * 10) / 10}%`
  return value.toLocaleString('en-US')
}

const percent = (fraction: number | null | undefined) =>
  fraction === null || fraction === undefined ? '—' : `${Math.round(fraction * 1000) / 10}%`

interface Filters {
  dateRange: DateRange
  properties: PropertyFilter[]
  compare: boolean
  filterTestAccounts: boolean
}

/** The node fields every web query shares. */
function base(f: Filters) {
  return {
    dateRange: { date_from: f.dateRange.date_from ?? '-7d', date_to: f.dateRange.date_to ?? null },
    properties: completeFilters(f.properties),
    filterTestAccounts: f.filterTestAccounts,
    ...(f.compare ? { compareFilter: { compare: true } } : {}),
  }
}

function Overview({ filters }: { filters: Filters }) {
  const projectId = useProjectId()
  const node = { kind: 'WebOverviewQuery', ...base(filters) }
  const overview = useQuery({
    queryKey: ['web-overview', projectId, node],
    queryFn: ({ signal }) => webQuery<{ results: OverviewItem[] }>(projectId, node, signal),
    placeholderData: keepPreviousData,
    retry,
    retryDelay,
  })
  if (overview.error) return <ErrorState error={overview.error} retry={() => overview.refetch()} />
  if (!overview.data) return <Loading label="Counting visitors…" />
  return (
    <SimpleGrid cols={{ base: 2, sm: 3, lg: 5 }} data-testid="web-overview">
      {overview.data.results.map((item) => {
        const change = item.changeFromPreviousPct
        const good = change === null || change === 0 ? null : change > 0 !== (item.isIncreaseBad === true)
        return (
          <Paper key={item.key} withBorder p="md" data-testid={`overview-${item.key.replace(/ /g, '-')}`}>
            <Text size="sm" c="dimmed">
              {LABELS[item.key] ?? item.key}
            </Text>
            <Text fz={28} fw={700} data-testid="overview-value">
              {formatValue(item.kind, item.value)}
            </Text>
            {filters.compare ? (
              <Group gap={6}>
                {change !== null ? (
                  <Badge variant="light" color={good === null ? 'gray' : good ? 'green' : 'red'}>
                    {change > 0 ? '+' : ''}
                    {change}%
                  </Badge>
                ) : null}
                <Text size="xs" c="dimmed">
                  previously {formatValue(item.kind, item.previous)}
                </Text>
              </Group>
            ) : null}
          </Paper>
        )
      })}
    </SimpleGrid>
  )
}

type Row = [unknown, [number | null, number | null], [number | null, number | null], ...unknown[]]

function useStats(filters: Filters, breakdownBy: string, limit: number, includeBounceRate = false) {
  const projectId = useProjectId()
  const node = { kind: 'WebStatsTableQuery', breakdownBy, limit, includeBounceRate, ...base(filters) }
  return useQuery({
    queryKey: ['web-stats', projectId, node],
    queryFn: ({ signal }) => webQuery<{ results: Row[]; columns: string[] }>(projectId, node, signal),
    placeholderData: keepPreviousData,
    retry,
    retryDelay,
  })
}

const regionNames = typeof Intl.DisplayNames === 'function' ? new Intl.DisplayNames(['en'], { type: 'region' }) : null

/** A country's name from its ISO alpha-2 code (the code when the browser does not know it). */
export function countryName(code: string): string {
  try {
    return regionNames?.of(code) ?? code
  } catch {
    return code
  }
}

function StatsCard({
  title,
  column,
  filters,
  breakdownBy,
  bounce = false,
  onPick,
  display = (v) => String(v),
  testId,
}: {
  title: string
  column: string
  filters: Filters
  breakdownBy: string
  bounce?: boolean
  /** a click on a value: filter by it */
  onPick?: (value: string) => void
  display?: (value: unknown) => string
  testId: string
}) {
  const stats = useStats(filters, breakdownBy, 10, bounce)
  return (
    <Card withBorder component="section" aria-label={title} data-testid={testId}>
      <Title order={2} size="h4" mb="xs">
        {title}
      </Title>
      {stats.error ? (
        <ErrorState error={stats.error} retry={() => stats.refetch()} />
      ) : !stats.data ? (
        <Loading />
      ) : stats.data.results.length === 0 ? (
        <Empty title="Nothing in this period" />
      ) : (
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{column}</Table.Th>
              <Table.Th ta="right">Visitors</Table.Th>
              <Table.Th ta="right">Views</Table.Th>
              {bounce ? <Table.Th ta="right">Bounce rate</Table.Th> : null}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {stats.data.results.map((row) => {
              const value = row[0] === null ? '(none)' : String(row[0])
              const bounceRate = bounce ? (row[3] as [number | null, number | null] | null)?.[0] : null
              return (
                <Table.Tr key={value} data-testid="stats-row">
                  <Table.Td>
                    {onPick && row[0] !== null ? (
                      <UnstyledButton
                        onClick={() => onPick(value)}
                        title={`Filter by ${display(row[0])}`}
                        fz="sm"
                        c="blue.9"
                        style={{ textDecoration: 'underline', wordBreak: 'break-all' }}
                      >
                        {display(row[0])}
                      </UnstyledButton>
                    ) : (
                      <Text size="sm">{row[0] === null ? '(none)' : display(row[0])}</Text>
                    )}
                  </Table.Td>
                  <Table.Td ta="right">{row[1]?.[0] ?? 0}</Table.Td>
                  <Table.Td ta="right">{row[2]?.[0] ?? 0}</Table.Td>
                  {bounce ? <Table.Td ta="right">{percent(bounceRate)}</Table.Td> : null}
                </Table.Tr>
              )
            })}
          </Table.Tbody>
        </Table>
      )}
    </Card>
  )
}

function CountriesCard({ filters, onPick }: { filters: Filters; onPick: (code: string) => void }) {
  const stats = useStats(filters, 'Country', 300)
  const [mapReady, setMapReady] = useState(false)
  const [mapError, setMapError] = useState<unknown>(null)
  useEffect(() => {
    let live = true
    import('./worldMap')
      .then((m) => m.registerWorldMap())
      .then(() => live && setMapReady(true))
      .catch((e) => live && setMapError(e))
    return () => {
      live = false
    }
  }, [])
  const rows = stats.data?.results ?? []
  const option = useMemo(() => {
    const data = rows.map((r) => ({ name: String(r[0]), value: r[1]?.[0] ?? 0 }))
    const max = Math.max(1, ...data.map((d) => d.value))
    return {
      tooltip: {
        trigger: 'item',
        formatter: (p: { name: string; value: unknown }) =>
          `${countryName(p.name)}: ${typeof p.value === 'number' && !Number.isNaN(p.value) ? p.value : 0} visitors`,
      },
      visualMap: {
        min: 0,
        max,
        left: 'left',
        bottom: 10,
        text: ['More visitors', 'Fewer'],
        calculable: false,
        inRange: { color: ['#d0ebff', '#1864ab'] },
      },
      series: [
        {
          type: 'map',
          map: 'world',
          nameProperty: 'iso_a2',
          roam: false,
          itemStyle: { areaColor: '#f1f3f5', borderColor: '#adb5bd', borderWidth: 0.5 },
          emphasis: { label: { show: false }, itemStyle: { areaColor: '#fab005' } },
          data,
        },
      ],
    }
  }, [rows])
  return (
    <Card withBorder component="section" aria-label="Countries" data-testid="countries">
      <Title order={2} size="h4" mb="xs">
        Countries
      </Title>
      {stats.error ? (
        <ErrorState error={stats.error} retry={() => stats.refetch()} />
      ) : !stats.data ? (
        <Loading />
      ) : rows.length === 0 ? (
        <Empty title="No countries in this period">Events need a $geoip_country_code to be placed on the map.</Empty>
      ) : (
        <Group align="flex-start" gap="md" wrap="wrap">
          <div style={{ flex: '2 1 420px', minWidth: 0 }}>
            {mapError ? (
              <ErrorState error={mapError} />
            ) : mapReady ? (
              <Chart
                option={option}
                height={360}
                label={`World map of visitors by country: ${rows
                  .map((r) => `${countryName(String(r[0]))} ${r[1]?.[0] ?? 0}`)
                  .join(', ')}`}
                onPointClick={(p) => p.name && rows.some((r) => r[0] === p.name) && onPick(p.name)}
                testId="world-map"
              />
            ) : (
              <Loading label="Loading the map…" />
            )}
          </div>
          <Table striped style={{ flex: '1 1 240px' }} data-testid="countries-table">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Country</Table.Th>
                <Table.Th ta="right">Visitors</Table.Th>
                <Table.Th ta="right">Views</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.slice(0, 10).map((r) => (
                <Table.Tr key={String(r[0])} data-testid="stats-row">
                  <Table.Td>
                    <UnstyledButton
                      onClick={() => onPick(String(r[0]))}
                      fz="sm"
                      c="blue.9"
                      style={{ textDecoration: 'underline' }}
                    >
                      {countryName(String(r[0]))}
                    </UnstyledButton>
                  </Table.Td>
                  <Table.Td ta="right">{r[1]?.[0] ?? 0}</Table.Td>
                  <Table.Td ta="right">{r[2]?.[0] ?? 0}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Group>
      )}
    </Card>
  )
}

function parseFilters(raw: string | null): PropertyFilter[] {
  if (!raw) return []
  try {
    const parsed = JSON.parse(raw)
    return Array.isArray(parsed) ? (parsed as PropertyFilter[]) : []
  } catch {
    return []
  }
}

export default function WebAnalytics() {
  const projectId = useProjectId()
  const { params, update } = useSearchState()
  const rawFilters = params.get('filters')
  const properties = useMemo(() => parseFilters(rawFilters), [rawFilters])
  const filters: Filters = {
    dateRange: { date_from: params.get('date_from') ?? '-7d', date_to: params.get('date_to') },
    properties,
    compare: params.get('compare') === '1',
    filterTestAccounts: params.get('test_accounts') === '1',
  }
  // Filters being edited stay local until complete; the URL keeps the complete ones.
  const [draft, setDraft] = useState<PropertyFilter[]>(properties)
  useEffect(() => setDraft(properties), [properties])
  const setProperties = (next: PropertyFilter[]) => {
    setDraft(next)
    const complete = completeFilters(next)
    const encoded = complete.length ? JSON.stringify(complete) : null
    if (encoded !== rawFilters) update({ filters: encoded })
  }
  const pick = (key: string) => (value: string) =>
    setProperties([
      ...completeFilters(draft).filter((f) => f.key !== key),
      { type: 'event', key, operator: 'exact', value },
    ])

  return (
    <Stack gap="md">
      <Title order={1} size="h2">
        Web analytics
      </Title>
      <Text size="sm" c="dimmed">
        Page views ($pageview) and their sessions ($session_id): a session counts in the period it starts in; a bounce
        is a session of one page view, no autocapture and under 10 seconds.
      </Text>
      <Group align="flex-end" gap="md">
        <DateRangePicker
          value={filters.dateRange}
          onChange={(range) => update({ date_from: range.date_from ?? null, date_to: range.date_to ?? null })}
        />
        <Checkbox
          label="Compare to the previous period"
          checked={filters.compare}
          onChange={(e) => update({ compare: e.currentTarget.checked ? '1' : null })}
        />
        <Checkbox
          label="Filter out internal and test users"
          checked={filters.filterTestAccounts}
          onChange={(e) => update({ test_accounts: e.currentTarget.checked ? '1' : null })}
        />
      </Group>
      <PropertyFilters projectId={projectId} value={draft} onChange={setProperties} />
      <Overview filters={filters} />
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <StatsCard
          title="Top pages"
          column="Page"
          breakdownBy="Page"
          bounce
          filters={filters}
          onPick={pick('$pathname')}
          testId="top-pages"
        />
        <StatsCard
          title="Sources"
          column="Referring domain"
          breakdownBy="InitialReferringDomain"
          filters={filters}
          testId="sources"
        />
        <StatsCard
          title="Devices"
          column="Device type"
          breakdownBy="DeviceType"
          filters={filters}
          onPick={pick('$device_type')}
          testId="devices"
        />
        <StatsCard
          title="Browsers"
          column="Browser"
          breakdownBy="Browser"
          filters={filters}
          onPick={pick('$browser')}
          testId="browsers"
        />
      </SimpleGrid>
      <CountriesCard filters={filters} onPick={pick('$geoip_country_code')} />
    </Stack>
  )
}
