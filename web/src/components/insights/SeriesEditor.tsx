// The series of an insight (PostHog's "ActionFilter"): each an event (or all events) or an action from
// `/api/projects/{id}/actions/`, with its math (total, unique users, weekly/monthly active, property aggregates…).
import { ActionIcon, Button, Group, Select, Stack, Text } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { get, type Page, qs } from '../../api'
import { useEventNames, usePropertyNames } from '../../definitions'
import type { EntityNode } from './nodes'

export const MATHS = [
  { value: 'total', label: 'Total count' },
  { value: 'dau', label: 'Unique users' },
  { value: 'weekly_active', label: 'Weekly active users' },
  { value: 'monthly_active', label: 'Monthly active users' },
  { value: 'unique_session', label: 'Unique sessions' },
  { value: 'first_time_for_user', label: 'First time for a user' },
  { value: 'avg_count_per_actor', label: 'Average count per user' },
  { value: 'max_count_per_actor', label: 'Maximum count per user' },
  { value: 'sum', label: 'Property sum' },
  { value: 'avg', label: 'Property average' },
  { value: 'min', label: 'Property minimum' },
  { value: 'max', label: 'Property maximum' },
  { value: 'median', label: 'Property median' },
  { value: 'p75', label: 'Property 75th percentile' },
  { value: 'p90', label: 'Property 90th percentile' },
  { value: 'p95', label: 'Property 95th percentile' },
  { value: 'p99', label: 'Property 99th percentile' },
]

export const PROPERTY_MATHS = new Set(['sum', 'avg', 'min', 'max', 'median', 'p75', 'p90', 'p95', 'p99'])

export interface ActionSummary {
  id: number
  name: string | null
}

export function useActions(projectId: number) {
  return useQuery({
    queryKey: ['actions', projectId],
    queryFn: async ({ signal }) =>
      (await get<Page<ActionSummary>>(`/api/projects/${projectId}/actions/${qs({ limit: 500 })}`, signal)).results,
    staleTime: 60_000,
  })
}

export const letter = (i: number) => String.fromCharCode(65 + (i % 26))

/** The entity select's value of a node: `events:<name>` (`events:` for all events) or `actions:<id>`. */
export const entityValue = (n: { kind?: string; event?: string | null; id?: number | string; type?: string }) =>
  n.kind === 'ActionsNode' || n.type === 'actions'
    ? `actions:${n.id}`
    : `events:${n.kind ? (n.event ?? '') : (n.id ?? '')}`

/** The choices of the entity select: all events, the project's events, its actions. */
export function useEntityChoices(projectId: number, current: string[]) {
  const events = useEventNames(projectId)
  const actions = useActions(projectId)
  const eventItems = (events.data ?? []).map((e) => ({ value: `events:${e}`, label: e }))
  const actionItems = (actions.data ?? []).map((a) => ({ value: `actions:${a.id}`, label: a.name ?? `Action ${a.id}` }))
  for (const v of current) {
    if (v.startsWith('events:') && v !== 'events:' && !eventItems.some((i) => i.value === v)) {
      eventItems.push({ value: v, label: v.slice(7) })
    }
  }
  return {
    data: [
      { group: 'Events', items: [{ value: 'events:', label: 'All events' }, ...eventItems] },
      { group: 'Actions', items: actionItems },
    ],
    actionName: (id: number) => actions.data?.find((a) => a.id === id)?.name ?? `Action ${id}`,
  }
}

/** An entity node from the select's value. */
export function entityFrom(value: string, old: EntityNode, actionName: (id: number) => string): EntityNode {
  const [type, ...rest] = value.split(':')
  const key = rest.join(':')
  const { kind: _k, event: _e, id: _i, name: _n, ...keep } = old
  if (type === 'actions') return { ...keep, kind: 'ActionsNode', id: Number(key), name: actionName(Number(key)) }
  return { ...keep, kind: 'EventsNode', event: key || null, name: key || 'All events' }
}

export function SeriesEditor({
  projectId,
  series,
  onChange,
  withMath = true,
  noun = 'series',
  min = 1,
  max = 20,
}: {
  projectId: number
  series: EntityNode[]
  onChange: (series: EntityNode[]) => void
  withMath?: boolean
  /** "series" for graphs, "step" for funnels */
  noun?: 'series' | 'step'
  min?: number
  max?: number
}) {
  const choices = useEntityChoices(projectId, series.map(entityValue))
  const numeric = usePropertyNames(projectId, 'event')
  const set = (i: number, node: EntityNode) => onChange(series.map((s, j) => (j === i ? node : s)))
  return (
    <Stack gap="xs" data-testid="series-editor">
      <Text fw={600} size="sm">
        {noun === 'step' ? 'Steps' : 'Series'}
      </Text>
      {series.map((s, i) => {
        const name = noun === 'step' ? `Step ${i + 1}` : `Series ${letter(i)}`
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: series are positional (A, B, C…)
          <Group key={i} gap="xs" align="flex-end" wrap="nowrap">
            <Select
              label={`${name} event`}
              searchable
              data={choices.data}
              value={entityValue(s)}
              allowDeselect={false}
              w={240}
              onChange={(v) => v !== null && set(i, entityFrom(v, s, choices.actionName))}
            />
            {withMath ? (
              <Select
                label={`${name} math`}
                data={MATHS}
                value={s.math ?? 'total'}
                allowDeselect={false}
                w={210}
                onChange={(v) => {
                  if (!v) return
                  const { math_property: _p, ...rest } = s
                  set(
                    i,
                    PROPERTY_MATHS.has(v) ? { ...rest, math: v, math_property: s.math_property } : { ...rest, math: v },
                  )
                }}
              />
            ) : null}
            {withMath && PROPERTY_MATHS.has(s.math ?? '') ? (
              <Select
                label={`${name} property`}
                searchable
                data={numeric.data ?? []}
                value={s.math_property ?? null}
                w={190}
                onChange={(v) => set(i, { ...s, math_property: v ?? undefined })}
              />
            ) : null}
            {series.length > min ? (
              <ActionIcon
                variant="subtle"
                color="gray"
                size="lg"
                aria-label={`Remove ${name}`}
                onClick={() => onChange(series.filter((_, j) => j !== i))}
              >
                ✕
              </ActionIcon>
            ) : null}
          </Group>
        )
      })}
      {series.length < max ? (
        <Button
          variant="subtle"
          size="xs"
          w="fit-content"
          onClick={() =>
            onChange([
              ...series,
              {
                kind: 'EventsNode',
                event: '$pageview',
                name: '$pageview',
                ...(withMath ? { math: 'total' } : {}),
              },
            ])
          }
        >
          {noun === 'step' ? '+ Add step' : '+ Add graph series'}
        </Button>
      ) : null}
    </Stack>
  )
}
