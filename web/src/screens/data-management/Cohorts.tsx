// Cohorts (PostHog's People → Cohorts): search and filter by type, with each cohort's size and calculation
// status; each leads to its editor and member list.
import { Badge, Button, Group, Select, Stack, Title } from '@mantine/core'
import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { Link } from 'react-router'
import { get, type Page, qs } from '../../api'
import { ListView, NameCell, SearchField } from '../../components/ListView'
import { Empty } from '../../components/States'
import { useSearchState } from '../../components/useSearchState'
import { useProjectId } from '../../session'
import { DataNav, Pager, when } from './common'

export interface Cohort {
  id: number
  name: string
  description: string
  filters: unknown
  is_static: boolean
  is_calculating: boolean
  errors_calculating: number
  last_error_message: string | null
  count: number | null
  cohort_type: string | null
  created_at: string
  last_calculation: string | null
  created_by: { id: number; email: string } | null
}

const TYPES = [
  { value: 'static', label: 'Static' },
  { value: 'dynamic', label: 'Dynamic' },
  { value: 'person_property', label: 'Person properties' },
  { value: 'behavioral', label: 'Behavioral' },
  { value: 'analytical', label: 'Analytical' },
]
const LIMIT = 100

export function CohortStatus({ cohort }: { cohort: Cohort }) {
  if (cohort.is_calculating) return <Badge color="blue.8">Calculating…</Badge>
  if (cohort.errors_calculating > 0)
    return (
      <Badge color="red.8" title={cohort.last_error_message ?? undefined}>
        Calculation failed
      </Badge>
    )
  return <Badge color="teal.9">{cohort.is_static ? 'Static' : 'Up to date'}</Badge>
}

export default function Cohorts() {
  const projectId = useProjectId()
  const { params, update } = useSearchState()
  const search = params.get('search') ?? ''
  const type = params.get('type')
  const offset = Number(params.get('offset') ?? 0) || 0
  const list = useQuery({
    queryKey: ['cohorts', projectId, search, type, offset],
    queryFn: ({ signal }) =>
      get<Page<Cohort>>(`/api/projects/${projectId}/cohorts/${qs({ search, type, limit: LIMIT, offset })}`, signal),
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (q.state.data?.results.some((c) => c.is_calculating) ? 3_000 : false),
  })
  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={1} size="h2">
          Cohorts
        </Title>
        <Button component={Link} to={`/project/${projectId}/cohorts/new`}>
          New cohort
        </Button>
      </Group>
      <DataNav />
      <Group align="flex-end" gap="sm">
        <SearchField
          label="Search cohorts"
          value={search}
          placeholder="Name…"
          onSearch={(value) => update({ search: value, offset: null })}
        />
        <Select
          label="Type"
          placeholder="Any type"
          data={TYPES}
          value={type}
          clearable
          onChange={(value) => update({ type: value, offset: null })}
          w={200}
        />
      </Group>
      <ListView
        query={list}
        rows={list.data?.results}
        loadingLabel="Loading cohorts…"
        label="Cohorts"
        rowTestId="cohort-row"
        rowKey={(c) => c.id}
        empty={
          <Empty
            title={search || type ? 'No cohort matches' : 'No cohorts yet'}
            action={
              search || type ? null : (
                <Button component={Link} to={`/project/${projectId}/cohorts/new`} variant="light">
                  Create a cohort
                </Button>
              )
            }
          >
            {search || type
              ? 'Try another search or type.'
              : 'A cohort is a group of persons: a list you upload, or everyone matching properties and behaviour.'}
          </Empty>
        }
        columns={[
          {
            header: 'Name',
            cell: (c) => (
              <NameCell
                to={`/project/${projectId}/cohorts/${c.id}`}
                name={c.name || `Cohort ${c.id}`}
                note={c.description}
              />
            ),
          },
          { header: 'Type', cell: (c) => (c.is_static ? 'Static' : 'Dynamic') },
          { header: 'Persons', cell: (c) => (c.count === null ? '—' : c.count.toLocaleString()) },
          { header: 'Status', cell: (c) => <CohortStatus cohort={c} /> },
          { header: 'Created', cell: (c) => when(c.created_at) },
        ]}
        footer={
          <Pager
            offset={offset}
            limit={LIMIT}
            count={list.data?.count}
            shown={list.data?.results.length ?? 0}
            onChange={(o) => update({ offset: o || null })}
          />
        }
      />
    </Stack>
  )
}
