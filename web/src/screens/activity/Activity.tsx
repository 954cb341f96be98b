// Live events: the newest events of the project through `EventsQuery`, refreshed every few seconds when live,
// filtered by event name, time window and a HogQL condition; the columns are HogQL expressions the user edits.
// Everything that shapes the view is in the URL.
import {
  Anchor,
  Badge,
  Button,
  Group,
  Select,
  Stack,
  Switch,
  Table,
  TagsInput,
  Text,
  TextInput,
  Title,
} from '@mantine/core'
import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { Link, useSearchParams } from 'react-router'
import { type QueryResponse, runQuery } from '../../api'
import { Empty, ErrorState, Loading } from '../../components/States'
import { useEventNames } from '../../definitions'
import { useProjectId } from '../../session'

export const DEFAULT_COLUMNS = [
  'event',
  'person_display_name -- Person',
  'coalesce(properties.$current_url, properties.$screen_name) -- URL / Screen',
  'properties.$lib -- Library',
  'timestamp',
]

const WINDOWS = [
  { value: '-1h', label: 'Last hour' },
  { value: '-24h', label: 'Last 24 hours' },
  { value: '-7d', label: 'Last 7 days' },
  { value: '-30d', label: 'Last 30 days' },
  { value: '-365d', label: 'Last year' },
]

const label = (column: string) => column.split(' -- ')[1] ?? column

function cell(value: unknown): string {
  if (value === null || value === undefined) return '—'
  if (typeof value === 'object') {
    const v = value as Record<string, unknown>
    return String(v.display_name ?? v.distinct_id ?? JSON.stringify(value))
  }
  return String(value)
}

export default function Activity() {
  const projectId = useProjectId()
  const [params, setParams] = useSearchParams()
  const event = params.get('event')
  const after = params.get('after') ?? '-24h'
  const where = params.get('where') ?? ''
  const live = params.get('live') !== '0'
  const columns = params.getAll('column').length ? params.getAll('column') : DEFAULT_COLUMNS
  const [whereDraft, setWhereDraft] = useState(where)
  const names = useEventNames(projectId)

  const update = (changes: Record<string, string | string[] | null>) => {
    const next = new URLSearchParams(params)
    for (const [k, v] of Object.entries(changes)) {
      next.delete(k)
      if (Array.isArray(v)) for (const item of v) next.append(k, item)
      else if (v !== null && v !== '') next.set(k, v)
    }
    setParams(next, { replace: true })
  }

  const query = useQuery({
    queryKey: ['activity', projectId, event, after, where, columns],
    queryFn: ({ signal }) =>
      runQuery<QueryResponse>(
        projectId,
        {
          kind: 'EventsQuery',
          select: ['*', ...columns],
          event: event || undefined,
          after,
          where: where ? [where] : [],
          orderBy: ['timestamp DESC'],
          limit: 100,
        },
        signal,
      ),
    refetchInterval: live ? 5_000 : false,
    placeholderData: keepPreviousData,
  })
  const rows = (query.data?.results as unknown[][] | undefined) ?? []

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={1} size="h2">
          Activity
        </Title>
        <Switch label="Live" checked={live} onChange={(e) => update({ live: e.currentTarget.checked ? null : '0' })} />
      </Group>
      <Group align="flex-end" gap="sm">
        <Select
          label="Event"
          placeholder="All events"
          searchable
          clearable
          data={names.data ?? []}
          value={event}
          onChange={(value) => update({ event: value })}
          w={240}
        />
        <Select
          label="Time"
          data={WINDOWS}
          value={after}
          allowDeselect={false}
          onChange={(value) => update({ after: value })}
          w={170}
        />
        <form
          onSubmit={(e) => {
            e.preventDefault()
            update({ where: whereDraft })
          }}
          style={{ flex: 1, minWidth: 260 }}
        >
          <TextInput
            label="Filter (HogQL)"
            placeholder="properties.$browser = 'Chrome'"
            value={whereDraft}
            onChange={(e) => setWhereDraft(e.currentTarget.value)}
            styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
          />
        </form>
      </Group>
      <TagsInput
        label="Columns"
        description="HogQL expressions; add ` -- Name` to name a column. Press Enter to add one."
        value={columns}
        onChange={(value) => update({ column: value.length ? value : null })}
        clearable
      />
      {query.isPending ? (
        <Loading label="Loading events…" />
      ) : query.error ? (
        <ErrorState error={query.error} retry={() => query.refetch()} />
      ) : rows.length === 0 ? (
        <Empty title="No events yet">
          Nothing matches in this time window. Events sent by posthog-js, posthog-node or any PostHog SDK pointed at
          this server appear here within seconds.
        </Empty>
      ) : (
        <Table.ScrollContainer minWidth={700}>
          <Table striped highlightOnHover stickyHeader data-testid="events-table">
            <Table.Thead>
              <Table.Tr>
                {columns.map((c) => (
                  <Table.Th key={c}>{label(c)}</Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((row) => {
                const star = row[0] as { uuid: string }
                return (
                  <Table.Tr key={star.uuid}>
                    {columns.map((c, i) => (
                      <Table.Td key={c}>
                        {i === 0 ? (
                          <Anchor component={Link} to={`/project/${projectId}/activity/${star.uuid}`} size="sm">
                            {cell(row[i + 1])}
                          </Anchor>
                        ) : (
                          <Text size="sm" lineClamp={1}>
                            {cell(row[i + 1])}
                          </Text>
                        )}
                      </Table.Td>
                    ))}
                  </Table.Tr>
                )
              })}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {query.isFetching && !query.isPending ? (
        <Badge variant="light" color="gray" w="fit-content">
          Refreshing…
        </Badge>
      ) : null}
      {query.data?.hasMore ? (
        <Button variant="subtle" w="fit-content" disabled>
          Showing the newest 100 events
        </Button>
      ) : null}
    </Stack>
  )
}
