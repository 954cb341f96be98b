// An experiment metric as PostHog's ExperimentMetric: a funnel (steps after the exposure), a mean (an event's
// count or a property's sum/average per user) or a ratio (two such sources), with a name and a goal.
import { ActionIcon, Button, Group, SegmentedControl, Select, Stack, Text, TextInput } from '@mantine/core'
import { useEventNames, usePropertyNames } from '../../definitions'

export interface EventSource {
  kind: 'EventsNode'
  event: string
  name?: string
  math?: string
  math_property?: string
}

export interface Metric {
  kind: 'ExperimentMetric'
  metric_type: 'funnel' | 'mean' | 'ratio'
  uuid?: string
  fingerprint?: string
  name?: string
  goal?: 'increase' | 'decrease'
  series?: EventSource[]
  source?: EventSource
  numerator?: EventSource
  denominator?: EventSource
  [extra: string]: unknown
}

const MATH = [
  { value: 'total', label: 'Count of events' },
  { value: 'sum', label: 'Sum of property' },
  { value: 'avg', label: 'Average of property' },
  { value: 'min', label: 'Minimum of property' },
  { value: 'max', label: 'Maximum of property' },
  { value: 'unique_session', label: 'Unique sessions' },
  { value: 'dau', label: 'Unique users' },
]
const NEEDS_PROPERTY = new Set(['sum', 'avg', 'min', 'max'])

export const emptyMetric = (type: Metric['metric_type'] = 'funnel'): Metric =>
  type === 'funnel'
    ? { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: '' }], goal: 'increase' }
    : type === 'mean'
      ? { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: '', math: 'total' } }
      : {
          kind: 'ExperimentMetric',
          metric_type: 'ratio',
          numerator: { kind: 'EventsNode', event: '', math: 'total' },
          denominator: { kind: 'EventsNode', event: '', math: 'total' },
        }

/** What is missing before the metric can be saved, or null. */
export function metricProblem(m: Metric): string | null {
  const sources =
    m.metric_type === 'funnel' ? (m.series ?? []) : m.metric_type === 'mean' ? [m.source] : [m.numerator, m.denominator]
  if (sources.length === 0) return 'Add at least one step.'
  for (const s of sources) {
    if (!s?.event) return 'Choose an event for every step and source.'
    if (s.math && NEEDS_PROPERTY.has(s.math) && !s.math_property) return 'Choose the property to aggregate.'
  }
  return null
}

/** A one-line description of the metric. */
export function describeMetric(m: Metric): string {
  if (m.name) return m.name
  const src = (s?: EventSource) =>
    s ? `${MATH.find((x) => x.value === (s.math ?? 'total'))?.label ?? s.math} · ${s.event}` : '?'
  if (m.metric_type === 'funnel') return `Funnel: ${(m.series ?? []).map((s) => s.event).join(' → ')}`
  if (m.metric_type === 'mean') return `Mean: ${src(m.source)}`
  return `Ratio: ${src(m.numerator)} / ${src(m.denominator)}`
}

function SourceEditor({
  projectId,
  label,
  source,
  onChange,
}: {
  projectId: number
  label: string
  source: EventSource
  onChange: (s: EventSource) => void
}) {
  const events = useEventNames(projectId)
  const props = usePropertyNames(projectId, 'event')
  const math = source.math ?? 'total'
  return (
    <Group gap="xs" align="flex-end" wrap="wrap">
      <Select
        label={`${label} event`}
        placeholder="Choose an event"
        searchable
        data={events.data ?? []}
        value={source.event || null}
        onChange={(event) => onChange({ ...source, event: event ?? '', name: event ?? '' })}
        w={240}
      />
      <Select
        label={`${label} aggregation`}
        data={MATH}
        value={math}
        allowDeselect={false}
        onChange={(v) => onChange({ ...source, math: v ?? 'total' })}
        w={210}
      />
      {NEEDS_PROPERTY.has(math) ? (
        <Select
          label={`${label} property`}
          searchable
          data={props.data ?? []}
          value={source.math_property ?? null}
          onChange={(v) => onChange({ ...source, math_property: v ?? undefined })}
          w={200}
        />
      ) : null}
    </Group>
  )
}

export function MetricEditor({
  projectId,
  metric,
  onChange,
}: {
  projectId: number
  metric: Metric
  onChange: (m: Metric) => void
}) {
  const events = useEventNames(projectId)
  const series = metric.series ?? []
  return (
    <Stack gap="sm" data-testid="metric-editor">
      <SegmentedControl
        aria-label="Metric type"
        w="fit-content"
        data={[
          { value: 'funnel', label: 'Funnel' },
          { value: 'mean', label: 'Mean' },
          { value: 'ratio', label: 'Ratio' },
        ]}
        value={metric.metric_type}
        onChange={(v) =>
          onChange({
            ...emptyMetric(v as Metric['metric_type']),
            name: metric.name,
            goal: metric.goal,
            uuid: metric.uuid,
          })
        }
      />
      <TextInput
        label="Metric name"
        placeholder="Optional"
        value={metric.name ?? ''}
        onChange={(e) => onChange({ ...metric, name: e.currentTarget.value })}
      />
      {metric.metric_type === 'funnel' ? (
        <Stack gap="xs">
          <Text size="sm" c="dimmed">
            The exposure is the funnel's first step; a user converts by doing every step after it, in order.
          </Text>
          {series.map((step, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: steps are positional
            <Group key={i} gap="xs" align="flex-end">
              <Select
                label={`Step ${i + 1}`}
                placeholder="Choose an event"
                searchable
                data={events.data ?? []}
                value={step.event || null}
                onChange={(event) =>
                  onChange({
                    ...metric,
                    series: series.map((s, j) =>
                      j === i ? { kind: 'EventsNode', event: event ?? '', name: event ?? '' } : s,
                    ),
                  })
                }
                w={280}
              />
              <ActionIcon
                variant="subtle"
                color="red"
                size="lg"
                disabled={series.length <= 1}
                aria-label={`Remove step ${i + 1}`}
                onClick={() => onChange({ ...metric, series: series.filter((_, j) => j !== i) })}
              >
                ×
              </ActionIcon>
            </Group>
          ))}
          <Group>
            <Button
              size="xs"
              variant="light"
              onClick={() => onChange({ ...metric, series: [...series, { kind: 'EventsNode', event: '' }] })}
            >
              Add step
            </Button>
          </Group>
        </Stack>
      ) : metric.metric_type === 'mean' ? (
        <SourceEditor
          projectId={projectId}
          label="Source"
          source={metric.source ?? { kind: 'EventsNode', event: '' }}
          onChange={(source) => onChange({ ...metric, source })}
        />
      ) : (
        <Stack gap="xs">
          <SourceEditor
            projectId={projectId}
            label="Numerator"
            source={metric.numerator ?? { kind: 'EventsNode', event: '' }}
            onChange={(numerator) => onChange({ ...metric, numerator })}
          />
          <SourceEditor
            projectId={projectId}
            label="Denominator"
            source={metric.denominator ?? { kind: 'EventsNode', event: '' }}
            onChange={(denominator) => onChange({ ...metric, denominator })}
          />
        </Stack>
      )}
      <Select
        label="Goal"
        data={[
          { value: 'increase', label: 'Increase' },
          { value: 'decrease', label: 'Decrease' },
        ]}
        value={metric.goal ?? 'increase'}
        allowDeselect={false}
        onChange={(v) => onChange({ ...metric, goal: (v ?? 'increase') as Metric['goal'] })}
        w={160}
      />
    </Stack>
  )
}
