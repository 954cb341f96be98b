import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { AuthContext } from '../http/auth.js'
import { serializeAsIs } from '../http/openapi.js'
import { Organization, OrganizationPage } from './schemas.js'
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
      {
        schema: {
          summary: 'List organizations',
          description: 'The organizations the caller belongs to, with its membership level and their projects.',
          response: { 200: OrganizationPage },
          tags: ['organizations'],
        },
        config: { scope: 'organization:read' },
        serializerCompiler: serializeAsIs,
      },
      async (req) => {
        const results = await deps.organizations.list(callerOf(req.auth))
        return { count: results.length, next: null, previous: null, results }
      },
    )

    app.get(
      '/api/organizations/:organizationId/',
      {
        schema: {
          summary: 'Retrieve an organization',
          description: 'One organization by id, or `@current` for the caller’s current organization.',
          response: { 200: Organization },
          tags: ['organizations'],
          params: OrganizationParams,
        },
        config: { scope: 'organization:read' },
        serializerCompiler: serializeAsIs,
      },
      async (req) =>
        deps.organizations.get(callerOf(req.auth), (req.params as { organizationId: string }).organizationId),
    )

    app.patch(
      '/api/organizations/:organizationId/',
      {
        schema: {
          summary: 'Rename an organization',
          description: 'Changes the organization’s name (admins and owners).',
          response: { 200: Organization },
          tags: ['organizations'],
          params: OrganizationParams,
          body: OrganizationPatch,
        },
        config: { scope: 'organization:write' },
        serializerCompiler: serializeAsIs,
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
