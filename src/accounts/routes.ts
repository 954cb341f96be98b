import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { ApiError, PermissionDenied } from '../http/errors.js'
import { NoContent, Success, serializeAsIs } from '../http/openapi.js'
import { SESSION_ONLY } from '../http/scopes.js'
import { clientIp } from '../ingest/geoip.js'
import { fieldsOf } from './fields.js'
import { NON_STAFF_OTHER_USER, type ProfileService } from './profile.js'
import {
  BackupCodes,
  EmailBody,
  InviteInfo,
  InviteSignupBody,
  LoginBody,
  ResetBody,
  ResetDone,
  SignupBody,
  SignupRecord,
  TokenBody,
  TwoFactorSetup,
  TwoFactorStatus,
  UserRecord,
  UserUpdate,
  UuidBody,
  Verified,
  VerifyBody,
} from './schemas.js'
import type { AccountService } from './service.js'
import type { SessionManager } from './sessions.js'
import type { AccountStore, AccountUserRow } from './store.js'
import type { TwoFactorService } from './two-factor.js'

const UserParams = Type.Object({ uuid: Type.String({ maxLength: 64 }) })
const InviteParams = Type.Object({ inviteId: Type.String({ maxLength: 64 }) })
const AnyBody = Type.Unknown()
const tags = ['users']

/**
 * Accounts over HTTP: sign-up, login (with the second factor), logout, password reset, e-mail verification, the
 * user record and 2FA. The public routes (scope null) find the session themselves; the others go through
 * src/http/auth.ts, which accepts a session or a personal API key.
 */
export function accountRoutes(deps: {
  service: AccountService
  profile: ProfileService
  twoFactor: TwoFactorService
  sessions: SessionManager
  accounts: Pick<AccountStore, 'getUser' | 'getSession'>
  trustedProxies: number
}) {
  const { service, profile, twoFactor, sessions } = deps
  const ipOf = (req: FastifyRequest) =>
    clientIp(req.headers, req.socket.remoteAddress, deps.trustedProxies) || 'unknown'

  /** The logged-in user of a public route's request, if its session is complete (CSRF-checked for writes). */
  async function sessionUser(req: FastifyRequest): Promise<AccountUserRow | undefined> {
    const session = await sessions.read(req)
    if (session?.state !== 'active') return undefined
    sessions.checkCsrf(req)
    return deps.accounts.getUser(session.user_id)
  }

  async function currentSession(req: FastifyRequest) {
    const session = req.auth.sessionId ? await deps.accounts.getSession(req.auth.sessionId) : undefined
    if (!session) throw new PermissionDenied('This action needs a logged-in session.')
    return { ...session, created_at: Number(session.created_at), expires_at: Number(session.expires_at) }
  }

  /** 2FA is managed on one's own account; staff may read and turn off someone else's (a lost device). */
  async function twoFactorTarget(req: FastifyRequest, othersAllowed: boolean): Promise<AccountUserRow> {
    const caller = req.auth.user as AccountUserRow
    const target = await profile.target(caller, (req.params as { uuid: string }).uuid)
    if (target.id !== caller.id && !othersAllowed) throw new PermissionDenied(NON_STAFF_OTHER_USER)
    return target
  }

  async function logIn(reply: FastifyReply, user: AccountUserRow) {
    await sessions.start(reply, user.id, 'active')
  }

  return async (app: FastifyInstance) => {
    // The answers are built by the services; their schemas below document them and do not filter them.
    app.setSerializerCompiler(serializeAsIs)
    const open = { scope: null }

    app.post(
      '/api/signup/',
      {
        schema: {
          summary: 'Sign up',
          description:
            'Creates a user with a new organization and project, and logs them in (session cookie). Weak passwords and taken addresses are refused as PostHog refuses them.',
          response: { 201: SignupRecord },
          tags,
          body: AnyBody,
        },
        config: { ...open, documentedBody: SignupBody },
      },
      async (req, reply) => {
        const user = await service.signup(req.body)
        await logIn(reply, user)
        return reply.code(201).send(service.toSignupRecord(user))
      },
    )
    app.get(
      '/api/signup/:inviteId/',
      {
        schema: {
          summary: 'Look up an invite',
          description:
            'What an invite link shows before sign-up: the invited address and the organization’s name. Expired or used invites answer 400.',
          response: { 200: InviteInfo },
          tags,
          params: InviteParams,
        },
        config: open,
      },
      async (req) => service.inviteInfo((req.params as { inviteId: string }).inviteId),
    )
    app.post(
      '/api/signup/:inviteId/',
      {
        schema: {
          summary: 'Accept an invite',
          description:
            'A new user made from the invite (the address is the invite’s), or the logged-in user it is for, joins the organization at the invite’s level and is logged in.',
          response: { 201: SignupRecord },
          tags,
          params: InviteParams,
          body: AnyBody,
        },
        config: { ...open, documentedBody: InviteSignupBody },
      },
      async (req, reply) => {
        const user = await service.acceptInvite(
          (req.params as { inviteId: string }).inviteId,
          req.body,
          await sessionUser(req),
        )
        await logIn(reply, user)
        return reply.code(201).send(service.toSignupRecord(user))
      },
    )

    app.post(
      '/api/login',
      {
        schema: {
          summary: 'Log in',
          description:
            'Starts a session (cookies `sessionid` and `posthog_csrftoken`). With 2FA on, answers 401 `2fa_required` and the code goes to `/api/login/token`. Failures are limited per client IP.',
          response: { 200: Success },
          tags,
          body: AnyBody,
        },
        config: { ...open, documentedBody: LoginBody },
      },
      async (req, reply) => {
        const { user, needsSecondFactor } = await service.login(req.body, ipOf(req))
        if (needsSecondFactor) {
          await sessions.start(reply, user.id, 'pending_2fa')
          throw new ApiError(401, 'server_error', '2fa_required', '2FA is required.')
        }
        await logIn(reply, user)
        return { success: true }
      },
    )
    app.post(
      '/api/login/token',
      {
        schema: {
          summary: 'Log in: second factor',
          description: 'Completes a login that answered `2fa_required`, with a TOTP code or a backup code.',
          response: { 200: Success },
          tags,
          body: AnyBody,
        },
        config: { ...open, documentedBody: TokenBody },
      },
      async (req, reply) => {
        const pending = await sessions.read(req)
        const user = await service.loginSecondFactor(pending, req.body, ipOf(req))
        await sessions.end(req, reply)
        await logIn(reply, user)
        return { success: true }
      },
    )
    app.post(
      '/api/logout/',
      {
        schema: {
          summary: 'Log out',
          description: 'Ends the session and clears its cookies.',
          response: { 200: Success },
          tags,
        },
        config: open,
      },
      async (req, reply) => {
        if (await sessions.read(req)) sessions.checkCsrf(req)
        await sessions.end(req, reply)
        return { success: true }
      },
    )

    app.post(
      '/api/reset/',
      {
        schema: {
          summary: 'Request a password reset',
          description: 'Mails a reset link to the address if a user has it; the answer is the same either way.',
          response: { 204: NoContent },
          tags,
          body: AnyBody,
        },
        config: { ...open, documentedBody: EmailBody },
      },
      async (req, reply) => {
        await service.requestPasswordReset(req.body)
        return reply.code(204).send()
      },
    )
    app.get(
      '/api/reset/:uuid/',
      {
        schema: {
          summary: 'Check a reset link',
          description: 'Answers 200 if the reset `token` is valid for the user, 400 if not.',
          response: { 200: NoContent },
          tags,
          params: UserParams,
          querystring: Type.Object({ token: Type.Optional(Type.String()) }),
        },
        config: open,
      },
      async (req, reply) => {
        await service.checkResetToken((req.params as { uuid: string }).uuid, (req.query as { token?: string }).token)
        return reply.code(200).send()
      },
    )
    app.post(
      '/api/reset/:uuid/',
      {
        schema: {
          summary: 'Reset the password',
          description:
            'Sets a new password with the mailed token, ends the user’s other sessions, and answers the user’s address.',
          response: { 200: ResetDone },
          tags,
          params: UserParams,
          body: AnyBody,
        },
        config: { ...open, documentedBody: ResetBody },
      },
      async (req) => {
        const user = await service.resetPassword((req.params as { uuid: string }).uuid, req.body)
        return { success: true, email: user.email }
      },
    )

    app.post(
      '/api/users/request_email_verification/',
      {
        schema: {
          summary: 'Resend the verification mail',
          description: 'Mails a new e-mail verification link to the user with this uuid.',
          response: { 200: Success },
          tags,
          body: AnyBody,
        },
        config: { ...open, documentedBody: UuidBody },
      },
      async (req) => {
        await service.requestEmailVerification(req.body)
        return { success: true }
      },
    )
    app.post(
      '/api/users/verify_email/',
      {
        schema: {
          summary: 'Verify an e-mail address',
          description:
            'Confirms the address (or a pending change of address) with the mailed token, and logs the user in when no one is.',
          response: { 200: Verified },
          tags,
          body: AnyBody,
        },
        config: { ...open, documentedBody: VerifyBody },
      },
      async (req, reply) => {
        const { user, logIn: shouldLogIn, token } = await service.verifyEmail(req.body)
        if (shouldLogIn) await logIn(reply, user)
        return { success: true, token }
      },
    )
    app.patch(
      '/api/users/cancel_email_change_request/',
      {
        schema: {
          summary: 'Cancel an e-mail change',
          description: 'Drops the pending new address; the current one stays.',
          response: { 200: UserRecord },
          tags,
        },
        config: { scope: SESSION_ONLY },
      },
      async (req) => profile.cancelEmailChange(req.auth.user as AccountUserRow),
    )

    // `@me` has its own route (the common case, and what the API coverage lists); other users by uuid.
    const lookupOf = (req: FastifyRequest) => (req.params as { uuid?: string }).uuid ?? '@me'
    for (const url of ['/api/users/@me/', '/api/users/:uuid/']) {
      const params = url.includes(':uuid') ? { params: UserParams } : {}
      app.get(
        url,
        {
          schema: {
            summary: 'Retrieve a user',
            description:
              'The user record (`@me` for oneself) with the current organization and project and every organization the user belongs to.',
            response: { 200: UserRecord },
            tags,
            ...params,
          },
          config: { scope: 'user:read' },
        },
        async (req) => profile.record(await profile.target(req.auth.user as AccountUserRow, lookupOf(req))),
      )
      app.patch(
        url,
        {
          schema: {
            summary: 'Update a user',
            description:
              'Changes names, preferences, the current organization or project (`set_current_organization`, `set_current_team`), the password (with `current_password`) or the address (confirmed by mail first).',
            response: { 200: UserRecord },
            tags,
            ...params,
            body: AnyBody,
          },
          config: { scope: 'user:write', documentedBody: UserUpdate },
        },
        async (req) => {
          const caller = req.auth.user as AccountUserRow
          const target = await profile.target(caller, lookupOf(req))
          return profile.update({ user: caller, sessionId: req.auth.sessionId }, target, fieldsOf(req.body))
        },
      )
    }

    const session = { scope: SESSION_ONLY }
    for (const path of ['two_factor_start_setup', 'start_2fa_setup']) {
      app.get(
        `/api/users/:uuid/${path}/`,
        {
          schema: {
            summary: 'Start 2FA setup',
            description:
              'A new TOTP secret for one’s own account, as a URI and a QR code; it takes effect once a code from it is validated.',
            response: { 200: TwoFactorSetup },
            tags,
            params: UserParams,
          },
          config: session,
        },
        async (req) => twoFactor.startSetup(await currentSession(req), await twoFactorTarget(req, false)),
      )
    }
    for (const path of ['two_factor_validate', 'validate_2fa']) {
      app.post(
        `/api/users/:uuid/${path}/`,
        {
          schema: {
            summary: 'Confirm 2FA setup',
            description: 'Turns 2FA on with a code from the secret of the setup started in this session.',
            response: { 200: Success },
            tags,
            params: UserParams,
            body: AnyBody,
          },
          config: { ...session, documentedBody: TokenBody },
        },
        async (req) =>
          twoFactor.validateSetup(await currentSession(req), await twoFactorTarget(req, false), req.body, ipOf(req)),
      )
    }
    app.get(
      '/api/users/:uuid/two_factor_status/',
      {
        schema: {
          summary: '2FA status',
          description: 'Whether 2FA is on and how many backup codes remain (staff may read another user’s).',
          response: { 200: TwoFactorStatus },
          tags,
          params: UserParams,
        },
        config: { scope: 'user:read' },
      },
      async (req) => twoFactor.status(await twoFactorTarget(req, true)),
    )
    app.post(
      '/api/users/:uuid/two_factor_backup_codes/',
      {
        schema: {
          summary: 'New backup codes',
          description: 'Replaces the backup codes; the new ones are shown this once.',
          response: { 200: BackupCodes },
          tags,
          params: UserParams,
        },
        config: session,
      },
      async (req) => twoFactor.regenerateBackupCodes(await twoFactorTarget(req, false)),
    )
    app.post(
      '/api/users/:uuid/two_factor_disable/',
      {
        schema: {
          summary: 'Turn 2FA off',
          description:
            'Removes the TOTP device and backup codes (one’s own, or, for staff, another user’s after a lost device).',
          response: { 200: Success },
          tags,
          params: UserParams,
        },
        config: session,
      },
      async (req) => twoFactor.disable(await twoFactorTarget(req, true)),
    )
  }
}
