import type { Insertable, Kysely, Selectable, Updateable } from 'kysely'
import type { MetaDatabase } from '../storage/meta/schema.js'

/** JSON columns are text: parameters, filters, metrics… hold the JSON PostHog keeps in its JSON fields. */
export type ExperimentTable = {
  id: import('kysely').Generated<number>
  team_id: number
  name: string
  description: string | null
  filters: string
  parameters: string | null
  secondary_metrics: string
  created_by: number | null
  feature_flag_id: number
  exposure_cohort_id: number | null
  holdout_id: number | null
  start_date: string | null
  end_date: string | null
  created_at: string
  updated_at: string
  archived: number
  deleted: number
  type: string | null
  variants: string
  exposure_criteria: string
  metrics: string
  metrics_secondary: string
  primary_metrics_ordered_uuids: string | null
  secondary_metrics_ordered_uuids: string | null
  stats_config: string
  scheduling_config: string
  only_count_matured_users: number
  conclusion: string | null
  conclusion_comment: string | null
}

export type HoldoutTable = {
  id: import('kysely').Generated<number>
  team_id: number
  name: string
  description: string | null
  filters: string
  created_by: number | null
  created_at: string
  updated_at: string
}

export type SavedMetricTable = {
  id: import('kysely').Generated<number>
  team_id: number
  name: string
  description: string | null
  query: string
  metadata: string | null
  created_by: number | null
  created_at: string
  updated_at: string
}

export type SavedMetricLinkTable = {
  id: import('kysely').Generated<number>
  experiment_id: number
  saved_metric_id: number
  metadata: string
  created_at: string
}

export type MetricResultTable = {
  id: import('kysely').Generated<number>
  experiment_id: number
  metric_uuid: string
  fingerprint: string
  query_from: string
  query_to: string
  status: string
  result: string | null
  query_id: string | null
  completed_at: string | null
  error_message: string | null
  created_at: string
  updated_at: string
}

export type RecalculationTable = {
  id: string
  team_id: number
  experiment_id: number
  metric: string
  fingerprint: string
  status: string
  last_successful_date: string | null
  error_message: string | null
  created_at: string
}

export type MetricsRecalculationTable = {
  id: string
  team_id: number
  experiment_id: number
  status: string
  trigger: string
  total_metrics: number
  metric_uuids: string
  metric_errors: string
  query_to: string | null
  created_by: number | null
  created_at: string
  started_at: string | null
  completed_at: string | null
}

export type ExperimentTables = {
  experiments: ExperimentTable
  experiment_holdouts: HoldoutTable
  experiment_saved_metrics: SavedMetricTable
  experiment_saved_metric_links: SavedMetricLinkTable
  experiment_metric_results: MetricResultTable
  experiment_recalculations: RecalculationTable
  experiment_metrics_recalculations: MetricsRecalculationTable
}

export type ExperimentRow = Selectable<ExperimentTable>
export type NewExperimentRow = Insertable<ExperimentTable>
export type HoldoutRow = Selectable<HoldoutTable>
export type SavedMetricRow = Selectable<SavedMetricTable>
export type SavedMetricLinkRow = Selectable<SavedMetricLinkTable>
export type MetricResultRow = Selectable<MetricResultTable>
export type RecalculationRow = Selectable<RecalculationTable>
export type MetricsRecalculationRow = Selectable<MetricsRecalculationTable>

type Db = Kysely<MetaDatabase & ExperimentTables>

export interface ExperimentListFilter {
  search?: string
  archived?: boolean
  createdById?: number
  featureFlagId?: number
}

const escapeLike = (text: string) => text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)

export function createExperimentStore(anyDb: Kysely<any>) {
  const db = anyDb as Db

  /**
   * Get, list (newest first), insert and update of a project's rows in one of the experiment resources' tables
   * (holdouts, saved metrics): the same statements over each, by table name.
   */
  const projectRows = <Row, Table>(table: 'experiment_holdouts' | 'experiment_saved_metrics') => ({
    get: (teamId: number, id: number): Promise<Row | undefined> =>
      anyDb
        .selectFrom(table)
        .selectAll()
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .executeTakeFirst() as Promise<Row | undefined>,
    list: (teamId: number): Promise<Row[]> =>
      anyDb
        .selectFrom(table)
        .selectAll()
        .where('team_id', '=', teamId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute() as Promise<Row[]>,
    insert: (row: Insertable<Table>): Promise<Row> =>
      anyDb.insertInto(table).values(row).returningAll().executeTakeFirstOrThrow() as Promise<Row>,
    update: (teamId: number, id: number, patch: Updateable<Table>): Promise<Row> =>
      anyDb
        .updateTable(table)
        .set(patch)
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow() as Promise<Row>,
  })
  return {
    async get(teamId: number, id: number): Promise<ExperimentRow | undefined> {
      return db
        .selectFrom('experiments')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .executeTakeFirst()
    },
    /** Every live experiment of a project matching the filter (a project holds tens to hundreds). */
    async list(teamId: number, filter: ExperimentListFilter): Promise<ExperimentRow[]> {
      let q = db.selectFrom('experiments').selectAll().where('team_id', '=', teamId).where('deleted', '=', 0)
      if (filter.archived !== undefined) q = q.where('archived', '=', filter.archived ? 1 : 0)
      if (filter.createdById !== undefined) q = q.where('created_by', '=', filter.createdById)
      if (filter.featureFlagId !== undefined) q = q.where('feature_flag_id', '=', filter.featureFlagId)
      if (filter.search) {
        const pattern = `%${escapeLike(filter.search)}%`
        q = q.where((eb) => eb(eb.fn('lower', ['name']), 'like', eb.val(pattern)))
      }
      return q.orderBy('created_at', 'desc').orderBy('id', 'desc').execute()
    },
    /** Launched, not ended, not deleted experiments of every project that started at or after `since`. */
    async running(since: string): Promise<ExperimentRow[]> {
      return db
        .selectFrom('experiments')
        .selectAll()
        .where('deleted', '=', 0)
        .where('start_date', 'is not', null)
        .where('start_date', '>=', since)
        .where('end_date', 'is', null)
        .orderBy('team_id')
        .orderBy('id')
        .execute()
    },
    async names(teamId: number): Promise<string[]> {
      const rows = await db
        .selectFrom('experiments')
        .select('name')
        .where('team_id', '=', teamId)
        .where('deleted', '=', 0)
        .execute()
      return rows.map((r) => r.name)
    },
    async insert(row: NewExperimentRow): Promise<ExperimentRow> {
      return db.insertInto('experiments').values(row).returningAll().executeTakeFirstOrThrow()
    },
    async update(teamId: number, id: number, patch: Updateable<ExperimentTable>): Promise<ExperimentRow> {
      return db
        .updateTable('experiments')
        .set(patch)
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow()
    },
    async usingHoldout(teamId: number, holdoutId: number): Promise<ExperimentRow[]> {
      return db
        .selectFrom('experiments')
        .selectAll()
        .where('team_id', '=', teamId)
        .where('holdout_id', '=', holdoutId)
        .where('deleted', '=', 0)
        .execute()
    },

    holdouts: {
      ...projectRows<HoldoutRow, HoldoutTable>('experiment_holdouts'),
      async remove(teamId: number, id: number): Promise<void> {
        await db.deleteFrom('experiment_holdouts').where('team_id', '=', teamId).where('id', '=', id).execute()
      },
    },

    savedMetrics: {
      ...projectRows<SavedMetricRow, SavedMetricTable>('experiment_saved_metrics'),
      async remove(teamId: number, id: number): Promise<void> {
        await db.transaction().execute(async (tx) => {
          await tx.deleteFrom('experiment_saved_metric_links').where('saved_metric_id', '=', id).execute()
          await tx.deleteFrom('experiment_saved_metrics').where('team_id', '=', teamId).where('id', '=', id).execute()
        })
      },
      async links(experimentId: number): Promise<SavedMetricLinkRow[]> {
        return db
          .selectFrom('experiment_saved_metric_links')
          .selectAll()
          .where('experiment_id', '=', experimentId)
          .orderBy('id')
          .execute()
      },
      async replaceLinks(
        experimentId: number,
        links: { savedMetricId: number; metadata: unknown }[],
        createdAt: string,
      ): Promise<void> {
        await db.transaction().execute(async (tx) => {
          await tx.deleteFrom('experiment_saved_metric_links').where('experiment_id', '=', experimentId).execute()
          if (links.length === 0) return
          await tx
            .insertInto('experiment_saved_metric_links')
            .values(
              links.map((l) => ({
                experiment_id: experimentId,
                saved_metric_id: l.savedMetricId,
                metadata: JSON.stringify(l.metadata ?? {}),
                created_at: createdAt,
              })),
            )
            .execute()
        })
      },
    },

    results: {
      async forMetric(experimentId: number, metricUuid: string, fingerprint: string): Promise<MetricResultRow[]> {
        return db
          .selectFrom('experiment_metric_results')
          .selectAll()
          .where('experiment_id', '=', experimentId)
          .where('metric_uuid', '=', metricUuid)
          .where('fingerprint', '=', fingerprint)
          .orderBy('query_to')
          .execute()
      },
      async clear(experimentId: number, metricUuid: string, fingerprint: string): Promise<void> {
        await db
          .deleteFrom('experiment_metric_results')
          .where('experiment_id', '=', experimentId)
          .where('metric_uuid', '=', metricUuid)
          .where('fingerprint', '=', fingerprint)
          .execute()
      },
      /** The rows of the given fingerprints that end at `queryTo` (one run of a batch recalculation). */
      async at(experimentId: number, fingerprints: string[], queryTo: string): Promise<MetricResultRow[]> {
        if (fingerprints.length === 0) return []
        return db
          .selectFrom('experiment_metric_results')
          .selectAll()
          .where('experiment_id', '=', experimentId)
          .where('fingerprint', 'in', fingerprints)
          .where('query_to', '=', queryTo)
          .orderBy('id')
          .execute()
      },
      /** The newest completed row of a metric whose `query_to` lies in [from, to]. */
      async latestCompleted(
        experimentId: number,
        metricUuid: string,
        fingerprint: string,
        from: string,
        to: string,
      ): Promise<MetricResultRow | undefined> {
        return db
          .selectFrom('experiment_metric_results')
          .selectAll()
          .where('experiment_id', '=', experimentId)
          .where('metric_uuid', '=', metricUuid)
          .where('fingerprint', '=', fingerprint)
          .where('status', '=', 'completed')
          .where('query_to', '>=', from)
          .where('query_to', '<=', to)
          .orderBy('query_to', 'desc')
          .executeTakeFirst()
      },
      /** Whether a row (completed or failed) of the metric has its window end in (after, until]: one local day's. */
      async existsWithin(
        experimentId: number,
        metricUuid: string,
        fingerprint: string,
        after: string,
        until: string,
      ): Promise<boolean> {
        const row = await db
          .selectFrom('experiment_metric_results')
          .select('id')
          .where('experiment_id', '=', experimentId)
          .where('metric_uuid', '=', metricUuid)
          .where('fingerprint', '=', fingerprint)
          .where('query_to', '>', after)
          .where('query_to', '<=', until)
          .executeTakeFirst()
        return row !== undefined
      },
      /** Writes one day's row, replacing an earlier attempt of that day. */
      async put(row: Insertable<MetricResultTable>): Promise<void> {
        await db
          .insertInto('experiment_metric_results')
          .values(row)
          .onConflict((oc) =>
            oc.columns(['experiment_id', 'metric_uuid', 'fingerprint', 'query_to']).doUpdateSet({
              status: row.status,
              result: row.result ?? null,
              error_message: row.error_message ?? null,
              completed_at: row.completed_at ?? null,
              query_from: row.query_from,
              updated_at: row.updated_at,
            }),
          )
          .execute()
      },
    },

    recalculations: {
      async active(experimentId: number, fingerprint: string): Promise<RecalculationRow | undefined> {
        return db
          .selectFrom('experiment_recalculations')
          .selectAll()
          .where('experiment_id', '=', experimentId)
          .where('fingerprint', '=', fingerprint)
          .where('status', 'in', ['pending', 'in_progress'])
          .executeTakeFirst()
      },
      /** Inserts a pending request; undefined when another one for this fingerprint is already active. */
      async insert(row: RecalculationRow): Promise<RecalculationRow | undefined> {
        try {
          return await db.insertInto('experiment_recalculations').values(row).returningAll().executeTakeFirstOrThrow()
        } catch (error) {
          if (/unique|duplicate/i.test(String((error as Error).message))) return undefined
          throw error
        }
      },
      async pending(): Promise<RecalculationRow[]> {
        return db
          .selectFrom('experiment_recalculations')
          .selectAll()
          .where('status', 'in', ['pending', 'in_progress'])
          .orderBy('created_at')
          .execute()
      },
      async setStatus(
        id: string,
        patch: Partial<Pick<RecalculationRow, 'status' | 'last_successful_date' | 'error_message'>>,
      ): Promise<void> {
        await db.updateTable('experiment_recalculations').set(patch).where('id', '=', id).execute()
      },
    },

    metricsRecalculations: {
      /** Inserts a pending run; undefined when the experiment already has an active one (the partial unique index). */
      async insert(row: MetricsRecalculationRow): Promise<MetricsRecalculationRow | undefined> {
        try {
          return await db
            .insertInto('experiment_metrics_recalculations')
            .values(row)
            .returningAll()
            .executeTakeFirstOrThrow()
        } catch (error) {
          if (/unique|duplicate/i.test(String((error as Error).message))) return undefined
          throw error
        }
      },
      async get(experimentId: number, id: string): Promise<MetricsRecalculationRow | undefined> {
        return db
          .selectFrom('experiment_metrics_recalculations')
          .selectAll()
          .where('experiment_id', '=', experimentId)
          .where('id', '=', id)
          .executeTakeFirst()
      },
      async active(experimentId: number): Promise<MetricsRecalculationRow[]> {
        return db
          .selectFrom('experiment_metrics_recalculations')
          .selectAll()
          .where('experiment_id', '=', experimentId)
          .where('status', 'in', ['pending', 'in_progress'])
          .orderBy('created_at', 'desc')
          .execute()
      },
      /** The newest run that really finished: completed, or failed after it ran (a stamped `completed_at`). */
      async latestFinished(experimentId: number): Promise<MetricsRecalculationRow | undefined> {
        return db
          .selectFrom('experiment_metrics_recalculations')
          .selectAll()
          .where('experiment_id', '=', experimentId)
          .where((eb) =>
            eb.or([
              eb('status', '=', 'completed'),
              eb.and([eb('status', '=', 'failed'), eb('completed_at', 'is not', null)]),
            ]),
          )
          .orderBy('created_at', 'desc')
          .executeTakeFirst()
      },
      /** Runs any process may pick up: pending, or running (whose owner may have died; the job lease decides). */
      async runnable(): Promise<MetricsRecalculationRow[]> {
        return db
          .selectFrom('experiment_metrics_recalculations')
          .selectAll()
          .where('status', 'in', ['pending', 'in_progress'])
          .orderBy('created_at')
          .execute()
      },
      /** Marks runs failed without a completion stamp (superseded: they stay out of "latest"). */
      async supersede(ids: string[]): Promise<void> {
        if (ids.length === 0) return
        await db
          .updateTable('experiment_metrics_recalculations')
          .set({ status: 'failed' })
          .where('id', 'in', ids)
          .execute()
      },
      /**
       * Starts a run: the first start pins `query_to`; a restart after a takeover keeps it; a run superseded
       * meanwhile is left as it is. Answers the row.
       */
      async start(
        id: string,
        queryTo: string,
        startedAt: string,
        metricUuids: string[],
      ): Promise<MetricsRecalculationRow> {
        await db
          .updateTable('experiment_metrics_recalculations')
          .set({
            status: 'in_progress',
            query_to: queryTo,
            started_at: startedAt,
            total_metrics: metricUuids.length,
            metric_uuids: JSON.stringify(metricUuids),
          })
          .where('id', '=', id)
          .where('query_to', 'is', null)
          .where('status', 'in', ['pending', 'in_progress'])
          .execute()
        return db
          .selectFrom('experiment_metrics_recalculations')
          .selectAll()
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      },
      async setErrors(id: string, errors: Record<string, unknown>): Promise<void> {
        await db
          .updateTable('experiment_metrics_recalculations')
          .set({ metric_errors: JSON.stringify(errors) })
          .where('id', '=', id)
          .execute()
      },
      /** Finishes a run once: a second finish (after a takeover) leaves the first stamp. */
      async finish(id: string, status: 'completed' | 'failed', completedAt: string): Promise<void> {
        await db
          .updateTable('experiment_metrics_recalculations')
          .set({ status, completed_at: completedAt })
          .where('id', '=', id)
          .where('completed_at', 'is', null)
          // a run superseded meanwhile (failed, no completion stamp) stays out of "latest"
          .where('status', 'in', ['pending', 'in_progress'])
          .execute()
      },
    },
  }
}
export type ExperimentStore = ReturnType<typeof createExperimentStore>
