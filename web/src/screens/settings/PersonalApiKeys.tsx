// Personal API keys (PostHog's Settings → User → Personal API keys): list, create with scopes (read and write per
// object, or all access) and optionally limited to some projects, the value shown once in a dialog; roll (a new
// value, the old one stops working) and delete.
import {
  Alert,
  Badge,
  Button,
  Checkbox,
  Code,
  CopyButton,
  Group,
  Modal,
  MultiSelect,
  ScrollArea,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
  VisuallyHidden,
} from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { api, get } from '../../api'
import { ConfirmButton } from '../../components/ConfirmButton'
import { Empty, ErrorState, errorText, Loading } from '../../components/States'
import { useSearchState } from '../../components/useSearchState'
import { useProjects } from '../../session'

interface PersonalApiKey {
  id: string
  label: string
  value: string | null
  mask_value: string
  created_at: string
  last_used_at: string | null
  last_rolled_at: string | null
  scopes: string[]
  scoped_teams: number[] | null
  scoped_organizations: string[] | null
}

/** PostHog's scope objects (posthog/scopes.py), as the API accepts them. */
const SCOPE_OBJECTS = [
  'action',
  'activity_log',
  'annotation',
  'batch_export',
  'cohort',
  'dashboard',
  'endpoint',
  'event_definition',
  'experiment',
  'export',
  'feature_flag',
  'group',
  'hog_function',
  'insight',
  'llm_prompt',
  'notebook',
  'organization',
  'organization_member',
  'person',
  'plugin',
  'project',
  'property_definition',
  'query',
  'session_recording',
  'sharing_configuration',
  'survey',
  'user',
  'webhook',
]

/** Names whose first word is an acronym. */
const LABELS: Record<string, string> = { llm_prompt: 'LLM prompt' }
const label = (object: string) => LABELS[object] ?? object.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase())
const KEYS = ['personal-api-keys'] as const
const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : 'Never')

export default function PersonalApiKeys() {
  const { params, update } = useSearchState()
  const keys = useQuery({ queryKey: KEYS, queryFn: () => get<PersonalApiKey[]>('/api/personal_api_keys/') })
  const [shown, setShown] = useState<PersonalApiKey | null>(null)
  const client = useQueryClient()
  const creating = params.get('create') === '1'
  const roll = async (key: PersonalApiKey) => {
    const rolled = await api<PersonalApiKey>('POST', `/api/personal_api_keys/${key.id}/roll/`)
    await client.invalidateQueries({ queryKey: KEYS })
    setShown(rolled)
  }
  return (
    <Stack gap="md" maw={1000}>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Personal API keys
        </Title>
        <Button onClick={() => update({ create: '1' })}>Create personal API key</Button>
      </Group>
      <Text size="sm" c="dimmed">
        Personal API keys let scripts and integrations use the API as you. Give each key only the scopes it needs; its
        value is shown once, when it is created or rolled.
      </Text>
      {keys.isPending ? (
        <Loading label="Loading keys…" />
      ) : keys.error ? (
        <ErrorState error={keys.error} retry={() => keys.refetch()} />
      ) : keys.data.length === 0 ? (
        <Empty title="No personal API keys">Create one to use the API from your own code.</Empty>
      ) : (
        <Table striped aria-label="Personal API keys">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Label</Table.Th>
              <Table.Th>Key</Table.Th>
              <Table.Th>Scopes</Table.Th>
              <Table.Th>Last used</Table.Th>
              <Table.Th>Created</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {keys.data.map((key) => (
              <Table.Tr key={key.id} data-testid="key-row">
                <Table.Td>{key.label}</Table.Td>
                <Table.Td>
                  <Code>{key.mask_value}</Code>
                </Table.Td>
                <Table.Td>
                  <Group gap={4}>
                    {key.scopes.map((s) => (
                      <Badge key={s} size="sm" color="blue.8">
                        {s === '*' ? 'All access' : s}
                      </Badge>
                    ))}
                  </Group>
                  {key.scoped_teams?.length ? (
                    <Text size="xs" c="dimmed">
                      Projects: {key.scoped_teams.join(', ')}
                    </Text>
                  ) : null}
                </Table.Td>
                <Table.Td>{when(key.last_used_at)}</Table.Td>
                <Table.Td>{when(key.created_at)}</Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap">
                    <ConfirmButton
                      size="xs"
                      color="blue"
                      title={`Roll “${key.label}”`}
                      message="The key gets a new value; the current one stops working at once."
                      confirmLabel="Roll key"
                      onConfirm={() => roll(key)}
                      aria-label={`Roll ${key.label}`}
                    >
                      Roll
                    </ConfirmButton>
                    <ConfirmButton
                      size="xs"
                      title={`Delete “${key.label}”`}
                      message="Anything using this key loses access at once. This cannot be undone."
                      confirmLabel="Delete key"
                      onConfirm={async () => {
                        await api('DELETE', `/api/personal_api_keys/${key.id}/`)
                        await client.invalidateQueries({ queryKey: KEYS })
                      }}
                      aria-label={`Delete ${key.label}`}
                    >
                      Delete
                    </ConfirmButton>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {creating ? (
        <CreateKey
          onClose={() => update({ create: null })}
          onCreated={(key) => {
            update({ create: null })
            setShown(key)
          }}
        />
      ) : null}
      <Modal
        opened={shown !== null}
        onClose={() => setShown(null)}
        closeButtonProps={{ 'aria-label': 'Close' }}
        title="Your new personal API key"
        closeOnClickOutside={false}
      >
        {shown ? (
          <Stack gap="sm">
            <Alert color="yellow">Copy it now: the key will not be shown again.</Alert>
            <Code block data-testid="new-key-value">
              {shown.value}
            </Code>
            <Group justify="flex-end">
              <CopyButton value={shown.value ?? ''}>
                {({ copied, copy }) => (
                  <Button variant="light" color={copied ? 'teal' : undefined} onClick={copy}>
                    {copied ? 'Copied' : 'Copy key'}
                  </Button>
                )}
              </CopyButton>
              <Button onClick={() => setShown(null)}>Done</Button>
            </Group>
          </Stack>
        ) : null}
      </Modal>
    </Stack>
  )
}

function CreateKey({ onClose, onCreated }: { onClose: () => void; onCreated: (key: PersonalApiKey) => void }) {
  const client = useQueryClient()
  const projects = useProjects()
  const [name, setName] = useState('')
  const [all, setAll] = useState(false)
  const [scopes, setScopes] = useState<Set<string>>(new Set())
  const [teams, setTeams] = useState<string[]>([])
  const create = useMutation({
    mutationFn: () =>
      api<PersonalApiKey>('POST', '/api/personal_api_keys/', {
        label: name,
        scopes: all ? ['*'] : [...scopes],
        scoped_teams: teams.length ? teams.map(Number) : null,
      }),
    onSuccess: (key) => {
      void client.invalidateQueries({ queryKey: KEYS })
      onCreated(key)
    },
  })
  const toggle = (object: string, action: 'read' | 'write', on: boolean) =>
    setScopes((current) => {
      const next = new Set(current)
      const read = `${object}:read`
      const write = `${object}:write`
      if (action === 'write') {
        if (on) {
          next.add(write)
          next.delete(read) // write includes read
        } else next.delete(write)
      } else if (on) next.add(read)
      else {
        next.delete(read)
        next.delete(write)
      }
      return next
    })
  return (
    <Modal
      opened
      onClose={onClose}
      closeButtonProps={{ 'aria-label': 'Close' }}
      title="Create personal API key"
      size="lg"
    >
      <form
        onSubmit={(e) => {
          e.preventDefault()
          create.mutate()
        }}
      >
        <Stack gap="sm">
          <TextInput
            label="Label"
            required
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            data-autofocus
          />
          <MultiSelect
            label="Projects"
            description="Limit the key to these projects; none for every project you can access"
            data={(projects.data ?? []).map((p) => ({ value: String(p.id), label: p.name }))}
            value={teams}
            onChange={setTeams}
            clearable
          />
          <Checkbox
            label="All access"
            description="Every scope, now and later"
            checked={all}
            onChange={(e) => setAll(e.currentTarget.checked)}
          />
          {all ? null : (
            <ScrollArea.Autosize mah={320} type="auto">
              <Table aria-label="Scopes" withRowBorders={false} verticalSpacing={2}>
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Scope</Table.Th>
                    <Table.Th>Read</Table.Th>
                    <Table.Th>Write</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {SCOPE_OBJECTS.map((object) => {
                    const write = scopes.has(`${object}:write`)
                    return (
                      <Table.Tr key={object}>
                        <Table.Td>{label(object)}</Table.Td>
                        <Table.Td>
                          <Checkbox
                            aria-label={`${object}:read`}
                            checked={write || scopes.has(`${object}:read`)}
                            disabled={write}
                            onChange={(e) => toggle(object, 'read', e.currentTarget.checked)}
                          />
                        </Table.Td>
                        <Table.Td>
                          <Checkbox
                            aria-label={`${object}:write`}
                            checked={write}
                            onChange={(e) => toggle(object, 'write', e.currentTarget.checked)}
                          />
                        </Table.Td>
                      </Table.Tr>
                    )
                  })}
                </Table.Tbody>
              </Table>
            </ScrollArea.Autosize>
          )}
          {create.error ? (
            <Text c="red" size="sm" role="alert" data-testid="key-error">
              {errorText(create.error)}
            </Text>
          ) : null}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={create.isPending}>
              Create key
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  )
}
