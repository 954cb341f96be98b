// The tabs of an endpoint's page other than its query: versions with their queries, a run with variables and its
// response, the materialization status and schedule, and the API (OpenAPI document and a ready `curl` command).
import {
  Accordion,
  Alert,
  Anchor,
  Badge,
  Button,
  Code,
  CopyButton,
  Group,
  Select,
  Stack,
  Switch,
  Table,
  Text,
  TextInput,
} from '@mantine/core'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useState } from 'react'
import { Link } from 'react-router'
import { api, get, qs } from '../../api'
import { notify } from '../../components/notify'
import { ErrorState, errorText, Loading, QueryState } from '../../components/States'
import { useSearchState } from '../../components/useSearchState'
import { useProjectId } from '../../session'
import { MaterializationBadge } from './Endpoints'
import {
  curlCommand,
  type Endpoint,
  type EndpointVersion,
  frequencyLabel,
  kindLabel,
  type Materialization,
  SYNC_FREQUENCIES,
  when,
  who,
} from './model'

const base = (projectId: number, name: string) => `/api/projects/${projectId}/endpoints/${encodeURIComponent(name)}`

export function useVersions(name: string) {
  const projectId = useProjectId()
  return useQuery({
    queryKey: ['endpoint-versions', projectId, name],
    queryFn: ({ signal }) => get<EndpointVersion[]>(`${base(projectId, name)}/versions/`, signal),
  })
}

function QueryText({ query }: { query: EndpointVersion['query'] }) {
  return (
    <Code block data-testid="version-query" style={{ whiteSpace: 'pre-wrap' }}>
      {query.kind === 'HogQLQuery' ? String(query.query ?? '') : JSON.stringify(query, null, 2)}
    </Code>
  )
}

export function VersionsPanel({ endpoint }: { endpoint: Endpoint }) {
  const versions = useVersions(endpoint.name)
  const { update } = useSearchState()
  return (
    <QueryState query={versions}>
      {(list) => (
        <Accordion multiple defaultValue={[String(endpoint.current_version)]} data-testid="versions">
          {list.map((v) => (
            <Accordion.Item key={v.id} value={String(v.version)} data-testid="version">
              <Accordion.Control>
                <Group gap="sm">
                  <Text fw={600}>Version {v.version}</Text>
                  {v.version === endpoint.current_version ? (
                    <Badge variant="light" color="blue">
                      Latest
                    </Badge>
                  ) : null}
                  {v.is_materialized ? (
                    <Badge variant="light" color="green">
                      Materialized
                    </Badge>
                  ) : null}
                  <Text size="sm" c="dimmed">
                    {when(v.created_at)} by {who(v.created_by)}
                  </Text>
                </Group>
              </Accordion.Control>
              <Accordion.Panel>
                <Stack gap="xs">
                  {v.description ? <Text size="sm">{v.description}</Text> : null}
                  <QueryText query={v.query} />
                  <Group gap="xs">
                    <Button size="xs" variant="light" onClick={() => update({ tab: 'run', version: v.version })}>
                      Run version {v.version}
                    </Button>
                  </Group>
                </Stack>
              </Accordion.Panel>
            </Accordion.Item>
          ))}
        </Accordion>
      )}
    </QueryState>
  )
}

interface OpenApiDoc {
  paths: Record<
    string,
    { post: { requestBody: { content: { 'application/json': { schema: { properties: { variables: Vars } } } } } } }
  >
}
type Vars = { properties: Record<string, { type: string; description?: string }> }

/** The variables a version takes, as its OpenAPI document types them. */
function useOpenApi(name: string, version: number | null) {
  const projectId = useProjectId()
  return useQuery({
    queryKey: ['endpoint-openapi', projectId, name, version],
    queryFn: ({ signal }) =>
      get<OpenApiDoc>(`${base(projectId, name)}/openapi.json${qs({ version: version ?? undefined })}`, signal),
  })
}

function variablesIn(doc: OpenApiDoc | undefined): Record<string, { type: string; description?: string }> {
  const path = doc ? Object.values(doc.paths)[0] : undefined
  return path?.post.requestBody.content['application/json'].schema.properties.variables.properties ?? {}
}

interface RunAnswer {
  results: unknown
  columns?: string[]
  endpoint_version: number
  endpoint_materialized?: boolean
  [key: string]: unknown
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return ''
  return typeof value === 'object' ? JSON.stringify(value) : String(value)
}

export function RunPanel({ endpoint, defaults }: { endpoint: Endpoint; defaults: Record<string, string> }) {
  const projectId = useProjectId()
  const { params, update } = useSearchState()
  const versions = useVersions(endpoint.name)
  const version = params.get('version') ? Number(params.get('version')) : null
  const refresh = params.get('refresh') ?? 'cache'
  const doc = useOpenApi(endpoint.name, version)
  const variables = variablesIn(doc.data)
  const [values, setValues] = useState<Record<string, string>>(defaults)
  const [answer, setAnswer] = useState<RunAnswer | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  const run = async () => {
    setBusy(true)
    setError(null)
    setAnswer(null)
    try {
      const sent: Record<string, unknown> = {}
      for (const [k, spec] of Object.entries(variables)) {
        const v = values[k]
        if (v === undefined || v === '') continue
        sent[k] = spec.type === 'integer' || spec.type === 'number' ? Number(v) : v
      }
      const body = { variables: sent, refresh, ...(version === null ? {} : { version }) }
      setAnswer(await api<RunAnswer>('POST', `${base(projectId, endpoint.name)}/run/`, body))
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }

  const rows = Array.isArray(answer?.results) ? (answer.results as unknown[]) : []
  const tabular = answer?.columns && rows.every((r) => Array.isArray(r))
  return (
    <Stack gap="md">
      <form
        onSubmit={(e) => {
          e.preventDefault()
          void run()
        }}
      >
        <Stack gap="sm">
          <Group align="flex-end" gap="sm">
            <Select
              label="Version"
              data={[
                { value: '', label: `Latest (v${endpoint.current_version})` },
                ...(versions.data ?? []).map((v) => ({ value: String(v.version), label: `Version ${v.version}` })),
              ]}
              value={version === null ? '' : String(version)}
              allowDeselect={false}
              onChange={(v) => update({ version: v || null })}
              w={200}
            />
            <Select
              label="Refresh"
              data={[
                { value: 'cache', label: 'From cache when fresh' },
                { value: 'force', label: 'Run again' },
                { value: 'direct', label: 'Live, skip the materialized table' },
              ]}
              value={refresh}
              allowDeselect={false}
              onChange={(v) => update({ refresh: v === 'cache' ? null : v })}
              w={290}
            />
          </Group>
          {doc.error ? <ErrorState error={doc.error} /> : null}
          {Object.keys(variables).length > 0 ? (
            <Group gap="sm" data-testid="run-variables">
              {Object.entries(variables).map(([k, spec]) => (
                <TextInput
                  key={k}
                  label={`Variable ${k}`}
                  description={spec.description}
                  value={values[k] ?? ''}
                  onChange={(e) => {
                    const value = e.currentTarget.value
                    setValues((old) => ({ ...old, [k]: value }))
                  }}
                  w={260}
                />
              ))}
            </Group>
          ) : null}
          <Group>
            <Button type="submit" loading={busy}>
              Run
            </Button>
          </Group>
        </Stack>
      </form>
      {busy ? <Loading label="Running…" /> : null}
      {error ? (
        <Alert color="red" role="alert" title="The run failed" data-testid="run-error">
          {errorText(error)}
        </Alert>
      ) : null}
      {answer ? (
        <Stack gap="xs" data-testid="run-answer">
          <Text size="sm" data-testid="run-summary">
            Version {answer.endpoint_version} ·{' '}
            {answer.endpoint_materialized ? 'read from the materialized table' : 'run live'}
            {tabular ? ` · ${rows.length} ${rows.length === 1 ? 'row' : 'rows'}` : ''}
          </Text>
          {tabular ? (
            <Table.ScrollContainer minWidth={400}>
              <Table striped data-testid="run-results">
                <Table.Thead>
                  <Table.Tr>
                    {answer.columns?.map((c) => (
                      <Table.Th key={c}>{c}</Table.Th>
                    ))}
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {rows.map((row, i) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity of their own
                    <Table.Tr key={i}>
                      {(row as unknown[]).map((v, j) => (
                        // biome-ignore lint/suspicious/noArrayIndexKey: positional cells
                        <Table.Td key={j}>{cell(v)}</Table.Td>
                      ))}
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          ) : null}
          <Text size="sm" fw={600}>
            Response
          </Text>
          <Code
            block
            data-testid="run-response"
            tabIndex={0}
            aria-label="Run response"
            style={{ maxHeight: 360, overflow: 'auto' }}
          >
            {JSON.stringify(answer, null, 2)}
          </Code>
        </Stack>
      ) : null}
    </Stack>
  )
}

export function MaterializationPanel({ endpoint }: { endpoint: Endpoint }) {
  const projectId = useProjectId()
  const client = useQueryClient()
  const status = useQuery({
    queryKey: ['endpoint-materialization', projectId, endpoint.name],
    queryFn: ({ signal }) => get<Materialization>(`${base(projectId, endpoint.name)}/materialization_status/`, signal),
    // while a sync is due or running, look again every 2 s
    refetchInterval: (q) =>
      endpoint.is_materialized && (!q.state.data?.last_materialized_at || q.state.data?.status === 'Running')
        ? 2000
        : false,
  })
  // the page's header shows the status too: refresh it when a sync moves it on
  const seen = status.data?.status
  useEffect(() => {
    if (seen && endpoint.is_materialized && seen !== endpoint.materialization.status) {
      void client.invalidateQueries({ queryKey: ['endpoint', projectId, endpoint.name] })
    }
  }, [seen, endpoint.is_materialized, endpoint.materialization.status, endpoint.name, client, projectId])
  const [enabled, setEnabled] = useState(endpoint.is_materialized)
  const [frequency, setFrequency] = useState(endpoint.materialization.sync_frequency ?? '24hour')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => {
    setEnabled(endpoint.is_materialized)
    if (endpoint.materialization.sync_frequency) setFrequency(endpoint.materialization.sync_frequency)
  }, [endpoint.is_materialized, endpoint.materialization.sync_frequency])

  const save = async () => {
    setBusy(true)
    setError(null)
    try {
      await api('PATCH', `${base(projectId, endpoint.name)}/`, {
        is_materialized: enabled,
        ...(enabled ? { sync_frequency: frequency } : {}),
      })
      notify(enabled ? 'Materialization scheduled' : 'Materialization turned off')
      await client.invalidateQueries({ queryKey: ['endpoint', projectId, endpoint.name] })
      await client.invalidateQueries({ queryKey: ['endpoint-materialization', projectId, endpoint.name] })
      await client.invalidateQueries({ queryKey: ['endpoint-versions', projectId, endpoint.name] })
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }

  const m = status.data
  return (
    <Stack gap="md">
      <Text size="sm" c="dimmed">
        A materialized endpoint stores its latest version's results in a table, refreshed on its schedule; runs read the
        table while it is fresh, else run the query live.
      </Text>
      <QueryState query={status}>
        {(m) => (
          <Table withTableBorder w="fit-content" data-testid="materialization">
            <Table.Tbody>
              <Table.Tr>
                <Table.Th>Status</Table.Th>
                <Table.Td data-testid="materialization-status">
                  {endpoint.is_materialized ? (
                    <MaterializationBadge endpoint={{ is_materialized: true, materialization: m }} />
                  ) : m.can_materialize ? (
                    'Not materialized'
                  ) : (
                    'Cannot be materialized'
                  )}
                </Table.Td>
              </Table.Tr>
              {m.reason ? (
                <Table.Tr>
                  <Table.Th>Why not</Table.Th>
                  <Table.Td>{m.reason}</Table.Td>
                </Table.Tr>
              ) : null}
              {endpoint.is_materialized ? (
                <>
                  <Table.Tr>
                    <Table.Th>Schedule</Table.Th>
                    <Table.Td>{frequencyLabel(m.sync_frequency)}</Table.Td>
                  </Table.Tr>
                  <Table.Tr>
                    <Table.Th>Last materialized</Table.Th>
                    <Table.Td data-testid="last-materialized">{when(m.last_materialized_at)}</Table.Td>
                  </Table.Tr>
                  <Table.Tr>
                    <Table.Th>Next refresh</Table.Th>
                    <Table.Td>{when(m.next_run_at)}</Table.Td>
                  </Table.Tr>
                  {m.error ? (
                    <Table.Tr>
                      <Table.Th>Last error</Table.Th>
                      <Table.Td c="red">{m.error}</Table.Td>
                    </Table.Tr>
                  ) : null}
                </>
              ) : null}
            </Table.Tbody>
          </Table>
        )}
      </QueryState>
      <form
        onSubmit={(e) => {
          e.preventDefault()
          void save()
        }}
      >
        <Group align="flex-end" gap="md">
          <Switch
            label="Materialize"
            checked={enabled}
            disabled={!endpoint.is_active || (!endpoint.is_materialized && m?.can_materialize === false)}
            onChange={(e) => setEnabled(e.currentTarget.checked)}
          />
          <Select
            label="Refresh schedule"
            data={SYNC_FREQUENCIES}
            value={frequency}
            allowDeselect={false}
            disabled={!enabled}
            onChange={(v) => v && setFrequency(v)}
            w={200}
          />
          <Button type="submit" loading={busy}>
            Save materialization
          </Button>
        </Group>
      </form>
      {!endpoint.is_active ? (
        <Text size="sm" c="dimmed">
          An inactive endpoint cannot be materialized.
        </Text>
      ) : null}
      {error ? (
        <Alert color="red" role="alert" title="Could not change materialization" data-testid="materialization-error">
          {errorText(error)}
        </Alert>
      ) : null}
    </Stack>
  )
}

function Copy({ value, label }: { value: string; label: string }) {
  return (
    <CopyButton value={value}>
      {({ copied, copy }) => (
        <Button size="xs" variant="light" onClick={copy} aria-label={label}>
          {copied ? 'Copied' : 'Copy'}
        </Button>
      )}
    </CopyButton>
  )
}

export function ApiPanel({ endpoint, defaults }: { endpoint: Endpoint; defaults: Record<string, string> }) {
  const projectId = useProjectId()
  const doc = useOpenApi(endpoint.name, null)
  const curl = curlCommand(endpoint.url, defaults)
  const openapiUrl = `${base(projectId, endpoint.name)}/openapi.json`
  const text = doc.data ? JSON.stringify(doc.data, null, 2) : ''
  return (
    <Stack gap="md">
      <Text size="sm">
        Run <b>{endpoint.name}</b> ({kindLabel(endpoint.query)}) with a personal API key that has the{' '}
        <Code>endpoint:read</Code> scope (made in{' '}
        <Anchor component={Link} to={`/project/${projectId}/settings/personal-api-keys`}>
          Personal API keys
        </Anchor>
        ).
      </Text>
      <Group justify="space-between">
        <Text fw={600} size="sm">
          curl
        </Text>
        <Copy value={curl} label="Copy the curl command" />
      </Group>
      <Code block data-testid="curl-command">
        {curl}
      </Code>
      <Group justify="space-between">
        <Text fw={600} size="sm">
          OpenAPI 3.0 document
        </Text>
        <Group gap="xs">
          <Anchor href={openapiUrl} target="_blank" rel="noreferrer" size="sm">
            Open openapi.json
          </Anchor>
          {text ? <Copy value={text} label="Copy the OpenAPI document" /> : null}
        </Group>
      </Group>
      <QueryState query={doc}>
        {() => (
          <Code
            block
            data-testid="openapi"
            tabIndex={0}
            aria-label="OpenAPI document"
            style={{ maxHeight: 420, overflow: 'auto' }}
          >
            {text}
          </Code>
        )}
      </QueryState>
    </Stack>
  )
}
