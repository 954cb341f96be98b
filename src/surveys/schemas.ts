import { type Static, Type } from 'typebox'
import { Nullable } from '../http/nullable.js'

export const SurveyParams = Type.Object({ projectId: Type.String(), id: Type.String({ maxLength: 100 }) })
export const ResponseParams = Type.Object({
  projectId: Type.String(),
  id: Type.String({ maxLength: 100 }),
  uuid: Type.String({ maxLength: 100 }),
})

/** Null first for text: with type coercion on, a string-first union would turn a JSON null into "". */
const NullableText = (options: { maxLength: number }) => Type.Union([Type.Null(), Type.String(options)])

export const SurveyType = Type.Union([
  Type.Literal('popover'),
  Type.Literal('widget'),
  Type.Literal('external_survey'),
  Type.Literal('api'),
])

/** Fields accepted on create and PATCH (spec §2.6); JSON fields are checked by the service with PostHog's messages. */
export const SurveyInput = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 400 })),
  description: Type.Optional(Type.String({ maxLength: 10_000 })),
  type: Type.Optional(SurveyType),
  schedule: Type.Optional(NullableText({ maxLength: 40 })),
  linked_flag_id: Type.Optional(Nullable(Type.Integer())),
  linked_insight_id: Type.Optional(Nullable(Type.Integer())),
  targeting_flag_id: Type.Optional(Nullable(Type.Integer())),
  targeting_flag_filters: Type.Optional(Type.Unknown()),
  remove_targeting_flag: Type.Optional(Nullable(Type.Boolean())),
  questions: Type.Optional(Nullable(Type.Array(Type.Unknown(), { maxItems: 200 }))),
  conditions: Type.Optional(Type.Unknown()),
  appearance: Type.Optional(Type.Unknown()),
  start_date: Type.Optional(NullableText({ maxLength: 64 })),
  end_date: Type.Optional(NullableText({ maxLength: 64 })),
  archived: Type.Optional(Type.Boolean()),
  responses_limit: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 2_147_483_647 }))),
  iteration_count: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 500 }))),
  iteration_frequency_days: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 2_147_483_647 }))),
  iteration_start_dates: Type.Optional(Nullable(Type.Array(Type.Unknown(), { maxItems: 500 }))),
  current_iteration: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 2_147_483_647 }))),
  current_iteration_start_date: Type.Optional(NullableText({ maxLength: 64 })),
  response_sampling_start_date: Type.Optional(NullableText({ maxLength: 64 })),
  response_sampling_interval_type: Type.Optional(
    Nullable(Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('month')])),
  ),
  response_sampling_interval: Type.Optional(Nullable(Type.Integer({ minimum: -2_147_483_648, maximum: 3650 }))),
  response_sampling_limit: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 2_147_483_647 }))),
  response_sampling_daily_limits: Type.Optional(Type.Unknown()),
  enable_partial_responses: Type.Optional(Nullable(Type.Boolean())),
  enable_iframe_embedding: Type.Optional(Nullable(Type.Boolean())),
  base_language: Type.Optional(NullableText({ maxLength: 20 })),
  translations: Type.Optional(Type.Unknown()),
  form_content: Type.Optional(Type.Unknown()),
  _create_in_folder: Type.Optional(Type.String({ maxLength: 400 })),
})
export type SurveyInput = Static<typeof SurveyInput>

export const SurveyListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
  search: Type.Optional(Type.String({ maxLength: 400 })),
  archived: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
  type: Type.Optional(SurveyType),
  ids: Type.Optional(Type.String({ maxLength: 20_000 })),
})
export type SurveyListQuery = Static<typeof SurveyListQuery>

const UserBasic = Nullable(
  Type.Object({
    id: Type.Integer(),
    uuid: Type.String(),
    distinct_id: Type.String(),
    first_name: Type.String(),
    last_name: Type.String(),
    email: Type.String(),
    is_email_verified: Type.Boolean(),
  }),
)

export const MinimalFlag = Nullable(
  Type.Object({
    id: Type.Integer(),
    team_id: Type.Integer(),
    name: Type.String(),
    key: Type.String(),
    filters: Type.Unknown(),
    deleted: Type.Boolean(),
    active: Type.Boolean(),
    ensure_experience_continuity: Type.Boolean(),
    has_encrypted_payloads: Type.Boolean(),
    version: Type.Integer(),
    evaluation_runtime: Type.String(),
    evaluation_tags: Type.Array(Type.String()),
  }),
)
export type MinimalFlag = Static<typeof MinimalFlag>

const Json = Type.Unknown()
const NullableString = Nullable(Type.String())
const NullableInteger = Nullable(Type.Integer())

/** POST and PATCH answers (PostHog's create/update serializer). */
export const SurveyWritten = Type.Object({
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  type: Type.String(),
  schedule: NullableString,
  linked_flag: MinimalFlag,
  linked_flag_id: NullableInteger,
  linked_insight_id: NullableInteger,
  targeting_flag: MinimalFlag,
  internal_targeting_flag: MinimalFlag,
  questions: Json,
  conditions: Json,
  appearance: Json,
  created_at: Type.String(),
  created_by: UserBasic,
  start_date: NullableString,
  end_date: NullableString,
  archived: Type.Boolean(),
  responses_limit: NullableInteger,
  iteration_count: NullableInteger,
  iteration_frequency_days: NullableInteger,
  iteration_start_dates: Json,
  current_iteration: NullableInteger,
  current_iteration_start_date: NullableString,
  response_sampling_start_date: NullableString,
  response_sampling_interval_type: NullableString,
  response_sampling_interval: NullableInteger,
  response_sampling_limit: NullableInteger,
  response_sampling_daily_limits: Json,
  enable_partial_responses: Type.Boolean(),
  enable_iframe_embedding: Type.Boolean(),
  base_language: Type.String(),
  translations: Json,
  form_content: Json,
})
export type SurveyWritten = Static<typeof SurveyWritten>

/** GET answers (PostHog's SurveySerializer). */
export const SurveyRecord = Type.Object({
  ...SurveyWritten.properties,
  feature_flag_keys: Type.Array(Type.Object({ key: Type.String(), value: NullableString })),
  user_access_level: Type.String(),
  search_match_type: NullableString,
})
export type SurveyRecord = Static<typeof SurveyRecord>

export const SurveyPage = Type.Object({
  count: Type.Integer(),
  next: NullableString,
  previous: NullableString,
  results: Type.Array(SurveyRecord),
})

const EventStats = Type.Object({
  total_count: Type.Integer(),
  unique_persons: Type.Integer(),
  first_seen: NullableString,
  last_seen: NullableString,
  unique_persons_only_seen: Type.Integer(),
  total_count_only_seen: Type.Integer(),
})
export type EventStats = Static<typeof EventStats>

export const SurveyRates = Type.Object({
  response_rate: Type.Number(),
  dismissal_rate: Type.Number(),
  unique_users_response_rate: Type.Number(),
  unique_users_dismissal_rate: Type.Number(),
})
export type SurveyRates = Static<typeof SurveyRates>

const PerQuestionStats = Type.Object({
  question_id: NullableString,
  question_index: Type.Integer(),
  question_text: Type.String(),
  question_type: NullableString,
  response_count: Type.Integer(),
  distribution: Type.Record(Type.String(), Type.Integer()),
  average: Type.Optional(Nullable(Type.Number())),
})
export type PerQuestionStats = Static<typeof PerQuestionStats>

export const GlobalStats = Type.Object({
  stats: Type.Record(Type.String(), EventStats),
  rates: SurveyRates,
})

export const SurveyStatsRecord = Type.Object({
  stats: Type.Record(Type.String(), EventStats),
  rates: SurveyRates,
  survey_id: Type.String(),
  start_date: NullableString,
  end_date: NullableString,
  per_question_stats: Type.Optional(Type.Array(PerQuestionStats)),
})

const BooleanText = Type.Union([
  Type.Literal('true'),
  Type.Literal('false'),
  Type.Literal('1'),
  Type.Literal('0'),
  Type.Literal('True'),
  Type.Literal('False'),
])
export const StatsQuery = Type.Object({
  date_from: Type.Optional(Type.String({ maxLength: 64 })),
  date_to: Type.Optional(Type.String({ maxLength: 64 })),
  exclude_archived: Type.Optional(BooleanText),
  include_per_question_stats: Type.Optional(BooleanText),
})
export type StatsQuery = Static<typeof StatsQuery>

export const CountQuery = Type.Object({
  exclude_archived: Type.Optional(BooleanText),
  survey_ids: Type.Optional(Type.String({ maxLength: 20_000 })),
})

export const ActivityQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
})

export const ActivityEntry = Type.Object({
  id: Type.Integer(),
  user: Nullable(
    Type.Object({
      first_name: Type.String(),
      email: NullableString,
      is_system: Type.Optional(Type.Boolean()),
    }),
  ),
  activity: Type.String(),
  scope: Type.String(),
  item_id: NullableString,
  detail: Type.Unknown(),
  created_at: Type.String(),
})
export const ActivityPage = Type.Object({
  results: Type.Array(ActivityEntry),
  next: NullableString,
  previous: NullableString,
  total_count: Type.Integer(),
})

export const DuplicateInput = Type.Object({ target_team_ids: Type.Optional(Type.Unknown()) })
export const DuplicateResult = Type.Object({
  created_surveys: Type.Array(Type.Object({ team_id: Type.Integer(), survey_id: Type.String(), name: Type.String() })),
  count: Type.Integer(),
})

export const SummaryInput = Type.Union([Type.Object({ force_refresh: Type.Optional(Type.Boolean()) }), Type.Null()])
export const SummaryQuery = Type.Object({
  question_id: Type.Optional(Type.String({ maxLength: 100 })),
  question_index: Type.Optional(Type.String({ maxLength: 10 })),
})
export const QuestionSummary = Type.Object({
  content: Type.String(),
  response_count: Type.Integer(),
  generated_at: Type.String(),
  trace_id: Type.Optional(NullableString),
  cached: Type.Boolean(),
})
export const HeadlineSummary = Type.Object({
  headline: Type.String(),
  responses_sampled: Type.Integer(),
  has_more: Type.Boolean(),
})

export const QuestionLabels = Type.Object({
  labels: Type.Array(
    Type.Object({
      question_id: Type.String(),
      question_text: Type.String(),
      question_index: Type.Integer(),
      survey_id: Type.String(),
      survey_name: Type.String(),
    }),
  ),
})

/** The SDK's survey shape (PostHog's SurveyAPISerializer). */
export const PublicSurvey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.String(),
  linked_flag_key: Type.Optional(NullableString),
  targeting_flag_key: Type.Optional(NullableString),
  internal_targeting_flag_key: Type.Optional(NullableString),
  questions: Json,
  conditions: Json,
  appearance: Json,
  start_date: NullableString,
  end_date: NullableString,
  current_iteration: NullableInteger,
  current_iteration_start_date: NullableString,
  schedule: NullableString,
  enable_partial_responses: Type.Boolean(),
})
export type PublicSurvey = Static<typeof PublicSurvey>
export const PublicSurveys = Type.Object({ surveys: Type.Array(PublicSurvey), survey_config: Json })
export const PublicQuery = Type.Object({
  token: Type.Optional(Type.String({ maxLength: 200 })),
  api_key: Type.Optional(Type.String({ maxLength: 200 })),
})

export const ResponsesQuery = Type.Object({
  since: Type.Optional(Type.String({ maxLength: 64 })),
  until: Type.Optional(Type.String({ maxLength: 64 })),
  question_id: Type.Optional(Type.String({ maxLength: 100 })),
  score_gte: Type.Optional(Type.Number()),
  score_lte: Type.Optional(Type.Number()),
  exclude_archived: Type.Optional(BooleanText),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
})

export const ResponsesPage = Type.Object({
  results: Type.Array(
    Type.Object({
      uuid: Type.String(),
      distinct_id: Type.String(),
      session_id: Nullable(Type.String()),
      submitted_at: Type.String(),
      answers: Type.Array(
        Type.Object({
          question_id: Nullable(Type.String()),
          question_index: Type.Integer(),
          question_text: Type.String(),
          question_type: Nullable(Type.String()),
          answer: Type.Unknown(),
        }),
      ),
      extra: Type.Object({
        device_type: Nullable(Type.String()),
        browser: Nullable(Type.String()),
        os: Nullable(Type.String()),
        geoip_country_code: Nullable(Type.String()),
        geoip_country_name: Nullable(Type.String()),
        geoip_city_name: Nullable(Type.String()),
        current_url: Nullable(Type.String()),
        iteration: Nullable(Type.Integer()),
      }),
    }),
  ),
  has_more: Type.Boolean(),
  limit: Type.Integer(),
  offset: Type.Integer(),
})
