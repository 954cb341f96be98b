// What the data-management screens share: the tab bar PostHog shows above them (Events, Actions, Properties,
// Cohorts), a pager for limit/offset lists, and how times are written.
import { Button, Group, Text } from '@mantine/core'
import { Link, useLocation } from 'react-router'
import { useProjectId } from '../../session'

const TABS = [
  { path: 'data-management/events', label: 'Events' },
  { path: 'data-management/actions', label: 'Actions' },
  { path: 'data-management/properties', label: 'Properties' },
  { path: 'cohorts', label: 'Cohorts' },
]

export function DataNav() {
  const projectId = useProjectId()
  const { pathname } = useLocation()
  return (
    <Group gap="xs" component="nav" aria-label="Data management">
      {TABS.map((tab) => {
        const to = `/project/${projectId}/${tab.path}`
        const active = pathname === to || pathname.startsWith(`${to}/`)
        return (
          <Button
            key={tab.path}
            component={Link}
            to={to}
            size="xs"
            variant={active ? 'filled' : 'subtle'}
            aria-current={active ? 'page' : undefined}
          >
            {tab.label}
          </Button>
        )
      })}
    </Group>
  )
}

export function Pager({
  offset,
  limit,
  count,
  shown,
  onChange,
}: {
  offset: number
  limit: number
  count?: number
  shown: number
  onChange: (offset: number) => void
}) {
  const hasMore = count === undefined ? shown === limit : offset + shown < count
  if (offset === 0 && !hasMore) return null
  return (
    <Group justify="space-between">
      <Text size="sm" c="dimmed">
        {count === undefined
          ? `${offset + 1}–${offset + shown}`
          : `${offset + 1}–${offset + shown} of ${count.toLocaleString()}`}
      </Text>
      <Group gap="xs">
        <Button
          size="xs"
          variant="default"
          disabled={offset === 0}
          onClick={() => onChange(Math.max(0, offset - limit))}
        >
          Previous
        </Button>
        <Button size="xs" variant="default" disabled={!hasMore} onClick={() => onChange(offset + limit)}>
          Next
        </Button>
      </Group>
    </Group>
  )
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '—'
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString()
}
