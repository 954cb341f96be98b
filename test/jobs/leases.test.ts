import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createJobLeases, runClaimed } from '../../src/jobs/leases.js'
import { type MetaDb, openMetaDb } from '../../src/storage/meta/db.js'
import { migrateMeta } from '../../src/storage/meta/migrate.js'
import { metaTargets } from '../helpers/meta.js'

const targets = metaTargets()

describe.each(targets)('job leases on $name', ({ open }) => {
  let meta: MetaDb
  let done: () => Promise<void>
  let clock = 1_000_000
  const now = () => clock

  beforeAll(async () => {
    const opened = await open()
    done = opened.done
    meta = openMetaDb(opened.url)
    await migrateMeta(meta.db, meta.dialect)
  })
  afterAll(async () => {
    await meta.close()
    await done()
  })

  it('gives a job to one claimant; the other gets null until the lease expires, then takes it over', async () => {
    // Two processes on one database.
    const a = createJobLeases(meta.db, { owner: 'a', now })
    const b = createJobLeases(meta.db, { owner: 'b', now })
    const held = await a.claim('delete:1', 30_000)
    expect(held?.owner.startsWith('a/')).toBe(true)
    expect(await b.claim('delete:1', 30_000)).toBeNull()
    expect(await a.claim('delete:1', 30_000)).toBeNull()
    expect(await b.isHeld('delete:1')).toBe(true)

    // Renewing moves the expiry: 29 s later plus a renewal, the lease still holds 29 s after that.
    clock += 29_000
    expect(await held?.renew()).toBe(true)
    clock += 29_000
    expect(await b.claim('delete:1', 30_000)).toBeNull()

    // Owner a stops renewing (it died): once the lease has run out, b takes over.
    clock += 1_001
    expect(await b.isHeld('delete:1')).toBe(false)
    const taken = await b.claim('delete:1', 30_000)
    expect(taken?.owner.startsWith('b/')).toBe(true)
    // a's renewal and release no longer touch b's lease.
    expect(await held?.renew()).toBe(false)
    await held?.release()
    expect(await a.isHeld('delete:1')).toBe(true)
    await taken?.release()
    expect(await a.isHeld('delete:1')).toBe(false)
  })

  it('lets exactly one of many concurrent claims win', async () => {
    const claimants = Array.from({ length: 8 }, (_, i) => createJobLeases(meta.db, { owner: `p${i}`, now }))
    const results = await Promise.all(claimants.map((l) => l.claim('sync:7', 10_000)))
    expect(results.filter((r) => r !== null)).toHaveLength(1)
  })

  it('runClaimed runs work once, heartbeats while it runs, and releases after it, even when it throws', async () => {
    const leases = createJobLeases(meta.db, { owner: 'runner' })
    const other = createJobLeases(meta.db, { owner: 'other' })
    let ranWhileHeld = false
    const ran = await runClaimed(leases, 'recalc:3', 150, async () => {
      // Outlive the lease length several times over: the heartbeat must keep it.
      await new Promise((r) => setTimeout(r, 500))
      ranWhileHeld = (await other.claim('recalc:3', 150)) === null
    })
    expect(ran).toBe(true)
    expect(ranWhileHeld).toBe(true)
    expect(await leases.isHeld('recalc:3')).toBe(false)

    await expect(
      runClaimed(leases, 'recalc:4', 1_000, async () => {
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
    expect(await leases.isHeld('recalc:4')).toBe(false)

    // Held elsewhere: the work does not run.
    const held = await other.claim('recalc:5', 10_000)
    let calls = 0
    expect(
      await runClaimed(leases, 'recalc:5', 1_000, async () => {
        calls++
      }),
    ).toBe(false)
    expect(calls).toBe(0)
    await held?.release()
  })

  it('aborts the work when the lease is lost to another owner', async () => {
    const leases = createJobLeases(meta.db, { owner: 'slow' })
    let aborted = false
    await runClaimed(leases, 'recalc:9', 90, async (signal) => {
      // Another process steals the row, as a takeover after an expiry would.
      await meta.db
        .updateTable('job_leases' as never)
        .set({ owner: 'thief' } as never)
        .execute()
      await new Promise((r) => setTimeout(r, 200))
      aborted = signal.aborted
    })
    expect(aborted).toBe(true)
  })
})
