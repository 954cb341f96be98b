import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Kysely } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { type Credentials, ensureDemoAccount } from '../../src/bootstrap.js'
import { loadConfig } from '../../src/config.js'
import { freshPostgresUrl, type TestApp } from '../helpers/app.js'
import { eventCounts, fixtureCounts, inject, waitForDeletion } from './deletion-helpers.js'
import { captureFixture } from './fixtures.js'

// One file of its own: chDB opens one data directory per process, and this test opens its own twice.
const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
})

describe('a deletion interrupted by a stop', () => {
  it('completes when the next process starts on the same data', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-test-'))
    const env: Record<string, string> = { DATA_DIR: dataDir, LOG_LEVEL: 'silent' }
    if (process.env.DATABASE_URL?.startsWith('postgres')) {
      const db = await freshPostgresUrl(process.env.DATABASE_URL)
      env.DATABASE_URL = db.url
      cleanups.push(db.drop)
    }
    cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }))
    const open = async () => {
      const burrow = await buildApp(loadConfig(env), { logger: false })
      const { credentials } = await ensureDemoAccount(burrow)
      await burrow.app.ready()
      return {
        burrow,
        creds: credentials as Credentials,
        auth: { authorization: `Bearer ${credentials.personal_api_key}` },
      }
    }

    const first = await open()
    await captureFixture({ ...first, dataDir, close: async () => {} } as TestApp)
    const projectId = first.creds.project_id
    const carol = (
      await inject(first.burrow, 'GET', `/api/projects/${projectId}/persons/?distinct_id=carol`, first.auth)
    ).json().results[0]
    // What a process leaves when it stops right after the request's transaction, before the event-store work: the
    // person gone, the deletion recorded and claimed by an owner that no longer runs (its lease ran out).
    const db = first.burrow.meta.db as unknown as Kysely<any>
    const deletionId = crypto.randomUUID()
    await db.transaction().execute(async (tx) => {
      await tx.deleteFrom('person_distinct_ids').where('person_id', '=', carol.id).execute()
      await tx.deleteFrom('persons').where('id', '=', carol.id).execute()
      await tx
        .insertInto('person_deletions')
        .values({
          id: deletionId,
          team_id: projectId,
          person_id: carol.id,
          distinct_ids: JSON.stringify(['carol']),
          delete_events: 1,
          requested_at: new Date().toISOString(),
          requested_by: null,
          status: 'pending',
          attempts: 1,
          last_error: null,
          finished_at: null,
        })
        .execute()
      await tx
        .insertInto('job_leases')
        .values({ key: `person-deletion:${deletionId}`, owner: 'a-process-that-died', expires_at: Date.now() - 1 })
        .execute()
    })
    await first.burrow.close()

    const second = await open()
    cleanups.push(() => second.burrow.close())
    const deletion = await waitForDeletion(second.burrow, projectId, second.auth, deletionId)
    expect(deletion.status).toBe('done')
    const counts = await eventCounts(second.burrow, projectId, second.auth)
    const expected = fixtureCounts()
    delete expected.carol
    expect(counts).toEqual(expected)
    const row = await (second.burrow.meta.db as unknown as Kysely<any>)
      .selectFrom('person_deletions')
      .selectAll()
      .where('id', '=', deletionId)
      .executeTakeFirstOrThrow()
    // claimed once by the process that stopped, once by the one that finished it
    expect(Number(row.attempts)).toBe(2)
    expect(
      await (second.burrow.meta.db as unknown as Kysely<any>)
        .selectFrom('job_leases')
        .selectAll()
        .where('key', '=', `person-deletion:${deletionId}`)
        .execute(),
    ).toEqual([])
  }, 180_000)
})
