// Feature flags: the project's flags, searched by key or name and filtered by status, as PostHog lists them; each
// links to its page. Search, status and page live in the URL.
import { Badge, Button, Group, Select, Stack, Text, Title } from '@mantine/core'
import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { Link } from 'react-router'
import { get, type Page, qs } from '../../api'
import { creatorName, ListView, NameCell, SearchField, shortDate } from '../../components/ListView'
import { Empty } from '../../components/States'
import { useSearchState } from '../../components/useSearchState'
import { useProjectId } from '../../session'
import { type Flag, flagSummary } from './model'

const PAGE = 50

export default function FeatureFlags() {
  const projectId = useProjectId()
  const { params, update } = useSearchState()
  const search = params.get('search') ?? ''
  const active = params.get('active') ?? ''
  const page = Math.max(1, Number(params.get('page') ?? 1) || 1)

  const flags = useQuery({
    queryKey: ['feature-flags', projectId, search, active, page],
    queryFn: ({ signal }) =>
      get<Page<Flag>>(
        `/api/projects/${projectId}/feature_flags/${qs({ search, active, limit: PAGE, offset: (page - 1) * PAGE })}`,
        signal,
      ),
    placeholderData: keepPreviousData,
  })
  const base = `/project/${projectId}/feature_flags`

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={1} size="h2">
          Feature flags
        </Title>
        <Button component={Link} to={`${base}/new`}>
          New feature flag
        </Button>
      </Group>
      <Group align="flex-end" gap="sm">
        <SearchField
          value={search}
          placeholder="Search by key or name"
          onSearch={(value) => update({ search: value, page: null })}
        />
        <Select
          label="Status"
          data={[
            { value: '', label: 'Any status' },
            { value: 'true', label: 'Enabled' },
            { value: 'false', label: 'Disabled' },
          ]}
          value={active}
          allowDeselect={false}
          onChange={(value) => update({ active: value, page: null })}
          w={170}
        />
      </Group>
      <ListView
        query={flags}
        rows={flags.data?.results}
        loadingLabel="Loading feature flags…"
        testId="flags-table"
        rowKey={(flag) => flag.id}
        paging={{
          count: flags.data?.count ?? 0,
          size: PAGE,
          page,
          onPage: (p) => update({ page: p === 1 ? null : p }),
        }}
        empty={
          search || active ? (
            <Empty title="No matching feature flags">No flag matches this search and status.</Empty>
          ) : (
            <Empty
              title="No feature flags yet"
              action={
                <Button component={Link} to={`${base}/new`}>
                  Create your first flag
                </Button>
              }
            >
              Feature flags turn features on and off for chosen users, roll them out gradually and run experiments.
            </Empty>
          )
        }
        columns={[
          { header: 'Key', cell: (flag) => <NameCell to={`${base}/${flag.id}`} name={flag.key} note={flag.name} /> },
          { header: 'Release conditions', cell: (flag) => <Text size="sm">{flagSummary(flag)}</Text> },
          { header: 'Created by', cell: (flag) => <Text size="sm">{creatorName(flag.created_by)}</Text> },
          { header: 'Created', cell: (flag) => <Text size="sm">{shortDate(flag.created_at)}</Text> },
          {
            header: 'Status',
            cell: (flag) => (
              <Badge color={flag.active ? 'green' : 'gray'} variant="light">
                {flag.active ? 'Enabled' : 'Disabled'}
              </Badge>
            ),
          },
        ]}
      />
    </Stack>
  )
}
