// Property filters as PostHog edits them: a property (event or person), an operator and a value suggested from
// the values the project has seen (`/events/values/?key=`, `/persons/values/?key=`). The value is PostHog's
// `AnyPropertyFilter[]`.
import { ActionIcon, Autocomplete, Button, Group, Select, Stack, Text } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { get, qs } from '../../api'
import { usePropertyNames } from '../../definitions'
import type { PropertyFilter } from './nodes'

export const OPERATORS = [
  { value: 'exact', label: '= equals' },
  { value: 'is_not', label: "≠ doesn't equal" },
  { value: 'icontains', label: '∋ contains' },
  { value: 'not_icontains', label: "∌ doesn't contain" },
  { value: 'regex', label: '∼ matches regex' },
  { value: 'not_regex', label: "≁ doesn't match regex" },
  { value: 'gt', label: '> greater than' },
  { value: 'lt', label: '< less than' },
  { value: 'is_set', label: '✓ is set' },
  { value: 'is_not_set', label: '✕ is not set' },
]

const NO_VALUE = new Set(['is_set', 'is_not_set'])

/** The values seen for a property, for the value box's suggestions. */
export function usePropertyValues(projectId: number, type: string, key: string, eventName?: string) {
  return useQuery({
    queryKey: ['property-values', projectId, type, key, eventName ?? null],
    queryFn: async ({ signal }) => {
      const path =
        type === 'person'
          ? `/api/projects/${projectId}/persons/values/${qs({ key })}`
          : `/api/projects/${projectId}/events/values/${qs({ key, event_name: eventName })}`
      const values = await get<{ name: unknown }[]>(path, signal)
      return [...new Set(values.map((v) => (typeof v.name === 'string' ? v.name : JSON.stringify(v.name))))]
    },
    enabled: !!key && (type === 'event' || type === 'person'),
    staleTime: 30_000,
  })
}

function FilterRow({
  projectId,
  filter,
  index,
  onChange,
  onRemove,
}: {
  projectId: number
  filter: PropertyFilter
  index: number
  onChange: (f: PropertyFilter) => void
  onRemove: () => void
}) {
  const eventProps = usePropertyNames(projectId, 'event')
  const personProps = usePropertyNames(projectId, 'person')
  const values = usePropertyValues(projectId, filter.type, filter.key)
  const n = index + 1
  const keyValue = filter.key ? `${filter.type}:${filter.key}` : null
  const keyData = [
    { group: 'Event properties', items: (eventProps.data ?? []).map((k) => ({ value: `event:${k}`, label: k })) },
    {
      group: 'Person properties',
      items: (personProps.data ?? []).map((k) => ({ value: `person:${k}`, label: `${k} (person)` })),
    },
  ]
  if (keyValue && !keyData.some((g) => g.items.some((i) => i.value === keyValue))) {
    keyData[filter.type === 'person' ? 1 : 0].items.push({ value: keyValue, label: filter.key })
  }
  const operator = filter.operator ?? 'exact'
  return (
    <Group gap="xs" align="flex-end" wrap="nowrap" data-testid="property-filter">
      <Select
        label={`Filter ${n} property`}
        placeholder="Choose a property"
        searchable
        data={keyData}
        value={keyValue}
        w={220}
        onChange={(v) => {
          if (!v) return
          const [type, ...rest] = v.split(':')
          onChange({ ...filter, type, key: rest.join(':'), value: undefined })
        }}
      />
      <Select
        label={`Filter ${n} operator`}
        data={OPERATORS}
        value={operator}
        allowDeselect={false}
        w={190}
        onChange={(v) => v && onChange({ ...filter, operator: v, value: NO_VALUE.has(v) ? undefined : filter.value })}
      />
      {NO_VALUE.has(operator) ? null : (
        <Autocomplete
          label={`Filter ${n} value`}
          placeholder="Enter a value"
          data={values.data ?? []}
          value={filter.value === undefined || filter.value === null ? '' : String(filter.value)}
          onChange={(v) => onChange({ ...filter, value: v })}
          w={200}
        />
      )}
      <ActionIcon variant="subtle" color="gray" size="lg" onClick={onRemove} aria-label={`Remove filter ${n}`}>
        ✕
      </ActionIcon>
    </Group>
  )
}

/** Only the filters complete enough to send (a key, and a value unless the operator needs none). */
export function completeFilters(filters: PropertyFilter[]): PropertyFilter[] {
  return filters
    .filter((f) => f.key && (NO_VALUE.has(f.operator ?? 'exact') || (f.value !== undefined && f.value !== '')))
    .map((f) => {
      const numeric = (f.operator === 'gt' || f.operator === 'lt') && /^-?\d+(\.\d+)?$/.test(String(f.value))
      return { ...f, operator: f.operator ?? 'exact', ...(numeric ? { value: Number(f.value) } : {}) }
    })
}

export function PropertyFilters({
  projectId,
  value,
  onChange,
  label = 'Filters',
}: {
  projectId: number
  value: PropertyFilter[]
  onChange: (filters: PropertyFilter[]) => void
  label?: string
}) {
  return (
    <Stack gap="xs">
      <Text fw={600} size="sm">
        {label}
      </Text>
      {value.map((f, i) => (
        <FilterRow
          // biome-ignore lint/suspicious/noArrayIndexKey: filters are positional and may repeat a key
          key={i}
          projectId={projectId}
          filter={f}
          index={i}
          onChange={(next) => onChange(value.map((old, j) => (j === i ? next : old)))}
          onRemove={() => onChange(value.filter((_, j) => j !== i))}
        />
      ))}
      <Button
        variant="subtle"
        size="xs"
        w="fit-content"
        onClick={() => onChange([...value, { type: 'event', key: '', operator: 'exact' }])}
      >
        + Add filter
      </Button>
    </Stack>
  )
}
