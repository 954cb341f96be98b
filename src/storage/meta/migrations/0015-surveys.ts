import type { MetaMigration } from '../migrate.js'
import { notNull } from './columns.js'

/**
 * Surveys (UUID ids, name unique per project, JSON columns as text, the ids of the flags each survey keeps) and
 * the archived responses (`survey sent` event uuids hidden from counts and stats on request).
 */
export const surveys: MetaMigration = {
  name: '0015-surveys',
  async up(db) {
    await db.schema
      .createTable('surveys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'integer', notNull)
      .addColumn('name', 'text', notNull)
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('type', 'text', notNull)
      .addColumn('schedule', 'text')
      .addColumn('linked_flag_id', 'integer')
      .addColumn('linked_insight_id', 'integer')
      .addColumn('targeting_flag_id', 'integer')
      .addColumn('internal_targeting_flag_id', 'integer')
      .addColumn('internal_response_sampling_flag_id', 'integer')
      .addColumn('questions', 'text')
      .addColumn('conditions', 'text')
      .addColumn('appearance', 'text')
      .addColumn('created_at', 'text', notNull)
      .addColumn('created_by', 'integer')
      .addColumn('updated_at', 'text', notNull)
      .addColumn('start_date', 'text')
      .addColumn('end_date', 'text')
      .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('responses_limit', 'integer')
      .addColumn('iteration_count', 'integer')
      .addColumn('iteration_frequency_days', 'integer')
      .addColumn('iteration_start_dates', 'text')
      .addColumn('current_iteration', 'integer')
      .addColumn('current_iteration_start_date', 'text')
      .addColumn('response_sampling_start_date', 'text')
      .addColumn('response_sampling_interval_type', 'text')
      .addColumn('response_sampling_interval', 'integer')
      .addColumn('response_sampling_limit', 'integer')
      .addColumn('response_sampling_daily_limits', 'text')
      .addColumn('enable_partial_responses', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('enable_iframe_embedding', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('headline_summary', 'text')
      .addColumn('headline_response_count', 'integer')
      .addColumn('question_summaries', 'text')
      .addColumn('base_language', 'text', (c) => c.notNull().defaultTo('en'))
      .addColumn('translations', 'text')
      .addColumn('form_content', 'text')
      .addColumn('action_ids', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute()
    await db.schema.createIndex('surveys_team_name').on('surveys').columns(['team_id', 'name']).unique().execute()
    await db.schema
      .createTable('survey_response_archives')
      .addColumn('team_id', 'integer', notNull)
      .addColumn('survey_id', 'text', notNull)
      .addColumn('response_uuid', 'text', notNull)
      .addColumn('archived_at', 'text', notNull)
      .addPrimaryKeyConstraint('survey_response_archives_pk', ['team_id', 'response_uuid'])
      .execute()
    await db.schema
      .createIndex('survey_response_archives_survey')
      .on('survey_response_archives')
      .columns(['survey_id'])
      .execute()
  },
}
