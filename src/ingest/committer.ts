import { escapeTsv } from '../storage/events/params.js'
import { EVENT_COLUMNS } from '../storage/events/schema.js'
import type { EventStore } from '../storage/events/types.js'

/** One event row for the event store, as JSONEachRow serialises it. */
export interface EventRow {
  uuid: string
  team_id: number
  event: string
  distinct_id: string
  person_id: string
  properties: string
  timestamp: string
  created_at: string
  elements_chain: string
  $session_id: string
  $window_id: string
  $group_0: string
  $group_1: string
  $group_2: string
  $group_3: string
  $group_4: string
}

export interface CommitBatch {
  events: EventRow[]
  persons: object[]
  distinctIds: object[]
  groups: object[]
}

export interface CommitResult {
  /** Events written; the rest were already stored (a retried batch) and were skipped. */
  inserted: number
}

interface Pending {
  batch: CommitBatch
  resolve: (r: CommitResult) => void
  reject: (e: unknown) => void
}

/**
 * Group commit: requests that arrive while inserts run wait for the next one and share it, so the engine sees
 * a few large inserts instead of many small ones. A few flushes run side by side, since most of an insert's time
 * is the engine's fixed cost per insert, not work. A request's promise settles only after its rows are written,
 * so a 2xx always means stored. Events whose uuid is already stored are skipped (retries are safe); a flush
 * holding a uuid that another running flush writes waits for that one first, so the check sees it.
 */
export function createCommitter(deps: {
  events: EventStore
  maxRows?: number
  concurrency?: number
  /** How many recently written uuids to remember, so that only likely retries cost a look-up in the store. */
  recentIds?: number
}) {
  const maxRows = deps.maxRows ?? 20_000
  const concurrency = deps.concurrency ?? 1
  const recent = createRecentIds(deps.recentIds ?? 1_000_000)
  // Uuids written shortly before a restart are remembered too (a client may be retrying right now).
  const preload = deps.events
    .query<[number, string]>(
      `SELECT team_id, toString(uuid) FROM events WHERE created_at >= now64(6) - INTERVAL 1 HOUR
       ORDER BY created_at DESC LIMIT ${deps.recentIds ?? 1_000_000}`,
    )
    .then((r) => {
      for (const [team, uuid] of r.rows) recent.add(`${team}:${uuid}`)
    })
    .catch(() => undefined)
  const queue: Pending[] = []
  let queuedRows = 0
  const running = new Set<Promise<void>>()
  const inFlight = new Map<string, Promise<void>>()

  function schedule() {
    while (running.size < concurrency && queue.length > 0) {
      const take: Pending[] = []
      let rows = 0
      while (queue.length > 0 && (take.length === 0 || rows + queue[0].batch.events.length <= maxRows)) {
        const next = queue.shift() as Pending
        rows += next.batch.events.length
        take.push(next)
      }
      queuedRows -= rows
      const flushing: Promise<void> = flush(take).finally(() => {
        running.delete(flushing)
        schedule()
      })
      running.add(flushing)
    }
  }

  async function flush(items: Pending[]) {
    const mine = deferred()
    const events: EventRow[] = []
    try {
      const persons: object[] = []
      const distinctIds: object[] = []
      const groups: object[] = []
      for (const { batch } of items) {
        for (const e of batch.events) events.push(e)
        for (const p of batch.persons) persons.push(p)
        for (const d of batch.distinctIds) distinctIds.push(d)
        for (const g of batch.groups) groups.push(g)
      }
      const others = new Set<Promise<void>>()
      for (const e of events) {
        const other = inFlight.get(idOf(e))
        if (other) others.add(other)
      }
      if (others.size > 0) await Promise.allSettled(others)
      for (const e of events) inFlight.set(idOf(e), mine.promise)
      await preload
      // Only events whose uuid was written recently (by hash) may be retries: those are checked in the store.
      const suspects = events.filter((e) => recent.has(idOf(e)))
      const stored = suspects.length > 0 ? await storedIds(suspects) : []
      const seen = new Set<string>(stored)
      const fresh: EventRow[] = []
      for (const e of events) {
        const id = idOf(e)
        if (seen.has(id)) continue
        seen.add(id)
        fresh.push(e)
      }
      // Remembered before writing: if a write fails half-way, the client's retry is checked against the store.
      for (const e of fresh) recent.add(idOf(e))
      const writes: Promise<void>[] = []
      if (persons.length > 0) writes.push(deps.events.insertJsonEachRow('persons', ndjson(persons)))
      if (distinctIds.length > 0) writes.push(deps.events.insertJsonEachRow('person_distinct_ids', ndjson(distinctIds)))
      if (groups.length > 0) writes.push(deps.events.insertJsonEachRow('groups', ndjson(groups)))
      if (fresh.length > 0) writes.push(deps.events.insertTabSeparated('events', EVENT_COLUMNS, eventsTsv(fresh)))
      // Every write settles before the flush ends, failed or not: a retry's check must see the final state.
      const outcomes = await Promise.allSettled(writes)
      const failure = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected')
      if (failure) throw failure.reason
      // Each request learns how many of its own events were new.
      const freshIds = new Set(fresh.map(idOf))
      for (const item of items) {
        let inserted = 0
        for (const e of item.batch.events) {
          if (freshIds.delete(idOf(e))) inserted++
        }
        item.resolve({ inserted })
      }
    } catch (err) {
      release()
      if (items.length === 1) items[0].reject(err)
      else {
        // One request's rows must not fail the others that shared the insert: write each on its own.
        for (const item of items) await flush([item])
      }
    } finally {
      release()
    }

    function release() {
      for (const e of events) if (inFlight.get(idOf(e)) === mine.promise) inFlight.delete(idOf(e))
      mine.resolve()
    }
  }

  /** Which of these events (project and uuid) the store already holds, looking only at the days they cover. */
  async function storedIds(events: EventRow[]): Promise<string[]> {
    if (events.length === 0) return []
    const teams = [...new Set(events.map((e) => e.team_id))]
    let min = events[0].timestamp
    let max = events[0].timestamp
    for (const e of events) {
      if (e.timestamp < min) min = e.timestamp
      if (e.timestamp > max) max = e.timestamp
    }
    const result = await deps.events.query<[number, string]>(
      `SELECT team_id, toString(uuid) FROM events
       WHERE team_id IN {teams:Array(Int64)}
         AND toDate(timestamp) BETWEEN toDate({min:DateTime64(6)}) AND toDate({max:DateTime64(6)})
         AND uuid IN {uuids:Array(UUID)}`,
      { params: { teams, min, max, uuids: events.map((e) => e.uuid) } },
    )
    return result.rows.map(([team, uuid]) => `${team}:${uuid}`)
  }

  return {
    commit(batch: CommitBatch): Promise<CommitResult> {
      return new Promise<CommitResult>((resolve, reject) => {
        queue.push({ batch, resolve, reject })
        queuedRows += batch.events.length
        schedule()
      })
    },
    /** Resolves once everything queued so far is written. */
    async drain() {
      while (running.size > 0 || queue.length > 0) {
        schedule()
        await Promise.allSettled(running)
      }
    },
    get queuedRows() {
      return queuedRows
    },
  }
}

/** Events as TabSeparated text: cheaper to build than JSON (no second escaping of the properties' JSON). */
function eventsTsv(rows: EventRow[]): string {
  let out = ''
  for (const r of rows) {
    out += `${r.uuid}\t${r.team_id}\t${escapeTsv(r.event)}\t${escapeTsv(r.distinct_id)}\t${r.person_id}\t${r.properties.indexOf('\\') === -1 ? r.properties : escapeTsv(r.properties)}\t${r.timestamp}\t${r.created_at}\t${escapeTsv(r.elements_chain)}\t${escapeTsv(r.$session_id)}\t${escapeTsv(r.$window_id)}\t${escapeTsv(r.$group_0)}\t${escapeTsv(r.$group_1)}\t${escapeTsv(r.$group_2)}\t${escapeTsv(r.$group_3)}\t${escapeTsv(r.$group_4)}\n`
  }
  return out
}

/**
 * A bounded memory of recently written uuids, as 52-bit hashes: a miss means "certainly not written recently";
 * a hit means "maybe", to be confirmed in the store. Oldest entries go first.
 */
function createRecentIds(limit: number) {
  const hashes = new Set<number>()
  const hash = (uuid: string) => {
    let a = 0x811c9dc5
    let b = 0x01000193
    for (let i = 0; i < uuid.length; i++) {
      const c = uuid.charCodeAt(i)
      a = Math.imul(a ^ c, 0x01000193)
      b = Math.imul(b ^ c, 0x5bd1e995)
    }
    return (a >>> 0) * 0x100000 + ((b >>> 12) & 0xfffff)
  }
  return {
    has: (uuid: string) => hashes.has(hash(uuid)),
    add(uuid: string) {
      hashes.add(hash(uuid))
      if (hashes.size > limit) hashes.delete(hashes.values().next().value as number)
    },
  }
}

/** An event's identity for deduplication: the same uuid in two projects is two events. */
const idOf = (e: EventRow) => `${e.team_id}:${e.uuid}`

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

function ndjson(rows: object[]): string {
  let out = ''
  for (const row of rows) out += `${JSON.stringify(row, wellFormed)}\n`
  return out
}

/** Lone surrogates would reach ClickHouse as `\ud800` escapes, which it refuses: send U+FFFD instead. */
function wellFormed(_key: string, value: unknown): unknown {
  return typeof value === 'string' && !value.isWellFormed() ? value.toWellFormed() : value
}

export type Committer = ReturnType<typeof createCommitter>
