import { NotFound, PermissionDenied } from '../http/errors.js'
import type { ProjectRow, ProjectStore } from '../projects/store.js'
import { type Membership, MembershipLevel, requireLevel } from './levels.js'
import type { OrganizationRow, OrganizationStore } from './store.js'

export interface OrganizationCaller {
  userId: number
  memberships: readonly Membership[]
  scopedOrganizations: string[] | null
  currentOrganizationId: string | null
}

export interface OrganizationUpdate {
  name?: string
}

export function toOrganization(row: OrganizationRow & { level?: number }, projects: ProjectRow[]) {
  return {
    id: row.id,
    name: row.name,
    created_at: row.created_at,
    membership_level: row.level ?? null,
    plan: row.plan,
    flag_request_quota: row.flag_request_quota,
    teams: projects
      .filter((p) => p.organization_id === row.id)
      .map((p) => ({ id: p.id, uuid: p.uuid, name: p.name, api_token: p.api_token, timezone: p.timezone })),
    projects: projects.filter((p) => p.organization_id === row.id).map((p) => ({ id: p.id, name: p.name })),
  }
}
export type Organization = ReturnType<typeof toOrganization>

/** The caller's organization by id or `@current`; another organization answers 404, as a missing one does. */
export async function findOrganization(
  organizations: Pick<OrganizationStore, 'listForUser'>,
  caller: OrganizationCaller,
  idOrCurrent: string,
) {
  const orgs = await organizations.listForUser(caller.userId)
  const org =
    idOrCurrent === '@current'
      ? (orgs.find((o) => o.id === caller.currentOrganizationId) ?? orgs[0])
      : orgs.find((o) => o.id === idOrCurrent)
  if (!org) throw new NotFound('Organization not found.')
  if (caller.scopedOrganizations && !caller.scopedOrganizations.includes(org.id)) {
    throw new PermissionDenied(`API key does not have access to the requested organization: ID ${org.id}.`)
  }
  return org
}

export function createOrganizationService(deps: {
  organizations: Pick<OrganizationStore, 'listForUser' | 'update'>
  projects: Pick<ProjectStore, 'listForOrganizations'>
}) {
  const find = (caller: OrganizationCaller, idOrCurrent: string) =>
    findOrganization(deps.organizations, caller, idOrCurrent)

  return {
    async list(caller: OrganizationCaller): Promise<Organization[]> {
      const orgs = (await deps.organizations.listForUser(caller.userId)).filter(
        (o) => !caller.scopedOrganizations || caller.scopedOrganizations.includes(o.id),
      )
      const projects = await deps.projects.listForOrganizations(orgs.map((o) => o.id))
      return orgs.map((o) => toOrganization(o, projects))
    },

    async get(caller: OrganizationCaller, idOrCurrent: string): Promise<Organization> {
      const org = await find(caller, idOrCurrent)
      return toOrganization(org, await deps.projects.listForOrganizations([org.id]))
    },

    /** Admins and owners only (PostHog's OrganizationAdminWritePermissions). */
    async update(caller: OrganizationCaller, idOrCurrent: string, input: OrganizationUpdate): Promise<Organization> {
      const org = await find(caller, idOrCurrent)
      requireLevel(caller.memberships, org.id, MembershipLevel.ADMIN)
      const row = input.name === undefined ? org : await deps.organizations.update(org.id, { name: input.name })
      return toOrganization({ ...row, level: org.level }, await deps.projects.listForOrganizations([org.id]))
    },
  }
}
export type OrganizationService = ReturnType<typeof createOrganizationService>
