/**
 * The running-time calculator (products.md §1.10): the sample size that detects a relative change of
 * `minimum_detectable_effect` percent of the baseline with the usual 16·σ²/d² rule, for every variant, and the days
 * it takes at the given exposure rate. Pure.
 */
import { ValidationError } from '../http/errors.js'

type Json = Record<string, any>

export interface RunningTime {
  baseline_value: number | null
  variance: number | null
  recommended_sample_size: number | null
  recommended_running_time_days: number | null
}

export function calculateRunningTime(input: Json): RunningTime {
  const metric = input.metric
  if (!metric || typeof metric !== 'object') throw new ValidationError('metric is required', 'metric', 'required')
  const baseline = input.baseline
  if (!baseline || typeof baseline !== 'object')
    throw new ValidationError('baseline is required', 'baseline', 'required')
  const n = Number(baseline.number_of_samples)
  if (!(n > 0)) throw new ValidationError('baseline.number_of_samples must be positive', 'baseline')
  const mde = Number(input.minimum_detectable_effect ?? 0)
  const variants = Number(input.number_of_variants ?? 2)
  let value: number
  let sigma2: number
  let variance: number | null
  switch (metric.metric_type) {
    case 'funnel': {
      const steps = Array.isArray(baseline.step_counts) ? baseline.step_counts : null
      const successes = steps && steps.length > 0 ? Number(steps[steps.length - 1]) : Number(baseline.sum)
      value = successes / n
      sigma2 = value * (1 - value)
      variance = null
      break
    }
    case 'mean': {
      value = Number(baseline.sum) / n
      const math = metric.source?.math ?? 'total'
      sigma2 = math === 'total' ? 2 * value : 0.25 * value ** 2
      variance = sigma2
      break
    }
    case 'ratio':
    case 'retention': {
      const sum = Number(baseline.sum)
      const sumSq = Number(baseline.sum_squares)
      const dSum = Number(baseline.denominator_sum)
      const dSumSq = Number(baseline.denominator_sum_squares)
      const product = Number(baseline.numerator_denominator_sum_product)
      const m = sum / n
      const d = dSum / n
      if (!(Math.abs(d) > 0)) throw new ValidationError('baseline denominator is zero', 'baseline')
      const varM = sumSq / n - m ** 2
      const varD = dSumSq / n - d ** 2
      const cov = product / n - m * d
      value = m / d
      sigma2 = varM / d ** 2 + (m ** 2 * varD) / d ** 4 - (2 * m * cov) / d ** 3
      variance = sigma2
      break
    }
    default:
      throw new ValidationError('metric_type must be one of mean, funnel, ratio, retention.', 'metric')
  }
  const delta = (mde / 100) * value
  const size = mde === 0 || delta === 0 ? null : Math.ceil(((16 * sigma2) / delta ** 2) * variants)
  const rate = input.exposures_per_day
  const days = size === null || typeof rate !== 'number' || !(rate > 0) ? null : Math.ceil(size / rate)
  return { baseline_value: value, variance, recommended_sample_size: size, recommended_running_time_days: days }
}
