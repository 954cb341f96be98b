import type { MetaMigration } from '../migrate.js'
import { notNull, withSerialId } from './columns.js'

/** The query log: one row per query run through the query API (read back by `GET /query/{id}/log/`). */
export const queries: MetaMigration = {
  name: '0005-queries',
  async up(db, dialect) {
    await withSerialId(db.schema.createTable('query_log'), dialect)
      .addColumn('team_id', 'integer', notNull)
      .addColumn('query_id', 'text', notNull)
      .addColumn('client_query_id', 'text')
      .addColumn('name', 'text')
      .addColumn('kind', 'text', notNull)
      .addColumn('query', 'text', notNull)
      .addColumn('hogql', 'text')
      .addColumn('clickhouse', 'text')
      .addColumn('status', 'text', notNull)
      .addColumn('is_async', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('error', 'text')
      .addColumn('error_code', 'text')
      .addColumn('duration_ms', 'double precision')
      .addColumn('rows_read', 'bigint')
      .addColumn('bytes_read', 'bigint')
      .addColumn('result_rows', 'integer')
      .addColumn('created_at', 'text', notNull)
      .addColumn('finished_at', 'text')
      .execute()
    await db.schema.createIndex('query_log_team_query').on('query_log').columns(['team_id', 'query_id']).execute()
    await db.schema.createIndex('query_log_created').on('query_log').column('created_at').execute()
  },
}
