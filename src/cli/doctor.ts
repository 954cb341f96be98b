/**
 * `burrow doctor`: what an operator checks before asking for help — the configuration, each store reachable and
 * its version, the metadata migrations, disk space, the capture-log backlog and clock skew — each problem with
 * its fix. Reads only: it changes nothing.
 */
import fs from 'node:fs'
import path from 'node:path'
import { sql } from 'kysely'
import { type Config, ConfigError, loadConfig } from '../config.js'
import { openMetaDb } from '../storage/meta/db.js'
import { migrations } from '../storage/meta/migrations/index.js'
import type { CliIo } from './program.js'
import { embeddedEngineDir, engineHolder } from './stores.js'

export interface Check {
  name: string
  status: 'ok' | 'warn' | 'fail' | 'skip'
  detail: string
  fix?: string
}

const GiB = 1024 ** 3
const MiB = 1024 ** 2
/** Clock skew past which events' timestamps and session expiry go wrong. */
const SKEW_WARN_MS = 2_000

export async function runDoctor(io: CliIo, json: boolean): Promise<number> {
  const checks = await diagnose(io.env)
  if (json) io.out(`${JSON.stringify({ ok: !checks.some((c) => c.status === 'fail'), checks })}\n`)
  else {
    for (const c of checks) {
      io.out(`${c.status.padEnd(4)}  ${c.name}: ${c.detail}\n`)
      if (c.fix) io.out(`      fix: ${c.fix}\n`)
    }
  }
  return checks.some((c) => c.status === 'fail') ? 1 : 0
}

export async function diagnose(env: NodeJS.ProcessEnv): Promise<Check[]> {
  const checks: Check[] = []
  let config: Config
  try {
    config = loadConfig(env)
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    return [
      {
        name: 'configuration',
        status: 'fail',
        detail: err.message,
        fix: 'correct that environment variable (docs/configuration.md lists every setting)',
      },
    ]
  }
  checks.push({
    name: 'configuration',
    status: 'ok',
    detail: `data dir ${config.dataDir}, metadata ${redact(config.databaseUrl)}, events ${redact(config.clickhouseUrl)}, site ${config.siteUrl}`,
  })
  checks.push(dataDirCheck(config))
  const holder = engineHolder(config)
  const serverClock = await runningServer(config, holder, checks)
  checks.push(await metaCheck(config, checks))
  checks.push(await eventsCheck(config, holder, checks))
  checks.push(diskCheck(config))
  checks.push(backlogCheck(config, holder))
  if (serverClock !== undefined) {
    const skew = serverClock - Date.now()
    checks.push(skewCheck('Burrow at SITE_URL', skew, 1000))
  }
  if (!checks.some((c) => c.name.startsWith('clock skew'))) {
    checks.push({ name: 'clock skew', status: 'skip', detail: 'every store runs on this machine, on its clock' })
  }
  return checks
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@')
}

function skewCheck(against: string, skewMs: number, resolutionMs: number): Check {
  const off = Math.abs(skewMs) - resolutionMs
  return {
    name: `clock skew (${against})`,
    status: off > SKEW_WARN_MS ? 'warn' : 'ok',
    detail: `${skewMs >= 0 ? '+' : ''}${Math.round(skewMs)} ms`,
    ...(off > SKEW_WARN_MS ? { fix: 'run a time service (chrony or systemd-timesyncd) on both machines' } : {}),
  }
}

function dataDirCheck(config: Config): Check {
  const dir = config.dataDir
  if (!fs.existsSync(dir)) {
    return {
      name: 'data directory',
      status: 'warn',
      detail: `${dir} does not exist yet`,
      fix: 'burrow start creates it',
    }
  }
  try {
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.R_OK)
  } catch {
    return {
      name: 'data directory',
      status: 'fail',
      detail: `${dir} is not readable and writable by this user`,
      fix: `run Burrow as the directory's owner, or chown -R $(id -un) ${dir}`,
    }
  }
  const mode = fs.statSync(dir).mode & 0o777
  if ((mode & 0o077) !== 0) {
    return {
      name: 'data directory',
      status: 'warn',
      detail: `${dir} is readable by others (mode ${mode.toString(8)}); it holds every event and key hash`,
      fix: `chmod 700 ${dir}`,
    }
  }
  return { name: 'data directory', status: 'ok', detail: `${dir} (mode ${mode.toString(8)})` }
}

/** The running Burrow, if one answers at SITE_URL: its health and its clock (from the Date header). */
async function runningServer(config: Config, holder: number | undefined, checks: Check[]) {
  try {
    const res = await fetch(new URL('/_health', config.siteUrl), { signal: AbortSignal.timeout(2000) })
    const body = (await res.json()) as { status?: string; meta?: boolean; events?: boolean }
    checks.push({
      name: 'server',
      status: res.ok ? 'ok' : 'fail',
      detail: `${config.siteUrl} answers: ${body.status ?? res.status}${holder ? ` (process ${holder})` : ''}`,
      ...(res.ok
        ? {}
        : {
            fix: `a store does not answer (metadata ${body.meta ? 'ok' : 'down'}, events ${body.events ? 'ok' : 'down'}): see the server log`,
          }),
    })
    const date = res.headers.get('date')
    return date ? Date.parse(date) + 500 : undefined
  } catch {
    checks.push({
      name: 'server',
      status: holder ? 'warn' : 'skip',
      detail: holder
        ? `process ${holder} holds the embedded stores but ${config.siteUrl} does not answer`
        : `no Burrow answers at ${config.siteUrl}`,
      ...(holder ? { fix: 'check PORT/HOST/SITE_URL match the running process, or its log' } : {}),
    })
    return undefined
  }
}

async function metaCheck(config: Config, checks: Check[]): Promise<Check> {
  const name = 'metadata store'
  if (config.databaseUrl.startsWith('sqlite:') && !fs.existsSync(config.databaseUrl.slice('sqlite:'.length))) {
    return { name, status: 'warn', detail: 'no SQLite file yet', fix: 'burrow start (or burrow migrate) creates it' }
  }
  let meta: ReturnType<typeof openMetaDb> | undefined
  try {
    meta = openMetaDb(config.databaseUrl)
    const postgres = meta.dialect === 'postgres'
    const row = postgres
      ? (await sql<{ v: string; now: Date | string }>`select version() as v, now() as now`.execute(meta.db)).rows[0]
      : (await sql<{ v: string; now?: undefined }>`select sqlite_version() as v`.execute(meta.db)).rows[0]
    if (row.now !== undefined) checks.push(skewCheck('PostgreSQL', new Date(row.now).getTime() - Date.now(), 50))
    let applied = 0
    try {
      const r = await sql<{ n: number }>`select count(*) as n from kysely_migration`.execute(meta.db)
      applied = Number(r.rows[0].n)
    } catch {
      applied = 0
    }
    const pending = migrations.length - applied
    const version = postgres ? String(row.v).split(' ').slice(0, 2).join(' ') : `SQLite ${row.v}`
    if (pending > 0) {
      return {
        name,
        status: 'warn',
        detail: `${version}; ${applied} of ${migrations.length} migrations applied`,
        fix: 'burrow migrate (or the next burrow start) applies the rest',
      }
    }
    if (pending < 0) {
      return {
        name,
        status: 'fail',
        detail: `${version}; ${applied} migrations applied, this version knows ${migrations.length}`,
        fix: 'the store was used by a newer Burrow: run that version, or restore a backup',
      }
    }
    return { name, status: 'ok', detail: `${version}; ${applied} migrations applied` }
  } catch (err) {
    return {
      name,
      status: 'fail',
      detail: `${redact(config.databaseUrl)} does not answer: ${(err as Error).message}`,
      fix: postgres(config)
        ? 'check that PostgreSQL runs and DATABASE_URL names a database, user and password it accepts'
        : 'check the file and its directory are this user’s and the disk is not full',
    }
  } finally {
    await meta?.close()
  }
}

const postgres = (config: Config) => config.databaseUrl.startsWith('postgres')

async function eventsCheck(config: Config, holder: number | undefined, checks: Check[]): Promise<Check> {
  const name = 'event store'
  const dir = embeddedEngineDir(config)
  if (dir && holder !== undefined) {
    const server = checks.find((c) => c.name === 'server')
    return {
      name,
      status: server?.status === 'fail' ? 'fail' : 'ok',
      detail: `embedded, held by Burrow (process ${holder}); ${server?.status === 'ok' ? 'its /_health reports it answering' : 'not checked from here while it runs'}`,
    }
  }
  if (dir && !fs.existsSync(dir)) {
    return { name, status: 'warn', detail: `no engine directory ${dir} yet`, fix: 'burrow start creates it' }
  }
  const { openEventStore } = await import('../storage/events/index.js')
  let store: Awaited<ReturnType<typeof openEventStore>> | undefined
  try {
    store = openEventStore(config.clickhouseUrl)
    const result = await store.query<[string, string]>("SELECT version(), toString(now64(3, 'UTC'))")
    const [version, now] = result.rows[0]
    if (!dir) checks.push(skewCheck('ClickHouse', Date.parse(`${now.replace(' ', 'T')}Z`) - Date.now(), 50))
    return { name, status: 'ok', detail: `${dir ? 'embedded chDB' : 'ClickHouse server'} ${version}` }
  } catch (err) {
    return {
      name,
      status: 'fail',
      detail: `${redact(config.clickhouseUrl)} does not answer: ${(err as Error).message}`,
      fix: dir
        ? 'check the engine directory is this user’s and the disk is not full'
        : 'check that ClickHouse runs and CLICKHOUSE_URL (user, password, database) is right',
    }
  } finally {
    await store?.close().catch(() => {})
  }
}

function diskCheck(config: Config): Check {
  const name = 'disk space'
  let dir = config.dataDir
  while (!fs.existsSync(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir)
  const stats = fs.statfsSync(dir)
  const free = stats.bavail * stats.bsize
  const total = stats.blocks * stats.bsize
  const detail = `${(free / GiB).toFixed(1)} GiB free of ${(total / GiB).toFixed(1)} GiB at ${dir}`
  if (free < 256 * MiB) {
    return { name, status: 'fail', detail, fix: 'free space or move DATA_DIR: inserts and merges fail on a full disk' }
  }
  if (free < GiB || free / total < 0.05) {
    return { name, status: 'warn', detail, fix: 'free space or grow the volume before merges need it' }
  }
  return { name, status: 'ok', detail }
}

function backlogCheck(config: Config, holder: number | undefined): Check {
  const name = 'capture log'
  const dir = path.join(config.dataDir, 'wal')
  if (!fs.existsSync(dir)) return { name, status: 'ok', detail: 'empty' }
  let files = 0
  let bytes = 0
  for (const entry of fs.readdirSync(dir)) {
    if (!entry.endsWith('.wal')) continue
    files++
    bytes += fs.statSync(path.join(dir, entry)).size
  }
  const detail = `${files} segment${files === 1 ? '' : 's'}, ${(bytes / MiB).toFixed(1)} MiB waiting for the event store`
  if (holder === undefined && files > 0) {
    return { name, status: 'warn', detail, fix: 'burrow start replays them into the event store before serving' }
  }
  if (bytes > 256 * MiB) {
    return {
      name,
      status: 'warn',
      detail,
      fix: 'the event store falls behind capture: give the engine more CPU or move to a ClickHouse server',
    }
  }
  return { name, status: 'ok', detail }
}
