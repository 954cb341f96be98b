import { type ChildProcess, spawn } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { migrateEventStore, openEventStore } from '../../src/storage/events/index.js'

const root = path.resolve(import.meta.dirname, '../..')

function start(dataDir: string, port: number): { child: ChildProcess; ready: Promise<void>; exited: Promise<unknown> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'start'], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'error', DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const ready = new Promise<void>((resolve, reject) => {
    let out = ''
    child.stdout?.on('data', (d) => {
      out += d
      if (out.includes('try: curl')) resolve()
    })
    child.on('exit', (code) => reject(new Error(`server exited early (${code})`)))
  })
  // Listen for the exit now: it may happen before anyone waits for it.
  const exited = new Promise((resolve) => child.once('exit', resolve))
  return { child, ready, exited }
}

describe('durability', () => {
  it('keeps every acknowledged event when the server is killed with SIGKILL under load', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-kill-'))
    const port = 19_000 + Math.floor(Math.random() * 1000)
    try {
      const first = start(dataDir, port)
      await first.ready
      const { project_api_key: token } = JSON.parse(fs.readFileSync(path.join(dataDir, 'credentials.json'), 'utf8'))
      const acknowledged: string[] = []
      let stop = false

      const worker = async (w: number) => {
        for (let n = 0; !stop && n < 10_000; n++) {
          const batch = Array.from({ length: 20 }, (_, i) => ({
            event: 'load',
            distinct_id: `w${w}-${i % 5}`,
            uuid: crypto.randomUUID(),
            properties: { n, i },
          }))
          try {
            const res = await fetch(`http://127.0.0.1:${port}/batch/`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ api_key: token, batch }),
            })
            if (res.status === 200) acknowledged.push(...batch.map((e) => e.uuid))
          } catch {
            return // the server is gone
          }
        }
      }
      const workers = Array.from({ length: 8 }, (_, w) => worker(w))
      await new Promise((r) => setTimeout(r, 2_500))
      first.child.kill('SIGKILL')
      stop = true
      await Promise.all(workers)
      await first.exited
      expect(acknowledged.length).toBeGreaterThan(100)

      // Restart on the same data directory: the service comes back and answers.
      const second = start(dataDir, port)
      await second.ready
      const health = await fetch(`http://127.0.0.1:${port}/_health`)
      expect(health.status).toBe(200)
      second.child.kill('SIGTERM')
      await second.exited

      const store = openEventStore(`chdb:${path.join(dataDir, 'chdb')}`)
      await migrateEventStore(store)
      const found = await store.query<[number]>('SELECT count() FROM events WHERE uuid IN {ids:Array(UUID)}', {
        params: { ids: acknowledged },
      })
      await store.close()
      expect(found.rows[0][0]).toBe(acknowledged.length)
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 120_000)
})
