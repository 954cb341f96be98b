import { type Organization, toOrganization } from '../organizations/service.js'
import type { OrganizationRow } from '../organizations/store.js'
import { toProject } from '../projects/service.js'
import type { ProjectRow } from '../projects/store.js'
import type { AccountUserRow } from './store.js'

/** PostHog's user preferences, as stored in `users.preferences`, with PostHog's defaults. */
export interface Preferences {
  notification_settings: Record<string, unknown>
  anonymize_data: boolean
  toolbar_mode: 'disabled' | 'toolbar'
  events_column_config: Record<string, unknown>
  has_seen_product_intro_for: Record<string, unknown>
  theme_mode: 'light' | 'dark' | 'system' | null
  hedgehog_config: Record<string, unknown> | null
  allow_sidebar_suggestions: boolean | null
  shortcut_position: 'above' | 'below' | 'hidden' | null
  role_at_organization: string | null
}

export const PREFERENCE_FIELDS = [
  'notification_settings',
  'anonymize_data',
  'toolbar_mode',
  'events_column_config',
  'has_seen_product_intro_for',
  'theme_mode',
  'hedgehog_config',
  'allow_sidebar_suggestions',
  'shortcut_position',
  'role_at_organization',
] as const

const DEFAULT_NOTIFICATIONS = {
  plugin_disabled: true,
  project_weekly_digest_disabled: {},
  all_weekly_digest_disabled: false,
  error_tracking_issue_assigned: true,
  discussions_mentioned: true,
}

export function preferencesOf(user: Pick<AccountUserRow, 'preferences'>): Preferences {
  const stored = JSON.parse(user.preferences || '{}') as Partial<Preferences>
  return {
    notification_settings: { ...DEFAULT_NOTIFICATIONS, ...(stored.notification_settings ?? {}) },
    anonymize_data: stored.anonymize_data ?? false,
    toolbar_mode: stored.toolbar_mode ?? 'toolbar',
    events_column_config: stored.events_column_config ?? { active: 'DEFAULT' },
    has_seen_product_intro_for: stored.has_seen_product_intro_for ?? {},
    theme_mode: stored.theme_mode ?? null,
    hedgehog_config: stored.hedgehog_config ?? null,
    allow_sidebar_suggestions: stored.allow_sidebar_suggestions ?? null,
    shortcut_position: stored.shortcut_position ?? null,
    role_at_organization: stored.role_at_organization ?? null,
  }
}

/** PostHog's UserBasicSerializer: what others see of a user (members, invites, sign-up). */
export function toUserBasic(user: AccountUserRow) {
  const prefs = preferencesOf(user)
  return {
    id: user.id,
    uuid: user.uuid,
    distinct_id: user.uuid,
    first_name: user.first_name,
    last_name: user.last_name,
    email: user.email,
    is_email_verified: user.is_email_verified === 1,
    hedgehog_config: prefs.hedgehog_config,
    role_at_organization: prefs.role_at_organization,
  }
}

/** The full user record of `/api/users/@me/` (PostHog's UserSerializer). */
export function toUserRecord(
  user: AccountUserRow,
  context: {
    isStaff: boolean
    is2faEnabled: boolean
    organizations: (OrganizationRow & { level: number })[]
    projects: ProjectRow[]
  },
) {
  const { organizations: orgs, projects } = context
  const currentOrg = orgs.find((o) => o.id === user.current_organization_id) ?? orgs[0]
  const currentProject =
    projects.find((p) => p.id === user.current_project_id && p.organization_id === currentOrg?.id) ??
    projects.find((p) => p.organization_id === currentOrg?.id)
  const organization: Organization | null = currentOrg ? toOrganization(currentOrg, projects) : null
  return {
    ...toUserBasic(user),
    date_joined: user.created_at,
    pending_email: user.pending_email,
    has_password: true,
    is_staff: context.isStaff,
    is_impersonated: false,
    is_2fa_enabled: context.is2faEnabled,
    has_social_auth: false,
    has_sso_enforcement: false,
    ...preferencesOf(user),
    organization,
    team: currentProject ? toProject(currentProject) : null,
    organizations: orgs.map((o) => ({ id: o.id, name: o.name, membership_level: o.level })),
  }
}
export type UserRecord = ReturnType<typeof toUserRecord>
