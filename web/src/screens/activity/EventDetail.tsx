// One event with all its properties, from `GET /api/projects/{id}/events/{uuid}/`.
import { Anchor, Badge, Code, Group, Stack, Table, TextInput, Title } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { Link, useParams } from 'react-router'
import { get } from '../../api'
import { QueryState } from '../../components/States'
import { useProjectId } from '../../session'

interface EventRecord {
  id: string
  uuid?: string
  event: string
  distinct_id: string
  timestamp: string
  properties: Record<string, unknown>
  person?: { distinct_ids?: string[]; properties?: Record<string, unknown> } | null
  elements_chain?: string
}

export default function EventDetail() {
  const projectId = useProjectId()
  const { eventId } = useParams()
  const [search, setSearch] = useState('')
  const query = useQuery({
    queryKey: ['event', projectId, eventId],
    queryFn: ({ signal }) => get<EventRecord>(`/api/projects/${projectId}/events/${eventId}/`, signal),
  })
  return (
    <Stack gap="md">
      <Anchor component={Link} to={`/project/${projectId}/activity`} size="sm">
        ← Activity
      </Anchor>
      <QueryState query={query}>
        {(event) => {
          const entries = Object.entries(event.properties ?? {})
            .filter(([k]) => k.toLowerCase().includes(search.toLowerCase()))
            .sort(([a], [b]) => a.localeCompare(b))
          return (
            <Stack gap="md">
              <Group gap="sm">
                <Title order={1} size="h2">
                  {event.event}
                </Title>
                <Badge variant="light">{new Date(event.timestamp).toLocaleString()}</Badge>
              </Group>
              <Group gap="xs">
                Person: <Code>{event.distinct_id}</Code>
              </Group>
              <TextInput
                label="Search properties"
                value={search}
                onChange={(e) => setSearch(e.currentTarget.value)}
                w={320}
              />
              <Table striped data-testid="event-properties">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Property</Table.Th>
                    <Table.Th>Value</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {entries.map(([k, v]) => (
                    <Table.Tr key={k}>
                      <Table.Td>
                        <Code>{k}</Code>
                      </Table.Td>
                      <Table.Td style={{ wordBreak: 'break-all' }}>
                        {typeof v === 'object' ? JSON.stringify(v) : String(v)}
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Stack>
          )
        }}
      </QueryState>
    </Stack>
  )
}
