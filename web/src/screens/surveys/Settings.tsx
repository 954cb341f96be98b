// The editor's other tabs: how the popover looks (posthog-js's appearance keys), whom it shows to (URL, selector,
// linked flag, wait period, person properties and a rollout percentage through the survey's targeting flag), and
// when (start and end, once / recurring / always, delay) with how many responses it takes.
import {
  Checkbox,
  ColorInput,
  Group,
  NumberInput,
  SegmentedControl,
  Select,
  SimpleGrid,
  Slider,
  Stack,
  Switch,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { get, type Page } from '../../api'
import { PropertyFiltersEditor } from '../../components/PropertyFiltersEditor'
import { type Appearance, DEFAULT_APPEARANCE, type Draft, fromLocalInput, toLocalInput } from './model'

type Change = (draft: Draft) => void

const COLORS: { key: keyof Appearance; label: string }[] = [
  { key: 'backgroundColor', label: 'Background colour' },
  { key: 'borderColor', label: 'Border colour' },
  { key: 'textColor', label: 'Text colour' },
  { key: 'submitButtonColor', label: 'Button colour' },
  { key: 'submitButtonTextColor', label: 'Button text colour' },
  { key: 'ratingButtonColor', label: 'Rating button colour' },
  { key: 'ratingButtonActiveColor', label: 'Selected rating colour' },
]

const numberOrNull = (v: string | number) => (typeof v === 'number' ? v : v === '' ? null : Number(v) || null)

export function AppearanceTab({ draft, onChange }: { draft: Draft; onChange: Change }) {
  const a = draft.appearance
  const set = (change: Partial<Appearance>) => onChange({ ...draft, appearance: { ...a, ...change } })
  return (
    <Stack gap="md">
      <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
        {COLORS.map(({ key, label }) => (
          <ColorInput
            key={key}
            label={label}
            placeholder={(DEFAULT_APPEARANCE as Record<string, string>)[key] ?? 'automatic'}
            value={(a[key] as string) ?? ''}
            onChange={(v) => set({ [key]: v })}
            format="hex"
            withEyeDropper={false}
          />
        ))}
      </SimpleGrid>
      <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
        <TextInput
          label="Placeholder of text answers"
          placeholder="Start typing..."
          value={a.placeholder ?? ''}
          onChange={(e) => set({ placeholder: e.currentTarget.value })}
        />
        <Select
          label="Position on the page"
          data={[
            { value: 'right', label: 'Bottom right' },
            { value: 'left', label: 'Bottom left' },
            { value: 'center', label: 'Bottom centre' },
          ]}
          value={a.position ?? 'right'}
          allowDeselect={false}
          onChange={(position) => set({ position: position ?? 'right' })}
        />
      </SimpleGrid>
      <Switch
        label="Show a thank-you message after the last question"
        checked={a.displayThankYouMessage !== false}
        onChange={(e) => set({ displayThankYouMessage: e.currentTarget.checked })}
      />
      {a.displayThankYouMessage !== false ? (
        <Stack gap="sm">
          <TextInput
            label="Thank-you header"
            placeholder="Thank you for your feedback!"
            value={a.thankYouMessageHeader ?? ''}
            onChange={(e) => set({ thankYouMessageHeader: e.currentTarget.value })}
          />
          <Textarea
            label="Thank-you description"
            autosize
            minRows={1}
            value={a.thankYouMessageDescription ?? ''}
            onChange={(e) => set({ thankYouMessageDescription: e.currentTarget.value })}
          />
        </Stack>
      ) : null}
    </Stack>
  )
}

interface FlagBrief {
  id: number
  key: string
}

export function TargetingTab({ projectId, draft, onChange }: { projectId: number; draft: Draft; onChange: Change }) {
  const c = draft.conditions
  const setCondition = (change: Partial<Draft['conditions']>) => onChange({ ...draft, conditions: { ...c, ...change } })
  const flags = useQuery({
    queryKey: ['feature-flags', projectId, 'survey-picker'],
    queryFn: ({ signal }) => get<Page<FlagBrief>>(`/api/projects/${projectId}/feature_flags/?limit=500`, signal),
  })
  const popover = draft.type === 'popover'
  return (
    <Stack gap="lg">
      <div>
        <Text size="sm" fw={500} id="survey-type-label">
          Presentation
        </Text>
        <SegmentedControl
          aria-labelledby="survey-type-label"
          data={[
            { value: 'popover', label: 'Popover (posthog-js shows it)' },
            { value: 'api', label: 'API (your code shows it)' },
          ]}
          value={draft.type}
          onChange={(type) => onChange({ ...draft, type: type as Draft['type'] })}
        />
      </div>
      <Stack gap="sm">
        <Title order={3} size="h5">
          Where
        </Title>
        <Group align="flex-end" gap="sm">
          <Select
            label="URL match"
            data={[
              { value: 'icontains', label: 'contains' },
              { value: 'not_icontains', label: "doesn't contain" },
              { value: 'exact', label: 'equals' },
              { value: 'is_not', label: "doesn't equal" },
              { value: 'regex', label: 'matches regex' },
              { value: 'not_regex', label: "doesn't match regex" },
            ]}
            value={c.urlMatchType ?? 'icontains'}
            allowDeselect={false}
            onChange={(urlMatchType) => setCondition({ urlMatchType: urlMatchType ?? 'icontains' })}
            w={200}
          />
          <TextInput
            label="URL"
            description="Shown only on pages whose address matches; empty for every page."
            placeholder="/pricing"
            value={c.url ?? ''}
            onChange={(e) => setCondition({ url: e.currentTarget.value })}
            style={{ flex: 1 }}
          />
        </Group>
        <TextInput
          label="CSS selector"
          description="Shown only when an element matching it is on the page."
          placeholder="#checkout"
          value={c.selector ?? ''}
          onChange={(e) => setCondition({ selector: e.currentTarget.value })}
        />
      </Stack>
      <Stack gap="sm">
        <Title order={3} size="h5">
          Who
        </Title>
        <Select
          label="Linked feature flag"
          description="Shown only to users for whom this flag is on."
          placeholder={flags.isPending ? 'Loading flags…' : 'No linked flag'}
          data={(flags.data?.results ?? []).map((f) => ({ value: String(f.id), label: f.key }))}
          value={draft.linked_flag_id === null ? null : String(draft.linked_flag_id)}
          onChange={(v) => onChange({ ...draft, linked_flag_id: v ? Number(v) : null })}
          searchable
          clearable
          w={360}
        />
        <NumberInput
          label="Wait period (days)"
          description="Not shown to users who saw a survey within these days."
          value={c.seenSurveyWaitPeriodInDays ?? ''}
          min={0}
          onChange={(v) => setCondition({ seenSurveyWaitPeriodInDays: numberOrNull(v) ?? undefined })}
          w={260}
        />
        <Text size="sm" fw={500}>
          Person properties
        </Text>
        <PropertyFiltersEditor
          projectId={projectId}
          label="Person property"
          types={['person']}
          value={draft.targetingProperties}
          onChange={(targetingProperties) => onChange({ ...draft, targetingProperties })}
        />
      </Stack>
      <Stack gap="xs">
        <Title order={3} size="h5">
          Sampling
        </Title>
        <Group align="center" gap="md" wrap="nowrap">
          <Text size="sm" style={{ whiteSpace: 'nowrap' }}>
            Show to
          </Text>
          <Slider
            thumbLabel="Rollout slider"
            value={draft.rollout}
            onChange={(rollout) => onChange({ ...draft, rollout })}
            min={0}
            max={100}
            style={{ flex: 1 }}
            label={(v) => `${v}%`}
          />
          <NumberInput
            aria-label="Rollout percentage"
            value={draft.rollout}
            onChange={(v) => onChange({ ...draft, rollout: typeof v === 'number' ? v : Number(v) || 0 })}
            min={0}
            max={100}
            suffix="%"
            w={100}
          />
        </Group>
        <Text size="xs" c="dimmed">
          Of the users who match, this share sees the survey (kept in the survey's targeting flag).
        </Text>
      </Stack>
      {!popover ? (
        <Text size="sm" c="dimmed">
          An API survey is fetched by your code from <code>getActiveMatchingSurveys</code>; posthog-js draws nothing.
        </Text>
      ) : null}
    </Stack>
  )
}

export function ScheduleTab({
  draft,
  onChange,
  errors,
}: {
  draft: Draft
  onChange: Change
  errors: Record<string, string>
}) {
  return (
    <Stack gap="md">
      <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
        <TextInput
          type="datetime-local"
          label="Start"
          description="Empty: a draft until launched."
          value={toLocalInput(draft.start_date)}
          onChange={(e) => onChange({ ...draft, start_date: fromLocalInput(e.currentTarget.value) })}
        />
        <TextInput
          type="datetime-local"
          label="End"
          description="Empty: runs until stopped."
          value={toLocalInput(draft.end_date)}
          error={errors.end_date}
          onChange={(e) => onChange({ ...draft, end_date: fromLocalInput(e.currentTarget.value) })}
        />
      </SimpleGrid>
      <div>
        <Text size="sm" fw={500} id="schedule-label">
          How often a user sees it
        </Text>
        <SegmentedControl
          aria-labelledby="schedule-label"
          data={[
            { value: 'once', label: 'Once' },
            { value: 'recurring', label: 'Repeatedly' },
            { value: 'always', label: 'Every time' },
          ]}
          value={draft.schedule}
          onChange={(schedule) => onChange({ ...draft, schedule: schedule as Draft['schedule'] })}
        />
      </div>
      {draft.schedule === 'recurring' ? (
        <Group gap="sm">
          <NumberInput
            label="Repeat times"
            min={1}
            max={500}
            value={draft.iteration_count ?? ''}
            onChange={(v) => onChange({ ...draft, iteration_count: numberOrNull(v) })}
            w={180}
          />
          <NumberInput
            label="Every (days)"
            min={1}
            value={draft.iteration_frequency_days ?? ''}
            onChange={(v) => onChange({ ...draft, iteration_frequency_days: numberOrNull(v) })}
            w={180}
          />
        </Group>
      ) : null}
      <NumberInput
        label="Delay before showing (seconds)"
        min={0}
        value={(draft.appearance.surveyPopupDelaySeconds as number | undefined) ?? ''}
        onChange={(v) =>
          onChange({
            ...draft,
            appearance: { ...draft.appearance, surveyPopupDelaySeconds: numberOrNull(v) ?? undefined },
          })
        }
        w={260}
      />
      <Checkbox
        label="Stop after a number of responses"
        checked={draft.responses_limit !== null}
        onChange={(e) => onChange({ ...draft, responses_limit: e.currentTarget.checked ? 100 : null })}
      />
      {draft.responses_limit !== null ? (
        <NumberInput
          label="Responses limit"
          description="The survey completes once this many responses are in."
          min={1}
          value={draft.responses_limit}
          onChange={(v) => onChange({ ...draft, responses_limit: numberOrNull(v) })}
          w={260}
        />
      ) : null}
    </Stack>
  )
}
