import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { metricFingerprint, pythonIsoformat } from '../../src/experiments/fingerprint.js'
import { experimentResult, statsSettings, type VariantCounts } from '../../src/experiments/stats.js'
import { normalCdf, normalQuantile, studentTCdf, studentTQuantile } from './reference.js'

/** Counts with the given mean and sample variance: Σx² = (n−1)s² + (Σx)²/n. */
const counts = (key: string, n: number, mean: number, variance: number): VariantCounts => ({
  key,
  number_of_samples: n,
  sum: mean * n,
  sum_squares: (n - 1) * variance + (mean * n) ** 2 / n,
})

describe('Bayesian', () => {
  it('absolute difference of means: chance to win and a 90% credible interval', () => {
    const variants = [counts('control', 500, 10, 9), counts('test', 400, 10.4, 16)]
    const settings = statsSettings({ method: 'bayesian', bayesian: { ci_level: 0.9, difference_type: 'ABSOLUTE' } })
    const { variant_results } = experimentResult('mean', variants, 'control', settings)
    const effect = 0.4
    const sd = Math.sqrt(16 / 400 + 9 / 500)
    const row = variant_results[0] as Record<string, any>
    expect(row.chance_to_win).toBeCloseTo(1 - normalCdf(-effect / sd), 6)
    expect(row.credible_interval[0]).toBeCloseTo(effect + sd * normalQuantile(0.05), 6)
    expect(row.credible_interval[1]).toBeCloseTo(effect + sd * normalQuantile(0.95), 6)
    expect(row.significant).toBe(row.chance_to_win > 0.9 || row.chance_to_win < 0.1)
  })

  it('relative difference of proportions (funnel)', () => {
    const variants: VariantCounts[] = [
      { key: 'control', number_of_samples: 1000, sum: 100, sum_squares: 100, step_counts: [1000, 100] },
      { key: 'test', number_of_samples: 1000, sum: 130, sum_squares: 130, step_counts: [1000, 130] },
    ]
    const { variant_results } = experimentResult('funnel', variants, 'control', statsSettings({}))
    const pc = 0.1
    const pt = 0.13
    const effect = (pt - pc) / pc
    const sd = Math.sqrt((pt * (1 - pt)) / 1000 / pc ** 2 + (pt ** 2 * ((pc * (1 - pc)) / 1000)) / pc ** 4)
    const row = variant_results[0] as Record<string, any>
    expect(row.chance_to_win).toBeCloseTo(1 - normalCdf(-effect / sd), 6)
    expect(row.credible_interval[0]).toBeCloseTo(effect + sd * normalQuantile(0.025), 6)
  })

  it('leaves statistics null for a proportion with fewer than 5 failures, and skips tests when the baseline fails', () => {
    const few: VariantCounts[] = [
      { key: 'control', number_of_samples: 100, sum: 50, sum_squares: 50, step_counts: [100, 50] },
      { key: 'test', number_of_samples: 100, sum: 97, sum_squares: 97, step_counts: [100, 97] },
    ]
    const row = experimentResult('funnel', few, 'control', statsSettings({})).variant_results[0] as Record<string, any>
    expect(row).toMatchObject({
      chance_to_win: null,
      credible_interval: null,
      significant: null,
      validation_failures: [],
    })

    const small = [counts('control', 40, 1, 1), counts('test', 400, 2, 1)]
    const out = experimentResult('mean', small, 'control', statsSettings({}))
    expect(out.baseline.validation_failures).toEqual(['not-enough-exposures'])
    expect((out.variant_results[0] as Record<string, any>).chance_to_win).toBeNull()

    const zero: VariantCounts[] = [
      { key: 'control', number_of_samples: 100, sum: 0, sum_squares: 0 },
      { key: 'test', number_of_samples: 100, sum: 3, sum_squares: 3 },
    ]
    const z = experimentResult('funnel', zero, 'control', statsSettings({}))
    expect(z.baseline.validation_failures).toEqual(['not-enough-metric-data', 'baseline-mean-is-zero'])
    expect((z.variant_results[0] as Record<string, any>).validation_failures).toEqual(['not-enough-metric-data'])
  })
})

describe('frequentist (Welch)', () => {
  it('relative difference of ratio metrics by the delta method', () => {
    // numerator m and denominator d per entity, as sufficient statistics
    const ratioCounts = (key: string, n: number, sm: number, smm: number, sd: number, sdd: number, smd: number) => ({
      key,
      number_of_samples: n,
      sum: sm,
      sum_squares: smm,
      denominator_sum: sd,
      denominator_sum_squares: sdd,
      numerator_denominator_sum_product: smd,
    })
    const c = ratioCounts('control', 200, 300, 900, 400, 1000, 700)
    const t = ratioCounts('test', 220, 400, 1300, 430, 1100, 900)
    const { variant_results } = experimentResult('ratio', [c, t], 'control', statsSettings({ method: 'frequentist' }))
    const stat = (v: typeof c) => {
      const n = v.number_of_samples
      const mm = v.sum / n
      const dm = v.denominator_sum / n
      const vm = (v.sum_squares - v.sum ** 2 / n) / (n - 1)
      const vd = (v.denominator_sum_squares - v.denominator_sum ** 2 / n) / (n - 1)
      const cov = (v.numerator_denominator_sum_product - (v.sum * v.denominator_sum) / n) / (n - 1)
      return {
        n,
        mean: v.sum / v.denominator_sum,
        variance: vm / dm ** 2 + (mm ** 2 * vd) / dm ** 4 - (2 * mm * cov) / dm ** 3,
      }
    }
    const sc = stat(c)
    const st = stat(t)
    const a = st.variance / st.n
    const b = sc.variance / sc.n
    const estimate = (st.mean - sc.mean) / sc.mean
    const variance = a / sc.mean ** 2 + (st.mean ** 2 * b) / sc.mean ** 4
    const df = (a + b) ** 2 / (a ** 2 / (st.n - 1) + b ** 2 / (sc.n - 1))
    const tStat = estimate / Math.sqrt(variance)
    const row = variant_results[0] as Record<string, any>
    expect(row.p_value).toBeCloseTo(2 * (1 - studentTCdf(Math.abs(tStat), df)), 6)
    const half = studentTQuantile(0.975, df) * Math.sqrt(variance)
    expect(row.confidence_interval[0]).toBeCloseTo(estimate - half, 6)
    expect(row.confidence_interval[1]).toBeCloseTo(estimate + half, 6)
    expect(row.significant).toBe(row.p_value < 0.05)
  })

  it('absolute difference with a custom alpha', () => {
    const variants = [counts('control', 60, 5, 4), counts('test', 80, 5.5, 6)]
    const settings = statsSettings({ method: 'frequentist', frequentist: { alpha: 0.1, difference_type: 'ABSOLUTE' } })
    const row = experimentResult('mean', variants, 'control', settings).variant_results[0] as Record<string, any>
    const a = 6 / 80
    const b = 4 / 60
    const df = (a + b) ** 2 / (a ** 2 / 79 + b ** 2 / 59)
    const se = Math.sqrt(a + b)
    expect(row.p_value).toBeCloseTo(2 * (1 - studentTCdf(0.5 / se, df)), 6)
    expect(row.confidence_interval[1]).toBeCloseTo(0.5 + studentTQuantile(0.95, df) * se, 6)
  })
})

describe('settings and fingerprints', () => {
  it('reads stats_config as PostHog does', () => {
    expect(statsSettings({ method: 'bogus' })).toEqual({
      method: 'bayesian',
      ciLevel: 0.95,
      alpha: 0.05,
      relative: true,
    })
    expect(statsSettings({ bayesian: { ci_level: 7, difference_type: 'absolute' } })).toMatchObject({
      ciLevel: 0.95,
      relative: true,
    })
  })

  it('fingerprints like Python: isoformat dates, sorted keys, identity fields dropped', () => {
    expect(pythonIsoformat('2025-01-02T03:04:05.000Z')).toBe('2025-01-02T03:04:05+00:00')
    expect(pythonIsoformat('2025-01-02T03:04:05.123Z')).toBe('2025-01-02T03:04:05.123000+00:00')
    const metric = { kind: 'ExperimentMetric', metric_type: 'mean', source: { event: 'é', kind: 'EventsNode' } }
    const a = metricFingerprint({ ...metric, uuid: 'a', name: 'x' }, null, undefined, {})
    const b = metricFingerprint(
      { source: { kind: 'EventsNode', event: 'é' }, metric_type: 'mean', uuid: 'b' },
      null,
      'bayesian',
      null,
    )
    expect(a).toBe(b)
    // sha256 of {"metric":{"metric_type":"mean","source":{"event":"\u00e9","kind":"EventsNode"}},"start_date":null,"stats_method":"bayesian"}
    expect(a).toMatch(/^[0-9a-f]{64}$/)
    const text =
      '{"metric":{"metric_type":"mean","source":{"event":"\\u00e9","kind":"EventsNode"}},"start_date":null,"stats_method":"bayesian"}'
    expect(a).toBe(createHash('sha256').update(text).digest('hex'))
  })
})
