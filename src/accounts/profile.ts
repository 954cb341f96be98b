import { NotFound, PermissionDenied, Throttled, ValidationError } from '../http/errors.js'
import { hashPassword, verifyPassword } from '../http/keys.js'
import type { RateLimiter } from '../http/rate-limit.js'
import type { OrganizationStore } from '../organizations/store.js'
import type { ProjectStore } from '../projects/store.js'
import { emailField, stringField } from './fields.js'
import { validatePassword } from './passwords.js'
import type { AccountService } from './service.js'
import type { AccountStore, AccountUserRow } from './store.js'
import { PREFERENCE_FIELDS, preferencesOf, toUserRecord } from './user-view.js'

export const NON_STAFF_OTHER_USER = "As a non-staff user you're only allowed to access the `@me` user instance."
export const NEEDS_SESSION =
  'You can only change your email or password from the Burrow app, not with an API key or token.'

/** Who is asking: the user, whether through a session (not a personal API key), and the session's id. */
export interface ProfileCaller {
  user: AccountUserRow
  sessionId: string | null
}

/**
 * `/api/users/…`: reading and changing a user (PostHog's UserSerializer rules). The first user of an instance is
 * its staff user, as PostHog makes the first sign-up staff; others are staff when a staff user says so.
 */
export function createProfileService(deps: {
  accounts: AccountStore
  organizations: Pick<OrganizationStore, 'listForUser'>
  projects: Pick<ProjectStore, 'listForOrganizations' | 'get'>
  service: Pick<AccountService, 'sendVerification' | 'rules'>
  limiter: RateLimiter
}) {
  let firstUserId: number | undefined

  async function isStaff(user: AccountUserRow): Promise<boolean> {
    if (user.is_staff === 1) return true
    if (firstUserId === undefined) {
      const first = await deps.accounts.firstUserId()
      if (first === undefined) return false
      firstUserId = first
    }
    return user.id === firstUserId
  }

  async function record(user: AccountUserRow) {
    const organizations = await deps.organizations.listForUser(user.id)
    const projects = await deps.projects.listForOrganizations(organizations.map((o) => o.id))
    const is2faEnabled = (await deps.accounts.getTotpDevice(user.id)) !== undefined
    return toUserRecord(user, { isStaff: await isStaff(user), is2faEnabled, organizations, projects })
  }

  return {
    isStaff,
    record,

    /** `@me`, or another user by uuid for staff only (PostHog's message for everyone else). */
    async target(caller: AccountUserRow, lookup: string): Promise<AccountUserRow> {
      if (lookup === '@me') return (await deps.accounts.getUser(caller.id)) ?? caller
      if (!(await isStaff(caller))) throw new PermissionDenied(NON_STAFF_OTHER_USER)
      const user = /^[0-9a-f-]{36}$/i.test(lookup) ? await deps.accounts.getUserByUuid(lookup) : undefined
      if (!user) throw new NotFound()
      return user
    },

    /** `PATCH /api/users/@me/`: every field of spec §2.9 with PostHog's rules. */
    async update(caller: ProfileCaller, target: AccountUserRow, fields: Record<string, unknown>) {
      const patch: Partial<AccountUserRow> = {}
      const firstName = stringField(fields, 'first_name', { required: false, allowBlank: true, maxLength: 150 })
      if (firstName !== undefined) patch.first_name = firstName
      const lastName = stringField(fields, 'last_name', { required: false, allowBlank: true, maxLength: 150 })
      if (lastName !== undefined) patch.last_name = lastName

      if (fields.is_staff !== undefined) {
        if (!(await isStaff(caller.user))) {
          throw new PermissionDenied('You are not a staff user, contact your instance admin.')
        }
        if (typeof fields.is_staff !== 'boolean') {
          throw new ValidationError('Must be a valid boolean.', 'is_staff', 'invalid_input')
        }
        patch.is_staff = fields.is_staff ? 1 : 0
      }

      const orgs = await deps.organizations.listForUser(target.id)
      if (fields.set_current_organization !== undefined) {
        const id = String(fields.set_current_organization)
        const org = orgs.find((o) => o.id === id)
        if (!org) {
          throw new ValidationError(
            `Object with id=${id} does not exist.`,
            'set_current_organization',
            'does_not_exist',
          )
        }
        patch.current_organization_id = org.id
        const projects = await deps.projects.listForOrganizations([org.id])
        patch.current_project_id = projects[0]?.id ?? null
      }
      if (fields.set_current_team !== undefined) {
        const id = String(fields.set_current_team)
        const project = /^\d{1,15}$/.test(id) ? await deps.projects.get(Number(id)) : undefined
        if (!project || !orgs.some((o) => o.id === project.organization_id)) {
          throw new ValidationError(`Object with id=${id} does not exist.`, 'set_current_team', 'does_not_exist')
        }
        patch.current_project_id = project.id
        patch.current_organization_id = project.organization_id
      }

      const prefs = preferencesOf(target) as unknown as Record<string, unknown>
      let prefsChanged = false
      for (const name of PREFERENCE_FIELDS) {
        if (fields[name] === undefined) continue
        prefs[name] =
          name === 'notification_settings' && fields[name] && typeof fields[name] === 'object'
            ? { ...(prefs[name] as object), ...(fields[name] as object) }
            : fields[name]
        prefsChanged = true
      }
      if (prefsChanged) patch.preferences = JSON.stringify(prefs)

      const newPassword = fields.password
      const newEmail = fields.email
      if ((newPassword !== undefined || newEmail !== undefined) && !caller.sessionId) {
        throw new PermissionDenied(NEEDS_SESSION)
      }
      if (newPassword !== undefined) {
        const password = stringField(fields, 'password', { trim: false }) as string
        const wait = await deps.limiter.hit(deps.service.rules.passwordChecks, String(caller.user.id))
        if (wait > 0) throw new Throttled(wait)
        const current = fields.current_password
        if (typeof current !== 'string' || !current) {
          throw new ValidationError(
            'This field is required when updating your password.',
            'current_password',
            'required',
          )
        }
        if (!(await verifyPassword(current, target.password_hash))) {
          throw new ValidationError('Your current password is incorrect.', 'current_password', 'incorrect_password')
        }
        validatePassword(password)
        patch.password_hash = await hashPassword(password)
      }
      let sendVerification = false
      if (newEmail !== undefined) {
        const email = emailField(fields, 'email') as string
        if (email !== target.email.toLowerCase()) {
          if (await deps.accounts.isEmailTaken(email, target.id)) {
            throw new ValidationError('There is already an account with this email address.', 'email', 'unique')
          }
          patch.pending_email = email
          sendVerification = true
        }
      }

      const saved = Object.keys(patch).length > 0 ? await deps.accounts.updateUser(target.id, patch) : target
      // Django keeps the session that changed the password and ends every other one.
      if (patch.password_hash) await deps.accounts.deleteSessionsOf(target.id, caller.sessionId)
      if (sendVerification) await deps.service.sendVerification(saved)
      return record(saved)
    },

    async cancelEmailChange(user: AccountUserRow) {
      const current = await deps.accounts.getUser(user.id)
      if (!current?.pending_email) {
        throw new ValidationError('No active email change requests found.', null, 'email_change_request_not_found')
      }
      return record(await deps.accounts.updateUser(user.id, { pending_email: null }))
    },
  }
}
export type ProfileService = ReturnType<typeof createProfileService>
