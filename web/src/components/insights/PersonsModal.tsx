// "Who is behind this data point": the ActorsQuery of a clicked point, as a modal listing the persons, each a link
// to their page.
import { Anchor, Badge, Modal, Table, Text } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { Link } from 'react-router'
import { runQuery } from '../../api'
import { Empty, ErrorState, Loading } from '../States'

interface Actor {
  id: string
  distinct_ids?: string[]
  properties?: Record<string, unknown>
  created_at?: string
}

export function actorName(actor: Actor): string {
  const p = actor.properties ?? {}
  return String(p.email ?? p.name ?? p.$name ?? actor.distinct_ids?.[0] ?? actor.id)
}

export function PersonsModal({
  projectId,
  actorsQuery,
  title,
  onClose,
}: {
  projectId: number
  actorsQuery: Record<string, unknown> | null
  title: string
  onClose: () => void
}) {
  const query = useQuery({
    queryKey: ['insight-actors', projectId, actorsQuery],
    queryFn: ({ signal }) => runQuery(projectId, actorsQuery, signal),
    enabled: actorsQuery !== null,
  })
  const columns = (query.data?.columns as string[] | undefined) ?? []
  const rows = (query.data?.results as unknown[][] | undefined) ?? []
  const countAt = columns.indexOf('event_count')
  return (
    <Modal
      opened={actorsQuery !== null}
      onClose={onClose}
      title={`Persons: ${title}`}
      size="lg"
      data-testid="persons-modal"
      closeButtonProps={{ 'aria-label': 'Close' }}
    >
      {query.isPending ? (
        <Loading label="Loading persons…" />
      ) : query.error ? (
        <ErrorState error={query.error} retry={() => query.refetch()} />
      ) : rows.length === 0 ? (
        <Empty title="No persons">No one is behind this data point.</Empty>
      ) : (
        <>
          <Text size="sm" c="dimmed" mb="xs">
            {rows.length}
            {query.data?.hasMore ? '+' : ''} {rows.length === 1 ? 'person' : 'persons'}
          </Text>
          <Table striped data-testid="persons-table">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Person</Table.Th>
                <Table.Th>Distinct ids</Table.Th>
                {countAt >= 0 ? <Table.Th ta="right">Events</Table.Th> : null}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((row) => {
                const actor = row[0] as Actor
                return (
                  <Table.Tr key={actor.id}>
                    <Table.Td>
                      <Anchor component={Link} to={`/project/${projectId}/persons/${actor.id}`} size="sm">
                        {actorName(actor)}
                      </Anchor>
                    </Table.Td>
                    <Table.Td>
                      {(actor.distinct_ids ?? []).slice(0, 3).map((d) => (
                        <Badge key={d} variant="light" color="gray" mr={4} tt="none">
                          {d}
                        </Badge>
                      ))}
                    </Table.Td>
                    {countAt >= 0 ? <Table.Td ta="right">{String(row[countAt])}</Table.Td> : null}
                  </Table.Tr>
                )
              })}
            </Table.Tbody>
          </Table>
        </>
      )}
    </Modal>
  )
}
