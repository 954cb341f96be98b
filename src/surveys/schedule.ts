// The save hooks of PostHog's Survey model that derive fields: iteration start dates and the response-sampling
// schedule. Pure functions of the survey's fields.

export const MAX_ITERATION_COUNT = 500
const DAY_MS = 86_400_000

/** A timestamp as PostHog's API prints it: ISO 8601 in UTC with `Z`, microseconds only when non-zero. */
export function apiTime(value: string | Date | null | undefined): string | null {
  if (value === null || value === undefined) return null
  const date = typeof value === 'string' ? new Date(value) : value
  if (Number.isNaN(date.getTime())) return null
  const iso = date.toISOString()
  const ms = date.getUTCMilliseconds()
  return ms === 0 ? iso.replace('.000Z', 'Z') : iso.replace(/\.(\d{3})Z$/, '.$1000Z')
}

export interface IterationFields {
  iteration_start_dates: string[] | null
  current_iteration: number | null
  current_iteration_start_date: string | null
}

/** Iteration start dates: a series from start_date every `frequency` days, at most 500 entries. */
export function iterations(survey: {
  start_date: string | null
  iteration_count: number | null
  iteration_frequency_days: number | null
  current_iteration: number | null
  current_iteration_start_date: string | null
}): IterationFields {
  const { iteration_count: count, iteration_frequency_days: frequency } = survey
  if (!count || !frequency) {
    return { iteration_start_dates: [], current_iteration: null, current_iteration_start_date: null }
  }
  if (!survey.start_date) {
    return {
      iteration_start_dates: null,
      current_iteration: survey.current_iteration,
      current_iteration_start_date: survey.current_iteration_start_date,
    }
  }
  const start = new Date(survey.start_date).getTime()
  const dates = Array.from({ length: Math.min(count, MAX_ITERATION_COUNT) }, (_, i) =>
    apiTime(new Date(start + i * frequency * DAY_MS)),
  ) as string[]
  if (!survey.current_iteration) {
    return {
      iteration_start_dates: dates,
      current_iteration: 1,
      current_iteration_start_date: apiTime(survey.start_date),
    }
  }
  return {
    iteration_start_dates: dates,
    current_iteration: survey.current_iteration,
    current_iteration_start_date: survey.current_iteration_start_date,
  }
}

const INTERVAL_DAYS: Record<string, number> = { day: 1, week: 7, month: 30 }

/** Rounds a non-negative number like Python's `round(x, 2)`: on the exact binary value, ties to even. */
export function round2(x: number): number {
  if (!Number.isFinite(x) || x < 0) return Math.round(x * 100) / 100
  const [whole, fraction] = x.toFixed(20).split('.')
  const kept = Number(`${whole}${fraction.slice(0, 2)}`)
  const rest = fraction.slice(2)
  const half = `5${'0'.repeat(rest.length - 1)}`
  const up = rest > half || (rest === half && kept % 2 === 1)
  return (kept + (up ? 1 : 0)) / 100
}

/**
 * The response-sampling schedule (a JSON string of `[{date, daily_response_limit, rollout_percentage}]`), or null
 * when sampling is off. Limits are cumulative per day; the rollout grows evenly and ends at 100.
 */
export function samplingSchedule(survey: {
  response_sampling_start_date: string | null
  response_sampling_interval_type: string | null
  response_sampling_interval: number | null
  response_sampling_limit: number | null
}): string | null {
  const type = survey.response_sampling_interval_type
  const limit = survey.response_sampling_limit ?? 0
  if (!type || limit === 0 || !survey.response_sampling_start_date) return null
  const totalDays = (survey.response_sampling_interval ?? 0) * (INTERVAL_DAYS[type] ?? 1)
  if (totalDays <= 0) return null
  const base = Math.floor(limit / totalDays)
  const extra = limit % totalDays
  const start = new Date(survey.response_sampling_start_date).getTime()
  const days: { date: string; daily_response_limit: number; rollout_percentage: number }[] = []
  let cumulative = 0
  for (let i = 0; i < totalDays; i++) {
    cumulative += base + (i < extra ? 1 : 0)
    days.push({
      date: new Date(start + i * DAY_MS).toISOString().slice(0, 10),
      daily_response_limit: cumulative,
      rollout_percentage: i === totalDays - 1 ? 100.0 : round2(((i + 1) * 100) / totalDays),
    })
  }
  return JSON.stringify(days)
}
