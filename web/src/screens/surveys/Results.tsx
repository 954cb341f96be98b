// A survey's results: the offline headline, counts and rates from `stats/`, each question's answers — a bar chart
// of a rating's or choice's distribution (with the average, and the NPS on a 0–10 scale), the open-text answers
// with their offline summary (`summarize_responses`) — and every response, each archived or unarchived from here.
// Whether archived responses count is in the URL (`archived=show`).
import {
  Alert,
  Badge,
  Button,
  Card,
  Group,
  Paper,
  SimpleGrid,
  Stack,
  Switch,
  Table,
  Text,
  Title,
  VisuallyHidden,
} from '@mantine/core'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { type ReactNode, useMemo, useState } from 'react'
import { api, get, qs } from '../../api'
import { Chart } from '../../components/charts/Chart'
import { Empty, ErrorState, errorText, Loading } from '../../components/States'
import { useSearchState } from '../../components/useSearchState'
import { npsOf, type Question, ratingValues, type Survey, type SurveyResponse, type SurveyStats } from './model'

const RESPONSES = 200

export function SurveyResults({ projectId, survey }: { projectId: number; survey: Survey }) {
  const client = useQueryClient()
  const { params, update } = useSearchState()
  const showArchived = params.get('archived') === 'show'
  const base = `/api/projects/${projectId}/surveys/${survey.id}`
  const key = ['survey-results', projectId, survey.id]
  const stats = useQuery({
    queryKey: [...key, 'stats', showArchived],
    queryFn: ({ signal }) =>
      get<SurveyStats>(
        `${base}/stats/${qs({ include_per_question_stats: 'true', exclude_archived: showArchived ? 'false' : 'true' })}`,
        signal,
      ),
  })
  const responses = useQuery({
    queryKey: [...key, 'responses', showArchived],
    queryFn: ({ signal }) =>
      get<{ results: SurveyResponse[]; has_more: boolean }>(
        `${base}/responses/${qs({ limit: RESPONSES, exclude_archived: showArchived ? 'false' : 'true' })}`,
        signal,
      ),
  })
  const archived = useQuery({
    queryKey: [...key, 'archived'],
    queryFn: ({ signal }) => get<string[]>(`${base}/archived-response-uuids/`, signal),
  })
  // The headline is kept on the survey until refreshed: it is asked afresh whenever the number of responses moved.
  const sent = stats.data?.stats['survey sent']?.total_count ?? 0
  const headline = useQuery({
    queryKey: [...key, 'headline', sent],
    queryFn: ({ signal }) =>
      api<{ headline: string; responses_sampled: number }>(
        'POST',
        `${base}/summary_headline/`,
        { force_refresh: true },
        { signal },
      ),
    enabled: sent > 0,
  })
  const [archiveError, setArchiveError] = useState<unknown>(null)
  const archivedSet = useMemo(() => new Set(archived.data ?? []), [archived.data])

  const toggleArchive = async (uuid: string, archive: boolean) => {
    setArchiveError(null)
    try {
      await api('POST', `${base}/responses/${uuid}/${archive ? 'archive' : 'unarchive'}/`)
      await client.invalidateQueries({ queryKey: key })
    } catch (e) {
      setArchiveError(e)
    }
  }

  if (stats.isPending) return <Loading label="Loading results…" />
  if (stats.error) return <ErrorState error={stats.error} retry={() => stats.refetch()} />
  const s = stats.data
  const count = (event: string) => s.stats[event] ?? { total_count: 0, unique_persons: 0 }
  const questions = survey.questions ?? []

  return (
    <Stack gap="lg" data-testid="survey-results">
      <Group justify="space-between">
        {headline.data && count('survey sent').total_count > 0 ? (
          <Text size="sm" data-testid="survey-headline">
            <b>Summary:</b> {headline.data.headline}
          </Text>
        ) : (
          <span />
        )}
        <Switch
          label="Include archived responses"
          checked={showArchived}
          onChange={(e) => update({ archived: e.currentTarget.checked ? 'show' : null })}
        />
      </Group>
      <SimpleGrid cols={{ base: 2, sm: 3, lg: 5 }} spacing="sm" data-testid="survey-stats">
        <Stat
          label="Impressions"
          value={count('survey shown').total_count}
          sub={`${count('survey shown').unique_persons} users`}
        />
        <Stat
          label="Responses"
          value={count('survey sent').total_count}
          sub={`${count('survey sent').unique_persons} users`}
        />
        <Stat
          label="Dismissed"
          value={count('survey dismissed').total_count}
          sub={`${count('survey dismissed').unique_persons} users`}
        />
        <Stat label="Response rate" value={`${round(s.rates.response_rate)}%`} />
        <Stat label="Dismissal rate" value={`${round(s.rates.dismissal_rate)}%`} />
      </SimpleGrid>
      {count('survey sent').total_count === 0 && count('survey shown').total_count === 0 ? (
        <Empty title="No responses yet">
          {survey.start_date
            ? 'Answers show here as soon as users send them.'
            : 'Launch the survey to start collecting answers.'}
        </Empty>
      ) : null}
      {archiveError ? (
        <Alert color="red" role="alert" title="Could not change the response">
          {errorText(archiveError)}
        </Alert>
      ) : null}
      {questions.map((q, index) => {
        const qs = s.per_question_stats?.find((p) => p.question_index === index)
        const answers = (responses.data?.results ?? []).flatMap((r) => {
          const a = r.answers.find((x) => x.question_index === index)
          return a && a.answer !== null && a.answer !== '' ? [{ response: r, answer: a.answer }] : []
        })
        return (
          <Card key={q.id ?? index} withBorder padding="md" data-testid="question-results">
            <Stack gap="sm">
              <Group justify="space-between" align="flex-start">
                <div>
                  <Text size="xs" c="dimmed">
                    Question {index + 1} · {typeLabel(q)}
                  </Text>
                  <Title order={3} size="h4">
                    {q.question}
                  </Title>
                </div>
                {qs ? (
                  <Text size="sm">
                    {qs.response_count} response{qs.response_count === 1 ? '' : 's'}
                  </Text>
                ) : null}
              </Group>
              {q.type === 'rating' && qs ? (
                <RatingResults question={q} distribution={qs.distribution} average={qs.average ?? null} />
              ) : (q.type === 'single_choice' || q.type === 'multiple_choice') && qs ? (
                <ChoiceResults question={q} distribution={qs.distribution} />
              ) : null}
              {q.type === 'open' ||
              ((q.type === 'single_choice' || q.type === 'multiple_choice') && q.hasOpenChoice) ? (
                <OpenAnswers
                  projectId={projectId}
                  surveyId={survey.id}
                  question={q}
                  index={index}
                  answers={answers
                    .filter((a) => q.type === 'open' || !isOnlyChoices(q, a.answer))
                    .map((a) => ({ ...a, text: answerText(q, a.answer) }))}
                  archived={archivedSet}
                  loading={responses.isPending}
                />
              ) : null}
              {q.type === 'link' ? (
                <Text size="sm" c="dimmed">
                  A link question records that the link was followed, not an answer.
                </Text>
              ) : null}
            </Stack>
          </Card>
        )
      })}
      <Stack gap="xs">
        <Title order={2} size="h4">
          Responses
        </Title>
        {responses.isPending ? (
          <Loading label="Loading responses…" />
        ) : responses.error ? (
          <ErrorState error={responses.error} retry={() => responses.refetch()} />
        ) : responses.data.results.length === 0 ? (
          <Text size="sm" c="dimmed">
            No responses{showArchived ? '' : ' (archived ones are hidden)'}.
          </Text>
        ) : (
          <Table.ScrollContainer minWidth={700}>
            <Table striped data-testid="responses-table">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Sent</Table.Th>
                  <Table.Th>Person</Table.Th>
                  {questions.map((q, i) => (
                    <Table.Th key={q.id ?? i}>Q{i + 1}</Table.Th>
                  ))}
                  <Table.Th>
                    <VisuallyHidden>Actions</VisuallyHidden>
                  </Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {responses.data.results.map((r) => {
                  const isArchived = archivedSet.has(r.uuid)
                  return (
                    <Table.Tr key={r.uuid} data-testid="response-row">
                      <Table.Td>
                        <Text size="sm">{new Date(r.submitted_at).toLocaleString()}</Text>
                        {isArchived ? (
                          <Badge size="xs" color="gray" variant="light">
                            Archived
                          </Badge>
                        ) : null}
                      </Table.Td>
                      <Table.Td>
                        <Text size="sm" ff="monospace" lineClamp={1}>
                          {r.distinct_id}
                        </Text>
                      </Table.Td>
                      {questions.map((q, i) => {
                        const a = r.answers.find((x) => x.question_index === i)
                        return (
                          <Table.Td key={q.id ?? i}>
                            <Text size="sm" lineClamp={3}>
                              {a ? answerText(q, a.answer) : '—'}
                            </Text>
                          </Table.Td>
                        )
                      })}
                      <Table.Td>
                        <Button
                          size="xs"
                          variant="subtle"
                          color={isArchived ? 'blue' : 'gray'}
                          onClick={() => void toggleArchive(r.uuid, !isArchived)}
                        >
                          {isArchived ? 'Unarchive' : 'Archive'}
                        </Button>
                      </Table.Td>
                    </Table.Tr>
                  )
                })}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
        {responses.data?.has_more ? (
          <Text size="xs" c="dimmed">
            The newest {RESPONSES} responses.
          </Text>
        ) : null}
      </Stack>
    </Stack>
  )
}

const round = (n: number) => Math.round(n * 10) / 10

function Stat({ label, value, sub }: { label: string; value: ReactNode; sub?: string }) {
  return (
    <Paper withBorder p="sm" radius="md">
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text fw={700} size="xl" data-testid={`stat-${label.toLowerCase().replace(/ /g, '-')}`}>
        {value}
      </Text>
      {sub ? (
        <Text size="xs" c="dimmed">
          {sub}
        </Text>
      ) : null}
    </Paper>
  )
}

function typeLabel(q: Question): string {
  switch (q.type) {
    case 'open':
      return 'Freeform text'
    case 'link':
      return 'Link'
    case 'rating':
      return q.display === 'emoji'
        ? `Emoji rating (${q.scale})`
        : `Rating (${q.scale === 10 ? '0–10' : `1–${q.scale}`})`
    case 'single_choice':
      return 'Single choice'
    case 'multiple_choice':
      return 'Multiple choice'
  }
}

function answerText(_q: Question, answer: unknown): string {
  if (Array.isArray(answer)) return answer.map(String).join(', ')
  if (answer === null || answer === undefined) return ''
  return typeof answer === 'object' ? JSON.stringify(answer) : String(answer)
}

/** Whether a choice answer holds only listed choices (no open-ended text). */
function isOnlyChoices(q: Question, answer: unknown): boolean {
  const listed = new Set((q.choices ?? []).slice(0, q.hasOpenChoice ? -1 : undefined))
  const values = Array.isArray(answer) ? answer : [answer]
  return values.every((v) => listed.has(String(v)))
}

function bars(labels: string[], values: number[], horizontal: boolean) {
  const category = { type: 'category', data: labels, axisLabel: { interval: 0 } }
  const value = { type: 'value', minInterval: 1 }
  return {
    grid: { left: horizontal ? 140 : 40, right: 24, top: 16, bottom: 32 },
    tooltip: { trigger: 'axis' },
    xAxis: horizontal ? value : category,
    yAxis: horizontal ? { ...category, inverse: true } : value,
    series: [
      {
        type: 'bar',
        data: values,
        itemStyle: { color: '#1c7ed6' },
        label: { show: true, position: horizontal ? 'right' : 'top' },
      },
    ],
  }
}

/** The chart option, made again only when the labels or counts change (the chart redraws on a new option). */
function useOption(labels: string[], counts: number[], horizontal: boolean) {
  const signature = JSON.stringify([labels, counts, horizontal])
  return useMemo(() => {
    const [l, c, h] = JSON.parse(signature) as [string[], number[], boolean]
    return bars(l, c, h)
  }, [signature])
}

function RatingResults({
  question: q,
  distribution,
  average,
}: {
  question: Question
  distribution: Record<string, number>
  average: number | null
}) {
  const values = ratingValues(q.scale ?? 5)
  const counts = values.map((v) => distribution[String(v)] ?? 0)
  const nps = q.scale === 10 && q.display !== 'emoji' ? npsOf(distribution) : null
  const option = useOption(values.map(String), counts, false)
  return (
    <Stack gap="xs">
      <Group gap="lg">
        <Text size="sm" data-testid="rating-average">
          Average: <b>{average === null ? '—' : average}</b>
        </Text>
        {nps !== null ? (
          <Text size="sm" data-testid="nps">
            NPS: <b>{nps}</b>
          </Text>
        ) : null}
      </Group>
      <Chart
        option={option}
        height={220}
        label={`${q.question}: answers per rating, ${values.map((v, i) => `${v}: ${counts[i]}`).join(', ')}`}
        testId="question-chart"
      />
      <Group justify="space-between">
        <Text size="xs" c="dimmed">
          {q.lowerBoundLabel}
        </Text>
        <Text size="xs" c="dimmed">
          {q.upperBoundLabel}
        </Text>
      </Group>
    </Stack>
  )
}

function ChoiceResults({ question: q, distribution }: { question: Question; distribution: Record<string, number> }) {
  const listed = (q.choices ?? []).slice(0, q.hasOpenChoice ? -1 : undefined)
  const other = Object.entries(distribution)
    .filter(([k]) => !listed.includes(k))
    .reduce((sum, [, n]) => sum + n, 0)
  const labels = [
    ...listed,
    ...(q.hasOpenChoice || other > 0 ? [q.hasOpenChoice ? ((q.choices ?? []).at(-1) ?? 'Other') : 'Other'] : []),
  ]
  const counts = [...listed.map((c) => distribution[c] ?? 0), ...(labels.length > listed.length ? [other] : [])]
  const option = useOption(labels, counts, true)
  return (
    <Chart
      option={option}
      height={40 + labels.length * 36}
      label={`${q.question}: ${labels.map((l, i) => `${l}: ${counts[i]}`).join(', ')}`}
      testId="question-chart"
    />
  )
}

function OpenAnswers({
  projectId,
  surveyId,
  question: q,
  index,
  answers,
  archived,
  loading,
}: {
  projectId: number
  surveyId: string
  question: Question
  index: number
  answers: { response: SurveyResponse; text: string }[]
  archived: Set<string>
  loading: boolean
}) {
  const [summary, setSummary] = useState<{ content: string; generated_at: string } | null>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const summarize = async (force: boolean) => {
    setBusy(true)
    setError(null)
    try {
      const param = q.id ? { question_id: q.id } : { question_index: index }
      setSummary(
        await api('POST', `/api/projects/${projectId}/surveys/${surveyId}/summarize_responses/${qs(param)}`, {
          force_refresh: force,
        }),
      )
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }
  return (
    <Stack gap="xs">
      <Group justify="space-between">
        <Text size="sm" fw={600}>
          {q.type === 'open' ? 'Answers' : 'Open-ended answers'}
        </Text>
        {answers.length > 0 ? (
          <Button size="xs" variant="light" loading={busy} onClick={() => void summarize(summary !== null)}>
            {summary ? 'Summarize again' : 'Summarize answers'}
          </Button>
        ) : null}
      </Group>
      {error ? (
        <Text c="red" size="sm" role="alert">
          {errorText(error)}
        </Text>
      ) : null}
      {summary ? (
        <Paper withBorder p="sm" bg="gray.0" data-testid="answers-summary">
          <Markdown text={summary.content} />
          <Text size="xs" c="dimmed" mt={4}>
            Summarized offline (word themes and sentiment), {new Date(summary.generated_at).toLocaleString()}
          </Text>
        </Paper>
      ) : null}
      {loading ? (
        <Loading label="Loading answers…" />
      ) : answers.length === 0 ? (
        <Text size="sm" c="dimmed">
          No answers yet.
        </Text>
      ) : (
        <Stack gap={6} component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }} data-testid="open-answers">
          {answers.map(({ response, text }) => (
            <Paper component="li" key={response.uuid} withBorder p="xs">
              <Text size="sm">{text}</Text>
              <Text size="xs" c="dimmed">
                {response.distinct_id} · {new Date(response.submitted_at).toLocaleString()}
                {archived.has(response.uuid) ? ' · archived' : ''}
              </Text>
            </Paper>
          ))}
        </Stack>
      )}
    </Stack>
  )
}

/** The summary's small markdown (paragraphs, "- " lists, **bold**) as React elements: no HTML is injected. */
function Markdown({ text }: { text: string }) {
  const blocks: ReactNode[] = []
  let list: string[] = []
  const inline = (line: string) =>
    line.split(/(\*\*[^*]+\*\*)/g).map((part, i) =>
      part.startsWith('**') && part.endsWith('**') ? (
        // biome-ignore lint/suspicious/noArrayIndexKey: fixed pieces of one line
        <b key={i}>{part.slice(2, -2)}</b>
      ) : (
        part
      ),
    )
  const flush = () => {
    if (list.length === 0) return
    const items = list
    list = []
    blocks.push(
      <ul key={blocks.length} style={{ margin: '4px 0', paddingLeft: 20 }}>
        {items.map((item, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: fixed lines of one summary
          <li key={i}>
            <Text size="sm" span>
              {inline(item)}
            </Text>
          </li>
        ))}
      </ul>,
    )
  }
  for (const line of text.split('\n')) {
    if (line.startsWith('- ')) list.push(line.slice(2))
    else {
      flush()
      if (line.trim())
        blocks.push(
          <Text size="sm" key={blocks.length}>
            {inline(line)}
          </Text>,
        )
    }
  }
  flush()
  return <div>{blocks}</div>
}
