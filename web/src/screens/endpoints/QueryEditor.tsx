// An endpoint's query as it is edited: HogQL in the SQL editor's own CodeMirror editor, with a default value for
// each `{variables.name}` it uses; an insight query as its JSON node (checked as it is typed).
import { Group, JsonInput, Stack, Text, TextInput } from '@mantine/core'
import { useMemo } from 'react'
import { usePropertyNames } from '../../definitions'
import { useProjectId } from '../../session'
import { HogQLEditor } from '../sql/HogQLEditor'
import { variablesOf } from './model'

export interface HogQLDraft {
  text: string
  defaults: Record<string, string>
}

export function HogQLQueryEditor({
  initialText,
  draft,
  onChange,
  onSubmit,
}: {
  /** seeds the editor once (remount it with a key to load another query) */
  initialText: string
  draft: HogQLDraft
  onChange: (draft: HogQLDraft) => void
  /** Ctrl/Cmd+Enter in the editor */
  onSubmit: () => void
}) {
  const projectId = useProjectId()
  const eventProperties = usePropertyNames(projectId, 'event')
  const personProperties = usePropertyNames(projectId, 'person')
  const propertyNames = useMemo(
    () => ({ event: eventProperties.data ?? [], person: personProperties.data ?? [] }),
    [eventProperties.data, personProperties.data],
  )
  const names = variablesOf(draft.text)
  return (
    <Stack gap="xs">
      <Text fw={500} size="sm" id="endpoint-query-label">
        HogQL query
      </Text>
      <HogQLEditor
        initialValue={initialText}
        onChange={(text) => onChange({ ...draft, text })}
        onRun={onSubmit}
        propertyNames={propertyNames}
        error={null}
      />
      <Text size="xs" c="dimmed">
        Use <code>{'{variables.name}'}</code> for a value the caller sends; each needs a default.
      </Text>
      {names.length > 0 ? (
        <Group gap="sm" data-testid="variable-defaults">
          {names.map((name) => (
            <TextInput
              key={name}
              label={`Default for ${name}`}
              value={draft.defaults[name] ?? ''}
              onChange={(e) => onChange({ ...draft, defaults: { ...draft.defaults, [name]: e.currentTarget.value } })}
              w={220}
            />
          ))}
        </Group>
      ) : null}
    </Stack>
  )
}

export function InsightQueryEditor({ value, onChange }: { value: string; onChange: (text: string) => void }) {
  return (
    <JsonInput
      label="Insight query (JSON)"
      description="The insight's query node: TrendsQuery, FunnelsQuery, RetentionQuery…"
      value={value}
      onChange={onChange}
      validationError="Not valid JSON"
      formatOnBlur
      autosize
      minRows={8}
      maxRows={24}
    />
  )
}
