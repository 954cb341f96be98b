/**
 * Changes made through one process, told to the others so that their caches drop what changed at once instead of
 * when a time limit runs out. On PostgreSQL: `NOTIFY burrow_changes` with a small JSON payload, heard by one
 * `LISTEN` connection per process. On SQLite there is one serving process (the embedded engine locks its
 * directory), so the bus only delivers nothing.
 *
 * A notification is sent after the change is committed (the caller's transaction is done when it invalidates its
 * own cache), so a process that hears it reads the new rows. Notifications missed while the listening connection
 * was down cannot be replayed: on reconnecting, every subscriber is told to drop everything (`{ kind: 'all' }`),
 * and the caches' own time limits remain the last safety net.
 *
 * With `REDIS_URL`, the same notifications go through Redis pub/sub instead (channel `burrow_changes`), on one
 * publishing and one subscribed connection per process; PostgreSQL is then not asked to notify.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { sql } from 'kysely'
import pg from 'pg'
import { createClient } from 'redis'

export const CHANGES_CHANNEL = 'burrow_changes'
/** PostgreSQL refuses payloads of 8,000 bytes and more; ours are a few dozen. */
const MAX_PAYLOAD = 7_000

export type Change =
  /** A team's flags, cohorts or group types changed (flag definitions must be reloaded). */
  | { kind: 'flags'; teamId: number }
  /** Property types of a team changed (query casts). */
  | { kind: 'property-types'; teamId: number }
  /** Projects or their keys changed (token lookups). */
  | { kind: 'projects' }
  /** Persons of a team changed: those of these distinct ids, or any when the list is left out (too long to send). */
  | { kind: 'persons'; teamId: number; distinctIds?: string[] }
  /** Anything may have changed (the listener reconnected after missing notifications). */
  | { kind: 'all' }

export interface ChangeBus {
  /** Tells the other processes (never this one: it has already updated its own caches). */
  publish(change: Change): void
  /** Called for every change another process made. */
  subscribe(listener: (change: Change) => void): void
  close(): Promise<void>
}

export interface ChangeBusOptions {
  databaseUrl: string
  db: Kysely<any>
  /** Redis pub/sub instead of PostgreSQL's NOTIFY. */
  redisUrl?: string
  onError: (error: unknown) => void
  /** Delay before listening again after the connection dropped. */
  reconnectMs?: number
}

const isChange = (value: unknown): value is Change => {
  if (!value || typeof value !== 'object') return false
  const v = value as { kind?: unknown; teamId?: unknown }
  if (v.kind === 'projects' || v.kind === 'all') return true
  if (v.kind === 'persons') {
    const ids = (value as { distinctIds?: unknown }).distinctIds
    return (
      Number.isInteger(v.teamId) &&
      (ids === undefined || (Array.isArray(ids) && ids.every((d) => typeof d === 'string')))
    )
  }
  return (v.kind === 'flags' || v.kind === 'property-types') && Number.isInteger(v.teamId)
}

export function createChangeBus(options: ChangeBusOptions): ChangeBus {
  const listeners: ((change: Change) => void)[] = []
  const deliver = (change: Change) => {
    for (const listener of listeners) {
      try {
        listener(change)
      } catch (error) {
        options.onError(error)
      }
    }
  }
  const origin = randomUUID()
  const reconnectMs = options.reconnectMs ?? 1_000
  const encode = (change: Change): string => {
    const payload = JSON.stringify({ origin, change })
    // Too many distinct ids to name: the team's persons, all of them.
    if (change.kind === 'persons' && Buffer.byteLength(payload) > MAX_PAYLOAD) {
      return JSON.stringify({ origin, change: { kind: 'persons', teamId: change.teamId } })
    }
    return payload
  }
  const receive = (payload: string | undefined) => {
    if (!payload || payload.length > MAX_PAYLOAD) return
    let parsed: { origin?: unknown; change?: unknown }
    try {
      parsed = JSON.parse(payload)
    } catch {
      return
    }
    if (parsed.origin === origin || !isChange(parsed.change)) return
    deliver(parsed.change)
  }
  if (options.redisUrl)
    return redisBus(options.redisUrl, { encode, receive, deliver, listeners, reconnectMs, ...options })
  if (!options.databaseUrl.startsWith('postgres')) {
    return { publish() {}, subscribe: (l) => void listeners.push(l), close: async () => {} }
  }
  let client: pg.Client | undefined
  let closed = false
  let timer: NodeJS.Timeout | undefined
  let everConnected = false

  const listen = async () => {
    if (closed) return
    const next = new pg.Client({ connectionString: options.databaseUrl })
    client = next
    // An error on the listening connection (server restart, network) is reported once and listening resumes.
    next.on('error', (error) => {
      if (!closed) options.onError(error)
    })
    next.on('end', () => {
      if (closed || client !== next) return
      client = undefined
      timer = setTimeout(() => void listen(), reconnectMs)
    })
    next.on('notification', (message) => {
      if (message.channel === CHANGES_CHANNEL) receive(message.payload)
    })
    try {
      await next.connect()
      await next.query(`LISTEN ${CHANGES_CHANNEL}`)
      // Whatever was sent while this process was not listening is lost: drop everything once.
      if (everConnected) deliver({ kind: 'all' })
      everConnected = true
    } catch (error) {
      if (closed) return
      options.onError(error)
      client = undefined
      await next.end().catch(() => undefined)
      timer = setTimeout(() => void listen(), reconnectMs)
    }
  }
  const ready = listen()

  return {
    publish(change) {
      if (closed) return
      sql`SELECT pg_notify(${CHANGES_CHANNEL}, ${encode(change)})`.execute(options.db).catch(options.onError)
    },
    subscribe(listener) {
      listeners.push(listener)
    },
    async close() {
      closed = true
      clearTimeout(timer)
      await ready.catch(() => undefined)
      await client?.end().catch(() => undefined)
    },
  }
}

/**
 * The bus over Redis pub/sub. The client reconnects by itself (and subscribes again); whatever was published while
 * the subscribed connection was down is lost, so each reconnection tells every subscriber to drop everything. A
 * change published while this process cannot reach Redis is dropped (the outage is reported; no queue grows); the
 * other processes' caches then drop it at their time limits.
 */
function redisBus(
  url: string,
  parts: {
    encode: (change: Change) => string
    receive: (payload: string) => void
    deliver: (change: Change) => void
    listeners: ((change: Change) => void)[]
    reconnectMs: number
    onError: (error: unknown) => void
  },
): ChangeBus {
  let closed = false
  const options = {
    url,
    disableOfflineQueue: true,
    socket: { reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, parts.reconnectMs) },
  }
  const publisher = createClient(options)
  const subscriber = createClient(options)
  // A connection that drops emits an error at every failed attempt: reported once per outage.
  for (const client of [publisher, subscriber]) {
    let reported = false
    client.on('error', (error) => {
      if (closed || reported) return
      reported = true
      parts.onError(error)
    })
    client.on('ready', () => {
      reported = false
    })
  }
  let everReady = false
  subscriber.on('ready', () => {
    if (everReady) parts.deliver({ kind: 'all' })
    everReady = true
  })
  const ready = (async () => {
    await Promise.all([publisher.connect(), subscriber.connect()])
    await subscriber.subscribe(CHANGES_CHANNEL, (message) => parts.receive(message))
  })().catch((error) => {
    if (!closed) parts.onError(error)
  })
  return {
    publish(change) {
      if (closed || !publisher.isReady) return
      publisher.publish(CHANGES_CHANNEL, parts.encode(change)).catch(parts.onError)
    },
    subscribe(listener) {
      parts.listeners.push(listener)
    },
    async close() {
      closed = true
      for (const client of [subscriber, publisher]) {
        if (client.isReady) await client.close().catch(() => client.destroy())
        else if (client.isOpen) client.destroy()
      }
      // A first connection still being tried (Redis unreachable) is not waited for past a second.
      await Promise.race([ready, new Promise((r) => setTimeout(r, 1_000).unref())])
    },
  }
}
