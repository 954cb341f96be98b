import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Burrow, buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { hashPassword } from '../../src/http/keys.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { burrowProcess, cli, tempDir } from './helpers.js'

// `burrow backup` of a running embedded Burrow while capture runs (the server takes it through its control
// socket), an incremental backup on it, then the data directory wiped and restored: every event acknowledged
// before a backup began is there, flags and users are the same, by queries on a Burrow started on the restore.
// Also: the refusals (non-empty target, corrupt file, no manifest, running target) and a backup of stopped stores.

const embedded = !process.env.DATABASE_URL?.startsWith('postgres') && !process.env.CLICKHOUSE_URL

let t: TestApp
let env: Record<string, string>
let work: string
let projectId: number

interface Acked {
  uuid: string
  at: number
}
const acked: Acked[] = []

/** Captures `n` live events through /batch/; records each once acknowledged. */
async function capture(app: Burrow, n: number, tag: string) {
  const batch = Array.from({ length: n }, (_, i) => ({
    uuid: crypto.randomUUID(),
    event: 'load',
    distinct_id: `user-${i % 7}`,
    properties: { tag, i, $set: { last_tag: tag } },
    timestamp: new Date().toISOString(),
  }))
  const res = await app.app.inject({
    method: 'POST',
    url: '/batch/',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ api_key: t.creds.project_api_key, batch }),
  })
  if (res.statusCode !== 200) throw new Error(`capture: ${res.statusCode} ${res.body}`)
  const at = Date.now()
  for (const e of batch) acked.push({ uuid: e.uuid, at })
}

async function query(app: Burrow, hogqlText: string): Promise<unknown[][]> {
  const res = await app.app.inject({
    method: 'POST',
    url: `/api/projects/${projectId}/query/`,
    headers: { authorization: `Bearer ${t.creds.personal_api_key}` },
    payload: { query: { kind: 'HogQLQuery', query: hogqlText } },
  })
  if (res.statusCode !== 200) throw new Error(`query: ${res.body}`)
  return res.json().results
}

/** What must survive, read through the API: flags, organization members, persons. */
async function snapshot(app: Burrow) {
  const auth = { authorization: `Bearer ${t.creds.personal_api_key}` }
  const flags = await app.app.inject({ method: 'GET', url: `/api/projects/${projectId}/feature_flags/`, headers: auth })
  const members = await app.app.inject({ method: 'GET', url: '/api/organizations/@current/members/', headers: auth })
  return {
    flags: (flags.json().results as { key: string; filters: unknown; active: boolean }[])
      .map((f) => ({ key: f.key, filters: f.filters, active: f.active }))
      .sort((a, b) => a.key.localeCompare(b.key)),
    members: (members.json().results as { user: { email: string; uuid: string }; level: number }[])
      .map((m) => ({ email: m.user.email, uuid: m.user.uuid, level: m.level }))
      .sort((a, b) => a.email.localeCompare(b.email)),
    persons: await query(app, 'SELECT count() FROM persons'),
    lastTags: await query(
      app,
      'SELECT distinct_id, person.properties.last_tag FROM events GROUP BY distinct_id, person.properties.last_tag ORDER BY distinct_id',
    ),
  }
}

async function startOn(dataDir: string): Promise<Burrow> {
  const burrow = await buildApp(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), { logger: false })
  await burrow.app.ready()
  return burrow
}

async function uuidsIn(app: Burrow): Promise<Set<string>> {
  // HogQL answers at most 50,000 rows a query (a fast machine acknowledges more during the load): read in pages.
  const uuids = new Set<string>()
  for (let offset = 0; ; offset += 50_000) {
    const rows = await query(
      app,
      `SELECT toString(uuid) AS u FROM events WHERE event = 'load' ORDER BY u LIMIT 50000 OFFSET ${offset}`,
    )
    for (const r of rows) uuids.add(String(r[0]))
    if (rows.length < 50_000) return uuids
  }
}

describe.skipIf(!embedded)('burrow backup and restore of the embedded stores', () => {
  let full: string
  let incremental: string
  let fullStarted: number
  let before: Awaited<ReturnType<typeof snapshot>>

  beforeAll(async () => {
    t = await startTestApp()
    env = { DATA_DIR: t.dataDir }
    work = tempDir()
    full = path.join(work, 'full')
    incremental = path.join(work, 'incremental')
    projectId = t.creds.project_id
    const auth = { authorization: `Bearer ${t.creds.personal_api_key}` }
    for (const key of ['beta', 'new-checkout']) {
      const res = await t.burrow.app.inject({
        method: 'POST',
        url: `/api/projects/${projectId}/feature_flags/`,
        headers: auth,
        payload: { key, filters: { groups: [{ properties: [], rollout_percentage: key === 'beta' ? 30 : 100 }] } },
      })
      expect(res.statusCode, res.body).toBe(201)
    }
    // A second member of the organization.
    const { stores, clock } = t.burrow
    const user = await stores.users.insert({
      uuid: crypto.randomUUID(),
      email: 'second@example.com',
      password_hash: await hashPassword('a-Very-long-secret-42'),
      first_name: 'Second',
      last_name: '',
      is_email_verified: 1,
      pending_email: null,
      current_organization_id: null,
      current_project_id: null,
      created_at: clock().toISOString(),
    })
    const orgId = (
      await t.burrow.app.inject({ method: 'GET', url: '/api/organizations/@current/', headers: auth })
    ).json().id as string
    await stores.organizations.addMember(orgId, user.id, 1, clock().toISOString())
    await capture(t.burrow, 500, 'seed')
  }, 180_000)

  afterAll(async () => {
    await t.close().catch(() => undefined)
    fs.rmSync(work, { recursive: true, force: true })
  })

  it('backs up while capture runs, then incrementally; refuses a non-empty directory', async () => {
    let stop = false
    const load = (async () => {
      let round = 0
      while (!stop) await capture(t.burrow, 100, `load-${round++}`)
    })()
    // Let the load get going, then ask the running Burrow (another process holds no engine: it goes through the
    // control socket).
    await new Promise((r) => setTimeout(r, 300))
    fullStarted = Date.now()
    const res = await burrowProcess(['backup', full, '--json'], env)
    stop = true
    await load
    expect(res.code, res.stderr).toBe(0)
    const summary = JSON.parse(res.stdout)
    expect(summary).toMatchObject({ dir: full, online: true, base: null })
    expect(res.stderr).toContain('burrow backup: flush:')
    expect(summary.events.events).toBeGreaterThanOrEqual(acked.filter((a) => a.at < fullStarted).length)
    const manifest = JSON.parse(fs.readFileSync(path.join(full, 'manifest.json'), 'utf8'))
    expect(manifest.meta.rows.users).toBe(2)
    expect(manifest.meta.migrations.length).toBeGreaterThan(10)
    expect(Object.keys(manifest.files)).toContain('meta.sqlite')
    expect(fs.statSync(full).mode & 0o777).toBe(0o700)

    await capture(t.burrow, 50, 'after-full')
    before = await snapshot(t.burrow)
    const inc = await burrowProcess(['backup', incremental, '--base', full, '--json', '--no-progress'], env)
    expect(inc.code, inc.stderr).toBe(0)
    expect(inc.stderr).toBe('')
    const incSummary = JSON.parse(inc.stdout)
    expect(incSummary.base).toBe(full)
    // Nothing was captured during it: it holds every acknowledged event.
    expect(incSummary.events.events).toBeGreaterThanOrEqual(acked.length)

    const again = await burrowProcess(['backup', full], env)
    expect(again.code).toBe(1)
    expect(again.stderr).toContain(`${full} is not empty`)
  }, 300_000)

  it('restores the incremental backup into the wiped data directory: every event, flag and user', async () => {
    await t.burrow.close()
    for (const entry of fs.readdirSync(t.dataDir)) fs.rmSync(path.join(t.dataDir, entry), { recursive: true })
    const res = await cli(['restore', incremental, '--data-dir', t.dataDir, '--json'])
    expect(res.code, res.stderr).toBe(0)
    const result = JSON.parse(res.stdout)
    expect(result.meta.users).toBe(2)

    const restored = await startOn(t.dataDir)
    try {
      const uuids = await uuidsIn(restored)
      expect(uuids.size).toBe(acked.length)
      for (const a of acked) expect(uuids.has(a.uuid)).toBe(true)
      expect(await snapshot(restored)).toEqual(before)
      expect(before.flags.map((f) => f.key)).toEqual(['beta', 'new-checkout'])
      expect(before.members.map((m) => m.email)).toEqual([t.creds.email, 'second@example.com'].sort())
      // The demo credentials came back: the restored Burrow answers its project key.
      expect(JSON.parse(fs.readFileSync(path.join(t.dataDir, 'credentials.json'), 'utf8')).project_id).toBe(projectId)
    } finally {
      await restored.close()
    }
  }, 300_000)

  it('restores the full backup taken under load: every event acknowledged before it began', async () => {
    const target = path.join(work, 'from-full')
    const res = await cli(['restore', full, '--data-dir', target, '--no-progress'])
    expect(res.code, res.stderr).toBe(0)
    expect(res.stdout).toContain(`into ${target}`)
    const restored = await startOn(target)
    try {
      const uuids = await uuidsIn(restored)
      const ackedBefore = acked.filter((a) => a.at < fullStarted)
      expect(ackedBefore.length).toBeGreaterThan(500)
      for (const a of ackedBefore) expect(uuids.has(a.uuid)).toBe(true)
      // Nothing that was never acknowledged, nothing captured after the backup's end.
      const all = new Set(acked.map((a) => a.uuid))
      for (const u of uuids) expect(all.has(u)).toBe(true)
      const afterFull = await query(restored, "SELECT count() FROM events WHERE properties.tag = 'after-full'")
      expect(afterFull).toEqual([[0]])
    } finally {
      await restored.close()
    }
  }, 300_000)

  it('refuses a non-empty target without --force, a running target, a corrupt file and a directory without manifest', async () => {
    const target = path.join(work, 'occupied')
    fs.mkdirSync(target)
    fs.writeFileSync(path.join(target, 'keep.txt'), 'mine')
    const refused = await cli(['restore', full, '--data-dir', target])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(`${target} is not empty; restore into an empty directory, or add --force`)
    expect(fs.readFileSync(path.join(target, 'keep.txt'), 'utf8')).toBe('mine')
    const forced = await cli(['restore', full, '--data-dir', target, '--force', '--no-progress'])
    expect(forced.code, forced.stderr).toBe(0)
    expect(fs.existsSync(path.join(target, 'keep.txt'))).toBe(false)

    // A Burrow running on the target: refused.
    const running = await startOn(target)
    try {
      const res = await burrowProcess(['restore', full, '--data-dir', target, '--force'])
      expect(res.code).toBe(1)
      expect(res.stderr).toContain(`Burrow (process ${process.pid}) is running on ${target}`)
    } finally {
      await running.close()
    }

    const corrupt = path.join(work, 'corrupt')
    fs.cpSync(full, corrupt, { recursive: true })
    const file = path.join(corrupt, 'meta.sqlite')
    const bytes = fs.readFileSync(file)
    bytes[bytes.length - 10] ^= 0xff
    fs.writeFileSync(file, bytes)
    const empty = path.join(work, 'empty-target')
    const bad = await cli(['restore', corrupt, '--data-dir', empty])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain(`${file} does not match its checksum in the manifest`)
    expect(fs.existsSync(empty)).toBe(false)

    fs.rmSync(path.join(corrupt, 'manifest.json'))
    const unfinished = await cli(['restore', corrupt, '--data-dir', empty])
    expect(unfinished.code).toBe(1)
    expect(unfinished.stderr).toContain('has no manifest.json: it is not a Burrow backup, or the backup did not finish')

    const usage = await cli(['restore', full])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain("required option '--data-dir <dir>' not specified")
  }, 300_000)

  it('backs up stopped stores itself and restores them to the same counts', async () => {
    // The data directory restored above, stopped: the command opens the stores.
    const dir = path.join(work, 'offline')
    const res = await cli(['backup', dir, '--json', '--no-progress'], env)
    expect(res.code, res.stderr).toBe(0)
    expect(JSON.parse(res.stdout)).toMatchObject({ online: false, base: null })
    const target = path.join(work, 'from-offline')
    const restore = await cli(['restore', dir, '--data-dir', target, '--json', '--no-progress'])
    expect(restore.code, restore.stderr).toBe(0)
    const restored = await startOn(target)
    try {
      expect((await uuidsIn(restored)).size).toBe(acked.length)
    } finally {
      await restored.close()
    }
  }, 300_000)
})

describe.skipIf(embedded)('burrow backup with server stores', () => {
  it('refuses and names the stores’ own tools', async () => {
    const res = await cli(['backup', tempDir()], { DATA_DIR: tempDir() })
    expect(res.code).toBe(1)
    expect(res.stderr).toMatch(/pg_dump|clickhouse-backup/)
    expect(res.stderr).toContain('docs/deployment.md')
  })
})
