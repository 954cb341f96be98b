// The questions of a survey, each edited in its own card: type, text, description, optional, and what the type
// needs — a link and its button, a rating's display, scale and end labels, choices with an open-ended last one.
import {
  ActionIcon,
  Button,
  Card,
  Checkbox,
  Group,
  Menu,
  SegmentedControl,
  Select,
  Stack,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core'
import { QUESTION_TYPES, type Question, type QuestionType, questionOfType, SCALES } from './model'

export function QuestionsEditor({
  questions,
  errors,
  onChange,
  onFocusQuestion,
}: {
  questions: Question[]
  errors: Record<string, string>
  onChange: (questions: Question[]) => void
  onFocusQuestion?: (index: number) => void
}) {
  const set = (index: number, q: Question) => onChange(questions.map((old, i) => (i === index ? q : old)))
  const move = (index: number, by: number) => {
    const next = [...questions]
    const [q] = next.splice(index, 1)
    next.splice(index + by, 0, q)
    onChange(next)
  }
  return (
    <Stack gap="md">
      {questions.map((q, index) => (
        <QuestionCard
          key={q.id ?? `new-${index}`}
          question={q}
          index={index}
          count={questions.length}
          errors={errors}
          onChange={(next) => set(index, next)}
          onRemove={() => onChange(questions.filter((_, i) => i !== index))}
          onMove={(by) => move(index, by)}
          onFocus={() => onFocusQuestion?.(index)}
        />
      ))}
      {errors.questions ? (
        <Text c="red" size="sm" role="alert">
          {errors.questions}
        </Text>
      ) : null}
      <Group>
        <Menu position="bottom-start">
          <Menu.Target>
            <Button variant="light">Add question</Button>
          </Menu.Target>
          <Menu.Dropdown>
            {QUESTION_TYPES.map((t) => (
              <Menu.Item key={t.value} onClick={() => onChange([...questions, questionOfType(t.value)])}>
                {t.label}
              </Menu.Item>
            ))}
          </Menu.Dropdown>
        </Menu>
      </Group>
    </Stack>
  )
}

function QuestionCard({
  question: q,
  index,
  count,
  errors,
  onChange,
  onRemove,
  onMove,
  onFocus,
}: {
  question: Question
  index: number
  count: number
  errors: Record<string, string>
  onChange: (q: Question) => void
  onRemove: () => void
  onMove: (by: number) => void
  onFocus: () => void
}) {
  const n = index + 1
  const err = (field: string) => errors[`q${index}.${field}`]
  return (
    <Card withBorder padding="md" data-testid="question-card" onFocusCapture={onFocus}>
      <Stack gap="sm" role="group" aria-labelledby={`question-${index}-title`}>
        <Group justify="space-between">
          <Title order={3} size="h5" id={`question-${index}-title`}>
            Question {n}
          </Title>
          <Group gap={4}>
            <ActionIcon
              variant="subtle"
              aria-label={`Move question ${n} up`}
              disabled={index === 0}
              onClick={() => onMove(-1)}
            >
              ↑
            </ActionIcon>
            <ActionIcon
              variant="subtle"
              aria-label={`Move question ${n} down`}
              disabled={index === count - 1}
              onClick={() => onMove(1)}
            >
              ↓
            </ActionIcon>
            <Button size="xs" variant="subtle" color="red" onClick={onRemove} disabled={count === 1}>
              Remove question {n}
            </Button>
          </Group>
        </Group>
        <Select
          label={`Question ${n} type`}
          data={QUESTION_TYPES}
          value={q.type}
          allowDeselect={false}
          onChange={(t) => t && t !== q.type && onChange(questionOfType(t as QuestionType, q))}
          w={260}
        />
        <TextInput
          label={`Question ${n}`}
          required
          value={q.question}
          error={err('question')}
          onChange={(e) => onChange({ ...q, question: e.currentTarget.value })}
        />
        <Textarea
          label={`Question ${n} description`}
          autosize
          minRows={1}
          value={q.description ?? ''}
          onChange={(e) => onChange({ ...q, description: e.currentTarget.value })}
        />
        {q.type === 'link' ? (
          <TextInput
            label={`Question ${n} link`}
            description="https:// or mailto: — opened by the button."
            required
            value={q.link ?? ''}
            error={err('link')}
            onChange={(e) => onChange({ ...q, link: e.currentTarget.value })}
          />
        ) : null}
        {q.type === 'rating' ? (
          <Stack gap="xs">
            <Group align="flex-end" gap="md">
              <div>
                <Text size="sm" fw={500} id={`q${index}-display`}>
                  Display
                </Text>
                <SegmentedControl
                  aria-labelledby={`q${index}-display`}
                  data={[
                    { value: 'number', label: 'Numbers' },
                    { value: 'emoji', label: 'Emoji' },
                  ]}
                  value={q.display ?? 'number'}
                  onChange={(display) =>
                    onChange({
                      ...q,
                      display: display as 'number' | 'emoji',
                      scale: display === 'emoji' ? 3 : 10,
                    })
                  }
                />
              </div>
              <Select
                label={`Question ${n} scale`}
                data={[...SCALES[q.display === 'emoji' ? 'emoji' : 'number']]}
                value={String(q.scale ?? (q.display === 'emoji' ? 3 : 10))}
                allowDeselect={false}
                onChange={(s) => onChange({ ...q, scale: Number(s) })}
                w={180}
              />
            </Group>
            <Group grow>
              <TextInput
                label="Lower bound label"
                value={q.lowerBoundLabel ?? ''}
                onChange={(e) => onChange({ ...q, lowerBoundLabel: e.currentTarget.value })}
              />
              <TextInput
                label="Upper bound label"
                value={q.upperBoundLabel ?? ''}
                onChange={(e) => onChange({ ...q, upperBoundLabel: e.currentTarget.value })}
              />
            </Group>
          </Stack>
        ) : null}
        {q.type === 'single_choice' || q.type === 'multiple_choice' ? (
          <Choices question={q} index={index} error={err('choices')} onChange={onChange} />
        ) : null}
        <TextInput
          label={`Question ${n} button text`}
          placeholder="Submit"
          value={q.buttonText ?? ''}
          onChange={(e) => onChange({ ...q, buttonText: e.currentTarget.value })}
          w={260}
        />
        <Checkbox
          label="Optional (can be skipped)"
          checked={q.optional ?? false}
          onChange={(e) => onChange({ ...q, optional: e.currentTarget.checked })}
        />
      </Stack>
    </Card>
  )
}

function Choices({
  question: q,
  index,
  error,
  onChange,
}: {
  question: Question
  index: number
  error?: string
  onChange: (q: Question) => void
}) {
  const choices = q.choices ?? []
  const n = index + 1
  const setChoice = (i: number, text: string) =>
    onChange({ ...q, choices: choices.map((c, j) => (j === i ? text : c)) })
  return (
    <Stack gap={6} role="group" aria-label={`Question ${n} choices`}>
      <Text size="sm" fw={500}>
        Choices
      </Text>
      {choices.map((choice, i) => {
        const open = q.hasOpenChoice && i === choices.length - 1
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: choices are plain strings that may repeat while typed
          <Group key={i} gap="xs" wrap="nowrap">
            <TextInput
              aria-label={`Question ${n} choice ${i + 1}${open ? ' (open-ended)' : ''}`}
              value={choice}
              onChange={(e) => setChoice(i, e.currentTarget.value)}
              style={{ flex: 1 }}
            />
            <ActionIcon
              variant="subtle"
              color="red"
              size="lg"
              aria-label={`Remove choice ${i + 1} of question ${n}`}
              disabled={choices.length <= 2}
              onClick={() => onChange({ ...q, choices: choices.filter((_, j) => j !== i) })}
            >
              ×
            </ActionIcon>
          </Group>
        )
      })}
      {error ? (
        <Text c="red" size="sm" role="alert">
          {error}
        </Text>
      ) : null}
      <Group gap="sm">
        <Button
          size="xs"
          variant="light"
          disabled={choices.length >= 20}
          onClick={() => {
            // A new choice goes before the open-ended one, which stays last.
            const next = [...choices]
            next.splice(q.hasOpenChoice ? next.length - 1 : next.length, 0, '')
            onChange({ ...q, choices: next })
          }}
        >
          Add choice
        </Button>
        <Checkbox
          label="Last choice is open-ended (free text)"
          checked={q.hasOpenChoice ?? false}
          onChange={(e) => {
            const on = e.currentTarget.checked
            onChange({ ...q, hasOpenChoice: on, choices: on ? [...choices, 'Other'] : choices.slice(0, -1) })
          }}
        />
        <Checkbox
          label="Shuffle choices"
          checked={q.shuffleOptions ?? false}
          onChange={(e) => onChange({ ...q, shuffleOptions: e.currentTarget.checked })}
        />
      </Group>
    </Stack>
  )
}
