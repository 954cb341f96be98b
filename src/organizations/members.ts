import crypto from 'node:crypto'
import { emailField, fieldsOf, stringField } from '../accounts/fields.js'
import type { Mail } from '../accounts/mail.js'
import { messages } from '../accounts/messages.js'
import { isInviteExpired } from '../accounts/service.js'
import type { AccountStore, AccountUserRow } from '../accounts/store.js'
import { toUserBasic } from '../accounts/user-view.js'
import { NotFound, PermissionDenied, ValidationError } from '../http/errors.js'
import { INSUFFICIENT_LEVEL, MembershipLevel, requireLevel } from './levels.js'
import { findOrganization, type OrganizationCaller } from './service.js'
import type { OrganizationStore } from './store.js'

const LEVELS: number[] = [MembershipLevel.MEMBER, MembershipLevel.ADMIN, MembershipLevel.OWNER]

export interface MemberCaller extends OrganizationCaller {
  user: AccountUserRow
}

/** A stable id for a membership (the table's key is organization and user): a UUID derived from both. */
function membershipId(organizationId: string, userId: number): string {
  const h = crypto.createHash('sha256').update(`membership:${organizationId}:${userId}`).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/**
 * Organization members and invites (PostHog's OrganizationMemberViewSet and OrganizationInviteViewSet): members
 * list and invite; admins change levels, remove others and delete invites; only owners make owners.
 */
export function createMemberService(deps: {
  accounts: AccountStore
  organizations: Pick<OrganizationStore, 'listForUser'>
  deliver: (mail: Mail) => void
  siteUrl: string
  clock: () => Date
}) {
  const find = (caller: MemberCaller, id: string) => findOrganization(deps.organizations, caller, id)

  async function memberRecords(organizationId: string) {
    const rows = await deps.accounts.listMembers(organizationId)
    const withTotp = await deps.accounts.hasTotp(rows.map((r) => r.id))
    return rows.map((row) => ({
      id: membershipId(organizationId, row.id),
      user: toUserBasic(row),
      level: row.level,
      joined_at: row.joined_at,
      updated_at: row.joined_at,
      is_2fa_enabled: withTotp.has(row.id),
      has_social_auth: false,
      last_login: row.last_login,
    }))
  }

  async function memberByUuid(organizationId: string, uuid: string) {
    const members = await deps.accounts.listMembers(organizationId)
    const member = members.find((m) => m.uuid === uuid)
    if (!member) throw new NotFound()
    return member
  }

  function toInvite(invite: Awaited<ReturnType<AccountStore['getInvite']>> & object, creator?: AccountUserRow) {
    return {
      id: invite.id,
      target_email: invite.target_email,
      first_name: invite.first_name,
      emailing_attempt_made: invite.emailing_attempt_made === 1,
      level: invite.level,
      is_expired: isInviteExpired(invite, deps.clock()),
      created_by: creator ? toUserBasic(creator) : null,
      created_at: invite.created_at,
      updated_at: invite.updated_at,
      message: invite.message,
      private_project_access: [] as unknown[],
    }
  }

  return {
    async list(caller: MemberCaller, organizationId: string, email?: string) {
      const org = await find(caller, organizationId)
      const results = (await memberRecords(org.id)).filter((m) => !email || m.user.email === email.toLowerCase())
      return { count: results.length, next: null, previous: null, results }
    },

    async update(caller: MemberCaller, organizationId: string, uuid: string, body: unknown) {
      const org = await find(caller, organizationId)
      const target = await memberByUuid(org.id, uuid)
      const level = fieldsOf(body).level
      if (level === undefined) {
        return (await memberRecords(org.id)).find((m) => m.user.uuid === uuid)
      }
      if (typeof level !== 'number' || !LEVELS.includes(level)) {
        throw new ValidationError(`"${String(level)}" is not a valid choice.`, 'level', 'invalid_choice')
      }
      if (target.id === caller.userId) throw new PermissionDenied("You can't change your own access level.")
      const own = org.level
      if (own < MembershipLevel.ADMIN) throw new PermissionDenied('You can only edit others if you are an admin.')
      if (level === MembershipLevel.OWNER && own < MembershipLevel.OWNER) {
        throw new PermissionDenied("You can only make another member owner if you're this organization's owner.")
      }
      if (target.level > own) {
        throw new PermissionDenied('You can only edit others with level lower or equal to you.')
      }
      await deps.accounts.setMemberLevel(org.id, target.id, level)
      return (await memberRecords(org.id)).find((m) => m.user.uuid === uuid)
    },

    /** Anyone may leave; removing someone else takes an admin, and never someone of a higher level. */
    async remove(caller: MemberCaller, organizationId: string, uuid: string) {
      const org = await find(caller, organizationId)
      const target = await memberByUuid(org.id, uuid)
      if (target.id !== caller.userId) {
        if (org.level < MembershipLevel.ADMIN) {
          throw new PermissionDenied('You can only edit others if you are an admin.')
        }
        if (target.level > org.level) {
          throw new PermissionDenied('You can only edit others with level lower or equal to you.')
        }
      }
      await deps.accounts.removeMember(org.id, target.id)
    },

    async listInvites(caller: MemberCaller, organizationId: string) {
      const org = await find(caller, organizationId)
      const invites = await deps.accounts.listInvites(org.id)
      const results = []
      for (const invite of invites) {
        const creator = invite.created_by_id === null ? undefined : await deps.accounts.getUser(invite.created_by_id)
        results.push(toInvite(invite, creator))
      }
      return { count: results.length, next: null, previous: null, results }
    },

    /**
     * Any member may invite, at most at their own level; an earlier invite for the same address is replaced. The
     * invite link goes by mail unless `send_email` is false.
     */
    async createInvite(caller: MemberCaller, organizationId: string, body: unknown) {
      const org = await find(caller, organizationId)
      const fields = fieldsOf(body)
      const email = emailField(fields, 'target_email') as string
      const firstName = stringField(fields, 'first_name', { required: false, allowBlank: true, maxLength: 30 }) ?? ''
      const message = stringField(fields, 'message', { required: false, allowBlank: true, maxLength: 1000 }) || null
      const level = fields.level === undefined ? MembershipLevel.MEMBER : fields.level
      if (typeof level !== 'number' || !LEVELS.includes(level)) {
        throw new ValidationError(`"${String(level)}" is not a valid choice.`, 'level', 'invalid_choice')
      }
      if (level > org.level) throw new PermissionDenied(INSUFFICIENT_LEVEL)
      const members = await deps.accounts.listMembers(org.id)
      if (members.some((m) => m.email.toLowerCase() === email)) {
        throw new ValidationError(
          'A user with this email address already belongs to the organization.',
          'target_email',
          'invalid_input',
        )
      }
      await deps.accounts.deleteInvitesFor(org.id, email)
      const at = deps.clock().toISOString()
      const sendEmail = fields.send_email !== false
      const invite = await deps.accounts.insertInvite({
        id: crypto.randomUUID(),
        organization_id: org.id,
        target_email: email,
        first_name: firstName,
        level,
        message,
        emailing_attempt_made: sendEmail ? 1 : 0,
        created_by_id: caller.userId,
        created_at: at,
        updated_at: at,
      })
      if (sendEmail) {
        const inviter = [caller.user.first_name, caller.user.last_name].filter(Boolean).join(' ') || caller.user.email
        deps.deliver({
          ...messages.invite(email, `${deps.siteUrl}/signup/${invite.id}`, org.name, inviter, message),
          replyTo: caller.user.email,
        })
      }
      return toInvite(invite, caller.user)
    },

    async deleteInvite(caller: MemberCaller, organizationId: string, inviteId: string) {
      const org = await find(caller, organizationId)
      requireLevel(caller.memberships, org.id, MembershipLevel.ADMIN)
      const result = await deps.accounts.deleteInvite(org.id, inviteId)
      if (Number(result.numDeletedRows) === 0) throw new NotFound()
    },
  }
}
export type MemberService = ReturnType<typeof createMemberService>
