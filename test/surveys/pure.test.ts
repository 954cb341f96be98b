import { describe, expect, it } from 'vitest'
import { apiTime, iterations, round2, samplingSchedule } from '../../src/surveys/schedule.js'
import { questionStats, shapeStats } from '../../src/surveys/stats.js'
import { headline, summarizeTexts } from '../../src/surveys/summaries.js'
import { cleanHtml } from '../../src/surveys/validation.js'

describe('round2 (Python round(x, 2))', () => {
  it.each([
    // 1 of 800 = 0.125 exactly: a tie, to even.
    [(1 / 800) * 100, 0.12],
    [(3 / 800) * 100, 0.38],
    [0.155, 0.15], // 0.155 is 0.15499999… in binary
    [2 / 3, 0.67],
    [100 / 3, 33.33],
    [50, 50],
    [16.665, 16.66], // 16.66499999…
    [0, 0],
  ])('%d → %d', (x, expected) => expect(round2(x)).toBe(expected))
})

describe('timestamps and schedules', () => {
  it('prints timestamps as PostHog does', () => {
    expect(apiTime('2026-01-02T03:04:05.000Z')).toBe('2026-01-02T03:04:05Z')
    expect(apiTime('2026-01-02T03:04:05.250Z')).toBe('2026-01-02T03:04:05.250000Z')
    expect(apiTime(null)).toBeNull()
  })

  it('keeps iterations empty without a count or frequency, null before a start', () => {
    const base = { current_iteration: null, current_iteration_start_date: null }
    expect(
      iterations({ ...base, start_date: '2026-01-01T00:00:00Z', iteration_count: 0, iteration_frequency_days: 7 }),
    ).toEqual({ iteration_start_dates: [], current_iteration: null, current_iteration_start_date: null })
    expect(
      iterations({ ...base, start_date: null, iteration_count: 2, iteration_frequency_days: 7 }).iteration_start_dates,
    ).toBeNull()
    const many = iterations({
      ...base,
      start_date: '2026-01-01T00:00:00Z',
      iteration_count: 900,
      iteration_frequency_days: 1,
    })
    expect(many.iteration_start_dates).toHaveLength(500)
  })

  it('spreads a sampling limit over the interval, extra responses first, rollout ending at 100', () => {
    const schedule = samplingSchedule({
      response_sampling_start_date: '2026-11-24T00:00:00Z',
      response_sampling_interval_type: 'week',
      response_sampling_interval: 1,
      response_sampling_limit: 10,
    })
    // 10 over 7 days: 1 a day, 3 days with one more; cumulative 2, 4, 6, 7, 8, 9, 10.
    const days = JSON.parse(schedule as string)
    expect(days.map((d: { daily_response_limit: number }) => d.daily_response_limit)).toEqual([2, 4, 6, 7, 8, 9, 10])
    // 100/7 per day: 14.29, 28.57, 42.86, 57.14, 71.43, 85.71, then 100.
    expect(days.map((d: { rollout_percentage: number }) => d.rollout_percentage)).toEqual([
      14.29, 28.57, 42.86, 57.14, 71.43, 85.71, 100,
    ])
    expect(days[6].date).toBe('2026-11-30')
    expect(
      samplingSchedule({
        response_sampling_start_date: null,
        response_sampling_interval_type: 'day',
        response_sampling_interval: 1,
        response_sampling_limit: 5,
      }),
    ).toBeNull()
  })
})

describe('stats arithmetic', () => {
  it('zero-fills missing events and floors the adjusted counts at zero', () => {
    const { stats, rates } = shapeStats([{ event: 'survey sent', total: 2, unique: 1, first: null, last: null }], 5)
    expect(stats['survey shown'].total_count).toBe(0)
    expect(stats['survey dismissed'].unique_persons).toBe(0)
    expect(rates).toEqual({
      response_rate: 0,
      dismissal_rate: 0,
      unique_users_response_rate: 0,
      unique_users_dismissal_rate: 0,
    })
  })

  it('counts single-choice answers and averages ratings given as text or numbers', () => {
    const rating = questionStats({ id: 'r', type: 'rating', question: 'R' }, 0, {
      responses: 3,
      values: [
        ['"3"', 1],
        ['3', 1],
        ['4', 1],
      ],
    })
    expect(rating.distribution).toEqual({ '3': 2, '4': 1 })
    expect(rating.average).toBe(3.33)
  })
})

describe('offline summaries', () => {
  const answers = [
    'Checkout is slow and confusing',
    'Slow checkout on mobile',
    'Love the design',
    'The design is beautiful but checkout is slow',
  ]

  it('finds themes with counts and quotes, the same for the same answers', () => {
    const summary = summarizeTexts(answers)
    expect(summary.themes.map((t) => [t.word, t.count])).toEqual([
      ['checkout', 3],
      ['slow', 3],
      ['design', 2],
    ])
    expect(summary.themes[2].quote).toBe('The design is beautiful but checkout is slow')
    expect(summarizeTexts([...answers])).toEqual(summary)
    expect(summary.positive + summary.neutral + summary.negative).toBe(4)
  })

  it('writes a headline of at most 20 words', () => {
    const text = headline(4, [
      { type: 'open', text: summarizeTexts(answers) },
      { type: 'rating', average: 4.25 },
    ])
    expect(text.split(' ').length).toBeLessThanOrEqual(20)
    expect(text).toMatch(/^4 responses: .* feedback about checkout; average rating 4\.3\.$/)
  })

  it('cleans HTML to the allow-list and leaves plain text alone', () => {
    expect(cleanHtml('a < b & c')).toBe('a < b & c')
    expect(cleanHtml('<a href="https://x.y" onclick="x()">x</a>')).toBe('<a href="https://x.y" rel="noopener">x</a>')
  })
})
