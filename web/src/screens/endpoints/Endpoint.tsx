// One saved endpoint (`endpoints/:name`): its query edited in place (HogQL in the SQL editor's editor, an insight
// query as JSON) and saved with PATCH — a changed query makes a new version — and, on tabs kept in the URL, its
// versions with their queries, a run with variables and the response, materialization status and schedule, and
// its API (OpenAPI document and a ready `curl` command). Deleted behind a confirmation.
import {
  Alert,
  Anchor,
  Badge,
  Breadcrumbs,
  Button,
  Group,
  NumberInput,
  Stack,
  Switch,
  Tabs,
  Text,
  Textarea,
  Title,
} from '@mantine/core'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useMemo, useState } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { api, get, qs } from '../../api'
import { ConfirmButton } from '../../components/ConfirmButton'
import { notify } from '../../components/notify'
import { ErrorState, errorText, Loading } from '../../components/States'
import { useSearchState } from '../../components/useSearchState'
import { useProjectId } from '../../session'
import { MaterializationBadge } from './Endpoints'
import { defaultsOf, type Endpoint, hogqlNode, kindLabel, type QueryNode, when, who } from './model'
import { ApiPanel, MaterializationPanel, RunPanel, VersionsPanel } from './panels'
import { type HogQLDraft, HogQLQueryEditor, InsightQueryEditor } from './QueryEditor'

const TABS = ['query', 'versions', 'run', 'materialization', 'api'] as const

function QueryTab({ endpoint }: { endpoint: Endpoint }) {
  const projectId = useProjectId()
  const client = useQueryClient()
  const isHogQL = endpoint.query.kind === 'HogQLQuery'
  const initialText = isHogQL ? String(endpoint.query.query ?? '') : ''
  const [hogql, setHogql] = useState<HogQLDraft>({ text: initialText, defaults: defaultsOf(endpoint.query) })
  const [json, setJson] = useState(isHogQL ? '' : JSON.stringify(endpoint.query, null, 2))
  const [description, setDescription] = useState(endpoint.description)
  const [cacheAge, setCacheAge] = useState<number | string>(endpoint.cache_age_seconds ?? '')
  const [active, setActive] = useState(endpoint.is_active)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)

  const save = async () => {
    setError(null)
    let query: QueryNode
    if (isHogQL) query = hogqlNode(hogql.text, hogql.defaults, endpoint.query)
    else {
      try {
        query = JSON.parse(json) as QueryNode
      } catch {
        setError(new Error('The query is not valid JSON.'))
        return
      }
    }
    const newCacheAge = cacheAge === '' ? null : Number(cacheAge)
    setBusy(true)
    try {
      const saved = await api<Endpoint>('PATCH', `/api/projects/${projectId}/endpoints/${endpoint.name}/`, {
        query,
        description,
        // sent only when changed (the server reads a null number as 0, which it refuses)
        ...(newCacheAge !== endpoint.cache_age_seconds ? { cache_age_seconds: newCacheAge } : {}),
        ...(active !== endpoint.is_active ? { is_active: active } : {}),
      })
      notify(
        saved.current_version > endpoint.current_version
          ? `Saved as version ${saved.current_version}`
          : 'Saved (the query is unchanged: no new version)',
      )
      client.setQueryData(['endpoint', projectId, endpoint.name], saved)
      await client.invalidateQueries({ queryKey: ['endpoint-versions', projectId, endpoint.name] })
      await client.invalidateQueries({ queryKey: ['endpoint-openapi', projectId, endpoint.name] })
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }

  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        void save()
      }}
    >
      <Stack gap="md">
        {isHogQL ? (
          <HogQLQueryEditor initialText={initialText} draft={hogql} onChange={setHogql} onSubmit={() => void save()} />
        ) : (
          <InsightQueryEditor value={json} onChange={setJson} />
        )}
        <Group gap="xs">
          {isHogQL ? (
            <Anchor component={Link} to={`/project/${projectId}/sql${qs({ q: hogql.text })}`} size="sm">
              Open in the SQL editor
            </Anchor>
          ) : null}
          {endpoint.derived_from_insight ? (
            <Anchor component={Link} to={`/project/${projectId}/insights/${endpoint.derived_from_insight}`} size="sm">
              Open the insight it came from
            </Anchor>
          ) : null}
        </Group>
        <Textarea label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
        <Group align="flex-end">
          <NumberInput
            label="Cache age (seconds)"
            description="300 to 86,400; empty for the project's default."
            value={cacheAge}
            onChange={setCacheAge}
            min={300}
            max={86_400}
            allowDecimal={false}
            w={320}
          />
          <Switch
            label="Active (an inactive endpoint does not run)"
            checked={active}
            onChange={(e) => setActive(e.currentTarget.checked)}
          />
        </Group>
        <Text size="xs" c="dimmed">
          Saving a changed query makes a new version; the description, cache age and status change the latest one.
        </Text>
        {error ? (
          <Alert color="red" role="alert" title="Could not save" data-testid="save-error">
            {errorText(error)}
          </Alert>
        ) : null}
        <Group>
          <Button type="submit" loading={busy}>
            Save
          </Button>
        </Group>
      </Stack>
    </form>
  )
}

export default function EndpointPage() {
  const projectId = useProjectId()
  const { name = '' } = useParams()
  const navigate = useNavigate()
  const { params, update } = useSearchState()
  const tab = (TABS as readonly string[]).includes(params.get('tab') ?? '') ? (params.get('tab') as string) : 'query'
  const endpoint = useQuery({
    queryKey: ['endpoint', projectId, name],
    queryFn: ({ signal }) => get<Endpoint>(`/api/projects/${projectId}/endpoints/${encodeURIComponent(name)}/`, signal),
  })
  const defaults = useMemo(() => defaultsOf(endpoint.data?.query), [endpoint.data])

  const crumbs = (
    <Breadcrumbs>
      <Anchor component={Link} to={`/project/${projectId}/endpoints`} size="sm">
        Endpoints
      </Anchor>
      <Text size="sm">{name}</Text>
    </Breadcrumbs>
  )
  if (endpoint.isPending)
    return (
      <Stack>
        {crumbs}
        <Loading label="Loading the endpoint…" />
      </Stack>
    )
  if (endpoint.error)
    return (
      <Stack>
        {crumbs}
        <ErrorState error={endpoint.error} retry={() => endpoint.refetch()} />
      </Stack>
    )
  const e = endpoint.data
  return (
    <Stack gap="md">
      {crumbs}
      <Group justify="space-between" align="flex-start">
        <Stack gap={4}>
          <Group gap="sm">
            <Title order={1} size="h2">
              {e.name}
            </Title>
            <Badge variant="light" color={e.is_active ? 'green' : 'gray'}>
              {e.is_active ? 'Active' : 'Inactive'}
            </Badge>
            <Badge variant="light" color="blue" data-testid="current-version">
              v{e.current_version}
            </Badge>
            {e.is_materialized ? <MaterializationBadge endpoint={e} /> : null}
          </Group>
          <Text size="sm" c="dimmed">
            {kindLabel(e.query)} · {e.versions_count} {e.versions_count === 1 ? 'version' : 'versions'} · created{' '}
            {when(e.created_at)} by {who(e.created_by)} · last run {when(e.last_executed_at)}
          </Text>
        </Stack>
        <ConfirmButton
          title={`Delete ${e.name}?`}
          message="The endpoint, all its versions and its materialized tables are deleted. Callers get a 404."
          confirmLabel="Delete endpoint"
          onConfirm={async () => {
            await api('DELETE', `/api/projects/${projectId}/endpoints/${e.name}/`)
            notify(`Endpoint ${e.name} deleted`)
            navigate(`/project/${projectId}/endpoints`)
          }}
        >
          Delete
        </ConfirmButton>
      </Group>
      <Tabs value={tab} onChange={(value) => update({ tab: value === 'query' ? null : value })} keepMounted={false}>
        <Tabs.List>
          <Tabs.Tab value="query">Query</Tabs.Tab>
          <Tabs.Tab value="versions">Versions ({e.versions_count})</Tabs.Tab>
          <Tabs.Tab value="run">Run</Tabs.Tab>
          <Tabs.Tab value="materialization">Materialization</Tabs.Tab>
          <Tabs.Tab value="api">API</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="query" pt="md">
          <QueryTab key={e.current_version} endpoint={e} />
        </Tabs.Panel>
        <Tabs.Panel value="versions" pt="md">
          <VersionsPanel endpoint={e} />
        </Tabs.Panel>
        <Tabs.Panel value="run" pt="md">
          <RunPanel key={e.current_version} endpoint={e} defaults={defaults} />
        </Tabs.Panel>
        <Tabs.Panel value="materialization" pt="md">
          <MaterializationPanel endpoint={e} />
        </Tabs.Panel>
        <Tabs.Panel value="api" pt="md">
          <ApiPanel endpoint={e} defaults={defaults} />
        </Tabs.Panel>
      </Tabs>
    </Stack>
  )
}
