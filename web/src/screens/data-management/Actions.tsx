// Actions (PostHog's Data management → Actions): the project's named event matchers, searchable by name, each
// leading to its editor.
import { Badge, Button, Group, Stack, Text, TextInput, Title } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { Link } from 'react-router'
import { get, type Page, qs } from '../../api'
import { ListView, NameCell } from '../../components/ListView'
import { Empty } from '../../components/States'
import { useSearchState } from '../../components/useSearchState'
import { useProjectId } from '../../session'
import { DataNav, when } from './common'

export interface ActionStep {
  event: string | null
  url: string | null
  url_matching: string | null
  selector: string | null
  text: string | null
  text_matching: string | null
  href: string | null
  href_matching: string | null
  tag_name: string | null
  properties: Record<string, unknown>[] | null
}

export interface Action {
  id: number
  name: string | null
  description: string
  tags: string[]
  steps: ActionStep[]
  created_at: string
  deleted: boolean
}

function summary(step: ActionStep): string {
  const parts = [step.event ?? 'any event']
  if (step.url) parts.push(`URL ${step.url_matching ?? 'contains'} “${step.url}”`)
  if (step.selector) parts.push(`element ${step.selector}`)
  if (step.text) parts.push(`text “${step.text}”`)
  if (step.properties?.length) parts.push(`${step.properties.length} property filter(s)`)
  return parts.join(', ')
}

export default function Actions() {
  const projectId = useProjectId()
  const { params, update } = useSearchState()
  const search = params.get('search') ?? ''
  const list = useQuery({
    queryKey: ['actions', projectId],
    queryFn: ({ signal }) => get<Page<Action>>(`/api/projects/${projectId}/actions/${qs({ limit: 1000 })}`, signal),
  })
  const rows = (list.data?.results ?? []).filter(
    (a) => !search || (a.name ?? '').toLowerCase().includes(search.toLowerCase()),
  )
  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={1} size="h2">
          Data management
        </Title>
        <Button component={Link} to={`/project/${projectId}/data-management/actions/new`}>
          New action
        </Button>
      </Group>
      <DataNav />
      <Text size="sm" c="dimmed">
        Actions group events under one name — a page view of a URL, a click on an element, a custom event with
        properties — to use in insights and cohorts.
      </Text>
      <TextInput
        label="Search actions"
        placeholder="Name…"
        value={search}
        onChange={(e) => update({ search: e.currentTarget.value })}
        maw={420}
      />
      <ListView
        query={list}
        rows={rows}
        loadingLabel="Loading actions…"
        label="Actions"
        rowTestId="action-row"
        rowKey={(a) => a.id}
        empty={
          <Empty
            title={search ? `No action matches “${search}”` : 'No actions yet'}
            action={
              search ? null : (
                <Button component={Link} to={`/project/${projectId}/data-management/actions/new`} variant="light">
                  Create your first action
                </Button>
              )
            }
          >
            {search ? 'Try another name.' : 'Define one from the events you capture.'}
          </Empty>
        }
        columns={[
          {
            header: 'Name',
            cell: (a) => (
              <NameCell
                to={`/project/${projectId}/data-management/actions/${a.id}`}
                name={a.name || `Action ${a.id}`}
                note={a.description}
              />
            ),
          },
          { header: 'Matches', cell: (a) => <Text size="sm">{a.steps.map(summary).join(' or ') || '—'}</Text> },
          {
            header: 'Tags',
            cell: (a) => (
              <Group gap={4}>
                {a.tags.map((tag) => (
                  <Badge key={tag} size="sm" variant="outline" color="dark">
                    {tag}
                  </Badge>
                ))}
              </Group>
            ),
          },
          { header: 'Created', cell: (a) => when(a.created_at) },
        ]}
      />
    </Stack>
  )
}
