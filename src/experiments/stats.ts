/**
 * Experiment statistics (products.md §1.10), pure: sufficient statistics per variant in, PostHog's
 * ExperimentQueryResponse variant rows out. Bayesian: a Gaussian posterior on the effect with the improper prior,
 * chance to win and a credible interval. Frequentist: a two-sided Welch t-test with Welch–Satterthwaite degrees of
 * freedom. Distributions come from @stdlib; any failure while building a statistic or testing one variant leaves
 * that variant's statistics null instead of failing the query, as PostHog does.
 */
import normalCdf from '@stdlib/stats-base-dists-normal-cdf'
import normalQuantile from '@stdlib/stats-base-dists-normal-quantile'
import tCdf from '@stdlib/stats-base-dists-t-cdf'
import tQuantile from '@stdlib/stats-base-dists-t-quantile'

export type MetricType = 'mean' | 'funnel' | 'ratio' | 'retention'
export type StatsMethod = 'bayesian' | 'frequentist'

export interface VariantCounts {
  key: string
  number_of_samples: number
  sum: number
  sum_squares: number
  step_counts?: number[]
  denominator_sum?: number
  denominator_sum_squares?: number
  numerator_denominator_sum_product?: number
}

export interface StatsSettings {
  method: StatsMethod
  ciLevel: number
  alpha: number
  relative: boolean
}

export class StatisticError extends Error {}

/** A per-unit statistic: its mean, per-unit variance and sample size. */
export interface Statistic {
  n: number
  mean: number
  variance: number
  /** proportions only: successes */
  successes?: number
}

const MAX_SUM = 1e15
const MAX_SUM_SQUARES = 1e30

export function sampleMean(n: number, sum: number, sumSquares: number): Statistic {
  if (!(n > 0)) throw new StatisticError('sample size must be positive')
  if (Math.abs(sum) > MAX_SUM) throw new StatisticError('sum too large')
  if (sumSquares > MAX_SUM_SQUARES) throw new StatisticError('sum of squares too large')
  if (sumSquares < (sum * sum) / n - 1e-10) throw new StatisticError('sum of squares below sum²/n')
  const mean = sum / n
  const variance = n > 1 ? Math.max(0, (sumSquares - (sum * sum) / n) / (n - 1)) : 0
  return { n, mean, variance }
}

export function proportion(n: number, successes: number): Statistic {
  if (!(n > 0)) throw new StatisticError('sample size must be positive')
  if (successes > n) throw new StatisticError('more successes than samples')
  const p = successes / n
  if (p < 1e-10 || p > 1 - 1e-10) throw new StatisticError('proportion at 0 or 1')
  return { n, mean: p, variance: p * (1 - p), successes }
}

export function ratio(
  n: number,
  sum: number,
  sumSquares: number,
  denominatorSum: number,
  denominatorSumSquares: number,
  productSum: number,
): Statistic {
  const m = sampleMean(n, sum, sumSquares)
  const d = sampleMean(n, denominatorSum, denominatorSumSquares)
  if (Math.abs(d.mean) < 1e-10) throw new StatisticError('denominator mean is zero')
  const cov = n > 1 ? (productSum - (sum * denominatorSum) / n) / (n - 1) : 0
  const variance =
    m.variance / d.mean ** 2 + (m.mean ** 2 * d.variance) / d.mean ** 4 - (2 * m.mean * cov) / d.mean ** 3
  return { n, mean: sum / denominatorSum, variance }
}

export function statisticOf(type: MetricType, v: VariantCounts): Statistic {
  if (type === 'funnel') return proportion(v.number_of_samples, v.sum)
  if (type === 'ratio' || type === 'retention') {
    return ratio(
      v.number_of_samples,
      v.sum,
      v.sum_squares,
      v.denominator_sum ?? 0,
      v.denominator_sum_squares ?? 0,
      v.numerator_denominator_sum_product ?? 0,
    )
  }
  return sampleMean(v.number_of_samples, v.sum, v.sum_squares)
}

/** The effect of test over control and its variance (relative: delta method with zero covariance). */
function effect(test: Statistic, control: Statistic, relative: boolean): { estimate: number; variance: number } {
  const a = test.variance / test.n
  const b = control.variance / control.n
  if (!relative) return { estimate: test.mean - control.mean, variance: a + b }
  const mc = control.mean
  return { estimate: (test.mean - mc) / mc, variance: a / mc ** 2 + (test.mean ** 2 * b) / mc ** 4 }
}

export interface BayesianResult {
  chance_to_win: number
  credible_interval: [number, number]
  significant: boolean
}

export function bayesianTest(test: Statistic, control: Statistic, ciLevel: number, relative: boolean): BayesianResult {
  if (test.successes !== undefined && control.successes !== undefined) {
    for (const s of [test, control]) {
      if ((s.successes as number) < 5 || s.n - (s.successes as number) < 5) {
        throw new StatisticError('a proportion needs at least 5 successes and 5 failures')
      }
    }
  }
  if (relative && !(control.mean > 0)) throw new StatisticError('control mean must be positive')
  const { estimate, variance } = effect(test, control, relative)
  if (!(variance > 0) || !Number.isFinite(variance)) throw new StatisticError('effect variance is zero')
  const sd = Math.sqrt(variance)
  const chance = 1 - normalCdf(0, estimate, sd)
  const alpha = 1 - ciLevel
  return {
    chance_to_win: chance,
    credible_interval: [normalQuantile(alpha / 2, estimate, sd), normalQuantile(1 - alpha / 2, estimate, sd)],
    significant: chance > ciLevel || chance < 1 - ciLevel,
  }
}

export interface FrequentistResult {
  p_value: number
  confidence_interval: [number, number]
  significant: boolean
}

export function welchTest(test: Statistic, control: Statistic, alpha: number, relative: boolean): FrequentistResult {
  if (test.n < 5 || control.n < 5) throw new StatisticError('each arm needs at least 5 samples')
  if (relative && Math.abs(control.mean) < 1e-10) throw new StatisticError('control mean is zero')
  const { estimate, variance } = effect(test, control, relative)
  if (!(variance > 0) || !Number.isFinite(variance)) throw new StatisticError('effect variance is zero')
  const a = test.variance / test.n
  const b = control.variance / control.n
  const df = (a + b) ** 2 / (a ** 2 / (test.n - 1) + b ** 2 / (control.n - 1))
  const se = Math.sqrt(variance)
  const t = estimate / se
  const p = 2 * (1 - tCdf(Math.abs(t), df))
  const critical = tQuantile(1 - alpha / 2, df)
  return {
    p_value: p,
    confidence_interval: [estimate - critical * se, estimate + critical * se],
    significant: p < alpha,
  }
}

/** PostHog's reading of `stats_config` (products.md §1.10, "Where the settings come from"). */
export function statsSettings(statsConfig: unknown): StatsSettings {
  const config = (statsConfig && typeof statsConfig === 'object' ? statsConfig : {}) as Record<string, any>
  const method: StatsMethod = config.method === 'frequentist' ? 'frequentist' : 'bayesian'
  const bayesian = (config.bayesian && typeof config.bayesian === 'object' ? config.bayesian : {}) as Record<
    string,
    any
  >
  const frequentist = (
    config.frequentist && typeof config.frequentist === 'object' ? config.frequentist : {}
  ) as Record<string, any>
  let ciLevel = typeof bayesian.ci_level === 'number' ? bayesian.ci_level : 0.95
  if (!(ciLevel >= 0 && ciLevel <= 1)) ciLevel = 0.95
  const alpha = typeof frequentist.alpha === 'number' ? frequentist.alpha : 0.05
  const side = method === 'bayesian' ? bayesian : frequentist
  return { method, ciLevel, alpha, relative: side.difference_type !== 'ABSOLUTE' }
}

function validationFailures(type: MetricType, v: VariantCounts, isBaseline: boolean): string[] {
  const failures: string[] = []
  if (v.number_of_samples < 50) failures.push('not-enough-exposures')
  if ((type === 'funnel' || type === 'retention') && v.sum < 5) failures.push('not-enough-metric-data')
  if (isBaseline && v.sum === 0) failures.push('baseline-mean-is-zero')
  return failures
}

const countsOf = (v: VariantCounts) => {
  const out: Record<string, unknown> = {
    key: v.key,
    number_of_samples: v.number_of_samples,
    sum: v.sum,
    sum_squares: v.sum_squares,
  }
  if (v.step_counts !== undefined) out.step_counts = v.step_counts
  if (v.denominator_sum !== undefined) {
    out.denominator_sum = v.denominator_sum
    out.denominator_sum_squares = v.denominator_sum_squares
    out.numerator_denominator_sum_product = v.numerator_denominator_sum_product
  }
  return out
}

/** The baseline row and one tested row per other variant, in the given order. */
export function experimentResult(
  type: MetricType,
  variants: VariantCounts[],
  baselineKey: string,
  settings: StatsSettings,
): { baseline: Record<string, unknown>; variant_results: Record<string, unknown>[] } {
  const baseline = variants.find((v) => v.key === baselineKey)
  if (!baseline) throw new StatisticError('No control variant found')
  const baselineFailures = validationFailures(type, baseline, true)
  let control: Statistic | null = null
  if (baselineFailures.length === 0) {
    try {
      control = statisticOf(type, baseline)
    } catch (error) {
      if (!(error instanceof StatisticError)) throw error
    }
  }
  const variant_results = variants
    .filter((v) => v.key !== baselineKey)
    .map((v) => {
      const failures = validationFailures(type, v, false)
      const row: Record<string, unknown> = { ...countsOf(v), validation_failures: failures, method: settings.method }
      let tested: BayesianResult | FrequentistResult | null = null
      if (control && failures.length === 0) {
        try {
          const stat = statisticOf(type, v)
          tested =
            settings.method === 'bayesian'
              ? bayesianTest(stat, control, settings.ciLevel, settings.relative)
              : welchTest(stat, control, settings.alpha, settings.relative)
        } catch (error) {
          if (!(error instanceof StatisticError)) throw error
        }
      }
      if (settings.method === 'bayesian') {
        const b = tested as BayesianResult | null
        row.significant = b?.significant ?? null
        row.chance_to_win = b?.chance_to_win ?? null
        row.credible_interval = b?.credible_interval ?? null
      } else {
        const f = tested as FrequentistResult | null
        row.significant = f?.significant ?? null
        row.p_value = f?.p_value ?? null
        row.confidence_interval = f?.confidence_interval ?? null
      }
      return row
    })
  return { baseline: { ...countsOf(baseline), validation_failures: baselineFailures }, variant_results }
}
