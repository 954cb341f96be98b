// The release conditions of a flag: condition sets (OR'ed), each with property filters (AND'ed) on person
// properties, group properties or cohort membership, values suggested from the data, and a rollout percentage.
import {
  ActionIcon,
  Autocomplete,
  Button,
  Card,
  Group,
  NumberInput,
  Select,
  Slider,
  Stack,
  Text,
  Title,
} from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { get, type Page, qs } from '../../api'
import { usePropertyNames } from '../../definitions'
import type { Condition, Property } from './model'

const OPERATORS = [
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

interface GroupType {
  group_type_index: number
  group_type: string
  name_singular: string | null
}

function useGroupTypes(projectId: number) {
  return useQuery({
    queryKey: ['group-types', projectId],
    queryFn: ({ signal }) => get<GroupType[]>(`/api/projects/${projectId}/groups_types/`, signal),
    staleTime: 60_000,
  })
}

function useCohorts(projectId: number) {
  return useQuery({
    queryKey: ['cohorts-brief', projectId],
    queryFn: async ({ signal }) =>
      (await get<Page<{ id: number; name: string }>>(`/api/projects/${projectId}/cohorts/?limit=500`, signal)).results,
    staleTime: 60_000,
  })
}

function valueText(value: unknown): string {
  if (value === undefined || value === null) return ''
  if (Array.isArray(value)) return value.join(', ')
  return String(value)
}

/** The value as stored: a list for equals/doesn't equal with commas, a number for gt/lt when numeric. */
function parseValue(text: string, operator: string): unknown {
  if (operator === 'gt' || operator === 'lt')
    return text.trim() !== '' && !Number.isNaN(Number(text)) ? Number(text) : text
  if ((operator === 'exact' || operator === 'is_not') && text.includes(','))
    return text
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
  return text
}

function PropertyRow({
  projectId,
  property,
  label,
  onChange,
  onRemove,
  error,
}: {
  projectId: number
  property: Property
  label: string
  onChange: (p: Property) => void
  onRemove: () => void
  error?: string
}) {
  const personNames = usePropertyNames(projectId, 'person')
  const groupTypes = useGroupTypes(projectId)
  const cohorts = useCohorts(projectId)
  const groupNames = useQuery({
    queryKey: ['group-property-names', projectId],
    queryFn: ({ signal }) =>
      get<Record<string, { name: string }[]>>(`/api/projects/${projectId}/groups/property_definitions/`, signal),
    enabled: property.type === 'group',
    staleTime: 60_000,
  })
  const valueSuggestions = useQuery({
    queryKey: ['property-values', projectId, property.type, property.group_type_index, property.key],
    queryFn: async ({ signal }) => {
      const rows =
        property.type === 'group'
          ? await get<{ name: unknown }[]>(
              `/api/projects/${projectId}/groups/property_values/${qs({ group_type_index: property.group_type_index ?? 0, key: property.key })}`,
              signal,
            )
          : await get<{ name: unknown }[]>(
              `/api/projects/${projectId}/persons/values/${qs({ key: property.key })}`,
              signal,
            )
      return [...new Set(rows.map((r) => valueText(r.name)).filter(Boolean))]
    },
    enabled: property.type !== 'cohort' && property.key.trim() !== '',
    staleTime: 30_000,
  })

  const kind = property.type === 'group' ? `group-${property.group_type_index ?? 0}` : property.type
  const kinds = [
    { value: 'person', label: 'Person property' },
    ...(groupTypes.data ?? []).map((g) => ({
      value: `group-${g.group_type_index}`,
      label: `${g.name_singular || g.group_type} property`,
    })),
    { value: 'cohort', label: 'Cohort' },
  ]
  const operator = property.operator ?? 'exact'
  return (
    <Stack gap={4} data-testid="condition-property">
      <Group gap="xs" align="flex-end" wrap="nowrap">
        <Select
          aria-label={`${label}: kind`}
          data={kinds}
          value={kind}
          allowDeselect={false}
          w={190}
          onChange={(v) => {
            if (!v || v === kind) return
            if (v === 'cohort') onChange({ key: 'id', type: 'cohort', operator: 'in', value: '' })
            else if (v.startsWith('group-'))
              onChange({ key: '', type: 'group', group_type_index: Number(v.slice(6)), operator: 'exact', value: '' })
            else onChange({ key: '', type: 'person', operator: 'exact', value: '' })
          }}
        />
        {property.type === 'cohort' ? (
          <Select
            aria-label={`${label}: cohort`}
            placeholder="Choose a cohort"
            searchable
            data={(cohorts.data ?? []).map((c) => ({ value: String(c.id), label: c.name || `Cohort ${c.id}` }))}
            value={property.value === '' || property.value == null ? null : String(property.value)}
            onChange={(v) => onChange({ ...property, value: v ? Number(v) : '' })}
            style={{ flex: 1 }}
          />
        ) : (
          <>
            <Autocomplete
              aria-label={`${label}: property`}
              placeholder="Property"
              data={
                property.type === 'group'
                  ? (groupNames.data?.[String(property.group_type_index ?? 0)] ?? []).map((n) => n.name)
                  : (personNames.data ?? [])
              }
              value={property.key}
              onChange={(key) => onChange({ ...property, key })}
              error={error}
              style={{ flex: 1 }}
            />
            <Select
              aria-label={`${label}: operator`}
              data={OPERATORS}
              value={operator}
              allowDeselect={false}
              onChange={(op) => onChange({ ...property, operator: op ?? 'exact' })}
              w={170}
            />
            {NO_VALUE.has(operator) ? null : (
              <Autocomplete
                aria-label={`${label}: value`}
                placeholder="Value"
                data={valueSuggestions.data ?? []}
                value={valueText(property.value)}
                onChange={(text) => onChange({ ...property, value: parseValue(text, operator) })}
                style={{ flex: 1 }}
              />
            )}
          </>
        )}
        <ActionIcon variant="subtle" color="red" size="lg" aria-label={`Remove ${label}`} onClick={onRemove}>
          ×
        </ActionIcon>
      </Group>
    </Stack>
  )
}

export function ReleaseConditions({
  projectId,
  groups,
  onChange,
  variants,
  errors,
}: {
  projectId: number
  groups: Condition[]
  onChange: (groups: Condition[]) => void
  variants: string[]
  errors: Record<string, string>
}) {
  const set = (i: number, change: Partial<Condition>) =>
    onChange(groups.map((g, j) => (j === i ? { ...g, ...change } : g)))
  return (
    <Stack gap="sm">
      <Title order={2} size="h4">
        Release conditions
      </Title>
      <Text size="sm" c="dimmed">
        Condition sets are evaluated top to bottom; the first one that matches a person decides. Within a set, every
        filter must match.
      </Text>
      {groups.map((group, i) => {
        const n = i + 1
        const rollout = group.rollout_percentage ?? 100
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: condition sets have no identity beyond their place
          <Card key={i} withBorder padding="md" data-testid="condition-set" role="group" aria-label={`Set ${n}`}>
            <Stack gap="sm">
              <Group justify="space-between">
                <Text fw={600}>Set {n}</Text>
                <Button
                  size="xs"
                  variant="subtle"
                  color="red"
                  onClick={() => onChange(groups.filter((_, j) => j !== i))}
                  aria-label={`Remove set ${n}`}
                >
                  Remove set
                </Button>
              </Group>
              {group.properties.length === 0 ? (
                <Text size="sm" c="dimmed">
                  Matches all users.
                </Text>
              ) : null}
              {group.properties.map((p, j) => (
                <PropertyRow
                  // biome-ignore lint/suspicious/noArrayIndexKey: filters have no identity beyond their place
                  key={j}
                  projectId={projectId}
                  property={p}
                  label={`Set ${n} filter ${j + 1}`}
                  error={errors[`group-${i}-${j}`]}
                  onChange={(next) => set(i, { properties: group.properties.map((q, k) => (k === j ? next : q)) })}
                  onRemove={() => set(i, { properties: group.properties.filter((_, k) => k !== j) })}
                />
              ))}
              <Group>
                <Button
                  size="xs"
                  variant="light"
                  onClick={() =>
                    set(i, {
                      properties: [...group.properties, { key: '', type: 'person', operator: 'exact', value: '' }],
                    })
                  }
                >
                  Add filter
                </Button>
              </Group>
              <Group align="center" gap="md" wrap="nowrap">
                <Text size="sm" id={`rollout-${i}`} style={{ whiteSpace: 'nowrap' }}>
                  Roll out to
                </Text>
                <Slider
                  thumbLabel={`Set ${n} rollout slider`}
                  value={rollout}
                  onChange={(v) => set(i, { rollout_percentage: v })}
                  min={0}
                  max={100}
                  style={{ flex: 1 }}
                  label={(v) => `${v}%`}
                />
                <NumberInput
                  aria-label={`Set ${n} rollout percentage`}
                  value={rollout}
                  onChange={(v) => set(i, { rollout_percentage: typeof v === 'number' ? v : Number(v) || 0 })}
                  min={0}
                  max={100}
                  suffix="%"
                  w={100}
                  error={errors[`group-${i}`]}
                />
              </Group>
              {variants.length ? (
                <Select
                  label="Optional override"
                  description="Everyone in this set gets this variant."
                  placeholder="No override"
                  clearable
                  data={variants}
                  value={group.variant ?? null}
                  onChange={(v) => set(i, { variant: v })}
                  w={260}
                />
              ) : null}
            </Stack>
          </Card>
        )
      })}
      <Group>
        <Button
          variant="light"
          onClick={() => onChange([...groups, { properties: [], rollout_percentage: 100, variant: null }])}
        >
          Add condition set
        </Button>
      </Group>
    </Stack>
  )
}
