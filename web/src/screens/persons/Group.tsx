// One group: its properties and the latest events sent with it (`$group_N` of the group's type).
import { Anchor, Badge, Code, Group as Row, Stack, Table, Tabs, Text, Title } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { Link, useParams, useSearchParams } from 'react-router'
import { get, qs, runQuery } from '../../api'
import { Empty, ErrorState, Loading, QueryState } from '../../components/States'
import { useProjectId } from '../../session'
import { type GroupRecord, PropertiesTable, useGroupTypes, valueText } from './common'

/** A HogQL string literal. */
const literal = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`

function GroupEvents({ index, groupKey }: { index: number; groupKey: string }) {
  const projectId = useProjectId()
  const events = useQuery({
    queryKey: ['group-events', projectId, index, groupKey],
    queryFn: ({ signal }) =>
      runQuery<{ results: [string, string, string, string, string][] }>(
        projectId,
        {
          kind: 'EventsQuery',
          select: [
            'uuid',
            'event',
            'distinct_id',
            'coalesce(properties.$current_url, properties.$screen_name)',
            'timestamp',
          ],
          where: [`$group_${index} = ${literal(groupKey)}`],
          after: '-365d',
          orderBy: ['timestamp DESC'],
          limit: 100,
        },
        signal,
      ),
  })
  return (
    <QueryState query={events}>
      {(data) =>
        data.results.length === 0 ? (
          <Empty title="No events">No events in the last year were sent with this group.</Empty>
        ) : (
          <Table striped data-testid="group-events">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Event</Table.Th>
                <Table.Th>Person</Table.Th>
                <Table.Th>URL / Screen</Table.Th>
                <Table.Th>Time</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {data.results.map(([uuid, event, distinctId, url, timestamp]) => (
                <Table.Tr key={uuid}>
                  <Table.Td>
                    <Anchor component={Link} to={`/project/${projectId}/activity/${uuid}`} size="sm">
                      {event}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <Code>{distinctId}</Code>
                  </Table.Td>
                  <Table.Td>{url ?? '—'}</Table.Td>
                  <Table.Td>{new Date(timestamp).toLocaleString()}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )
      }
    </QueryState>
  )
}

export default function Group() {
  const projectId = useProjectId()
  const { groupTypeIndex, groupKey = '' } = useParams()
  const index = Number(groupTypeIndex)
  const [params, setParams] = useSearchParams()
  const tab = params.get('tab') ?? 'properties'
  const types = useGroupTypes()
  const type = types.data?.find((t) => t.group_type_index === index)
  const group = useQuery({
    queryKey: ['group', projectId, index, groupKey],
    queryFn: ({ signal }) =>
      get<GroupRecord>(
        `/api/projects/${projectId}/groups/find/${qs({ group_type_index: index, group_key: groupKey })}`,
        signal,
      ),
  })
  const back = (
    <Anchor component={Link} to={`/project/${projectId}/groups/${index}`} size="sm">
      ← {type?.name_plural || (type ? `${type.group_type}(s)` : 'Groups')}
    </Anchor>
  )
  if (group.isPending) return <Loading label="Loading group…" />
  if (group.error || !group.data) {
    return (
      <Stack>
        {back}
        <ErrorState error={group.error} retry={() => group.refetch()} />
      </Stack>
    )
  }
  const g = group.data
  return (
    <Stack gap="md">
      {back}
      <Stack gap={4}>
        <Title order={1} size="h2">
          {valueText(g.group_properties.name ?? g.group_key)}
        </Title>
        <Row gap="xs">
          <Badge variant="light">{type?.name_singular || type?.group_type || `Group type ${index}`}</Badge>
          <Code>{g.group_key}</Code>
          <Text size="sm" c="dimmed">
            First seen {new Date(g.created_at).toLocaleString()}
          </Text>
        </Row>
      </Stack>
      <Tabs
        value={tab}
        onChange={(value) => {
          const next = new URLSearchParams(params)
          if (!value || value === 'properties') next.delete('tab')
          else next.set('tab', value)
          setParams(next, { replace: true })
        }}
      >
        <Tabs.List>
          <Tabs.Tab value="properties">Properties</Tabs.Tab>
          <Tabs.Tab value="events">Events</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="properties" pt="md">
          <Stack gap="sm">
            <PropertiesTable properties={g.group_properties} testId="group-properties" />
          </Stack>
        </Tabs.Panel>
        <Tabs.Panel value="events" pt="md">
          {tab === 'events' ? <GroupEvents index={index} groupKey={g.group_key} /> : null}
        </Tabs.Panel>
      </Tabs>
    </Stack>
  )
}
