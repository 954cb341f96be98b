import { extractDefinitions } from '../definitions/extract.js'
import { ApiError, AuthenticationError, QuotaExceeded, ValidationError } from '../http/errors.js'
import type { OrganizationStore } from '../organizations/store.js'
import type { ProjectRow, ProjectStore } from '../projects/store.js'
import type { CommitResult, Committer, EventRow } from './committer.js'
import { createShapeMemory } from './event-shapes.js'
import type { GeoIp } from './geoip.js'
import {
  CaptureValidationError,
  isDroppedEvent,
  isHistoricallyValid,
  type NormalizedEvent,
  normalizeEvent,
} from './normalize.js'
import type { PersonProcessor } from './persons.js'
import type { UsageStore } from './usage-store.js'

export interface Discovery {
  eventName: string
  eventProperties: { name: string; type: string | null }[]
  personProperties: { name: string; type: string | null }[]
  groupProperties: { groupTypeIndex: number; name: string; type: string | null }[]
}

export interface CaptureInput {
  token: string | undefined
  events: unknown[]
  /** Positions in `events` refused before parsing (nested too deep): left out, the rest are stored. */
  skipped?: ReadonlySet<number>
  historicalMigration: boolean
  sentAt?: string
  ip?: string
  /** The request carried a list of events (attrs then name `batch__<i>__<field>`). */
  isBatch?: boolean
}

const TOKEN_CACHE_MS = 30_000
const BACKGROUND_INTERVAL_MS = 250

const chTime = (d: Date) => d.toISOString().replace('T', ' ').replace('Z', '')

/**
 * Capture: validate a whole request first (one bad event rejects the request and stores nothing, so a client may
 * retry it whole), then persons and groups, then one shared insert. An event nested too deep to parse safely is the
 * exception: the decoder cut it out already, so it is skipped alone and the request answers which. Definitions
 * discovery and usage counting run off the hot path, in a background loop that `close()` drains.
 */
export function createIngestService(deps: {
  projects: Pick<ProjectStore, 'getByToken'>
  organizations: Pick<OrganizationStore, 'get'>
  persons: PersonProcessor
  committer: Committer
  usage: UsageStore
  geoip?: GeoIp
  recordDiscoveries?: (teamId: number, items: Discovery[], seenAt: Date) => Promise<void>
  clock: () => Date
  onError: (err: unknown, what: string) => void
}) {
  const tokens = new Map<string, { project: ProjectRow | undefined; at: number }>()
  const pendingDiscoveries = new Map<number, Discovery[]>()
  const pendingUsage = new Map<string, { billable: number; historical: number; month: string }>()
  /** Persons and groups whose event-store copy may be missing after a failed insert, to write again. */
  const pendingRemirror: { teamId: number; distinctIds: string[]; groups: { index: number; key: string }[] }[] = []
  /** Event shapes already handed to discovery this hour (most events repeat one). */
  const shapes = createShapeMemory()
  let backgroundRun: Promise<void> | undefined
  const timer = setInterval(() => void runBackground(), BACKGROUND_INTERVAL_MS)
  timer.unref()

  async function projectFor(token: string | undefined): Promise<ProjectRow> {
    if (!token) {
      throw new ApiError(
        401,
        'authentication_error',
        'missing_api_key',
        'API key not provided. You can find your project API key in PostHog project settings.',
      )
    }
    const now = Date.now()
    let entry = tokens.get(token)
    if (!entry || now - entry.at > TOKEN_CACHE_MS) {
      entry = { project: await deps.projects.getByToken(token), at: now }
      if (tokens.size > 10_000) tokens.clear()
      tokens.set(token, entry)
    }
    if (!entry.project) {
      throw new AuthenticationError(
        'Project API key invalid. You can find your project API key in your project settings.',
        'authentication_failed',
      )
    }
    return entry.project
  }

  /** GeoIP as PostHog's plugin adds it: on the event, and onto the person with `$set` / `$set_once` ($initial_…). */
  function enrichWithGeo(ev: NormalizedEvent) {
    if (!deps.geoip || ev.properties.$geoip_disable === true) return
    const ip = ev.properties.$ip
    if (typeof ip !== 'string' || ip === '') return
    const geo = geoFor(ip)
    if (!geo) return
    for (const k in geo.props) if (ev.properties[k] === undefined) ev.properties[k] = geo.props[k]
    if (!ev.processPerson) return
    // What the event sets itself wins over the lookup.
    for (const k in geo.props) if (!(k in ev.setProps)) ev.setProps[k] = geo.props[k]
    for (const k in geo.initial) if (!(k in ev.setOnceProps)) ev.setOnceProps[k] = geo.initial[k]
    ev.properties.$set = ev.setProps
    ev.properties.$set_once = ev.setOnceProps
  }

  const geoCache = new Map<string, { props: Record<string, unknown>; initial: Record<string, unknown> } | null>()
  function geoFor(ip: string) {
    let entry = geoCache.get(ip)
    if (entry === undefined) {
      const props = deps.geoip?.lookup(ip) ?? {}
      const keys = Object.keys(props)
      const initial: Record<string, unknown> = {}
      for (const k of keys) initial[`$initial_${k.slice(1)}`] = props[k]
      entry = keys.length > 0 ? { props, initial } : null
      if (geoCache.size >= 10_000) geoCache.clear()
      geoCache.set(ip, entry)
    }
    return entry
  }

  function countUsage(project: ProjectRow, historical: boolean, inserted: number) {
    if (inserted > 0) {
      const month = deps.clock().toISOString().slice(0, 7)
      const key = `${project.organization_id}|${month}`
      const usage = pendingUsage.get(key) ?? { billable: 0, historical: 0, month }
      if (historical) usage.historical += inserted
      else usage.billable += inserted
      pendingUsage.set(key, usage)
    }
  }

  function queueDiscovery(project: ProjectRow, events: NormalizedEvent[]) {
    if (!deps.recordDiscoveries) return
    let list = pendingDiscoveries.get(project.id)
    if (!list) {
      list = []
      pendingDiscoveries.set(project.id, list)
    }
    const now = deps.clock().getTime()
    const nowSeconds = Math.floor(now / 1000)
    const hour = Math.floor(now / 3_600_000)
    for (const ev of events) {
      if (!shapes.isNew(project.id, ev, hour)) continue
      const found = extractDefinitions(ev, nowSeconds)
      if (found) list.push({ ...found, groupProperties: found.groupProperties as never })
    }
  }

  async function runBackground(): Promise<void> {
    if (backgroundRun) return backgroundRun
    backgroundRun = (async () => {
      for (const job of pendingRemirror.splice(0)) {
        try {
          const mirror = await deps.persons.remirror(job.teamId, job.distinctIds, job.groups)
          await deps.committer.commit({ events: [], ...mirror })
        } catch (err) {
          deps.onError(err, 'rewriting persons to the event store')
          pendingRemirror.push(job)
        }
      }
      const usage = [...pendingUsage.entries()]
      pendingUsage.clear()
      for (const [key, u] of usage) {
        try {
          await deps.usage.add(key.split('|')[0], u.month, u.billable, u.historical)
        } catch (err) {
          deps.onError(err, 'usage counting')
          const again = pendingUsage.get(key) ?? { billable: 0, historical: 0, month: u.month }
          again.billable += u.billable
          again.historical += u.historical
          pendingUsage.set(key, again)
        }
      }
      const discoveries = [...pendingDiscoveries.entries()]
      pendingDiscoveries.clear()
      for (const [teamId, items] of discoveries) {
        try {
          const types = await deps.persons.groupTypeIndexes(teamId)
          const resolved: Discovery[] = items.map((item) => ({
            ...item,
            groupProperties: (
              item.groupProperties as unknown as { groupType: string; name: string; type: string | null }[]
            )
              .filter((g) => types.has(g.groupType))
              .map((g) => ({ groupTypeIndex: types.get(g.groupType) as number, name: g.name, type: g.type })),
          }))
          await deps.recordDiscoveries?.(teamId, resolved, deps.clock())
        } catch (err) {
          deps.onError(err, 'definitions discovery')
          // Keep them for the next round: an update is never dropped.
          const list = pendingDiscoveries.get(teamId) ?? []
          list.push(...items)
          pendingDiscoveries.set(teamId, list)
        }
      }
    })().finally(() => {
      backgroundRun = undefined
    })
    return backgroundRun
  }

  return {
    projectFor,

    async capture(input: CaptureInput): Promise<CommitResult> {
      const now = deps.clock()
      const skipped = input.skipped
      const leftOut = (i: number) => skipped?.has(i) === true || isDroppedEvent(input.events[i])
      let count = 0
      for (let i = 0; i < input.events.length; i++) if (!leftOut(i)) count++
      if (count <= 0) {
        await projectFor(input.token)
        return { inserted: 0 }
      }

      const events: NormalizedEvent[] = new Array(count)
      for (let i = 0, n = 0; i < input.events.length; i++) {
        if (leftOut(i)) continue
        try {
          // Errors name the event by its position in the request (`i`), not among the events kept.
          events[n++] = normalizeEvent(input.events[i], i, { now, sentAt: input.sentAt, ip: input.ip })
        } catch (err) {
          if (err instanceof CaptureValidationError)
            throw toValidationError(err, input.isBatch ?? input.events.length > 1)
          throw err
        }
      }
      // The request is checked whole before its key, as PostHog's capture parses it first: a malformed body is a
      // 400 whether or not it names a project.
      const project = await projectFor(input.token)

      // `historical_migration` marks an import: events at least 48 hours old are imported without the standard
      // fee; younger ones (posthog-node sends every event with the flag when the option is on) are ordinary events.
      let historical = 0
      if (input.historicalMigration) {
        for (const ev of events) if (isHistoricallyValid(ev, now)) historical++
        if (historical > 0) {
          const org = await deps.organizations.get(project.organization_id)
          if (org?.plan !== 'paid') {
            throw new QuotaExceeded(
              'Historical imports require a paid product analytics plan. Upgrade the organization to import historical events.',
            )
          }
        }
      }

      if (deps.geoip) {
        // The GeoIP database of an address's version is read on its first lookup (once per process).
        for (const ev of events) {
          const ip = ev.properties.$geoip_disable === true ? undefined : ev.properties.$ip
          const opening = typeof ip === 'string' ? deps.geoip.prepare(ip) : undefined
          if (opening) await opening
        }
      }
      for (const ev of events) enrichWithGeo(ev)
      const processed = await deps.persons.process(project.id, events)
      // Learned before the insert: the parsed events are not kept alive while the request waits for its group
      // commit (a shape learned from a request that then fails is learned again from its retry).
      queueDiscovery(project, events)
      const { mirror } = processed
      // What to write to the event store again should the insert fail: the metadata store has the changes.
      const remirror =
        mirror.persons.length + mirror.distinctIds.length + mirror.groups.length > 0
          ? {
              teamId: project.id,
              distinctIds: [...new Set(events.filter((e) => e.processPerson).map((e) => e.distinctId))],
              groups: (mirror.groups as { group_type_index: number; group_key: string }[]).map((g) => ({
                index: g.group_type_index,
                key: g.group_key,
              })),
            }
          : undefined
      const createdAt = chTime(now)
      const rows: EventRow[] = new Array(events.length)
      for (let i = 0; i < events.length; i++) {
        rows[i] = eventRow(events[i], project.id, processed.personIds[i], processed.groupColumns[i], createdAt)
      }
      let result: CommitResult
      try {
        result = await deps.committer.commit({ events: rows, ...mirror })
      } catch (err) {
        if (remirror) pendingRemirror.push(remirror)
        throw err
      }
      // A retried request may have skipped some rows; the historical ones are counted first.
      const historicalInserted = Math.min(historical, result.inserted)
      countUsage(project, true, historicalInserted)
      countUsage(project, false, result.inserted - historicalInserted)
      return result
    },

    /** Writes pending usage counts and definitions now (tests, shutdown). */
    flushBackground: async () => {
      await runBackground()
      await runBackground()
    },

    async close() {
      clearInterval(timer)
      await deps.committer.drain()
      await runBackground()
      await runBackground()
    },
  }
}

/** An event's row for the event store (its properties serialised once, here). */
export function eventRow(
  ev: NormalizedEvent,
  teamId: number,
  personId: string,
  groups: string[],
  createdAt: string,
): EventRow {
  return {
    uuid: ev.uuid,
    team_id: teamId,
    event: ev.event,
    distinct_id: ev.distinctId,
    person_id: personId,
    properties: JSON.stringify(ev.properties),
    timestamp: chTime(ev.timestamp),
    created_at: createdAt,
    elements_chain: ev.elementsChain,
    $session_id: ev.sessionId ?? '',
    $window_id: ev.windowId ?? '',
    $group_0: groups[0],
    $group_1: groups[1],
    $group_2: groups[2],
    $group_3: groups[3],
    $group_4: groups[4],
  }
}

function batchAttr(index: number, attr: string | null): string {
  return attr ? `batch__${index}__${attr}` : `batch__${index}`
}

function toValidationError(err: CaptureValidationError, isBatch: boolean): ValidationError {
  const attr = err.index === null ? err.attr : isBatch ? batchAttr(err.index, err.attr) : err.attr
  return new ValidationError(err.message, attr, 'invalid_payload')
}

export type IngestService = ReturnType<typeof createIngestService>
