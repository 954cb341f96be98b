/**
 * `burrow backup DIR [--base DIR]` and `burrow restore DIR --data-dir DIR`, for the embedded stores. A running
 * Burrow takes the backup itself (asked through its control socket), so capture never stops; on stopped stores
 * the command opens them and takes it. Restore is offline, into an empty data directory.
 */
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { type Command, Option } from 'commander'
import { type Config, loadConfig } from '../config.js'
import type { CliIo } from './program.js'
import { embeddedEngineDir, engineHolder } from './stores.js'
import { UsageError } from './usage.js'

interface BackupOptions {
  base?: string
  json?: boolean
  progress: boolean
}
interface RestoreOptions {
  dataDir: string
  force?: boolean
  json?: boolean
  progress: boolean
}

export function registerBackupCommands(program: Command, io: CliIo, setOutcome: (code: number) => void) {
  program
    .command('backup')
    .description('back up the embedded stores into DIR, while Burrow runs (capture goes on) or stopped')
    .argument('<dir>', 'a new or empty directory (outside the data directory)')
    .option('--base <dir>', 'an earlier backup: the event store part holds only what changed since')
    .option('--no-progress', 'no progress lines')
    .option('--json', 'print the manifest summary as JSON')
    .action(async (dir: string, opts: BackupOptions) => {
      setOutcome(await backupCommand(dir, opts, io))
    })

  program
    .command('restore')
    .description('restore a backup into an empty data directory (offline: Burrow must not run on it)')
    .argument('<dir>', 'a directory written by burrow backup')
    .addOption(new Option('--data-dir <dir>', 'the data directory to restore into').makeOptionMandatory())
    .option('--force', 'replace what the data directory holds')
    .option('--no-progress', 'no progress lines')
    .option('--json', 'print the summary as JSON')
    .action(async (dir: string, opts: RestoreOptions) => {
      setOutcome(await restoreCommand(dir, opts, io))
    })
}

function requireEmbedded(config: Config, command: string): { metaFile: string; engineDir: string } {
  const engineDir = embeddedEngineDir(config)
  const metaFile = config.databaseUrl.startsWith('sqlite:') ? config.databaseUrl.slice('sqlite:'.length) : undefined
  if (!engineDir || !metaFile) {
    const which = [
      metaFile ? undefined : 'PostgreSQL (pg_dump / pg_basebackup)',
      engineDir ? undefined : 'the ClickHouse server (its own BACKUP … TO Disk/S3, or clickhouse-backup)',
    ].filter(Boolean)
    throw new Error(
      `burrow ${command} covers the embedded stores (SQLite and chDB); back up ${which.join(' and ')} ` +
        'with its own tools, as docs/deployment.md shows',
    )
  }
  return { metaFile, engineDir }
}

async function backupCommand(dirArg: string, opts: BackupOptions, io: CliIo): Promise<number> {
  const config = loadConfig(io.env)
  const { metaFile } = requireEmbedded(config, 'backup')
  // The server resolves nothing against our working directory: send it absolute paths.
  const dir = path.resolve(dirArg)
  const base = opts.base ? path.resolve(opts.base) : null
  const progress = (step: string, detail: string) => {
    if (opts.progress) io.err(`burrow backup: ${step}: ${detail}\n`)
  }
  const pid = engineHolder(config)
  const { BackupRefused } = await import('../backup/service.js')
  let manifest: import('../backup/manifest.js').BackupManifest
  try {
    if (pid !== undefined) {
      manifest = await backupThroughServer(config, pid, { dir, base }, progress)
    } else {
      manifest = await backupOffline(config, metaFile, { dir, base }, progress)
    }
  } catch (err) {
    if (err instanceof BackupRefused || err instanceof RefusedByServer) {
      io.err(`burrow backup: ${err.message}\n`)
      return 1
    }
    throw err
  }
  const bytes = Object.values(manifest.files).reduce((sum, f) => sum + f.bytes, 0)
  const summary = {
    dir,
    online: manifest.online,
    base: manifest.events.base,
    created_at: manifest.created_at,
    events: manifest.events.rows,
    meta: manifest.meta.rows,
    files: Object.keys(manifest.files).length,
    bytes,
  }
  if (opts.json) io.out(`${JSON.stringify(summary)}\n`)
  else {
    io.out(
      `Backup written to ${dir} (${manifest.online ? 'while Burrow ran' : 'stores stopped'}` +
        `${base ? `, incremental on ${base}` : ''}): ${manifest.events.rows.events ?? 0} events, ` +
        `${manifest.meta.rows.persons ?? 0} persons, ${summary.files} files, ${(bytes / 1e6).toFixed(1)} MB\n`,
    )
  }
  return 0
}

class RefusedByServer extends Error {}

/** Asks the running Burrow to take the backup, echoing its progress. */
function backupThroughServer(
  config: Config,
  pid: number,
  request: { dir: string; base: string | null },
  progress: (step: string, detail: string) => void,
): Promise<import('../backup/manifest.js').BackupManifest> {
  const socketPath = path.join(config.dataDir, 'control.sock')
  if (!fs.existsSync(socketPath)) {
    return Promise.reject(
      new RefusedByServer(
        `Burrow (process ${pid}) runs on ${config.dataDir} but offers no control socket (${socketPath}); ` +
          'restart it with this version, or stop it and run burrow backup again',
      ),
    )
  }
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method: 'POST', path: '/backup' }, (res) => {
      let buffer = ''
      let settled = false
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        buffer += chunk
        let nl = buffer.indexOf('\n')
        while (nl >= 0) {
          const line = buffer.slice(0, nl)
          buffer = buffer.slice(nl + 1)
          nl = buffer.indexOf('\n')
          if (!line) continue
          const msg = JSON.parse(line) as
            | { step: string; detail: string }
            | { done: import('../backup/manifest.js').BackupManifest }
            | { error: string; refused: boolean }
          if ('step' in msg) progress(msg.step, msg.detail)
          else if ('done' in msg) {
            settled = true
            resolve(msg.done)
          } else {
            settled = true
            reject(msg.refused ? new RefusedByServer(msg.error) : new Error(`the running Burrow: ${msg.error}`))
          }
        }
      })
      res.on('end', () => {
        if (!settled) reject(new Error('the running Burrow ended the backup without an answer (did it stop?)'))
      })
      res.on('error', reject)
    })
    req.on('error', (err) => reject(new Error(`cannot reach the running Burrow on ${socketPath}: ${err.message}`)))
    req.end(JSON.stringify(request))
  })
}

/** Opens the stopped stores and takes the backup in this process. */
async function backupOffline(
  config: Config,
  metaFile: string,
  request: { dir: string; base: string | null },
  progress: (step: string, detail: string) => void,
) {
  if (!fs.existsSync(metaFile)) throw new Error(`there is no metadata store at ${metaFile}: nothing to back up`)
  const { openEventStore } = await import('../storage/events/index.js')
  const { createBackup } = await import('../backup/service.js')
  const { burrowVersion } = await import('../backup/manifest.js')
  const events = openEventStore(config.clickhouseUrl)
  try {
    return await createBackup(
      {
        events,
        metaFile,
        dataDir: config.dataDir,
        flush: async () => undefined,
        online: false,
        burrowVersion: burrowVersion(),
        clock: () => new Date(),
      },
      request,
      progress,
    )
  } finally {
    await events.close()
  }
}

async function restoreCommand(dirArg: string, opts: RestoreOptions, io: CliIo): Promise<number> {
  if (!opts.dataDir) throw new UsageError('--data-dir names the data directory to restore into')
  const dir = path.resolve(dirArg)
  const dataDir = path.resolve(opts.dataDir)
  // The target's own embedded layout: refuse while a Burrow holds it.
  const pid = engineHolder({ clickhouseUrl: `chdb:${path.join(dataDir, 'chdb')}` })
  if (pid !== undefined) {
    io.err(
      `burrow restore: Burrow (process ${pid}) is running on ${dataDir}; stop it first (kill -TERM ${pid}), ` +
        'then run burrow restore again\n',
    )
    return 1
  }
  const { BackupRefused, restoreBackup } = await import('../backup/service.js')
  const { createChdbEventStore } = await import('../storage/events/chdb.js')
  let result: Awaited<ReturnType<typeof restoreBackup>>
  try {
    result = await restoreBackup(
      { dir, dataDir, force: opts.force === true, openEngine: (engineDir) => createChdbEventStore(engineDir, 1) },
      (step, detail) => {
        if (opts.progress) io.err(`burrow restore: ${step}: ${detail}\n`)
      },
    )
  } catch (err) {
    if (err instanceof BackupRefused) {
      io.err(`burrow restore: ${err.message}\n`)
      return 1
    }
    throw err
  }
  if (opts.json) io.out(`${JSON.stringify(result)}\n`)
  else {
    io.out(
      `Restored ${dir} (taken ${result.created_at}) into ${dataDir}: ${result.events.events ?? 0} events, ` +
        `${result.meta.persons ?? 0} persons, ${result.meta.users ?? 0} users. Start it with DATA_DIR=${dataDir}\n`,
    )
  }
  return 0
}
