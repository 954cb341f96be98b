// The side views of a saved flag: evaluating it for one person through `/flags` exactly as an SDK does, its use
// over time (a trend of `$feature_flag_called`), and its activity log.
import { Badge, Button, Card, Code, Group, Pagination, Stack, Table, Text, TextInput, Title } from '@mantine/core'
import { useMutation, useQuery } from '@tanstack/react-query'
import { useMemo, useState } from 'react'
import { api, get, runQuery } from '../../api'
import { Chart } from '../../components/charts/Chart'
import { Empty, ErrorState, errorText, Loading } from '../../components/States'
import { useProject } from '../../session'

interface FlagDecision {
  key: string
  enabled: boolean
  variant?: string | null
  reason?: { code: string; description?: string; condition_index?: number | null }
  metadata?: { payload?: unknown; version?: number }
}

/** POST /flags?v=2 with the project API key, as posthog-js and the server SDKs call it. */
export function TestFlag({ flagKey }: { flagKey: string }) {
  const project = useProject()
  const [distinctId, setDistinctId] = useState('')
  const evaluate = useMutation({
    mutationFn: async (id: string) => {
      const body = await api<{ flags: Record<string, FlagDecision>; errorsWhileComputingFlags?: boolean }>(
        'POST',
        '/flags?v=2',
        { token: project.data?.api_token, distinct_id: id },
      )
      return { decision: body.flags?.[flagKey] ?? null, errors: body.errorsWhileComputingFlags ?? false, id }
    },
  })
  const result = evaluate.data
  return (
    <Card withBorder padding="md" data-testid="test-flag">
      <Stack gap="sm">
        <Title order={2} size="h4">
          Test this flag
        </Title>
        <Text size="sm" c="dimmed">
          Evaluates the saved flag for a distinct id through <Code>/flags</Code> with the project API key, exactly as an
          SDK does.
        </Text>
        <form
          onSubmit={(e) => {
            e.preventDefault()
            if (distinctId.trim()) evaluate.mutate(distinctId.trim())
          }}
        >
          <Group align="flex-end" gap="xs">
            <TextInput
              label="Distinct ID"
              placeholder="user-123"
              value={distinctId}
              onChange={(e) => setDistinctId(e.currentTarget.value)}
              style={{ flex: 1 }}
            />
            <Button type="submit" loading={evaluate.isPending} disabled={!project.data || !distinctId.trim()}>
              Evaluate
            </Button>
          </Group>
        </form>
        {evaluate.error ? (
          <Text c="red" size="sm" role="alert">
            {errorText(evaluate.error)}
          </Text>
        ) : null}
        {result ? (
          <Stack gap={4} data-testid="flag-decision" aria-live="polite">
            {result.decision ? (
              <>
                <Group gap="xs">
                  <Text size="sm">
                    For <b>{result.id}</b>:
                  </Text>
                  <Badge color={result.decision.enabled ? 'green.9' : 'gray.7'} data-testid="decision-value">
                    {result.decision.enabled
                      ? result.decision.variant
                        ? `variant ${result.decision.variant}`
                        : 'enabled'
                      : 'disabled'}
                  </Badge>
                </Group>
                {result.decision.reason ? (
                  <Text size="sm" data-testid="decision-reason">
                    Reason: {result.decision.reason.description ?? result.decision.reason.code}
                  </Text>
                ) : null}
                {result.decision.metadata?.payload !== undefined && result.decision.metadata?.payload !== null ? (
                  <Text size="sm">
                    Payload: <Code>{payloadText(result.decision.metadata.payload)}</Code>
                  </Text>
                ) : null}
              </>
            ) : (
              <Text size="sm">This flag was not evaluated (it is disabled or deleted).</Text>
            )}
            {result.errors ? (
              <Text size="sm" c="orange">
                The server reported errors while computing flags.
              </Text>
            ) : null}
          </Stack>
        ) : null}
      </Stack>
    </Card>
  )
}

interface TrendSeries {
  label: string
  breakdown_value?: unknown
  data: number[]
  labels?: string[]
  days?: string[]
  count?: number
}

/** `$feature_flag_called` for this key per day over 30 days, split by the value served. */
export function FlagUsage({ projectId, flagKey }: { projectId: number; flagKey: string }) {
  const usage = useQuery({
    queryKey: ['flag-usage', projectId, flagKey],
    queryFn: ({ signal }) =>
      runQuery<{ results: TrendSeries[] }>(
        projectId,
        {
          kind: 'TrendsQuery',
          series: [{ kind: 'EventsNode', event: '$feature_flag_called', name: '$feature_flag_called', math: 'total' }],
          properties: [{ key: '$feature_flag', value: flagKey, operator: 'exact', type: 'event' }],
          breakdownFilter: { breakdown: '$feature_flag_response', breakdown_type: 'event' },
          dateRange: { date_from: '-30d' },
          interval: 'day',
        },
        signal,
      ),
  })
  const series = usage.data?.results ?? []
  const option = useMemo(() => {
    const x = series[0]?.labels ?? series[0]?.days ?? []
    return {
      tooltip: { trigger: 'axis' },
      legend: { bottom: 0 },
      grid: { left: 40, right: 16, top: 16, bottom: 48 },
      xAxis: { type: 'category', data: x },
      yAxis: { type: 'value', minInterval: 1 },
      series: series.map((s) => ({
        type: 'line',
        name: String(s.breakdown_value ?? s.label),
        data: s.data,
        smooth: false,
      })),
    }
  }, [series])
  const total = series.reduce((sum, s) => sum + s.data.reduce((a, b) => a + b, 0), 0)
  return (
    <Stack gap="sm" data-testid="flag-usage">
      <Title order={2} size="h4">
        Usage
      </Title>
      {usage.isPending ? (
        <Loading label="Loading usage…" />
      ) : usage.error ? (
        <ErrorState error={usage.error} retry={() => usage.refetch()} />
      ) : total === 0 ? (
        <Empty title="No calls in the last 30 days">
          SDKs send a <Code>$feature_flag_called</Code> event when code checks this flag; none arrived yet.
        </Empty>
      ) : (
        <>
          <Text size="sm" data-testid="usage-total">
            {total} calls in the last 30 days
          </Text>
          <Chart option={option} label={`Calls of ${flagKey} per day, by value served`} testId="usage-chart" />
        </>
      )}
    </Stack>
  )
}

interface ActivityEntry {
  id: number
  user: { first_name: string; email: string } | null
  activity: string
  created_at: string
  detail: { name?: string; changes?: { field?: string; action?: string; before?: unknown; after?: unknown }[] | null }
}

const show = (v: unknown) => (v === undefined || v === null ? '—' : typeof v === 'string' ? v : JSON.stringify(v))

export function FlagActivity({ projectId, flagId }: { projectId: number; flagId: number }) {
  const [page, setPage] = useState(1)
  const activity = useQuery({
    queryKey: ['flag-activity', projectId, flagId, page],
    queryFn: ({ signal }) =>
      get<{ results: ActivityEntry[]; next: string | null; total_count?: number }>(
        `/api/projects/${projectId}/feature_flags/${flagId}/activity/?page=${page}`,
        signal,
      ),
  })
  return (
    <Stack gap="sm" data-testid="flag-activity">
      <Title order={2} size="h4">
        History
      </Title>
      {activity.isPending ? (
        <Loading label="Loading history…" />
      ) : activity.error ? (
        <ErrorState error={activity.error} retry={() => activity.refetch()} />
      ) : activity.data.results.length === 0 ? (
        <Empty title="No history yet" />
      ) : (
        <>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>When</Table.Th>
                <Table.Th>Who</Table.Th>
                <Table.Th>What</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {activity.data.results.map((entry) => (
                <Table.Tr key={entry.id} data-testid="activity-entry">
                  <Table.Td>
                    <Text size="sm">{new Date(entry.created_at).toLocaleString()}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{entry.user?.first_name || entry.user?.email || 'System'}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" fw={500}>
                      {entry.activity === 'created'
                        ? 'Created the flag'
                        : entry.activity === 'deleted'
                          ? 'Deleted the flag'
                          : 'Changed the flag'}
                    </Text>
                    {(entry.detail.changes ?? [])
                      .filter((c) => c.field && c.field !== 'version')
                      .map((c) => (
                        <Text size="xs" c="dimmed" key={c.field} lineClamp={3}>
                          {c.field}: {show(c.before)} → {show(c.after)}
                        </Text>
                      ))}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          {activity.data.next || page > 1 ? (
            <Pagination
              total={activity.data.next ? page + 1 : page}
              value={page}
              onChange={setPage}
              getControlProps={(control) => ({ 'aria-label': `${control} page` })}
            />
          ) : null}
        </>
      )}
    </Stack>
  )
}

/** /flags sends a payload as the JSON text it was saved as: shown compact, as the SDK will parse it. */
function payloadText(payload: unknown): string {
  if (typeof payload !== 'string') return JSON.stringify(payload)
  try {
    return JSON.stringify(JSON.parse(payload))
  } catch {
    return payload
  }
}
