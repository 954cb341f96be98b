import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Burrow, buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { ORPHAN_AFTER_MS, ORPHANED_DETAIL } from '../../src/queries/jobs.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { hogql, postQuery } from './fixtures.js'

/** Hashes 10^11 numbers: runs for minutes on the embedded engine unless stopped. */
const SLOW = 'select count() from numbers(100000000000) where cityHash64(number) = 7'

let t: TestApp
beforeAll(async () => {
  t = await startTestApp()
}, 60_000)
afterAll(() => t.close())

const statusUrl = (id: string) => `/api/projects/${t.creds.project_id}/query/${id}/`
const statusOn = (app: Burrow['app'], id: string) => app.inject({ method: 'GET', url: statusUrl(id), headers: t.auth })

async function pollUntil(
  app: Burrow['app'],
  id: string,
  done: (status: Record<string, unknown>) => boolean,
  timeoutMs = 20_000,
) {
  const until = Date.now() + timeoutMs
  for (;;) {
    const res = await statusOn(app, id)
    const status = res.json().query_status
    if (status && done(status)) return { res, status }
    if (Date.now() > until) throw new Error(`timed out waiting for query ${id}: ${res.body}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe('asynchronous query statuses in the metadata store', () => {
  it('closes, as failed, a running query whose process stopped renewing it', async () => {
    const res = await postQuery(t, hogql(SLOW, { refresh: 'force_async', client_query_id: 'orphan-1' }))
    expect(res.statusCode).toBe(202)
    // Another process took it and died: its row is no longer renewed.
    await t.burrow.meta.db
      .updateTable('query_statuses' as never)
      .set({ owner: 'a-process-that-died', heartbeat_at: Date.now() - ORPHAN_AFTER_MS - 1_000 } as never)
      .execute()
    const answer = await statusOn(t.burrow.app, 'orphan-1')
    expect(answer.statusCode).toBe(400)
    expect(answer.json().query_status).toMatchObject({ complete: true, error: true, error_message: ORPHANED_DETAIL })
    // The same id may run again now.
    const again = await postQuery(t, hogql('select 1', { refresh: 'force_async', client_query_id: 'orphan-1' }))
    expect(again.statusCode).toBe(202)
    const { status } = await pollUntil(t.burrow.app, 'orphan-1', (s) => s.complete === true)
    expect(status).toMatchObject({ error: false })
    expect((status.results as { results: unknown }).results).toEqual([[1]])
    // Stop the first run's engine query (still running here) so the file ends quickly.
    await t.burrow.events.cancel(`t${t.creds.project_id}x${Buffer.from('orphan-1').toString('hex')}`)
  }, 30_000)

  it('does not start a query id that is still running; answers the running status instead', async () => {
    const first = await postQuery(t, hogql(SLOW, { refresh: 'force_async', client_query_id: 'twice-1' }))
    const second = await postQuery(t, hogql('select 2', { refresh: 'force_async', client_query_id: 'twice-1' }))
    expect(second.json().query_status.start_time).toBe(first.json().query_status.start_time)
    const cancel = await t.burrow.app.inject({ method: 'DELETE', url: statusUrl('twice-1'), headers: t.auth })
    expect(cancel.statusCode).toBe(200)
    expect((await statusOn(t.burrow.app, 'twice-1')).json().query_status).toMatchObject({
      complete: true,
      error_message: 'Query was cancelled.',
    })
  }, 30_000)
})

describe.skipIf(!process.env.DATABASE_URL?.startsWith('postgres'))('two processes on one PostgreSQL database', () => {
  let second: Burrow
  let secondDir: string
  beforeAll(async () => {
    secondDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-test-second-'))
    second = await buildApp(
      loadConfig({
        DATA_DIR: secondDir,
        LOG_LEVEL: 'silent',
        DATABASE_URL: t.burrow.config.databaseUrl,
        CLICKHOUSE_URL: t.burrow.config.clickhouseUrl,
      }),
      { logger: false },
    )
    await second.app.ready()
  })
  afterAll(async () => {
    await second?.close()
    fs.rmSync(secondDir, { recursive: true, force: true })
  })

  it('answers the status and result of a query another process ran', async () => {
    const res = await postQuery(t, hogql('select 40 + 2', { refresh: 'force_async', client_query_id: 'shared-1' }))
    expect(res.statusCode).toBe(202)
    const { res: done, status } = await pollUntil(second.app, 'shared-1', (s) => s.complete === true)
    expect(done.statusCode).toBe(200)
    expect((status.results as { results: unknown }).results).toEqual([[42]])
  })

  it('cancels, through one process, a query another process runs', async () => {
    const res = await postQuery(t, hogql(SLOW, { refresh: 'force_async', client_query_id: 'shared-slow' }))
    expect(res.statusCode).toBe(202)
    // The other process sees it running.
    const running = await statusOn(second.app, 'shared-slow')
    expect(running.statusCode).toBe(202)
    expect(running.json().query_status).toMatchObject({ id: 'shared-slow', complete: false })
    const started = Date.now()
    const cancel = await second.app.inject({ method: 'DELETE', url: statusUrl('shared-slow'), headers: t.auth })
    expect(cancel.statusCode).toBe(200)
    expect(Date.now() - started).toBeLessThan(10_000)
    for (const app of [t.burrow.app, second.app]) {
      const after = await pollUntil(app, 'shared-slow', (s) => s.complete === true, 10_000)
      expect(after.status).toMatchObject({ error: true, error_message: 'Query was cancelled.' })
    }
  }, 30_000)
})
