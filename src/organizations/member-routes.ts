import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { AccountUserRow } from '../accounts/store.js'
import { NoContent, serializeAsIs } from '../http/openapi.js'
import type { MemberCaller, MemberService } from './members.js'
import { Invite, InviteCreate, InvitePage, Member, MemberPage, MemberUpdate } from './schemas.js'

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
        schema: {
          summary: 'List members',
          description: 'The organization’s members with their levels (1 member, 8 admin, 15 owner); `email` picks one.',
          response: { 200: MemberPage },
          tags,
          params: OrgParams,
          querystring: Type.Object({ email: Type.Optional(Type.String()) }),
        },
        config: read,
        serializerCompiler: serializeAsIs,
      },
      async (req) => {
        const { organizationId } = req.params as { organizationId: string }
        return deps.members.list(callerOf(req), organizationId, (req.query as { email?: string }).email)
      },
    )
    app.patch(
      '/api/organizations/:organizationId/members/:userUuid/',
      {
        schema: {
          summary: 'Change a member’s level',
          description:
            'Sets a member’s `level` (admins; only an owner makes owners); never one’s own, nor that of someone above one.',
          response: { 200: Member },
          tags,
          params: MemberParams,
          body: Type.Unknown(),
        },
        config: { ...write, documentedBody: MemberUpdate },
        serializerCompiler: serializeAsIs,
      },
      async (req) => {
        const { organizationId, userUuid } = req.params as { organizationId: string; userUuid: string }
        return deps.members.update(callerOf(req), organizationId, userUuid, req.body)
      },
    )
    app.delete(
      '/api/organizations/:organizationId/members/:userUuid/',
      {
        schema: {
          summary: 'Remove a member',
          description: 'Anyone may leave; removing someone else takes an admin, and never someone of a higher level.',
          response: { 204: NoContent },
          tags,
          params: MemberParams,
        },
        config: write,
        serializerCompiler: serializeAsIs,
      },
      async (req, reply) => {
        const { organizationId, userUuid } = req.params as { organizationId: string; userUuid: string }
        await deps.members.remove(callerOf(req), organizationId, userUuid)
        return reply.code(204).send()
      },
    )
    app.get(
      '/api/organizations/:organizationId/invites/',
      {
        schema: {
          summary: 'List invites',
          description: 'Pending invitations to the organization.',
          response: { 200: InvitePage },
          tags,
          params: OrgParams,
        },
        config: read,
        serializerCompiler: serializeAsIs,
      },
      async (req) => deps.members.listInvites(callerOf(req), (req.params as { organizationId: string }).organizationId),
    )
    app.post(
      '/api/organizations/:organizationId/invites/',
      {
        schema: {
          summary: 'Invite someone',
          description:
            'Invites an e-mail address at a level no higher than one’s own; the link is mailed unless `send_email` is false, and an earlier invite for the same address is replaced.',
          response: { 201: Invite },
          tags,
          params: OrgParams,
          body: Type.Unknown(),
        },
        config: { ...write, documentedBody: InviteCreate },
        serializerCompiler: serializeAsIs,
      },
      async (req, reply) => {
        const { organizationId } = req.params as { organizationId: string }
        return reply.code(201).send(await deps.members.createInvite(callerOf(req), organizationId, req.body))
      },
    )
    app.delete(
      '/api/organizations/:organizationId/invites/:inviteId/',
      {
        schema: {
          summary: 'Cancel an invite',
          description: 'Deletes a pending invitation.',
          response: { 204: NoContent },
          tags,
          params: InviteParams,
        },
        config: write,
        serializerCompiler: serializeAsIs,
      },
      async (req, reply) => {
        const { organizationId, inviteId } = req.params as { organizationId: string; inviteId: string }
        await deps.members.deleteInvite(callerOf(req), organizationId, inviteId)
        return reply.code(204).send()
      },
    )
  }
}
