import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { NotFound, PermissionDenied } from '../http/errors.js'
import type { ProjectRow, ProjectStore } from '../projects/store.js'
import type { OrganizationRow, OrganizationStore } from './store.js'

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

export function organizationRoutes(deps: {
  organizations: Pick<OrganizationStore, 'listForUser'>
  projects: Pick<ProjectStore, 'listForOrganizations'>
}) {
  return async (app: FastifyInstance) => {
    app.get(
      '/api/organizations/',
      { schema: { tags: ['organizations'] }, config: { scope: 'organization:read' } },
      async (req) => {
        const orgs = (await deps.organizations.listForUser(req.auth.user.id)).filter(
          (o) => !req.auth.scopedOrganizations || req.auth.scopedOrganizations.includes(o.id),
        )
        const projects = await deps.projects.listForOrganizations(orgs.map((o) => o.id))
        const results = orgs.map((o) => toOrganization(o, projects))
        return { count: results.length, next: null, previous: null, results }
      },
    )

    app.get(
      '/api/organizations/:organizationId/',
      {
        schema: { tags: ['organizations'], params: Type.Object({ organizationId: Type.String() }) },
        config: { scope: 'organization:read' },
      },
      async (req) => {
        const { organizationId } = req.params as { organizationId: string }
        const orgs = await deps.organizations.listForUser(req.auth.user.id)
        const org =
          organizationId === '@current'
            ? (orgs.find((o) => o.id === req.auth.user.current_organization_id) ?? orgs[0])
            : orgs.find((o) => o.id === organizationId)
        if (!org) throw new NotFound('Organization not found.')
        if (req.auth.scopedOrganizations && !req.auth.scopedOrganizations.includes(org.id)) {
          throw new PermissionDenied(`API key does not have access to the requested organization: ID ${org.id}.`)
        }
        return toOrganization(org, await deps.projects.listForOrganizations([org.id]))
      },
    )
  }
}
