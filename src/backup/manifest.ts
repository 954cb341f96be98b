/**
 * What a backup directory holds and how it is checked: `manifest.json` is written last, so a directory without
 * one is an unfinished backup. Layout:
 *
 *   manifest.json     versions, migrations, row counts, a SHA-256 of every other file
 *   events/           the event store's own BACKUP (ClickHouse's File engine), incremental when it names a base
 *   meta.sqlite       the metadata store, copied with VACUUM INTO (one consistent snapshot)
 *   credentials.json  the demo credentials, when the data directory has them
 *   wal/*.wal         capture-log segments a stopped Burrow left unreplayed (offline backups only)
 */
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

export const MANIFEST = 'manifest.json'
export const MANIFEST_FORMAT = 'burrow-backup'
export const MANIFEST_VERSION = 1

export interface BackupManifest {
  format: typeof MANIFEST_FORMAT
  version: typeof MANIFEST_VERSION
  burrow_version: string
  created_at: string
  /** Whether a running Burrow made it (capture went on) or the command on stopped stores. */
  online: boolean
  events: {
    engine: 'chdb'
    engine_version: string
    dir: 'events'
    /** The base of an incremental backup, absolute; it must still exist to restore this one. */
    base: string | null
    /** Rows per table in the backed-up parts (before the engine merges duplicates away). */
    rows: Record<string, number>
  }
  meta: {
    dialect: 'sqlite'
    file: 'meta.sqlite'
    migrations: string[]
    rows: Record<string, number>
  }
  files: Record<string, { bytes: number; sha256: string }>
}

/** Every regular file under `dir`, as paths relative to it with `/` separators, sorted. */
export function listFiles(dir: string): string[] {
  const out: string[] = []
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name
      if (entry.isDirectory()) walk(child)
      else if (entry.isFile()) out.push(child)
    }
  }
  walk('')
  return out.sort()
}

export async function sha256File(file: string): Promise<string> {
  const hash = crypto.createHash('sha256')
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

/** Size and SHA-256 of every file of the backup but the manifest. */
export async function checksumFiles(
  dir: string,
  onFile?: (done: number, total: number) => void,
): Promise<BackupManifest['files']> {
  const files = listFiles(dir).filter((f) => f !== MANIFEST)
  const out: BackupManifest['files'] = {}
  let done = 0
  for (const rel of files) {
    const file = path.join(dir, rel)
    out[rel] = { bytes: fs.statSync(file).size, sha256: await sha256File(file) }
    onFile?.(++done, files.length)
  }
  return out
}

/** Reads and checks the shape of `DIR/manifest.json`; throws a message that says what is wrong. */
export function readManifest(dir: string): BackupManifest {
  const file = path.join(dir, MANIFEST)
  if (!fs.existsSync(dir)) throw new Error(`${dir} does not exist`)
  if (!fs.existsSync(file)) {
    throw new Error(`${dir} has no ${MANIFEST}: it is not a Burrow backup, or the backup did not finish`)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'))
  } catch (err) {
    throw new Error(`${file} is not JSON: ${(err as Error).message}`)
  }
  const m = parsed as Partial<BackupManifest>
  if (m.format !== MANIFEST_FORMAT) throw new Error(`${file} is not a Burrow backup manifest`)
  if (m.version !== MANIFEST_VERSION) {
    throw new Error(`${file} has manifest version ${m.version}; this Burrow reads version ${MANIFEST_VERSION}`)
  }
  if (!m.events || !m.meta || !m.files || typeof m.files !== 'object') throw new Error(`${file} is incomplete`)
  return m as BackupManifest
}

interface IndexEntry {
  name: string
  checksum: string
  /** Where the bytes are when the engine stored a file once for several names (deduplicated). */
  dataFile: string
  useBase: boolean
}

/** The engine's index of a backup (`.backup`): each file's name, checksum, and where its bytes are. */
function readIndex(eventsDir: string): IndexEntry[] {
  const xml = fs.readFileSync(path.join(eventsDir, '.backup'), 'utf8')
  const tag = (block: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(block)?.[1]
  const entries: IndexEntry[] = []
  for (const match of xml.matchAll(/<file>([\s\S]*?)<\/file>/g)) {
    const name = tag(match[1], 'name')
    if (!name) continue
    entries.push({
      name,
      checksum: tag(match[1], 'checksum') ?? '',
      dataFile: tag(match[1], 'data_file') ?? name,
      useBase: tag(match[1], 'use_base') === 'true',
    })
  }
  return entries
}

/** The bytes of one file of an engine backup, following deduplication and base backups. */
function readBackupFile(chain: string[], entry: IndexEntry, indexes: Map<string, IndexEntry[]>): Buffer {
  const [dir, ...bases] = chain
  if (!entry.useBase) return fs.readFileSync(path.join(dir, entry.dataFile))
  if (bases.length === 0) throw new Error(`${entry.name} is to be read from a base backup, and there is none`)
  let baseIndex = indexes.get(bases[0])
  if (!baseIndex) {
    baseIndex = readIndex(bases[0])
    indexes.set(bases[0], baseIndex)
  }
  const inBase =
    baseIndex.find((e) => e.name === entry.name && e.checksum === entry.checksum) ??
    baseIndex.find((e) => e.checksum === entry.checksum)
  if (!inBase) throw new Error(`${entry.name} is in the backup's index but in neither it nor its base`)
  return readBackupFile(bases, inBase, indexes)
}

/**
 * Rows per table of an engine backup, summed from its parts' `count.txt`. An incremental backup lists the parts
 * it shares with its base (`use_base`), whose files are read from the base (and its base, …).
 */
export function backupPartRows(eventsDir: string, bases: string[]): Record<string, number> {
  const rows: Record<string, number> = {}
  const indexes = new Map<string, IndexEntry[]>()
  for (const entry of readIndex(eventsDir)) {
    const match = /^data\/default\/([^/]+)\/[^/]+\/count\.txt$/.exec(entry.name)
    if (!match) continue
    const table = decodeURIComponent(match[1])
    const count = Number(
      readBackupFile([eventsDir, ...bases], entry, indexes)
        .toString('utf8')
        .trim(),
    )
    rows[table] = (rows[table] ?? 0) + count
  }
  return rows
}

/** The chain of bases of a backup (its base, the base's base, …), each an absolute events directory. */
export function baseChain(manifest: BackupManifest): string[] {
  const chain: string[] = []
  let base = manifest.events.base
  while (base) {
    if (chain.length > 100) throw new Error('the chain of base backups loops')
    const baseManifest = readManifest(base)
    chain.push(path.join(base, baseManifest.events.dir))
    base = baseManifest.events.base
  }
  return chain
}

/** This Burrow's version (package.json). */
export function burrowVersion(): string {
  try {
    const file = path.resolve(import.meta.dirname, '../../package.json')
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version
  } catch {
    return 'unknown'
  }
}
