// One feature flag (`feature_flags/:id`, or `feature_flags/new`): its key, description, release conditions,
// served value with payloads, persistence and runtime; saved with PATCH carrying the version the editor loaded
// (a stale edit gets PostHog's 409, shown as the server words it). A saved flag has a "test this flag" panel,
// its usage over time and its history; the tab is in the URL.
import {
  Alert,
  Anchor,
  Badge,
  Breadcrumbs,
  Button,
  Checkbox,
  Grid,
  Group,
  Modal,
  Select,
  Stack,
  Switch,
  Tabs,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { ApiError, api, get } from '../../api'
import { notify } from '../../components/notify'
import { ErrorState, errorText, Loading } from '../../components/States'
import { useSearchState } from '../../components/useSearchState'
import { useProjectId } from '../../session'
import { cleanFiltersForSave, type Filters, type Flag, problems } from './model'
import { FlagActivity, FlagUsage, TestFlag } from './panels'
import { ReleaseConditions } from './ReleaseConditions'
import { Variants } from './Variants'

interface Draft {
  key: string
  name: string
  active: boolean
  ensure_experience_continuity: boolean
  evaluation_runtime: 'server' | 'client' | 'all'
  filters: Filters
}

const NEW_DRAFT: Draft = {
  key: '',
  name: '',
  active: true,
  ensure_experience_continuity: false,
  evaluation_runtime: 'all',
  filters: { groups: [{ properties: [], rollout_percentage: 0, variant: null }], multivariate: null, payloads: {} },
}

function draftOf(flag: Flag): Draft {
  return {
    key: flag.key,
    name: flag.name ?? '',
    active: flag.active,
    ensure_experience_continuity: Boolean(flag.ensure_experience_continuity),
    evaluation_runtime: flag.evaluation_runtime ?? 'all',
    filters: {
      ...flag.filters,
      groups: (flag.filters?.groups ?? []).map((g) => ({ ...g, properties: g.properties ?? [] })),
      payloads: Object.fromEntries(
        Object.entries(flag.filters?.payloads ?? {}).map(([k, v]) => [
          k,
          typeof v === 'string' ? v : JSON.stringify(v),
        ]),
      ),
    },
  }
}

export default function FeatureFlag() {
  const projectId = useProjectId()
  const { id: flagId } = useParams()
  const isNew = flagId === undefined || flagId === 'new'
  const id = isNew ? null : Number(flagId)
  const flag = useQuery({
    queryKey: ['feature-flag', projectId, id],
    queryFn: ({ signal }) => get<Flag>(`/api/projects/${projectId}/feature_flags/${id}/`, signal),
    enabled: id !== null,
  })
  if (id !== null && !Number.isInteger(id)) return <ErrorState error={new Error('Not a feature flag id.')} />
  if (id === null) return <Editor projectId={projectId} initial={null} />
  if (flag.isPending) return <Loading label="Loading feature flag…" />
  if (flag.error) return <ErrorState error={flag.error} retry={() => flag.refetch()} />
  return <Editor projectId={projectId} initial={flag.data} key={flag.data.id} />
}

/** The editor keeps the flag as it loaded it (its version and fields go with the PATCH), until its own save. */
function Editor({ projectId, initial }: { projectId: number; initial: Flag | null }) {
  const navigate = useNavigate()
  const client = useQueryClient()
  const { params, update } = useSearchState()
  const tab = params.get('tab') ?? 'overview'
  const [flag, setFlag] = useState(initial)
  const [draft, setDraft] = useState<Draft>(initial ? draftOf(initial) : NEW_DRAFT)
  const [showErrors, setShowErrors] = useState(false)
  const [saving, setSaving] = useState(false)
  const [saveError, setSaveError] = useState<unknown>(null)
  const [confirmDelete, setConfirmDelete] = useState(false)
  const base = `/project/${projectId}/feature_flags`
  const found = problems(draft)
  const errors = showErrors ? found : {}
  const variantKeys = (draft.filters.multivariate?.variants ?? []).map((v) => v.key).filter(Boolean)

  const save = async () => {
    setShowErrors(true)
    setSaveError(null)
    if (Object.keys(found).length > 0) return
    setSaving(true)
    const body = {
      key: draft.key.trim(),
      name: draft.name,
      active: draft.active,
      ensure_experience_continuity: draft.ensure_experience_continuity,
      evaluation_runtime: draft.evaluation_runtime,
      filters: cleanFiltersForSave(draft.filters),
    }
    try {
      if (flag) {
        const saved = await api<Flag>('PATCH', `/api/projects/${projectId}/feature_flags/${flag.id}/`, {
          ...body,
          version: flag.version,
          original_flag: flag,
        })
        client.setQueryData(['feature-flag', projectId, flag.id], saved)
        setFlag(saved)
        setDraft(draftOf(saved))
        setShowErrors(false)
        notify('Feature flag saved')
      } else {
        const saved = await api<Flag>('POST', `/api/projects/${projectId}/feature_flags/`, body)
        client.setQueryData(['feature-flag', projectId, saved.id], saved)
        notify('Feature flag created')
        navigate(`${base}/${saved.id}`)
      }
      await client.invalidateQueries({ queryKey: ['feature-flags', projectId] })
      await client.invalidateQueries({ queryKey: ['flag-activity', projectId] })
    } catch (error) {
      setSaveError(error)
    } finally {
      setSaving(false)
    }
  }

  const remove = async () => {
    if (!flag) return
    try {
      await api('PATCH', `/api/projects/${projectId}/feature_flags/${flag.id}/`, { deleted: true })
      await client.invalidateQueries({ queryKey: ['feature-flags', projectId] })
      navigate(base)
    } catch (error) {
      setConfirmDelete(false)
      setSaveError(error)
    }
  }

  const editor = (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        void save()
      }}
    >
      <Stack gap="lg">
        <Stack gap="sm">
          <TextInput
            label="Key"
            description="Used in your code: posthog.isFeatureEnabled('key'). Letters, numbers, - and _."
            required
            value={draft.key}
            error={errors.key}
            onChange={(e) => setDraft({ ...draft, key: e.currentTarget.value })}
            autoFocus={!flag}
          />
          <Textarea
            label="Description"
            value={draft.name}
            autosize
            minRows={2}
            onChange={(e) => setDraft({ ...draft, name: e.currentTarget.value })}
          />
          <Switch
            label="Enabled"
            checked={draft.active}
            onChange={(e) => setDraft({ ...draft, active: e.currentTarget.checked })}
          />
          <Checkbox
            label="Persist flag across authentication steps"
            description="The same value before and after a user logs in (served from the anonymous id's value)."
            checked={draft.ensure_experience_continuity}
            onChange={(e) => setDraft({ ...draft, ensure_experience_continuity: e.currentTarget.checked })}
          />
          <Select
            label="Evaluation runtime"
            data={[
              { value: 'all', label: 'Both client and server' },
              { value: 'client', label: 'Client only' },
              { value: 'server', label: 'Server only' },
            ]}
            value={draft.evaluation_runtime}
            allowDeselect={false}
            onChange={(v) => setDraft({ ...draft, evaluation_runtime: (v ?? 'all') as Draft['evaluation_runtime'] })}
            w={260}
          />
        </Stack>
        <Variants filters={draft.filters} errors={errors} onChange={(filters) => setDraft({ ...draft, filters })} />
        <ReleaseConditions
          projectId={projectId}
          groups={draft.filters.groups}
          variants={variantKeys}
          errors={errors}
          onChange={(groups) => setDraft({ ...draft, filters: { ...draft.filters, groups } })}
        />
        {saveError ? (
          <Alert color="red" title="Could not save the flag" role="alert" data-testid="save-error">
            <Text size="sm">{errorText(saveError)}</Text>
            {saveError instanceof ApiError && saveError.status === 409 ? (
              <Button size="xs" variant="light" color="red" mt="xs" onClick={() => window.location.reload()}>
                Reload the flag
              </Button>
            ) : null}
          </Alert>
        ) : null}
        {showErrors && Object.keys(found).length > 0 ? (
          <Text c="red" size="sm" role="alert">
            Fix the highlighted fields to save.
          </Text>
        ) : null}
        <Group>
          <Button type="submit" loading={saving}>
            {flag ? 'Save' : 'Create flag'}
          </Button>
          {flag ? (
            <Button
              variant="default"
              onClick={() => {
                setDraft(draftOf(flag))
                setShowErrors(false)
                setSaveError(null)
              }}
            >
              Discard changes
            </Button>
          ) : (
            <Button variant="default" component={Link} to={base}>
              Cancel
            </Button>
          )}
        </Group>
      </Stack>
    </form>
  )

  return (
    <Stack gap="md">
      <Breadcrumbs>
        <Anchor component={Link} to={base} size="sm">
          Feature flags
        </Anchor>
        <Text size="sm">{flag ? flag.key : 'New'}</Text>
      </Breadcrumbs>
      <Group justify="space-between">
        <Group gap="sm">
          <Title order={1} size="h2">
            {flag ? flag.key : 'New feature flag'}
          </Title>
          {flag ? (
            <Badge color={flag.active ? 'green' : 'gray'} variant="light" data-testid="flag-status">
              {flag.active ? 'Enabled' : 'Disabled'}
            </Badge>
          ) : null}
        </Group>
        {flag ? (
          <Button color="red" variant="light" onClick={() => setConfirmDelete(true)}>
            Delete
          </Button>
        ) : null}
      </Group>
      {flag ? (
        <Tabs value={tab} onChange={(v) => update({ tab: v === 'overview' ? null : v })} keepMounted={false}>
          <Tabs.List>
            <Tabs.Tab value="overview">Overview</Tabs.Tab>
            <Tabs.Tab value="usage">Usage</Tabs.Tab>
            <Tabs.Tab value="history">History</Tabs.Tab>
          </Tabs.List>
          <Tabs.Panel value="overview" pt="md">
            <Grid gap="xl">
              <Grid.Col span={{ base: 12, lg: 8 }}>{editor}</Grid.Col>
              <Grid.Col span={{ base: 12, lg: 4 }}>
                <TestFlag flagKey={flag.key} />
              </Grid.Col>
            </Grid>
          </Tabs.Panel>
          <Tabs.Panel value="usage" pt="md">
            <FlagUsage projectId={projectId} flagKey={flag.key} />
          </Tabs.Panel>
          <Tabs.Panel value="history" pt="md">
            <FlagActivity projectId={projectId} flagId={flag.id} />
          </Tabs.Panel>
        </Tabs>
      ) : (
        editor
      )}
      <Modal opened={confirmDelete} onClose={() => setConfirmDelete(false)} title="Delete feature flag?">
        <Stack gap="sm">
          <Text size="sm">
            Code that checks <b>{flag?.key}</b> will get <code>false</code> from now on.
          </Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setConfirmDelete(false)}>
              Cancel
            </Button>
            <Button color="red" onClick={() => void remove()}>
              Delete
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  )
}
