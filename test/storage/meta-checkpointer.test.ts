import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'
import { openMetaDb } from '../../src/storage/meta/db.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

function tempFile() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-checkpointer-'))
  dirs.push(dir)
  return path.join(dir, 'meta.db')
}

const size = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0)

describe('SQLite checkpoints off the writing connection', () => {
  it('the writing connection never checkpoints inside a commit', async () => {
    const meta = openMetaDb(`sqlite:${tempFile()}`)
    try {
      const rows = await sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`.execute(meta.db)
      expect(rows.rows).toEqual([{ wal_autocheckpoint: 0 }])
    } finally {
      await meta.close()
    }
  })

  it('the checkpointer copies the log into the database while writes go on, and keeps the log bounded', async () => {
    const file = tempFile()
    const limit = 1 << 20
    const meta = openMetaDb(`sqlite:${file}`, { walLimitBytes: limit, checkpointEveryMs: 10 })
    const payload = 'x'.repeat(2000)
    // 2,000 transactions of 4 rows of ~2 KB: ~16 MB of rows, ~20 MB of log written in all.
    const transactions = 2000
    let largestWal = 0
    try {
      await sql`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)`.execute(meta.db)
      for (let i = 0; i < transactions; i++) {
        await meta.db.transaction().execute(async (tx) => {
          for (let k = 0; k < 4; k++) await sql`INSERT INTO t (v) VALUES (${payload})`.execute(tx)
        })
        largestWal = Math.max(largestWal, size(`${file}-wal`))
        // Pauses, as requests leave between batches: the checkpointer's thread gets to run on a busy machine too.
        if (i % 20 === 19) await new Promise((r) => setTimeout(r, 5))
      }
      // Only a checkpoint moves pages from the log into the database file, and the writer never runs one: the
      // file holds most of the 16 MB of rows before anything is closed.
      expect(size(file)).toBeGreaterThan(8 << 20)
      // Without checkpoints the log would hold every page written (over 16 MB); it stays within a few times the
      // limit (what is written between two of the checkpointer's turns).
      expect(largestWal).toBeLessThan(12 * limit)
    } finally {
      await meta.close()
    }
    // Closing copies the rest and removes the log; every row is there.
    expect(fs.existsSync(`${file}-wal`)).toBe(false)
    const again = openMetaDb(`sqlite:${file}`)
    try {
      const count = await sql<{ n: number }>`SELECT count(*) AS n FROM t`.execute(again.db)
      expect(count.rows[0].n).toBe(transactions * 4)
    } finally {
      await again.close()
    }
  })
})
