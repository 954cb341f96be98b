// A list of PostHog property filters (`{key, value, operator, type}`) edited row by row: property name (suggested
// from the definitions), operator, value; used by action steps and the project's test-account filters.
import { ActionIcon, Autocomplete, Button, Group, Select, Stack, TextInput } from '@mantine/core'
import { usePropertyNames } from '../definitions'

export interface PropertyFilter {
  key: string
  value?: unknown
  operator?: string
  type?: string
  [extra: string]: unknown
}

export const OPERATORS = [
  { value: 'exact', label: 'equals' },
  { value: 'is_not', label: "doesn't equal" },
  { value: 'icontains', label: 'contains' },
  { value: 'not_icontains', label: "doesn't contain" },
  { value: 'regex', label: 'matches regex' },
  { value: 'not_regex', label: "doesn't match regex" },
  { value: 'gt', label: 'greater than' },
  { value: 'lt', label: 'less than' },
  { value: 'is_set', label: 'is set' },
  { value: 'is_not_set', label: 'is not set' },
]
const NO_VALUE = new Set(['is_set', 'is_not_set'])

function valueText(value: unknown): string {
  if (value === undefined || value === null) return ''
  if (Array.isArray(value)) return value.join(', ')
  return String(value)
}

export function PropertyFiltersEditor({
  projectId,
  value,
  onChange,
  types = ['event', 'person'],
  label,
}: {
  projectId: number
  value: PropertyFilter[]
  onChange: (filters: PropertyFilter[]) => void
  types?: ('event' | 'person')[]
  label: string
}) {
  const eventNames = usePropertyNames(projectId, 'event')
  const personNames = usePropertyNames(projectId, 'person')
  const set = (index: number, change: Partial<PropertyFilter>) =>
    onChange(value.map((f, i) => (i === index ? { ...f, ...change } : f)))
  return (
    <Stack gap="xs" role="group" aria-label={label}>
      {value.map((filter, index) => {
        const type = filter.type ?? types[0]
        const n = index + 1
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity beyond their place
          <Group key={index} gap="xs" align="flex-end" wrap="nowrap" data-testid="property-filter">
            {types.length > 1 ? (
              <Select
                aria-label={`${label} ${n}: kind`}
                data={types.map((t) => ({ value: t, label: t === 'event' ? 'Event property' : 'Person property' }))}
                value={type}
                allowDeselect={false}
                onChange={(t) => set(index, { type: t ?? types[0] })}
                w={160}
              />
            ) : null}
            <Autocomplete
              aria-label={`${label} ${n}: property`}
              placeholder="Property"
              data={(type === 'person' ? personNames.data : eventNames.data) ?? []}
              value={filter.key}
              onChange={(key) => set(index, { key })}
              style={{ flex: 1 }}
            />
            <Select
              aria-label={`${label} ${n}: operator`}
              data={OPERATORS}
              value={filter.operator ?? 'exact'}
              allowDeselect={false}
              onChange={(operator) => set(index, { operator: operator ?? 'exact' })}
              w={180}
            />
            {NO_VALUE.has(filter.operator ?? '') ? null : (
              <TextInput
                aria-label={`${label} ${n}: value`}
                placeholder="Value"
                value={valueText(filter.value)}
                onChange={(e) => set(index, { value: e.currentTarget.value })}
                style={{ flex: 1 }}
              />
            )}
            <ActionIcon
              variant="subtle"
              color="red"
              size="lg"
              aria-label={`Remove ${label.toLowerCase()} ${n}`}
              onClick={() => onChange(value.filter((_, i) => i !== index))}
            >
              ×
            </ActionIcon>
          </Group>
        )
      })}
      <Group>
        <Button
          size="xs"
          variant="light"
          onClick={() => onChange([...value, { key: '', operator: 'exact', value: '', type: types[0] }])}
        >
          Add filter
        </Button>
      </Group>
    </Stack>
  )
}

/** The filters as the API takes them: complete rows only, without a value where the operator needs none. */
export function cleanFilters(filters: PropertyFilter[]): PropertyFilter[] {
  return filters
    .filter((f) => f.key.trim() !== '')
    .map((f) => {
      const operator = f.operator ?? 'exact'
      const out: PropertyFilter = { ...f, key: f.key.trim(), operator, type: f.type ?? 'event' }
      if (NO_VALUE.has(operator)) out.value = undefined
      else if (typeof out.value === 'string' && (operator === 'gt' || operator === 'lt') && out.value.trim() !== '')
        out.value = Number.isNaN(Number(out.value)) ? out.value : Number(out.value)
      return out
    })
}
