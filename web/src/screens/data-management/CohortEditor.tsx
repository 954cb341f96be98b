// One cohort (`cohorts/:id`, `new` to create). A static cohort is a list of distinct ids (pasted, one a line, or
// a CSV's first column); a dynamic one is groups of criteria — person properties, events performed (once or a
// number of times, within a window), membership of another cohort — each of which can be negated, the groups
// combined with "any" or "all", as PostHog's cohort API takes them. Below: the calculation status and the
// current members (`/cohorts/{id}/persons/`). Deleting is refused while an active feature flag uses the cohort,
// in the server's words.
import {
  Alert,
  Anchor,
  Autocomplete,
  Button,
  Card,
  Checkbox,
  Code,
  Group,
  NumberInput,
  SegmentedControl,
  Select,
  Stack,
  Table,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core'
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useState } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { api, get, type Page, qs } from '../../api'
import { ConfirmButton } from '../../components/ConfirmButton'
import { notify } from '../../components/notify'
import { OPERATORS } from '../../components/PropertyFiltersEditor'
import { Empty, ErrorState, errorText, Loading } from '../../components/States'
import { useSearchState } from '../../components/useSearchState'
import { useEventNames, usePropertyNames } from '../../definitions'
import { useProjectId } from '../../session'
import { type Cohort, CohortStatus } from './Cohorts'
import { DataNav, Pager, when } from './common'

type Kind = 'person' | 'performed_event' | 'performed_event_multiple' | 'cohort' | 'other'

interface Criterion {
  kind: Kind
  negation: boolean
  key: string
  operator: string
  value: string
  timeValue: number
  timeInterval: string
  countOperator: string
  count: number
  cohortId: string | null
  /** a criterion this editor cannot show (kept exactly as the API gave it) */
  raw?: Record<string, unknown>
}

interface CriteriaGroup {
  type: 'AND' | 'OR'
  criteria: Criterion[]
}

const KINDS = [
  { value: 'person', label: 'Person property' },
  { value: 'performed_event', label: 'Performed event' },
  { value: 'performed_event_multiple', label: 'Performed event multiple times' },
  { value: 'cohort', label: 'In cohort' },
]
const INTERVALS = ['day', 'week', 'month', 'year'].map((v) => ({ value: v, label: `${v}s` }))
const COUNT_OPERATORS = [
  { value: 'gte', label: 'at least' },
  { value: 'eq', label: 'exactly' },
  { value: 'lte', label: 'at most' },
]

const blank = (kind: Kind = 'person'): Criterion => ({
  kind,
  negation: false,
  key: '',
  operator: 'exact',
  value: '',
  timeValue: 30,
  timeInterval: 'day',
  countOperator: 'gte',
  count: 2,
  cohortId: null,
})

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function toCriterion(node: Record<string, unknown>): Criterion {
  const c = blank()
  c.negation = node.negation === true
  if ((node.type ?? 'person') === 'person' && typeof node.key === 'string') {
    const value = Array.isArray(node.value) ? node.value.join(', ') : (node.value ?? '')
    return { ...c, kind: 'person', key: node.key, operator: String(node.operator ?? 'exact'), value: String(value) }
  }
  if (node.type === 'cohort') return { ...c, kind: 'cohort', cohortId: String(node.value) }
  if (
    node.type === 'behavioral' &&
    node.event_type === 'events' &&
    (node.value === 'performed_event' || node.value === 'performed_event_multiple') &&
    typeof node.time_value === 'number' &&
    typeof node.time_interval === 'string' &&
    !node.explicit_datetime &&
    !(Array.isArray(node.event_filters) && node.event_filters.length)
  ) {
    return {
      ...c,
      kind: node.value,
      key: String(node.key),
      timeValue: node.time_value,
      timeInterval: node.time_interval,
      countOperator: String(node.operator ?? 'gte'),
      count: Number(node.operator_value ?? 1),
    }
  }
  return { ...c, kind: 'other', raw: node }
}

/** The stored filters as groups of criteria; a deeper nesting becomes one group per inner group. */
function toGroups(filters: unknown): { match: 'OR' | 'AND'; groups: CriteriaGroup[] } {
  const root = isObject(filters) && isObject(filters.properties) ? filters.properties : null
  if (!root || !Array.isArray(root.values) || root.values.length === 0)
    return { match: 'OR', groups: [{ type: 'AND', criteria: [blank()] }] }
  const groups = root.values.map((g): CriteriaGroup => {
    if (isObject(g) && Array.isArray(g.values))
      return {
        type: g.type === 'OR' ? 'OR' : 'AND',
        criteria: g.values.map((n) => (isObject(n) && !Array.isArray(n.values) ? toCriterion(n) : blank('other'))),
      }
    return { type: 'AND', criteria: [isObject(g) ? toCriterion(g) : blank('other')] }
  })
  return { match: root.type === 'AND' ? 'AND' : 'OR', groups }
}

function fromCriterion(c: Criterion): Record<string, unknown> {
  if (c.kind === 'other') return c.raw ?? {}
  if (c.kind === 'cohort') return { type: 'cohort', key: 'id', value: Number(c.cohortId), negation: c.negation }
  if (c.kind === 'person') {
    const noValue = c.operator === 'is_set' || c.operator === 'is_not_set'
    const numeric =
      (c.operator === 'gt' || c.operator === 'lt') && c.value.trim() !== '' && !Number.isNaN(Number(c.value))
    return {
      type: 'person',
      key: c.key.trim(),
      operator: c.operator,
      value: noValue ? c.operator : numeric ? Number(c.value) : c.value,
      negation: c.negation,
    }
  }
  return {
    type: 'behavioral',
    value: c.kind,
    key: c.key.trim(),
    event_type: 'events',
    time_value: c.timeValue,
    time_interval: c.timeInterval,
    negation: c.negation,
    ...(c.kind === 'performed_event_multiple' ? { operator: c.countOperator, operator_value: c.count } : {}),
  }
}

function fromGroups(match: 'OR' | 'AND', groups: CriteriaGroup[]) {
  return {
    properties: {
      type: match,
      values: groups.map((g) => ({ type: g.type, values: g.criteria.map(fromCriterion) })),
    },
  }
}

const distinctIdsOf = (text: string) =>
  text
    .split(/\r?\n/)
    .map((line) => line.split(',')[0].trim().replace(/^"|"$/g, ''))
    .filter((id) => id && id !== 'distinct_id')

export default function CohortEditor() {
  const projectId = useProjectId()
  const { cohortId } = useParams()
  const isNew = cohortId === 'new'
  const cohort = useQuery({
    queryKey: ['cohort', projectId, cohortId],
    queryFn: () => get<Cohort>(`/api/projects/${projectId}/cohorts/${cohortId}/`),
    enabled: !isNew,
    refetchInterval: (q) => (q.state.data?.is_calculating ? 2_000 : false),
  })
  return (
    <Stack gap="md">
      <Title order={1} size="h2">
        {isNew ? 'New cohort' : (cohort.data?.name ?? 'Cohort')}
      </Title>
      <DataNav />
      <Anchor component={Link} to={`/project/${projectId}/cohorts`} size="sm">
        ← All cohorts
      </Anchor>
      {isNew ? (
        <CohortForm />
      ) : cohort.isPending ? (
        <Loading label="Loading the cohort…" />
      ) : cohort.error ? (
        <ErrorState error={cohort.error} retry={() => cohort.refetch()} />
      ) : (
        <>
          <Status cohort={cohort.data} />
          <CohortForm cohort={cohort.data} />
          <Members cohort={cohort.data} />
        </>
      )}
    </Stack>
  )
}

function Status({ cohort }: { cohort: Cohort }) {
  return (
    <Group gap="md" data-testid="cohort-status">
      <CohortStatus cohort={cohort} />
      <Text size="sm">{cohort.count === null ? 'Not counted yet' : `${cohort.count.toLocaleString()} persons`}</Text>
      {cohort.last_calculation ? (
        <Text size="sm" c="dimmed">
          Calculated {when(cohort.last_calculation)}
        </Text>
      ) : null}
      {cohort.last_error_message ? (
        <Text size="sm" c="red">
          {cohort.last_error_message}
        </Text>
      ) : null}
    </Group>
  )
}

function CohortForm({ cohort }: { cohort?: Cohort }) {
  const projectId = useProjectId()
  const client = useQueryClient()
  const navigate = useNavigate()
  const [name, setName] = useState(cohort?.name ?? '')
  const [description, setDescription] = useState(cohort?.description ?? '')
  const [isStatic, setIsStatic] = useState(cohort?.is_static ?? false)
  const [ids, setIds] = useState('')
  const initial = toGroups(cohort?.filters)
  const [match, setMatch] = useState<'OR' | 'AND'>(initial.match)
  const [groups, setGroups] = useState<CriteriaGroup[]>(initial.groups)
  useEffect(() => {
    if (!cohort) return
    setName(cohort.name)
    setDescription(cohort.description)
    setIsStatic(cohort.is_static)
    const g = toGroups(cohort.filters)
    setMatch(g.match)
    setGroups(g.groups)
  }, [cohort])
  const base = `/api/projects/${projectId}/cohorts/`
  const save = useMutation({
    mutationFn: () => {
      const distinct_ids = distinctIdsOf(ids)
      const body: Record<string, unknown> = { name: name.trim(), description }
      if (isStatic) {
        if (!cohort) body.is_static = true
        if (distinct_ids.length) body.distinct_ids = distinct_ids
      } else body.filters = fromGroups(match, groups)
      return cohort ? api<Cohort>('PATCH', `${base}${cohort.id}/`, body) : api<Cohort>('POST', base, body)
    },
    onSuccess: (saved) => {
      setIds('')
      void client.invalidateQueries({ queryKey: ['cohorts', projectId] })
      void client.invalidateQueries({ queryKey: ['cohort-persons', projectId, saved.id] })
      client.setQueryData(['cohort', projectId, String(saved.id)], saved)
      notify(`Saved cohort ${saved.name}`, 'teal')
      if (!cohort) navigate(`/project/${projectId}/cohorts/${saved.id}`, { replace: true })
    },
  })
  const setGroup = (gi: number, change: Partial<CriteriaGroup>) =>
    setGroups((all) => all.map((g, i) => (i === gi ? { ...g, ...change } : g)))
  const setCriterion = (gi: number, ci: number, change: Partial<Criterion>) =>
    setGroups((all) =>
      all.map((g, i) =>
        i === gi ? { ...g, criteria: g.criteria.map((c, j) => (j === ci ? { ...c, ...change } : c)) } : g,
      ),
    )

  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        save.mutate()
      }}
    >
      <Stack gap="md" maw={960}>
        <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <Textarea
          label="Description"
          autosize
          minRows={2}
          value={description}
          onChange={(e) => setDescription(e.currentTarget.value)}
        />
        {cohort ? (
          <Text size="sm">
            Type: <strong>{cohort.is_static ? 'Static' : 'Dynamic'}</strong>
          </Text>
        ) : (
          <Stack gap={4}>
            <Text size="sm" fw={500} id="cohort-type-label">
              Type
            </Text>
            <SegmentedControl
              aria-labelledby="cohort-type-label"
              data={[
                { value: 'dynamic', label: 'Dynamic (criteria)' },
                { value: 'static', label: 'Static (list of persons)' },
              ]}
              value={isStatic ? 'static' : 'dynamic'}
              onChange={(v) => setIsStatic(v === 'static')}
              w="fit-content"
            />
          </Stack>
        )}
        {isStatic ? (
          <Textarea
            label={cohort ? 'Add persons by distinct id' : 'Distinct ids'}
            description="One a line, or paste a CSV whose first column holds the distinct ids"
            autosize
            minRows={4}
            value={ids}
            onChange={(e) => setIds(e.currentTarget.value)}
          />
        ) : (
          <Stack gap="sm">
            <Group gap="xs">
              <Text size="sm" id="cohort-match-label">
                Persons who match
              </Text>
              <SegmentedControl
                aria-labelledby="cohort-match-label"
                size="xs"
                data={[
                  { value: 'OR', label: 'any group' },
                  { value: 'AND', label: 'all groups' },
                ]}
                value={match}
                onChange={(v) => setMatch(v as 'OR' | 'AND')}
              />
            </Group>
            {groups.map((group, gi) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: groups have no identity beyond their place
              <Card key={gi} withBorder data-testid="cohort-group">
                <Stack gap="sm">
                  <Group justify="space-between">
                    <Group gap="xs">
                      <Text fw={600} id={`group-${gi}-label`}>
                        Group {gi + 1}: matching
                      </Text>
                      <SegmentedControl
                        aria-label={`Group ${gi + 1} matches`}
                        size="xs"
                        data={[
                          { value: 'AND', label: 'all criteria' },
                          { value: 'OR', label: 'any criterion' },
                        ]}
                        value={group.type}
                        onChange={(v) => setGroup(gi, { type: v as 'AND' | 'OR' })}
                      />
                    </Group>
                    {groups.length > 1 ? (
                      <Button
                        size="xs"
                        variant="subtle"
                        color="red"
                        onClick={() => setGroups((all) => all.filter((_, i) => i !== gi))}
                      >
                        Remove group {gi + 1}
                      </Button>
                    ) : null}
                  </Group>
                  {group.criteria.map((c, ci) => (
                    <CriterionRow
                      // biome-ignore lint/suspicious/noArrayIndexKey: criteria have no identity beyond their place
                      key={ci}
                      label={`Group ${gi + 1} criterion ${ci + 1}`}
                      criterion={c}
                      selfId={cohort?.id}
                      onChange={(change) => setCriterion(gi, ci, change)}
                      onRemove={
                        group.criteria.length > 1
                          ? () => setGroup(gi, { criteria: group.criteria.filter((_, j) => j !== ci) })
                          : undefined
                      }
                    />
                  ))}
                  <Group>
                    <Button
                      size="xs"
                      variant="light"
                      onClick={() => setGroup(gi, { criteria: [...group.criteria, blank()] })}
                    >
                      Add criterion to group {gi + 1}
                    </Button>
                  </Group>
                </Stack>
              </Card>
            ))}
            <Group>
              <Button
                variant="light"
                onClick={() => setGroups((all) => [...all, { type: 'AND', criteria: [blank()] }])}
              >
                Add criteria group
              </Button>
            </Group>
          </Stack>
        )}
        {save.error ? (
          <Alert color="red" role="alert" data-testid="cohort-error">
            {errorText(save.error)}
          </Alert>
        ) : null}
        <Group justify="space-between">
          <Button type="submit" loading={save.isPending}>
            {cohort ? 'Save' : 'Create cohort'}
          </Button>
          {cohort ? (
            <ConfirmButton
              title="Delete cohort"
              message={`Delete “${cohort.name}”? Insights and flags can no longer use it.`}
              confirmLabel="Delete"
              onConfirm={async () => {
                await api('PATCH', `/api/projects/${projectId}/cohorts/${cohort.id}/`, { deleted: true })
                await client.invalidateQueries({ queryKey: ['cohorts', projectId] })
                navigate(`/project/${projectId}/cohorts`)
              }}
            >
              Delete cohort
            </ConfirmButton>
          ) : null}
        </Group>
      </Stack>
    </form>
  )
}

function CriterionRow({
  label,
  criterion: c,
  selfId,
  onChange,
  onRemove,
}: {
  label: string
  criterion: Criterion
  selfId?: number
  onChange: (change: Partial<Criterion>) => void
  onRemove?: () => void
}) {
  const projectId = useProjectId()
  const events = useEventNames(projectId)
  const personProps = usePropertyNames(projectId, 'person')
  const cohorts = useQuery({
    queryKey: ['cohorts', projectId, 'all'],
    queryFn: () => get<Page<Cohort>>(`/api/projects/${projectId}/cohorts/${qs({ limit: 500 })}`),
    enabled: c.kind === 'cohort',
  })
  return (
    <Group gap="xs" align="flex-end" role="group" aria-label={label} data-testid="cohort-criterion">
      {c.kind === 'other' ? (
        <Stack gap={2} style={{ flex: 1 }}>
          <Text size="xs" c="dimmed">
            A criterion this editor does not show; it is kept as it is.
          </Text>
          <Code block>{JSON.stringify(c.raw)}</Code>
        </Stack>
      ) : (
        <>
          <Select
            aria-label={`${label}: kind`}
            data={KINDS}
            value={c.kind}
            allowDeselect={false}
            onChange={(kind) => onChange({ kind: (kind ?? 'person') as Kind })}
            w={230}
          />
          {c.kind === 'person' ? (
            <>
              <Autocomplete
                aria-label={`${label}: property`}
                placeholder="Person property"
                data={personProps.data ?? []}
                value={c.key}
                onChange={(key) => onChange({ key })}
                w={180}
              />
              <Select
                aria-label={`${label}: operator`}
                data={OPERATORS}
                value={c.operator}
                allowDeselect={false}
                onChange={(operator) => onChange({ operator: operator ?? 'exact' })}
                w={170}
              />
              {c.operator === 'is_set' || c.operator === 'is_not_set' ? null : (
                <TextInput
                  aria-label={`${label}: value`}
                  placeholder="Value"
                  value={c.value}
                  onChange={(e) => onChange({ value: e.currentTarget.value })}
                  w={160}
                />
              )}
            </>
          ) : null}
          {c.kind === 'performed_event' || c.kind === 'performed_event_multiple' ? (
            <>
              <Autocomplete
                aria-label={`${label}: event`}
                placeholder="Event"
                data={events.data ?? []}
                value={c.key}
                onChange={(key) => onChange({ key })}
                w={180}
              />
              {c.kind === 'performed_event_multiple' ? (
                <>
                  <Select
                    aria-label={`${label}: how many times`}
                    data={COUNT_OPERATORS}
                    value={c.countOperator}
                    allowDeselect={false}
                    onChange={(v) => onChange({ countOperator: v ?? 'gte' })}
                    w={110}
                  />
                  <NumberInput
                    aria-label={`${label}: times`}
                    min={0}
                    value={c.count}
                    onChange={(v) => onChange({ count: Number(v) || 0 })}
                    w={80}
                  />
                </>
              ) : null}
              <Text size="sm">in the last</Text>
              <NumberInput
                aria-label={`${label}: period length`}
                min={1}
                value={c.timeValue}
                onChange={(v) => onChange({ timeValue: Number(v) || 1 })}
                w={80}
              />
              <Select
                aria-label={`${label}: period unit`}
                data={INTERVALS}
                value={c.timeInterval}
                allowDeselect={false}
                onChange={(v) => onChange({ timeInterval: v ?? 'day' })}
                w={110}
              />
            </>
          ) : null}
          {c.kind === 'cohort' ? (
            <Select
              aria-label={`${label}: cohort`}
              placeholder="Cohort"
              data={(cohorts.data?.results ?? [])
                .filter((o) => o.id !== selfId)
                .map((o) => ({ value: String(o.id), label: o.name || `Cohort ${o.id}` }))}
              value={c.cohortId}
              onChange={(cohortId) => onChange({ cohortId })}
              searchable
              w={240}
            />
          ) : null}
        </>
      )}
      <Checkbox
        label="Not"
        aria-label={`${label}: negate`}
        checked={c.negation}
        onChange={(e) =>
          onChange(
            c.kind === 'other' && c.raw
              ? { negation: e.currentTarget.checked, raw: { ...c.raw, negation: e.currentTarget.checked } }
              : { negation: e.currentTarget.checked },
          )
        }
        mb={8}
      />
      {onRemove ? (
        <Button size="xs" variant="subtle" color="red" onClick={onRemove} aria-label={`Remove ${label.toLowerCase()}`}>
          Remove
        </Button>
      ) : null}
    </Group>
  )
}

interface Person {
  uuid: string
  name: string
  distinct_ids: string[]
  properties: Record<string, unknown>
  created_at: string
}

const MEMBERS = 100

function Members({ cohort }: { cohort: Cohort }) {
  const projectId = useProjectId()
  const { params, update } = useSearchState()
  const offset = Number(params.get('offset') ?? 0) || 0
  const persons = useQuery({
    queryKey: ['cohort-persons', projectId, cohort.id, offset, cohort.is_calculating],
    queryFn: ({ signal }) =>
      get<Page<Person>>(
        `/api/projects/${projectId}/cohorts/${cohort.id}/persons/${qs({ limit: MEMBERS, offset })}`,
        signal,
      ),
    placeholderData: keepPreviousData,
  })
  const rows = persons.data?.results ?? []
  return (
    <Stack gap="sm" component="section" aria-labelledby="members-heading">
      <Title order={2} size="h3" id="members-heading">
        Persons in this cohort
      </Title>
      {persons.isPending ? (
        <Loading label="Loading persons…" />
      ) : persons.error ? (
        <ErrorState error={persons.error} retry={() => persons.refetch()} />
      ) : rows.length === 0 ? (
        <Empty title="No persons in this cohort">
          {cohort.is_static ? 'Add distinct ids above.' : 'Nobody matches these criteria yet.'}
        </Empty>
      ) : (
        <>
          <Table striped aria-label="Persons in this cohort">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Person</Table.Th>
                <Table.Th>Distinct ids</Table.Th>
                <Table.Th>First seen</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((p) => (
                <Table.Tr key={p.uuid} data-testid="member-row">
                  <Table.Td>
                    <Anchor component={Link} to={`/project/${projectId}/persons/${p.uuid}`}>
                      {p.name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" ff="monospace">
                      {p.distinct_ids.join(', ')}
                    </Text>
                  </Table.Td>
                  <Table.Td>{when(p.created_at)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          <Pager offset={offset} limit={MEMBERS} shown={rows.length} onChange={(o) => update({ offset: o || null })} />
        </>
      )}
    </Stack>
  )
}
