import type { MetaMigration } from '../migrate.js'

/**
 * Cohort calculations: every process must agree on whether a cohort is being calculated, when it last was, how
 * many persons it held and how often it failed, so these live on the cohort row. `calculation_due` marks a cohort
 * whose definition changed since its last calculation (any process may pick it up, under a job lease).
 */
export const cohortCalculations: MetaMigration = {
  name: '0018-cohort-calculations',
  async up(db) {
    await db.schema
      .alterTable('cohorts')
      .addColumn('is_calculating', 'integer', (c) => c.notNull().defaultTo(0))
      .execute()
    await db.schema
      .alterTable('cohorts')
      .addColumn('calculation_due', 'integer', (c) => c.notNull().defaultTo(0))
      .execute()
    await db.schema.alterTable('cohorts').addColumn('last_calculation', 'text').execute()
    await db.schema.alterTable('cohorts').addColumn('count', 'bigint').execute()
    await db.schema
      .alterTable('cohorts')
      .addColumn('errors_calculating', 'integer', (c) => c.notNull().defaultTo(0))
      .execute()
    await db.schema.alterTable('cohorts').addColumn('last_error', 'text').execute()
    // when a calculation last started, succeeded or not: the schedule's clock
    await db.schema.alterTable('cohorts').addColumn('last_attempt', 'text').execute()
  },
}
