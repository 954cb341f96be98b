// An experiment as the API serves it, its status as PostHog shows it, and the ExperimentQuery result shapes.
import type { Metric } from './MetricEditor'

export interface Variant {
  key: string
  name?: string
  rollout_percentage: number
}

export interface Experiment {
  id: number
  name: string
  description: string | null
  start_date: string | null
  end_date: string | null
  feature_flag_key: string
  feature_flag: {
    id: number
    key: string
    active: boolean
    filters: { multivariate?: { variants: Variant[] } | null }
  } | null
  holdout: { id: number; name: string } | null
  holdout_id: number | null
  parameters: {
    feature_flag_variants?: Variant[]
    minimum_detectable_effect?: number
    recommended_sample_size?: number
    recommended_running_time?: number
  } | null
  metrics: Metric[]
  metrics_secondary: Metric[]
  saved_metrics?: { id: number; saved_metric: number; name: string; query: Metric; metadata?: { type?: string } }[]
  exposure_criteria: {
    filterTestAccounts?: boolean
    multiple_variant_handling?: 'exclude' | 'first_seen'
    exposure_config?: { kind: string; event: string; properties?: unknown[] } | null
  } | null
  stats_config: { method?: 'bayesian' | 'frequentist' } | null
  status: string
  conclusion: string | null
  conclusion_comment: string | null
  archived: boolean
  created_at: string
}

export type Status = 'draft' | 'running' | 'paused' | 'complete'

export function statusOf(e: Experiment): Status {
  if (!e.start_date) return 'draft'
  if (e.end_date) return 'complete'
  if (e.feature_flag && !e.feature_flag.active) return 'paused'
  return 'running'
}

export const STATUS_COLORS: Record<Status, string> = {
  draft: 'gray',
  running: 'blue',
  paused: 'orange',
  complete: 'green',
}

export interface VariantStats {
  key: string
  number_of_samples: number
  sum: number
  sum_squares: number
  step_counts?: number[]
  denominator_sum?: number
  validation_failures?: string[]
  method?: 'bayesian' | 'frequentist'
  significant?: boolean
  chance_to_win?: number | null
  credible_interval?: [number, number] | null
  p_value?: number | null
  confidence_interval?: [number, number] | null
}

export interface ExperimentResult {
  baseline: VariantStats
  variant_results: VariantStats[]
}

/** The value a variant reaches on the metric: conversion rate, mean per user, or the ratio. */
export function variantValue(metric: Metric, v: VariantStats): number | null {
  if (!v.number_of_samples) return null
  if (metric.metric_type === 'ratio') return v.denominator_sum ? v.sum / v.denominator_sum : null
  return v.sum / v.number_of_samples
}

export const pct = (x: number | null | undefined, digits = 1) =>
  x === null || x === undefined || Number.isNaN(x) ? '—' : `${(x * 100).toFixed(digits)}%`
