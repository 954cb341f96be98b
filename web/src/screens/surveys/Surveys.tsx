// Surveys: the project's surveys newest first, searched by name or description, filtered by status (draft, running,
// complete) and shown either active or archived, with each one's response count; each links to its page. Search,
// status and archived live in the URL.
import { Badge, Button, Group, SegmentedControl, Select, Stack, Text, Title } from '@mantine/core'
import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { Link } from 'react-router'
import { get, type Page, qs } from '../../api'
import { creatorName, ListView, NameCell, SearchField, shortDate } from '../../components/ListView'
import { Empty } from '../../components/States'
import { useSearchState } from '../../components/useSearchState'
import { useProjectId } from '../../session'
import { STATUS_COLOR, STATUS_LABEL, type Status, type Survey, statusOf } from './model'

/** The API filters by search and archived; the status is read from the dates of the (at most) 1,000 newest. */
const LIMIT = 1000

export default function Surveys() {
  const projectId = useProjectId()
  const { params, update } = useSearchState()
  const search = params.get('search') ?? ''
  const status = (params.get('status') ?? '') as Status | ''
  const archived = params.get('archived') === 'true'

  const surveys = useQuery({
    queryKey: ['surveys', projectId, search, archived],
    queryFn: ({ signal }) =>
      get<Page<Survey>>(
        `/api/projects/${projectId}/surveys/${qs({ search, archived: archived ? 'true' : 'false', limit: LIMIT })}`,
        signal,
      ),
    placeholderData: keepPreviousData,
  })
  const counts = useQuery({
    queryKey: ['surveys', projectId, 'responses-count'],
    queryFn: ({ signal }) =>
      get<Record<string, number>>(`/api/projects/${projectId}/surveys/responses_count/?exclude_archived=true`, signal),
  })
  const base = `/project/${projectId}/surveys`
  const rows = (surveys.data?.results ?? []).filter((s) => !status || statusOf(s) === status)

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={1} size="h2">
          Surveys
        </Title>
        <Button component={Link} to={`${base}/new`}>
          New survey
        </Button>
      </Group>
      <Group align="flex-end" gap="sm">
        <SearchField
          value={search}
          placeholder="Search by name or description"
          onSearch={(value) => update({ search: value })}
        />
        <Select
          label="Status"
          data={[
            { value: '', label: 'Any status' },
            { value: 'draft', label: 'Draft' },
            { value: 'running', label: 'Running' },
            { value: 'complete', label: 'Complete' },
          ]}
          value={status}
          allowDeselect={false}
          onChange={(value) => update({ status: value })}
          w={170}
        />
        <SegmentedControl
          aria-label="Active or archived surveys"
          data={[
            { value: 'false', label: 'Active' },
            { value: 'true', label: 'Archived' },
          ]}
          value={archived ? 'true' : 'false'}
          onChange={(value) => update({ archived: value === 'true' ? 'true' : null })}
        />
      </Group>
      <ListView
        query={surveys}
        rows={rows}
        loadingLabel="Loading surveys…"
        testId="surveys-table"
        rowKey={(survey) => survey.id}
        empty={
          search || status || archived ? (
            <Empty title="No matching surveys">
              No {archived ? 'archived ' : ''}survey matches this search and status.
            </Empty>
          ) : (
            <Empty
              title="No surveys yet"
              action={
                <Button component={Link} to={`${base}/new`}>
                  Create your first survey
                </Button>
              }
            >
              Surveys ask your users questions on your site — posthog-js shows them — and collect the answers here.
            </Empty>
          )
        }
        columns={[
          {
            header: 'Name',
            cell: (survey) => <NameCell to={`${base}/${survey.id}`} name={survey.name} note={survey.description} />,
          },
          {
            header: 'Responses',
            cell: (survey) => (
              <Text size="sm" data-testid="response-count">
                {/* not a 0 while the counts are still on their way */}
                {counts.isPending ? '…' : counts.error ? '—' : (counts.data[survey.id] ?? 0)}
              </Text>
            ),
          },
          {
            header: 'Type',
            cell: (survey) => (
              <Text size="sm">
                {survey.type === 'popover' ? 'Popover' : survey.type === 'api' ? 'API' : survey.type}
              </Text>
            ),
          },
          { header: 'Created by', cell: (survey) => <Text size="sm">{creatorName(survey.created_by)}</Text> },
          { header: 'Created', cell: (survey) => <Text size="sm">{shortDate(survey.created_at)}</Text> },
          {
            header: 'Status',
            cell: (survey) => {
              const st = statusOf(survey)
              return (
                <Badge color={STATUS_COLOR[st]} variant="light">
                  {STATUS_LABEL[st]}
                </Badge>
              )
            },
          },
        ]}
      />
    </Stack>
  )
}
