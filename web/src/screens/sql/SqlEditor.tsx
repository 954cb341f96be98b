// The SQL editor: write HogQL (highlighted, with completion of tables, fields, functions and the project's
// property names), run it with Ctrl/Cmd+Enter or the button as an async query with progress and cancel, see the
// rows in a windowed table or as a chart, and save it as an insight or an endpoint. The query and the view are
// in the URL (`?q=`…), so a link reproduces them.
import {
  Alert,
  Anchor,
  Button,
  Code,
  Group,
  Kbd,
  Modal,
  Progress,
  SegmentedControl,
  Stack,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core'
import { useEffect, useMemo, useRef, useState } from 'react'
import { Link, useSearchParams } from 'react-router'
import { ApiError, api } from '../../api'
import { Empty, Loading } from '../../components/States'
import { usePropertyNames } from '../../definitions'
import { useProjectId } from '../../session'
import { type EditorError, HogQLEditor, lineAndColumn } from './HogQLEditor'
import { type ChartDisplay, type ChartSettings, defaultChartColumns, ResultChart } from './ResultChart'
import { ResultsTable } from './ResultsTable'
import { type RunState, useHogQLRun } from './useHogQLRun'

const isMac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform)

function RunningState({ state, onCancel }: { state: Extract<RunState, { phase: 'running' }>; onCancel: () => void }) {
  const [now, setNow] = useState(performance.now())
  useEffect(() => {
    const timer = setInterval(() => setNow(performance.now()), 250)
    return () => clearInterval(timer)
  }, [])
  const progress = state.progress
  const total = progress?.estimated_rows_total ?? 0
  const share = total > 0 ? Math.min(100, (100 * (progress?.rows_read ?? 0)) / total) : null
  return (
    <Stack gap="xs" role="status" aria-live="polite" data-testid="query-running" py="md">
      <Group justify="space-between">
        <Text size="sm">
          Running query… {((now - state.startedAt) / 1000).toFixed(1)}s
          {progress ? ` · ${progress.rows_read.toLocaleString('en-US')} rows read` : ''}
          {total > 0 ? ` of ~${total.toLocaleString('en-US')}` : ''}
        </Text>
        <Button size="xs" variant="light" color="red" onClick={onCancel}>
          Cancel
        </Button>
      </Group>
      <Progress
        value={share ?? 100}
        animated={share === null}
        striped={share === null}
        aria-label="Query progress"
        size="sm"
      />
    </Stack>
  )
}

function SaveInsightModal({
  opened,
  onClose,
  query,
  chart,
}: {
  opened: boolean
  onClose: () => void
  query: string
  chart: ChartSettings | null
}) {
  const projectId = useProjectId()
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [saved, setSaved] = useState<{ short_id: string; name: string } | null>(null)

  const submit = async () => {
    setBusy(true)
    setError(null)
    try {
      const node: Record<string, unknown> = { kind: 'DataVisualizationNode', source: { kind: 'HogQLQuery', query } }
      if (chart) {
        node.display = chart.display === 'bar' ? 'ActionsBar' : 'ActionsLineGraph'
        node.chartSettings = {
          xAxis: chart.x ? { column: chart.x } : undefined,
          yAxis: chart.y.map((column) => ({ column })),
        }
      } else node.display = 'ActionsTable'
      const insight = await api<{ short_id: string; name: string }>('POST', `/api/projects/${projectId}/insights/`, {
        name,
        description: description || undefined,
        query: node,
        saved: true,
      })
      setSaved(insight)
    } catch (e) {
      setError(e instanceof ApiError ? e.detail : String(e))
    } finally {
      setBusy(false)
    }
  }

  const close = () => {
    setSaved(null)
    setError(null)
    onClose()
  }

  return (
    <Modal opened={opened} onClose={close} title="Save as insight" closeButtonProps={{ 'aria-label': 'Close' }}>
      {saved ? (
        <Stack gap="sm">
          <Alert color="green" title="Insight saved" data-testid="insight-saved">
            “{saved.name}” is saved as insight <Code>{saved.short_id}</Code>.
          </Alert>
          <Group justify="flex-end">
            <Button onClick={close}>Done</Button>
          </Group>
        </Stack>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault()
            void submit()
          }}
        >
          <Stack gap="sm">
            <TextInput
              label="Name"
              required
              data-autofocus
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
            />
            <Textarea label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
            <Text size="xs" c="dimmed">
              Saved {chart ? `as a ${chart.display} chart` : 'as a table'} of this query.
            </Text>
            {error ? (
              <Alert color="red" role="alert" title="Could not save">
                {error}
              </Alert>
            ) : null}
            <Group justify="flex-end">
              <Button variant="default" onClick={close}>
                Cancel
              </Button>
              <Button type="submit" loading={busy}>
                Save insight
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  )
}

function SaveEndpointModal({ opened, onClose, query }: { opened: boolean; onClose: () => void; query: string }) {
  const projectId = useProjectId()
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [saved, setSaved] = useState<{ name: string; url: string } | null>(null)

  const submit = async () => {
    setBusy(true)
    setError(null)
    try {
      const endpoint = await api<{ name: string; url: string }>('POST', `/api/projects/${projectId}/endpoints/`, {
        name,
        description,
        query: { kind: 'HogQLQuery', query },
      })
      setSaved(endpoint)
    } catch (e) {
      setError(e instanceof ApiError ? e.detail : String(e))
    } finally {
      setBusy(false)
    }
  }

  const close = () => {
    setSaved(null)
    setError(null)
    onClose()
  }

  return (
    <Modal opened={opened} onClose={close} title="Save as endpoint" closeButtonProps={{ 'aria-label': 'Close' }}>
      {saved ? (
        <Stack gap="sm">
          <Alert color="green" title="Endpoint created" data-testid="endpoint-saved">
            <Text size="sm">Run it with a personal API key:</Text>
            <Code block>{`POST ${saved.url}`}</Code>
            <Anchor component={Link} to={`/project/${projectId}/endpoints/${saved.name}`} size="sm">
              Open the endpoint: versions, runs, materialization and its API
            </Anchor>
          </Alert>
          <Group justify="flex-end">
            <Button onClick={close}>Done</Button>
          </Group>
        </Stack>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault()
            void submit()
          }}
        >
          <Stack gap="sm">
            <TextInput
              label="Name"
              description="Letters, digits, hyphens and underscores, starting with a letter: it becomes the URL."
              required
              data-autofocus
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
            />
            <Textarea label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
            {error ? (
              <Alert color="red" role="alert" title="Could not save">
                {error}
              </Alert>
            ) : null}
            <Group justify="flex-end">
              <Button variant="default" onClick={close}>
                Cancel
              </Button>
              <Button type="submit" loading={busy}>
                Create endpoint
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  )
}

export default function SqlEditor() {
  const projectId = useProjectId()
  const [params, setParams] = useSearchParams()
  const initial = useRef(params.get('q') ?? '')
  const [text, setText] = useState(initial.current)
  const { state, run, cancel } = useHogQLRun(projectId)
  const eventProperties = usePropertyNames(projectId, 'event')
  const personProperties = usePropertyNames(projectId, 'person')
  const [saving, setSaving] = useState<'insight' | 'endpoint' | null>(null)

  const view = params.get('view') === 'chart' ? 'chart' : 'table'
  const display: ChartDisplay = params.get('display') === 'bar' ? 'bar' : 'line'
  const x = params.get('x')
  const yKey = params.getAll('y').join('\n')

  const update = (changes: Record<string, string | string[] | null>) => {
    setParams(
      (current) => {
        const next = new URLSearchParams(current)
        for (const [k, v] of Object.entries(changes)) {
          next.delete(k)
          if (Array.isArray(v)) for (const item of v) next.append(k, item)
          else if (v !== null && v !== '') next.set(k, v)
        }
        return next
      },
      { replace: true },
    )
  }

  const latestText = useRef(text)
  latestText.current = text
  const start = () => {
    const query = latestText.current
    if (!query.trim()) return
    update({ q: query })
    void run(query)
  }

  // A link with a query runs it, so the link reproduces the result.
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, on arrival
  useEffect(() => {
    if (initial.current.trim()) void run(initial.current)
  }, [])

  const propertyNames = useMemo(
    () => ({ event: eventProperties.data ?? [], person: personProperties.data ?? [] }),
    [eventProperties.data, personProperties.data],
  )

  const failure = state.phase === 'error' ? state.error : null
  const editorError: EditorError | null =
    failure && failure.start !== null && state.phase === 'error' && state.query === text
      ? { start: failure.start, end: failure.end, message: failure.message }
      : null
  const position =
    failure && failure.start !== null && state.phase === 'error' ? lineAndColumn(state.query, failure.start) : null

  const response = state.phase === 'done' ? state.response : null
  const columns = (response?.columns as string[] | undefined) ?? []
  const rows = (response?.results as unknown[][] | undefined) ?? []
  const savedChart: ChartSettings | null = useMemo(() => {
    if (view !== 'chart' || !response) return null
    const names = (response.columns as string[] | undefined) ?? []
    const fallback = defaultChartColumns(names, response.types)
    const y = yKey.split('\n').filter((c) => names.includes(c))
    return {
      display,
      x: x && names.includes(x) ? x : fallback.x,
      y: y.length ? y : fallback.y,
    }
  }, [view, response, display, x, yKey])

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={1} size="h2">
          SQL editor
        </Title>
        <Group gap="xs">
          <Button variant="default" disabled={!text.trim()} onClick={() => setSaving('endpoint')}>
            Save as endpoint
          </Button>
          <Button variant="default" disabled={!text.trim()} onClick={() => setSaving('insight')}>
            Save as insight
          </Button>
        </Group>
      </Group>
      <Text size="sm" c="dimmed">
        Query your data with HogQL, PostHog’s SQL. Tables: <Code>events</Code>, <Code>persons</Code>,{' '}
        <Code>sessions</Code>, <Code>groups</Code>; event properties as <Code>properties.$browser</Code>.
      </Text>
      <HogQLEditor
        initialValue={initial.current}
        onChange={setText}
        onRun={start}
        propertyNames={propertyNames}
        error={editorError}
      />
      <Group gap="sm">
        <Button onClick={start} disabled={!text.trim() || state.phase === 'running'}>
          Run
        </Button>
        <Text size="xs" c="dimmed">
          or press <Kbd>{isMac ? '⌘' : 'Ctrl'}</Kbd> + <Kbd>Enter</Kbd> in the editor
        </Text>
        {state.phase === 'done' ? (
          <Text size="xs" c="dimmed" data-testid="query-time">
            Ran in {state.seconds.toFixed(2)} s
          </Text>
        ) : null}
      </Group>

      {state.phase === 'idle' ? (
        <Empty title="No results yet">Write a query above and run it to see its rows here.</Empty>
      ) : state.phase === 'running' ? (
        <RunningState state={state} onCancel={() => void cancel()} />
      ) : state.phase === 'cancelled' ? (
        <Alert color="yellow" title="Query cancelled" data-testid="query-cancelled">
          The query was stopped before it finished. Run it again to see its results.
        </Alert>
      ) : state.phase === 'error' ? (
        <Alert color="red" title="Query error" role="alert" data-testid="query-error">
          {position ? (
            <Text size="sm" fw={600} data-testid="query-error-position">
              Line {position.line}, column {position.column}
            </Text>
          ) : null}
          <Text size="sm" style={{ whiteSpace: 'pre-wrap' }}>
            {state.error.message}
          </Text>
          {state.error.code ? (
            <Text size="xs" c="dimmed">
              {state.error.code}
            </Text>
          ) : null}
        </Alert>
      ) : !response ? (
        <Loading />
      ) : (
        <Stack gap="sm">
          <Group justify="space-between">
            <SegmentedControl
              aria-label="Show results as"
              value={view}
              onChange={(value) => update({ view: value === 'chart' ? 'chart' : null })}
              data={[
                { value: 'table', label: 'Table' },
                { value: 'chart', label: 'Visualization' },
              ]}
            />
            {response.hasMore ? (
              <Text size="xs" c="dimmed" data-testid="has-more">
                Showing the first {rows.length.toLocaleString('en-US')} rows. Add a LIMIT (up to 50,000) to see more.
              </Text>
            ) : null}
          </Group>
          {rows.length === 0 ? (
            <Empty title="The query returned no rows" />
          ) : view === 'chart' && savedChart ? (
            <ResultChart
              columns={columns}
              types={response.types}
              rows={rows}
              settings={savedChart}
              onChange={(next) => update({ display: next.display, x: next.x, y: next.y })}
            />
          ) : (
            <ResultsTable columns={columns} rows={rows} />
          )}
        </Stack>
      )}

      <SaveInsightModal opened={saving === 'insight'} onClose={() => setSaving(null)} query={text} chart={savedChart} />
      <SaveEndpointModal opened={saving === 'endpoint'} onClose={() => setSaving(null)} query={text} />
    </Stack>
  )
}
