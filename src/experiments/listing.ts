// The read side of experiments: the list with PostHog's filters and ordering, velocity stats, and the flags an
// experiment can use.
import type { FeatureFlag } from '../flags/schemas.js'
import type { FlagService } from '../flags/service.js'
import type { FlagRow, FlagStore } from '../flags/store.js'
import { ValidationError } from '../http/errors.js'
import { statusOf } from './context.js'
import { localMidnight } from './local-time.js'
import type { ExperimentRow, ExperimentStore } from './store.js'
import { isEligibleFlag, ORDER_FIELDS, parse } from './validation.js'

/** The event names a metric counts: its source, ratio sides, funnel steps and retention events that are events. */
export function metricEvents(metric: unknown): Set<string> {
  const out = new Set<string>()
  const add = (node: unknown) => {
    if (!node || typeof node !== 'object') return
    const n = node as { kind?: unknown; event?: unknown }
    if ((n.kind === undefined || n.kind === 'EventsNode') && typeof n.event === 'string') out.add(n.event)
  }
  if (metric && typeof metric === 'object') {
    const m = metric as Record<string, unknown>
    for (const key of ['source', 'numerator', 'denominator', 'start_event', 'completion_event']) add(m[key])
    if (Array.isArray(m.series)) m.series.forEach(add)
  }
  return out
}

export function createExperimentListing(deps: {
  store: Pick<ExperimentStore, 'list'>
  flags: Pick<FlagService, 'toApi'>
  flagRows: Pick<FlagStore, 'allForTeam'>
  projectTimezone: (teamId: number) => Promise<string>
  clock: () => Date
}) {
  const { store } = deps
  return {
    async list(
      teamId: number,
      query: {
        status?: string
        archived?: string
        search?: string
        created_by_id?: number
        feature_flag_id?: number
        prompt_name?: string
        event?: string
        order?: string
      },
    ) {
      const rows = await store.list(teamId, {
        archived: query.archived === undefined ? false : query.archived === 'true',
        search: query.search,
        createdById: query.created_by_id,
        featureFlagId: query.feature_flag_id,
      })
      const flags = new Map((await deps.flagRows.allForTeam(teamId)).map((f) => [f.id, f]))
      let filtered = rows
      // PostHog matches `parameters.prompt_metadata.name` exactly; an empty value filters nothing.
      if (query.prompt_name) {
        const name = query.prompt_name
        filtered = filtered.filter(
          (r) =>
            parse<{ prompt_metadata?: { name?: unknown } } | null>(r.parameters, null)?.prompt_metadata?.name === name,
        )
      }
      // An event name: the experiments with a primary or secondary metric on that event (exact name).
      if (query.event) {
        const event = query.event
        filtered = filtered.filter((r) =>
          [r.metrics, r.metrics_secondary].some((text) =>
            parse<unknown[]>(text, []).some((m) => metricEvents(m).has(event)),
          ),
        )
      }
      const status = query.status === 'complete' ? 'stopped' : query.status
      if (status && status !== 'all') {
        if (!['draft', 'running', 'paused', 'stopped'].includes(status)) {
          throw new ValidationError(`"${query.status}" is not a valid choice.`, 'status', 'invalid_choice')
        }
        filtered = filtered.filter((r) => {
          const s = statusOf(r, flags.get(r.feature_flag_id))
          return status === 'running' ? s === 'running' : s === status
        })
      }
      if (query.order) {
        const desc = query.order.startsWith('-')
        const field = desc ? query.order.slice(1) : query.order
        if (!ORDER_FIELDS.includes(field)) {
          throw new ValidationError(`Invalid order field: ${field}`, 'order', 'invalid_choice')
        }
        const now = deps.clock().getTime()
        const rank = { draft: 0, running: 1, paused: 1, stopped: 2 } as Record<string, number>
        const keyOf = (r: ExperimentRow): string | number | null => {
          if (field === 'duration') {
            if (r.start_date === null) return null
            return (r.end_date ? Date.parse(r.end_date) : now) - Date.parse(r.start_date)
          }
          if (field === 'status') return rank[statusOf(r, flags.get(r.feature_flag_id))]
          if (field === 'created_by') return r.created_by
          return r[field as keyof ExperimentRow] as string | null
        }
        filtered = [...filtered].sort((a, b) => {
          const x = keyOf(a)
          const y = keyOf(b)
          // nulls last ascending, first descending (PostgreSQL's default)
          if (x === y) return 0
          if (x === null) return desc ? -1 : 1
          if (y === null) return desc ? 1 : -1
          return (x < y ? -1 : 1) * (desc ? -1 : 1)
        })
      }
      return filtered
    },

    /** Velocity: launches in the last 30 days vs the 30 before, running now, completed in the last 30 days. */
    async stats(teamId: number) {
      const rows = await store.list(teamId, { archived: false })
      const tz = await deps.projectTimezone(teamId)
      const today = localMidnight(deps.clock(), tz)
      const day = 86_400_000
      const inRange = (d: string | null, from: number, to: number) =>
        d !== null && Date.parse(d) >= from && Date.parse(d) < to
      const t = today.getTime()
      const last = rows.filter((r) => inRange(r.start_date, t - 30 * day, t + day)).length
      const previous = rows.filter((r) => inRange(r.start_date, t - 60 * day, t - 30 * day)).length
      const percent = previous === 0 ? (last > 0 ? 100 : 0) : Math.round(((last - previous) / previous) * 1000) / 10
      return {
        launched_last_30d: last,
        launched_previous_30d: previous,
        percent_change: percent,
        active_experiments: rows.filter((r) => r.start_date !== null && r.end_date === null).length,
        completed_last_30d: rows.filter((r) => inRange(r.end_date, t - 30 * day, t + day)).length,
      }
    },

    async eligibleFlags(
      teamId: number,
      query: {
        search?: string
        active?: string
        created_by_id?: number
        evaluation_runtime?: string
        has_evaluation_tags?: string
        order?: string
      },
    ): Promise<FlagRow[]> {
      let flags = (await deps.flagRows.allForTeam(teamId)).filter((f) => f.deleted === 0 && isEligibleFlag(f))
      // Survey-internal flags and product tours are not experiment flags.
      flags = flags.filter((f) => !f.key.startsWith('survey-targeting-') && !f.key.startsWith('product-tour-'))
      if (query.search) {
        const s = query.search.toLowerCase()
        flags = flags.filter((f) => f.key.toLowerCase().includes(s) || f.name.toLowerCase().includes(s))
      }
      if (query.active === 'true' || query.active === 'false')
        flags = flags.filter((f) => (f.active === 1) === (query.active === 'true'))
      if (query.created_by_id !== undefined) flags = flags.filter((f) => f.created_by === query.created_by_id)
      if (query.evaluation_runtime) flags = flags.filter((f) => f.evaluation_runtime === query.evaluation_runtime)
      if (query.has_evaluation_tags === 'true' || query.has_evaluation_tags === 'false') {
        flags = flags.filter(
          (f) => parse<string[]>(f.evaluation_tags, []).length > 0 === (query.has_evaluation_tags === 'true'),
        )
      }
      const order = query.order || '-created_at'
      const desc = order.startsWith('-')
      const field = (desc ? order.slice(1) : order) as keyof FlagRow
      if (!['created_at', 'updated_at', 'key', 'name', 'id'].includes(field)) {
        throw new ValidationError(`Invalid order field: ${String(field)}`, 'order', 'invalid_choice')
      }
      return flags.sort((a, b) => {
        const x = a[field] as string | number
        const y = b[field] as string | number
        if (x === y) return (a.id - b.id) * (desc ? -1 : 1)
        return (x < y ? -1 : 1) * (desc ? -1 : 1)
      })
    },
    flagApi: (flag: FlagRow): Promise<FeatureFlag> => deps.flags.toApi(flag),
  }
}
export type ExperimentListing = ReturnType<typeof createExperimentListing>
