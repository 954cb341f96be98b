import { EVENT_COLUMNS } from '../storage/events/schema.js'
import type { EventStore } from '../storage/events/types.js'
import {
  acknowledgeRound,
  type CommitBatch,
  type CommitResult,
  type Committer,
  type EventRow,
  idOf,
  ndjson,
  type Pending,
  storedEventIds,
  takeRound,
  tsvRow,
} from './committer.js'
import { createRecentIds } from './recent-ids.js'

/**
 * Capture in server mode: no disk of this process's own. Requests that arrive while inserts run wait and share the
 * next round (group commit, as the capture log does), whose rows go to the ClickHouse server in one insert per
 * table; each request is acknowledged only once the server has taken every one of its rows. A failed insert fails
 * the requests (the SDKs retry), and a retry finds its events already stored and skips them. Each round is a
 * synchronous insert: the server's asynchronous inserts would batch what the group commit batches already, and
 * add their flush wait to every acknowledgement.
 *
 * What is deduplicated: a uuid this process wrote recently is looked up before it is written again. A retry that
 * another process takes is written a second time; it lands on the same shard (events are sharded by distinct id)
 * with the same sort key, and the replacing merge keeps one.
 */
export function createDirectCommitter(deps: {
  events: EventStore
  /** Rows per insert round, at most (a single larger request goes alone). */
  maxRows?: number
  /** Insert rounds at once. */
  concurrency?: number
  recentIds?: number
}): Committer {
  const maxRows = deps.maxRows ?? 20_000
  const concurrency = deps.concurrency ?? 4
  const recent = createRecentIds(deps.recentIds ?? 1_000_000)
  const queue: Pending[] = []
  let queuedRows = 0
  const running = new Set<Promise<void>>()
  /** The round each event id is being written by: a retry that arrives meanwhile waits for it. */
  const inFlight = new Map<string, Promise<void>>()
  let closed = false

  function schedule() {
    while (running.size < concurrency && queue.length > 0) {
      const { take, rows } = takeRound(queue, maxRows)
      queuedRows -= rows
      const round: Promise<void> = write(take).finally(() => {
        running.delete(round)
        schedule()
      })
      running.add(round)
    }
  }

  async function write(items: Pending[]): Promise<void> {
    let done!: () => void
    const mine = new Promise<void>((r) => {
      done = r
    })
    const events: EventRow[] = []
    const persons: object[] = []
    const distinctIds: object[] = []
    const groups: object[] = []
    for (const { batch } of items) {
      for (const e of batch.events) events.push(e)
      for (const p of batch.persons) persons.push(p)
      for (const d of batch.distinctIds) distinctIds.push(d)
      for (const g of batch.groups) groups.push(g)
    }
    const ids = events.map(idOf)
    try {
      const others = new Set<Promise<void>>()
      for (const id of ids) {
        const other = inFlight.get(id)
        if (other) others.add(other)
      }
      if (others.size > 0) await Promise.allSettled(others)
      for (const id of ids) inFlight.set(id, mine)
      const suspects = events.filter((_, i) => recent.has(ids[i]))
      const seen = new Set<string>(suspects.length > 0 ? await storedEventIds(deps.events, suspects) : [])
      const fresh: EventRow[] = []
      const freshIds: string[] = []
      for (let i = 0; i < events.length; i++) {
        if (seen.has(ids[i])) continue
        seen.add(ids[i])
        fresh.push(events[i])
        freshIds.push(ids[i])
      }
      const inserts: Promise<void>[] = []
      if (persons.length > 0) inserts.push(deps.events.insertJsonEachRow('persons', ndjson(persons)))
      if (distinctIds.length > 0) {
        inserts.push(deps.events.insertJsonEachRow('person_distinct_ids', ndjson(distinctIds)))
      }
      if (groups.length > 0) inserts.push(deps.events.insertJsonEachRow('groups', ndjson(groups)))
      if (fresh.length > 0) inserts.push(deps.events.insertTabSeparated('events', EVENT_COLUMNS, tsv(fresh)))
      // Every insert settles before the requests learn the outcome: none is acknowledged on a partial write.
      const outcomes = await Promise.allSettled(inserts)
      const failed = outcomes.find((o) => o.status === 'rejected')
      if (failed) throw failed.reason
      for (const id of freshIds) recent.add(id)
      acknowledgeRound(items, ids, freshIds)
    } catch (err) {
      release()
      if (items.length === 1) items[0].reject(err)
      // One request's rows must not fail the others that shared the round: each is written on its own.
      else for (const item of items) await write([item])
    } finally {
      release()
    }

    function release() {
      for (const id of ids) if (inFlight.get(id) === mine) inFlight.delete(id)
      done()
    }
  }

  async function drain(): Promise<void> {
    while (running.size > 0 || queue.length > 0) {
      schedule()
      await Promise.allSettled(running)
    }
  }

  return {
    commit(batch: CommitBatch): Promise<CommitResult> {
      if (closed) return Promise.reject(new Error('capture is closed'))
      return new Promise<CommitResult>((resolve, reject) => {
        queue.push({ batch, resolve, reject })
        queuedRows += batch.events.length
        schedule()
      })
    },
    /** Every acknowledged event is in the event store already. */
    async flushPending(): Promise<void> {},
    /** Resolves once everything queued so far is written (or refused). */
    drain,
    async close() {
      await drain()
      closed = true
    },
    get queuedRows() {
      return queuedRows
    },
    /** No log: nothing is held between acknowledgement and the store. */
    get logBacklog() {
      return { rows: 0, bytes: 0, closedSegments: 0 }
    },
  }
}

function tsv(rows: readonly EventRow[]): string {
  let out = ''
  for (const r of rows) {
    const [head, properties, tail] = tsvRow(r)
    out += head + properties + tail
  }
  return out
}
