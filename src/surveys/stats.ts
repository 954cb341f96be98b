// The arithmetic of PostHog's survey stats, on the raw counts of the two stats queries: zero-filled events,
// dismissals of people who also answered taken out, "only seen" counts, rates rounded like Python's round(x, 2).
import type { RawEventStats } from './responses.js'
import { DISMISSED, SENT, SHOWN } from './responses.js'
import { round2 } from './schedule.js'
import type { EventStats, PerQuestionStats, SurveyRates } from './schemas.js'

export const ZERO_RATES: SurveyRates = {
  response_rate: 0.0,
  dismissal_rate: 0.0,
  unique_users_response_rate: 0.0,
  unique_users_dismissal_rate: 0.0,
}

const empty = (): EventStats => ({
  total_count: 0,
  unique_persons: 0,
  first_seen: null,
  last_seen: null,
  unique_persons_only_seen: 0,
  total_count_only_seen: 0,
})

export function shapeStats(
  rows: RawEventStats[],
  dismissedAndSent: number,
): { stats: Record<string, EventStats>; rates: SurveyRates } {
  const stats: Record<string, EventStats> = { [SHOWN]: empty(), [DISMISSED]: empty(), [SENT]: empty() }
  for (const row of rows) {
    if (!(row.event in stats)) continue
    stats[row.event] = {
      ...empty(),
      total_count: row.total,
      unique_persons: row.unique,
      first_seen: row.first,
      last_seen: row.last,
    }
  }
  const shown = stats[SHOWN]
  const dismissed = stats[DISMISSED]
  const sent = stats[SENT]
  dismissed.unique_persons = Math.max(0, dismissed.unique_persons - dismissedAndSent)
  shown.unique_persons_only_seen = Math.max(0, shown.unique_persons - dismissed.unique_persons - sent.unique_persons)
  shown.total_count_only_seen = Math.max(0, shown.total_count - dismissed.total_count - sent.total_count)
  return { stats, rates: rates(shown, dismissed, sent) }
}

function rates(shown: EventStats, dismissed: EventStats, sent: EventStats): SurveyRates {
  if (shown.total_count === 0) return { ...ZERO_RATES }
  const pct = (part: number, whole: number) => (whole === 0 ? 0.0 : round2((part / whole) * 100))
  return {
    response_rate: pct(sent.total_count, shown.total_count),
    dismissal_rate: pct(dismissed.total_count, shown.total_count),
    unique_users_response_rate: pct(sent.unique_persons, shown.unique_persons),
    unique_users_dismissal_rate: pct(dismissed.unique_persons, shown.unique_persons),
  }
}

/** A distribution key as PostHog shows it: strings as they are, numbers and booleans as text. */
function answerKey(raw: string): string {
  try {
    const value = JSON.parse(raw) as unknown
    return typeof value === 'string' ? value : JSON.stringify(value)
  } catch {
    return raw
  }
}

/** One question's stats from its grouped answer values. */
export function questionStats(
  question: { id?: unknown; question?: unknown; type?: unknown },
  index: number,
  grouped: { responses: number; values: [string, number][] },
): PerQuestionStats {
  const type = typeof question.type === 'string' ? question.type : null
  const distribution: Record<string, number> = {}
  let sum = 0
  let numeric = 0
  for (const [raw, count] of grouped.values) {
    const key = answerKey(raw)
    if (type !== 'open') distribution[key] = (distribution[key] ?? 0) + count
    const value = Number(key)
    if (type === 'rating' && key.trim() !== '' && Number.isFinite(value)) {
      sum += value * count
      numeric += count
    }
  }
  const out: PerQuestionStats = {
    question_id: typeof question.id === 'string' ? question.id : null,
    question_index: index,
    question_text: typeof question.question === 'string' ? question.question : '',
    question_type: type,
    response_count: grouped.responses,
    distribution: type === 'open' ? {} : distribution,
  }
  if (type === 'rating') out.average = numeric === 0 ? null : round2(sum / numeric)
  return out
}
