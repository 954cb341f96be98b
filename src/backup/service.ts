/**
 * Backup and restore of the embedded stores. A backup is taken by whoever holds the engine's directory: the
 * running Burrow (through its control socket, capture going on) or the command itself on stopped stores. Its
 * order is what makes it whole: the capture log is moved into the event store first (every event acknowledged
 * before the backup began is then in the engine), the engine's own BACKUP snapshots its parts, then the metadata
 * store is copied as one snapshot, and `manifest.json` is written last.
 */
import fs from 'node:fs'
import path from 'node:path'
import { quoteString } from '../storage/events/params.js'
import type { EventStore } from '../storage/events/types.js'
import { migrations as knownMigrations } from '../storage/meta/migrations/index.js'
import {
  type BackupManifest,
  backupPartRows,
  baseChain,
  checksumFiles,
  listFiles,
  MANIFEST,
  MANIFEST_FORMAT,
  MANIFEST_VERSION,
  readManifest,
} from './manifest.js'
import { copySqlite, describeSqlite } from './sqlite-copy.js'

/** A backup or restore that cannot go ahead as asked (a non-empty target, a bad base): nothing was changed. */
export class BackupRefused extends Error {}

export type BackupStep = 'flush' | 'events' | 'meta' | 'files' | 'checksums' | 'manifest' | 'verify' | 'restore'
export type ProgressListener = (step: BackupStep, detail: string) => void

export interface BackupDeps {
  events: Pick<EventStore, 'exec' | 'query'>
  /** The metadata store's SQLite file. */
  metaFile: string
  dataDir: string
  /** Moves every acknowledged capture into the event store (a no-op on stopped stores). */
  flush: () => Promise<void>
  /** True when a running Burrow takes it (the capture log is flushed, not copied). */
  online: boolean
  burrowVersion: string
  clock: () => Date
}

function isEmptyDir(dir: string): boolean {
  return !fs.existsSync(dir) || (fs.statSync(dir).isDirectory() && fs.readdirSync(dir).length === 0)
}

/** Writes a backup of the embedded stores into `dir` (new or empty); `base` makes the events part incremental. */
export async function createBackup(
  deps: BackupDeps,
  request: { dir: string; base?: string | null },
  onProgress: ProgressListener = () => undefined,
): Promise<BackupManifest> {
  const dir = path.resolve(request.dir)
  const base = request.base ? path.resolve(request.base) : null
  if (!isEmptyDir(dir)) throw new BackupRefused(`${dir} is not empty; name a new or empty directory`)
  if (fs.existsSync(dir) && !fs.statSync(dir).isDirectory()) throw new BackupRefused(`${dir} is not a directory`)
  const dataDir = path.resolve(deps.dataDir)
  if (dir === dataDir || dir.startsWith(`${dataDir}${path.sep}`)) {
    throw new BackupRefused(`${dir} is inside the data directory ${dataDir}; put backups elsewhere`)
  }
  let bases: string[] = []
  if (base) {
    try {
      const baseManifest = readManifest(base)
      bases = [path.join(base, baseManifest.events.dir), ...baseChain(baseManifest)]
    } catch (err) {
      throw new BackupRefused(`--base: ${(err as Error).message}`)
    }
  }

  const created = !fs.existsSync(dir)
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  fs.chmodSync(dir, 0o700)
  try {
    onProgress('flush', 'moving the capture log into the event store')
    await deps.flush()

    onProgress('events', base ? `event store BACKUP (incremental on ${base})` : 'event store BACKUP')
    const eventsDir = path.join(dir, 'events')
    const settings = base ? ` SETTINGS base_backup = File(${quoteString(bases[0])})` : ''
    await deps.events.exec(`BACKUP DATABASE default TO File(${quoteString(eventsDir)})${settings}`)
    const engineVersion = String((await deps.events.query<[string]>('SELECT version()')).rows[0]?.[0] ?? '')

    onProgress('meta', 'metadata store (VACUUM INTO)')
    const meta = await copySqlite(deps.metaFile, path.join(dir, 'meta.sqlite'))

    onProgress('files', 'credentials and capture log')
    const credentials = path.join(dataDir, 'credentials.json')
    if (fs.existsSync(credentials)) fs.copyFileSync(credentials, path.join(dir, 'credentials.json'))
    // A running Burrow has just moved its log into the engine; a stopped one may have left segments to replay.
    if (!deps.online) {
      const walDir = path.join(dataDir, 'wal')
      const segments = fs.existsSync(walDir) ? fs.readdirSync(walDir).filter((f) => /^\d+\.wal$/.test(f)) : []
      if (segments.length > 0) fs.mkdirSync(path.join(dir, 'wal'), { mode: 0o700 })
      for (const f of segments) fs.copyFileSync(path.join(walDir, f), path.join(dir, 'wal', f))
    }
    for (const f of listFiles(dir)) fs.chmodSync(path.join(dir, f), 0o600)

    const rows = backupPartRows(eventsDir, bases)
    const files = await checksumFiles(dir, (done, total) => {
      if (done === total || done % 500 === 0) onProgress('checksums', `${done}/${total} files`)
    })
    const manifest: BackupManifest = {
      format: MANIFEST_FORMAT,
      version: MANIFEST_VERSION,
      burrow_version: deps.burrowVersion,
      created_at: deps.clock().toISOString(),
      online: deps.online,
      events: { engine: 'chdb', engine_version: engineVersion, dir: 'events', base, rows },
      meta: { dialect: 'sqlite', file: 'meta.sqlite', migrations: meta.migrations, rows: meta.rows },
      files,
    }
    onProgress('manifest', MANIFEST)
    const tmp = path.join(dir, `${MANIFEST}.tmp`)
    fs.writeFileSync(tmp, `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 })
    fs.renameSync(tmp, path.join(dir, MANIFEST))
    return manifest
  } catch (err) {
    // Half a backup is worse than none: it could be mistaken for one. The directory is left as it was found.
    if (created) fs.rmSync(dir, { recursive: true, force: true })
    else for (const entry of fs.readdirSync(dir)) fs.rmSync(path.join(dir, entry), { recursive: true, force: true })
    throw err
  }
}

/** Checks every file of a backup (and of its bases) against the manifest's sizes and checksums. */
export async function verifyBackup(dir: string, onProgress: ProgressListener = () => undefined) {
  const manifest = readManifest(dir)
  const chain = [path.resolve(dir)]
  let base = manifest.events.base
  while (base) {
    chain.push(base)
    base = readManifest(base).events.base
  }
  for (const backup of chain) {
    const expected = readManifest(backup).files
    onProgress('verify', `checking ${Object.keys(expected).length} files of ${backup}`)
    const actual = await checksumFiles(backup)
    for (const [rel, want] of Object.entries(expected)) {
      const got = actual[rel]
      if (!got) throw new BackupRefused(`${path.join(backup, rel)} is missing`)
      if (got.bytes !== want.bytes || got.sha256 !== want.sha256) {
        throw new BackupRefused(`${path.join(backup, rel)} does not match its checksum in the manifest`)
      }
    }
  }
  return manifest
}

export interface RestoreResult {
  data_dir: string
  backup: string
  created_at: string
  events: Record<string, number>
  meta: Record<string, number>
}

/**
 * Restores a backup into a data directory with the embedded stores' default layout (`burrow.sqlite`, `chdb/`,
 * `wal/`, `credentials.json`). The target must be empty unless `force` (it is emptied first); nothing may run on it.
 */
export async function restoreBackup(
  request: {
    dir: string
    dataDir: string
    force: boolean
    openEngine: (dir: string) => Pick<EventStore, 'exec' | 'query' | 'close'>
  },
  onProgress: ProgressListener = () => undefined,
): Promise<RestoreResult> {
  const dir = path.resolve(request.dir)
  const target = path.resolve(request.dataDir)
  let manifest: BackupManifest
  try {
    manifest = readManifest(dir)
  } catch (err) {
    throw new BackupRefused((err as Error).message)
  }
  const known = new Set(knownMigrations.map((m) => m.name))
  const unknown = manifest.meta.migrations.filter((m) => !known.has(m))
  if (unknown.length > 0) {
    throw new BackupRefused(
      `the backup was made by a newer Burrow (${manifest.burrow_version}): its metadata has migrations this one ` +
        `does not know (${unknown.join(', ')}); restore it with that version or later`,
    )
  }
  if (fs.existsSync(target) && !fs.statSync(target).isDirectory()) {
    throw new BackupRefused(`${target} is not a directory`)
  }
  if (!isEmptyDir(target) && !request.force) {
    throw new BackupRefused(`${target} is not empty; restore into an empty directory, or add --force to replace it`)
  }
  if (target === dir || dir.startsWith(`${target}${path.sep}`)) {
    throw new BackupRefused(`the backup ${dir} is inside the target ${target}`)
  }
  await verifyBackup(dir, onProgress)

  const emptyTarget = () => {
    for (const entry of fs.readdirSync(target)) fs.rmSync(path.join(target, entry), { recursive: true, force: true })
  }
  if (fs.existsSync(target)) emptyTarget()
  fs.mkdirSync(target, { recursive: true, mode: 0o700 })
  fs.chmodSync(target, 0o700)
  try {
    onProgress('restore', 'metadata store')
    const metaFile = path.join(target, 'burrow.sqlite')
    fs.copyFileSync(path.join(dir, manifest.meta.file), metaFile)
    fs.chmodSync(metaFile, 0o600)
    const credentials = path.join(dir, 'credentials.json')
    if (fs.existsSync(credentials)) {
      fs.copyFileSync(credentials, path.join(target, 'credentials.json'))
      fs.chmodSync(path.join(target, 'credentials.json'), 0o600)
    }
    const walSource = path.join(dir, 'wal')
    if (fs.existsSync(walSource)) {
      fs.mkdirSync(path.join(target, 'wal'), { mode: 0o700 })
      for (const f of fs.readdirSync(walSource)) fs.copyFileSync(path.join(walSource, f), path.join(target, 'wal', f))
    }

    onProgress('restore', 'event store RESTORE')
    const engine = request.openEngine(path.join(target, 'chdb'))
    const events: Record<string, number> = {}
    try {
      // No merges until the rows are counted: a merge of a ReplacingMergeTree drops duplicates and the count with
      // them. Stopping merges holds only for tables that exist, so the tables are restored empty first, merges
      // stopped, and then their parts.
      const from = `File(${quoteString(path.join(dir, manifest.events.dir))})`
      await engine.exec(`RESTORE DATABASE default FROM ${from} SETTINGS structure_only = 1`)
      await engine.exec('SYSTEM STOP MERGES')
      await engine.exec(`RESTORE DATABASE default FROM ${from} SETTINGS allow_non_empty_tables = 1`)
      const counted = await engine.query<[string, string]>(
        "SELECT table, toString(sum(rows)) FROM system.parts WHERE database = 'default' AND active GROUP BY table",
      )
      for (const [table, rows] of counted.rows) events[table] = Number(rows)
    } finally {
      await engine.close()
    }

    onProgress('verify', 'row counts')
    const mismatch = (what: string, want: Record<string, number>, got: Record<string, number>) => {
      for (const [table, rows] of Object.entries(want)) {
        if ((got[table] ?? 0) !== rows) {
          throw new Error(`${what} table ${table} has ${got[table] ?? 0} rows after the restore, the backup ${rows}`)
        }
      }
    }
    mismatch('event store', manifest.events.rows, events)
    const meta = await describeSqlite(metaFile)
    mismatch('metadata', manifest.meta.rows, meta.rows)
    return { data_dir: target, backup: dir, created_at: manifest.created_at, events, meta: meta.rows }
  } catch (err) {
    // A half-restored data directory must not be started: it is left empty, as it was (or was made).
    emptyTarget()
    throw err
  }
}
