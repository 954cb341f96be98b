// Saved insights (PostHog's "Product analytics" list): all, yours or favourites, searched by name, filtered by
// tag and creator, each a link to its page; favourite from the list. Everything that shapes the view is in the URL.
import {
  ActionIcon,
  Anchor,
  Badge,
  Button,
  Group,
  Menu,
  MultiSelect,
  SegmentedControl,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core'
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link, useSearchParams } from 'react-router'
import { api, get, type Page, qs } from '../../api'
import { INSIGHT_KINDS, sourceOf } from '../../components/insights/nodes'
import { Empty, ErrorState, Loading } from '../../components/States'
import { useProjectId } from '../../session'
import { describe, type SavedInsight } from './Insight'

interface ListedInsight extends SavedInsight {
  created_by: { id: number; first_name: string; email: string } | null
}

const kindLabel = (query: unknown) => {
  const source = sourceOf(query)
  return INSIGHT_KINDS.find((k) => k.value === source?.kind)?.label ?? (source?.kind === 'HogQLQuery' ? 'SQL' : '—')
}

export default function Insights() {
  const projectId = useProjectId()
  const client = useQueryClient()
  const [params, setParams] = useSearchParams()
  const tab = params.get('tab') ?? 'all'
  const search = params.get('search') ?? ''
  const tags = params.getAll('tag')
  const createdBy = params.get('created_by')
  const [draft, setDraft] = useState(search)

  const update = (changes: Record<string, string | string[] | null>) => {
    const next = new URLSearchParams(params)
    for (const [k, v] of Object.entries(changes)) {
      next.delete(k)
      if (Array.isArray(v)) for (const item of v) next.append(k, item)
      else if (v !== null && v !== '') next.set(k, v)
    }
    setParams(next, { replace: true })
  }

  const list = useQuery({
    queryKey: ['insights', projectId, tab, search, tags, createdBy],
    queryFn: ({ signal }) =>
      get<Page<ListedInsight>>(
        `/api/projects/${projectId}/insights/${qs({
          basic: 'true',
          saved: 'true',
          limit: 500,
          order: '-last_modified_at',
          search: search || undefined,
          favorited: tab === 'favorites' ? 'true' : undefined,
          user: tab === 'yours' ? 'true' : undefined,
          tags: tags.length ? JSON.stringify(tags) : undefined,
          created_by: createdBy ? JSON.stringify([Number(createdBy)]) : undefined,
        })}`,
        signal,
      ),
    placeholderData: keepPreviousData,
  })
  // the tags and creators to filter by, from every saved insight
  const all = useQuery({
    queryKey: ['insights', projectId, 'facets'],
    queryFn: ({ signal }) =>
      get<Page<ListedInsight>>(
        `/api/projects/${projectId}/insights/${qs({ basic: 'true', saved: 'true', limit: 1000 })}`,
        signal,
      ),
    staleTime: 30_000,
  })
  const allTags = [...new Set((all.data?.results ?? []).flatMap((i) => i.tags))].sort()
  const creators = new Map<number, string>()
  for (const i of all.data?.results ?? [])
    if (i.created_by) creators.set(i.created_by.id, i.created_by.first_name || i.created_by.email)

  const favourite = useMutation({
    mutationFn: (i: ListedInsight) =>
      api('PATCH', `/api/projects/${projectId}/insights/${i.id}/`, { favorited: !i.favorited }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['insights', projectId] }),
  })

  const rows = list.data?.results ?? []
  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={1} size="h2">
          Insights
        </Title>
        <Menu position="bottom-end">
          <Menu.Target>
            <Button>New insight</Button>
          </Menu.Target>
          <Menu.Dropdown>
            {INSIGHT_KINDS.map((k) => (
              <Menu.Item key={k.value} component={Link} to={`/project/${projectId}/insights/new?kind=${k.value}`}>
                {k.label}
              </Menu.Item>
            ))}
          </Menu.Dropdown>
        </Menu>
      </Group>
      <SegmentedControl
        w="fit-content"
        value={tab}
        onChange={(v) => update({ tab: v === 'all' ? null : v })}
        data={[
          { value: 'all', label: 'All insights' },
          { value: 'yours', label: 'My insights' },
          { value: 'favorites', label: 'Favorites' },
        ]}
        aria-label="Which insights"
      />
      <Group align="flex-end" gap="sm">
        <form
          onSubmit={(e) => {
            e.preventDefault()
            update({ search: draft })
          }}
        >
          <TextInput
            label="Search"
            placeholder="Search for insights"
            value={draft}
            onChange={(e) => setDraft(e.currentTarget.value)}
            onBlur={() => draft !== search && update({ search: draft })}
            w={280}
          />
        </form>
        <MultiSelect
          label="Tags"
          placeholder={tags.length ? undefined : 'Any tag'}
          data={[...new Set([...allTags, ...tags])]}
          value={tags}
          onChange={(v) => update({ tag: v })}
          clearable
          searchable
          w={260}
        />
        <Select
          label="Created by"
          placeholder="Anyone"
          data={[...creators].map(([id, n]) => ({ value: String(id), label: n }))}
          value={createdBy}
          onChange={(v) => update({ created_by: v })}
          clearable
          w={200}
        />
      </Group>
      {list.isPending ? (
        <Loading label="Loading insights…" />
      ) : list.error ? (
        <ErrorState error={list.error} retry={() => list.refetch()} />
      ) : rows.length === 0 ? (
        search || tags.length || createdBy || tab !== 'all' ? (
          <Empty title="No insights match">Try another search, or clear the filters.</Empty>
        ) : (
          <Empty
            title="No insights yet"
            action={
              <Button component={Link} to={`/project/${projectId}/insights/new`}>
                New insight
              </Button>
            }
          >
            Insights are graphs and tables of your events: trends, funnels, retention and more. Save one to find it
            here.
          </Empty>
        )
      ) : (
        <Table.ScrollContainer minWidth={700}>
          <Table striped highlightOnHover data-testid="insights-table">
            <Table.Thead>
              <Table.Tr>
                <Table.Th w={40}>
                  <Text span size="xs" style={{ position: 'absolute', width: 1, height: 1, overflow: 'hidden' }}>
                    Favorite
                  </Text>
                </Table.Th>
                <Table.Th>Name</Table.Th>
                <Table.Th>Type</Table.Th>
                <Table.Th>Tags</Table.Th>
                <Table.Th>Created by</Table.Th>
                <Table.Th>Last modified</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((i) => {
                const source = sourceOf(i.query)
                const name = i.name || i.derived_name || (source ? describe(source) : 'Unnamed')
                return (
                  <Table.Tr key={i.id}>
                    <Table.Td>
                      <ActionIcon
                        variant="subtle"
                        color={i.favorited ? 'yellow' : 'gray'}
                        aria-label={`${i.favorited ? 'Remove' : 'Add'} ${name} ${i.favorited ? 'from' : 'to'} favorites`}
                        aria-pressed={i.favorited}
                        onClick={() => favourite.mutate(i)}
                      >
                        {i.favorited ? '★' : '☆'}
                      </ActionIcon>
                    </Table.Td>
                    <Table.Td>
                      <Anchor component={Link} to={`/project/${projectId}/insights/${i.short_id}`} fw={500}>
                        {name}
                      </Anchor>
                      {i.description ? (
                        <Text size="xs" c="dimmed" lineClamp={1}>
                          {i.description}
                        </Text>
                      ) : null}
                    </Table.Td>
                    <Table.Td>{kindLabel(i.query)}</Table.Td>
                    <Table.Td>
                      <Group gap={4}>
                        {i.tags.map((t) => (
                          <Badge key={t} variant="light" tt="none">
                            {t}
                          </Badge>
                        ))}
                      </Group>
                    </Table.Td>
                    <Table.Td>{i.created_by ? i.created_by.first_name || i.created_by.email : '—'}</Table.Td>
                    <Table.Td>
                      <Text size="sm" title={i.last_modified_at}>
                        {new Date(i.last_modified_at).toLocaleString()}
                      </Text>
                    </Table.Td>
                  </Table.Tr>
                )
              })}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {favourite.error ? <ErrorState error={favourite.error} /> : null}
    </Stack>
  )
}
