/**
 * Materialized endpoints in the event store: builds a version's table (HogQL stored with `CREATE OR REPLACE TABLE
 * … AS SELECT`, an insight's result rows keyed by breakdown value), reads it back for runs, drops it on teardown,
 * and keeps every materialization fresh on its schedule. A croner tick in every process looks for due syncs; each
 * sync is claimed with a job lease, so exactly one process runs it, and its status lives in the metadata store.
 */
import { Cron } from 'croner'
import { ApiError } from '../http/errors.js'
import { type JobLeases, runClaimed } from '../jobs/leases.js'
import { toQueryError } from '../queries/errors.js'
import { formatRows } from '../queries/format.js'
import { splitSettings } from '../queries/runner.js'
import type { EventStore } from '../storage/events/types.js'
import { breakdownKeys, type MaterializationPlan, SYNC_FREQUENCIES } from './materialize.js'
import { clusterMaterialization, ITEM_COLUMNS, ROW_COLUMN, replaceFromSelect, stagingOf } from './materialized-ddl.js'
import type { EndpointStore, MaterializationRow } from './store.js'

/** How often each process looks for due syncs. */
export const SYNC_TICK_PATTERN = '*/2 * * * * *'
const SYNC_LEASE_MS = 5 * 60_000
/** A failed sync is retried after 30 s, then 1, 2, 4 … minutes, never later than its own interval. */
const RETRY_BASE_MS = 30_000
const DUE_PER_TICK = 20

export interface SyncTeam {
  id: number
  timezone: string
}

export interface EndpointSyncDeps {
  store: Pick<
    EndpointStore,
    'due' | 'materialization' | 'updateMaterialization' | 'upsertMaterialization' | 'removeMaterialization'
  >
  events: Pick<EventStore, 'exec' | 'query' | 'insertJsonEachRow' | 'cluster'>
  leases: JobLeases
  /** HogQL → ClickHouse SQL for the project, with no default LIMIT below the engine's maximum. */
  compile: (team: SyncTeam, hogql: string) => Promise<{ sql: string; params: Record<string, unknown> }>
  /** Runs an insight node afresh through the query service. */
  runInsight: (team: SyncTeam, node: Record<string, unknown>, name: string) => Promise<Record<string, unknown>>
  teamOf: (teamId: number) => Promise<SyncTeam | undefined>
  /** A version's stored query, with its endpoint's name (for the query log). */
  versionOf: (versionId: string) => Promise<{ query: string; name: string } | undefined>
  /** The plan of a version's stored query, or why it cannot be materialized any more. */
  planOf: (query: Record<string, unknown>) => { ok: true; plan: MaterializationPlan } | { ok: false; reason: string }
  clock: () => Date
  onError?: (err: unknown, what: string) => void
}

export interface InsightShape {
  kind: 'insight'
  breakdown: string | null
  envelope: Record<string, unknown>
}
export interface HogQLShape {
  kind: 'hogql'
  variable: string | null
}
export type MaterializedShape = InsightShape | HogQLShape

export const tableNameOf = (teamId: number, versionId: string) =>
  `endpoint_mat_${teamId}_${versionId.replace(/[^A-Za-z0-9]/g, '')}`

const intervalMs = (frequency: string) => (SYNC_FREQUENCIES[frequency] ?? SYNC_FREQUENCIES['24hour']) * 1000

/** Whether runs may read the table: the last sync succeeded within its interval (a failed one never serves). */
export function isFresh(row: MaterializationRow, now: Date): boolean {
  if (row.status === 'Failed' || !row.last_materialized_at) return false
  return now.getTime() < new Date(row.last_materialized_at).getTime() + intervalMs(row.sync_frequency)
}

function errorText(error: unknown): string {
  const mapped = toQueryError(error)
  if (mapped instanceof ApiError) return mapped.detail
  return error instanceof Error ? error.message : String(error)
}

export function createEndpointSync(deps: EndpointSyncDeps) {
  const { store, events, clock } = deps
  let cron: Cron | undefined
  let ticking: Promise<void> = Promise.resolve()
  let closed = false

  async function build(row: MaterializationRow, team: SyncTeam, query: Record<string, unknown>, name: string) {
    const planned = deps.planOf(query)
    if (!planned.ok) throw new Error(planned.reason)
    const plan = planned.plan
    const table = row.table_name
    const cluster = events.cluster && clusterMaterialization(table, events.cluster)
    if (plan.kind === 'hogql') {
      const compiled = await deps.compile(team, plan.hogql)
      const { sql, settings } = splitSettings(compiled.sql)
      // The compiler's SELECT runs read-only everywhere else; here it fills a table of ours, which is a write.
      delete settings.readonly
      const options = { params: compiled.params, settings }
      if (cluster) {
        await events.exec(cluster.dropStaging)
        await events.exec(cluster.createStagingFromSelect(sql), options)
        await events.exec(cluster.fillStaging(sql), options)
        await swapIn(table)
      } else {
        await events.exec(replaceFromSelect(table, sql), options)
      }
      return { kind: 'hogql', variable: plan.variable } satisfies HogQLShape
    }
    const response = await deps.runInsight(team, query, `${name}_materialization`)
    const items = Array.isArray(response.results) ? response.results : []
    const staging = stagingOf(table)
    if (cluster) {
      await events.exec(cluster.dropStaging)
      await events.exec(cluster.createStagingForItems)
    } else {
      await events.exec(
        `CREATE OR REPLACE TABLE ${staging} (${ITEM_COLUMNS}) ENGINE = MergeTree ORDER BY ${ROW_COLUMN}`,
      )
    }
    if (items.length > 0) {
      const ndjson = items
        .map((item, i) => JSON.stringify({ [ROW_COLUMN]: i, keys: breakdownKeys(item), item: JSON.stringify(item) }))
        .join('\n')
      await events.insertJsonEachRow(staging, ndjson)
    }
    if (cluster) {
      await swapIn(table)
    } else {
      await events.exec(
        `CREATE OR REPLACE TABLE ${table} ENGINE = MergeTree ORDER BY ${ROW_COLUMN} AS SELECT * FROM ${staging}`,
      )
      await events.exec(`DROP TABLE IF EXISTS ${staging}`)
    }
    const envelope: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(response)) {
      if (k !== 'results' && k !== 'query_status') envelope[k] = v
    }
    return { kind: 'insight', breakdown: plan.breakdown, envelope } satisfies InsightShape
  }

  /** On a cluster: the filled staging table, once every replica has it, becomes the table on every node. */
  async function swapIn(table: string) {
    if (!events.cluster) return
    const cluster = clusterMaterialization(table, events.cluster)
    await events.exec(cluster.syncStaging)
    const { rows } = await events.query<[number]>(`EXISTS TABLE ${table}`)
    await events.exec(cluster.swapIn(Number(rows[0]?.[0]) === 1))
    await events.exec(cluster.dropStaging)
  }

  /** One sync of one materialization, by the process holding its lease. */
  async function syncOne(versionId: string, signal: AbortSignal) {
    const row = await store.materialization(versionId)
    if (!row || new Date(row.next_run_at) > clock()) return
    const started = clock()
    await store.updateMaterialization(versionId, { status: 'Running', last_run_at: started.toISOString() })
    try {
      const version = await deps.versionOf(row.version_id)
      const team = await deps.teamOf(row.team_id)
      if (!version || !team) throw new Error('The endpoint no longer exists.')
      const shape = await build(row, team, JSON.parse(version.query) as Record<string, unknown>, version.name)
      if (signal.aborted) return
      const done = clock()
      await store.updateMaterialization(versionId, {
        status: 'Completed',
        last_materialized_at: done.toISOString(),
        next_run_at: new Date(done.getTime() + intervalMs(row.sync_frequency)).toISOString(),
        last_error: '',
        failures: 0,
        shape: JSON.stringify(shape),
      })
    } catch (error) {
      if (signal.aborted) return
      const failures = row.failures + 1
      const delay = Math.min(intervalMs(row.sync_frequency), RETRY_BASE_MS * 2 ** Math.min(failures - 1, 16))
      await store.updateMaterialization(versionId, {
        status: 'Failed',
        last_error: errorText(error),
        failures,
        next_run_at: new Date(clock().getTime() + delay).toISOString(),
      })
      deps.onError?.(error, `endpoint materialization ${row.endpoint_id}`)
    }
    // Torn down while it ran (the endpoint deleted, materialization disabled): the table must not outlive it.
    if (!(await store.materialization(versionId))) await dropTable(row.table_name)
  }

  async function dropTable(table: string) {
    if (events.cluster) {
      for (const statement of clusterMaterialization(table, events.cluster).drop) await events.exec(statement)
      return
    }
    await events.exec(`DROP TABLE IF EXISTS ${table}`)
    await events.exec(`DROP TABLE IF EXISTS ${stagingOf(table)}`)
  }

  async function tick() {
    if (closed) return
    const due = await store.due(clock().toISOString(), DUE_PER_TICK)
    for (const row of due) {
      if (closed) return
      await runClaimed(deps.leases, `endpoint-sync:${row.version_id}`, SYNC_LEASE_MS, (signal) =>
        syncOne(row.version_id, signal),
      ).catch((err) => deps.onError?.(err, 'endpoint materialization'))
    }
  }

  function runTick(): Promise<void> {
    ticking = ticking.then(tick).catch((err) => deps.onError?.(err, 'endpoint materialization tick'))
    return ticking
  }

  return {
    /** Schedules a version's materialization (due at once). */
    async enable(endpointId: string, teamId: number, versionId: string, syncFrequency: string) {
      await store.upsertMaterialization({
        version_id: versionId,
        endpoint_id: endpointId,
        team_id: teamId,
        table_name: tableNameOf(teamId, versionId),
        sync_frequency: syncFrequency,
        status: 'Running',
        next_run_at: clock().toISOString(),
        last_error: '',
        failures: 0,
      })
      void runTick()
    },
    /** Stops a version's schedule and drops its table. */
    async disable(versionId: string) {
      const row = await store.materialization(versionId)
      await store.removeMaterialization(versionId)
      if (row) await dropTable(row.table_name)
    },
    dropTable,
    /** Rows of a materialized HogQL version, filtered by its variable column. */
    async readHogQL(row: MaterializationRow, variable: { name: string; value: unknown } | null, page: Page) {
      const params: Record<string, unknown> = { limit: page.limit + 1, offset: page.offset }
      let where = ''
      if (variable) {
        const value = variable.value
        if (typeof value === 'number') where = `WHERE ${variable.name} = {value:Float64}`
        else if (typeof value === 'boolean') where = `WHERE ${variable.name} = {value:Bool}`
        else if (value === null) where = `WHERE isNull(${variable.name})`
        else where = `WHERE toString(${variable.name}) = {value:String}`
        params.value = value
      }
      const result = await events.query(
        `SELECT * EXCEPT (${ROW_COLUMN}) FROM ${row.table_name} ${where} ORDER BY ${ROW_COLUMN} ` +
          'LIMIT {limit:UInt64} OFFSET {offset:UInt64}',
        { params, settings: { readonly: 2 } },
      )
      return { columns: result.columns, types: result.types, rows: formatRows(result.rows, result.types) }
    },
    /** Result items of a materialized insight version, those of one breakdown value when given. */
    async readInsight(row: MaterializationRow, breakdownValue: string | null) {
      const result = await events.query<[string]>(
        `SELECT item FROM ${row.table_name} ${breakdownValue === null ? '' : 'WHERE has(keys, {value:String})'} ` +
          `ORDER BY ${ROW_COLUMN}`,
        { params: breakdownValue === null ? {} : { value: breakdownValue }, settings: { readonly: 2 } },
      )
      return result.rows.map((r) => JSON.parse(r[0]) as unknown)
    },
    /** Runs the syncs that are due now (the schedule's tick; also right after a materialization is enabled). */
    runDue: runTick,
    start() {
      cron ??= new Cron(SYNC_TICK_PATTERN, { protect: true, unref: true }, () => runTick())
    },
    async close() {
      closed = true
      cron?.stop()
      await ticking
    },
  }
}

export interface Page {
  limit: number
  offset: number
}

export type EndpointSync = ReturnType<typeof createEndpointSync>
