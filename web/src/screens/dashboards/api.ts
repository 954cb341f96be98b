// Dashboards as the API shows them (`/api/projects/{id}/dashboards/`), and the calls the two screens make.
import { api, get, type Page, qs } from '../../api'

export interface UserBasic {
  id: number
  email: string
  first_name: string
}

export interface PropertyFilter {
  type: string
  key: string
  value?: unknown
  operator?: string
}

export interface DashboardFilters {
  date_from?: string | null
  date_to?: string | null
  properties?: PropertyFilter[] | null
}

export interface DashboardBasic {
  id: number
  name: string | null
  description: string
  pinned: boolean
  created_at: string
  created_by: UserBasic | null
  tags: string[]
  last_accessed_at: string | null
}

export interface LayoutItem {
  x: number
  y: number
  w: number
  h: number
  minW?: number
  minH?: number
}

export interface Insight {
  id: number
  short_id: string
  name: string | null
  derived_name: string | null
  description: string | null
  query: Record<string, unknown> | null
  result: unknown
  columns: unknown
  last_refresh: string | null
  is_cached: boolean
  dashboards: number[]
}

export interface Tile {
  id: number
  layouts: { sm?: LayoutItem; xs?: LayoutItem; [key: string]: unknown }
  color: string | null
  insight: Insight | null
  text: { id: number; body: string } | null
  last_refresh: string | null
  error: { detail: string; code: string } | null
}

export interface Dashboard extends DashboardBasic {
  filters: DashboardFilters
  persisted_filters: DashboardFilters
  tiles: Tile[]
}

export const dashboardsPath = (projectId: number) => `/api/projects/${projectId}/dashboards/`

export function listDashboards(projectId: number, params: { search?: string; pinned?: boolean }, signal?: AbortSignal) {
  return get<Page<DashboardBasic>>(
    `${dashboardsPath(projectId)}${qs({ search: params.search, pinned: params.pinned ? 'true' : undefined, limit: 500 })}`,
    signal,
  )
}

/** One dashboard with its tiles' results: `refresh` as PostHog reads it, `filters` as a request-time override. */
export function getDashboard(
  projectId: number,
  id: number,
  options: { refresh: string; filtersOverride?: DashboardFilters | null },
  signal?: AbortSignal,
) {
  return get<Dashboard>(
    `${dashboardsPath(projectId)}${id}/${qs({
      refresh: options.refresh,
      filters_override: options.filtersOverride ? JSON.stringify(options.filtersOverride) : undefined,
    })}`,
    signal,
  )
}

export function patchDashboard(projectId: number, id: number, body: Record<string, unknown>) {
  return api<Dashboard>('PATCH', `${dashboardsPath(projectId)}${id}/`, body)
}

export const insightName = (insight: Pick<Insight, 'name' | 'derived_name'>) =>
  insight.name || insight.derived_name || 'Untitled insight'
