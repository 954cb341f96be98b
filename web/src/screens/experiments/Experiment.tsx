// One experiment (`experiments/:id`) or a new one (`experiments/new`). New: a name, and either an existing
// multivariate flag (control first) or a new flag with its variants; a holdout and the statistics method.
// Saved: its lifecycle (launch, pause/resume, end, ship a variant, back to draft) through the API's helper routes,
// the metrics (edited in place, or added from the shared ones), exposure settings, and each metric's results.
import {
  Alert,
  Anchor,
  Badge,
  Breadcrumbs,
  Button,
  Card,
  Checkbox,
  Group,
  Modal,
  NumberInput,
  SegmentedControl,
  Select,
  Stack,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { api, get, type Page } from '../../api'
import { notify } from '../../components/notify'
import { ErrorState, errorText, Loading } from '../../components/States'
import { useEventNames } from '../../definitions'
import { useProjectId } from '../../session'
import { describeMetric, emptyMetric, type Metric, MetricEditor, metricProblem } from './MetricEditor'
import { type Experiment as ExperimentT, STATUS_COLORS, statusOf, type Variant } from './model'
import { MetricResults } from './Results'

export default function Experiment() {
  const projectId = useProjectId()
  const { id: raw } = useParams()
  const id = raw === undefined || raw === 'new' ? null : Number(raw)
  const experiment = useQuery({
    queryKey: ['experiment', projectId, id],
    queryFn: ({ signal }) => get<ExperimentT>(`/api/projects/${projectId}/experiments/${id}/`, signal),
    enabled: id !== null && Number.isInteger(id),
  })
  if (id === null) return <NewExperiment projectId={projectId} />
  if (!Number.isInteger(id)) return <ErrorState error={new Error('Not an experiment id.')} />
  if (experiment.isPending) return <Loading label="Loading experiment…" />
  if (experiment.error) return <ErrorState error={experiment.error} retry={() => experiment.refetch()} />
  return <Detail projectId={projectId} experiment={experiment.data} />
}

interface FlagBrief {
  id: number
  key: string
  filters: { multivariate?: { variants: Variant[] } | null }
}

function NewExperiment({ projectId }: { projectId: number }) {
  const navigate = useNavigate()
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [source, setSource] = useState<'new' | 'existing'>('new')
  const [flagKey, setFlagKey] = useState('')
  const [existingKey, setExistingKey] = useState<string | null>(null)
  const [variants, setVariants] = useState<Variant[]>([
    { key: 'control', rollout_percentage: 50 },
    { key: 'test', rollout_percentage: 50 },
  ])
  const [holdout, setHoldout] = useState<string | null>(null)
  const [method, setMethod] = useState<'bayesian' | 'frequentist'>('bayesian')
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const eligible = useQuery({
    queryKey: ['eligible-flags', projectId],
    queryFn: ({ signal }) =>
      get<{ results: FlagBrief[] }>(`/api/projects/${projectId}/experiments/eligible_feature_flags/?limit=100`, signal),
  })
  const holdouts = useQuery({
    queryKey: ['holdouts', projectId],
    queryFn: ({ signal }) =>
      get<Page<{ id: number; name: string }>>(`/api/projects/${projectId}/experiment_holdouts/`, signal),
  })
  const sum = variants.reduce((s, v) => s + (Number(v.rollout_percentage) || 0), 0)

  const create = async () => {
    setError(null)
    const key = source === 'new' ? flagKey.trim() : existingKey
    if (!name.trim()) return setError(new Error('Please give the experiment a name.'))
    if (!key) return setError(new Error(source === 'new' ? 'Please set a feature flag key.' : 'Choose a feature flag.'))
    if (source === 'new' && sum !== 100)
      return setError(new Error(`Variant rollout percentages must sum to 100 (they sum to ${sum}).`))
    setBusy(true)
    try {
      const created = await api<ExperimentT>('POST', `/api/projects/${projectId}/experiments/`, {
        name: name.trim(),
        description,
        feature_flag_key: key,
        parameters: source === 'new' ? { feature_flag_variants: variants } : {},
        holdout_id: holdout ? Number(holdout) : undefined,
        stats_config: { method },
        metrics: [],
      })
      notify('Experiment created')
      navigate(`/project/${projectId}/experiments/${created.id}`)
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }

  return (
    <Stack gap="md" maw={820}>
      <Breadcrumbs>
        <Anchor component={Link} to={`/project/${projectId}/experiments`} size="sm">
          Experiments
        </Anchor>
        <Text size="sm">New</Text>
      </Breadcrumbs>
      <Title order={1} size="h2">
        New experiment
      </Title>
      <form
        onSubmit={(e) => {
          e.preventDefault()
          void create()
        }}
      >
        <Stack gap="md">
          <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} autoFocus />
          <Textarea label="Hypothesis" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
          <Stack gap="xs">
            <Text fw={600} size="sm" id="flag-source">
              Feature flag
            </Text>
            <SegmentedControl
              aria-labelledby="flag-source"
              w="fit-content"
              data={[
                { value: 'new', label: 'Create a new flag' },
                { value: 'existing', label: 'Use an existing flag' },
              ]}
              value={source}
              onChange={(v) => setSource(v as 'new' | 'existing')}
            />
            {source === 'new' ? (
              <Card withBorder>
                <Stack gap="sm">
                  <TextInput
                    label="Feature flag key"
                    description="Your code checks this key to pick the variant."
                    value={flagKey}
                    onChange={(e) => setFlagKey(e.currentTarget.value)}
                  />
                  {variants.map((v, i) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: positional rows
                    <Group key={i} gap="xs" align="flex-end">
                      <TextInput
                        label={`Variant ${i + 1} key`}
                        value={v.key}
                        disabled={i === 0}
                        onChange={(e) => {
                          const key = e.currentTarget.value
                          setVariants(variants.map((x, j) => (j === i ? { ...x, key } : x)))
                        }}
                        w={200}
                      />
                      <NumberInput
                        label={`Variant ${i + 1} split`}
                        suffix="%"
                        min={0}
                        max={100}
                        value={v.rollout_percentage}
                        onChange={(p) =>
                          setVariants(
                            variants.map((x, j) => (j === i ? { ...x, rollout_percentage: Number(p) || 0 } : x)),
                          )
                        }
                        w={130}
                      />
                      {i >= 2 ? (
                        <Button
                          variant="subtle"
                          color="red"
                          onClick={() => setVariants(variants.filter((_, j) => j !== i))}
                          aria-label={`Remove variant ${i + 1}`}
                        >
                          Remove
                        </Button>
                      ) : null}
                    </Group>
                  ))}
                  <Group gap="sm">
                    <Button
                      size="xs"
                      variant="light"
                      onClick={() =>
                        setVariants([...variants, { key: `test-${variants.length}`, rollout_percentage: 0 }])
                      }
                    >
                      Add variant
                    </Button>
                    <Text size="sm" c={sum === 100 ? 'dimmed' : 'red'}>
                      Total: {sum}%
                    </Text>
                  </Group>
                </Stack>
              </Card>
            ) : (
              <Select
                label="Existing feature flag"
                description="Multivariate flags with control as their first variant."
                placeholder={eligible.isPending ? 'Loading…' : 'Choose a flag'}
                searchable
                data={(eligible.data?.results ?? []).map((f) => ({
                  value: f.key,
                  label: `${f.key} (${(f.filters.multivariate?.variants ?? []).map((v) => v.key).join(', ')})`,
                }))}
                value={existingKey}
                onChange={setExistingKey}
                error={eligible.error ? errorText(eligible.error) : undefined}
                nothingFoundMessage="No eligible flags"
              />
            )}
          </Stack>
          <Select
            label="Holdout group"
            placeholder="No holdout"
            clearable
            data={(holdouts.data?.results ?? []).map((h) => ({ value: String(h.id), label: h.name }))}
            value={holdout}
            onChange={setHoldout}
            w={320}
          />
          <Select
            label="Statistics"
            data={[
              { value: 'bayesian', label: 'Bayesian' },
              { value: 'frequentist', label: 'Frequentist' },
            ]}
            value={method}
            allowDeselect={false}
            onChange={(v) => setMethod((v ?? 'bayesian') as 'bayesian' | 'frequentist')}
            w={200}
          />
          {error ? (
            <Alert color="red" role="alert" title="Could not create the experiment">
              {errorText(error)}
            </Alert>
          ) : null}
          <Group>
            <Button type="submit" loading={busy}>
              Save as draft
            </Button>
            <Button variant="default" component={Link} to={`/project/${projectId}/experiments`}>
              Cancel
            </Button>
          </Group>
        </Stack>
      </form>
    </Stack>
  )
}

function Detail({ projectId, experiment }: { projectId: number; experiment: ExperimentT }) {
  const client = useQueryClient()
  const status = statusOf(experiment)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const [editing, setEditing] = useState<{ index: number | null; metric: Metric } | null>(null)
  const [ship, setShip] = useState<string | null>(null)
  const [endOpen, setEndOpen] = useState(false)
  const [conclusion, setConclusion] = useState<string | null>(null)
  const [comment, setComment] = useState('')
  const base = `/api/projects/${projectId}/experiments/${experiment.id}`
  const variants =
    experiment.feature_flag?.filters.multivariate?.variants ?? experiment.parameters?.feature_flag_variants ?? []
  const metrics = experiment.metrics ?? []

  const run = async (label: string, call: () => Promise<unknown>) => {
    setError(null)
    setBusy(label)
    try {
      const updated = (await call()) as ExperimentT
      client.setQueryData(['experiment', projectId, experiment.id], updated)
      await client.invalidateQueries({ queryKey: ['experiments', projectId] })
      return true
    } catch (e) {
      setError(e)
      return false
    } finally {
      setBusy(null)
    }
  }
  const lifecycle = (action: string, body: unknown = {}) => run(action, () => api('POST', `${base}/${action}/`, body))
  const patch = (label: string, body: unknown) => run(label, () => api('PATCH', `${base}/`, body))

  return (
    <Stack gap="md">
      <Breadcrumbs>
        <Anchor component={Link} to={`/project/${projectId}/experiments`} size="sm">
          Experiments
        </Anchor>
        <Text size="sm">{experiment.name}</Text>
      </Breadcrumbs>
      <Group justify="space-between" align="flex-start">
        <Stack gap={4}>
          <Group gap="sm">
            <Title order={1} size="h2">
              {experiment.name}
            </Title>
            <Badge color={STATUS_COLORS[status]} variant="light" data-testid="experiment-status">
              {status}
            </Badge>
          </Group>
          <Text size="sm" c="dimmed">
            Feature flag{' '}
            {experiment.feature_flag ? (
              <Anchor
                component={Link}
                to={`/project/${projectId}/feature_flags/${experiment.feature_flag.id}`}
                size="sm"
              >
                {experiment.feature_flag_key}
              </Anchor>
            ) : (
              experiment.feature_flag_key
            )}
            {experiment.start_date ? ` · started ${new Date(experiment.start_date).toLocaleString()}` : ''}
            {experiment.end_date ? ` · ended ${new Date(experiment.end_date).toLocaleString()}` : ''}
            {experiment.holdout ? ` · holdout ${experiment.holdout.name}` : ''}
            {experiment.conclusion ? ` · concluded: ${experiment.conclusion}` : ''}
          </Text>
          {experiment.description ? <Text size="sm">{experiment.description}</Text> : null}
        </Stack>
        <Group gap="xs">
          {status === 'draft' ? (
            <Button loading={busy === 'launch'} onClick={() => void lifecycle('launch')}>
              Launch
            </Button>
          ) : null}
          {status === 'running' ? (
            <Button variant="light" color="orange" loading={busy === 'pause'} onClick={() => void lifecycle('pause')}>
              Pause
            </Button>
          ) : null}
          {status === 'paused' ? (
            <Button variant="light" loading={busy === 'resume'} onClick={() => void lifecycle('resume')}>
              Resume
            </Button>
          ) : null}
          {status === 'running' || status === 'paused' ? (
            <Button variant="light" color="red" onClick={() => setEndOpen(true)}>
              End experiment
            </Button>
          ) : null}
          {status !== 'draft' ? (
            <Button variant="light" color="green" onClick={() => setShip(variants[1]?.key ?? variants[0]?.key ?? null)}>
              Ship a variant
            </Button>
          ) : null}
          {status !== 'draft' ? (
            <Button variant="subtle" color="gray" loading={busy === 'reset'} onClick={() => void lifecycle('reset')}>
              Reset to draft
            </Button>
          ) : null}
        </Group>
      </Group>
      {error ? (
        <Alert color="red" role="alert" title="The server refused" data-testid="experiment-error">
          {errorText(error)}
        </Alert>
      ) : null}

      <Card withBorder padding="md" component="section" aria-label="Variants and exposure">
        <Stack gap="sm">
          <Title order={2} size="h4">
            Variants and exposure
          </Title>
          <Group gap="xs">
            {variants.map((v) => (
              <Badge key={v.key} variant="outline" size="lg">
                {v.key}: {v.rollout_percentage}%
              </Badge>
            ))}
          </Group>
          <ExposureSettings
            experiment={experiment}
            busy={busy === 'exposure'}
            onSave={(body) => patch('exposure', body)}
          />
        </Stack>
      </Card>

      <Stack gap="sm" component="section" aria-label="Metrics">
        <Group justify="space-between">
          <Title order={2} size="h4">
            Primary metrics
          </Title>
          <Group gap="xs">
            <SharedMetricPicker
              projectId={projectId}
              onPick={(m) =>
                patch('metrics', { metrics: [...metrics, { ...m, uuid: undefined, fingerprint: undefined }] })
              }
            />
            <Button variant="light" onClick={() => setEditing({ index: null, metric: emptyMetric() })}>
              Add metric
            </Button>
          </Group>
        </Group>
        {metrics.length === 0 ? (
          <Text size="sm" c="dimmed">
            No metrics yet: add the funnel, mean or ratio this experiment should move.
          </Text>
        ) : null}
        {metrics.map((m, i) => (
          <Stack key={m.uuid ?? i} gap={4}>
            <Group gap="xs">
              <Button size="xs" variant="subtle" onClick={() => setEditing({ index: i, metric: m })}>
                Edit metric {i + 1}
              </Button>
              <Button
                size="xs"
                variant="subtle"
                color="red"
                onClick={() => void patch('metrics', { metrics: metrics.filter((_, j) => j !== i) })}
              >
                Remove metric {i + 1}
              </Button>
            </Group>
            <MetricResults projectId={projectId} experiment={experiment} metric={m} index={i} />
          </Stack>
        ))}
      </Stack>

      <Modal
        opened={editing !== null}
        onClose={() => setEditing(null)}
        title={editing?.index === null ? 'Add metric' : 'Edit metric'}
        size="xl"
      >
        {editing ? (
          <form
            onSubmit={async (e) => {
              e.preventDefault()
              const problem = metricProblem(editing.metric)
              if (problem) return setError(new Error(problem))
              const next =
                editing.index === null
                  ? [...metrics, editing.metric]
                  : metrics.map((m, j) => (j === editing.index ? editing.metric : m))
              if (await patch('metrics', { metrics: next })) setEditing(null)
            }}
          >
            <Stack gap="sm">
              <MetricEditor
                projectId={projectId}
                metric={editing.metric}
                onChange={(metric) => setEditing({ ...editing, metric })}
              />
              {metricProblem(editing.metric) ? (
                <Text size="sm" c="dimmed">
                  {metricProblem(editing.metric)}
                </Text>
              ) : null}
              {error ? (
                <Text c="red" size="sm" role="alert">
                  {errorText(error)}
                </Text>
              ) : null}
              <Group justify="flex-end">
                <Button type="submit" loading={busy === 'metrics'}>
                  Save metric
                </Button>
              </Group>
            </Stack>
          </form>
        ) : null}
      </Modal>

      <Modal opened={ship !== null} onClose={() => setShip(null)} title="Ship a variant">
        <Stack gap="sm">
          <Text size="sm">
            Everyone gets the chosen variant from now on (the flag rolls out to 100%), and the experiment ends.
          </Text>
          <Select
            label="Variant to ship"
            data={variants.map((v) => v.key)}
            value={ship}
            allowDeselect={false}
            onChange={setShip}
          />
          <Group justify="flex-end">
            <Button
              color="green"
              loading={busy === 'ship_variant'}
              onClick={async () => {
                if (ship && (await lifecycle('ship_variant', { variant_key: ship }))) setShip(null)
              }}
            >
              Ship {ship}
            </Button>
          </Group>
        </Stack>
      </Modal>

      <Modal opened={endOpen} onClose={() => setEndOpen(false)} title="End experiment">
        <Stack gap="sm">
          <Select
            label="Conclusion"
            placeholder="Optional"
            clearable
            data={[
              { value: 'won', label: 'Won' },
              { value: 'lost', label: 'Lost' },
              { value: 'inconclusive', label: 'Inconclusive' },
              { value: 'stopped_early', label: 'Stopped early' },
              { value: 'invalid', label: 'Invalid' },
            ]}
            value={conclusion}
            onChange={setConclusion}
          />
          <Textarea label="Comment" value={comment} onChange={(e) => setComment(e.currentTarget.value)} />
          <Group justify="flex-end">
            <Button
              color="red"
              loading={busy === 'end'}
              onClick={async () => {
                if (await lifecycle('end', { conclusion, conclusion_comment: comment || null })) setEndOpen(false)
              }}
            >
              End experiment
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  )
}

function ExposureSettings({
  experiment,
  busy,
  onSave,
}: {
  experiment: ExperimentT
  busy: boolean
  onSave: (body: unknown) => Promise<unknown>
}) {
  const projectId = useProjectId()
  const events = useEventNames(projectId)
  const criteria = experiment.exposure_criteria ?? {}
  const [testAccounts, setTestAccounts] = useState(Boolean(criteria.filterTestAccounts))
  const [handling, setHandling] = useState(criteria.multiple_variant_handling ?? 'exclude')
  const [event, setEvent] = useState<string | null>(criteria.exposure_config?.event ?? null)
  return (
    <Stack gap="xs" data-testid="exposure-settings">
      <Group gap="md" align="flex-end">
        <Select
          label="Exposure event"
          description="Default: $feature_flag_called for this flag"
          placeholder="$feature_flag_called"
          clearable
          searchable
          data={events.data ?? []}
          value={event}
          onChange={setEvent}
          w={260}
        />
        <Select
          label="Users who saw several variants"
          data={[
            { value: 'exclude', label: 'Exclude them' },
            { value: 'first_seen', label: 'Use the first variant seen' },
          ]}
          value={handling}
          allowDeselect={false}
          onChange={(v) => setHandling((v ?? 'exclude') as 'exclude' | 'first_seen')}
          w={260}
        />
      </Group>
      <Checkbox
        label="Filter out internal and test users"
        checked={testAccounts}
        onChange={(e) => setTestAccounts(e.currentTarget.checked)}
      />
      <Group>
        <Button
          size="xs"
          variant="light"
          loading={busy}
          onClick={() =>
            void onSave({
              exposure_criteria: {
                filterTestAccounts: testAccounts,
                multiple_variant_handling: handling,
                ...(event ? { exposure_config: { kind: 'ExperimentEventExposureConfig', event, properties: [] } } : {}),
              },
            })
          }
        >
          Save exposure settings
        </Button>
      </Group>
    </Stack>
  )
}

function SharedMetricPicker({ projectId, onPick }: { projectId: number; onPick: (m: Metric) => void }) {
  const saved = useQuery({
    queryKey: ['saved-metrics', projectId],
    queryFn: ({ signal }) =>
      get<Page<{ id: number; name: string; query: Metric }>>(
        `/api/projects/${projectId}/experiment_saved_metrics/`,
        signal,
      ),
  })
  const list = saved.data?.results ?? []
  if (list.length === 0) return null
  return (
    <Select
      aria-label="Add a shared metric"
      placeholder="Add a shared metric"
      data={list.map((m) => ({ value: String(m.id), label: m.name || describeMetric(m.query) }))}
      value={null}
      onChange={(v) => {
        const m = list.find((x) => String(x.id) === v)
        if (m) onPick({ ...m.query, name: m.query.name || m.name })
      }}
      w={240}
    />
  )
}
