// The dashboards of the project, as PostHog lists them: search, only pinned, pin from the list, and a new
// dashboard (name and description) that opens right away. The search and the pinned switch live in the URL.
import { ActionIcon, Badge, Button, Group, Modal, Stack, Switch, Text, Textarea, TextInput, Title } from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useState } from 'react'
import { useNavigate, useSearchParams } from 'react-router'
import { api } from '../../api'
import { creatorName, ListView, NameCell } from '../../components/ListView'
import { Empty, ErrorState, errorText } from '../../components/States'
import { useProjectId } from '../../session'
import { type Dashboard, type DashboardBasic, dashboardsPath, listDashboards } from './api'

function NewDashboard({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const projectId = useProjectId()
  const navigate = useNavigate()
  const client = useQueryClient()
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const create = useMutation({
    mutationFn: () => api<Dashboard>('POST', dashboardsPath(projectId), { name, description }),
    onSuccess: (dashboard) => {
      void client.invalidateQueries({ queryKey: ['dashboards', projectId] })
      navigate(`/project/${projectId}/dashboards/${dashboard.id}`)
    },
  })
  return (
    <Modal closeButtonProps={{ 'aria-label': 'Close' }} opened={opened} onClose={onClose} title="New dashboard">
      <form
        onSubmit={(e) => {
          e.preventDefault()
          create.mutate()
        }}
      >
        <Stack gap="sm">
          <TextInput
            label="Name"
            required
            data-autofocus
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
          />
          <Textarea
            label="Description"
            autosize
            minRows={2}
            value={description}
            onChange={(e) => setDescription(e.currentTarget.value)}
          />
          {create.error ? (
            <Text c="red" size="sm" role="alert">
              {errorText(create.error)}
            </Text>
          ) : null}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={create.isPending} disabled={!name.trim()}>
              Create
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  )
}

export default function Dashboards() {
  const projectId = useProjectId()
  const client = useQueryClient()
  const [params, setParams] = useSearchParams()
  const search = params.get('search') ?? ''
  const pinned = params.get('pinned') === 'true'
  const [draft, setDraft] = useState(search)
  const [debounced] = useDebouncedValue(draft, 250)
  const [creating, setCreating] = useState(params.get('new') === '1')

  useEffect(() => {
    if (debounced === search) return
    const next = new URLSearchParams(params)
    if (debounced) next.set('search', debounced)
    else next.delete('search')
    setParams(next, { replace: true })
  }, [debounced, search, params, setParams])

  const list = useQuery({
    queryKey: ['dashboards', projectId, search, pinned],
    queryFn: ({ signal }) => listDashboards(projectId, { search, pinned }, signal),
    placeholderData: keepPreviousData,
  })
  const pin = useMutation({
    mutationFn: (d: DashboardBasic) => api('PATCH', `${dashboardsPath(projectId)}${d.id}/`, { pinned: !d.pinned }),
    onSettled: () => client.invalidateQueries({ queryKey: ['dashboards', projectId] }),
  })
  const _rows = list.data?.results ?? []

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <Title order={1} size="h2">
          Dashboards
        </Title>
        <Button onClick={() => setCreating(true)}>New dashboard</Button>
      </Group>
      <Group align="flex-end">
        <TextInput
          label="Search dashboards"
          placeholder="Search for dashboards"
          value={draft}
          onChange={(e) => setDraft(e.currentTarget.value)}
          w={320}
        />
        <Switch
          label="Pinned"
          checked={pinned}
          onChange={(e) => {
            const next = new URLSearchParams(params)
            if (e.currentTarget.checked) next.set('pinned', 'true')
            else next.delete('pinned')
            setParams(next, { replace: true })
          }}
          mb={8}
        />
      </Group>
      {pin.error ? <ErrorState error={pin.error} /> : null}
      <ListView
        query={list}
        rows={list.data?.results}
        loadingLabel="Loading dashboards…"
        testId="dashboards-table"
        rowKey={(d) => d.id}
        empty={
          <Empty
            title={search || pinned ? 'No dashboards match' : 'No dashboards yet'}
            action={
              search || pinned ? undefined : (
                <Button variant="light" onClick={() => setCreating(true)}>
                  Create a dashboard
                </Button>
              )
            }
          >
            {search || pinned
              ? 'Try another search, or turn off the pinned filter.'
              : 'Dashboards gather insights and notes on one page, with filters that apply to every tile.'}
          </Empty>
        }
        columns={[
          {
            header: 'Pinned',
            hiddenHeader: true,
            width: 48,
            cell: (d) => (
              <ActionIcon
                variant="subtle"
                color={d.pinned ? 'yellow' : 'gray'}
                aria-label={d.pinned ? `Unpin ${d.name ?? 'dashboard'}` : `Pin ${d.name ?? 'dashboard'}`}
                aria-pressed={d.pinned}
                onClick={() => pin.mutate(d)}
              >
                <span aria-hidden>{d.pinned ? '★' : '☆'}</span>
              </ActionIcon>
            ),
          },
          {
            header: 'Name',
            cell: (d) => <NameCell to={`/project/${projectId}/dashboards/${d.id}`} name={d.name || 'Untitled'} />,
          },
          {
            header: 'Description',
            cell: (d) => (
              <Text size="sm" lineClamp={1}>
                {d.description}
              </Text>
            ),
          },
          {
            header: 'Tags',
            cell: (d) => (
              <Group gap={4}>
                {d.tags.map((tag) => (
                  <Badge key={tag} variant="light" size="sm">
                    {tag}
                  </Badge>
                ))}
              </Group>
            ),
          },
          { header: 'Created by', cell: (d) => <Text size="sm">{creatorName(d.created_by)}</Text> },
          { header: 'Created', cell: (d) => <Text size="sm">{new Date(d.created_at).toLocaleString()}</Text> },
        ]}
      />
      <NewDashboard opened={creating} onClose={() => setCreating(false)} />
    </Stack>
  )
}
