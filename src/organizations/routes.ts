import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { AuthContext } from '../http/auth.js'
import type { OrganizationCaller, OrganizationService, OrganizationUpdate } from './service.js'

const OrganizationParams = Type.Object({ organizationId: Type.String() })
const OrganizationPatch = Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) })

const callerOf = (auth: AuthContext): OrganizationCaller => ({
  userId: auth.user.id,
  memberships: auth.memberships,
  scopedOrganizations: auth.scopedOrganizations,
  currentOrganizationId: auth.user.current_organization_id,
})

export function organizationRoutes(deps: { organizations: OrganizationService }) {
  return async (app: FastifyInstance) => {
    app.get(
      '/api/organizations/',
      { schema: { tags: ['organizations'] }, config: { scope: 'organization:read' } },
      async (req) => {
        const results = await deps.organizations.list(callerOf(req.auth))
        return { count: results.length, next: null, previous: null, results }
      },
    )

    app.get(
      '/api/organizations/:organizationId/',
      { schema: { tags: ['organizations'], params: OrganizationParams }, config: { scope: 'organization:read' } },
      async (req) =>
        deps.organizations.get(callerOf(req.auth), (req.params as { organizationId: string }).organizationId),
    )

    app.patch(
      '/api/organizations/:organizationId/',
      {
        schema: { tags: ['organizations'], params: OrganizationParams, body: OrganizationPatch },
        config: { scope: 'organization:write' },
      },
      async (req) =>
        deps.organizations.update(
          callerOf(req.auth),
          (req.params as { organizationId: string }).organizationId,
          req.body as OrganizationUpdate,
        ),
    )
  }
}
