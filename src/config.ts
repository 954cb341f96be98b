import os from 'node:os'
import path from 'node:path'
import { CLUSTER_NAME } from './storage/events/schema.js'
import type { EngineSettings } from './storage/events/types.js'

export interface Config {
  port: number
  host: string
  dataDir: string
  /** `sqlite:<file>` or `postgres://…` */
  databaseUrl: string
  /** `chdb:<dir>` or `http(s)://…` */
  clickhouseUrl: string
  /** Spread the event store over this ClickHouse cluster (ON CLUSTER DDL, sharded events): server mode only. */
  clickhouseCluster?: string
  /** Changes told to the other processes through Redis pub/sub instead of PostgreSQL's NOTIFY. */
  redisUrl?: string
  /**
   * Whether changes are told to the other processes at all (CHANGE_NOTIFICATIONS=off: a single process on a
   * PostgreSQL that cannot LISTEN, e.g. behind PgBouncer in transaction mode; caches then rely on their time limits).
   */
  changeNotifications: boolean
  /** This process's name in logs, job leases and query statuses (the host name by default). */
  instanceId: string
  siteUrl: string
  smtpUrl: string | undefined
  /** Sender of every mail (EMAIL_FROM). */
  emailFrom: string
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
  /** How many X-Forwarded-For hops to trust for the client IP (0: use the socket address). */
  trustedProxies: number
  geoipDbPath: string | undefined
  /** Nice value for the embedded engine's own threads (0 leaves them alone); request handling runs first. */
  engineThreadNice: number
  /** Seconds without a request after which memory is given back once (0: never). */
  idleTrimSeconds: number
  /** The embedded engine's memory: its total limit and the size of each of its caches. */
  engine: EngineSettings
  rateLimits: RateLimitConfig
  queryLimits: QueryLimitConfig
}

/** Bounds on every HogQL query, so that no query can take the machine from capture and flags. */
export interface QueryLimitConfig {
  /** Total memory the embedded engine may use (inserts, merges and queries together). */
  engineMemoryBytes: number
  /** Memory one query may use. */
  maxMemoryBytes: number
  maxExecutionSeconds: number
  /** Engine threads one query may use (they run at nice 19, so requests and inserts go first). */
  maxThreads: number
  /** Size of one query's result in the engine (the rows are capped by LIMIT already). */
  maxResultBytes: number
}

/** Request limits; 0 turns one off. Counters live in the metadata store, so every process shares them. */
export interface RateLimitConfig {
  /** Failed personal-API-key authentications per client IP per minute, before that IP is refused for the minute. */
  authFailuresPerMinute: number
  /** Failed requests (bad project key, undecodable body, …) on public endpoints per client IP per minute. */
  publicFailuresPerMinute: number
  /** Query API requests per personal API key per minute. */
  queriesPerMinute: number
  /** Query API requests per personal API key per hour. */
  queriesPerHour: number
  /** Query API requests running at once per project. */
  queryConcurrency: number
  /** Bytes the engine may read per project per hour for personal-API-key queries (0: no budget). */
  queryReadBudgetBytesPerHour: number
  /** Failed logins per client IP per 10 minutes before that IP is locked out for the rest of them. */
  loginFailuresPerIp: number
  /** Second-factor codes tried per user per 5 minutes (at login and when turning 2FA on). */
  otpAttemptsPerUser: number
  /** Second-factor codes tried per client IP per 5 minutes. */
  otpAttemptsPerIp: number
}

export class ConfigError extends Error {}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`)
  }
  return value
}

const MiB = 1024 * 1024

function queryLimits(env: NodeJS.ProcessEnv): QueryLimitConfig {
  const totalMiB = Math.floor(os.totalmem() / MiB)
  // Two fifths of the machine by default: the rest is Node, the metadata store, the page cache and the system.
  const engineMiB = integer(env, 'ENGINE_MEMORY_LIMIT_MB', Math.max(512, Math.floor(totalMiB * 0.4)), 256, 16 * MiB)
  // A quarter of that per query: the engine runs at most a few queries at once beside inserts and merges.
  const queryMiB = integer(env, 'QUERY_MEMORY_LIMIT_MB', Math.min(4096, Math.floor(engineMiB / 4)), 16, engineMiB)
  return {
    engineMemoryBytes: engineMiB * MiB,
    maxMemoryBytes: queryMiB * MiB,
    maxExecutionSeconds: integer(env, 'QUERY_MAX_EXECUTION_SECONDS', 60, 1, 3600),
    maxThreads: integer(env, 'QUERY_MAX_THREADS', os.availableParallelism(), 1, 1024),
    maxResultBytes: integer(env, 'QUERY_MAX_RESULT_MB', 64, 1, 4096) * MiB,
  }
}

/** Reads the configuration from the environment; throws ConfigError with one clear line on bad values. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 8010, 0, 65535)
  const host = env.HOST || '127.0.0.1'
  const dataDir = path.resolve(env.DATA_DIR || './data')

  const databaseUrl = env.DATABASE_URL || `sqlite:${path.join(dataDir, 'burrow.sqlite')}`
  if (!/^(sqlite:|postgres(ql)?:\/\/)/.test(databaseUrl)) {
    throw new ConfigError(`DATABASE_URL must start with postgres:// or sqlite:, got "${databaseUrl}"`)
  }
  const clickhouseUrl = env.CLICKHOUSE_URL || `chdb:${path.join(dataDir, 'chdb')}`
  if (!/^(chdb:|https?:\/\/)/.test(clickhouseUrl)) {
    throw new ConfigError(`CLICKHOUSE_URL must start with http://, https:// or chdb:, got "${clickhouseUrl}"`)
  }
  const clickhouseCluster = env.CLICKHOUSE_CLUSTER || undefined
  if (clickhouseCluster && clickhouseUrl.startsWith('chdb:')) {
    throw new ConfigError('CLICKHOUSE_CLUSTER needs CLICKHOUSE_URL to name a ClickHouse server (http:// or https://)')
  }
  if (clickhouseCluster && !CLUSTER_NAME.test(clickhouseCluster)) {
    throw new ConfigError(
      `CLICKHOUSE_CLUSTER must be a cluster name from the server's remote_servers (letters, digits, _ . -), got "${clickhouseCluster}"`,
    )
  }

  const siteUrl = (env.SITE_URL || `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`).replace(/\/$/, '')
  try {
    new URL(siteUrl)
  } catch {
    throw new ConfigError(`SITE_URL must be an absolute URL, got "${siteUrl}"`)
  }

  const instanceId = env.INSTANCE_ID || os.hostname()
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/.test(instanceId)) {
    throw new ConfigError(`INSTANCE_ID must be 1–253 letters, digits, ".", "_" or "-", got "${instanceId}"`)
  }

  const redisUrl = env.REDIS_URL || undefined
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError(`REDIS_URL must start with redis:// or rediss://, got "${redisUrl}"`)
  }

  const changeNotifications = (env.CHANGE_NOTIFICATIONS || 'on') as 'on' | 'off'
  if (changeNotifications !== 'on' && changeNotifications !== 'off') {
    throw new ConfigError(`CHANGE_NOTIFICATIONS must be on or off, got "${env.CHANGE_NOTIFICATIONS}"`)
  }

  const smtpUrl = env.SMTP_URL || undefined
  if (smtpUrl && !/^smtps?:\/\//.test(smtpUrl)) {
    throw new ConfigError(`SMTP_URL must start with smtp:// or smtps://, got "${smtpUrl}"`)
  }

  const logLevel = (env.LOG_LEVEL || 'info') as Config['logLevel']
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`)
  }

  const limits = queryLimits(env)
  return {
    port,
    host,
    dataDir,
    databaseUrl,
    clickhouseUrl,
    clickhouseCluster,
    redisUrl,
    changeNotifications: changeNotifications === 'on',
    instanceId,
    siteUrl,
    smtpUrl,
    emailFrom: env.EMAIL_FROM || `Burrow <noreply@${new URL(siteUrl).hostname}>`,
    logLevel,
    trustedProxies: integer(env, 'TRUSTED_PROXIES', 0, 0, 32),
    engineThreadNice: integer(env, 'ENGINE_THREAD_NICE', 10, 0, 19),
    idleTrimSeconds: integer(env, 'IDLE_TRIM_SECONDS', 15, 0, 86_400),
    geoipDbPath: env.GEOIP_DB_PATH || undefined,
    queryLimits: limits,
    engine: {
      memoryBytes: limits.engineMemoryBytes,
      markCacheBytes: integer(env, 'ENGINE_MARK_CACHE_MB', 64, 0, 64 * 1024) * MiB,
      uncompressedCacheBytes: integer(env, 'ENGINE_UNCOMPRESSED_CACHE_MB', 32, 0, 64 * 1024) * MiB,
      otherCachesBytes: integer(env, 'ENGINE_OTHER_CACHES_MB', 64, 0, 64 * 1024) * MiB,
    },
    rateLimits: {
      authFailuresPerMinute: integer(env, 'RATE_LIMIT_AUTH_FAILURES_PER_MINUTE', 60, 0, 1_000_000),
      publicFailuresPerMinute: integer(env, 'RATE_LIMIT_PUBLIC_FAILURES_PER_MINUTE', 600, 0, 1_000_000),
      queriesPerMinute: integer(env, 'RATE_LIMIT_QUERIES_PER_MINUTE', 240, 0, 1_000_000),
      queriesPerHour: integer(env, 'RATE_LIMIT_QUERIES_PER_HOUR', 1200, 0, 100_000_000),
      queryConcurrency: integer(env, 'RATE_LIMIT_QUERY_CONCURRENCY', 3, 0, 1000),
      queryReadBudgetBytesPerHour:
        integer(env, 'QUERY_READ_BUDGET_MB_PER_HOUR', 200 * 1024, 0, 1_000_000_000) * 1024 ** 2,
      loginFailuresPerIp: integer(env, 'RATE_LIMIT_LOGIN_FAILURES_PER_10_MINUTES', 30, 0, 1_000_000),
      otpAttemptsPerUser: integer(env, 'RATE_LIMIT_2FA_ATTEMPTS_PER_USER', 10, 0, 1_000_000),
      otpAttemptsPerIp: integer(env, 'RATE_LIMIT_2FA_ATTEMPTS_PER_IP', 30, 0, 1_000_000),
    },
  }
}
