/**
 * Opening the metadata store from the command line, and telling whether a running Burrow holds the embedded
 * stores of a data directory (the embedded engine writes its process id to `<chdb dir>/status`).
 */
import fs from 'node:fs'
import path from 'node:path'
import type { Config } from '../config.js'
import { openMetaDb } from '../storage/meta/db.js'
import { migrateMeta } from '../storage/meta/migrate.js'

/** The chDB directory of an embedded event store, or undefined for a ClickHouse server. */
export function embeddedEngineDir(config: Pick<Config, 'clickhouseUrl'>): string | undefined {
  return config.clickhouseUrl.startsWith('chdb:') ? config.clickhouseUrl.slice('chdb:'.length) : undefined
}

/** The process id of a live process holding the embedded engine's directory, if any. */
export function engineHolder(config: Pick<Config, 'clickhouseUrl'>): number | undefined {
  const dir = embeddedEngineDir(config)
  if (!dir) return undefined
  let text: string
  try {
    text = fs.readFileSync(path.join(dir, 'status'), 'utf8')
  } catch {
    return undefined
  }
  const pid = Number(/^PID:\s*(\d+)/m.exec(text)?.[1])
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return undefined
  try {
    process.kill(pid, 0)
    return pid
  } catch (err) {
    // EPERM: alive, but another user's.
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : undefined
  }
}

/** Refuses (with what to do instead) when an embedded Burrow is running on the data directory. */
export function refuseWhileServing(config: Config, command: string): void {
  if (!config.databaseUrl.startsWith('sqlite:')) return
  const pid = engineHolder(config)
  if (pid === undefined) return
  throw new Error(
    `Burrow (process ${pid}) is running on ${config.dataDir} with its embedded stores; ` +
      `stop it first (kill -TERM ${pid}), then run burrow ${command} again`,
  )
}

/** The metadata store, migrated, for a command that changes it. */
export async function openMeta(config: Config) {
  const meta = openMetaDb(config.databaseUrl)
  try {
    await migrateMeta(meta.db, meta.dialect)
  } catch (err) {
    await meta.close()
    throw err
  }
  return meta
}
