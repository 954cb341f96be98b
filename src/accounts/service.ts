import crypto from 'node:crypto'
import { ApiError, PermissionDenied, Throttled, ValidationError } from '../http/errors.js'
import { hashPassword, verifyPassword } from '../http/keys.js'
import type { RateLimiter, WindowRule } from '../http/rate-limit.js'
import { MembershipLevel } from '../organizations/levels.js'
import type { OrganizationStore } from '../organizations/store.js'
import type { ProjectService } from '../projects/service.js'
import { emailField, fieldsOf, stringField } from './fields.js'
import type { Mailer } from './mail.js'
import { messages } from './messages.js'
import { validatePassword } from './passwords.js'
import { PENDING_2FA_MS } from './sessions.js'
import type { AccountStore, AccountUserRow, InviteRow, SessionRow } from './store.js'
import type { TokenSigner } from './tokens.js'
import { hashBackupCode, matchingStep } from './totp.js'
import { PREFERENCE_FIELDS, toUserBasic } from './user-view.js'

const MINUTE_MS = 60_000
const DAY_MS = 86_400_000
export const TOKEN_MAX_AGE_SECONDS = 86_400
export const INVITE_DAYS_VALIDITY = 3
export const ROLES = ['engineering', 'data', 'product', 'founder', 'leadership', 'marketing', 'sales', 'other']

export interface AccountLimits {
  /** Failed logins per client IP per 10 minutes before that IP is locked out for the rest of them. */
  loginFailuresPerIp: number
  /** Second-factor codes tried per user per 5 minutes (login, setup), right or wrong. */
  otpAttemptsPerUser: number
  /** Second-factor codes tried per client IP per 5 minutes. */
  otpAttemptsPerIp: number
}

export interface AccountDeps {
  accounts: AccountStore
  organizations: Pick<OrganizationStore, 'insert' | 'addMember' | 'get'>
  projects: Pick<ProjectService, 'create'>
  mailer: Mailer
  signer: TokenSigner
  limiter: RateLimiter
  limits: AccountLimits
  siteUrl: string
  clock: () => Date
  onError: (err: unknown, what: string) => void
}

/** The counters every process shares (metadata store), named here once. */
export function accountRules(limits: AccountLimits) {
  return {
    loginFailures: { name: 'login-fail', limit: limits.loginFailuresPerIp, windowMs: 10 * MINUTE_MS },
    otpUser: { name: 'otp-user', limit: limits.otpAttemptsPerUser, windowMs: 5 * MINUTE_MS },
    otpIp: { name: 'otp-ip', limit: limits.otpAttemptsPerIp, windowMs: 5 * MINUTE_MS },
    resetMail: { name: 'reset-mail', limit: 6, windowMs: DAY_MS },
    verifyMail: { name: 'verify-mail', limit: 6, windowMs: DAY_MS },
    passwordChecks: { name: 'password-check', limit: 5, windowMs: MINUTE_MS },
  } satisfies Record<string, WindowRule>
}

const TOO_MANY_LOGINS = () =>
  new ApiError(
    403,
    'authentication_error',
    'too_many_failed_attempts',
    'Too many failed login attempts. Please try again in 10 minutes.',
  )
const INVALID_CREDENTIALS = () => new ValidationError('Invalid email or password.', null, 'invalid_credentials')
const LOGIN_EXPIRED = () =>
  new ValidationError('Login attempt has expired. Re-enter username/password.', null, '2fa_expired')
const NO_NEW_ORGANIZATIONS =
  'New organizations cannot be created in this instance. Contact your administrator if you think this is a mistake.'

/** The state a verification link is bound to: changing any of it spends every link sent before. */
export const verificationState = (u: AccountUserRow) =>
  `${u.id}|${u.email}|${u.is_email_verified}|${u.pending_email ?? ''}|${u.last_login ?? ''}`
const resetState = (u: AccountUserRow) => `${u.id}|${u.password_hash}|${u.last_login ?? ''}|${u.email}`

export const isInviteExpired = (invite: InviteRow, now: Date) =>
  now.getTime() - Date.parse(invite.created_at) > INVITE_DAYS_VALIDITY * DAY_MS

/**
 * Signing up, logging in (with the second factor), password resets and e-mail verification: the account rules
 * that know nothing of HTTP. Sessions themselves are the routes' business; these return whom to log in.
 */
export function createAccountService(deps: AccountDeps) {
  const rules = accountRules(deps.limits)
  const now = () => deps.clock()
  let dummyHash: Promise<string> | undefined

  /** Mail goes out in the background: a slow or failing mail server never holds (or tells about) a request. */
  function deliver(mail: Parameters<Mailer['send']>[0]) {
    deps.mailer.send(mail).catch((err) => deps.onError(err, 'sending mail'))
  }

  async function sendVerification(user: AccountUserRow) {
    const token = await deps.signer.make('verify_email', verificationState(user))
    deliver(
      messages.verifyEmail(user.pending_email ?? user.email, `${deps.siteUrl}/verify_email/${user.uuid}/${token}`),
    )
  }

  /** Counts one second-factor attempt for the user and the IP; refuses with 429 past either limit. */
  async function throttleCode(userId: number, ip: string) {
    const wait = Math.max(
      await deps.limiter.hit(rules.otpUser, String(userId)),
      await deps.limiter.hit(rules.otpIp, ip),
    )
    if (wait > 0) throw new Throttled(wait)
  }

  async function newUser(input: {
    email: string
    password: string
    firstName: string
    lastName: string
    role: string | null
    isStaff: boolean
    verified: boolean
    organizationId: string
    projectId: number | null
  }) {
    return deps.accounts.insertUser({
      uuid: crypto.randomUUID(),
      email: input.email,
      password_hash: await hashPassword(input.password),
      first_name: input.firstName,
      last_name: input.lastName,
      is_email_verified: input.verified ? 1 : 0,
      pending_email: null,
      current_organization_id: input.organizationId,
      current_project_id: input.projectId,
      created_at: now().toISOString(),
      is_staff: input.isStaff ? 1 : 0,
      last_login: now().toISOString(),
      requested_password_reset_at: null,
      preferences: JSON.stringify(input.role ? { role_at_organization: input.role } : {}),
    })
  }

  function roleField(body: Record<string, unknown>): string | null {
    const role = stringField(body, 'role_at_organization', { required: false, allowBlank: true })
    if (!role) return null
    if (!ROLES.includes(role)) {
      throw new ValidationError(`"${role}" is not a valid choice.`, 'role_at_organization', 'invalid_choice')
    }
    return role
  }

  async function validInvite(inviteId: string): Promise<InviteRow> {
    const invite = /^[0-9a-f-]{36}$/i.test(inviteId) ? await deps.accounts.getInvite(inviteId) : undefined
    if (!invite) throw new ValidationError('The provided invite ID is not valid.', null, 'invalid_input')
    if (isInviteExpired(invite, now())) {
      throw new ValidationError('This invite has expired. Please ask your admin for a new one.', null, 'expired')
    }
    return invite
  }

  return {
    rules,
    sendVerification,

    /**
     * `POST /api/signup/`: the first user of an instance creates its organization (and becomes staff, as in
     * PostHog); later ones join through an invite.
     */
    async signup(body: unknown) {
      const fields = fieldsOf(body)
      const firstName = stringField(fields, 'first_name', { maxLength: 150 }) as string
      const email = emailField(fields, 'email') as string
      const password = stringField(fields, 'password', { trim: false }) as string
      const lastName = stringField(fields, 'last_name', { required: false, allowBlank: true, maxLength: 150 }) ?? ''
      const orgName = stringField(fields, 'organization_name', { required: false, allowBlank: true, maxLength: 64 })
      const role = roleField(fields)
      if (await deps.accounts.isEmailTaken(email)) {
        throw new ValidationError('There is already an account with this email address.', 'email', 'unique')
      }
      validatePassword(password)
      if ((await deps.accounts.countUsers()) > 0) throw new PermissionDenied(NO_NEW_ORGANIZATIONS)

      const at = now().toISOString()
      const org = await deps.organizations.insert({
        id: crypto.randomUUID(),
        name: orgName || `${firstName}'s Organization`,
        plan: 'free',
        flag_request_quota: null,
        created_at: at,
      })
      const caller = {
        memberships: [{ organization_id: org.id, level: MembershipLevel.OWNER }],
        scopedTeams: null,
        scopedOrganizations: null,
        currentOrganizationId: org.id,
      }
      const user = await newUser({
        email,
        password,
        firstName,
        lastName,
        role,
        isStaff: true,
        verified: false,
        organizationId: org.id,
        projectId: null,
      })
      await deps.organizations.addMember(org.id, user.id, MembershipLevel.OWNER, at)
      const project = await deps.projects.create(caller, { name: 'Default project' })
      const saved = await deps.accounts.updateUser(user.id, { current_project_id: project.id })
      await sendVerification(saved)
      return saved
    },

    /** `GET /api/signup/{invite}/`: what the sign-up page shows about an invite. */
    async inviteInfo(inviteId: string) {
      const invite = await validInvite(inviteId)
      const org = await deps.organizations.get(invite.organization_id)
      return {
        id: invite.id,
        target_email: invite.target_email,
        first_name: invite.first_name,
        organization_name: org?.name ?? '',
      }
    },

    /**
     * `POST /api/signup/{invite}/`: a new user made from an invite (the address is the invite's, verified by the
     * mail that carried the link), or the logged-in user the invite is for, joins at the invite's level.
     */
    async acceptInvite(inviteId: string, body: unknown, sessionUser: AccountUserRow | undefined) {
      const invite = await validInvite(inviteId)
      const fields = fieldsOf(body)
      const at = now().toISOString()
      let user: AccountUserRow
      if (sessionUser) {
        if (sessionUser.email.toLowerCase() !== invite.target_email.toLowerCase()) {
          throw new ValidationError('This invite is intended for another email address.', null, 'invalid_recipient')
        }
        user = sessionUser
      } else {
        const firstName = stringField(fields, 'first_name', { maxLength: 150 }) as string
        const password = stringField(fields, 'password', { trim: false }) as string
        const role = roleField(fields)
        if (await deps.accounts.isEmailTaken(invite.target_email)) {
          throw new ValidationError('There is already an account with this email address.', 'email', 'unique')
        }
        validatePassword(password)
        user = await newUser({
          email: invite.target_email,
          password,
          firstName,
          lastName: stringField(fields, 'last_name', { required: false, allowBlank: true }) ?? '',
          role,
          isStaff: false,
          verified: true,
          organizationId: invite.organization_id,
          projectId: null,
        })
      }
      const joined = await deps.accounts.listMembers(invite.organization_id)
      if (!joined.some((m) => m.id === user.id)) {
        await deps.organizations.addMember(invite.organization_id, user.id, invite.level, at)
      }
      await deps.accounts.deleteInvitesFor(invite.organization_id, invite.target_email)
      return deps.accounts.updateUser(user.id, {
        current_organization_id: invite.organization_id,
        current_project_id: null,
      })
    },

    /**
     * `POST /api/login`: the user whose password matches, and whether the second factor must follow. Failures
     * count per IP; past the limit the IP is locked out even with the right password.
     */
    async login(body: unknown, ip: string): Promise<{ user: AccountUserRow; needsSecondFactor: boolean }> {
      const fields = fieldsOf(body)
      const email = stringField(fields, 'email') as string
      const password = stringField(fields, 'password', { trim: false }) as string
      if ((await deps.limiter.wait(rules.loginFailures, ip)) > 0) throw TOO_MANY_LOGINS()
      const user = await deps.accounts.getUserByEmail(email)
      dummyHash ??= hashPassword(crypto.randomBytes(16).toString('hex'))
      // The same scrypt work whether or not the address exists, so timing tells nothing.
      const ok = await verifyPassword(password, user?.password_hash ?? (await dummyHash))
      if (!user || !ok) {
        // The failure that reaches the limit is already answered with the lockout (django-axes).
        await deps.limiter.hit(rules.loginFailures, ip)
        if ((await deps.limiter.wait(rules.loginFailures, ip)) > 0) throw TOO_MANY_LOGINS()
        throw INVALID_CREDENTIALS()
      }
      const needsSecondFactor = (await deps.accounts.getTotpDevice(user.id)) !== undefined
      if (!needsSecondFactor) await deps.accounts.updateUser(user.id, { last_login: now().toISOString() })
      return { user, needsSecondFactor }
    },

    /**
     * `POST /api/login/token`: the second step. A TOTP code (±1 step, never a step already used) or an unused
     * backup code (consumed, and its use mailed); attempts are throttled per user and per IP.
     */
    async loginSecondFactor(pending: SessionRow | undefined, body: unknown, ip: string): Promise<AccountUserRow> {
      if (pending?.state !== 'pending_2fa' || now().getTime() - pending.created_at > PENDING_2FA_MS) {
        throw LOGIN_EXPIRED()
      }
      const token = stringField(fieldsOf(body), 'token') as string
      const user = await deps.accounts.getUser(pending.user_id)
      const device = user && (await deps.accounts.getTotpDevice(user.id))
      if (!user || !device) throw LOGIN_EXPIRED()
      await throttleCode(user.id, ip)
      const step = matchingStep(device.secret_hex, token, now(), [-1, 0, 1])
      let accepted = step !== null && (await deps.accounts.claimTotpStep(user.id, step))
      if (!accepted && /^[a-z2-7]{8}$/i.test(token)) {
        accepted = await deps.accounts.consumeBackupCode(user.id, hashBackupCode(token))
        if (accepted) deliver(messages.backupCodeUsed(user.email))
      }
      if (!accepted) throw new ValidationError('Invalid authentication code', null, '2fa_invalid')
      return deps.accounts.updateUser(user.id, { last_login: now().toISOString() })
    },

    /** `POST /api/reset/`: mails a reset link when the address has an account; the answer never tells. */
    async requestPasswordReset(body: unknown) {
      const email = stringField(fieldsOf(body), 'email') as string
      const wait = await deps.limiter.hit(rules.resetMail, email.toLowerCase())
      if (wait > 0) throw new Throttled(wait)
      const user = await deps.accounts.getUserByEmail(email)
      if (!user) return
      const saved = await deps.accounts.updateUser(user.id, { requested_password_reset_at: now().toISOString() })
      const token = await deps.signer.make('password_reset', resetState(saved))
      deliver(messages.passwordReset(saved.email, `${deps.siteUrl}/reset/${saved.uuid}/${token}`))
    },

    /** The user a reset token is valid for, or a 400 on `token`. */
    async checkResetToken(uuid: string, token: unknown): Promise<AccountUserRow> {
      if (token === undefined || token === '') throw new ValidationError('This field is required.', 'token', 'required')
      const user = /^[0-9a-f-]{36}$/i.test(uuid) ? await deps.accounts.getUserByUuid(uuid) : undefined
      const valid = user && (await deps.signer.check('password_reset', resetState(user), token, TOKEN_MAX_AGE_SECONDS))
      if (!user || !valid) {
        throw new ValidationError('This reset token is invalid or has expired.', 'token', 'invalid_token')
      }
      return user
    },

    /** `POST /api/reset/{uuid}/`: sets the new password; every session of the user ends, none starts. */
    async resetPassword(uuid: string, body: unknown): Promise<AccountUserRow> {
      const fields = fieldsOf(body)
      const token = stringField(fields, 'token', { trim: false })
      const user = await this.checkResetToken(uuid, token)
      const password = stringField(fields, 'password', { trim: false }) as string
      validatePassword(password, 'password', 'invalid_input')
      const saved = await deps.accounts.updateUser(user.id, {
        password_hash: await hashPassword(password),
        requested_password_reset_at: null,
      })
      await deps.accounts.deleteSessionsOf(user.id, null)
      return saved
    },

    /** `POST /api/users/request_email_verification/`: always succeeds, so it tells nothing about users. */
    async requestEmailVerification(body: unknown) {
      const uuid = stringField(fieldsOf(body), 'uuid') as string
      const wait = await deps.limiter.hit(rules.verifyMail, uuid.toLowerCase())
      if (wait > 0) throw new Throttled(wait)
      const user = /^[0-9a-f-]{36}$/i.test(uuid) ? await deps.accounts.getUserByUuid(uuid) : undefined
      if (user && (user.is_email_verified !== 1 || user.pending_email)) await sendVerification(user)
    },

    /**
     * `POST /api/users/verify_email/`: a pending address becomes the e-mail (the old one is told), the address
     * is verified, and the user may be logged in (not when 2FA is on: a mailed link is no second factor).
     */
    async verifyEmail(body: unknown): Promise<{ user: AccountUserRow; logIn: boolean; token: string }> {
      const fields = fieldsOf(body)
      const token = stringField(fields, 'token', { trim: false }) as string
      const uuid = stringField(fields, 'uuid') as string
      const user = /^[0-9a-f-]{36}$/i.test(uuid) ? await deps.accounts.getUserByUuid(uuid) : undefined
      const valid =
        user && (await deps.signer.check('verify_email', verificationState(user), token, TOKEN_MAX_AGE_SECONDS))
      if (!user || !valid) {
        throw new ValidationError('This verification token is invalid or has expired.', 'token', 'invalid_token')
      }
      const patch: Partial<AccountUserRow> = { is_email_verified: 1, last_login: now().toISOString() }
      if (user.pending_email) {
        if (await deps.accounts.isEmailTaken(user.pending_email, user.id)) {
          throw new ValidationError('There is already an account with this email address.', 'email', 'unique')
        }
        patch.email = user.pending_email
        patch.pending_email = null
        deliver(messages.emailChanged(user.email, user.pending_email))
      }
      const saved = await deps.accounts.updateUser(user.id, patch)
      const logIn = (await deps.accounts.getTotpDevice(user.id)) === undefined
      return { user: saved, logIn, token }
    },

    toSignupRecord(user: AccountUserRow) {
      const basic = toUserBasic(user)
      return { ...basic, redirect_url: '/' }
    },

    deliver,
    throttleCode,
    preferenceFields: PREFERENCE_FIELDS,
  }
}
export type AccountService = ReturnType<typeof createAccountService>
