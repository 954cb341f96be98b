import { sql } from 'kysely'
import type { MetaMigration } from '../migrate.js'
import { notNull } from './columns.js'

/**
 * Batch recalculations of every metric of an experiment (`metrics_recalculation/`): a run's status, its pinned
 * data-window end (`query_to`, written once when the run starts), the metrics it covers and their errors. At most
 * one pending or running per experiment, which a partial unique index enforces across processes; the per-metric
 * results live in `experiment_metric_results` under the run's fingerprint.
 */
export const experimentMetricsRecalculations: MetaMigration = {
  name: '0021-experiment-metrics-recalculations',
  async up(db) {
    await db.schema
      .createTable('experiment_metrics_recalculations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('team_id', 'integer', notNull)
      .addColumn('experiment_id', 'integer', notNull)
      .addColumn('status', 'text', notNull)
      .addColumn('trigger', 'text', notNull)
      .addColumn('total_metrics', 'integer', notNull)
      .addColumn('metric_uuids', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('metric_errors', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('query_to', 'text')
      .addColumn('created_by', 'integer')
      .addColumn('created_at', 'text', notNull)
      .addColumn('started_at', 'text')
      .addColumn('completed_at', 'text')
      .execute()
    await db.schema
      .createIndex('experiment_metrics_recalculations_experiment')
      .on('experiment_metrics_recalculations')
      .columns(['experiment_id', 'created_at'])
      .execute()
    await sql`CREATE UNIQUE INDEX experiment_metrics_recalculations_active ON experiment_metrics_recalculations (experiment_id) WHERE status IN ('pending', 'in_progress')`.execute(
      db,
    )
  },
}
