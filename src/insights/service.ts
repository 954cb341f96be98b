// Saved insights: a query node with a name and PostHog's short id, soft delete, tiles on dashboards through the
// `dashboards` field, results through the query service, and the activity log.
import crypto from 'node:crypto'
import type { ActivityStore } from '../activity/store.js'
import type { DashboardRow, DashboardStore, InsightTileRef } from '../dashboards/store.js'
import { NotFound, ValidationError } from '../http/errors.js'
import type { UserStore } from '../users/store.js'
import { type Actor, type Change, changesBetween, usersById } from './activity.js'
import { flag, idList, KIND_OF_TYPE, ORDERS, sourceKind } from './filters.js'
import {
  dashboardOverrides,
  type InsightResult,
  type InsightResults,
  parseJsonObject,
  type ResultContext,
  type ResultTeam,
} from './results.js'
import type { Insight, InsightBasic, InsightInput, InsightListQuery, UserBasic } from './schemas.js'
import type { InsightRow, InsightStore } from './store.js'

const SHORT_ID_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'

/** PostHog's `generate_short_id`: 8 random alphanumerics. */
export function generateShortId(): string {
  const bytes = crypto.randomBytes(8)
  let out = ''
  for (const byte of bytes) out += SHORT_ID_ALPHABET[byte % SHORT_ID_ALPHABET.length]
  return out
}

/** Fields whose change makes a new version of the insight (`last_modified_at`/`_by`). */
const MATERIAL_FIELDS = ['name', 'derived_name', 'description', 'query', 'filters'] as const
const LOGGED_FIELDS = [
  'name',
  'derived_name',
  'description',
  'query',
  'filters',
  'tags',
  'favorited',
  'saved',
  'deleted',
]

function parse<T>(text: string | null, fallback: T): T {
  if (text === null) return fallback
  try {
    return JSON.parse(text) as T
  } catch {
    return fallback
  }
}

export interface ReadOptions extends ResultContext {
  /** Serve `basic` list items: no result, no owner details beyond PostHog's basic serializer. */
  basic?: boolean
  /** The dashboard the insight is read on: its filters and variables apply. */
  dashboard?: Pick<DashboardRow, 'filters' | 'variables'>
  /** A query that cannot run gives an empty result and its `error` instead of failing the read (tiles). */
  lenient?: boolean
}

export type PresentedInsight = Insight & { error?: InsightResult['error'] }

export function createInsightService(deps: {
  insights: Pick<InsightStore, 'list' | 'get' | 'byIds' | 'shortIdTaken' | 'insert' | 'update'>
  dashboards: Pick<DashboardStore, 'get' | 'byIds' | 'tilesOfInsights' | 'insertTile' | 'updateTile'>
  users: Pick<UserStore, 'get'>
  activity: Pick<ActivityStore, 'log'>
  results: InsightResults
  upgrade: <T>(query: T) => T
  clock: () => Date
}) {
  async function load(teamId: number, id: number, includeDeleted = false): Promise<InsightRow> {
    const row = await deps.insights.get(teamId, id)
    if (!row || (row.deleted === 1 && !includeDeleted)) throw new NotFound()
    return row
  }

  /** Live tiles by insight id: removed tiles and tiles on deleted dashboards do not count. */
  async function tilesByInsight(teamId: number, ids: number[]): Promise<Map<number, InsightTileRef[]>> {
    const out = new Map<number, InsightTileRef[]>()
    for (const tile of await deps.dashboards.tilesOfInsights(teamId, ids)) {
      if (tile.deleted === 1) continue
      out.set(tile.insight_id, [...(out.get(tile.insight_id) ?? []), tile])
    }
    return out
  }

  function basicView(row: InsightRow, tiles: InsightTileRef[], users: Map<number, UserBasic>): InsightBasic {
    return {
      id: row.id,
      short_id: row.short_id,
      name: row.name,
      derived_name: row.derived_name,
      favorited: row.favorited === 1,
      filters: parse<Record<string, unknown>>(row.filters, {}),
      query: parse<Record<string, unknown> | null>(row.query, null),
      dashboards: tiles.map((t) => t.dashboard_id),
      dashboard_tiles: tiles.map((t) => ({
        id: t.id,
        dashboard_id: t.dashboard_id,
        deleted: t.deleted === null ? null : t.deleted === 1,
      })),
      description: row.description,
      last_refresh: null,
      refreshing: false,
      saved: row.saved === 1,
      updated_at: row.updated_at,
      created_by: (row.created_by !== null && users.get(row.created_by)) || null,
      created_at: row.created_at,
      last_modified_at: row.last_modified_at,
      tags: parse<string[]>(row.tags, []),
      user_access_level: 'editor',
      last_viewed_at: null,
    }
  }

  async function present(team: ResultTeam, rows: InsightRow[], options: ReadOptions = {}): Promise<PresentedInsight[]> {
    const tiles = await tilesByInsight(
      team.id,
      rows.map((r) => r.id),
    )
    const users = await usersById(
      deps.users,
      rows.flatMap((r) => [r.created_by, r.last_modified_by]),
    )
    const context = dashboardOverrides(options.dashboard, options)
    const out: PresentedInsight[] = []
    for (const row of rows) {
      const basic = basicView(row, tiles.get(row.id) ?? [], users)
      const { error, ...result } = await deps.results.resultFor(team, basic.query, context, options.lenient)
      out.push({
        ...basic,
        ...result,
        last_refresh: result.last_refresh,
        order: null,
        deleted: row.deleted === 1,
        last_modified_by: (row.last_modified_by !== null && users.get(row.last_modified_by)) || null,
        is_sample: false,
        effective_restriction_level: 21,
        effective_privilege_level: 37,
        alerts: [],
        ...(error && { error }),
      })
    }
    return out
  }

  async function checkDashboards(teamId: number, ids: number[]): Promise<Map<number, DashboardRow>> {
    const found = new Map((await deps.dashboards.byIds(teamId, ids)).map((d) => [d.id, d]))
    for (const id of ids) {
      const dashboard = found.get(id)
      if (!dashboard) throw new ValidationError(`Dashboard ${id} does not exist.`, 'dashboards', 'does_not_exist')
      if (dashboard.deleted === 1) {
        throw new ValidationError(`Dashboard ${id} has been deleted.`, 'dashboards', 'deleted_dashboard')
      }
    }
    return found
  }

  /** Puts the insight on exactly these dashboards: removes the other tiles, restores or adds the missing ones. */
  async function placeOnDashboards(teamId: number, insightId: number, wanted: number[]) {
    const tiles = await deps.dashboards.tilesOfInsights(teamId, [insightId])
    const now = deps.clock().toISOString()
    for (const tile of tiles) {
      if (tile.deleted !== 1 && !wanted.includes(tile.dashboard_id)) {
        await deps.dashboards.updateTile(teamId, tile.id, { deleted: 1 })
      }
    }
    for (const dashboardId of new Set(wanted)) {
      const onIt = tiles.filter((t) => t.dashboard_id === dashboardId)
      if (onIt.some((t) => t.deleted !== 1)) continue
      if (onIt.length > 0) await deps.dashboards.updateTile(teamId, onIt[0].id, { deleted: 0 })
      else {
        await deps.dashboards.insertTile({
          team_id: teamId,
          dashboard_id: dashboardId,
          insight_id: insightId,
          text_id: null,
          layouts: '{}',
          color: null,
          deleted: null,
          created_at: now,
        })
      }
    }
  }

  async function log(teamId: number, actor: Actor, row: InsightRow, activity: string, changes: Change[] | null) {
    await deps.activity.log({
      organizationId: actor.organizationId,
      teamId,
      userId: actor.userId,
      scope: 'Insight',
      itemId: String(row.id),
      activity,
      detail: { changes, trigger: null, type: null, name: row.name ?? row.derived_name, short_id: row.short_id },
      createdAt: deps.clock().toISOString(),
    })
  }

  function storedQuery(query: InsightInput['query']): string | null {
    if (query === undefined || query === null) return null
    return JSON.stringify(deps.upgrade(query))
  }

  async function dashboardNames(teamId: number, insightId: number) {
    const tiles = (await deps.dashboards.tilesOfInsights(teamId, [insightId])).filter((t) => t.deleted !== 1)
    return tiles.map((t) => ({ id: t.dashboard_id, name: t.dashboard_name }))
  }

  return {
    present,

    async list(team: ResultTeam, userId: number | null, query: InsightListQuery): Promise<InsightRow[]> {
      let createdBy: number[] | undefined
      if (query.created_by !== undefined) createdBy = idList(query.created_by, 'created_by')
      if (flag(query.user))
        createdBy = userId === null ? [] : [...(createdBy ?? [userId]).filter((id) => id === userId)]
      let rows = await deps.insights.list(team.id, {
        saved: flag(query.saved),
        favorited: flag(query.favorited),
        createdBy,
        shortId: query.short_id,
      })
      if (query.search) {
        const needle = query.search.toLowerCase()
        rows = rows.filter((r) =>
          [r.name, r.derived_name, r.description].some((v) => v?.toLowerCase().includes(needle)),
        )
      }
      if (query.insight !== undefined) {
        const type = query.insight.toUpperCase()
        const kind = KIND_OF_TYPE[type]
        if (!kind && type !== 'JSON') {
          throw new ValidationError(`"${query.insight}" is not a valid insight type.`, 'insight', 'invalid_choice')
        }
        rows = rows.filter((r) => {
          const legacy = parse<Record<string, unknown>>(r.filters, {}).insight
          const actual = sourceKind(parse(r.query, null))
          if (type === 'JSON') return actual !== undefined && !Object.values(KIND_OF_TYPE).includes(actual)
          return actual === kind || (actual === undefined && legacy === type)
        })
      }
      if (query.tags !== undefined) {
        const wanted = parse<unknown>(query.tags, undefined)
        if (!Array.isArray(wanted)) throw new ValidationError('tags must be a JSON list.', 'tags')
        rows = rows.filter((r) => parse<string[]>(r.tags, []).some((t) => wanted.includes(t)))
      }
      if (query.dashboards !== undefined) {
        const wanted = idList(query.dashboards, 'dashboards')
        const tiles = await tilesByInsight(
          team.id,
          rows.map((r) => r.id),
        )
        rows = rows.filter((r) => {
          const on = (tiles.get(r.id) ?? []).map((t) => t.dashboard_id)
          return wanted.every((id) => on.includes(id))
        })
      }
      if (query.order !== undefined) {
        const field = query.order.replace(/^-/, '')
        if (!(ORDERS as readonly string[]).includes(field)) {
          throw new ValidationError(`"${query.order}" is not a valid ordering.`, 'order', 'invalid_choice')
        }
        const key = field as (typeof ORDERS)[number]
        const sign = query.order.startsWith('-') ? -1 : 1
        rows = [...rows].sort((a, b) => sign * String(a[key] ?? '').localeCompare(String(b[key] ?? '')) || a.id - b.id)
      }
      return rows
    },

    basic: async (teamId: number, rows: InsightRow[]): Promise<InsightBasic[]> => {
      const tiles = await tilesByInsight(
        teamId,
        rows.map((r) => r.id),
      )
      const users = await usersById(
        deps.users,
        rows.map((r) => r.created_by),
      )
      return rows.map((r) => basicView(r, tiles.get(r.id) ?? [], users))
    },

    async get(team: ResultTeam, id: number, options: ReadOptions & { fromDashboard?: number }): Promise<Insight> {
      const row = await load(team.id, id)
      let dashboard = options.dashboard
      if (options.fromDashboard !== undefined) {
        const found = await deps.dashboards.get(team.id, options.fromDashboard)
        if (!found || found.deleted === 1) {
          throw new ValidationError('Dashboard not found.', 'from_dashboard', 'does_not_exist')
        }
        dashboard = found
      }
      return (await present(team, [row], { ...options, dashboard }))[0]
    },

    async create(team: ResultTeam, actor: Actor, input: InsightInput): Promise<Insight> {
      if (input.dashboards) await checkDashboards(team.id, input.dashboards)
      const now = deps.clock().toISOString()
      let shortId = generateShortId()
      while (await deps.insights.shortIdTaken(team.id, shortId)) shortId = generateShortId()
      const row = await deps.insights.insert({
        team_id: team.id,
        short_id: shortId,
        name: input.name ?? null,
        derived_name: input.derived_name ?? null,
        description: input.description ?? null,
        query: storedQuery(input.query),
        filters: JSON.stringify(input.filters ?? {}),
        tags: JSON.stringify([...new Set(input.tags ?? [])].sort()),
        favorited: input.favorited ? 1 : 0,
        saved: input.saved ? 1 : 0,
        deleted: input.deleted ? 1 : 0,
        created_by: actor.userId,
        created_at: now,
        updated_at: now,
        last_modified_at: now,
        last_modified_by: actor.userId,
      })
      if (input.dashboards) await placeOnDashboards(team.id, row.id, input.dashboards)
      // PostHog logs nothing for an insight without a name: the web app creates (and drops) unnamed drafts.
      if (row.name || row.derived_name) await log(team.id, actor, row, 'created', null)
      return (await present(team, [row]))[0]
    },

    /** PATCH: changes the given fields; `deleted: true` soft-deletes, `deleted: false` restores. */
    async update(team: ResultTeam, actor: Actor, id: number, input: InsightInput, context: ResultContext = {}) {
      const before = await load(team.id, id, true)
      if (before.deleted === 1 && input.deleted !== false) throw new NotFound()
      if (input.dashboards) await checkDashboards(team.id, input.dashboards)
      const now = deps.clock().toISOString()
      const patch: Partial<InsightRow> = {}
      if (input.name !== undefined) patch.name = input.name
      if (input.derived_name !== undefined) patch.derived_name = input.derived_name
      if (input.description !== undefined) patch.description = input.description
      if (input.query !== undefined) patch.query = storedQuery(input.query)
      if (input.filters !== undefined) patch.filters = JSON.stringify(input.filters)
      if (input.tags !== undefined) patch.tags = JSON.stringify([...new Set(input.tags)].sort())
      if (input.favorited !== undefined) patch.favorited = input.favorited ? 1 : 0
      if (input.saved !== undefined) patch.saved = input.saved ? 1 : 0
      if (input.deleted !== undefined) patch.deleted = input.deleted ? 1 : 0

      const view = (row: Partial<InsightRow>) => ({
        name: row.name,
        derived_name: row.derived_name,
        description: row.description,
        query: row.query === undefined ? undefined : parse(row.query, null),
        filters: row.filters === undefined ? undefined : parse(row.filters, {}),
        tags: row.tags === undefined ? undefined : parse(row.tags, []),
        favorited: row.favorited === undefined ? undefined : row.favorited === 1,
        saved: row.saved === undefined ? undefined : row.saved === 1,
        deleted: row.deleted === undefined ? undefined : row.deleted === 1,
      })
      const afterView = Object.fromEntries(Object.entries(view(patch)).filter(([, v]) => v !== undefined))
      const changes = changesBetween('Insight', view(before), afterView, LOGGED_FIELDS)
      const material = MATERIAL_FIELDS.some((f) => changes.some((c) => c.field === f))

      const dashboardsBefore = await dashboardNames(team.id, id)
      if (input.dashboards) await placeOnDashboards(team.id, id, input.dashboards)
      const dashboardsAfter = input.dashboards ? await dashboardNames(team.id, id) : dashboardsBefore
      const sortById = (list: { id: number }[]) => [...list].sort((a, b) => a.id - b.id)
      if (JSON.stringify(sortById(dashboardsBefore)) !== JSON.stringify(sortById(dashboardsAfter))) {
        changes.push({
          type: 'Insight',
          action: 'changed',
          field: 'dashboards',
          before: sortById(dashboardsBefore),
          after: sortById(dashboardsAfter),
        })
      }

      const saved = await deps.insights.update(team.id, id, {
        ...patch,
        updated_at: now,
        ...(material && { last_modified_at: now, last_modified_by: actor.userId }),
      })
      if (changes.length > 0) {
        const activity = patch.deleted === 1 && before.deleted === 0 ? 'deleted' : 'updated'
        await log(team.id, actor, saved, activity, changes)
      }
      return (await present(team, [saved], context))[0]
    },

    parseOverrides(query: { filters_override?: string; variables_override?: string }): ResultContext {
      return {
        filtersOverride: parseJsonObject(query.filters_override, 'filters_override'),
        variablesOverride: parseJsonObject(query.variables_override, 'variables_override'),
      }
    },
  }
}
export type InsightService = ReturnType<typeof createInsightService>
