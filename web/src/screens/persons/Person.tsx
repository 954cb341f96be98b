// One person: its distinct IDs, its properties (set, edit and remove one, as PostHog's person page does, through
// `$set` / `$unset` events the server applies shortly after), its recent events, the cohorts it is in, and deletion
// (optionally with all its events) behind a confirmation. The tab is in the URL.
import {
  Anchor,
  Badge,
  Button,
  Checkbox,
  Code,
  Group,
  Modal,
  Stack,
  Table,
  Tabs,
  Text,
  TextInput,
  Title,
} from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link, useNavigate, useParams, useSearchParams } from 'react-router'
import { api, get, qs } from '../../api'
import { notify } from '../../components/notify'
import { Empty, ErrorState, errorText, Loading, QueryState } from '../../components/States'
import { useProjectId } from '../../session'
import { type Person as PersonRecord, PropertiesTable, valueText } from './common'

interface EventRecord {
  id: string
  event: string
  distinct_id: string
  timestamp: string
  properties: Record<string, unknown>
}

interface Cohort {
  id: number
  name: string | null
  description?: string
  count?: number | null
  is_static?: boolean
}

const DELETED = Symbol('deleted')
type Pending = Record<string, unknown | typeof DELETED>

/** A property value typed as the user typed it: numbers, booleans and null become JSON, the rest stays text. */
export function parseValue(text: string): unknown {
  const t = text.trim()
  if (t === 'true') return true
  if (t === 'false') return false
  if (t === 'null') return null
  if (t !== '' && !Number.isNaN(Number(t)) && /^-?\d/.test(t)) return Number(t)
  return text
}

function PropertyEditor({
  initialKey,
  initialValue,
  opened,
  onClose,
  onSave,
  saving,
  error,
}: {
  initialKey: string | null
  initialValue: string
  opened: boolean
  onClose: () => void
  onSave: (key: string, value: unknown) => void
  saving: boolean
  error: unknown
}) {
  const [key, setKey] = useState(initialKey ?? '')
  const [value, setValue] = useState(initialValue)
  return (
    <Modal
      closeButtonProps={{ 'aria-label': 'Close' }}
      opened={opened}
      onClose={onClose}
      title={initialKey ? `Edit ${initialKey}` : 'New property'}
    >
      <form
        onSubmit={(e) => {
          e.preventDefault()
          onSave(key.trim(), parseValue(value))
        }}
      >
        <Stack gap="sm">
          <TextInput
            label="Key"
            required
            disabled={initialKey !== null}
            data-autofocus={initialKey === null ? true : undefined}
            value={key}
            onChange={(e) => setKey(e.currentTarget.value)}
          />
          <TextInput
            label="Value"
            description="Numbers, true, false and null are stored as such"
            data-autofocus={initialKey !== null ? true : undefined}
            value={value}
            onChange={(e) => setValue(e.currentTarget.value)}
          />
          {error ? (
            <Text c="red" size="sm" role="alert">
              {errorText(error)}
            </Text>
          ) : null}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={saving} disabled={!key.trim()}>
              Save
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  )
}

function Events({ person }: { person: PersonRecord }) {
  const projectId = useProjectId()
  const events = useQuery({
    queryKey: ['person-events', projectId, person.uuid],
    queryFn: ({ signal }) =>
      get<{ results: EventRecord[] }>(
        `/api/projects/${projectId}/events/${qs({ person_id: person.uuid, limit: 100 })}`,
        signal,
      ),
  })
  return (
    <QueryState query={events}>
      {(page) =>
        page.results.length === 0 ? (
          <Empty title="No events">This person has no events yet.</Empty>
        ) : (
          <Table striped highlightOnHover data-testid="person-events">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Event</Table.Th>
                <Table.Th>URL / Screen</Table.Th>
                <Table.Th>Distinct ID</Table.Th>
                <Table.Th>Time</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {page.results.map((e) => (
                <Table.Tr key={e.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/project/${projectId}/activity/${e.id}`} size="sm">
                      {e.event}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" lineClamp={1}>
                      {valueText(e.properties.$current_url ?? e.properties.$screen_name ?? '—')}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Code>{e.distinct_id}</Code>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{new Date(e.timestamp).toLocaleString()}</Text>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )
      }
    </QueryState>
  )
}

function Cohorts({ person }: { person: PersonRecord }) {
  const projectId = useProjectId()
  const cohorts = useQuery({
    queryKey: ['person-cohorts', projectId, person.uuid],
    queryFn: ({ signal }) =>
      get<{ results: Cohort[] }>(
        `/api/projects/${projectId}/persons/cohorts/${qs({ person_id: person.uuid })}`,
        signal,
      ),
  })
  return (
    <QueryState query={cohorts}>
      {(page) =>
        page.results.length === 0 ? (
          <Empty title="Not in any cohort">This person is in none of the project’s cohorts.</Empty>
        ) : (
          <Table striped data-testid="person-cohorts">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Cohort</Table.Th>
                <Table.Th>Type</Table.Th>
                <Table.Th>Persons</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {page.results.map((c) => (
                <Table.Tr key={c.id}>
                  <Table.Td>{c.name || `Cohort ${c.id}`}</Table.Td>
                  <Table.Td>{c.is_static ? 'Static' : 'Dynamic'}</Table.Td>
                  <Table.Td>{c.count ?? '—'}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )
      }
    </QueryState>
  )
}

export default function Person() {
  const projectId = useProjectId()
  const { personId } = useParams()
  const navigate = useNavigate()
  const client = useQueryClient()
  const [params, setParams] = useSearchParams()
  const tab = params.get('tab') ?? 'properties'
  const [pending, setPending] = useState<Pending>({})
  const [editing, setEditing] = useState<{ key: string | null; value: string } | null>(null)
  const [deleting, setDeleting] = useState(false)
  const [deleteEvents, setDeleteEvents] = useState(false)
  const path = `/api/projects/${projectId}/persons/${personId}/`

  const person = useQuery({
    queryKey: ['person', projectId, personId],
    queryFn: ({ signal }) => get<PersonRecord>(path, signal),
    // Property changes are applied by ingestion: look again until they show.
    refetchInterval: Object.keys(pending).length ? 1000 : false,
  })

  // Drop the edits the server now shows.
  const server = person.data?.properties
  if (server) {
    const settled = Object.entries(pending).filter(([k, v]) =>
      v === DELETED ? !(k in server) : JSON.stringify(server[k]) === JSON.stringify(v),
    )
    if (settled.length) {
      const next = { ...pending }
      for (const [k] of settled) delete next[k]
      setPending(next)
    }
  }

  const setProperty = useMutation({
    mutationFn: ({ key, value }: { key: string; value: unknown }) =>
      api('POST', `${path}update_property/`, { key, value }),
    onSuccess: (_, { key, value }) => {
      setPending((p) => ({ ...p, [key]: value }))
      setEditing(null)
    },
  })
  const unsetProperty = useMutation({
    mutationFn: (key: string) => api('POST', `${path}delete_property/`, { $unset: key }),
    onSuccess: (_, key) => setPending((p) => ({ ...p, [key]: DELETED })),
  })
  const remove = useMutation({
    mutationFn: () => api('DELETE', `${path}${qs({ delete_events: deleteEvents ? 'true' : undefined })}`),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['persons', projectId] })
      notify(deleteEvents ? 'Person deleted; their events are being deleted.' : 'Person deleted.')
      navigate(`/project/${projectId}/persons`)
    },
  })

  const back = (
    <Anchor component={Link} to={`/project/${projectId}/persons`} size="sm">
      ← Persons
    </Anchor>
  )
  if (person.isPending) return <Loading label="Loading person…" />
  if (person.error || !person.data) {
    return (
      <Stack>
        {back}
        <ErrorState error={person.error} retry={() => person.refetch()} />
      </Stack>
    )
  }
  const p = person.data
  const shown: Record<string, unknown> = { ...p.properties }
  for (const [k, v] of Object.entries(pending)) {
    if (v === DELETED) delete shown[k]
    else shown[k] = v
  }

  return (
    <Stack gap="md">
      {back}
      <Group justify="space-between" align="flex-start">
        <Stack gap={4}>
          <Title order={1} size="h2">
            {p.name || p.distinct_ids[0] || p.uuid}
          </Title>
          <Group gap="xs">
            <Text size="sm" c="dimmed">
              First seen {new Date(p.created_at).toLocaleString()}
            </Text>
            {p.is_identified ? <Badge variant="default">Identified</Badge> : <Badge variant="default">Anonymous</Badge>}
          </Group>
          <Group gap={6} data-testid="distinct-ids">
            <Text size="sm">Distinct IDs:</Text>
            {p.distinct_ids.map((d) => (
              <Code key={d}>{d}</Code>
            ))}
          </Group>
        </Stack>
        <Button color="red" variant="light" onClick={() => setDeleting(true)}>
          Delete person
        </Button>
      </Group>

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
          <Tabs.Tab value="cohorts">Cohorts</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="properties" pt="md">
          <Stack gap="sm">
            <Group justify="space-between">
              <Text size="sm" c="dimmed">
                {Object.keys(pending).length ? 'Saving changes…' : `${Object.keys(shown).length} properties`}
              </Text>
              <Button size="xs" variant="light" onClick={() => setEditing({ key: null, value: '' })}>
                New property
              </Button>
            </Group>
            {unsetProperty.error ? <ErrorState error={unsetProperty.error} /> : null}
            <PropertiesTable
              properties={shown}
              actions={(key, value) => (
                <Group gap={4} wrap="nowrap">
                  <Button
                    size="compact-xs"
                    variant="subtle"
                    aria-label={`Edit ${key}`}
                    onClick={() => setEditing({ key, value: valueText(value) })}
                  >
                    Edit
                  </Button>
                  <Button
                    size="compact-xs"
                    variant="subtle"
                    color="red"
                    aria-label={`Delete ${key}`}
                    loading={unsetProperty.isPending && unsetProperty.variables === key}
                    onClick={() => unsetProperty.mutate(key)}
                  >
                    Delete
                  </Button>
                </Group>
              )}
            />
          </Stack>
        </Tabs.Panel>
        <Tabs.Panel value="events" pt="md">
          {tab === 'events' ? <Events person={p} /> : null}
        </Tabs.Panel>
        <Tabs.Panel value="cohorts" pt="md">
          {tab === 'cohorts' ? <Cohorts person={p} /> : null}
        </Tabs.Panel>
      </Tabs>

      {editing ? (
        <PropertyEditor
          initialKey={editing.key}
          initialValue={editing.value}
          opened
          onClose={() => setEditing(null)}
          onSave={(key, value) => setProperty.mutate({ key, value })}
          saving={setProperty.isPending}
          error={setProperty.error}
        />
      ) : null}
      <Modal
        closeButtonProps={{ 'aria-label': 'Close' }}
        opened={deleting}
        onClose={() => setDeleting(false)}
        title="Delete this person?"
      >
        <Stack gap="sm">
          <Text size="sm">
            {p.name || p.distinct_ids[0]} and their distinct IDs will be deleted. This cannot be undone; new events with
            these distinct IDs will create a new person.
          </Text>
          <Checkbox
            label="Also delete all events of this person"
            checked={deleteEvents}
            onChange={(e) => setDeleteEvents(e.currentTarget.checked)}
          />
          {remove.error ? (
            <Text c="red" size="sm" role="alert">
              {errorText(remove.error)}
            </Text>
          ) : null}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setDeleting(false)}>
              Cancel
            </Button>
            <Button color="red" loading={remove.isPending} onClick={() => remove.mutate()}>
              Delete person
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  )
}
