import type { Insertable, Kysely, Selectable, Updateable } from 'kysely'
import type { MetaDatabase } from '../storage/meta/schema.js'

export interface EndpointTable {
  id: string
  team_id: number
  name: string
  derived_from_insight: string | null
  is_active: number
  current_version: number
  created_by: number | null
  created_at: string
  updated_at: string
  last_executed_at: string | null
}

export interface EndpointVersionTable {
  id: string
  endpoint_id: string
  team_id: number
  version: number
  query: string
  description: string
  cache_age_seconds: number | null
  is_materialized: number
  is_active: number
  created_by: number | null
  created_at: string
}

export type MaterializationStatus = 'Completed' | 'Running' | 'Failed'

export interface EndpointMaterializationTable {
  version_id: string
  endpoint_id: string
  team_id: number
  table_name: string
  sync_frequency: string
  status: MaterializationStatus
  last_run_at: string | null
  last_materialized_at: string | null
  next_run_at: string
  last_error: string
  failures: number
  shape: string | null
}

type EndpointTables = {
  endpoints: EndpointTable
  endpoint_versions: EndpointVersionTable
  endpoint_materializations: EndpointMaterializationTable
}

export type EndpointRow = Selectable<EndpointTable>
export type EndpointVersionRow = Selectable<EndpointVersionTable>
export type MaterializationRow = Selectable<EndpointMaterializationTable>

export function createEndpointStore(meta: Kysely<MetaDatabase>) {
  const db = meta.withTables<EndpointTables>()
  return {
    list: (teamId: number, filter: { isActive?: boolean; createdBy?: number } = {}) => {
      let q = db.selectFrom('endpoints').selectAll().where('team_id', '=', teamId)
      if (filter.isActive !== undefined) q = q.where('is_active', '=', filter.isActive ? 1 : 0)
      if (filter.createdBy !== undefined) q = q.where('created_by', '=', filter.createdBy)
      return q.orderBy('created_at', 'desc').orderBy('name').execute()
    },
    byName: (teamId: number, name: string) =>
      db.selectFrom('endpoints').selectAll().where('team_id', '=', teamId).where('name', '=', name).executeTakeFirst(),
    byNames: (teamId: number, names: string[]) =>
      names.length === 0
        ? Promise.resolve([] as EndpointRow[])
        : db.selectFrom('endpoints').selectAll().where('team_id', '=', teamId).where('name', 'in', names).execute(),
    /** Creates the endpoint and its first version in one transaction. */
    insert: (endpoint: Insertable<EndpointTable>, version: Insertable<EndpointVersionTable>) =>
      db.transaction().execute(async (tx) => {
        const row = await tx.insertInto('endpoints').values(endpoint).returningAll().executeTakeFirstOrThrow()
        await tx.insertInto('endpoint_versions').values(version).execute()
        return row
      }),
    update: (teamId: number, id: string, patch: Updateable<EndpointTable>) =>
      db
        .updateTable('endpoints')
        .set(patch)
        .where('team_id', '=', teamId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow(),
    /**
     * Adds version `version.version` and makes it current, unless another writer took that number first (then
     * undefined: the caller re-reads and decides again).
     */
    addVersion: (teamId: number, endpointId: string, version: Insertable<EndpointVersionTable>, at: string) =>
      db.transaction().execute(async (tx) => {
        const moved = await tx
          .updateTable('endpoints')
          .set({ current_version: version.version, updated_at: at })
          .where('team_id', '=', teamId)
          .where('id', '=', endpointId)
          .where('current_version', '=', Number(version.version) - 1)
          .executeTakeFirst()
        if (Number(moved.numUpdatedRows) !== 1) return undefined
        await tx.insertInto('endpoint_versions').values(version).execute()
        return tx.selectFrom('endpoints').selectAll().where('id', '=', endpointId).executeTakeFirstOrThrow()
      }),
    delete: (teamId: number, id: string) =>
      db.transaction().execute(async (tx) => {
        await tx.deleteFrom('endpoint_materializations').where('endpoint_id', '=', id).execute()
        await tx.deleteFrom('endpoint_versions').where('endpoint_id', '=', id).execute()
        await tx.deleteFrom('endpoints').where('team_id', '=', teamId).where('id', '=', id).execute()
      }),
    /** Every version of an endpoint, newest first. */
    versions: (endpointId: string) =>
      db
        .selectFrom('endpoint_versions')
        .selectAll()
        .where('endpoint_id', '=', endpointId)
        .orderBy('version', 'desc')
        .execute(),
    version: (endpointId: string, version: number) =>
      db
        .selectFrom('endpoint_versions')
        .selectAll()
        .where('endpoint_id', '=', endpointId)
        .where('version', '=', version)
        .executeTakeFirst(),
    countVersions: async (endpointIds: string[]) => {
      if (endpointIds.length === 0) return new Map<string, number>()
      const rows = await db
        .selectFrom('endpoint_versions')
        .select(['endpoint_id', (eb) => eb.fn.countAll<number>().as('n')])
        .where('endpoint_id', 'in', endpointIds)
        .groupBy('endpoint_id')
        .execute()
      return new Map(rows.map((r) => [r.endpoint_id, Number(r.n)]))
    },
    /** Description and cache age live on every version (the baseline applies changes to all of them). */
    updateVersions: (endpointId: string, patch: Updateable<EndpointVersionTable>) =>
      db.updateTable('endpoint_versions').set(patch).where('endpoint_id', '=', endpointId).execute(),
    updateVersion: (versionId: string, patch: Updateable<EndpointVersionTable>) =>
      db.updateTable('endpoint_versions').set(patch).where('id', '=', versionId).execute(),

    materialization: (versionId: string) =>
      db.selectFrom('endpoint_materializations').selectAll().where('version_id', '=', versionId).executeTakeFirst(),
    materializationsOf: (endpointId: string) =>
      db.selectFrom('endpoint_materializations').selectAll().where('endpoint_id', '=', endpointId).execute(),
    materializationsFor: (versionIds: string[]) =>
      versionIds.length === 0
        ? Promise.resolve([] as MaterializationRow[])
        : db.selectFrom('endpoint_materializations').selectAll().where('version_id', 'in', versionIds).execute(),
    /** Creates or resets the schedule of a version's materialization (due at once). */
    upsertMaterialization: (row: Insertable<EndpointMaterializationTable>) =>
      db
        .insertInto('endpoint_materializations')
        .values(row)
        .onConflict((oc) =>
          oc.column('version_id').doUpdateSet({
            sync_frequency: row.sync_frequency,
            next_run_at: row.next_run_at,
            failures: 0,
          }),
        )
        .execute(),
    updateMaterialization: (versionId: string, patch: Updateable<EndpointMaterializationTable>) =>
      db.updateTable('endpoint_materializations').set(patch).where('version_id', '=', versionId).execute(),
    removeMaterialization: (versionId: string) =>
      db.deleteFrom('endpoint_materializations').where('version_id', '=', versionId).execute(),
    /** Materializations whose next sync is due. */
    due: (at: string, limit: number) =>
      db
        .selectFrom('endpoint_materializations')
        .selectAll()
        .where('next_run_at', '<=', at)
        .orderBy('next_run_at')
        .limit(limit)
        .execute(),
    recordExecution: (endpointId: string, at: string) =>
      db.updateTable('endpoints').set({ last_executed_at: at }).where('id', '=', endpointId).execute(),
  }
}

export type EndpointStore = ReturnType<typeof createEndpointStore>
