// What the person and group screens share: the API's shapes, the tabs between persons and each group type (as
// PostHog's "People and groups" shows them), and a property table.
import { Code, Table, Tabs, Text, TextInput } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { type ReactNode, useState } from 'react'
import { useNavigate } from 'react-router'
import { get } from '../../api'
import { useProjectId } from '../../session'

export interface Person {
  id: string
  uuid: string
  name: string
  distinct_ids: string[]
  properties: Record<string, unknown>
  created_at: string
  is_identified: boolean
}

export interface GroupType {
  group_type: string
  group_type_index: number
  name_singular: string | null
  name_plural: string | null
}

export interface GroupRecord {
  group_type_index: number
  group_key: string
  group_properties: Record<string, unknown>
  created_at: string
}

export const groupTypeLabel = (t: GroupType) => t.name_plural || `${t.group_type}(s)`

export function useGroupTypes() {
  const projectId = useProjectId()
  return useQuery({
    queryKey: ['group-types', projectId],
    queryFn: ({ signal }) => get<GroupType[]>(`/api/projects/${projectId}/groups_types/`, signal),
    staleTime: 60_000,
  })
}

/** Persons, then one tab per group type of the project. */
export function PeopleTabs({ active }: { active: 'persons' | number }) {
  const projectId = useProjectId()
  const navigate = useNavigate()
  const types = useGroupTypes()
  return (
    <Tabs
      value={String(active)}
      onChange={(value) => {
        if (value === null) return
        navigate(value === 'persons' ? `/project/${projectId}/persons` : `/project/${projectId}/groups/${value}`)
      }}
    >
      <Tabs.List>
        <Tabs.Tab value="persons">Persons</Tabs.Tab>
        {(types.data ?? []).map((t) => (
          <Tabs.Tab key={t.group_type_index} value={String(t.group_type_index)}>
            {groupTypeLabel(t)}
          </Tabs.Tab>
        ))}
      </Tabs.List>
    </Tabs>
  )
}

export const valueText = (v: unknown) =>
  v === null || v === undefined ? 'null' : typeof v === 'object' ? JSON.stringify(v) : String(v)

/** Properties sorted by name, with a search box and, per row, the actions the caller gives. */
export function PropertiesTable({
  properties,
  actions,
  testId = 'properties-table',
}: {
  properties: Record<string, unknown>
  actions?: (key: string, value: unknown) => ReactNode
  testId?: string
}) {
  const [search, setSearch] = useState('')
  const entries = Object.entries(properties)
    .filter(([k, v]) => `${k} ${valueText(v)}`.toLowerCase().includes(search.toLowerCase()))
    .sort(([a], [b]) => a.localeCompare(b))
  return (
    <>
      <TextInput label="Search properties" value={search} onChange={(e) => setSearch(e.currentTarget.value)} w={320} />
      {entries.length === 0 ? (
        <Text size="sm" c="dimmed">
          {search ? 'No properties match.' : 'No properties.'}
        </Text>
      ) : (
        <Table striped data-testid={testId}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Property</Table.Th>
              <Table.Th>Value</Table.Th>
              {actions ? <Table.Th w={160}>Actions</Table.Th> : null}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {entries.map(([k, v]) => (
              <Table.Tr key={k} data-property={k}>
                <Table.Td>
                  <Code>{k}</Code>
                </Table.Td>
                <Table.Td style={{ wordBreak: 'break-all' }}>{valueText(v)}</Table.Td>
                {actions ? <Table.Td>{actions(k, v)}</Table.Td> : null}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </>
  )
}

/** The offset of a PostHog `next`/`previous` link, or null. */
export function offsetOf(link: string | null | undefined): number | null {
  if (!link) return null
  const value = new URL(link, 'http://x').searchParams.get('offset')
  return value === null ? 0 : Number(value)
}

/** The cursor of a `next`/`previous` link, or null. */
export function cursorOf(link: string | null | undefined): string | null {
  if (!link) return null
  return new URL(link, 'http://x').searchParams.get('cursor')
}
