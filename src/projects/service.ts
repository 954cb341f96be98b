import crypto from 'node:crypto'
import { NotFound, PermissionDenied, ValidationError } from '../http/errors.js'
import { newProjectApiKey } from '../http/keys.js'
import { type Membership, MembershipLevel, requireLevel } from '../organizations/levels.js'
import { propertiesToHogQL } from '../queries/filters.js'
import type { Project, ProjectCreate, ProjectUpdate } from './schemas.js'
import type { ProjectRow, ProjectStore } from './store.js'

export function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz })
    return true
  } catch {
    return false
  }
}

function parseFilters(text: string): Record<string, unknown>[] {
  try {
    const value = JSON.parse(text)
    return Array.isArray(value) ? value : []
  } catch {
    return []
  }
}

function parseNames(text: string | null): string[] | null {
  if (text === null) return null
  try {
    const value = JSON.parse(text)
    return Array.isArray(value) ? value.filter((v) => typeof v === 'string') : null
  } catch {
    return null
  }
}

export function toProject(row: ProjectRow): Project {
  return {
    id: row.id,
    uuid: row.uuid,
    organization: row.organization_id,
    api_token: row.api_token,
    name: row.name,
    timezone: row.timezone,
    week_start_day: row.week_start_day === 1 ? 1 : 0,
    test_account_filters: parseFilters(row.test_account_filters),
    person_display_name_properties: parseNames(row.person_display_name_properties),
    path_cleaning_filters: parseFilters(row.path_cleaning_filters ?? '[]'),
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

/** Test-account filters must compile like any insight filter, so a bad one is refused when saved. */
function checkedTestAccountFilters(filters: Record<string, unknown>[]): Record<string, unknown>[] {
  try {
    propertiesToHogQL(filters)
  } catch (error) {
    if (error instanceof ValidationError) {
      throw new ValidationError(error.detail, 'test_account_filters', error.code)
    }
    throw error
  }
  return filters
}

/** The path cleaning rules a project applies, in the order stored; a rule without a regex cleans nothing. */
export function pathCleaningRules(text: string | null | undefined): { regex: string; alias: string }[] {
  return parseFilters(text ?? '[]')
    .filter((rule) => typeof rule.regex === 'string' && rule.regex !== '')
    .map((rule) => ({ regex: rule.regex as string, alias: typeof rule.alias === 'string' ? rule.alias : '' }))
}

export interface Caller {
  /** The caller's organizations with their levels; only admins and owners create or change projects. */
  memberships: readonly Membership[]
  scopedTeams: number[] | null
  scopedOrganizations: string[] | null
  currentOrganizationId: string | null
}

export function createProjectService(deps: {
  projects: ProjectStore
  onProjectCreated?: (project: ProjectRow) => Promise<void>
  clock: () => Date
}) {
  return {
    async list(caller: Caller): Promise<Project[]> {
      const rows = await deps.projects.listForOrganizations(caller.memberships.map((m) => m.organization_id))
      return rows
        .filter((r) => !caller.scopedTeams || caller.scopedTeams.includes(r.id))
        .filter((r) => !caller.scopedOrganizations || caller.scopedOrganizations.includes(r.organization_id))
        .map(toProject)
    },

    async create(caller: Caller, input: ProjectCreate, organizationId?: string): Promise<Project> {
      const orgIds = caller.memberships.map((m) => m.organization_id)
      const orgId = organizationId ?? caller.currentOrganizationId ?? orgIds[0]
      if (!orgId || !orgIds.includes(orgId)) throw new NotFound('Organization not found.')
      if (caller.scopedOrganizations && !caller.scopedOrganizations.includes(orgId)) {
        throw new PermissionDenied(`API key does not have access to the requested organization: ID ${orgId}.`)
      }
      if (caller.scopedTeams) {
        throw new PermissionDenied('API keys with scoped projects are only supported on project-based endpoints.')
      }
      requireLevel(caller.memberships, orgId, MembershipLevel.ADMIN)
      const timezone = input.timezone ?? 'UTC'
      if (!isValidTimezone(timezone))
        throw new ValidationError(`"${timezone}" is not a valid choice.`, 'timezone', 'invalid_choice')
      const now = deps.clock().toISOString()
      const row = await deps.projects.insert({
        uuid: crypto.randomUUID(),
        organization_id: orgId,
        name: input.name,
        timezone,
        api_token: newProjectApiKey(),
        created_at: now,
        updated_at: now,
      })
      await deps.onProjectCreated?.(row)
      return toProject(row)
    },

    /** The caller is a member of the project's organization (checked when the project was loaded). */
    async update(caller: Caller, project: ProjectRow, input: ProjectUpdate): Promise<Project> {
      requireLevel(caller.memberships, project.organization_id, MembershipLevel.ADMIN)
      if (input.timezone !== undefined && !isValidTimezone(input.timezone)) {
        throw new ValidationError(`"${input.timezone}" is not a valid choice.`, 'timezone', 'invalid_choice')
      }
      const row = await deps.projects.update(project.id, {
        ...(input.name !== undefined && { name: input.name }),
        ...(input.timezone !== undefined && { timezone: input.timezone }),
        ...(input.week_start_day !== undefined && { week_start_day: input.week_start_day ?? 0 }),
        ...(input.test_account_filters !== undefined && {
          test_account_filters: JSON.stringify(checkedTestAccountFilters(input.test_account_filters)),
        }),
        ...(input.path_cleaning_filters !== undefined && {
          path_cleaning_filters: JSON.stringify(input.path_cleaning_filters ?? []),
        }),
        ...(input.person_display_name_properties !== undefined && {
          person_display_name_properties:
            input.person_display_name_properties === null ? null : JSON.stringify(input.person_display_name_properties),
        }),
        updated_at: deps.clock().toISOString(),
      })
      return toProject(row)
    },
  }
}
export type ProjectService = ReturnType<typeof createProjectService>
