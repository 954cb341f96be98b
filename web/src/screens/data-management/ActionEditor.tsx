// One action's editor (`data-management/actions/:id`, `new` to create): name, description, tags and its match
// groups — each an event, with a URL (exact, contains or regex), an element selector and text for clicks, and
// property filters. Saving creates or changes it; deleting is PostHog's PATCH `deleted: true`.
import {
  Anchor,
  Autocomplete,
  Button,
  Card,
  Group,
  SegmentedControl,
  Stack,
  TagsInput,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core'
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useState } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { api, get } from '../../api'
import { ConfirmButton } from '../../components/ConfirmButton'
import { notify } from '../../components/notify'
import { cleanFilters, type PropertyFilter, PropertyFiltersEditor } from '../../components/PropertyFiltersEditor'
import { ErrorState, errorText, Loading } from '../../components/States'
import { useEventNames } from '../../definitions'
import { useProjectId } from '../../session'
import type { Action } from './Actions'
import { DataNav } from './common'

interface StepDraft {
  event: string
  url: string
  url_matching: string
  selector: string
  text: string
  properties: PropertyFilter[]
  /** fields this editor does not show, kept as they were */
  rest: Record<string, unknown>
}

const MATCHING = [
  { value: 'contains', label: 'contains' },
  { value: 'exact', label: 'matches exactly' },
  { value: 'regex', label: 'matches regex' },
]

const emptyStep = (event = '$pageview'): StepDraft => ({
  event,
  url: '',
  url_matching: 'contains',
  selector: '',
  text: '',
  properties: [],
  rest: {},
})

function toDraft(step: Action['steps'][number]): StepDraft {
  const { event, url, url_matching, selector, text, properties, ...rest } = step
  return {
    event: event ?? '',
    url: url ?? '',
    url_matching: url_matching ?? 'contains',
    selector: selector ?? '',
    text: text ?? '',
    properties: (properties ?? []) as PropertyFilter[],
    rest,
  }
}

/** A step as the API takes it: only the fields that are set (the API fills the rest with null). */
function fromDraft(step: StepDraft) {
  const pageish = step.event === '$pageview' || step.event === '$autocapture' || step.event === '$pageleave'
  const click = step.event === '$autocapture'
  const out: Record<string, unknown> = {
    ...step.rest,
    event: step.event.trim() || null,
    url: pageish && step.url.trim() ? step.url.trim() : null,
    url_matching: pageish && step.url.trim() ? step.url_matching : null,
    selector: click && step.selector.trim() ? step.selector.trim() : null,
    text: click && step.text.trim() ? step.text : null,
    properties: cleanFilters(step.properties),
  }
  if (out.text === null) out.text_matching = null
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== null))
}

export default function ActionEditor() {
  const projectId = useProjectId()
  const { actionId } = useParams()
  const isNew = actionId === 'new'
  const action = useQuery({
    queryKey: ['action', projectId, actionId],
    queryFn: () => get<Action>(`/api/projects/${projectId}/actions/${actionId}/`),
    enabled: !isNew,
  })
  return (
    <Stack gap="md">
      <Title order={1} size="h2">
        {isNew ? 'New action' : (action.data?.name ?? 'Action')}
      </Title>
      <DataNav />
      <Anchor component={Link} to={`/project/${projectId}/data-management/actions`} size="sm">
        ← All actions
      </Anchor>
      {isNew ? (
        <Form />
      ) : action.isPending ? (
        <Loading label="Loading the action…" />
      ) : action.error ? (
        <ErrorState error={action.error} retry={() => action.refetch()} />
      ) : (
        <Form action={action.data} />
      )}
    </Stack>
  )
}

function Form({ action }: { action?: Action }) {
  const projectId = useProjectId()
  const client = useQueryClient()
  const navigate = useNavigate()
  const events = useEventNames(projectId)
  const [name, setName] = useState(action?.name ?? '')
  const [description, setDescription] = useState(action?.description ?? '')
  const [tags, setTags] = useState<string[]>(action?.tags ?? [])
  const [steps, setSteps] = useState<StepDraft[]>(action?.steps.length ? action.steps.map(toDraft) : [emptyStep()])
  useEffect(() => {
    if (!action) return
    setName(action.name ?? '')
    setDescription(action.description)
    setTags(action.tags)
    setSteps(action.steps.length ? action.steps.map(toDraft) : [emptyStep()])
  }, [action])
  const base = `/api/projects/${projectId}/actions/`
  const save = useMutation({
    mutationFn: () => {
      const body = { name: name.trim(), description, tags, steps: steps.map(fromDraft) }
      return action ? api<Action>('PATCH', `${base}${action.id}/`, body) : api<Action>('POST', base, body)
    },
    onSuccess: (saved) => {
      void client.invalidateQueries({ queryKey: ['actions', projectId] })
      client.setQueryData(['action', projectId, String(saved.id)], saved)
      notify(`Saved action ${saved.name}`, 'teal')
      if (!action) navigate(`/project/${projectId}/data-management/actions/${saved.id}`, { replace: true })
    },
  })
  const eventOptions = [...new Set(['$pageview', '$autocapture', ...(events.data ?? [])])]
  const setStep = (index: number, change: Partial<StepDraft>) =>
    setSteps((all) => all.map((s, i) => (i === index ? { ...s, ...change } : s)))

  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
    >
      <Stack gap="md" maw={900}>
        <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <Textarea
          label="Description"
          autosize
          minRows={2}
          value={description}
          onChange={(e) => setDescription(e.currentTarget.value)}
        />
        <TagsInput label="Tags" description="Press Enter to add a tag" value={tags} onChange={setTags} />
        <Title order={2} size="h4">
          Match groups
        </Title>
        <Text size="sm" c="dimmed">
          The action matches an event that matches any of these groups.
        </Text>
        {steps.map((step, index) => {
          const n = index + 1
          const pageish = step.event === '$pageview' || step.event === '$autocapture' || step.event === '$pageleave'
          return (
            // biome-ignore lint/suspicious/noArrayIndexKey: steps have no identity beyond their place
            <Card key={index} withBorder component="fieldset" aria-label={`Match group ${n}`} data-testid="action-step">
              <Stack gap="sm">
                <Group justify="space-between">
                  <Text fw={600}>Match group {n}</Text>
                  {steps.length > 1 ? (
                    <Button
                      size="xs"
                      variant="subtle"
                      color="red"
                      onClick={() => setSteps((all) => all.filter((_, i) => i !== index))}
                    >
                      Remove group {n}
                    </Button>
                  ) : null}
                </Group>
                <Autocomplete
                  label={`Event (group ${n})`}
                  description="Leave empty to match any event"
                  data={eventOptions}
                  value={step.event}
                  onChange={(event) => setStep(index, { event })}
                />
                {pageish ? (
                  <Group align="flex-end" gap="sm">
                    <TextInput
                      label={`URL (group ${n})`}
                      placeholder="https://example.com/pricing"
                      value={step.url}
                      onChange={(e) => setStep(index, { url: e.currentTarget.value })}
                      style={{ flex: 1 }}
                    />
                    <SegmentedControl
                      aria-label={`URL matching (group ${n})`}
                      data={MATCHING}
                      value={step.url_matching}
                      onChange={(url_matching) => setStep(index, { url_matching })}
                    />
                  </Group>
                ) : null}
                {step.event === '$autocapture' ? (
                  <>
                    <TextInput
                      label={`Element selector (group ${n})`}
                      placeholder="button.signup"
                      value={step.selector}
                      onChange={(e) => setStep(index, { selector: e.currentTarget.value })}
                    />
                    <TextInput
                      label={`Element text (group ${n})`}
                      value={step.text}
                      onChange={(e) => setStep(index, { text: e.currentTarget.value })}
                    />
                  </>
                ) : null}
                <PropertyFiltersEditor
                  projectId={projectId}
                  label={`Group ${n} filter`}
                  value={step.properties}
                  onChange={(properties) => setStep(index, { properties })}
                />
              </Stack>
            </Card>
          )
        })}
        <Group>
          <Button variant="light" onClick={() => setSteps((all) => [...all, emptyStep('')])}>
            Add match group
          </Button>
        </Group>
        {save.error ? (
          <Text c="red" size="sm" role="alert" data-testid="action-error">
            {errorText(save.error)}
          </Text>
        ) : null}
        <Group justify="space-between">
          <Button type="submit" loading={save.isPending}>
            {action ? 'Save' : 'Create action'}
          </Button>
          {action ? (
            <ConfirmButton
              title="Delete action"
              message={`Delete “${action.name}”? Insights that use it will stop counting it.`}
              confirmLabel="Delete"
              onConfirm={async () => {
                await api('PATCH', `/api/projects/${projectId}/actions/${action.id}/`, { deleted: true })
                await client.invalidateQueries({ queryKey: ['actions', projectId] })
                navigate(`/project/${projectId}/data-management/actions`)
              }}
            >
              Delete action
            </ConfirmButton>
          ) : null}
        </Group>
      </Stack>
    </form>
  )
}
