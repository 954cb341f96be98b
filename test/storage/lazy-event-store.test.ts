import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { engineHolder } from '../../src/cli/stores.js'
import { loadConfig } from '../../src/config.js'
import { createChdbEventStore } from '../../src/storage/events/chdb.js'
import { lazyEventStore } from '../../src/storage/events/lazy.js'
import type { EventStore } from '../../src/storage/events/types.js'

const root = path.resolve(import.meta.dirname, '../..')
const dirs: string[] = []
const tempDir = (prefix: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})

/** Whether the embedded engine's native library is mapped into the process. */
const engineLoaded = (pid: number) => /chdb/i.test(fs.readFileSync(`/proc/${pid}/maps`, 'utf8'))

function startServer(
  dataDir: string,
  port: number,
): { child: ChildProcess; ready: Promise<void>; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'start'], {
    cwd: root,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: 'error',
      DATABASE_URL: '',
      CLICKHOUSE_URL: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stderr?.pipe(process.stderr)
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  const ready = new Promise<void>((resolve, reject) => {
    let out = ''
    child.stdout?.on('data', (d) => {
      out += d
      if (out.includes('try: curl')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`server exited early (${code})`)))
  })
  return { child, ready, exited }
}

async function health(port: number) {
  const res = await fetch(`http://127.0.0.1:${port}/_health`)
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

describe('the embedded event store opens on first need', () => {
  it('answers /_health before the engine is loaded, opens it for the first capture, and stops either way', async () => {
    const dataDir = tempDir('burrow-lazy-')
    const port = 23_000 + Math.floor(Math.random() * 1000)

    // A first start, stopped before anything needed the engine: it never loads it and still stops cleanly.
    const first = startServer(dataDir, port)
    await first.ready
    expect(await health(port)).toEqual({
      status: 200,
      body: { status: 'ok', meta: true, events: true, event_store: 'closed' },
    })
    expect(engineLoaded(first.child.pid as number)).toBe(false)
    // Commands that must not open a directory a running Burrow serves see it before its engine is open.
    expect(engineHolder({ clickhouseUrl: `chdb:${path.join(dataDir, 'chdb')}` })).toBe(first.child.pid)
    first.child.kill('SIGTERM')
    expect(await first.exited).toBe(0)

    const second = startServer(dataDir, port)
    try {
      await second.ready
      const pid = second.child.pid as number
      expect((await health(port)).body.event_store).toBe('closed')
      expect(engineLoaded(pid)).toBe(false)
      const {
        project_api_key: token,
        personal_api_key: key,
        project_id: projectId,
      } = JSON.parse(fs.readFileSync(path.join(dataDir, 'credentials.json'), 'utf8'))
      const captured = await fetch(`http://127.0.0.1:${port}/i/v0/e/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_key: token, event: 'opened lazily', distinct_id: 'lazy-1', properties: {} }),
      })
      expect(captured.status).toBe(200)
      // The capture log's mover needs the engine for that event: it opens within its drain delay (200 ms).
      let state = ''
      for (let i = 0; i < 100 && state !== 'open'; i++) {
        state = String((await health(port)).body.event_store)
        if (state !== 'open') await new Promise((r) => setTimeout(r, 100))
      }
      expect(state).toBe('open')
      expect(engineLoaded(pid)).toBe(true)
      const query = await fetch(`http://127.0.0.1:${port}/api/projects/${projectId}/query/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({
          query: { kind: 'HogQLQuery', query: "SELECT count() FROM events WHERE event = 'opened lazily'" },
        }),
      })
      expect(query.status).toBe(200)
      expect(((await query.json()) as { results: unknown[][] }).results).toEqual([[1]])
      expect(await health(port)).toEqual({
        status: 200,
        body: { status: 'ok', meta: true, events: true, event_store: 'open' },
      })
      // A second Burrow on the same directory is refused at start, as opening the engine there would be.
      const another = startServer(dataDir, port + 1)
      let stderr = ''
      another.child.stderr?.on('data', (d) => {
        stderr += d
      })
      another.ready.catch(() => undefined)
      expect(await another.exited).not.toBe(0)
      expect(stderr).toContain(`is in use by process ${pid}`)
    } finally {
      second.child.kill('SIGTERM')
    }
    expect(await second.exited).toBe(0)
  }, 90_000)

  it('opens the store once for concurrent first uses, queries and inserts alike', async () => {
    const dir = tempDir('burrow-lazy-once-')
    let opens = 0
    const store = lazyEventStore('chdb', async () => {
      opens++
      const opened = createChdbEventStore(dir, 2)
      await opened.exec('CREATE TABLE IF NOT EXISTS t (n UInt32) ENGINE = MergeTree ORDER BY n')
      return opened
    })
    try {
      expect(store.state()).toEqual({ state: 'closed' })
      // Nothing is opened to cancel or follow a query that cannot be running.
      expect(await store.cancel('nothing')).toBe(false)
      expect(await store.progress('nothing')).toBeUndefined()
      expect(await store.ping()).toBe(true)
      expect(opens).toBe(0)
      const [a, b] = await Promise.all([
        store.query<[number]>('SELECT 1 + 1'),
        store.query<[number]>('SELECT 40 + 2'),
        store.insertJsonEachRow('t', '{"n":7}\n{"n":8}\n'),
        store.open(),
      ])
      expect(a.rows).toEqual([[2]])
      expect(b.rows).toEqual([[42]])
      expect(opens).toBe(1)
      expect(store.state()).toEqual({ state: 'open' })
      expect((await store.query<[number]>('SELECT sum(n) FROM t')).rows).toEqual([[15]])
      expect(opens).toBe(1)
    } finally {
      await store.close()
    }
    expect(store.state()).toEqual({ state: 'closed' })
    await expect(store.query('SELECT 1')).rejects.toThrow(/closed/)
  })

  it('reports a failed opening on /_health and opens once the cause is gone', async () => {
    const dataDir = tempDir('burrow-lazy-fail-')
    const engineDir = path.join(dataDir, 'engine')
    const burrow = await buildApp(
      loadConfig({ DATA_DIR: dataDir, CLICKHOUSE_URL: `chdb:${engineDir}`, LOG_LEVEL: 'silent' }),
      { logger: false },
    )
    // The engine's directory cannot be made while a file holds its name.
    fs.rmSync(engineDir, { recursive: true, force: true })
    fs.writeFileSync(engineDir, 'not a directory')
    try {
      expect((await burrow.app.inject('/_health')).json()).toMatchObject({ status: 'ok', event_store: 'closed' })
      await expect(burrow.events.query('SELECT 1')).rejects.toThrow()
      const failed = await burrow.app.inject('/_health')
      expect(failed.statusCode).toBe(503)
      expect(failed.json()).toEqual({ status: 'unavailable', meta: true, events: false, event_store: 'failed' })
      expect(burrow.eventStore.state().error).toMatch(/EEXIST|ENOTDIR|exists|not a directory/i)

      fs.rmSync(engineDir)
      // Tried again in the background (after a second), with no caller asking.
      let state = ''
      for (let i = 0; i < 100 && state !== 'open'; i++) {
        await new Promise((r) => setTimeout(r, 100))
        state = burrow.eventStore.state().state
      }
      expect(state).toBe('open')
      expect((await burrow.events.query<[number]>('SELECT 6 * 7')).rows).toEqual([[42]])
      const healthy = await burrow.app.inject('/_health')
      expect(healthy.statusCode).toBe(200)
      expect(healthy.json()).toEqual({ status: 'ok', meta: true, events: true, event_store: 'open' })
      // Opened with the event-store migrations.
      const tables = await burrow.events.query<[string]>(
        "SELECT name FROM system.tables WHERE database = currentDatabase() AND name = 'events'",
      )
      expect(tables.rows).toEqual([['events']])
    } finally {
      await burrow.close()
    }
  })

  it('closes a store that is still opening without leaving its engine behind', async () => {
    const dir = tempDir('burrow-lazy-closing-')
    let opened: EventStore | undefined
    let release!: () => void
    const gate = new Promise<void>((r) => {
      release = r
    })
    const store = lazyEventStore('chdb', async () => {
      await gate
      opened = createChdbEventStore(dir, 1)
      return opened
    })
    const query = store.query('SELECT 1')
    expect(store.state().state).toBe('opening')
    const closing = store.close()
    release()
    await closing
    await expect(query).rejects.toThrow(/closed/)
    // The engine that finished opening after close was closed at once.
    await expect(opened?.query('SELECT 1')).rejects.toThrow(/closed/)
  })
})

describe('burrow migrate', () => {
  it('opens the embedded event store for its migrations', async () => {
    const dataDir = tempDir('burrow-lazy-migrate-')
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'migrate'], {
      cwd: root,
      env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'error', DATABASE_URL: '', CLICKHOUSE_URL: '' },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout?.on('data', (d) => {
      out += d
    })
    expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(0)
    expect(out).toContain('migrations applied')
    const store = createChdbEventStore(path.join(dataDir, 'chdb'), 1)
    try {
      const tables = await store.query<[string]>(
        'SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name',
      )
      expect(tables.rows.flat()).toEqual(['events', 'groups', 'person_distinct_ids', 'persons'])
    } finally {
      await store.close()
    }
  }, 60_000)
})

describe('the embedded engine memory settings', () => {
  it('reads the cache sizes from the environment and refuses bad ones', () => {
    const engine = loadConfig({
      ENGINE_MEMORY_LIMIT_MB: '600',
      ENGINE_MARK_CACHE_MB: '48',
      ENGINE_UNCOMPRESSED_CACHE_MB: '0',
      ENGINE_OTHER_CACHES_MB: '24',
    }).engine
    expect(engine).toEqual({
      memoryBytes: 600 * 1024 * 1024,
      markCacheBytes: 48 * 1024 * 1024,
      uncompressedCacheBytes: 0,
      otherCachesBytes: 24 * 1024 * 1024,
    })
    expect(loadConfig({}).engine).toMatchObject({ markCacheBytes: 64 << 20, uncompressedCacheBytes: 32 << 20 })
    expect(() => loadConfig({ ENGINE_MARK_CACHE_MB: '-1' })).toThrow(/ENGINE_MARK_CACHE_MB/)
    expect(() => loadConfig({ ENGINE_OTHER_CACHES_MB: 'lots' })).toThrow(/ENGINE_OTHER_CACHES_MB/)
  })

  it('gives the engine its caches and memory limit (in a process of its own: the first session sets them)', async () => {
    const dir = tempDir('burrow-lazy-caches-')
    const script = `
      import { openEventStore } from './src/storage/events/index.ts'
      const store = openEventStore(${JSON.stringify(`chdb:${dir}`)}, {
        engine: { memoryBytes: 600 * 2 ** 20, markCacheBytes: 48 * 2 ** 20, uncompressedCacheBytes: 16 * 2 ** 20, otherCachesBytes: 24 * 2 ** 20 },
      })
      const { rows } = await store.query("SELECT name, value FROM system.server_settings WHERE name IN ('max_server_memory_usage', 'mark_cache_size', 'uncompressed_cache_size', 'primary_index_cache_size', 'query_condition_cache_size') ORDER BY name")
      process.stdout.write(JSON.stringify(rows))
      await store.close()
    `
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout?.on('data', (d) => {
      out += d
    })
    expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(0)
    expect(JSON.parse(out)).toEqual([
      ['mark_cache_size', String(48 * 2 ** 20)],
      ['max_server_memory_usage', String(600 * 2 ** 20)],
      ['primary_index_cache_size', String(24 * 2 ** 20)],
      ['query_condition_cache_size', String(24 * 2 ** 20)],
      ['uncompressed_cache_size', String(16 * 2 ** 20)],
    ])
  }, 60_000)
})
