import fs from 'node:fs'
import { escapeTsv } from '../storage/events/params.js'
import { EVENT_COLUMNS } from '../storage/events/schema.js'
import type { EventStore } from '../storage/events/types.js'
import { createRecentIds } from './recent-ids.js'
import { openWal, parseSegment, type WalRecord, type WalSegment } from './wal.js'

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

/** A request waiting for its round of a group commit. */
export interface Pending {
  batch: CommitBatch
  resolve: (r: CommitResult) => void
  reject: (e: unknown) => void
}

/**
 * The next round of a group commit, taken off the front of `queue`: requests in order while their events fit in
 * `maxRows` (a single larger request goes alone).
 */
export function takeRound(queue: Pending[], maxRows: number): { take: Pending[]; rows: number } {
  const take: Pending[] = []
  let rows = 0
  while (queue.length > 0 && (take.length === 0 || rows + queue[0].batch.events.length <= maxRows)) {
    const next = queue.shift() as Pending
    rows += next.batch.events.length
    take.push(next)
  }
  return { take, rows }
}

/**
 * Acknowledges a round's requests, each with how many of its own events were new: `ids` are the round's events'
 * ids in request order (each request's consecutive), `freshIds` those that were written.
 */
export function acknowledgeRound(items: readonly Pending[], ids: readonly string[], freshIds: readonly string[]) {
  if (freshIds.length === ids.length) {
    // Every event was new (the common case): each request wrote all of its own.
    for (const item of items) item.resolve({ inserted: item.batch.events.length })
    return
  }
  const remaining = new Set(freshIds)
  let at = 0
  for (const item of items) {
    let inserted = 0
    for (let k = 0; k < item.batch.events.length; k++) if (remaining.delete(ids[at++])) inserted++
    item.resolve({ inserted })
  }
}

/**
 * Group commit through the capture log. Requests that arrive while a flush runs wait for the next one and share
 * it: their rows are checked for retries (a uuid already stored or already logged is skipped), appended to the
 * log in one write, and only then acknowledged, so a 2xx means the rows survive a crash. The log is moved into
 * the event store in large inserts (every `drainDelayMs`, or at once past `drainRows`), and `flushPending()`
 * moves it at once for readers that must see every acknowledged event. Segments left by a crash are replayed at
 * start, skipping rows the store already has.
 */
export function createCommitter(deps: {
  events: EventStore
  walDir: string
  maxRows?: number
  concurrency?: number
  /** How many recently written uuids to remember, so that only likely retries cost a look-up in the store. */
  recentIds?: number
  drainRows?: number
  drainDelayMs?: number
  /**
   * While a segment cannot be moved into the store (the engine is down), the open segment is closed and set aside
   * on disk past this many bytes, and read back when its turn comes: memory stays bounded however long it lasts.
   */
  spillBytes?: number
  onError?: (err: unknown, what: string) => void
}): Committer {
  const maxRows = deps.maxRows ?? 20_000
  const concurrency = deps.concurrency ?? 1
  const drainRows = deps.drainRows ?? 10_000
  // A second's rows per insert at most rates (10,000 rows first at high ones): the engine's cost per row roughly
  // doubles from 10,000-row to 1,000-row inserts (more parts to write and merge). Readers never wait for it: a
  // query drains the log first (`flushPending`).
  const drainDelayMs = deps.drainDelayMs ?? 1_000
  const spillBytes = deps.spillBytes ?? 64 << 20
  const onError = deps.onError ?? (() => undefined)
  const recent = createRecentIds(deps.recentIds ?? 1_000_000)
  const wal = openWal(deps.walDir)
  const rowsText = createTsvArena()
  // Uuids written shortly before a restart are remembered too (a client may be retrying right now). Read when the
  // first capture comes, not at start: an embedded event store opens on first need, and this is not one.
  let preload: Promise<void> | undefined
  /** Whether the uuids written before this start are known (the preload settled). */
  let preloadDone = false
  const preloaded = () =>
    (preload ??= deps.events
      .query<[number, string]>(
        `SELECT team_id, toString(uuid) FROM events WHERE created_at >= now64(6) - INTERVAL 1 HOUR
         ORDER BY created_at DESC LIMIT ${deps.recentIds ?? 1_000_000}`,
      )
      .then((r) => {
        for (const [team, uuid] of r.rows) recent.add(`${team}:${uuid}`)
      })
      .catch(() => undefined)
      .finally(() => {
        preloadDone = true
      }))
  /**
   * Events logged before the preload settled, of the open segment: one may be a retry of an event stored before
   * the start, so they are checked against the store when their segment is drained. Acknowledging them does not
   * wait for the preload, which opens the embedded engine (half a second after a start, every request waited).
   */
  let openUnchecked: EventRow[] = []
  const queue: Pending[] = []
  let queuedRows = 0
  const running = new Set<Promise<void>>()
  /** With concurrent flushes: the flush each event id is being written by (a retry waits for it). */
  const inFlight = new Map<string, Promise<void>>()
  /**
   * Events in the log and not yet in the store (exactly: these are certain duplicates of a retry), a set per
   * segment: the open one's, and those of closed segments not yet stored. A segment's set is dropped whole once
   * it is stored (deleting tens of thousands of ids one by one made the set rebuild its table again and again).
   */
  let openIds = new Set<string>()
  const closedIds: Set<string>[] = []
  const isLogged = (id: string) => {
    if (openIds.has(id)) return true
    for (const ids of closedIds) if (ids.has(id)) return true
    return false
  }
  let openBytes = 0
  /** Rows appended since the last drain was asked for. */
  let segmentRows = 0
  /**
   * Segments closed while a drain was stuck, oldest first, with their events' ids: on disk only once their
   * rotation is done (queued at once, so that a drain never passes over one still being closed).
   */
  const spilled: { rotation: Promise<string | undefined>; ids: Set<string>; unchecked: EventRow[] }[] = []
  /** A drain asked for and not started yet: later requests join it rather than queue more. */
  let queuedRun: Promise<void> | undefined
  let draining: Promise<void> | undefined
  let drainTimer: NodeJS.Timeout | undefined
  let closed = false
  let closing = false
  const recovery = recover()

  function schedule() {
    while (running.size < concurrency && queue.length > 0) {
      const { take, rows } = takeRound(queue, maxRows)
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
    let eventIds: string[] = []
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
      // Each event's identity, computed once (it is looked up several times below).
      const ids = new Array<string>(events.length)
      for (let i = 0; i < events.length; i++) ids[i] = idOf(events[i])
      eventIds = ids
      if (concurrency > 1) {
        const others = new Set<Promise<void>>()
        for (const id of ids) {
          const other = inFlight.get(id)
          if (other) others.add(other)
        }
        if (others.size > 0) await Promise.allSettled(others)
        for (const id of ids) inFlight.set(id, mine.promise)
      }
      const idsKnown = preloadDone
      if (!idsKnown) void preloaded()
      await recovery
      // Logged events are certain duplicates; of the rest, only uuids written recently (by hash) may be retries,
      // and those are checked in the store.
      // Read before the look-up: a segment stored meanwhile is no longer logged, and its events not looked up.
      const wasLogged = ids.map(isLogged)
      const suspects = events.filter((_, i) => !wasLogged[i] && recent.has(ids[i]))
      // Only while the look-up was awaited can another flush have logged one of these ids.
      const lookedUp = suspects.length > 0
      const seen = new Set<string>(lookedUp ? await storedIds(suspects) : [])
      const fresh: EventRow[] = []
      const freshIds: string[] = []
      for (let i = 0; i < events.length; i++) {
        const id = ids[i]
        if (seen.has(id) || wasLogged[i] || (lookedUp && isLogged(id))) continue
        seen.add(id)
        fresh.push(events[i])
        freshIds.push(id)
      }
      const records: WalRecord[] = []
      if (persons.length > 0) records.push(jsonRecord('persons', persons))
      if (distinctIds.length > 0) records.push(jsonRecord('person_distinct_ids', distinctIds))
      if (groups.length > 0) records.push(jsonRecord('groups', groups))
      // Written to the open segment's buffer and appended to the log in the same synchronous run, so that the
      // rows land in the segment that their buffer belongs to (see drainLog).
      if (fresh.length > 0) records.push({ table: 'events', format: 'TabSeparated', payload: rowsText.write(fresh) })
      if (!idsKnown) for (const row of fresh) openUnchecked.push(row)
      // Remembered before writing: a retry of a half-written append is checked against the store.
      for (const id of freshIds) {
        recent.add(id)
        openIds.add(id)
      }
      segmentRows += fresh.length
      for (const record of records) openBytes += record.payload.length
      if (records.length > 0) {
        try {
          await wal.append(records)
        } catch (err) {
          // Not in the log after all (the segment may have been closed meanwhile: its set too).
          for (const id of freshIds) {
            openIds.delete(id)
            for (const ids of closedIds) ids.delete(id)
          }
          throw err
        }
        scheduleDrain()
      }
      acknowledgeRound(items, ids, freshIds)
    } catch (err) {
      release()
      if (items.length === 1) items[0].reject(err)
      else {
        // One request's rows must not fail the others that shared the append: write each on its own.
        for (const item of items) await flush([item])
      }
    } finally {
      release()
    }

    function release() {
      if (concurrency > 1) for (const id of eventIds) if (inFlight.get(id) === mine.promise) inFlight.delete(id)
      mine.resolve()
    }
  }

  function scheduleDrain() {
    if (closed) return
    if (draining && openBytes >= spillBytes) spill()
    if (segmentRows >= drainRows) drainInBackground()
    else drainTimer ??= setTimeout(drainInBackground, drainDelayMs)
  }

  /** A closed segment is in the store: its events are no longer only in the log. */
  function forget(ids: Set<string>) {
    const at = closedIds.indexOf(ids)
    if (at >= 0) closedIds.splice(at, 1)
  }

  /** Closes the open segment now; it is read back from disk when a drain gets to it. */
  function spill() {
    const { ids, unchecked, release } = closeOpenSegment()
    const rotation = wal.rotate().then(
      (segment) => {
        // Its rows are on disk: the in-memory copy and its buffer go.
        release()
        return segment?.file
      },
      (err) => {
        onError(err, 'setting a capture log segment aside')
        return undefined
      },
    )
    spilled.push({ rotation, ids, unchecked })
  }

  /** Ends the open segment's run of ids and rows; call in the same synchronous run as `wal.rotate()`. */
  function closeOpenSegment() {
    const ids = openIds
    openIds = new Set()
    closedIds.push(ids)
    openBytes = 0
    const unchecked = openUnchecked
    openUnchecked = []
    return { ids, unchecked, release: rowsText.seal() }
  }

  function drainInBackground() {
    drainLog().catch((err) => onError(err, 'moving the capture log into the event store'))
  }

  /** Moves the open segment into the store; one drain at a time, each waiting for the one before. */
  function drainLog(): Promise<void> {
    if (drainTimer) clearTimeout(drainTimer)
    drainTimer = undefined
    segmentRows = 0
    // A run that has not started yet will close the open segment when it does: it covers this request too.
    if (queuedRun) return queuedRun
    // A drain that failed (its segment stays on disk for replay) does not keep the next ones from running.
    const previous = (draining ?? Promise.resolve()).catch(() => undefined)
    const run: Promise<void> = previous
      .then(() => recovery)
      .then(async () => {
        if (queuedRun === run) queuedRun = undefined
        // Segments set aside go first: they are older than the open one.
        while (spilled.length > 0) {
          const { rotation, ids, unchecked } = spilled[0]
          const file = await rotation
          try {
            if (file) {
              const segment = { file, records: parseSegment(await fs.promises.readFile(file)) }
              const checked = await withoutStored(segment, unchecked)
              if (!checked || !(await insertSegment(checked))) return
              forget(ids)
            }
          } catch (err) {
            // Left on disk for the next start (which skips what is stored already); its events stay logged.
            onError(err, `moving the capture log segment ${file} into the event store`)
          }
          spilled.shift()
        }
        // Appends made from here on go to the next segment, and their rows to another buffer.
        const { ids, unchecked, release } = closeOpenSegment()
        const segment = await wal.rotate()
        const checked = segment && (await withoutStored(segment, unchecked))
        const stored = checked ? await insertSegment(checked) : !segment
        release()
        if (stored) forget(ids)
      })
      .finally(() => {
        if (draining === run) draining = undefined
        if (queuedRun === run) queuedRun = undefined
      })
    draining = run
    queuedRun = run
    return run
  }

  /**
   * The segment without the events of `unchecked` that the store already has (retries of events stored before
   * this start, logged before the preload told of them). Waited for while the engine cannot answer; undefined when
   * shutting down meanwhile (the segment stays on disk, and the next start's replay skips what is stored).
   */
  async function withoutStored(segment: WalSegment, unchecked: EventRow[]): Promise<WalSegment | undefined> {
    if (unchecked.length === 0) return segment
    let stored: Set<string>
    for (let attempt = 0; ; attempt++) {
      try {
        stored = new Set(await storedIds(unchecked))
        break
      } catch (err) {
        onError(err, 'checking logged events against the event store')
        if (closing) return undefined
        await new Promise((r) => setTimeout(r, Math.min(5_000, 200 * 2 ** Math.min(attempt, 5))))
      }
    }
    if (stored.size === 0) return segment
    const records: WalRecord[] = []
    for (const record of segment.records) {
      if (record.table !== 'events') {
        records.push(record)
        continue
      }
      // TabSeparated escapes newlines inside values: a row is a line, its first fields the uuid and the project.
      const kept = record.payload
        .toString()
        .split('\n')
        .filter((line) => {
          if (line === '') return false
          const [uuid, team] = line.split('\t', 2)
          return !stored.has(`${team}:${uuid}`)
        })
      if (kept.length > 0) records.push({ ...record, payload: Buffer.from(`${kept.join('\n')}\n`) })
    }
    return { ...segment, records }
  }

  /**
   * Inserts a segment's records (by table, in as few inserts as possible) and removes it. A table whose insert
   * failed is retried alone (the others are in already, and must not be written twice). False when shutting down
   * left it on disk for the next start.
   */
  async function insertSegment(segment: WalSegment): Promise<boolean> {
    let remaining = segment.records
    let refusals = 0
    let unreachable = 0
    while (remaining.length > 0) {
      const failed = await insertByTable(remaining)
      remaining = failed.records
      if (remaining.length === 0) break
      onError(failed.error, 'moving captured events into the event store')
      // An engine that does not answer (a restart, a network cut) is waited for, however long: the log keeps
      // everything, later segments queue behind this one, and capture goes on acknowledging.
      if (!(await deps.events.ping())) {
        // Shutting down: the segment stays on disk and is replayed at the next start.
        if (closing) return false
        await new Promise((r) => setTimeout(r, Math.min(5_000, 200 * 2 ** Math.min(unreachable++, 5))))
        continue
      }
      if (++refusals >= 3) break
      await new Promise((r) => setTimeout(r, 200 * refusals))
    }
    // The engine answers but refuses: record by record, so that one it refuses cannot hold back the others.
    const refused: WalRecord[] = []
    for (const record of remaining) {
      const failed = await insertByTable([record])
      if (failed.error) {
        onError(failed.error, `inserting a logged ${record.table} record`)
        refused.push(record)
      }
    }
    if (refused.length > 0) {
      onError(new Error(`kept ${refused.length} refused records in ${wal.quarantine(segment, refused)}`), 'capture log')
    }
    wal.remove(segment)
    return true
  }

  /** One insert per table; returns the records of the tables whose insert failed. */
  async function insertByTable(records: WalRecord[]): Promise<{ records: WalRecord[]; error?: unknown }> {
    const byTable = new Map<string, WalRecord[]>()
    for (const record of records) {
      const list = byTable.get(record.table) ?? []
      list.push(record)
      byTable.set(record.table, list)
    }
    const failed: WalRecord[] = []
    let error: unknown
    // One table after another, never side by side: each insert keeps a thread of the pool busy parsing and writing
    // for as long as it runs, and with new persons (three tables) three of them at once left the request thread
    // a third of the two cores a small machine has. Every write settles before the drain goes on, failed or not.
    for (const [table, list] of byTable) {
      const payload = joined(list.map((r) => r.payload))
      try {
        if (list[0].format === 'TabSeparated') await deps.events.insertTabSeparated(table, EVENT_COLUMNS, payload)
        else await deps.events.insertJsonEachRow(table, payload)
      } catch (err) {
        error ??= err
        failed.push(...list)
      }
    }
    return { records: failed, error }
  }

  /** Replays segments a crash left behind; events the store already has are skipped. */
  async function recover(): Promise<void> {
    for (const segment of wal.recover()) {
      try {
        const records: WalRecord[] = []
        for (const record of segment.records) {
          if (record.table !== 'events') {
            records.push(record)
            continue
          }
          const lines = record.payload
            .toString()
            .split('\n')
            .filter((line) => line !== '')
          const rows = lines.map((line) => {
            const fields = line.split('\t')
            return { line, uuid: fields[0], team_id: Number(fields[1]), timestamp: fields[6] }
          })
          const stored = new Set(await storedIds(rows))
          const missing = rows.filter((r) => !stored.has(`${r.team_id}:${r.uuid}`))
          for (const r of rows) recent.add(`${r.team_id}:${r.uuid}`)
          if (missing.length > 0) {
            const payload = Buffer.from(`${missing.map((r) => r.line).join('\n')}\n`)
            records.push({ table: 'events', format: 'TabSeparated', payload })
          }
        }
        await insertSegment({ file: segment.file, records })
      } catch (err) {
        onError(err, `replaying capture log ${segment.file}`)
      }
    }
  }

  function storedIds(events: readonly Pick<EventRow, 'team_id' | 'uuid' | 'timestamp'>[]): Promise<string[]> {
    return storedEventIds(deps.events, events)
  }

  return {
    commit(batch: CommitBatch): Promise<CommitResult> {
      return new Promise<CommitResult>((resolve, reject) => {
        queue.push({ batch, resolve, reject })
        queuedRows += batch.events.length
        schedule()
      })
    },
    /** Resolves once every event acknowledged so far is in the event store. */
    async flushPending(): Promise<void> {
      await recovery
      if (segmentRows > 0 || openBytes > 0 || spilled.length > 0 || drainTimer) await drainLog()
      else if (draining) await draining
    },
    /** Resolves once everything queued so far is acknowledged and in the event store. */
    async drain() {
      while (running.size > 0 || queue.length > 0) {
        schedule()
        await Promise.allSettled(running)
      }
      await drainLog()
    },
    async close() {
      closing = true
      await this.drain()
      closed = true
      if (drainTimer) clearTimeout(drainTimer)
      await wal.close()
    },
    get queuedRows() {
      return queuedRows
    },
    releaseIdleBuffers() {
      rowsText.releaseSpares()
    },
    /** The capture log not yet moved into the event store: rows and bytes of the open segment, closed segments. */
    get logBacklog() {
      return { rows: segmentRows, bytes: openBytes, closedSegments: spilled.length }
    },
  }
}

/**
 * The event store as readers in this process see it: a query first waits until every acknowledged capture is
 * in the store, so a 2xx is followed by the events in the next query's answer.
 */
export function readingAfterCapture(
  store: EventStore,
  committer: Pick<Committer, 'flushPending'>,
  maxWaitMs = 10_000,
): EventStore {
  return {
    ...store,
    async query(sql, options) {
      // Bounded: with the engine unreachable the log waits for it, and the query would only fail after it.
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<void>((r) => {
        timer = setTimeout(r, maxWaitMs)
      })
      await Promise.race([committer.flushPending(), timeout])
      clearTimeout(timer)
      return store.query(sql, options)
    },
  }
}

/** One event as a TabSeparated row: cheaper to build than JSON (no second escaping of the properties' JSON). */
export function tsvRow(r: EventRow): [head: string, properties: string, tail: string] {
  return [
    `${r.uuid}\t${r.team_id}\t${escapeTsv(r.event)}\t${escapeTsv(r.distinct_id)}\t${r.person_id}\t`,
    r.properties.indexOf('\\') === -1 ? r.properties : escapeTsv(r.properties),
    `\t${r.timestamp}\t${r.created_at}\t${escapeTsv(r.elements_chain)}\t${escapeTsv(r.$session_id)}\t${escapeTsv(r.$window_id)}\t${escapeTsv(r.$group_0)}\t${escapeTsv(r.$group_1)}\t${escapeTsv(r.$group_2)}\t${escapeTsv(r.$group_3)}\t${escapeTsv(r.$group_4)}\n`,
  ]
}

/**
 * The open segment's event rows as TabSeparated bytes, encoded row by row into one large buffer that is used
 * again once its segment is in the store. One segment's appends are then adjacent in memory and go to the engine
 * as one view, without copying ({@link joined}). Building each flush's rows as one string instead made V8 flatten
 * megabyte strings and allocate fresh megabyte buffers for them and for the joined insert, many times a second:
 * new memory the kernel must fault in and zero each time (about a tenth of the server's CPU at full load).
 */
export function createTsvArena(initialBytes = 4 << 20, keepBytes = 64 << 20) {
  const spare: Buffer[] = []
  let buffer: Buffer = Buffer.allocUnsafe(initialBytes)
  let used = 0
  return {
    /** Encodes the rows after those written before; returns a view of their bytes. */
    write(rows: readonly EventRow[]): Buffer {
      let start = used
      for (const r of rows) {
        // In three parts: the properties' JSON is already one flat string, and is encoded without being copied
        // into a joined row string first.
        const [head, properties, tail] = tsvRow(r)
        const units = head.length + properties.length + tail.length
        // At most three UTF-8 bytes per UTF-16 unit: with this much room the write is never cut short.
        if (used + units * 3 > buffer.length) {
          // A larger buffer; this call's rows move along so that they stay one run.
          const larger = Buffer.allocUnsafe(Math.max(buffer.length * 2, (used - start + units * 3) * 2))
          buffer.copy(larger, 0, start, used)
          used -= start
          start = 0
          buffer = larger
        }
        used += buffer.write(head, used)
        used += buffer.write(properties, used)
        used += buffer.write(tail, used)
      }
      return buffer.subarray(start, used)
    },
    /**
     * Ends the current segment's run: later rows go to another buffer. The returned function hands this one back
     * for reuse; call it once nothing reads the segment's views any more.
     */
    seal(): () => void {
      if (used === 0) return () => undefined
      const sealed = buffer
      buffer = spare.pop() ?? Buffer.allocUnsafe(Math.min(sealed.length, keepBytes))
      used = 0
      return () => {
        if (spare.length < 2 && sealed.length <= keepBytes) spare.push(sealed)
      }
    },
    /** Lets the spare buffers go, and an empty current one grown past its first size (the process is idle). */
    releaseSpares(): void {
      spare.length = 0
      if (used === 0 && buffer.length > initialBytes) buffer = Buffer.allocUnsafe(initialBytes)
    },
  }
}

/** The payloads one after another: a view when they already lie one after another in memory, else a copy. */
export function joined(parts: readonly Buffer[]): Buffer {
  if (parts.length === 1) return parts[0]
  let length = parts[0].length
  for (let i = 1; i < parts.length; i++) {
    const before = parts[i - 1]
    const part = parts[i]
    if (part.buffer !== before.buffer || before.byteOffset + before.length !== part.byteOffset) {
      return Buffer.concat(parts)
    }
    length += part.length
  }
  return Buffer.from(parts[0].buffer, parts[0].byteOffset, length)
}

/** Which of these events (project and uuid) the store already holds, looking only at the days they cover. */
export async function storedEventIds(
  store: EventStore,
  events: readonly Pick<EventRow, 'team_id' | 'uuid' | 'timestamp'>[],
): Promise<string[]> {
  if (events.length === 0) return []
  const teams = [...new Set(events.map((e) => e.team_id))]
  let min = events[0].timestamp
  let max = events[0].timestamp
  for (const e of events) {
    if (e.timestamp < min) min = e.timestamp
    if (e.timestamp > max) max = e.timestamp
  }
  const result = await store.query<[number, string]>(
    `SELECT team_id, toString(uuid) FROM events
     WHERE team_id IN {teams:Array(Int64)}
       AND toDate(timestamp) BETWEEN toDate({min:DateTime64(6)}) AND toDate({max:DateTime64(6)})
       AND uuid IN {uuids:Array(UUID)}`,
    { params: { teams, min, max, uuids: events.map((e) => e.uuid) } },
  )
  return result.rows.map(([team, uuid]) => `${team}:${uuid}`)
}

/** An event's identity for deduplication: the same uuid in two projects is two events. */
export const idOf = (e: EventRow) => `${e.team_id}:${e.uuid}`

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

function jsonRecord(table: string, rows: object[]): WalRecord {
  return { table, format: 'JSONEachRow', payload: Buffer.from(ndjson(rows)) }
}

export function ndjson(rows: object[]): string {
  let out = ''
  for (const row of rows) {
    // A replacer takes JSON.stringify off its fast path: used only for a row whose text shows a lone surrogate's
    // escape (`\ud800` to `\udfff`; an escaped backslash before "ud" matches too, and costs only the slower path).
    const text = JSON.stringify(row)
    out += `${text.includes('\\ud') ? JSON.stringify(row, wellFormed) : text}\n`
  }
  return out
}

/** Lone surrogates would reach ClickHouse as `\ud800` escapes, which it refuses: send U+FFFD instead. */
function wellFormed(_key: string, value: unknown): unknown {
  return typeof value === 'string' && !value.isWellFormed() ? value.toWellFormed() : value
}

/** What capture writes through: the capture log (embedded) or the server directly (server mode). */
export interface Committer {
  commit(batch: CommitBatch): Promise<CommitResult>
  /** Resolves once every event acknowledged so far is in the event store. */
  flushPending(): Promise<void>
  /** Resolves once everything queued so far is acknowledged and in the event store. */
  drain(): Promise<void>
  close(): Promise<void>
  readonly queuedRows: number
  /** Lets buffers kept for the next busy spell go (called when the process has been idle a while). */
  releaseIdleBuffers?(): void
  /** Rows and bytes held between acknowledgement and the event store. */
  readonly logBacklog: { rows: number; bytes: number; closedSegments: number }
}
