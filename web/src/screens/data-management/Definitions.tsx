// Event and property definitions (PostHog's Data management → Events / Properties): search, page, and edit a
// definition's description, tags and verified flag — and a property's type — in a dialog whose id is in the URL.
import {
  Anchor,
  Badge,
  Button,
  Checkbox,
  Group,
  Modal,
  Select,
  Stack,
  Table,
  TagsInput,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core'
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useState } from 'react'
import { api, get, type Page, qs } from '../../api'
import { notify } from '../../components/notify'
import { Empty, ErrorState, errorText, Loading } from '../../components/States'
import { useSearchState } from '../../components/useSearchState'
import { useProjectId } from '../../session'
import { DataNav, Pager, when } from './common'

export interface Definition {
  id: string
  name: string
  description: string | null
  tags: string[]
  verified: boolean
  hidden?: boolean
  property_type?: string | null
  is_numerical?: boolean
  last_seen_at?: string | null
  volume_30_day?: number | null
}

const PROPERTY_TYPES = ['String', 'Numeric', 'Boolean', 'DateTime', 'Duration']
const PROPERTY_KINDS = [
  { value: 'event', label: 'Event properties' },
  { value: 'person', label: 'Person properties' },
  { value: 'session', label: 'Session properties' },
]
const LIMIT = 100

export function DefinitionsScreen({ kind }: { kind: 'event' | 'property' }) {
  const projectId = useProjectId()
  const { params, update } = useSearchState()
  const search = params.get('search') ?? ''
  const type = params.get('type') ?? 'event'
  const offset = Number(params.get('offset') ?? 0) || 0
  const editing = params.get('definition')
  const [draft, setDraft] = useState(search)
  useEffect(() => setDraft(search), [search])
  const resource = kind === 'event' ? 'event_definitions' : 'property_definitions'
  const list = useQuery({
    queryKey: [resource, projectId, search, type, offset],
    queryFn: ({ signal }) =>
      get<Page<Definition>>(
        `/api/projects/${projectId}/${resource}/${qs({
          search,
          type: kind === 'property' ? type : undefined,
          limit: LIMIT,
          offset,
        })}`,
        signal,
      ),
    placeholderData: keepPreviousData,
  })
  const rows = list.data?.results ?? []
  const title = kind === 'event' ? 'Event definitions' : 'Property definitions'

  return (
    <Stack gap="md">
      <Title order={1} size="h2">
        Data management
      </Title>
      <DataNav />
      <Text size="sm" c="dimmed">
        {kind === 'event'
          ? 'Every event your project has received. Describe, tag and verify them so everyone uses the right ones.'
          : 'Every property seen on your events, persons and sessions, with the type insights treat it as.'}
      </Text>
      <Group align="flex-end" gap="sm">
        <form
          onSubmit={(e) => {
            e.preventDefault()
            update({ search: draft, offset: null })
          }}
          style={{ flex: 1, maxWidth: 420 }}
        >
          <TextInput
            label={kind === 'event' ? 'Search events' : 'Search properties'}
            placeholder="Name…"
            value={draft}
            onChange={(e) => setDraft(e.currentTarget.value)}
          />
        </form>
        {kind === 'property' ? (
          <Select
            label="Type"
            data={PROPERTY_KINDS}
            value={type}
            allowDeselect={false}
            onChange={(value) => update({ type: value === 'event' ? null : value, offset: null })}
            w={200}
          />
        ) : null}
      </Group>
      {list.isPending ? (
        <Loading label={`Loading ${title.toLowerCase()}…`} />
      ) : list.error ? (
        <ErrorState error={list.error} retry={() => list.refetch()} />
      ) : rows.length === 0 ? (
        <Empty
          title={search ? `Nothing matches “${search}”` : kind === 'event' ? 'No events yet' : 'No properties yet'}
        >
          {search
            ? 'Try another search.'
            : 'Definitions appear here as soon as events are captured with a project API key.'}
        </Empty>
      ) : (
        <>
          <Table striped highlightOnHover aria-label={title}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                {kind === 'property' ? <Table.Th>Type</Table.Th> : null}
                <Table.Th>Description</Table.Th>
                <Table.Th>Tags</Table.Th>
                {kind === 'event' ? <Table.Th>Last seen</Table.Th> : null}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((d) => (
                <Table.Tr key={d.id} data-testid="definition-row">
                  <Table.Td>
                    <Group gap={6} wrap="nowrap">
                      <Anchor component="button" type="button" onClick={() => update({ definition: d.id })}>
                        {d.name}
                      </Anchor>
                      {d.verified ? (
                        <Badge size="xs" color="teal.9">
                          Verified
                        </Badge>
                      ) : null}
                    </Group>
                  </Table.Td>
                  {kind === 'property' ? <Table.Td>{d.property_type ?? '—'}</Table.Td> : null}
                  <Table.Td>
                    <Text size="sm" c={d.description ? undefined : 'dimmed'} lineClamp={2}>
                      {d.description || 'No description'}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Group gap={4}>
                      {d.tags.map((tag) => (
                        <Badge key={tag} size="sm" variant="outline" color="dark">
                          {tag}
                        </Badge>
                      ))}
                    </Group>
                  </Table.Td>
                  {kind === 'event' ? <Table.Td>{when(d.last_seen_at)}</Table.Td> : null}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          <Pager
            offset={offset}
            limit={LIMIT}
            count={list.data?.count}
            shown={rows.length}
            onChange={(o) => update({ offset: o || null })}
          />
        </>
      )}
      {editing ? <DefinitionEditor kind={kind} id={editing} onClose={() => update({ definition: null })} /> : null}
    </Stack>
  )
}

function DefinitionEditor({ kind, id, onClose }: { kind: 'event' | 'property'; id: string; onClose: () => void }) {
  const projectId = useProjectId()
  const client = useQueryClient()
  const resource = kind === 'event' ? 'event_definitions' : 'property_definitions'
  const path = `/api/projects/${projectId}/${resource}/${id}/`
  const definition = useQuery({ queryKey: [resource, projectId, 'one', id], queryFn: () => get<Definition>(path) })
  const [description, setDescription] = useState('')
  const [tags, setTags] = useState<string[]>([])
  const [verified, setVerified] = useState(false)
  const [propertyType, setPropertyType] = useState<string | null>(null)
  useEffect(() => {
    if (!definition.data) return
    setDescription(definition.data.description ?? '')
    setTags(definition.data.tags)
    setVerified(definition.data.verified)
    setPropertyType(definition.data.property_type ?? null)
  }, [definition.data])
  const save = useMutation({
    mutationFn: () =>
      api<Definition>('PATCH', path, {
        description,
        tags,
        verified,
        ...(kind === 'property' ? { property_type: propertyType } : {}),
      }),
    onSuccess: (saved) => {
      void client.invalidateQueries({ queryKey: [resource, projectId] })
      notify(`Saved ${saved.name}`, 'teal')
      onClose()
    },
  })
  return (
    <Modal
      opened
      onClose={onClose}
      closeButtonProps={{ 'aria-label': 'Close' }}
      title={definition.data ? `Edit ${definition.data.name}` : 'Edit definition'}
    >
      {definition.isPending ? (
        <Loading />
      ) : definition.error ? (
        <ErrorState error={definition.error} retry={() => definition.refetch()} />
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault()
            save.mutate()
          }}
        >
          <Stack gap="sm">
            <Textarea
              label="Description"
              autosize
              minRows={2}
              value={description}
              onChange={(e) => setDescription(e.currentTarget.value)}
              data-autofocus
            />
            <TagsInput label="Tags" description="Press Enter to add a tag" value={tags} onChange={setTags} />
            {kind === 'property' ? (
              <Select
                label="Property type"
                data={PROPERTY_TYPES}
                value={propertyType}
                onChange={setPropertyType}
                clearable
              />
            ) : null}
            <Checkbox
              label="Verified"
              description="Verified definitions are the ones your team should use"
              checked={verified}
              onChange={(e) => setVerified(e.currentTarget.checked)}
            />
            {save.error ? (
              <Text c="red" size="sm" role="alert">
                {errorText(save.error)}
              </Text>
            ) : null}
            <Group justify="flex-end">
              <Button variant="default" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" loading={save.isPending}>
                Save
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  )
}
