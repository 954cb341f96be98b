// Saved endpoints: the project's named queries, newest first, filtered by active or inactive (in the URL), each
// with its kind, latest version, materialization and last run; each links to its page. New ones are made here
// or from the SQL editor ("Save as endpoint").
import { Badge, Button, Group, Select, Stack, Text, Title } from '@mantine/core'
import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { Link } from 'react-router'
import { get, type Page, qs } from '../../api'
import { ListView, NameCell } from '../../components/ListView'
import { Empty } from '../../components/States'
import { useSearchState } from '../../components/useSearchState'
import { useProjectId } from '../../session'
import { type Endpoint, kindLabel, when, who } from './model'

const PAGE = 50

export function MaterializationBadge({
  endpoint,
}: {
  endpoint: Pick<Endpoint, 'is_materialized' | 'materialization'>
}) {
  if (!endpoint.is_materialized) return <Text size="sm">No</Text>
  const status = endpoint.materialization.status ?? 'Pending'
  const color = status === 'Completed' ? 'green' : status === 'Failed' ? 'red' : 'blue'
  return (
    <Badge color={color} variant="light" data-testid="materialization-badge">
      {status}
    </Badge>
  )
}

export default function Endpoints() {
  const projectId = useProjectId()
  const { params, update } = useSearchState()
  const active = params.get('active') ?? ''
  const page = Math.max(1, Number(params.get('page') ?? 1) || 1)
  const base = `/project/${projectId}/endpoints`

  const endpoints = useQuery({
    queryKey: ['endpoints', projectId, active, page],
    queryFn: ({ signal }) =>
      get<Page<Endpoint>>(
        `/api/projects/${projectId}/endpoints/${qs({ is_active: active, limit: PAGE, offset: (page - 1) * PAGE })}`,
        signal,
      ),
    placeholderData: keepPreviousData,
  })

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={1} size="h2">
          Endpoints
        </Title>
        <Group gap="xs">
          <Button variant="default" component={Link} to={`/project/${projectId}/sql`}>
            Open SQL editor
          </Button>
          <Button component={Link} to={`${base}/new`}>
            New endpoint
          </Button>
        </Group>
      </Group>
      <Text size="sm" c="dimmed">
        A saved query with a name of its own, run over HTTP with a personal API key: versioned whenever its query
        changes, optionally materialized into a table refreshed on a schedule.
      </Text>
      <Select
        label="Status"
        data={[
          { value: '', label: 'Active and inactive' },
          { value: 'true', label: 'Active' },
          { value: 'false', label: 'Inactive' },
        ]}
        value={active}
        allowDeselect={false}
        onChange={(value) => update({ active: value, page: null })}
        w={220}
      />
      <ListView
        query={endpoints}
        rows={endpoints.data?.results}
        loadingLabel="Loading endpoints…"
        testId="endpoints-table"
        minWidth={800}
        rowKey={(endpoint) => endpoint.id}
        paging={{
          count: endpoints.data?.count ?? 0,
          size: PAGE,
          page,
          onPage: (p) => update({ page: p === 1 ? null : p }),
        }}
        empty={
          active ? (
            <Empty title="No matching endpoints">No endpoint has this status.</Empty>
          ) : (
            <Empty
              title="No endpoints yet"
              action={
                <Button component={Link} to={`${base}/new`}>
                  Create your first endpoint
                </Button>
              }
            >
              Save a SQL or insight query as an endpoint to run it from your own code.
            </Empty>
          )
        }
        columns={[
          {
            header: 'Name',
            cell: (endpoint) => (
              <NameCell to={`${base}/${endpoint.name}`} name={endpoint.name} note={endpoint.description} />
            ),
          },
          { header: 'Query', cell: (endpoint) => <Text size="sm">{kindLabel(endpoint.query)}</Text> },
          {
            header: 'Version',
            cell: (endpoint) => (
              <Text size="sm">
                v{endpoint.current_version} ({endpoint.versions_count}{' '}
                {endpoint.versions_count === 1 ? 'version' : 'versions'})
              </Text>
            ),
          },
          { header: 'Materialized', cell: (endpoint) => <MaterializationBadge endpoint={endpoint} /> },
          { header: 'Last run', cell: (endpoint) => <Text size="sm">{when(endpoint.last_executed_at)}</Text> },
          { header: 'Created by', cell: (endpoint) => <Text size="sm">{who(endpoint.created_by)}</Text> },
          {
            header: 'Status',
            cell: (endpoint) => (
              <Badge color={endpoint.is_active ? 'green' : 'gray'} variant="light">
                {endpoint.is_active ? 'Active' : 'Inactive'}
              </Badge>
            ),
          },
        ]}
      />
    </Stack>
  )
}
