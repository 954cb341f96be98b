// The groups of one group type (companies, teams…), newest first, searched by key or property value, paged with
// the API's cursors. The search and the cursor are in the URL.
import { Anchor, Button, Code, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core'
import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { Link, useParams, useSearchParams } from 'react-router'
import { get, type Page, qs } from '../../api'
import { Empty, ErrorState, Loading } from '../../components/States'
import { useProjectId } from '../../session'
import { cursorOf, type GroupRecord, groupTypeLabel, PeopleTabs, useGroupTypes, valueText } from './common'

export default function Groups() {
  const projectId = useProjectId()
  const index = Number(useParams().groupTypeIndex)
  const [params, setParams] = useSearchParams()
  const search = params.get('search') ?? ''
  const cursor = params.get('cursor') ?? ''
  const [draft, setDraft] = useState(search)
  const types = useGroupTypes()
  const type = types.data?.find((t) => t.group_type_index === index)
  const list = useQuery({
    queryKey: ['groups', projectId, index, search, cursor],
    queryFn: ({ signal }) =>
      get<Page<GroupRecord>>(
        `/api/projects/${projectId}/groups/${qs({ group_type_index: index, search, cursor })}`,
        signal,
      ),
    placeholderData: keepPreviousData,
    enabled: Number.isInteger(index),
  })
  const go = (changes: { search?: string; cursor?: string | null }) => {
    const next = new URLSearchParams(params)
    if (changes.search !== undefined) {
      if (changes.search) next.set('search', changes.search)
      else next.delete('search')
      next.delete('cursor')
    }
    if (changes.cursor !== undefined) {
      if (changes.cursor) next.set('cursor', changes.cursor)
      else next.delete('cursor')
    }
    setParams(next)
  }
  const rows = list.data?.results ?? []
  const label = type ? groupTypeLabel(type) : 'Groups'
  const nextCursor = cursorOf(list.data?.next)
  const hasPrevious = Boolean(list.data?.previous)

  return (
    <Stack gap="md">
      <Title order={1} size="h2">
        People
      </Title>
      <PeopleTabs active={index} />
      <form
        onSubmit={(e) => {
          e.preventDefault()
          go({ search: draft.trim() })
        }}
      >
        <Group align="flex-end" gap="sm">
          <TextInput
            label={`Search ${label}`}
            description="By key or any property value"
            value={draft}
            onChange={(e) => setDraft(e.currentTarget.value)}
            w={360}
          />
          <Button type="submit" variant="default">
            Search
          </Button>
        </Group>
      </form>
      {list.isPending || types.isPending ? (
        <Loading label="Loading groups…" />
      ) : list.error ? (
        <ErrorState error={list.error} retry={() => list.refetch()} />
      ) : rows.length === 0 ? (
        <Empty title={search ? 'No groups match' : `No ${label} yet`}>
          {search
            ? `Nothing matches “${search}”.`
            : 'Groups appear when events are sent with $groups, or after a group identify call.'}
        </Empty>
      ) : (
        <>
          <Table striped highlightOnHover data-testid="groups-table">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Group</Table.Th>
                <Table.Th>Key</Table.Th>
                <Table.Th>First seen</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((g) => (
                <Table.Tr key={g.group_key}>
                  <Table.Td>
                    <Anchor
                      component={Link}
                      to={`/project/${projectId}/groups/${index}/${encodeURIComponent(g.group_key)}`}
                      fw={600}
                      size="sm"
                    >
                      {valueText(g.group_properties.name ?? g.group_key)}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <Code>{g.group_key}</Code>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{new Date(g.created_at).toLocaleString()}</Text>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          <Group justify="flex-end" gap="xs">
            <Button
              variant="default"
              disabled={!hasPrevious}
              onClick={() => go({ cursor: cursorOf(list.data?.previous) })}
            >
              Previous
            </Button>
            <Button variant="default" disabled={!nextCursor} onClick={() => go({ cursor: nextCursor })}>
              Next
            </Button>
          </Group>
        </>
      )}
    </Stack>
  )
}
