// The results of one experiment metric (an ExperimentQuery): per variant its exposures, value, and the chance to
// win (Bayesian) or p-value (frequentist) with the credible/confidence interval of the change drawn as a chart; the
// daily timeseries of the metric over the experiment's life; and the running-time calculator fed by the baseline.
import { Alert, Badge, Button, Card, Group, NumberInput, Stack, Table, Text, Title } from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useMemo, useState } from 'react'
import { api, get } from '../../api'
import { Chart } from '../../components/charts/Chart'
import { Empty, ErrorState, errorText, Loading } from '../../components/States'
import { describeMetric, type Metric } from './MetricEditor'
import { type Experiment, type ExperimentResult, pct, type VariantStats, variantValue } from './model'

const FAILURES: Record<string, string> = {
  'not-enough-exposures': 'Not enough exposures (at least 50 are needed)',
  'not-enough-metric-data': 'Not enough conversions (at least 5 are needed)',
  'baseline-mean-is-zero': 'The baseline is zero',
}

function valueText(metric: Metric, v: VariantStats): string {
  const value = variantValue(metric, v)
  if (value === null) return '—'
  return metric.metric_type === 'funnel' ? pct(value) : value.toFixed(2)
}

function IntervalChart({ rows, frequentist, label }: { rows: VariantStats[]; frequentist: boolean; label: string }) {
  const option = useMemo(() => {
    const shown = rows.filter((r) => (frequentist ? r.confidence_interval : r.credible_interval))
    const names = shown.map((r) => r.key)
    return {
      grid: { left: 90, right: 24, top: 16, bottom: 36 },
      tooltip: { trigger: 'item' },
      xAxis: { type: 'value', axisLabel: { formatter: (v: number) => `${Math.round(v * 100)}%` } },
      yAxis: { type: 'category', data: names },
      series: [
        ...shown.map((r) => {
          const [lo, hi] = (frequentist ? r.confidence_interval : r.credible_interval) as [number, number]
          return {
            type: 'line',
            name: r.key,
            data: [
              [lo, r.key],
              [hi, r.key],
            ],
            lineStyle: { width: 10, color: hi < 0 ? '#e03131' : lo > 0 ? '#2f9e44' : '#868e96' },
            symbol: 'none',
            markLine:
              r === shown[0]
                ? { silent: true, symbol: 'none', data: [{ xAxis: 0 }], lineStyle: { color: '#343a40', type: 'solid' } }
                : undefined,
          }
        }),
      ],
    }
  }, [rows, frequentist])
  return <Chart option={option} height={60 + rows.length * 48} label={label} testId="interval-chart" />
}

function Timeseries({ projectId, experiment, metric }: { projectId: number; experiment: Experiment; metric: Metric }) {
  const client = useQueryClient()
  const key = ['experiment-timeseries', projectId, experiment.id, metric.uuid, metric.fingerprint]
  const series = useQuery({
    queryKey: key,
    queryFn: ({ signal }) =>
      get<{ status: string; timeseries: Record<string, ExperimentResult | null>; recalculation_status: string | null }>(
        `/api/projects/${projectId}/experiments/${experiment.id}/timeseries_results/?metric_uuid=${encodeURIComponent(metric.uuid ?? '')}&fingerprint=${encodeURIComponent(metric.fingerprint ?? '')}`,
        signal,
      ),
    enabled: Boolean(metric.uuid && metric.fingerprint && experiment.start_date),
    refetchInterval: (q) =>
      q.state.data?.recalculation_status === 'pending' || q.state.data?.recalculation_status === 'in_progress'
        ? 3000
        : false,
  })
  const recalc = useMutation({
    mutationFn: () =>
      api('POST', `/api/projects/${projectId}/experiments/${experiment.id}/recalculate_timeseries/`, {
        metric,
        fingerprint: metric.fingerprint,
      }),
    onSuccess: () => client.invalidateQueries({ queryKey: key }),
  })
  const option = useMemo(() => {
    const days = Object.keys(series.data?.timeseries ?? {}).sort()
    const variantKeys = new Set<string>()
    for (const d of days) {
      const r = series.data?.timeseries[d]
      if (r) for (const v of [r.baseline, ...r.variant_results]) variantKeys.add(v.key)
    }
    return {
      tooltip: { trigger: 'axis' },
      legend: { bottom: 0 },
      grid: { left: 48, right: 16, top: 16, bottom: 48 },
      xAxis: { type: 'category', data: days },
      yAxis: { type: 'value' },
      series: [...variantKeys].map((k) => ({
        type: 'line',
        name: k,
        connectNulls: true,
        data: days.map((d) => {
          const r = series.data?.timeseries[d]
          const v = r ? [r.baseline, ...r.variant_results].find((x) => x.key === k) : undefined
          return v ? variantValue(metric, v) : null
        }),
      })),
    }
  }, [series.data, metric])
  if (!experiment.start_date) return null
  const hasData = Object.values(series.data?.timeseries ?? {}).some(Boolean)
  return (
    <Stack gap="xs" data-testid="timeseries">
      <Group justify="space-between">
        <Text fw={600} size="sm">
          Over the experiment's life
        </Text>
        <Button size="xs" variant="light" loading={recalc.isPending} onClick={() => recalc.mutate()}>
          Recalculate daily results
        </Button>
      </Group>
      {recalc.error ? (
        <Text c="red" size="sm" role="alert">
          {errorText(recalc.error)}
        </Text>
      ) : null}
      {series.isPending ? (
        <Loading />
      ) : series.error ? (
        <ErrorState error={series.error} retry={() => series.refetch()} />
      ) : hasData ? (
        <Chart option={option} height={240} label={`Daily value of ${describeMetric(metric)} per variant`} />
      ) : (
        <Text size="sm" c="dimmed">
          No daily results yet ({series.data.recalculation_status ?? series.data.status}).
        </Text>
      )}
    </Stack>
  )
}

function RunningTime({
  projectId,
  metric,
  baseline,
  variants,
}: {
  projectId: number
  metric: Metric
  baseline: VariantStats
  variants: number
}) {
  const [mde, setMde] = useState<number>(20)
  const [perDay, setPerDay] = useState<number>(100)
  const calc = useQuery({
    queryKey: ['running-time', projectId, metric, baseline, variants, mde, perDay],
    queryFn: ({ signal }) =>
      api<{
        baseline_value: number | null
        recommended_sample_size: number | null
        recommended_running_time_days: number | null
      }>(
        'POST',
        `/api/projects/${projectId}/experiments/calculate_running_time/`,
        { metric, baseline, minimum_detectable_effect: mde, number_of_variants: variants, exposures_per_day: perDay },
        { signal },
      ),
    enabled: mde > 0 && baseline.number_of_samples > 0,
  })
  return (
    <Card withBorder padding="sm" data-testid="running-time">
      <Stack gap="xs">
        <Text fw={600} size="sm">
          Running time calculator
        </Text>
        <Group gap="sm" align="flex-end">
          <NumberInput
            label="Minimum detectable effect"
            suffix="%"
            min={1}
            max={1000}
            value={mde}
            onChange={(v) => setMde(Number(v) || 0)}
            w={200}
          />
          <NumberInput
            label="Exposures per day"
            min={1}
            value={perDay}
            onChange={(v) => setPerDay(Number(v) || 0)}
            w={170}
          />
        </Group>
        {calc.error ? (
          <Text c="red" size="sm" role="alert">
            {errorText(calc.error)}
          </Text>
        ) : calc.data ? (
          <Text size="sm" data-testid="running-time-result">
            Recommended sample size: <b>{calc.data.recommended_sample_size ?? '—'}</b> users · about{' '}
            <b>{calc.data.recommended_running_time_days ?? '—'}</b> days
          </Text>
        ) : null}
      </Stack>
    </Card>
  )
}

export function MetricResults({
  projectId,
  experiment,
  metric,
  index,
}: {
  projectId: number
  experiment: Experiment
  metric: Metric
  index: number
}) {
  const frequentist = experiment.stats_config?.method === 'frequentist'
  // A result younger than the server's staleness threshold comes from its cache; Refresh calculates it again.
  const [refreshes, setRefreshes] = useState(0)
  const result = useQuery({
    queryKey: [
      'experiment-result',
      projectId,
      experiment.id,
      metric,
      experiment.stats_config,
      experiment.exposure_criteria,
      refreshes,
    ],
    queryFn: ({ signal }) =>
      api<ExperimentResult & { last_refresh?: string | null }>(
        'POST',
        `/api/projects/${projectId}/query/`,
        {
          query: { kind: 'ExperimentQuery', experiment_id: experiment.id, metric },
          refresh: refreshes > 0 ? 'force_blocking' : 'blocking',
        },
        { signal },
      ),
    enabled: Boolean(experiment.start_date),
    placeholderData: (previous) => previous,
  })
  const title = describeMetric(metric)
  return (
    <Card withBorder padding="md" data-testid="metric-results" aria-label={`Results of ${title}`} component="section">
      <Stack gap="sm">
        <Group justify="space-between">
          <Title order={3} size="h5">
            {index + 1}. {title}
          </Title>
          <Group gap="xs">
            {result.data?.last_refresh ? (
              <Text size="xs" c="dimmed" data-testid="last-refresh">
                Calculated {new Date(result.data.last_refresh).toLocaleTimeString()}
              </Text>
            ) : null}
            {experiment.start_date ? (
              <Button
                size="compact-xs"
                variant="subtle"
                loading={result.isFetching}
                onClick={() => setRefreshes((n) => n + 1)}
                aria-label={`Refresh results of ${title}`}
              >
                Refresh
              </Button>
            ) : null}
            <Badge variant="light">{frequentist ? 'Frequentist' : 'Bayesian'}</Badge>
          </Group>
        </Group>
        {!experiment.start_date ? (
          <Text size="sm" c="dimmed">
            Results appear once the experiment is launched.
          </Text>
        ) : result.isPending ? (
          <Loading label="Calculating results…" />
        ) : result.error ? (
          <ErrorState error={result.error} retry={() => result.refetch()} />
        ) : result.data.baseline.number_of_samples === 0 &&
          result.data.variant_results.every((v) => v.number_of_samples === 0) ? (
          <Empty title="No exposures yet">
            Users are counted once their SDK sends <code>$feature_flag_called</code> for this flag.
          </Empty>
        ) : (
          <>
            <Table data-testid="results-table">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Variant</Table.Th>
                  <Table.Th>Exposures</Table.Th>
                  <Table.Th>{metric.metric_type === 'funnel' ? 'Conversions' : 'Total'}</Table.Th>
                  <Table.Th>{metric.metric_type === 'funnel' ? 'Conversion rate' : 'Value'}</Table.Th>
                  <Table.Th>{frequentist ? 'p-value' : 'Chance to win'}</Table.Th>
                  <Table.Th>{frequentist ? 'Confidence interval' : 'Credible interval'}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {[result.data.baseline, ...result.data.variant_results].map((v, i) => {
                  const interval = frequentist ? v.confidence_interval : v.credible_interval
                  const failures = v.validation_failures ?? []
                  return (
                    <Table.Tr key={v.key} data-testid={`result-${v.key}`}>
                      <Table.Td>
                        <Text size="sm" fw={600}>
                          {v.key}
                          {i === 0 ? ' (baseline)' : ''}
                        </Text>
                      </Table.Td>
                      <Table.Td data-testid="exposures">{v.number_of_samples}</Table.Td>
                      <Table.Td data-testid="conversions">{Number(v.sum.toFixed(4))}</Table.Td>
                      <Table.Td data-testid="value">{valueText(metric, v)}</Table.Td>
                      <Table.Td data-testid="significance">
                        {i === 0
                          ? '—'
                          : frequentist
                            ? v.p_value === null || v.p_value === undefined
                              ? '—'
                              : v.p_value.toFixed(4)
                            : pct(v.chance_to_win)}
                        {v.significant ? (
                          <Badge ml="xs" size="xs" color="green" variant="light">
                            significant
                          </Badge>
                        ) : null}
                      </Table.Td>
                      <Table.Td data-testid="interval">
                        {interval ? `${pct(interval[0])} to ${pct(interval[1])}` : '—'}
                        {failures.map((f) => (
                          <Text key={f} size="xs" c="orange">
                            {FAILURES[f] ?? f}
                          </Text>
                        ))}
                      </Table.Td>
                    </Table.Tr>
                  )
                })}
              </Table.Tbody>
            </Table>
            {result.data.variant_results.some((v) => (frequentist ? v.confidence_interval : v.credible_interval)) ? (
              <IntervalChart
                rows={result.data.variant_results}
                frequentist={frequentist}
                label={`${frequentist ? 'Confidence' : 'Credible'} interval of each variant's change against ${result.data.baseline.key}`}
              />
            ) : (
              <Alert color="gray" variant="light">
                Not enough data yet for a {frequentist ? 'confidence' : 'credible'} interval.
              </Alert>
            )}
            <Timeseries projectId={projectId} experiment={experiment} metric={metric} />
            <RunningTime
              projectId={projectId}
              metric={metric}
              baseline={result.data.baseline}
              variants={1 + result.data.variant_results.length}
            />
          </>
        )}
      </Stack>
    </Card>
  )
}
