// One dashboard: its tiles (saved insights and text cards) on a 12-column grid laid out by dragging and resizing
// (each tile's layout saved through PATCH `tiles`), a date range and property filters applied to every tile (in
// the URL as a request-time override until saved onto the dashboard), and refresh with PostHog's `?refresh=`:
// the page reads with `blocking` (stale results recalculated), the Refresh button with `force_blocking`.
import 'react-grid-layout/css/styles.css'
import {
  ActionIcon,
  Anchor,
  Badge,
  Button,
  Card,
  Group,
  Menu,
  Modal,
  Paper,
  ScrollArea,
  Select,
  Stack,
  Text,
  Textarea,
  TextInput,
  Title,
  Tooltip,
} from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useMemo, useState } from 'react'
import GridLayout, { type Layout, useContainerWidth } from 'react-grid-layout'
import { Link, useNavigate, useParams, useSearchParams } from 'react-router'
import { api, get, type Page, qs } from '../../api'
import { Empty, ErrorState, errorText, Loading } from '../../components/States'
import { usePropertyNames } from '../../definitions'
import { useProjectId } from '../../session'
import {
  type DashboardFilters,
  type Dashboard as DashboardRecord,
  getDashboard,
  type Insight,
  insightName,
  type LayoutItem,
  type PropertyFilter,
  patchDashboard,
  type Tile,
} from './api'
import { TileChart } from './TileChart'

const COLS = 12
const ROW_HEIGHT = 80

export const DATE_RANGES = [
  { value: 'none', label: 'No date range override' },
  { value: '-24h', label: 'Last 24 hours' },
  { value: '-7d', label: 'Last 7 days' },
  { value: '-14d', label: 'Last 14 days' },
  { value: '-30d', label: 'Last 30 days' },
  { value: '-90d', label: 'Last 90 days' },
  { value: 'mStart', label: 'This month' },
  { value: 'yStart', label: 'Year to date' },
  { value: 'all', label: 'All time' },
]

const OPERATORS = [
  { value: 'exact', label: '= equals' },
  { value: 'is_not', label: '≠ does not equal' },
  { value: 'icontains', label: '∋ contains' },
  { value: 'not_icontains', label: '∌ does not contain' },
  { value: 'is_set', label: '✓ is set' },
  { value: 'is_not_set', label: '✕ is not set' },
  { value: 'gt', label: '> greater than' },
  { value: 'lt', label: '< less than' },
]

const operatorLabel = (op?: string) => OPERATORS.find((o) => o.value === (op ?? 'exact'))?.label.split(' ')[0] ?? op

/** Every tile's place on the grid: its saved `sm` layout, or the next free place below the laid-out ones. */
export function layoutOf(tiles: Tile[]): Layout {
  const placed = tiles.filter((t) => t.layouts?.sm)
  let bottom = Math.max(0, ...placed.map((t) => (t.layouts.sm as LayoutItem).y + (t.layouts.sm as LayoutItem).h))
  let x = 0
  const out = []
  for (const tile of tiles) {
    const saved = tile.layouts?.sm
    if (saved) {
      out.push({ i: String(tile.id), x: saved.x, y: saved.y, w: saved.w, h: saved.h, minW: 2, minH: 2 })
      continue
    }
    const w = 6
    const h = tile.text ? 3 : 5
    if (x + w > COLS) {
      x = 0
      bottom += 5
    }
    out.push({ i: String(tile.id), x, y: bottom, w, h, minW: 2, minH: 2 })
    x += w
  }
  return out
}

function PropertyFilterForm({ onAdd }: { onAdd: (filter: PropertyFilter) => void }) {
  const projectId = useProjectId()
  const [type, setType] = useState<'event' | 'person'>('event')
  const names = usePropertyNames(projectId, type)
  const [key, setKey] = useState<string | null>(null)
  const [operator, setOperator] = useState('exact')
  const [value, setValue] = useState('')
  const noValue = operator === 'is_set' || operator === 'is_not_set'
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        if (!key) return
        const numeric = (operator === 'gt' || operator === 'lt') && value !== '' && !Number.isNaN(Number(value))
        onAdd({
          type,
          key,
          operator,
          value: noValue
            ? operator
            : numeric
              ? Number(value)
              : operator === 'exact' || operator === 'is_not'
                ? [value]
                : value,
        })
        setKey(null)
        setValue('')
      }}
    >
      <Stack gap="xs" w={280}>
        <Select
          label="Property type"
          data={[
            { value: 'event', label: 'Event property' },
            { value: 'person', label: 'Person property' },
          ]}
          value={type}
          allowDeselect={false}
          onChange={(v) => setType((v as 'event' | 'person') ?? 'event')}
          comboboxProps={{ withinPortal: false }}
        />
        <Select
          label="Property"
          searchable
          data={names.data ?? []}
          value={key}
          onChange={setKey}
          placeholder="Choose a property"
          comboboxProps={{ withinPortal: false }}
        />
        <Select
          label="Operator"
          data={OPERATORS}
          value={operator}
          allowDeselect={false}
          onChange={(v) => setOperator(v ?? 'exact')}
          comboboxProps={{ withinPortal: false }}
        />
        {noValue ? null : <TextInput label="Value" value={value} onChange={(e) => setValue(e.currentTarget.value)} />}
        <Button type="submit" disabled={!key || (!noValue && value === '')}>
          Add filter
        </Button>
      </Stack>
    </form>
  )
}

function AddInsight({
  dashboard,
  opened,
  onClose,
  onAdded,
}: {
  dashboard: DashboardRecord
  opened: boolean
  onClose: () => void
  onAdded: () => void
}) {
  const projectId = useProjectId()
  const [search, setSearch] = useState('')
  const [debounced] = useDebouncedValue(search, 250)
  const onDashboard = new Set(dashboard.tiles.flatMap((t) => (t.insight ? [t.insight.id] : [])))
  const insights = useQuery({
    queryKey: ['insights-for-dashboard', projectId, debounced],
    queryFn: ({ signal }) =>
      get<Page<Insight>>(
        `/api/projects/${projectId}/insights/${qs({ saved: 'true', basic: 'true', search: debounced, limit: 50 })}`,
        signal,
      ),
    enabled: opened,
    placeholderData: keepPreviousData,
  })
  const add = useMutation({
    mutationFn: (insight: Insight) =>
      api('PATCH', `/api/projects/${projectId}/insights/${insight.id}/`, {
        dashboards: [...new Set([...insight.dashboards, dashboard.id])],
      }),
    onSuccess: onAdded,
  })
  const rows = insights.data?.results ?? []
  return (
    <Modal
      closeButtonProps={{ 'aria-label': 'Close' }}
      opened={opened}
      onClose={onClose}
      title="Add insight to dashboard"
      size="lg"
    >
      <Stack gap="sm">
        <TextInput
          label="Search insights"
          data-autofocus
          value={search}
          onChange={(e) => setSearch(e.currentTarget.value)}
        />
        {add.error ? (
          <Text c="red" size="sm" role="alert">
            {errorText(add.error)}
          </Text>
        ) : null}
        {insights.isPending ? (
          <Loading label="Loading insights…" />
        ) : insights.error ? (
          <ErrorState error={insights.error} retry={() => insights.refetch()} />
        ) : rows.length === 0 ? (
          <Empty title="No saved insights">Save an insight first, then add it here.</Empty>
        ) : (
          <ScrollArea.Autosize mah={420}>
            <Stack gap={4} data-testid="insight-picker">
              {rows.map((insight) => {
                const added = onDashboard.has(insight.id)
                return (
                  <Group key={insight.id} justify="space-between" wrap="nowrap" py={4}>
                    <Text size="sm" truncate>
                      {insightName(insight)}
                    </Text>
                    <Button
                      size="xs"
                      variant={added ? 'light' : 'filled'}
                      disabled={added || add.isPending}
                      onClick={() => add.mutate(insight)}
                      aria-label={added ? `${insightName(insight)} is on the dashboard` : `Add ${insightName(insight)}`}
                    >
                      {added ? 'Added' : 'Add to dashboard'}
                    </Button>
                  </Group>
                )
              })}
            </Stack>
          </ScrollArea.Autosize>
        )}
      </Stack>
    </Modal>
  )
}

function TextTileEditor({
  initial,
  opened,
  onClose,
  onSave,
  saving,
  error,
}: {
  initial: string
  opened: boolean
  onClose: () => void
  onSave: (body: string) => void
  saving: boolean
  error: unknown
}) {
  const [body, setBody] = useState(initial)
  return (
    <Modal
      closeButtonProps={{ 'aria-label': 'Close' }}
      opened={opened}
      onClose={onClose}
      title={initial ? 'Edit text' : 'Add text card'}
    >
      <form
        onSubmit={(e) => {
          e.preventDefault()
          onSave(body)
        }}
      >
        <Stack gap="sm">
          <Textarea
            label="Text"
            description="Shown on the dashboard as written."
            data-autofocus
            autosize
            minRows={4}
            maxLength={4000}
            value={body}
            onChange={(e) => setBody(e.currentTarget.value)}
          />
          {error ? (
            <Text c="red" size="sm" role="alert">
              {errorText(error)}
            </Text>
          ) : null}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={saving} disabled={!body.trim()}>
              Save
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  )
}

function TileCard({
  tile,
  height,
  onRemove,
  onEditText,
}: {
  tile: Tile
  height: number
  onRemove: () => void
  onEditText: () => void
}) {
  const projectId = useProjectId()
  const title = tile.insight ? insightName(tile.insight) : 'Text'
  return (
    <Card withBorder padding="xs" h="100%" w="100%" data-testid="dashboard-tile" aria-label={title} component="section">
      <Group justify="space-between" wrap="nowrap" gap="xs" className="tile-drag-handle" style={{ cursor: 'move' }}>
        {tile.insight ? (
          <Anchor
            component={Link}
            to={`/project/${projectId}/insights/${tile.insight.short_id}`}
            fw={600}
            size="sm"
            truncate
            className="tile-no-drag"
          >
            {title}
          </Anchor>
        ) : (
          <Text size="xs" c="dimmed" fw={600}>
            Text
          </Text>
        )}
        <Menu position="bottom-end" withinPortal>
          <Menu.Target>
            <ActionIcon variant="subtle" color="gray" aria-label={`Options for ${title}`} className="tile-no-drag">
              <span aria-hidden>⋯</span>
            </ActionIcon>
          </Menu.Target>
          <Menu.Dropdown>
            {tile.text ? <Menu.Item onClick={onEditText}>Edit text</Menu.Item> : null}
            <Menu.Item color="red" onClick={onRemove}>
              Remove from dashboard
            </Menu.Item>
          </Menu.Dropdown>
        </Menu>
      </Group>
      {tile.insight?.description ? (
        <Text size="xs" c="dimmed" lineClamp={1}>
          {tile.insight.description}
        </Text>
      ) : null}
      <div style={{ flex: 1, minHeight: 0, overflow: 'auto' }}>
        {tile.text ? (
          <Text size="sm" style={{ whiteSpace: 'pre-wrap' }} data-testid="text-tile">
            {tile.text.body}
          </Text>
        ) : tile.error ? (
          <Text size="sm" c="red" role="alert">
            {tile.error.detail}
          </Text>
        ) : tile.insight ? (
          <TileChart
            query={tile.insight.query}
            result={tile.insight.result}
            height={Math.max(80, height)}
            name={title}
          />
        ) : null}
      </div>
    </Card>
  )
}

function Tiles({
  dashboard,
  onLayout,
  onRemove,
  onEditText,
}: {
  dashboard: DashboardRecord
  onLayout: (layout: Layout) => void
  onRemove: (tile: Tile) => void
  onEditText: (tile: Tile) => void
}) {
  const { width, containerRef, mounted } = useContainerWidth()
  const [layout, setLayout] = useState<Layout>(() => layoutOf(dashboard.tiles))
  const tileKey = dashboard.tiles.map((t) => `${t.id}:${JSON.stringify(t.layouts?.sm ?? null)}`).join('|')
  const [seen, setSeen] = useState(tileKey)
  if (seen !== tileKey) {
    setSeen(tileKey)
    setLayout(layoutOf(dashboard.tiles))
  }
  const byId = new Map(layout.map((l) => [l.i, l]))
  return (
    <div ref={containerRef} data-testid="dashboard-grid">
      {mounted ? (
        <GridLayout
          width={width}
          layout={layout}
          gridConfig={{ cols: COLS, rowHeight: ROW_HEIGHT, margin: [16, 16], containerPadding: [0, 0] }}
          dragConfig={{ enabled: true, handle: '.tile-drag-handle', cancel: '.tile-no-drag' }}
          resizeConfig={{ enabled: true, handles: ['se'] }}
          onLayoutChange={(next) => setLayout(next)}
          onDragStop={(next) => onLayout(next)}
          onResizeStop={(next) => onLayout(next)}
        >
          {dashboard.tiles.map((tile) => {
            const h = byId.get(String(tile.id))?.h ?? 5
            return (
              <div key={String(tile.id)} data-tile-id={tile.id} style={{ display: 'flex' }}>
                <TileCard
                  tile={tile}
                  height={h * ROW_HEIGHT + (h - 1) * 16 - 56}
                  onRemove={() => onRemove(tile)}
                  onEditText={() => onEditText(tile)}
                />
              </div>
            )
          })}
        </GridLayout>
      ) : null}
    </div>
  )
}

function parseProperties(text: string | null): PropertyFilter[] | null {
  if (!text) return null
  try {
    const parsed: unknown = JSON.parse(text)
    return Array.isArray(parsed) ? (parsed as PropertyFilter[]) : null
  } catch {
    return null
  }
}

export default function Dashboard() {
  const projectId = useProjectId()
  const id = Number(useParams().dashboardId)
  const navigate = useNavigate()
  const client = useQueryClient()
  const [params, setParams] = useSearchParams()
  const [adding, setAdding] = useState(false)
  const [textTile, setTextTile] = useState<Tile | 'new' | null>(null)
  const [deleting, setDeleting] = useState(false)
  const [filterOpen, setFilterOpen] = useState(false)

  // Filters in the URL override the saved ones until saved (PostHog's `filters_override`).
  const urlDate = params.get('date_from')
  const urlProperties = parseProperties(params.get('properties'))
  const hasOverride = urlDate !== null || urlProperties !== null
  const key = ['dashboard', projectId, id, urlDate, params.get('properties')]
  const query = useQuery({
    queryKey: key,
    queryFn: async ({ signal }) => {
      let override: DashboardFilters | null = null
      if (hasOverride) {
        // The override replaces the saved filters as a whole: start from them (read from the cache only).
        const persisted =
          client.getQueryData<DashboardRecord>(['dashboard-persisted', projectId, id])?.persisted_filters ??
          (await getDashboard(projectId, id, { refresh: 'force_cache' }, signal)).persisted_filters
        override = {
          ...(persisted ?? {}),
          ...(urlDate !== null ? { date_from: urlDate || null } : {}),
          ...(urlProperties !== null ? { properties: urlProperties } : {}),
        }
      }
      const d = await getDashboard(projectId, id, { refresh: 'blocking', filtersOverride: override }, signal)
      if (!hasOverride) client.setQueryData(['dashboard-persisted', projectId, id], d)
      return d
    },
    placeholderData: keepPreviousData,
    enabled: Number.isFinite(id),
  })
  const dashboard = query.data
  const filters: DashboardFilters = dashboard?.filters ?? {}
  const dateFrom = urlDate ?? filters.date_from ?? ''
  const properties = urlProperties ?? filters.properties ?? []

  const setOverride = (changes: { date_from?: string; properties?: PropertyFilter[] }) => {
    const next = new URLSearchParams(params)
    if (changes.date_from !== undefined) next.set('date_from', changes.date_from)
    if (changes.properties !== undefined) next.set('properties', JSON.stringify(changes.properties))
    setParams(next, { replace: true })
  }
  const clearOverride = () => {
    const next = new URLSearchParams(params)
    next.delete('date_from')
    next.delete('properties')
    setParams(next, { replace: true })
  }
  const reload = () => client.invalidateQueries({ queryKey: ['dashboard', projectId, id] })

  const refresh = useMutation({
    mutationFn: () =>
      getDashboard(projectId, id, {
        refresh: 'force_blocking',
        filtersOverride: hasOverride ? { ...filters, date_from: dateFrom || null, properties } : null,
      }),
    onSuccess: (d) => client.setQueryData(key, d),
  })
  const saveFilters = useMutation({
    mutationFn: () =>
      patchDashboard(projectId, id, { filters: { ...filters, date_from: dateFrom || null, properties } }),
    onSuccess: (d) => {
      client.setQueryData(['dashboard', projectId, id, null, null], d)
      client.setQueryData(['dashboard-persisted', projectId, id], d)
      clearOverride()
      void reload()
    },
  })
  const saveLayout = useMutation({
    mutationFn: (layout: Layout) => {
      if (!dashboard) throw new Error('No dashboard')
      const current = new Map(layoutOf(dashboard.tiles).map((l) => [l.i, l]))
      const tiles = []
      for (const item of layout) {
        const tile = dashboard.tiles.find((t) => String(t.id) === item.i)
        const before = current.get(item.i)
        if (!tile) continue
        const moved =
          !tile.layouts?.sm ||
          !before ||
          before.x !== item.x ||
          before.y !== item.y ||
          before.w !== item.w ||
          before.h !== item.h
        if (!moved) continue
        tiles.push({
          id: tile.id,
          layouts: { ...tile.layouts, sm: { x: item.x, y: item.y, w: item.w, h: item.h, minW: 2, minH: 2 } },
        })
      }
      return tiles.length ? patchDashboard(projectId, id, { tiles }) : Promise.resolve(null)
    },
    onSuccess: (d) => {
      if (d) void reload()
    },
  })
  const removeTile = useMutation({
    mutationFn: (tile: Tile) => patchDashboard(projectId, id, { tiles: [{ id: tile.id, deleted: true }] }),
    onSuccess: () => reload(),
  })
  const saveText = useMutation({
    mutationFn: (body: string) => {
      const tile = textTile === 'new' || textTile === null ? { text: { body } } : { id: textTile.id, text: { body } }
      return patchDashboard(projectId, id, { tiles: [tile] })
    },
    onSuccess: () => {
      setTextTile(null)
      void reload()
    },
  })
  const pin = useMutation({
    mutationFn: () => patchDashboard(projectId, id, { pinned: !dashboard?.pinned }),
    onSuccess: () => reload(),
  })
  const remove = useMutation({
    mutationFn: () => patchDashboard(projectId, id, { deleted: true }),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['dashboards', projectId] })
      navigate(`/project/${projectId}/dashboards`)
    },
  })

  const lastRefresh = useMemo(() => {
    const times = (dashboard?.tiles ?? []).flatMap((t) => (t.last_refresh ? [Date.parse(t.last_refresh)] : []))
    return times.length ? new Date(Math.min(...times)) : null
  }, [dashboard])

  const back = (
    <Anchor component={Link} to={`/project/${projectId}/dashboards`} size="sm">
      ← Dashboards
    </Anchor>
  )
  if (query.isPending) return <Loading label="Loading dashboard…" />
  if (query.error || !dashboard) {
    return (
      <Stack>
        {back}
        <ErrorState error={query.error} retry={() => query.refetch()} />
      </Stack>
    )
  }

  const mutationError =
    refresh.error ?? saveFilters.error ?? saveLayout.error ?? removeTile.error ?? pin.error ?? remove.error

  return (
    <Stack gap="md">
      {back}
      <Group justify="space-between" align="flex-start">
        <Stack gap={2}>
          <Title order={1} size="h2">
            {dashboard.name || 'Untitled'}
          </Title>
          {dashboard.description ? (
            <Text size="sm" c="dimmed">
              {dashboard.description}
            </Text>
          ) : null}
        </Stack>
        <Group gap="xs">
          <Tooltip label={lastRefresh ? `Last refreshed ${lastRefresh.toLocaleString()}` : 'Not calculated yet'}>
            <Button variant="default" loading={refresh.isPending} onClick={() => refresh.mutate()}>
              Refresh
            </Button>
          </Tooltip>
          <Button variant="default" onClick={() => setTextTile('new')}>
            Add text card
          </Button>
          <Button onClick={() => setAdding(true)}>Add insight</Button>
          <Menu position="bottom-end">
            <Menu.Target>
              <ActionIcon variant="default" size="lg" aria-label="Dashboard options">
                <span aria-hidden>⋯</span>
              </ActionIcon>
            </Menu.Target>
            <Menu.Dropdown>
              <Menu.Item onClick={() => pin.mutate()}>
                {dashboard.pinned ? 'Unpin dashboard' : 'Pin dashboard'}
              </Menu.Item>
              <Menu.Item color="red" onClick={() => setDeleting(true)}>
                Delete dashboard
              </Menu.Item>
            </Menu.Dropdown>
          </Menu>
        </Group>
      </Group>

      <Paper withBorder p="sm">
        <Group align="flex-end" gap="sm">
          <Select
            label="Date range"
            data={DATE_RANGES}
            value={dateFrom || 'none'}
            allowDeselect={false}
            onChange={(v) => setOverride({ date_from: !v || v === 'none' ? '' : v })}
            w={220}
          />
          <Stack gap={4}>
            <Text size="sm" fw={500} component="span" id="dashboard-filters-label">
              Filters
            </Text>
            <Group gap={6} aria-labelledby="dashboard-filters-label" role="group">
              {properties.map((p, i) => (
                <Badge
                  key={JSON.stringify([p, i])}
                  variant="light"
                  size="lg"
                  tt="none"
                  data-testid="dashboard-filter"
                  rightSection={
                    <ActionIcon
                      size="xs"
                      variant="transparent"
                      aria-label={`Remove filter ${p.key}`}
                      onClick={() => setOverride({ properties: properties.filter((_, j) => j !== i) })}
                    >
                      <span aria-hidden>×</span>
                    </ActionIcon>
                  }
                >
                  {p.key} {operatorLabel(p.operator)}{' '}
                  {p.operator === 'is_set' || p.operator === 'is_not_set'
                    ? ''
                    : Array.isArray(p.value)
                      ? p.value.join(', ')
                      : String(p.value ?? '')}
                </Badge>
              ))}
              <Menu
                opened={filterOpen}
                onChange={setFilterOpen}
                position="bottom-start"
                closeOnItemClick={false}
                trapFocus
              >
                <Menu.Target>
                  <Button variant="light" size="xs">
                    Add filter
                  </Button>
                </Menu.Target>
                <Menu.Dropdown p="sm">
                  <PropertyFilterForm
                    onAdd={(f) => {
                      setOverride({ properties: [...properties, f] })
                      setFilterOpen(false)
                    }}
                  />
                </Menu.Dropdown>
              </Menu>
            </Group>
          </Stack>
          {hasOverride ? (
            <Group gap="xs" ml="auto">
              <Button variant="default" onClick={clearOverride}>
                Discard
              </Button>
              <Button loading={saveFilters.isPending} onClick={() => saveFilters.mutate()}>
                Save filters
              </Button>
            </Group>
          ) : null}
        </Group>
      </Paper>
      {mutationError ? <ErrorState error={mutationError} /> : null}
      {query.isFetching || refresh.isPending ? (
        <Text size="xs" c="dimmed" role="status">
          Refreshing…
        </Text>
      ) : lastRefresh ? (
        <Text size="xs" c="dimmed" data-testid="last-refreshed">
          Last refreshed {lastRefresh.toLocaleString()}
        </Text>
      ) : null}

      {dashboard.tiles.length === 0 ? (
        <Empty
          title="This dashboard is empty"
          action={
            <Group>
              <Button onClick={() => setAdding(true)}>Add insight</Button>
              <Button variant="default" onClick={() => setTextTile('new')}>
                Add text card
              </Button>
            </Group>
          }
        >
          Add saved insights or text cards, then drag them into place.
        </Empty>
      ) : (
        <Tiles
          dashboard={dashboard}
          onLayout={(layout) => saveLayout.mutate(layout)}
          onRemove={(tile) => removeTile.mutate(tile)}
          onEditText={(tile) => setTextTile(tile)}
        />
      )}

      <AddInsight
        dashboard={dashboard}
        opened={adding}
        onClose={() => setAdding(false)}
        onAdded={() => {
          setAdding(false)
          void reload()
        }}
      />
      {textTile ? (
        <TextTileEditor
          initial={textTile === 'new' ? '' : (textTile.text?.body ?? '')}
          opened
          onClose={() => setTextTile(null)}
          onSave={(body) => saveText.mutate(body)}
          saving={saveText.isPending}
          error={saveText.error}
        />
      ) : null}
      <Modal
        closeButtonProps={{ 'aria-label': 'Close' }}
        opened={deleting}
        onClose={() => setDeleting(false)}
        title="Delete dashboard?"
      >
        <Stack>
          <Text size="sm">“{dashboard.name || 'Untitled'}” will be deleted. Its insights stay saved.</Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setDeleting(false)}>
              Cancel
            </Button>
            <Button color="red" loading={remove.isPending} onClick={() => remove.mutate()}>
              Delete
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  )
}
