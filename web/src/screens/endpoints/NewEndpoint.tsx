// A new saved endpoint (`endpoints/new`): a name, a description and a query — HogQL written here (or brought
// from the SQL editor as `?q=`), or a saved insight's query (`?source=insight`) — with an optional cache age and
// materialization schedule; created with `POST /endpoints/`, then its page opens.
import {
  Alert,
  Anchor,
  Breadcrumbs,
  Button,
  Checkbox,
  Group,
  NumberInput,
  SegmentedControl,
  Select,
  Stack,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { Link, useNavigate } from 'react-router'
import { ApiError, api, get, type Page, qs } from '../../api'
import { errorText } from '../../components/States'
import { useSearchState } from '../../components/useSearchState'
import { useProjectId } from '../../session'
import { ENDPOINT_NAME, type Endpoint, hogqlNode, kindLabel, type QueryNode, SYNC_FREQUENCIES } from './model'
import { type HogQLDraft, HogQLQueryEditor } from './QueryEditor'

interface Insight {
  id: number
  short_id: string
  name: string | null
  derived_name?: string | null
  query: QueryNode | null
}

/** The query an endpoint can hold from an insight's: the source of a visualization node. */
export function endpointQueryOf(query: QueryNode | null): QueryNode | null {
  if (!query) return null
  if ((query.kind === 'InsightVizNode' || query.kind === 'DataVisualizationNode') && query.source) {
    return query.source as QueryNode
  }
  return query
}

export default function NewEndpoint() {
  const projectId = useProjectId()
  const navigate = useNavigate()
  const { params, update } = useSearchState()
  const source = params.get('source') === 'insight' ? 'insight' : 'sql'
  const [initialText] = useState(params.get('q') ?? '')
  const [hogql, setHogql] = useState<HogQLDraft>({ text: initialText, defaults: {} })
  const [insightId, setInsightId] = useState<string | null>(params.get('insight'))
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [cacheAge, setCacheAge] = useState<number | string>('')
  const [materialize, setMaterialize] = useState(false)
  const [frequency, setFrequency] = useState('24hour')
  const [nameError, setNameError] = useState<string | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  const insights = useQuery({
    queryKey: ['endpoint-insights', projectId],
    queryFn: ({ signal }) =>
      get<Page<Insight>>(`/api/projects/${projectId}/insights/${qs({ saved: true, limit: 200 })}`, signal),
    enabled: source === 'insight',
  })
  const insight = insights.data?.results.find((i) => i.short_id === insightId)

  const submit = async () => {
    setError(null)
    if (!ENDPOINT_NAME.test(name)) {
      setNameError('Start with a letter; use only letters, digits, hyphens and underscores (128 at most).')
      return
    }
    setNameError(null)
    let query: QueryNode | null
    if (source === 'sql') query = hogql.text.trim() ? hogqlNode(hogql.text, hogql.defaults) : null
    else query = endpointQueryOf(insight?.query ?? null)
    if (!query) {
      setError(new Error(source === 'sql' ? 'Write a query first.' : 'Choose an insight first.'))
      return
    }
    setBusy(true)
    try {
      const created = await api<Endpoint>('POST', `/api/projects/${projectId}/endpoints/`, {
        name,
        description,
        query,
        ...(source === 'insight' && insight ? { derived_from_insight: insight.short_id } : {}),
        ...(cacheAge === '' ? {} : { cache_age_seconds: Number(cacheAge) }),
        ...(materialize ? { is_materialized: true, sync_frequency: frequency } : {}),
      })
      navigate(`/project/${projectId}/endpoints/${created.name}`)
    } catch (e) {
      if (e instanceof ApiError && e.attr === 'name') setNameError(e.detail)
      else setError(e)
    } finally {
      setBusy(false)
    }
  }

  return (
    <Stack gap="md" maw={980}>
      <Breadcrumbs>
        <Anchor component={Link} to={`/project/${projectId}/endpoints`} size="sm">
          Endpoints
        </Anchor>
        <Text size="sm">New</Text>
      </Breadcrumbs>
      <Title order={1} size="h2">
        New endpoint
      </Title>
      <form
        onSubmit={(e) => {
          e.preventDefault()
          void submit()
        }}
      >
        <Stack gap="md">
          <TextInput
            label="Name"
            description="Letters, digits, hyphens and underscores, starting with a letter: it becomes the URL."
            required
            data-autofocus
            autoFocus
            value={name}
            error={nameError}
            onChange={(e) => {
              setName(e.currentTarget.value)
              setNameError(null)
            }}
          />
          <Textarea label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
          <SegmentedControl
            aria-label="Query from"
            value={source}
            onChange={(value) => update({ source: value === 'insight' ? 'insight' : null })}
            data={[
              { value: 'sql', label: 'HogQL' },
              { value: 'insight', label: 'Saved insight' },
            ]}
            w="fit-content"
          />
          {source === 'sql' ? (
            <HogQLQueryEditor
              initialText={initialText}
              draft={hogql}
              onChange={setHogql}
              onSubmit={() => void submit()}
            />
          ) : (
            <Stack gap="xs">
              <Select
                label="Insight"
                placeholder={insights.isPending ? 'Loading insights…' : 'Choose a saved insight'}
                searchable
                data={(insights.data?.results ?? [])
                  .filter((i) => endpointQueryOf(i.query))
                  .map((i) => ({
                    value: i.short_id,
                    label: `${i.name || i.derived_name || i.short_id} (${kindLabel(endpointQueryOf(i.query) ?? undefined)})`,
                  }))}
                value={insightId}
                onChange={setInsightId}
              />
              {insights.error ? <Text c="red">{errorText(insights.error)}</Text> : null}
              {insight ? (
                <Text size="xs" c="dimmed">
                  The endpoint keeps a copy of this insight's query; later edits of the insight do not change it.
                </Text>
              ) : null}
            </Stack>
          )}
          <NumberInput
            label="Cache age (seconds)"
            description="How long a result is served from the cache, 300 to 86,400; empty for the project's default."
            value={cacheAge}
            onChange={setCacheAge}
            min={300}
            max={86_400}
            allowDecimal={false}
            w={320}
          />
          <Group align="flex-end">
            <Checkbox
              label="Materialize: store the results in a table, refreshed on a schedule"
              checked={materialize}
              onChange={(e) => setMaterialize(e.currentTarget.checked)}
            />
            {materialize ? (
              <Select
                label="Refresh"
                data={SYNC_FREQUENCIES}
                value={frequency}
                allowDeselect={false}
                onChange={(v) => v && setFrequency(v)}
                w={200}
              />
            ) : null}
          </Group>
          {error ? (
            <Alert color="red" role="alert" title="Could not create the endpoint" data-testid="create-error">
              {errorText(error)}
            </Alert>
          ) : null}
          <Group>
            <Button type="submit" loading={busy}>
              Create endpoint
            </Button>
            <Button variant="default" component={Link} to={`/project/${projectId}/endpoints`}>
              Cancel
            </Button>
          </Group>
        </Stack>
      </form>
    </Stack>
  )
}
