import { type Static, Type } from 'typebox'
import { Nullable } from '../http/nullable.js'

const Structured = Type.Unknown()

export const ErrorBody = Type.Object({
  type: Type.String(),
  code: Type.String(),
  detail: Type.String(),
  attr: Type.Union([Type.String(), Type.Null()]),
})
export const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody }

export const ExperimentParams = Type.Object({ projectId: Type.String(), id: Type.String() })

/** The fields of spec §2.7 (unknown keys are refused by the service with PostHog's message). */
export const ExperimentInput = Type.Object(
  {
    name: Type.Optional(Type.String()),
    description: Type.Optional(Nullable(Type.String())),
    start_date: Type.Optional(Nullable(Type.String())),
    end_date: Type.Optional(Nullable(Type.String())),
    feature_flag_key: Type.Optional(Type.String()),
    holdout_id: Type.Optional(Nullable(Type.Integer())),
    parameters: Type.Optional(Structured),
    secondary_metrics: Type.Optional(Structured),
    saved_metrics_ids: Type.Optional(Nullable(Type.Array(Type.Unknown()))),
    filters: Type.Optional(Structured),
    archived: Type.Optional(Type.Boolean()),
    deleted: Type.Optional(Type.Boolean()),
    type: Type.Optional(Nullable(Type.String())),
    exposure_criteria: Type.Optional(Structured),
    metrics: Type.Optional(Structured),
    metrics_secondary: Type.Optional(Structured),
    stats_config: Type.Optional(Structured),
    _create_in_folder: Type.Optional(Type.String()),
    conclusion: Type.Optional(Nullable(Type.String())),
    conclusion_comment: Type.Optional(Nullable(Type.String())),
    primary_metrics_ordered_uuids: Type.Optional(Structured),
    secondary_metrics_ordered_uuids: Type.Optional(Structured),
  },
  { additionalProperties: true },
)

export const ExperimentRecord = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Nullable(Type.String()),
  start_date: Nullable(Type.String()),
  end_date: Nullable(Type.String()),
  feature_flag_key: Nullable(Type.String()),
  feature_flag: Structured,
  holdout: Structured,
  holdout_id: Nullable(Type.Integer()),
  exposure_cohort: Nullable(Type.Integer()),
  parameters: Structured,
  secondary_metrics: Structured,
  saved_metrics: Type.Optional(Type.Array(Type.Unknown())),
  saved_metrics_ids: Type.Null(),
  filters: Structured,
  archived: Type.Boolean(),
  deleted: Type.Boolean(),
  created_by: Structured,
  created_at: Type.String(),
  updated_at: Type.String(),
  type: Nullable(Type.String()),
  exposure_criteria: Structured,
  metrics: Type.Optional(Type.Array(Type.Unknown())),
  metrics_secondary: Type.Optional(Type.Array(Type.Unknown())),
  stats_config: Structured,
  scheduling_config: Structured,
  only_count_matured_users: Type.Boolean(),
  status: Type.String(),
  conclusion: Nullable(Type.String()),
  conclusion_comment: Nullable(Type.String()),
  primary_metrics_ordered_uuids: Structured,
  secondary_metrics_ordered_uuids: Structured,
  user_access_level: Type.String(),
})

export const ExperimentListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
  status: Type.Optional(Type.String()),
  archived: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
  search: Type.Optional(Type.String()),
  created_by_id: Type.Optional(Type.Integer()),
  feature_flag_id: Type.Optional(Type.Integer()),
  /** Experiments whose `parameters.prompt_metadata.name` is this value (PostHog's LLM-prompt experiments). */
  prompt_name: Type.Optional(Type.String()),
  /** Experiments with a primary or secondary metric on this event. */
  event: Type.Optional(Type.String()),
  order: Type.Optional(Type.String()),
})

export type ExperimentListQuery = Static<typeof ExperimentListQuery>

export const ExperimentPage = Type.Object({
  count: Type.Integer(),
  next: Nullable(Type.String()),
  previous: Nullable(Type.String()),
  results: Type.Array(ExperimentRecord),
})

export const PromptTemplateList = Type.Array(
  Type.Object({ key: Type.String(), label: Type.String(), description: Type.String() }),
)

/** The body of `create_from_prompt/`: its fields are checked by the service, with PostHog's messages. */
export const CreateFromPromptInput = Type.Object(
  {
    prompt_name: Type.Optional(Type.Unknown({ description: 'The name of a stored LLM prompt of this project.' })),
    versions: Type.Optional(
      Type.Unknown({
        description: '2 to 10 distinct versions of the prompt, in variant order; the first is the control.',
      }),
    ),
    templates: Type.Optional(
      Type.Unknown({ description: 'One or more distinct metric templates: cost, latency, eval_pass_rate.' }),
    ),
    name: Type.Optional(Type.Unknown({ description: 'The experiment name; generated from the prompt when omitted.' })),
    feature_flag_key: Type.Optional(
      Type.Unknown({
        description: "An unused flag key; a slug of the name when omitted (with '-2', '-3'… when taken).",
      }),
    ),
    description: Type.Optional(Type.Unknown({ description: 'The experiment description.' })),
  },
  { additionalProperties: true },
)

export const EligibleQuery = Type.Object({
  search: Type.Optional(Type.String()),
  limit: Type.Optional(Type.String()),
  offset: Type.Optional(Type.String()),
  active: Type.Optional(Type.String()),
  created_by_id: Type.Optional(Type.Integer()),
  order: Type.Optional(Type.String()),
  evaluation_runtime: Type.Optional(Type.String()),
  has_evaluation_tags: Type.Optional(Type.String()),
})

export const LifecycleInput = Type.Object(
  {
    conclusion: Type.Optional(Nullable(Type.String())),
    conclusion_comment: Type.Optional(Nullable(Type.String())),
    variant_key: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
)

export const DuplicateInput = Type.Object({
  feature_flag_key: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
})

export const CopyToProjectInput = Type.Object({
  target_team_id: Type.Optional(Type.Integer({ description: 'A project of the same organization.' })),
  feature_flag_key: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
})

export const VelocityStats = Type.Object({
  launched_last_30d: Type.Integer(),
  launched_previous_30d: Type.Integer(),
  percent_change: Type.Number(),
  active_experiments: Type.Integer(),
  completed_last_30d: Type.Integer(),
})

export const TimeseriesQuery = Type.Object({
  metric_uuid: Type.Optional(Type.String()),
  fingerprint: Type.Optional(Type.String()),
})

export const TimeseriesRecord = Type.Object({
  experiment_id: Type.Integer(),
  metric_uuid: Type.String(),
  status: Type.String(),
  timeseries: Type.Record(Type.String(), Type.Unknown()),
  errors: Nullable(Type.Record(Type.String(), Type.String())),
  computed_at: Nullable(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
  recalculation_status: Nullable(Type.String()),
  recalculation_created_at: Nullable(Type.String()),
})

export const RecalculateInput = Type.Object(
  { metric: Type.Optional(Type.Unknown()), fingerprint: Type.Optional(Type.String()) },
  { additionalProperties: true },
)

export const RecalculationRecord = Type.Object({
  id: Type.String(),
  experiment_id: Type.Integer(),
  metric_uuid: Nullable(Type.String()),
  fingerprint: Type.String(),
  status: Type.String(),
  created_at: Type.String(),
})

export const MetricsRecalculationInput = Type.Object(
  {
    trigger: Type.Optional(
      Type.String({
        description:
          'What asked for the run: manual (default), experiment_launch, experiment_stop, experiment_update, agent_mcp.',
      }),
    ),
  },
  { additionalProperties: true },
)

export const MetricsRecalculationParams = Type.Object({
  projectId: Type.String(),
  id: Type.String(),
  recalculationId: Type.String(),
})

const MetricRunResult = Type.Object({
  metric_uuid: Type.String(),
  status: Type.String({ description: 'completed or failed' }),
  result: Type.Unknown({ description: 'The ExperimentQuery response (without step_sessions); null when failed.' }),
  error_message: Nullable(Type.String()),
})

export const MetricsRecalculationRecord = Type.Object({
  id: Type.String({ description: 'The run id, or `timeseries-fallback` for a placeholder built from daily points.' }),
  experiment_id: Type.Integer(),
  status: Type.String({ description: 'pending, in_progress, completed or failed' }),
  total_metrics: Type.Integer(),
  completed_metrics: Type.Integer(),
  failed_metrics: Type.Integer(),
  metric_errors: Type.Record(Type.String(), Type.Unknown()),
  trigger: Type.String(),
  created_at: Nullable(Type.String()),
  started_at: Nullable(Type.String()),
  completed_at: Nullable(Type.String()),
  query_to: Nullable(Type.String({ description: 'The end of the data window every metric of the run covers.' })),
  is_existing: Type.Optional(Type.Boolean()),
  result_source: Type.String({ description: 'recalculation or timeseries_fallback' }),
  results: Type.Optional(Type.Array(MetricRunResult)),
})

export const RunningTimeInput = Type.Object(
  {
    metric: Type.Optional(Type.Unknown()),
    baseline: Type.Optional(Type.Unknown()),
    minimum_detectable_effect: Type.Optional(Type.Number()),
    number_of_variants: Type.Optional(Type.Integer({ minimum: 2 })),
    exposures_per_day: Type.Optional(Nullable(Type.Number())),
  },
  { additionalProperties: true },
)

export const RunningTimeRecord = Type.Object({
  baseline_value: Nullable(Type.Number()),
  variance: Nullable(Type.Number()),
  recommended_sample_size: Nullable(Type.Integer()),
  recommended_running_time_days: Nullable(Type.Integer()),
})

export const HoldoutInput = Type.Object(
  {
    name: Type.Optional(Type.String()),
    description: Type.Optional(Nullable(Type.String())),
    filters: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
)
export const HoldoutRecord = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Nullable(Type.String()),
  filters: Type.Unknown(),
  created_by: Type.Unknown(),
  created_at: Type.String(),
  updated_at: Type.String(),
})

export const SavedMetricInput = Type.Object(
  {
    name: Type.Optional(Type.String()),
    description: Type.Optional(Nullable(Type.String())),
    query: Type.Optional(Type.Unknown()),
    metadata: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
)
export const SavedMetricRecord = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Nullable(Type.String()),
  query: Type.Unknown(),
  metadata: Type.Unknown(),
  created_by: Type.Unknown(),
  created_at: Type.String(),
  updated_at: Type.String(),
})
export const pageOf = <T extends import('typebox').TSchema>(item: T) =>
  Type.Object({
    count: Type.Integer(),
    next: Nullable(Type.String()),
    previous: Nullable(Type.String()),
    results: Type.Array(item),
  })
