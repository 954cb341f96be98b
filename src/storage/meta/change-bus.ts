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
 * A notification can also be lost without a dropped connection (the sending process could not reach PostgreSQL or
 * Redis when it published). Every process therefore numbers what it publishes and writes its latest number to
 * `change_heads` about once a second, and reads the others' on the same beat: a number never heard by the next beat
 * drops everything, so a lost notification leaves a cache stale for two or three seconds, not until its time limit
 * (`change-gaps.ts`).
 *
 * With `REDIS_URL`, the same notifications go through Redis pub/sub instead (channel `burrow_changes`), on one
 * publishing and one subscribed connection per process; PostgreSQL is then not asked to notify.
 */
import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { sql } from 'kysely'
import pg from 'pg'
import { createClient } from 'redis'
import { createGapTracker } from './change-gaps.js'

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
  /** false: nothing is told or heard (one process alone; caches rely on their time limits). */
  enabled?: boolean
  onError: (error: unknown) => void
  /** Delay before listening again after the connection dropped. */
  reconnectMs?: number
  /** How often the heads are written and read (the safety net for lost notifications). */
  headsEveryMs?: number
}

/** Heads not moved for this long belong to processes long gone: read no more, and removed. */
const HEADS_KEPT_MS = 7 * 24 * 3600_000

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
  if (options.enabled === false) {
    return { publish() {}, subscribe: (l) => void listeners.push(l), close: async () => {} }
  }
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
  const gaps = createGapTracker()
  let seq = 0
  const encode = (change: Change): string => {
    seq++
    const payload = JSON.stringify({ origin, seq, change })
    // Too many distinct ids to name: the team's persons, all of them.
    if (change.kind === 'persons' && Buffer.byteLength(payload) > MAX_PAYLOAD) {
      return JSON.stringify({ origin, seq, change: { kind: 'persons', teamId: change.teamId } })
    }
    return payload
  }
  const receive = (payload: string | undefined) => {
    if (!payload || payload.length > MAX_PAYLOAD) return
    let parsed: { origin?: unknown; seq?: unknown; change?: unknown }
    try {
      parsed = JSON.parse(payload)
    } catch {
      return
    }
    if (parsed.origin === origin || !isChange(parsed.change)) return
    if (typeof parsed.origin === 'string' && typeof parsed.seq === 'number') gaps.heard(parsed.origin, parsed.seq)
    deliver(parsed.change)
  }
  // The heads live in the metadata store, which several processes share only on PostgreSQL.
  const heads = options.databaseUrl.startsWith('postgres')
    ? headsBeat(options.db, origin, () => seq, {
        everyMs: options.headsEveryMs ?? 1_000,
        onHeads: (read) => {
          if (gaps.beat(read)) deliver({ kind: 'all' })
        },
        onError: options.onError,
      })
    : undefined
  if (options.redisUrl) {
    const bus = redisBus(options.redisUrl, { encode, receive, deliver, listeners, reconnectMs, ...options })
    return withHeads(bus, heads)
  }
  if (!heads) {
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

  return withHeads(
    {
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
    },
    heads,
  )
}

/**
 * Starts the heads' beat at once, and stops it on close. Its first beat learns where every process stands (nothing
 * older can be cached here yet); a change sent after it and before this bus listens is then found missing, rightly.
 */
function withHeads(bus: ChangeBus, heads: HeadsBeat | undefined): ChangeBus {
  if (!heads) return bus
  heads.start()
  return {
    ...bus,
    async close() {
      await heads.stop()
      await bus.close()
    },
  }
}

interface HeadsBeat {
  start(): void
  stop(): Promise<void>
}

/**
 * Every `everyMs`: writes this process's head when it moved, reads the other processes' heads and hands them over.
 * One small upsert and one small read a second per process; an unreachable store is reported once per outage.
 */
function headsBeat(
  db: Kysely<any>,
  origin: string,
  head: () => number,
  options: { everyMs: number; onHeads: (heads: Map<string, number>) => void; onError: (error: unknown) => void },
): HeadsBeat {
  let written = 0
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  let stopped = false
  let failing = false
  let beats = 0
  const beat = async () => {
    const now = Date.now()
    const seq = head()
    if (seq !== written) {
      await db
        .insertInto('change_heads')
        .values({ origin, seq, updated_at: now })
        .onConflict((oc) => oc.column('origin').doUpdateSet({ seq, updated_at: now }))
        .execute()
      written = seq
    }
    const rows = await db
      .selectFrom('change_heads')
      .select(['origin', 'seq'])
      .where('origin', '!=', origin)
      .where('updated_at', '>', now - HEADS_KEPT_MS)
      .execute()
    options.onHeads(new Map(rows.map((r) => [String(r.origin), Number(r.seq)])))
    // Now and then, forget processes long gone.
    if (beats++ % 600 === 0) {
      await db
        .deleteFrom('change_heads')
        .where('updated_at', '<', now - HEADS_KEPT_MS)
        .execute()
    }
  }
  const next = () => {
    if (stopped) return
    timer = setTimeout(() => {
      running = beat()
        .then(() => {
          failing = false
        })
        .catch((error) => {
          if (!failing && !stopped) options.onError(error)
          failing = true
        })
        .finally(next)
    }, options.everyMs)
    timer.unref()
  }
  return {
    start() {
      if (stopped || timer) return
      running = beat().catch((error) => {
        failing = true
        if (!stopped) options.onError(error)
      })
      void running.finally(next)
    },
    async stop() {
      stopped = true
      clearTimeout(timer)
      await running
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
      if (closed) return
      // Numbered even when it cannot be sent: the others then find it missing from the heads.
      const payload = parts.encode(change)
      if (!publisher.isReady) return
      publisher.publish(CHANGES_CHANNEL, payload).catch(parts.onError)
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
