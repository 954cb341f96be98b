// Project settings (PostHog's Settings → Project): name, time zone, week start, the filters that mark test
// accounts, the person properties shown as a person's name, and the project API key to copy into a snippet.
import {
  Button,
  Code,
  CopyButton,
  Divider,
  Group,
  Select,
  Stack,
  TagsInput,
  Text,
  TextInput,
  Title,
} from '@mantine/core'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { useEffect, useMemo, useState } from 'react'
import { api } from '../../api'
import { notify } from '../../components/notify'
import { cleanFilters, type PropertyFilter, PropertyFiltersEditor } from '../../components/PropertyFiltersEditor'
import { ErrorState, errorText, Loading } from '../../components/States'
import { ME_KEY, type Project, useProject, useProjectId } from '../../session'

interface FullProject extends Project {
  week_start_day: 0 | 1
  test_account_filters: PropertyFilter[]
  person_display_name_properties: string[] | null
}

export default function ProjectSettings() {
  const project = useProject()
  return (
    <Stack gap="lg" maw={900}>
      <Title order={1} size="h2">
        Project settings
      </Title>
      {project.isPending ? (
        <Loading label="Loading the project…" />
      ) : project.error ? (
        <ErrorState error={project.error} retry={() => project.refetch()} />
      ) : (
        <Settings project={project.data as FullProject} />
      )}
    </Stack>
  )
}

function Settings({ project }: { project: FullProject }) {
  const projectId = useProjectId()
  const client = useQueryClient()
  const [name, setName] = useState(project.name)
  const [timezone, setTimezone] = useState(project.timezone)
  const [weekStart, setWeekStart] = useState(String(project.week_start_day ?? 0))
  const [filters, setFilters] = useState<PropertyFilter[]>(project.test_account_filters ?? [])
  const [displayNames, setDisplayNames] = useState<string[]>(project.person_display_name_properties ?? [])
  useEffect(() => {
    setName(project.name)
    setTimezone(project.timezone)
    setWeekStart(String(project.week_start_day ?? 0))
    setFilters(project.test_account_filters ?? [])
    setDisplayNames(project.person_display_name_properties ?? [])
  }, [project])
  const zones = useMemo(() => {
    const all = (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone')
    const list = all ?? []
    return [...new Set(['UTC', ...list, project.timezone])]
  }, [project.timezone])
  const save = useMutation({
    mutationFn: (body: Record<string, unknown>) => api<FullProject>('PATCH', `/api/projects/${projectId}/`, body),
    onSuccess: (saved) => {
      client.setQueryData(['project', projectId], saved)
      void client.invalidateQueries({ queryKey: ['projects'] })
      void client.invalidateQueries({ queryKey: ME_KEY })
      notify('Project settings saved', 'teal')
    },
  })
  return (
    <Stack gap="lg">
      <form
        onSubmit={(e) => {
          e.preventDefault()
          save.mutate({
            name: name.trim(),
            timezone,
            week_start_day: Number(weekStart),
            test_account_filters: cleanFilters(filters),
            person_display_name_properties: displayNames.length ? displayNames : null,
          })
        }}
      >
        <Stack gap="md">
          <TextInput label="Project name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
          <Group grow align="flex-start">
            <Select
              label="Time zone"
              description="Days in insights start and end in this time zone"
              data={zones}
              value={timezone}
              onChange={(v) => setTimezone(v ?? 'UTC')}
              searchable
              allowDeselect={false}
            />
            <Select
              label="Week starts on"
              data={[
                { value: '0', label: 'Sunday' },
                { value: '1', label: 'Monday' },
              ]}
              value={weekStart}
              onChange={(v) => setWeekStart(v ?? '0')}
              allowDeselect={false}
            />
          </Group>
          <Divider />
          <Title order={2} size="h4">
            Internal and test account filtering
          </Title>
          <Text size="sm" c="dimmed">
            Events matching these filters are left out of insights that have “Filter out internal and test users” on.
          </Text>
          <PropertyFiltersEditor
            projectId={projectId}
            label="Test account filter"
            value={filters}
            onChange={setFilters}
          />
          <Divider />
          <TagsInput
            label="Person display name"
            description="Person properties shown as a person's name, first one set wins. Empty: email, name, username."
            value={displayNames}
            onChange={setDisplayNames}
          />
          {save.error ? (
            <Text c="red" size="sm" role="alert" data-testid="project-error">
              {errorText(save.error)}
            </Text>
          ) : null}
          <Group>
            <Button type="submit" loading={save.isPending}>
              Save
            </Button>
          </Group>
        </Stack>
      </form>
      <Divider />
      <Stack gap="xs" component="section" aria-labelledby="api-key-heading">
        <Title order={2} size="h4" id="api-key-heading">
          Project API key
        </Title>
        <Text size="sm" c="dimmed">
          Write-only key for capturing events from your apps and sites (posthog-js, SDKs). Safe to publish.
        </Text>
        <Group gap="sm">
          <Code data-testid="project-api-key" fz="sm">
            {project.api_token}
          </Code>
          <CopyButton value={project.api_token}>
            {({ copied, copy }) => (
              <Button size="xs" variant="light" color={copied ? 'teal' : undefined} onClick={copy}>
                {copied ? 'Copied' : 'Copy'}
              </Button>
            )}
          </CopyButton>
        </Group>
        <Text size="sm">
          Project ID: <Code>{project.id}</Code>
        </Text>
      </Stack>
    </Stack>
  )
}
