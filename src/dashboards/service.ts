// Dashboards: tiles of insights and text cards, filters and variables applied to every tile's query when read
// with results, soft delete (optionally taking the insights that live only here with it), and the activity log.
import type { ActivityStore } from '../activity/store.js'
import { ApiError, NotFound, ValidationError } from '../http/errors.js'
import { type Actor, type Change, changesBetween, usersById } from '../insights/activity.js'
import { dashboardOverrides, type ResultContext, type ResultTeam } from '../insights/results.js'
import type { UserBasic } from '../insights/schemas.js'
import type { InsightService } from '../insights/service.js'
import type { InsightStore } from '../insights/store.js'
import { dateToHogQL, propertiesToHogQL } from '../queries/filters.js'
import type { UserStore } from '../users/store.js'
import type {
  Dashboard,
  DashboardBasic,
  DashboardFilters,
  DashboardInput,
  DashboardListQuery,
  Tile,
  TileInput,
} from './schemas.js'
import type { DashboardRow, DashboardStore, TextRow, TileRow } from './store.js'

const LOGGED_FIELDS = ['name', 'description', 'pinned', 'tags', 'filters', 'variables', 'deleted']

function parse<T>(text: string | null, fallback: T): T {
  if (text === null) return fallback
  try {
    return JSON.parse(text) as T
  } catch {
    return fallback
  }
}

/** Checks the filters as the query compiler will read them, so a bad filter is a 400 on save, not on every read. */
export function checkFilters(filters: DashboardFilters, attr = 'filters'): DashboardFilters {
  const rethrow = (fn: () => unknown) => {
    try {
      fn()
    } catch (error) {
      if (error instanceof ApiError) throw new ValidationError(error.detail, attr)
      throw error
    }
  }
  rethrow(() => dateToHogQL(filters.date_from, attr))
  rethrow(() => dateToHogQL(filters.date_to, attr))
  rethrow(() => propertiesToHogQL(filters.properties ?? undefined))
  return filters
}

export function createDashboardService(deps: {
  dashboards: Pick<
    DashboardStore,
    | 'list'
    | 'get'
    | 'insert'
    | 'update'
    | 'tilesOf'
    | 'insertTile'
    | 'updateTile'
    | 'textsByIds'
    | 'insertText'
    | 'updateText'
    | 'tilesOfInsights'
  >
  insights: Pick<InsightStore, 'byIds' | 'markDeleted'>
  present: InsightService['present']
  users: Pick<UserStore, 'get'>
  activity: Pick<ActivityStore, 'log'>
  clock: () => Date
}) {
  async function load(teamId: number, id: number, includeDeleted = false): Promise<DashboardRow> {
    const row = await deps.dashboards.get(teamId, id)
    if (!row || (row.deleted === 1 && !includeDeleted)) throw new NotFound()
    return row
  }

  function basicView(row: DashboardRow, users: Map<number, UserBasic>): DashboardBasic {
    return {
      id: row.id,
      name: row.name,
      description: row.description,
      pinned: row.pinned === 1,
      created_at: row.created_at,
      created_by: (row.created_by !== null && users.get(row.created_by)) || null,
      last_accessed_at: row.last_accessed_at,
      is_shared: false,
      deleted: row.deleted === 1,
      creation_mode: 'default',
      tags: parse<string[]>(row.tags, []),
      restriction_level: 21,
      effective_restriction_level: 21,
      effective_privilege_level: 37,
      user_access_level: 'editor',
      access_control_version: 'v2',
      last_refreshed: null,
      team_id: row.team_id,
    }
  }

  async function tilesView(team: ResultTeam, row: DashboardRow, context: ResultContext): Promise<Tile[]> {
    const tiles = (await deps.dashboards.tilesOf(team.id, row.id)).filter((t) => t.deleted !== 1)
    const insightIds = tiles.flatMap((t) => (t.insight_id === null ? [] : [t.insight_id]))
    const insights = new Map(
      (await deps.insights.byIds(team.id, insightIds)).filter((i) => i.deleted === 0).map((i) => [i.id, i]),
    )
    const texts = new Map(
      (
        await deps.dashboards.textsByIds(
          team.id,
          tiles.flatMap((t) => (t.text_id === null ? [] : [t.text_id])),
        )
      ).map((t) => [t.id, t]),
    )
    const users = await usersById(
      deps.users,
      [...texts.values()].flatMap((t) => [t.created_by, t.last_modified_by]),
    )
    const textView = (text: TextRow) => ({
      id: text.id,
      body: text.body,
      created_by: (text.created_by !== null && users.get(text.created_by)) || null,
      last_modified_at: text.last_modified_at,
      last_modified_by: (text.last_modified_by !== null && users.get(text.last_modified_by)) || null,
    })
    const overrides = dashboardOverrides(row, context)
    const out: Tile[] = []
    for (const [order, tile] of tiles.entries()) {
      const base = {
        id: tile.id,
        layouts: parse<Record<string, unknown>>(tile.layouts, {}),
        color: tile.color,
        deleted: tile.deleted === null ? null : tile.deleted === 1,
        order,
      }
      if (tile.insight_id !== null) {
        const insight = insights.get(tile.insight_id)
        if (!insight) continue
        const [view] = await deps.present(team, [insight], { ...overrides, lenient: true })
        const { error, ...shown } = view
        out.push({
          ...base,
          insight: shown,
          text: null,
          is_cached: shown.is_cached,
          last_refresh: shown.last_refresh,
          error: error ?? null,
        })
      } else {
        const text = tile.text_id === null ? undefined : texts.get(tile.text_id)
        if (!text) continue
        out.push({ ...base, insight: null, text: textView(text), is_cached: false, last_refresh: null, error: null })
      }
    }
    return out
  }

  async function fullView(team: ResultTeam, row: DashboardRow, context: ResultContext): Promise<Dashboard> {
    const users = await usersById(deps.users, [row.created_by])
    const persistedFilters = parse<Record<string, unknown>>(row.filters, {})
    const persistedVariables = parse<Record<string, unknown>>(row.variables, {})
    return {
      ...basicView(row, users),
      filters: context.filtersOverride ?? persistedFilters,
      variables: { ...persistedVariables, ...(context.variablesOverride ?? {}) },
      persisted_filters: persistedFilters,
      persisted_variables: persistedVariables,
      breakdown_colors: [],
      data_color_theme_id: null,
      tiles: await tilesView(team, row, context),
    }
  }

  async function log(teamId: number, actor: Actor, row: DashboardRow, activity: string, changes: Change[] | null) {
    await deps.activity.log({
      organizationId: actor.organizationId,
      teamId,
      userId: actor.userId,
      scope: 'Dashboard',
      itemId: String(row.id),
      activity,
      detail: { changes, trigger: null, type: null, name: row.name, short_id: null },
      createdAt: deps.clock().toISOString(),
    })
  }

  /** PATCH `tiles`: layouts, colours and removal of existing tiles; text cards created or edited. */
  async function applyTiles(teamId: number, actor: Actor, dashboardId: number, tiles: TileInput[]) {
    const existing = new Map((await deps.dashboards.tilesOf(teamId, dashboardId)).map((t) => [t.id, t]))
    for (const [index, tile] of tiles.entries()) {
      if (tile.id !== undefined && !existing.has(tile.id)) {
        throw new ValidationError(`Tile ${tile.id} is not on this dashboard.`, `tiles__${index}__id`, 'does_not_exist')
      }
      if (tile.id === undefined && !tile.text) {
        throw new ValidationError('A new tile needs a text; add insights through their dashboards.', `tiles__${index}`)
      }
    }
    const now = deps.clock().toISOString()
    for (const tile of tiles) {
      const patch: Partial<TileRow> = {}
      if (tile.layouts !== undefined) patch.layouts = JSON.stringify(tile.layouts)
      if (tile.color !== undefined) patch.color = tile.color
      if (tile.deleted !== undefined) patch.deleted = tile.deleted ? 1 : 0
      const current = tile.id === undefined ? undefined : existing.get(tile.id)
      if (tile.text) {
        if (current?.text_id != null) {
          await deps.dashboards.updateText(teamId, current.text_id, {
            body: tile.text.body,
            last_modified_at: now,
            last_modified_by: actor.userId,
          })
        } else if (!current) {
          const text = await deps.dashboards.insertText({
            team_id: teamId,
            body: tile.text.body,
            created_by: actor.userId,
            last_modified_at: now,
            last_modified_by: actor.userId,
          })
          await deps.dashboards.insertTile({
            team_id: teamId,
            dashboard_id: dashboardId,
            insight_id: null,
            text_id: text.id,
            layouts: patch.layouts ?? '{}',
            color: patch.color ?? null,
            deleted: null,
            created_at: now,
          })
          continue
        }
      }
      if (current && Object.keys(patch).length > 0) await deps.dashboards.updateTile(teamId, current.id, patch)
    }
  }

  /** `delete_insights`: the insights whose only live tile is on this dashboard go with it. */
  async function deleteLonelyInsights(teamId: number, dashboardId: number) {
    const tiles = (await deps.dashboards.tilesOf(teamId, dashboardId)).filter((t) => t.deleted !== 1)
    const ids = tiles.flatMap((t) => (t.insight_id === null ? [] : [t.insight_id]))
    const everywhere = (await deps.dashboards.tilesOfInsights(teamId, ids)).filter((t) => t.deleted !== 1)
    const lonely = ids.filter((id) => everywhere.every((t) => t.insight_id !== id || t.dashboard_id === dashboardId))
    await deps.insights.markDeleted(teamId, lonely, deps.clock().toISOString())
  }

  return {
    async list(teamId: number, query: DashboardListQuery): Promise<DashboardBasic[]> {
      let rows = await deps.dashboards.list(teamId)
      if (query.search) {
        const needle = query.search.toLowerCase()
        rows = rows.filter((r) => [r.name, r.description].some((v) => v?.toLowerCase().includes(needle)))
      }
      if (query.pinned !== undefined) rows = rows.filter((r) => (r.pinned === 1) === (query.pinned === 'true'))
      const users = await usersById(
        deps.users,
        rows.map((r) => r.created_by),
      )
      return rows.map((r) => basicView(r, users))
    },

    /** Throws NotFound unless the dashboard exists in the project and is not deleted. */
    async exists(teamId: number, id: number): Promise<void> {
      await load(teamId, id)
    },

    async get(team: ResultTeam, id: number, context: ResultContext): Promise<Dashboard> {
      await load(team.id, id)
      const row = await deps.dashboards.update(team.id, id, { last_accessed_at: deps.clock().toISOString() })
      return fullView(team, row, context)
    },

    async create(team: ResultTeam, actor: Actor, input: DashboardInput): Promise<Dashboard> {
      const filters = checkFilters(input.filters ?? {})
      const source = input.use_dashboard ? await deps.dashboards.get(team.id, input.use_dashboard) : undefined
      if (input.use_dashboard && (!source || source.deleted === 1)) {
        throw new ValidationError('Dashboard to copy does not exist.', 'use_dashboard', 'does_not_exist')
      }
      const now = deps.clock().toISOString()
      const row = await deps.dashboards.insert({
        team_id: team.id,
        name: input.name ?? null,
        description: input.description ?? '',
        pinned: input.pinned ? 1 : 0,
        tags: JSON.stringify([...new Set(input.tags ?? [])].sort()),
        filters: JSON.stringify(source && input.filters === undefined ? parse(source.filters, {}) : filters),
        variables: JSON.stringify(input.variables ?? (source ? parse(source.variables, {}) : {})),
        deleted: 0,
        created_by: actor.userId,
        created_at: now,
        last_accessed_at: null,
      })
      if (source) {
        // PostHog's duplicate without `duplicate_tiles`: the same insights, new tiles; text cards are copied.
        for (const tile of await deps.dashboards.tilesOf(team.id, source.id)) {
          if (tile.deleted === 1) continue
          let textId = tile.text_id
          if (textId !== null) {
            const [text] = await deps.dashboards.textsByIds(team.id, [textId])
            if (!text) continue
            textId = (
              await deps.dashboards.insertText({
                team_id: team.id,
                body: text.body,
                created_by: actor.userId,
                last_modified_at: now,
                last_modified_by: actor.userId,
              })
            ).id
          }
          await deps.dashboards.insertTile({
            ...tile,
            id: undefined,
            dashboard_id: row.id,
            text_id: textId,
            created_at: now,
          })
        }
      }
      if (input.tiles) await applyTiles(team.id, actor, row.id, input.tiles)
      await log(team.id, actor, row, 'created', null)
      return fullView(team, row, {})
    },

    /** PATCH: changes the given fields and tiles; `deleted: true` soft-deletes (with `delete_insights`, its own insights too). */
    async update(team: ResultTeam, actor: Actor, id: number, input: DashboardInput, context: ResultContext) {
      const before = await load(team.id, id, true)
      if (before.deleted === 1 && input.deleted !== false) throw new NotFound()
      const patch: Partial<DashboardRow> = {}
      if (input.name !== undefined) patch.name = input.name
      if (input.description !== undefined) patch.description = input.description
      if (input.pinned !== undefined) patch.pinned = input.pinned ? 1 : 0
      if (input.tags !== undefined) patch.tags = JSON.stringify([...new Set(input.tags)].sort())
      if (input.filters !== undefined) patch.filters = JSON.stringify(checkFilters(input.filters))
      if (input.variables !== undefined) patch.variables = JSON.stringify(input.variables ?? {})
      if (input.deleted !== undefined) patch.deleted = input.deleted ? 1 : 0

      const view = (row: Partial<DashboardRow>) => ({
        name: row.name,
        description: row.description,
        pinned: row.pinned === undefined ? undefined : row.pinned === 1,
        tags: row.tags === undefined ? undefined : parse(row.tags, []),
        filters: row.filters === undefined ? undefined : parse(row.filters, {}),
        variables: row.variables === undefined ? undefined : parse(row.variables, {}),
        deleted: row.deleted === undefined ? undefined : row.deleted === 1,
      })
      const afterView = Object.fromEntries(Object.entries(view(patch)).filter(([, v]) => v !== undefined))
      const changes = changesBetween('Dashboard', view(before), afterView, LOGGED_FIELDS)

      if (input.tiles) await applyTiles(team.id, actor, id, input.tiles)
      if (patch.deleted === 1 && before.deleted === 0 && input.delete_insights) {
        await deleteLonelyInsights(team.id, id)
      }
      const saved = Object.keys(patch).length > 0 ? await deps.dashboards.update(team.id, id, patch) : before
      if (changes.length > 0) {
        const activity = patch.deleted === 1 && before.deleted === 0 ? 'deleted' : 'updated'
        await log(team.id, actor, saved, activity, changes)
      }
      return fullView(team, saved, context)
    },
  }
}
export type DashboardService = ReturnType<typeof createDashboardService>
