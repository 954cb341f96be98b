import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { AccountUserRow } from '../accounts/store.js'
import type { MemberCaller, MemberService } from './members.js'

const OrgParams = Type.Object({ organizationId: Type.String({ maxLength: 64 }) })
const MemberParams = Type.Object({
  organizationId: Type.String({ maxLength: 64 }),
  userUuid: Type.String({ maxLength: 64 }),
})
const InviteParams = Type.Object({
  organizationId: Type.String({ maxLength: 64 }),
  inviteId: Type.String({ maxLength: 64 }),
})
const tags = ['organizations']

const callerOf = (req: FastifyRequest): MemberCaller => ({
  user: req.auth.user as AccountUserRow,
  userId: req.auth.user.id,
  memberships: req.auth.memberships,
  scopedOrganizations: req.auth.scopedOrganizations,
  currentOrganizationId: req.auth.user.current_organization_id,
})

/** `/api/organizations/{id}/members/` and `/invites/` (scope object `organization_member`). */
export function memberRoutes(deps: { members: MemberService }) {
  return async (app: FastifyInstance) => {
    const read = { scope: 'organization_member:read' }
    const write = { scope: 'organization_member:write' }
    app.get(
      '/api/organizations/:organizationId/members/',
      {
        schema: { tags, params: OrgParams, querystring: Type.Object({ email: Type.Optional(Type.String()) }) },
        config: read,
      },
      async (req) => {
        const { organizationId } = req.params as { organizationId: string }
        return deps.members.list(callerOf(req), organizationId, (req.query as { email?: string }).email)
      },
    )
    app.patch(
      '/api/organizations/:organizationId/members/:userUuid/',
      { schema: { tags, params: MemberParams, body: Type.Unknown() }, config: write },
      async (req) => {
        const { organizationId, userUuid } = req.params as { organizationId: string; userUuid: string }
        return deps.members.update(callerOf(req), organizationId, userUuid, req.body)
      },
    )
    app.delete(
      '/api/organizations/:organizationId/members/:userUuid/',
      { schema: { tags, params: MemberParams }, config: write },
      async (req, reply) => {
        const { organizationId, userUuid } = req.params as { organizationId: string; userUuid: string }
        await deps.members.remove(callerOf(req), organizationId, userUuid)
        return reply.code(204).send()
      },
    )
    app.get(
      '/api/organizations/:organizationId/invites/',
      { schema: { tags, params: OrgParams }, config: read },
      async (req) => deps.members.listInvites(callerOf(req), (req.params as { organizationId: string }).organizationId),
    )
    app.post(
      '/api/organizations/:organizationId/invites/',
      { schema: { tags, params: OrgParams, body: Type.Unknown() }, config: write },
      async (req, reply) => {
        const { organizationId } = req.params as { organizationId: string }
        return reply.code(201).send(await deps.members.createInvite(callerOf(req), organizationId, req.body))
      },
    )
    app.delete(
      '/api/organizations/:organizationId/invites/:inviteId/',
      { schema: { tags, params: InviteParams }, config: write },
      async (req, reply) => {
        const { organizationId, inviteId } = req.params as { organizationId: string; inviteId: string }
        await deps.members.deleteInvite(callerOf(req), organizationId, inviteId)
        return reply.code(204).send()
      },
    )
  }
}
