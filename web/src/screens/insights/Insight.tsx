// A new or saved insight (`insights/new`, `insights/:shortId`): the kind tabs (trends, funnels, retention, paths,
// stickiness, lifecycle), the editor of its query node, the chart and table of its result, the persons behind a
// clicked data point, and save / name / tags / favourite. The query being edited is in the URL (`?q=`, the
// InsightVizNode as JSON), so a link reproduces the view; a saved insight without `?q=` shows its saved query.
import {
  ActionIcon,
  Anchor,
  Badge,
  Button,
  Card,
  Checkbox,
  Group,
  NumberInput,
  Select,
  Stack,
  Table,
  Tabs,
  TagsInput,
  Text,
  TextInput,
  Title,
} from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { memo, useCallback, useDeferredValue, useEffect, useMemo, useRef, useState } from 'react'
import { Link, useNavigate, useParams, useSearchParams } from 'react-router'
import { api, get, type Page, type QueryResponse, qs, runQueryOrTakeEarly } from '../../api'
import { loadECharts } from '../../components/charts/Chart'
import { DateRangePicker } from '../../components/insights/DateRangePicker'
import { defaultSource, switchKind, vizNode } from '../../components/insights/defaults'
import {
  conversion,
  formatNumber,
  funnelGroups,
  InsightChart,
  percent,
  SeriesTable,
} from '../../components/insights/InsightChart'
import {
  actorsQueryFor,
  breakdownLabel,
  type EntityNode,
  INSIGHT_KINDS,
  type InsightKind,
  type InsightNode,
  type InsightPoint,
  type PropertyFilter,
  sourceOf,
} from '../../components/insights/nodes'
import { PersonsModal } from '../../components/insights/PersonsModal'
import { completeFilters, PropertyFilters } from '../../components/insights/PropertyFilters'
import { entityFrom, entityValue, SeriesEditor, useEntityChoices } from '../../components/insights/SeriesEditor'
import { notify } from '../../components/notify'
import { Empty, ErrorState, Loading } from '../../components/States'
import { useEventNames, usePropertyNames } from '../../definitions'
import { useProjectId } from '../../session'

export interface SavedInsight {
  id: number
  short_id: string
  name: string | null
  derived_name: string | null
  description: string | null
  favorited: boolean
  tags: string[]
  query: Record<string, unknown> | null
  created_by: { first_name: string; email: string } | null
  created_at: string
  last_modified_at: string
}

const DISPLAYS = [
  { value: 'ActionsLineGraph', label: 'Line chart' },
  { value: 'ActionsLineGraphCumulative', label: 'Cumulative line chart' },
  { value: 'ActionsAreaGraph', label: 'Area chart' },
  { value: 'ActionsBar', label: 'Bar chart' },
  { value: 'ActionsBarValue', label: 'Bar chart (total value)' },
  { value: 'BoldNumber', label: 'Number' },
  { value: 'ActionsPie', label: 'Pie chart' },
  { value: 'ActionsTable', label: 'Table' },
]

const INTERVALS = [
  { value: 'hour', label: 'Hour' },
  { value: 'day', label: 'Day' },
  { value: 'week', label: 'Week' },
  { value: 'month', label: 'Month' },
]

const isKind = (k: unknown): k is InsightKind => INSIGHT_KINDS.some((i) => i.value === k)

/** The InsightVizNode of `?q=`, or null when absent or unreadable. */
function parseQ(q: string | null): InsightNode | null {
  if (!q) return null
  try {
    const source = sourceOf(JSON.parse(q))
    return source && isKind(source.kind) ? source : null
  } catch {
    return null
  }
}

/** What is sent to the query API: incomplete filters left out. */
function runnable(source: InsightNode): InsightNode {
  const out: InsightNode = { ...source }
  if (source.properties) out.properties = completeFilters(source.properties)
  if (source.series)
    out.series = source.series.map((s) =>
      s.properties ? { ...s, properties: completeFilters(s.properties) } : s,
    ) as EntityNode[]
  if (source.trendsFilter?.formula === '') {
    const { formula: _f, ...rest } = source.trendsFilter
    out.trendsFilter = rest
  }
  return out
}

/** The query behind the chart: one definition for the editor and for the early start below. */
const resultQuery = (projectId: number, body: InsightNode) => ({
  queryKey: ['insight-result', projectId, body],
  queryFn: ({ signal }: { signal: AbortSignal }) => runQueryOrTakeEarly<QueryResponse>(projectId, body, signal),
  // A result just computed is not asked for again when the editor mounts (the server caches results anyway).
  staleTime: 30_000,
})

export default function Insight() {
  const projectId = useProjectId()
  const { shortId } = useParams()
  const isNew = !shortId || shortId === 'new'
  const client = useQueryClient()
  const [params] = useSearchParams()
  // Once, before the editor's first render (the heaviest of the app): the chart's code and, for a query in the
  // link, its result are asked for at once, so neither waits for the editor to draw its controls.
  useState(() => {
    void loadECharts()
    const fromUrl = isNew ? parseQ(params.get('q')) : null
    if (fromUrl) void client.prefetchQuery(resultQuery(projectId, runnable(fromUrl)))
    return null
  })
  const saved = useQuery({
    queryKey: ['insight', projectId, shortId],
    queryFn: async ({ signal }) => {
      const page = await get<Page<SavedInsight>>(
        `/api/projects/${projectId}/insights/${qs({ short_id: shortId, basic: 'true' })}`,
        signal,
      )
      return page.results[0] ?? null
    },
    enabled: !isNew,
  })
  if (!isNew && saved.isPending) return <Loading label="Loading insight…" />
  if (!isNew && saved.error) return <ErrorState error={saved.error} retry={() => saved.refetch()} />
  if (!isNew && !saved.data)
    return (
      <Empty
        title="Insight not found"
        action={
          <Anchor component={Link} to={`/project/${projectId}/insights`}>
            Back to insights
          </Anchor>
        }
      >
        There is no insight {shortId} in this project. It may have been deleted.
      </Empty>
    )
  return <Editor key={shortId ?? 'new'} projectId={projectId} insight={isNew ? null : (saved.data ?? null)} />
}

function Editor({ projectId, insight }: { projectId: number; insight: SavedInsight | null }) {
  const [params, setParams] = useSearchParams()
  const navigate = useNavigate()
  const client = useQueryClient()
  const q = params.get('q')
  const kindParam = params.get('kind')
  // Read once per address: the same query object across renders keeps the chart from being drawn again.
  const fromUrl = useMemo(() => parseQ(q), [q])
  const savedSource = useMemo(() => (insight ? sourceOf(insight.query) : null), [insight])
  const source: InsightNode = useMemo(
    () =>
      fromUrl ??
      (savedSource && isKind(savedSource.kind) ? savedSource : null) ??
      defaultSource(isKind(kindParam) ? kindParam : 'TrendsQuery'),
    [fromUrl, savedSource, kindParam],
  )
  const dirty = insight !== null && fromUrl !== null && JSON.stringify(fromUrl) !== JSON.stringify(savedSource)
  const [name, setName] = useState(insight?.name ?? '')
  const [tags, setTags] = useState<string[]>(insight?.tags ?? [])
  const [favorited, setFavorited] = useState(insight?.favorited ?? false)

  // Stable across renders (the latest query and address read at call time), so the editor's memoised controls
  // re-render only when their own part of the query changed.
  const latest = useRef({ source, params, setParams })
  latest.current = { source, params, setParams }
  const setSource = useCallback(
    (next: InsightNode) => {
      const p = new URLSearchParams(latest.current.params)
      const nextQ = JSON.stringify(vizNode(next))
      p.delete('kind')
      p.set('q', nextQ)
      // The new result is asked for now, in the click's own task, rather than once the editor has drawn the change.
      const nextSource = parseQ(nextQ)
      if (nextSource) void client.prefetchQuery(resultQuery(projectId, runnable(nextSource)))
      latest.current.setParams(p, { replace: true })
    },
    [client, projectId],
  )
  const patch = useCallback(
    (changes: Partial<InsightNode>) => setSource({ ...latest.current.source, ...changes }),
    [setSource],
  )

  // a new insight always carries its query in the URL, so the link shows the same view
  useEffect(() => {
    if (!insight && !fromUrl) setSource(source)
  })

  const body = useMemo(() => runnable(source), [source])

  const save = useMutation({
    mutationFn: async () => {
      const payload = { name: name.trim() || null, tags, query: vizNode(body), saved: true }
      if (insight) return api<SavedInsight>('PATCH', `/api/projects/${projectId}/insights/${insight.id}/`, payload)
      return api<SavedInsight>('POST', `/api/projects/${projectId}/insights/`, payload)
    },
    onSuccess: (row) => {
      void client.invalidateQueries({ queryKey: ['insights', projectId] })
      client.setQueryData(['insight', projectId, row.short_id], row)
      notify(insight ? 'Insight saved' : 'Insight created')
      navigate(`/project/${projectId}/insights/${row.short_id}`, { replace: !insight })
    },
  })
  const favourite = useMutation({
    mutationFn: (value: boolean) =>
      api<SavedInsight>('PATCH', `/api/projects/${projectId}/insights/${insight?.id}/`, { favorited: value }),
    onSuccess: (row) => {
      setFavorited(row.favorited)
      void client.invalidateQueries({ queryKey: ['insights', projectId] })
    },
  })

  const kind = source.kind as InsightKind
  const derived = useMemo(() => describe(source), [source])

  return (
    <Stack gap="md">
      <Group justify="space-between" align="flex-end">
        <Group gap="xs" align="flex-end">
          <Anchor component={Link} to={`/project/${projectId}/insights`} size="sm" mb={8}>
            ← Insights
          </Anchor>
          <Title order={1} size="h2">
            {insight ? insight.name || insight.derived_name || derived : 'New insight'}
          </Title>
          {insight ? (
            <ActionIcon
              variant="subtle"
              color={favorited ? 'yellow' : 'gray'}
              size="lg"
              aria-label={favorited ? 'Remove from favorites' : 'Add to favorites'}
              aria-pressed={favorited}
              onClick={() => favourite.mutate(!favorited)}
              loading={favourite.isPending}
            >
              {favorited ? '★' : '☆'}
            </ActionIcon>
          ) : null}
          {dirty ? (
            <Badge color="orange" variant="light">
              Unsaved changes
            </Badge>
          ) : null}
        </Group>
        <Group gap="xs">
          {dirty ? (
            <Button
              variant="default"
              onClick={() => {
                const p = new URLSearchParams(params)
                p.delete('q')
                setParams(p, { replace: true })
              }}
            >
              Discard changes
            </Button>
          ) : null}
          <Button onClick={() => save.mutate()} loading={save.isPending}>
            {insight ? 'Save' : 'Save insight'}
          </Button>
        </Group>
      </Group>
      {save.error ? <ErrorState error={save.error} /> : null}
      {favourite.error ? <ErrorState error={favourite.error} /> : null}
      <form
        onSubmit={(e) => {
          e.preventDefault()
          save.mutate()
        }}
      >
        <Group align="flex-end" gap="sm">
          <TextInput
            label="Name"
            placeholder={derived}
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            w={360}
          />
          <TagsInput label="Tags" placeholder="Add a tag" value={tags} onChange={setTags} w={320} clearable />
        </Group>
      </form>
      <Tabs value={kind} onChange={(v) => isKind(v) && setSource(switchKind(source, v))} keepMounted={false}>
        <Tabs.List aria-label="Insight type">
          {INSIGHT_KINDS.map((k) => (
            <Tabs.Tab key={k.value} value={k.value}>
              {k.label}
            </Tabs.Tab>
          ))}
        </Tabs.List>
      </Tabs>
      <Card withBorder padding="md" data-testid="insight-editor">
        <QueryEditor projectId={projectId} source={source} patch={patch} />
      </Card>
      <ResultCard projectId={projectId} source={source} body={body} derived={derived} />
    </Stack>
  )
}

/**
 * The chart and table of the result, with the persons behind a clicked point. It is the only part of the screen
 * that subscribes to the result: an answer arriving (or its "Calculating…" badge) re-renders this card, not the
 * editor's controls above it.
 */
const ResultCard = memo(function ResultCard({
  projectId,
  source,
  body,
  derived,
}: {
  projectId: number
  source: InsightNode
  body: InsightNode
  derived: string
}) {
  const [point, setPoint] = useState<InsightPoint | null>(null)
  const result = useQuery({
    ...resultQuery(projectId, body),
    // the previous result stays while the next is computed, unless it is of another kind of insight
    placeholderData: (previous, previousQuery) =>
      (previousQuery?.queryKey[2] as InsightNode | undefined)?.kind === body.kind ? previous : undefined,
  })
  const results = result.data?.results
  // The table of the numbers below the chart is drawn in a render of its own once the chart is, so a new answer's
  // chart is not held back by the table's hundreds of cells.
  const tableResults = useDeferredValue(results)
  const tableSource = useDeferredValue(source)
  const tableKind = tableSource.kind as InsightKind
  return (
    <>
      <Card withBorder padding="md">
        <Group justify="space-between" mb="xs">
          <Text size="sm" c="dimmed">
            {derived}
          </Text>
          {result.isFetching ? (
            <Badge variant="light" color="gray">
              Calculating…
            </Badge>
          ) : null}
        </Group>
        {result.isPending ? (
          <Loading label="Calculating…" />
        ) : result.error ? (
          <ErrorState error={result.error} retry={() => result.refetch()} />
        ) : (
          <Stack gap="md" data-testid="insight-result">
            <InsightChart query={source} result={results} onPointClick={setPoint} />
            {tableKind === 'TrendsQuery' || tableKind === 'StickinessQuery' || tableKind === 'LifecycleQuery' ? (
              <MemoSeriesTable query={tableSource} result={tableResults} onPointClick={setPoint} />
            ) : null}
            {tableKind === 'FunnelsQuery' ? <FunnelTable results={tableResults} onPointClick={setPoint} /> : null}
          </Stack>
        )}
      </Card>
      <PersonsModal
        projectId={projectId}
        title={point?.label ?? ''}
        actorsQuery={point ? actorsQueryFor(body, results, point) : null}
        onClose={() => setPoint(null)}
      />
    </>
  )
})

// Not drawn again when the editor re-renders for another reason (a keystroke in the name) with the same answer.
const MemoSeriesTable = memo(SeriesTable)

/** A name for an unnamed insight, as PostHog derives one ("Pageview count", "$pageview → signup"…). */
export function describe(source: InsightNode): string {
  const names = (source.series ?? []).map((s) => s.custom_name || s.name || s.event || 'All events')
  switch (source.kind) {
    case 'TrendsQuery':
      return names.length
        ? `${names.join(' & ')}${source.breakdownFilter?.breakdown ? ` by ${source.breakdownFilter.breakdown}` : ''}`
        : 'Trends'
    case 'FunnelsQuery':
      return names.join(' → ')
    case 'RetentionQuery':
      return `Retention of ${source.retentionFilter?.targetEntity?.name ?? 'events'}`
    case 'LifecycleQuery':
      return `Lifecycle of ${names[0] ?? 'events'}`
    case 'StickinessQuery':
      return `Stickiness of ${names.join(' & ')}`
    case 'PathsQuery':
      return `User paths${source.pathsFilter?.startPoint ? ` from ${source.pathsFilter.startPoint}` : ''}`
    default:
      return 'Insight'
  }
}

function FunnelTable({ results, onPointClick }: { results: unknown; onPointClick: (p: InsightPoint) => void }) {
  const groups = funnelGroups(results)
  if (groups.length === 0) return null
  const several = groups.length > 1
  return (
    <Table.ScrollContainer minWidth={600}>
      <Table striped data-testid="funnel-table">
        <Table.Thead>
          <Table.Tr>
            {several ? <Table.Th>Breakdown</Table.Th> : null}
            <Table.Th>Step</Table.Th>
            <Table.Th ta="right">Completed</Table.Th>
            <Table.Th ta="right">Conversion</Table.Th>
            <Table.Th ta="right">Dropped off</Table.Th>
            <Table.Th ta="right">Average time</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {groups.flatMap((steps, g) =>
            steps.map((s, i) => {
              const dropped = i === 0 ? 0 : steps[i - 1].count - s.count
              const name = `${s.order + 1}. ${s.custom_name || s.name}`
              const bd = several ? breakdownLabel(s.breakdown_value) : ''
              return (
                <Table.Tr key={`${bd}-${s.order}`}>
                  {several ? <Table.Td>{bd}</Table.Td> : null}
                  <Table.Td>{name}</Table.Td>
                  <Table.Td ta="right">
                    <Button
                      variant="subtle"
                      size="compact-sm"
                      disabled={s.count === 0}
                      aria-label={`${s.count} completed ${name}: show persons`}
                      onClick={() =>
                        onPointClick({ resultIndex: g, dataIndex: i, label: `completed ${name}`, value: s.count })
                      }
                    >
                      {formatNumber(s.count)}
                    </Button>
                  </Table.Td>
                  <Table.Td ta="right">{percent(Math.round(conversion(s.count, steps[0].count) * 10) / 10)}</Table.Td>
                  <Table.Td ta="right">
                    {i === 0 ? (
                      '—'
                    ) : (
                      <Button
                        variant="subtle"
                        size="compact-sm"
                        disabled={dropped === 0}
                        aria-label={`${dropped} dropped off before ${name}: show persons`}
                        onClick={() =>
                          onPointClick({
                            resultIndex: g,
                            dataIndex: i,
                            dropOff: true,
                            label: `dropped off before ${name}`,
                            value: dropped,
                          })
                        }
                      >
                        {formatNumber(dropped)}
                      </Button>
                    )}
                  </Table.Td>
                  <Table.Td ta="right">
                    {s.average_conversion_time === null ? '—' : duration(s.average_conversion_time)}
                  </Table.Td>
                </Table.Tr>
              )
            }),
          )}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  )
}

function duration(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)}s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${Math.round(seconds % 60)}s`
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h ${Math.round((seconds % 3600) / 60)}m`
  return `${Math.floor(seconds / 86400)}d ${Math.round((seconds % 86400) / 3600)}h`
}

function BreakdownSelect({
  projectId,
  value,
  onChange,
}: {
  projectId: number
  value: InsightNode['breakdownFilter']
  onChange: (b: InsightNode['breakdownFilter'] | undefined) => void
}) {
  const eventProps = usePropertyNames(projectId, 'event')
  const personProps = usePropertyNames(projectId, 'person')
  const current = value?.breakdown ? `${value.breakdown_type ?? 'event'}:${value.breakdown}` : null
  const data = [
    { group: 'Event properties', items: (eventProps.data ?? []).map((k) => ({ value: `event:${k}`, label: k })) },
    {
      group: 'Person properties',
      items: (personProps.data ?? []).map((k) => ({ value: `person:${k}`, label: `${k} (person)` })),
    },
  ]
  if (current && !data.some((g) => g.items.some((i) => i.value === current))) {
    data[value?.breakdown_type === 'person' ? 1 : 0].items.push({ value: current, label: String(value?.breakdown) })
  }
  return (
    <Select
      label="Breakdown by"
      placeholder="No breakdown"
      searchable
      clearable
      data={data}
      value={current}
      w={240}
      onChange={(v) => {
        if (!v) return onChange(undefined)
        const [type, ...rest] = v.split(':')
        onChange({ breakdown_type: type, breakdown: rest.join(':') })
      }}
    />
  )
}

// The editor's heaviest controls, drawn again only when their own part of the query changed (a date range change
// no longer re-renders every series, filter and breakdown list).
const MemoSeriesEditor = memo(SeriesEditor)
const MemoPropertyFilters = memo(PropertyFilters)
const MemoBreakdownSelect = memo(BreakdownSelect)
const NO_FILTERS: PropertyFilter[] = []
const NO_SERIES: EntityNode[] = []

function QueryEditor({
  projectId,
  source,
  patch,
}: {
  projectId: number
  source: InsightNode
  patch: (changes: Partial<InsightNode>) => void
}) {
  const kind = source.kind
  const onSeries = useCallback((series: EntityNode[]) => patch({ series }), [patch])
  const onFilters = useCallback((properties: PropertyFilter[]) => patch({ properties }), [patch])
  const onBreakdown = useCallback(
    (breakdownFilter: InsightNode['breakdownFilter'] | undefined) => patch({ breakdownFilter }),
    [patch],
  )
  const filters = (
    <Stack gap="xs">
      <MemoPropertyFilters
        projectId={projectId}
        value={(source.properties ?? NO_FILTERS) as PropertyFilter[]}
        onChange={onFilters}
      />
      <Checkbox
        label="Filter out internal and test users"
        checked={!!source.filterTestAccounts}
        onChange={(e) => patch({ filterTestAccounts: e.currentTarget.checked })}
      />
    </Stack>
  )
  const dates = (
    <Group gap="sm" align="flex-end">
      <DateRangePicker value={source.dateRange} onChange={(dateRange) => patch({ dateRange })} />
      {kind === 'TrendsQuery' || kind === 'StickinessQuery' || kind === 'LifecycleQuery' ? (
        <Select
          label="Interval"
          data={INTERVALS}
          value={source.interval ?? 'day'}
          allowDeselect={false}
          w={120}
          onChange={(interval) => interval && patch({ interval })}
        />
      ) : null}
      {kind === 'TrendsQuery' || kind === 'StickinessQuery' ? (
        <Checkbox
          mb={8}
          label="Compare to previous period"
          checked={!!source.compareFilter?.compare}
          onChange={(e) => patch({ compareFilter: e.currentTarget.checked ? { compare: true } : undefined })}
        />
      ) : null}
    </Group>
  )
  if (kind === 'RetentionQuery')
    return <RetentionEditor projectId={projectId} source={source} patch={patch} filters={filters} dates={dates} />
  if (kind === 'PathsQuery')
    return <PathsEditor projectId={projectId} source={source} patch={patch} filters={filters} dates={dates} />
  return (
    <Stack gap="md">
      <MemoSeriesEditor
        projectId={projectId}
        series={source.series ?? NO_SERIES}
        onChange={onSeries}
        withMath={kind === 'TrendsQuery'}
        noun={kind === 'FunnelsQuery' ? 'step' : 'series'}
        min={kind === 'FunnelsQuery' ? 2 : 1}
        max={kind === 'LifecycleQuery' ? 1 : 20}
      />
      {kind === 'TrendsQuery' ? (
        <Group gap="sm" align="flex-end">
          <TextInput
            label="Formula"
            description="Series by letter, e.g. A / B * 100"
            placeholder="A + B"
            value={source.trendsFilter?.formula ?? ''}
            onChange={(e) => patch({ trendsFilter: { ...source.trendsFilter, formula: e.currentTarget.value } })}
            w={240}
            styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
          />
          <Select
            label="Chart type"
            data={DISPLAYS}
            value={source.trendsFilter?.display ?? 'ActionsLineGraph'}
            allowDeselect={false}
            w={220}
            onChange={(display) => display && patch({ trendsFilter: { ...source.trendsFilter, display } })}
          />
        </Group>
      ) : null}
      {kind === 'FunnelsQuery' ? (
        <Group gap="sm" align="flex-end">
          <Select
            label="Step order"
            data={[
              { value: 'ordered', label: 'Sequential' },
              { value: 'strict', label: 'Strict order' },
              { value: 'unordered', label: 'Any order' },
            ]}
            value={source.funnelsFilter?.funnelOrderType ?? 'ordered'}
            allowDeselect={false}
            w={170}
            onChange={(v) => v && patch({ funnelsFilter: { ...source.funnelsFilter, funnelOrderType: v } })}
          />
          <NumberInput
            label="Conversion window"
            min={1}
            max={365}
            value={source.funnelsFilter?.funnelWindowInterval ?? 14}
            onChange={(v) =>
              typeof v === 'number' && patch({ funnelsFilter: { ...source.funnelsFilter, funnelWindowInterval: v } })
            }
            w={150}
          />
          <Select
            label="Window unit"
            data={['minute', 'hour', 'day', 'week', 'month']}
            value={source.funnelsFilter?.funnelWindowIntervalUnit ?? 'day'}
            allowDeselect={false}
            w={120}
            onChange={(v) => v && patch({ funnelsFilter: { ...source.funnelsFilter, funnelWindowIntervalUnit: v } })}
          />
        </Group>
      ) : null}
      {filters}
      {kind === 'TrendsQuery' || kind === 'FunnelsQuery' ? (
        <MemoBreakdownSelect projectId={projectId} value={source.breakdownFilter} onChange={onBreakdown} />
      ) : null}
      {dates}
    </Stack>
  )
}

interface SubEditorProps {
  projectId: number
  source: InsightNode
  patch: (changes: Partial<InsightNode>) => void
  filters: React.ReactNode
  dates: React.ReactNode
}

function RetentionEditor({ projectId, source, patch, filters, dates }: SubEditorProps) {
  const f = source.retentionFilter ?? {}
  const target = f.targetEntity ?? { id: '$pageview', type: 'events' as const }
  const returning = f.returningEntity ?? target
  const choices = useEntityChoices(projectId, [entityValue(target), entityValue(returning)])
  const asEntity = (v: string) => {
    const node = entityFrom(v, { kind: 'EventsNode' }, choices.actionName)
    return node.kind === 'ActionsNode'
      ? { id: node.id as number, type: 'actions' as const, name: node.name }
      : { id: node.event ?? '', type: 'events' as const, name: node.name }
  }
  const set = (changes: Partial<NonNullable<InsightNode['retentionFilter']>>) =>
    patch({ retentionFilter: { ...f, ...changes } })
  return (
    <Stack gap="md">
      <Group gap="sm" align="flex-end">
        <Select
          label="Start event"
          searchable
          data={choices.data.map((g) => ({ ...g, items: g.items.filter((i) => i.value !== 'events:') }))}
          value={entityValue(target)}
          allowDeselect={false}
          w={240}
          onChange={(v) => v && set({ targetEntity: asEntity(v) })}
        />
        <Select
          label="Retention type"
          data={[
            { value: 'retention_first_time', label: 'for the first time' },
            { value: 'retention_recurring', label: 'recurringly' },
          ]}
          value={f.retentionType ?? 'retention_first_time'}
          allowDeselect={false}
          w={180}
          onChange={(v) => v && set({ retentionType: v })}
        />
        <Select
          label="Returning event"
          searchable
          data={choices.data.map((g) => ({ ...g, items: g.items.filter((i) => i.value !== 'events:') }))}
          value={entityValue(returning)}
          allowDeselect={false}
          w={240}
          onChange={(v) => v && set({ returningEntity: asEntity(v) })}
        />
      </Group>
      <Group gap="sm" align="flex-end">
        <Select
          label="Period"
          data={['Hour', 'Day', 'Week', 'Month']}
          value={f.period ?? 'Day'}
          allowDeselect={false}
          w={120}
          onChange={(v) => v && set({ period: v })}
        />
        <NumberInput
          label="Intervals"
          min={2}
          max={31}
          value={f.totalIntervals ?? 8}
          onChange={(v) => typeof v === 'number' && set({ totalIntervals: v })}
          w={120}
        />
      </Group>
      {filters}
      <BreakdownSelect
        projectId={projectId}
        value={source.breakdownFilter}
        onChange={(breakdownFilter) => patch({ breakdownFilter })}
      />
      {dates}
    </Stack>
  )
}

function PathsEditor({ projectId, source, patch, filters, dates }: SubEditorProps) {
  const f = source.pathsFilter ?? {}
  const events = useEventNames(projectId)
  const types = f.includeEventTypes ?? ['$pageview']
  const toggle = (type: string, on: boolean) =>
    patch({
      pathsFilter: { ...f, includeEventTypes: on ? [...new Set([...types, type])] : types.filter((t) => t !== type) },
    })
  return (
    <Stack gap="md">
      <Group gap="md">
        <Text size="sm" fw={600}>
          Show
        </Text>
        <Checkbox
          label="Page views"
          checked={types.includes('$pageview')}
          onChange={(e) => toggle('$pageview', e.currentTarget.checked)}
        />
        <Checkbox
          label="Screen views"
          checked={types.includes('$screen')}
          onChange={(e) => toggle('$screen', e.currentTarget.checked)}
        />
        <Checkbox
          label="Custom events"
          checked={types.includes('custom_event')}
          onChange={(e) => toggle('custom_event', e.currentTarget.checked)}
        />
      </Group>
      <Group gap="sm" align="flex-end">
        <TextInput
          label="Starts at"
          placeholder="/ or an event name"
          value={f.startPoint ?? ''}
          onChange={(e) => patch({ pathsFilter: { ...f, startPoint: e.currentTarget.value || undefined } })}
          w={220}
          list="paths-events"
        />
        <TextInput
          label="Ends at"
          placeholder="/checkout or an event name"
          value={f.endPoint ?? ''}
          onChange={(e) => patch({ pathsFilter: { ...f, endPoint: e.currentTarget.value || undefined } })}
          w={220}
          list="paths-events"
        />
        <datalist id="paths-events">
          {(events.data ?? []).map((e) => (
            <option key={e} value={e} />
          ))}
        </datalist>
        <NumberInput
          label="Steps"
          min={2}
          max={20}
          value={f.stepLimit ?? 5}
          onChange={(v) => typeof v === 'number' && patch({ pathsFilter: { ...f, stepLimit: v } })}
          w={100}
        />
      </Group>
      {filters}
      {dates}
    </Stack>
  )
}
