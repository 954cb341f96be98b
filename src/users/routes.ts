import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { PermissionDenied } from '../http/errors.js'
import { NO_PERSONAL_API_KEY_ACCESS, OWN_KEY_ONLY, SESSION_ONLY } from '../http/scopes.js'
import { toOrganization } from '../organizations/service.js'
import type { OrganizationStore } from '../organizations/store.js'
import { toProject } from '../projects/service.js'
import type { ProjectStore } from '../projects/store.js'
import type { KeyInput, PersonalApiKeyService } from './keys-service.js'

const KeyBody = Type.Object({
  label: Type.String({ maxLength: 40 }),
  scopes: Type.Optional(Type.Array(Type.String())),
  scoped_teams: Type.Optional(Type.Union([Type.Array(Type.Integer()), Type.Null()])),
  scoped_organizations: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
})

const KeyRecord = Type.Object({
  id: Type.String(),
  label: Type.String(),
  value: Type.Union([Type.String(), Type.Null()]),
  mask_value: Type.String(),
  created_at: Type.String(),
  last_used_at: Type.Union([Type.String(), Type.Null()]),
  last_rolled_at: Type.Union([Type.String(), Type.Null()]),
  user_id: Type.Integer(),
  scopes: Type.Array(Type.String()),
  scoped_teams: Type.Union([Type.Array(Type.Integer()), Type.Null()]),
  scoped_organizations: Type.Union([Type.Array(Type.String()), Type.Null()]),
})

export function userRoutes(deps: {
  keys: PersonalApiKeyService
  organizations: Pick<OrganizationStore, 'listForUser' | 'get'>
  projects: Pick<ProjectStore, 'listForOrganizations'>
}) {
  return async (app: FastifyInstance) => {
    app.get('/api/users/@me/', { schema: { tags: ['users'] }, config: { scope: 'user:read' } }, async (req) => {
      const { user } = req.auth
      const orgs = await deps.organizations.listForUser(user.id)
      const projects = await deps.projects.listForOrganizations(orgs.map((o) => o.id))
      const currentOrg = orgs.find((o) => o.id === user.current_organization_id) ?? orgs[0]
      const currentProject = projects.find((p) => p.id === user.current_project_id) ?? projects[0]
      return {
        id: user.id,
        uuid: user.uuid,
        email: user.email,
        first_name: user.first_name,
        last_name: user.last_name,
        is_email_verified: user.is_email_verified === 1,
        pending_email: user.pending_email,
        date_joined: user.created_at,
        organization: currentOrg ? toOrganization(currentOrg, projects) : null,
        team: currentProject ? toProject(currentProject) : null,
        organizations: orgs.map((o) => ({ id: o.id, name: o.name, membership_level: o.level })),
      }
    })

    // Keys are managed by a logged-in session only (PostHog's PersonalApiKeySelfAccessPermission): a personal API
    // key may retrieve itself and nothing more, so no key can mint, list, roll or delete keys.
    app.get(
      '/api/personal_api_keys/',
      {
        schema: { tags: ['personal_api_keys'], response: { 200: Type.Array(KeyRecord) } },
        config: { scope: SESSION_ONLY },
      },
      async (req) => deps.keys.list(req.auth.user.id),
    )
    app.get(
      '/api/personal_api_keys/:keyId/',
      {
        schema: {
          tags: ['personal_api_keys'],
          params: Type.Object({ keyId: Type.String() }),
          response: { 200: KeyRecord },
        },
        config: { scope: OWN_KEY_ONLY },
      },
      async (req) => {
        const { keyId } = req.params as { keyId: string }
        const key = await deps.keys.get(req.auth.user.id, keyId === '@current' ? req.auth.key.id : keyId)
        if (key.id !== req.auth.key.id) throw new PermissionDenied(NO_PERSONAL_API_KEY_ACCESS)
        return key
      },
    )
    app.post(
      '/api/personal_api_keys/',
      {
        schema: { tags: ['personal_api_keys'], body: KeyBody, response: { 201: KeyRecord } },
        config: { scope: SESSION_ONLY },
      },
      async (req, reply) => {
        const created = await deps.keys.create(
          { id: req.auth.user.id, organizationIds: req.auth.organizationIds },
          req.body as KeyInput,
        )
        return reply.code(201).send(created)
      },
    )
    app.post(
      '/api/personal_api_keys/:keyId/roll/',
      {
        schema: {
          tags: ['personal_api_keys'],
          params: Type.Object({ keyId: Type.String() }),
          response: { 200: KeyRecord },
        },
        config: { scope: SESSION_ONLY },
      },
      async (req) => deps.keys.roll(req.auth.user.id, (req.params as { keyId: string }).keyId),
    )
    app.delete(
      '/api/personal_api_keys/:keyId/',
      {
        schema: { tags: ['personal_api_keys'], params: Type.Object({ keyId: Type.String() }) },
        config: { scope: SESSION_ONLY },
      },
      async (req, reply) => {
        await deps.keys.remove(req.auth.user.id, (req.params as { keyId: string }).keyId)
        return reply.code(204).send()
      },
    )
  }
}
