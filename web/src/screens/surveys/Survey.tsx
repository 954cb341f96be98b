// One survey (`surveys/:id`) or a new one (`surveys/new`): the editor's tabs — questions of every type, appearance,
// targeting with sampling, schedule — beside a live preview of the popover posthog-js will show; a saved survey's
// results, and its lifecycle (launch, stop, resume, archive, delete) and duplication into other projects. The tab is
// in the URL.
import {
  Alert,
  Anchor,
  Badge,
  Breadcrumbs,
  Button,
  Grid,
  Group,
  Menu,
  Modal,
  MultiSelect,
  Stack,
  Tabs,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { type ReactNode, useState } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { api, get } from '../../api'
import { ConfirmButton } from '../../components/ConfirmButton'
import { notify } from '../../components/notify'
import { ErrorState, errorText, Loading } from '../../components/States'
import { useSearchState } from '../../components/useSearchState'
import { useProjectId, useProjects } from '../../session'
import {
  bodyOf,
  type Draft,
  draftOf,
  NEW_DRAFT,
  problems,
  STATUS_COLOR,
  STATUS_LABEL,
  type Survey as SurveyT,
  statusOf,
} from './model'
import { SurveyPreview } from './Preview'
import { QuestionsEditor } from './Questions'
import { SurveyResults } from './Results'
import { AppearanceTab, ScheduleTab, TargetingTab } from './Settings'

export default function Survey() {
  const projectId = useProjectId()
  const { id } = useParams()
  const isNew = id === undefined || id === 'new'
  const survey = useQuery({
    queryKey: ['survey', projectId, id],
    queryFn: ({ signal }) => get<SurveyT>(`/api/projects/${projectId}/surveys/${id}/`, signal),
    enabled: !isNew,
  })
  if (isNew) return <Editor projectId={projectId} survey={null} />
  if (survey.isPending) return <Loading label="Loading survey…" />
  if (survey.error) return <ErrorState error={survey.error} retry={() => survey.refetch()} />
  return <Editor projectId={projectId} survey={survey.data} key={survey.data.id} />
}

const EDITOR_TABS = ['questions', 'appearance', 'targeting', 'schedule']

function Editor({ projectId, survey }: { projectId: number; survey: SurveyT | null }) {
  const navigate = useNavigate()
  const client = useQueryClient()
  const { params, update } = useSearchState()
  const defaultTab = survey && statusOf(survey) !== 'draft' ? 'results' : 'questions'
  const tab = params.get('tab') ?? defaultTab
  const [draft, setDraft] = useState<Draft>(survey ? draftOf(survey) : NEW_DRAFT)
  const [showErrors, setShowErrors] = useState(false)
  const [saving, setSaving] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [duplicating, setDuplicating] = useState(false)
  const [focused, setFocused] = useState(0)
  const base = `/project/${projectId}/surveys`
  const found = problems(draft)
  const errors = showErrors ? found : {}
  const dirty = survey ? JSON.stringify(draft) !== JSON.stringify(draftOf(survey)) : true
  const status = survey ? statusOf(survey) : 'draft'
  const path = survey ? `/api/projects/${projectId}/surveys/${survey.id}/` : null

  const refresh = async (saved: SurveyT) => {
    client.setQueryData(['survey', projectId, saved.id], saved)
    await client.invalidateQueries({ queryKey: ['surveys', projectId] })
    await client.invalidateQueries({ queryKey: ['survey', projectId, saved.id] })
  }

  /** Saves the draft; answers the saved survey, or null when it could not. */
  const save = async (): Promise<SurveyT | null> => {
    setShowErrors(true)
    setError(null)
    if (Object.keys(found).length > 0) {
      if (tab !== 'questions' && (found.name || Object.keys(found).some((k) => k.startsWith('q')))) {
        update({ tab: 'questions' })
      }
      return null
    }
    setSaving(true)
    try {
      if (survey && path) {
        const saved = await api<SurveyT>('PATCH', path, bodyOf(draft))
        const fresh = await get<SurveyT>(path)
        setDraft(draftOf(fresh))
        setShowErrors(false)
        await refresh(fresh)
        notify('Survey saved')
        return saved
      }
      const saved = await api<SurveyT>('POST', `/api/projects/${projectId}/surveys/`, bodyOf(draft))
      await client.invalidateQueries({ queryKey: ['surveys', projectId] })
      notify('Survey created')
      navigate(`${base}/${saved.id}?tab=${tab}`)
      return saved
    } catch (e) {
      setError(e)
      return null
    } finally {
      setSaving(false)
    }
  }

  /** A lifecycle step; unsaved edits are saved first. */
  const act = async (label: string, run: () => Promise<unknown>) => {
    if (!survey || !path) return
    setError(null)
    if (dirty && !(await save())) return
    try {
      await run()
      const fresh = await get<SurveyT>(path)
      setDraft(draftOf(fresh))
      await refresh(fresh)
      notify(label)
    } catch (e) {
      setError(e)
    }
  }

  const preview = (
    <div style={{ position: 'sticky', top: 16 }}>
      <SurveyPreview questions={draft.questions} appearance={draft.appearance} focus={focused} />
    </div>
  )
  /** An editor tab: its fields in a form (Enter saves), the preview beside them when it shows what they change. */
  const form = (content: ReactNode, withPreview = true) => {
    const fields = (
      <form
        aria-label="Survey"
        onSubmit={(e) => {
          e.preventDefault()
          void save()
        }}
      >
        {content}
        <button type="submit" hidden aria-hidden tabIndex={-1} />
      </form>
    )
    if (!withPreview) return fields
    return (
      <Grid gap="xl">
        <Grid.Col span={{ base: 12, lg: 7 }}>{fields}</Grid.Col>
        <Grid.Col span={{ base: 12, lg: 5 }}>{preview}</Grid.Col>
      </Grid>
    )
  }
  const names = (
    <Stack gap="sm" mb="md">
      <TextInput
        label="Name"
        required
        value={draft.name}
        error={errors.name}
        onChange={(e) => setDraft({ ...draft, name: e.currentTarget.value })}
        autoFocus={!survey}
      />
      <Textarea
        label="Description (internal)"
        autosize
        minRows={1}
        value={draft.description}
        onChange={(e) => setDraft({ ...draft, description: e.currentTarget.value })}
      />
    </Stack>
  )

  return (
    <Stack gap="md">
      <Breadcrumbs>
        <Anchor component={Link} to={base} size="sm">
          Surveys
        </Anchor>
        <Text size="sm">{survey ? survey.name : 'New'}</Text>
      </Breadcrumbs>
      <Group justify="space-between" align="flex-start">
        <Group gap="sm">
          <Title order={1} size="h2">
            {survey ? survey.name : 'New survey'}
          </Title>
          {survey ? (
            <Badge color={STATUS_COLOR[status]} variant="light" data-testid="survey-status">
              {STATUS_LABEL[status]}
            </Badge>
          ) : null}
          {survey?.archived ? (
            <Badge color="orange" variant="light">
              Archived
            </Badge>
          ) : null}
        </Group>
        <Group gap="xs">
          <Button onClick={() => void save()} loading={saving} disabled={Boolean(survey) && !dirty}>
            {survey ? 'Save' : 'Create survey'}
          </Button>
          {survey && path ? (
            <>
              {status === 'draft' ? (
                <Button onClick={() => act('Survey launched', () => api('POST', `${path}launch/`))}>Launch</Button>
              ) : status === 'running' ? (
                <Button variant="default" onClick={() => act('Survey stopped', () => api('POST', `${path}stop/`))}>
                  Stop
                </Button>
              ) : (
                <Button
                  variant="default"
                  onClick={() => act('Survey resumed', () => api('PATCH', path, { end_date: null }))}
                >
                  Resume
                </Button>
              )}
              <Menu position="bottom-end">
                <Menu.Target>
                  <Button variant="default">More</Button>
                </Menu.Target>
                <Menu.Dropdown>
                  <Menu.Item
                    onClick={() =>
                      act(survey.archived ? 'Survey unarchived' : 'Survey archived', () =>
                        api('PATCH', path, { archived: !survey.archived }),
                      )
                    }
                  >
                    {survey.archived ? 'Unarchive' : 'Archive'}
                  </Menu.Item>
                  <Menu.Item onClick={() => setDuplicating(true)}>Duplicate to projects…</Menu.Item>
                </Menu.Dropdown>
              </Menu>
              <ConfirmButton
                title="Delete survey?"
                message={`"${survey.name}" and its targeting flags are deleted. Its responses stay in your events.`}
                confirmLabel="Delete"
                onConfirm={async () => {
                  await api('DELETE', path)
                  await client.invalidateQueries({ queryKey: ['surveys', projectId] })
                  navigate(base)
                }}
              >
                Delete
              </ConfirmButton>
            </>
          ) : (
            <Button variant="default" component={Link} to={base}>
              Cancel
            </Button>
          )}
        </Group>
      </Group>
      {error ? (
        <Alert color="red" title="The server refused" role="alert" data-testid="save-error">
          <Text size="sm">{errorText(error)}</Text>
        </Alert>
      ) : null}
      {showErrors && Object.keys(found).length > 0 ? (
        <Text c="red" size="sm" role="alert">
          Fix the highlighted fields to save.
        </Text>
      ) : null}
      {survey && dirty ? (
        <Text size="sm" c="orange.9" data-testid="unsaved">
          Unsaved changes
        </Text>
      ) : null}
      <Tabs
        value={survey || EDITOR_TABS.includes(tab) ? tab : 'questions'}
        onChange={(v) => update({ tab: v === defaultTab ? null : v })}
        keepMounted={false}
      >
        <Tabs.List>
          {survey ? <Tabs.Tab value="results">Results</Tabs.Tab> : null}
          <Tabs.Tab value="questions">Questions</Tabs.Tab>
          <Tabs.Tab value="appearance">Appearance</Tabs.Tab>
          <Tabs.Tab value="targeting">Targeting</Tabs.Tab>
          <Tabs.Tab value="schedule">Schedule</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="questions" pt="md">
          {form(
            <>
              {names}
              <QuestionsEditor
                questions={draft.questions}
                errors={errors}
                onChange={(questions) => {
                  setDraft({ ...draft, questions })
                  setFocused((f) => Math.min(f, Math.max(0, questions.length - 1)))
                }}
                onFocusQuestion={setFocused}
              />
            </>,
          )}
        </Tabs.Panel>
        <Tabs.Panel value="appearance" pt="md">
          {form(<AppearanceTab draft={draft} onChange={setDraft} />)}
        </Tabs.Panel>
        <Tabs.Panel value="targeting" pt="md">
          {form(<TargetingTab projectId={projectId} draft={draft} onChange={setDraft} />, false)}
        </Tabs.Panel>
        <Tabs.Panel value="schedule" pt="md">
          {form(<ScheduleTab draft={draft} onChange={setDraft} errors={errors} />, false)}
        </Tabs.Panel>
        {survey ? (
          <Tabs.Panel value="results" pt="md">
            <SurveyResults projectId={projectId} survey={survey} />
          </Tabs.Panel>
        ) : null}
      </Tabs>
      {survey ? (
        <DuplicateModal
          projectId={projectId}
          survey={survey}
          opened={duplicating}
          onClose={() => setDuplicating(false)}
        />
      ) : null}
    </Stack>
  )
}

function DuplicateModal({
  projectId,
  survey,
  opened,
  onClose,
}: {
  projectId: number
  survey: SurveyT
  opened: boolean
  onClose: () => void
}) {
  const projects = useProjects()
  const [targets, setTargets] = useState<string[]>([])
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [done, setDone] = useState<{ team_id: number; survey_id: string; name: string }[] | null>(null)
  const others = (projects.data ?? []).filter((p) => p.id !== projectId)
  const close = () => {
    setTargets([])
    setError(null)
    setDone(null)
    onClose()
  }
  return (
    <Modal opened={opened} onClose={close} title="Duplicate to projects" closeButtonProps={{ 'aria-label': 'Close' }}>
      <Stack gap="sm">
        {done ? (
          <Stack gap="xs" data-testid="duplicated">
            <Text size="sm">Copied into {done.length === 1 ? 'one project' : `${done.length} projects`}:</Text>
            {done.map((d) => (
              <Anchor key={d.survey_id} href={`/project/${d.team_id}/surveys/${d.survey_id}`} size="sm">
                {d.name} (project {others.find((p) => p.id === d.team_id)?.name ?? d.team_id})
              </Anchor>
            ))}
          </Stack>
        ) : others.length === 0 && !projects.isPending ? (
          <Text size="sm">There is no other project in this organization to copy the survey into.</Text>
        ) : (
          <MultiSelect
            label="Projects"
            description="A draft copy of the survey goes into each; all or none."
            data={others.map((p) => ({ value: String(p.id), label: p.name }))}
            value={targets}
            onChange={setTargets}
            searchable
          />
        )}
        {error ? (
          <Text c="red" size="sm" role="alert">
            {errorText(error)}
          </Text>
        ) : null}
        <Group justify="flex-end">
          <Button variant="default" onClick={close}>
            {done ? 'Close' : 'Cancel'}
          </Button>
          {done ? null : (
            <Button
              loading={busy}
              disabled={targets.length === 0}
              onClick={async () => {
                setBusy(true)
                setError(null)
                try {
                  const res = await api<{ created_surveys: { team_id: number; survey_id: string; name: string }[] }>(
                    'POST',
                    `/api/projects/${projectId}/surveys/${survey.id}/duplicate_to_projects/`,
                    { target_team_ids: targets.map(Number) },
                  )
                  setDone(res.created_surveys)
                } catch (e) {
                  setError(e)
                } finally {
                  setBusy(false)
                }
              }}
            >
              Duplicate
            </Button>
          )}
        </Group>
      </Stack>
    </Modal>
  )
}
