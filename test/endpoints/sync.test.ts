/**
 * The materialization schedule across processes: a sync is claimed with a job lease, so while one owner holds it
 * no other runs it, and of two schedulers ticking at once only one syncs; the schedule lives in the metadata store,
 * so a scheduler started later (another process, or this one after a restart) picks up what is due.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createEndpointModule } from '../../src/endpoints/index.js'
import { createJobLeases } from '../../src/jobs/leases.js'
import { createCohortLoader } from '../../src/queries/cohorts.js'
import type { QueryService } from '../../src/queries/service.js'
import type { EventStore } from '../../src/storage/events/types.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { captureBatch, ev } from '../queries/insights/capture.js'

let t: TestApp
let now = new Date('2024-01-10T12:00:00Z')

/** Another scheduler over the same stores, as a second process would run; counts the tables it builds. */
function scheduler() {
  const built: string[] = []
  const store = t.burrow.eventStore
  const events: Pick<EventStore, 'exec' | 'query' | 'insertJsonEachRow'> = {
    exec: async (sql, options) => {
      if (sql.startsWith('CREATE OR REPLACE TABLE')) built.push(sql)
      return store.exec(sql, options)
    },
    query: (sql, options) => store.query(sql, options),
    insertJsonEachRow: (table, rows) => store.insertJsonEachRow(table, rows),
  }
  const module = createEndpointModule({
    db: t.burrow.meta.db,
    events,
    flushPending: () => t.burrow.committer.flushPending(),
    // HogQL syncs compile and run in the event store; the query service is not reached
    queries: { upgrade: <T>(q: T) => q } as unknown as QueryService,
    projects: t.burrow.stores.projects,
    users: t.burrow.stores.users,
    activity: t.burrow.stores.activity,
    propertyTypes: (teamId) => t.burrow.services.definitions.getPropertyTypes(teamId),
    cohorts: createCohortLoader(t.burrow.stores.cohorts),
    actions: (teamId) => t.burrow.services.actions.hogql(teamId),
    siteUrl: 'http://localhost',
    clock: () => now,
  })
  return { module, built }
}

const api = (method: 'GET' | 'POST', path: string, payload?: unknown) =>
  t.burrow.app.inject({
    method,
    url: `/api/projects/${t.creds.project_id}/endpoints/${path}`,
    headers: t.auth,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  })

async function status() {
  return (await api('GET', 'counts/materialization_status/')).json()
}

beforeAll(async () => {
  t = await startTestApp({ clock: () => now })
  await captureBatch(t, [ev('$pageview', 'anna', '2024-01-09T15:00:00Z'), ev('signup', 'bob', '2024-01-09T16:00:00Z')])
  const res = await api('POST', '', {
    name: 'counts',
    query: {
      kind: 'HogQLQuery',
      query: 'SELECT count() AS n FROM events WHERE event = {variables.e}',
      variables: { v: { variableId: 'v', code_name: 'e', value: '$pageview' } },
    },
    is_materialized: true,
    sync_frequency: '5min',
  })
  expect(res.statusCode, res.body).toBe(201)
  await vi.waitFor(async () => expect((await status()).status).toBe('Completed'), { timeout: 20_000, interval: 200 })
}, 60_000)

afterAll(async () => {
  await t?.close()
})

describe('materialization schedule', () => {
  it('skips a sync whose lease another owner holds, and runs it once the lease is free', async () => {
    const versionRow = await t.burrow.meta.db
      .withTables<{ endpoint_materializations: { version_id: string } }>()
      .selectFrom('endpoint_materializations')
      .select('version_id')
      .executeTakeFirstOrThrow()
    const key = `endpoint-sync:${versionRow.version_id}`
    const lease = await createJobLeases(t.burrow.meta.db).claim(key, 60_000)
    expect(lease).not.toBeNull()

    now = new Date('2024-01-10T12:05:01Z')
    const other = scheduler()
    await other.module.sync.runDue()
    expect(other.built).toHaveLength(0)
    expect((await status()).last_materialized_at).toBe('2024-01-10T12:00:00.000Z')

    await lease?.release()
    await other.module.sync.runDue()
    await vi.waitFor(async () => expect((await status()).last_materialized_at).toBe(now.toISOString()), {
      timeout: 20_000,
      interval: 200,
    })
  })

  it('lets only one of two schedulers ticking at once run a due sync', async () => {
    now = new Date('2024-01-10T12:10:02Z')
    const a = scheduler()
    const b = scheduler()
    await Promise.all([a.module.sync.runDue(), b.module.sync.runDue()])
    // the app's own scheduler ticks too: at most one of the three builds the table
    expect(a.built.length + b.built.length).toBeLessThanOrEqual(1)
    await vi.waitFor(async () => expect((await status()).last_materialized_at).toBe(now.toISOString()), {
      timeout: 20_000,
      interval: 200,
    })
    const run = (await api('POST', 'counts/run/', { variables: { e: 'signup' } })).json()
    expect(run).toMatchObject({ endpoint_materialized: true, results: [[1, 'signup']] })
  })
})
