// The persons of the project, newest first, as PostHog lists them: search by email, name or distinct id, 100 a
// page with the API's next/previous links. The search and the page are in the URL.
import { Anchor, Button, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core'
import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { Link, useSearchParams } from 'react-router'
import { get, type Page, qs } from '../../api'
import { Empty, ErrorState, Loading } from '../../components/States'
import { useProjectId } from '../../session'
import { offsetOf, PeopleTabs, type Person } from './common'

const PAGE = 100

export default function Persons() {
  const projectId = useProjectId()
  const [params, setParams] = useSearchParams()
  const search = params.get('search') ?? ''
  const offset = Number(params.get('offset') ?? 0) || 0
  const [draft, setDraft] = useState(search)
  const list = useQuery({
    queryKey: ['persons', projectId, search, offset],
    queryFn: ({ signal }) =>
      get<Page<Person>>(
        `/api/projects/${projectId}/persons/${qs({ search, limit: PAGE, offset: offset || undefined })}`,
        signal,
      ),
    placeholderData: keepPreviousData,
  })
  const go = (changes: { search?: string; offset?: number | null }) => {
    const next = new URLSearchParams(params)
    if (changes.search !== undefined) {
      if (changes.search) next.set('search', changes.search)
      else next.delete('search')
      next.delete('offset')
    }
    if (changes.offset !== undefined) {
      if (changes.offset) next.set('offset', String(changes.offset))
      else next.delete('offset')
    }
    setParams(next)
  }
  const rows = list.data?.results ?? []
  const nextOffset = offsetOf(list.data?.next)
  const previousOffset = offsetOf(list.data?.previous)

  return (
    <Stack gap="md">
      <Title order={1} size="h2">
        People
      </Title>
      <PeopleTabs active="persons" />
      <form
        onSubmit={(e) => {
          e.preventDefault()
          go({ search: draft.trim() })
        }}
      >
        <Group align="flex-end" gap="sm">
          <TextInput
            label="Search persons"
            description="By email or name (any part), or an exact distinct ID"
            placeholder="Search for persons"
            value={draft}
            onChange={(e) => setDraft(e.currentTarget.value)}
            w={360}
          />
          <Button type="submit" variant="default">
            Search
          </Button>
        </Group>
      </form>
      {list.isPending ? (
        <Loading label="Loading persons…" />
      ) : list.error ? (
        <ErrorState error={list.error} retry={() => list.refetch()} />
      ) : rows.length === 0 ? (
        <Empty title={search ? 'No persons match' : 'No persons yet'}>
          {search
            ? `Nobody matches “${search}”. Search by email, name or an exact distinct ID.`
            : 'Persons appear here when events are captured with a distinct ID, or after an identify call.'}
        </Empty>
      ) : (
        <>
          <Table.ScrollContainer minWidth={700}>
            <Table striped highlightOnHover data-testid="persons-table">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Person</Table.Th>
                  <Table.Th>Distinct ID</Table.Th>
                  <Table.Th>First seen</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {rows.map((p) => (
                  <Table.Tr key={p.uuid}>
                    <Table.Td>
                      <Anchor component={Link} to={`/project/${projectId}/persons/${p.uuid}`} fw={600} size="sm">
                        {p.name || p.distinct_ids[0] || p.uuid}
                      </Anchor>
                    </Table.Td>
                    <Table.Td>
                      <Text size="sm" ff="monospace" lineClamp={1}>
                        {p.distinct_ids[0] ?? '—'}
                        {p.distinct_ids.length > 1 ? ` (+${p.distinct_ids.length - 1})` : ''}
                      </Text>
                    </Table.Td>
                    <Table.Td>
                      <Text size="sm">{new Date(p.created_at).toLocaleString()}</Text>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
          <Group justify="space-between">
            <Text size="sm" c="dimmed">
              {offset + 1}–{offset + rows.length}
            </Text>
            <Group gap="xs">
              <Button
                variant="default"
                disabled={previousOffset === null}
                onClick={() => go({ offset: previousOffset })}
              >
                Previous
              </Button>
              <Button variant="default" disabled={nextOffset === null} onClick={() => go({ offset: nextOffset })}>
                Next
              </Button>
            </Group>
          </Group>
        </>
      )}
    </Stack>
  )
}
