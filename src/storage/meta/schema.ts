import type { Generated } from 'kysely'

/**
 * Metadata tables. Both dialects store the same types: timestamps as ISO-8601 text, booleans as 0/1 integers,
 * JSON as text, so a row reads back identically from SQLite and PostgreSQL.
 */
export interface OrganizationTable {
  id: string
  name: string
  plan: 'free' | 'paid'
  /** Monthly /flags request quota; null means unlimited. */
  flag_request_quota: number | null
  created_at: string
}

export interface ProjectTable {
  id: Generated<number>
  uuid: string
  organization_id: string
  name: string
  timezone: string
  api_token: string
  /** 0 = Sunday, 1 = Monday (set by migration 0008) */
  week_start_day: Generated<number>
  /** JSON text of the property filters that mark test accounts */
  test_account_filters: Generated<string>
  /** JSON text of the person properties shown as a person's name; NULL for PostHog's defaults (migration 0019) */
  person_display_name_properties: Generated<string | null>
  /** JSON text of the path cleaning rules, `[{alias, regex}]` in order (migration 0022) */
  path_cleaning_filters: Generated<string>
  created_at: string
  updated_at: string
}

export interface UserTable {
  id: Generated<number>
  uuid: string
  email: string
  password_hash: string
  first_name: string
  last_name: string
  is_email_verified: number
  pending_email: string | null
  current_organization_id: string | null
  current_project_id: number | null
  created_at: string
}

export interface MembershipTable {
  organization_id: string
  user_id: number
  /** PostHog's levels: 1 member, 8 admin, 15 owner. */
  level: number
  created_at: string
}

export interface PersonalApiKeyTable {
  id: string
  user_id: number
  label: string
  secure_value: string
  mask_value: string
  scopes: string
  scoped_teams: string | null
  scoped_organizations: string | null
  created_at: string
  last_used_at: string | null
  last_rolled_at: string | null
}

export interface ActivityLogTable {
  id: Generated<number>
  organization_id: string | null
  team_id: number | null
  user_id: number | null
  scope: string
  item_id: string | null
  activity: string
  detail: string
  created_at: string
}

export interface PersonTable {
  id: string
  team_id: number
  properties: string
  is_identified: number
  version: number
  created_at: string
}

export interface PersonDistinctIdTable {
  team_id: number
  distinct_id: string
  person_id: string
  version: number
}

export interface GroupTypeMappingTable {
  team_id: number
  group_type: string
  group_type_index: number
  name_singular: string | null
  name_plural: string | null
}

export interface GroupTable {
  team_id: number
  group_type_index: number
  group_key: string
  properties: string
  version: number
  created_at: string
}

export interface HashKeyOverrideTable {
  team_id: number
  person_id: string
  feature_flag_key: string
  hash_key: string
}

export interface InsightTable {
  id: Generated<number>
  team_id: number
  /** PostHog's 8-character id, used in URLs */
  short_id: string
  name: string | null
  derived_name: string | null
  description: string | null
  /** JSON text of the query node, stored upgraded; null for an insight without one */
  query: string | null
  /** JSON text of legacy filters, kept as given */
  filters: string
  tags: string
  favorited: number
  saved: number
  deleted: number
  created_by: number | null
  created_at: string
  updated_at: string
  last_modified_at: string
  last_modified_by: number | null
}

export interface DashboardTable {
  id: Generated<number>
  team_id: number
  name: string | null
  description: string
  pinned: number
  tags: string
  /** JSON text: date_from, date_to, properties, applied to every tile's query */
  filters: string
  /** JSON text: variable id → override, applied to every HogQL tile */
  variables: string
  deleted: number
  created_by: number | null
  created_at: string
  last_accessed_at: string | null
}

export interface DashboardTextTable {
  id: Generated<number>
  team_id: number
  body: string
  created_by: number | null
  last_modified_at: string
  last_modified_by: number | null
}

export interface DashboardTileTable {
  id: Generated<number>
  team_id: number
  dashboard_id: number
  insight_id: number | null
  text_id: number | null
  layouts: string
  color: string | null
  /** null until the tile is removed (1) or put back (0) */
  deleted: number | null
  created_at: string
}

export interface MetaDatabase {
  organizations: OrganizationTable
  projects: ProjectTable
  users: UserTable
  memberships: MembershipTable
  personal_api_keys: PersonalApiKeyTable
  activity_log: ActivityLogTable
  persons: PersonTable
  person_distinct_ids: PersonDistinctIdTable
  group_type_mappings: GroupTypeMappingTable
  groups: GroupTable
  feature_flag_hash_key_overrides: HashKeyOverrideTable
  insights: InsightTable
  dashboards: DashboardTable
  dashboard_texts: DashboardTextTable
  dashboard_tiles: DashboardTileTable
}
