// Experiments: the project's experiments (search, status), and on their own tabs the holdouts and the shared
// (saved) metrics experiments can reuse, each created and deleted here. Tab, search and status are in the URL.
import {
  Alert,
  Badge,
  Button,
  Card,
  Group,
  Modal,
  NumberInput,
  Select,
  Stack,
  Tabs,
  Text,
  TextInput,
  Title,
} from '@mantine/core'
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link } from 'react-router'
import { api, get, type Page, qs } from '../../api'
import { ListView, NameCell, SearchField, shortDate } from '../../components/ListView'
import { Empty, errorText } from '../../components/States'
import { useSearchState } from '../../components/useSearchState'
import { useProjectId } from '../../session'
import { describeMetric, emptyMetric, type Metric, MetricEditor, metricProblem } from './MetricEditor'
import { type Experiment, STATUS_COLORS, statusOf } from './model'

export default function Experiments() {
  const { params, update } = useSearchState()
  const tab = params.get('tab') ?? 'experiments'
  const projectId = useProjectId()
  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={1} size="h2">
          Experiments
        </Title>
        <Button component={Link} to={`/project/${projectId}/experiments/new`}>
          New experiment
        </Button>
      </Group>
      <Tabs value={tab} onChange={(v) => update({ tab: v === 'experiments' ? null : v })} keepMounted={false}>
        <Tabs.List>
          <Tabs.Tab value="experiments">Experiments</Tabs.Tab>
          <Tabs.Tab value="holdouts">Holdout groups</Tabs.Tab>
          <Tabs.Tab value="metrics">Shared metrics</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="experiments" pt="md">
          <ExperimentList />
        </Tabs.Panel>
        <Tabs.Panel value="holdouts" pt="md">
          <Holdouts />
        </Tabs.Panel>
        <Tabs.Panel value="metrics" pt="md">
          <SavedMetrics />
        </Tabs.Panel>
      </Tabs>
    </Stack>
  )
}

function ExperimentList() {
  const projectId = useProjectId()
  const { params, update } = useSearchState()
  const search = params.get('search') ?? ''
  const status = params.get('status') ?? 'all'
  const list = useQuery({
    queryKey: ['experiments', projectId, search, status],
    queryFn: ({ signal }) =>
      get<Page<Experiment>>(`/api/projects/${projectId}/experiments/${qs({ search, status, limit: 200 })}`, signal),
    placeholderData: keepPreviousData,
  })
  return (
    <Stack gap="sm">
      <Group align="flex-end" gap="sm">
        <SearchField value={search} placeholder="Search experiments" onSearch={(value) => update({ search: value })} />
        <Select
          label="Status"
          data={[
            { value: 'all', label: 'Any status' },
            { value: 'draft', label: 'Draft' },
            { value: 'running', label: 'Running' },
            { value: 'paused', label: 'Paused' },
            { value: 'complete', label: 'Complete' },
          ]}
          value={status}
          allowDeselect={false}
          onChange={(v) => update({ status: v === 'all' ? null : v })}
          w={170}
        />
      </Group>
      <ListView
        query={list}
        rows={list.data?.results}
        loadingLabel="Loading experiments…"
        testId="experiments-table"
        rowKey={(e) => e.id}
        empty={
          <Empty
            title={search || status !== 'all' ? 'No matching experiments' : 'No experiments yet'}
            action={
              <Button component={Link} to={`/project/${projectId}/experiments/new`}>
                Create an experiment
              </Button>
            }
          >
            Experiments test variants of a feature flag against a metric and tell you which one wins.
          </Empty>
        }
        columns={[
          {
            header: 'Name',
            cell: (e) => <NameCell to={`/project/${projectId}/experiments/${e.id}`} name={e.name} />,
          },
          { header: 'Feature flag', cell: (e) => <Text size="sm">{e.feature_flag_key}</Text> },
          { header: 'Started', cell: (e) => <Text size="sm">{shortDate(e.start_date)}</Text> },
          { header: 'Ended', cell: (e) => <Text size="sm">{shortDate(e.end_date)}</Text> },
          {
            header: 'Status',
            cell: (e) => {
              const s = statusOf(e)
              return (
                <Badge color={STATUS_COLORS[s]} variant="light">
                  {s}
                </Badge>
              )
            },
          },
        ]}
      />
    </Stack>
  )
}

interface Holdout {
  id: number
  name: string
  description: string | null
  filters: { properties?: unknown[]; rollout_percentage: number }[]
  created_at: string
}

function Holdouts() {
  const projectId = useProjectId()
  const client = useQueryClient()
  const [open, setOpen] = useState(false)
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [pct, setPct] = useState<number>(10)
  const [error, setError] = useState<unknown>(null)
  const list = useQuery({
    queryKey: ['holdouts', projectId],
    queryFn: ({ signal }) => get<Page<Holdout>>(`/api/projects/${projectId}/experiment_holdouts/`, signal),
  })
  const refresh = () => client.invalidateQueries({ queryKey: ['holdouts', projectId] })
  const create = async () => {
    setError(null)
    try {
      await api('POST', `/api/projects/${projectId}/experiment_holdouts/`, {
        name,
        description,
        filters: [{ properties: [], rollout_percentage: pct }],
      })
      setOpen(false)
      setName('')
      setDescription('')
      await refresh()
    } catch (e) {
      setError(e)
    }
  }
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Text size="sm" c="dimmed">
          A holdout keeps a share of users out of every experiment that uses it, as a long-running baseline.
        </Text>
        <Button variant="light" onClick={() => setOpen(true)}>
          New holdout
        </Button>
      </Group>
      <ListView
        query={list}
        rows={list.data?.results}
        loadingLabel="Loading holdouts…"
        testId="holdouts-table"
        rowKey={(h) => h.id}
        empty={<Empty title="No holdouts yet" />}
        columns={[
          { header: 'Name', cell: (h) => h.name },
          { header: 'Description', cell: (h) => h.description || '—' },
          { header: 'Users held out', cell: (h) => `${h.filters?.[0]?.rollout_percentage ?? 0}%` },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (h) => (
              <DeleteButton
                label={`Delete holdout ${h.name}`}
                path={`/api/projects/${projectId}/experiment_holdouts/${h.id}/`}
                done={refresh}
                failed={setError}
              />
            ),
          },
        ]}
      />
      {error && !open ? (
        <Alert color="red" role="alert">
          {errorText(error)}
        </Alert>
      ) : null}
      <Modal opened={open} onClose={() => setOpen(false)} title="New holdout">
        <form
          onSubmit={(e) => {
            e.preventDefault()
            void create()
          }}
        >
          <Stack gap="sm">
            <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
            <TextInput
              label="Description"
              value={description}
              onChange={(e) => setDescription(e.currentTarget.value)}
            />
            <NumberInput
              label="Share of users held out"
              min={0}
              max={100}
              suffix="%"
              value={pct}
              onChange={(v) => setPct(typeof v === 'number' ? v : Number(v) || 0)}
            />
            {error ? (
              <Text c="red" size="sm" role="alert">
                {errorText(error)}
              </Text>
            ) : null}
            <Group justify="flex-end">
              <Button type="submit">Save holdout</Button>
            </Group>
          </Stack>
        </form>
      </Modal>
    </Stack>
  )
}

interface SavedMetric {
  id: number
  name: string
  description: string | null
  query: Metric
  created_at: string
}

function SavedMetrics() {
  const projectId = useProjectId()
  const client = useQueryClient()
  const [open, setOpen] = useState(false)
  const [name, setName] = useState('')
  const [metric, setMetric] = useState<Metric>(emptyMetric())
  const [error, setError] = useState<unknown>(null)
  const list = useQuery({
    queryKey: ['saved-metrics', projectId],
    queryFn: ({ signal }) => get<Page<SavedMetric>>(`/api/projects/${projectId}/experiment_saved_metrics/`, signal),
  })
  const refresh = () => client.invalidateQueries({ queryKey: ['saved-metrics', projectId] })
  const problem = metricProblem(metric)
  const create = async () => {
    setError(null)
    if (problem) return setError(new Error(problem))
    try {
      await api('POST', `/api/projects/${projectId}/experiment_saved_metrics/`, { name, query: metric })
      setOpen(false)
      setName('')
      setMetric(emptyMetric())
      await refresh()
    } catch (e) {
      setError(e)
    }
  }
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Text size="sm" c="dimmed">
          Shared metrics are defined once and added to any experiment.
        </Text>
        <Button variant="light" onClick={() => setOpen(true)}>
          New shared metric
        </Button>
      </Group>
      <ListView
        query={list}
        rows={list.data?.results}
        loadingLabel="Loading shared metrics…"
        testId="saved-metrics-table"
        rowKey={(m) => m.id}
        empty={<Empty title="No shared metrics yet" />}
        columns={[
          { header: 'Name', cell: (m) => m.name },
          { header: 'Metric', cell: (m) => describeMetric({ ...m.query, name: undefined }) },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (m) => (
              <DeleteButton
                label={`Delete shared metric ${m.name}`}
                path={`/api/projects/${projectId}/experiment_saved_metrics/${m.id}/`}
                done={refresh}
                failed={setError}
              />
            ),
          },
        ]}
      />
      {error && !open ? (
        <Alert color="red" role="alert">
          {errorText(error)}
        </Alert>
      ) : null}
      <Modal opened={open} onClose={() => setOpen(false)} title="New shared metric" size="xl">
        <form
          onSubmit={(e) => {
            e.preventDefault()
            void create()
          }}
        >
          <Stack gap="sm">
            <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
            <Card withBorder>
              <MetricEditor projectId={projectId} metric={metric} onChange={setMetric} />
            </Card>
            {error ? (
              <Text c="red" size="sm" role="alert">
                {errorText(error)}
              </Text>
            ) : null}
            <Group justify="flex-end">
              <Button type="submit">Save shared metric</Button>
            </Group>
          </Stack>
        </form>
      </Modal>
    </Stack>
  )
}

/** A row's delete button: the DELETE call, then the list refreshed, or the refusal handed to the screen. */
function DeleteButton({
  label,
  path,
  done,
  failed,
}: {
  label: string
  path: string
  done: () => Promise<unknown>
  failed: (error: unknown) => void
}) {
  return (
    <Button
      size="xs"
      variant="subtle"
      color="red"
      aria-label={label}
      onClick={async () => {
        try {
          await api('DELETE', path)
          await done()
        } catch (e) {
          failed(e)
        }
      }}
    >
      Delete
    </Button>
  )
}
