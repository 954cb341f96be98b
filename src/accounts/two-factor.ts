import { ValidationError } from '../http/errors.js'
import { messages } from './messages.js'
import type { AccountService } from './service.js'
import type { AccountStore, AccountUserRow, SessionRow } from './store.js'
import { base32OfHex, hashBackupCode, matchingStep, newBackupCode, newTotpSecretHex, provisioning } from './totp.js'

/** How long a secret from start_setup waits for its first code (django-two-factor keeps it 600 s). */
const SETUP_TTL_MS = 600_000
const BACKUP_CODES = 5

/**
 * TOTP two-factor authentication (products.md §4): a secret kept with the session that asked for it until a
 * code proves the authenticator has it; backup codes stored hashed, each usable once; mails on every change.
 */
export function createTwoFactorService(deps: {
  accounts: Pick<
    AccountStore,
    | 'updateSession'
    | 'getTotpDevice'
    | 'saveTotpDevice'
    | 'deleteSecondFactors'
    | 'replaceBackupCodes'
    | 'countBackupCodes'
  >
  service: Pick<AccountService, 'deliver' | 'throttleCode'>
  clock: () => Date
}) {
  return {
    async startSetup(session: SessionRow, user: AccountUserRow) {
      const secretHex = newTotpSecretHex()
      await deps.accounts.updateSession(session.id, {
        otp_setup_secret: secretHex,
        otp_setup_expires_at: deps.clock().getTime() + SETUP_TTL_MS,
      })
      const { uri, svg } = await provisioning(secretHex, user.email)
      return { success: true, secret: base32OfHex(secretHex), uri, qr_code_svg: svg }
    },

    /** Finishing setup accepts the current or the previous 30-second step. */
    async validateSetup(session: SessionRow, user: AccountUserRow, body: unknown, ip: string) {
      const raw = body && typeof body === 'object' ? (body as Record<string, unknown>).token : undefined
      if (raw === undefined || raw === null) throw new ValidationError('This field is required.', 'token', 'required')
      const secret = session.otp_setup_secret
      const expires = session.otp_setup_expires_at === null ? 0 : Number(session.otp_setup_expires_at)
      if (!secret || expires <= deps.clock().getTime()) {
        throw new ValidationError('2FA setup session expired. Please start setup again.', null, 'setup_expired')
      }
      await deps.service.throttleCode(user.id, ip)
      const step = matchingStep(secret, String(raw).trim(), deps.clock(), [-1, 0])
      if (step === null) throw new ValidationError('Token is not valid', null, 'token_invalid')
      await deps.accounts.saveTotpDevice({
        user_id: user.id,
        secret_hex: secret,
        last_step: step,
        created_at: deps.clock().toISOString(),
      })
      await deps.accounts.updateSession(session.id, { otp_setup_secret: null, otp_setup_expires_at: null })
      deps.service.deliver(messages.twoFactorEnabled(user.email))
      return { success: true }
    },

    /**
     * Backup codes are stored as hashes, so the status can tell how many are left but never list them again:
     * `backup_codes` is always empty and `backup_codes_remaining` counts them (newer PostHog's field).
     */
    async status(user: AccountUserRow) {
      const device = await deps.accounts.getTotpDevice(user.id)
      return {
        is_enabled: device !== undefined,
        backup_codes: [] as string[],
        backup_codes_remaining: device ? await deps.accounts.countBackupCodes(user.id) : 0,
        method: device ? 'TOTP' : null,
      }
    },

    async regenerateBackupCodes(user: AccountUserRow) {
      if (!(await deps.accounts.getTotpDevice(user.id))) {
        throw new ValidationError('2FA must be enabled first', null, '2fa_not_enabled')
      }
      const codes = Array.from({ length: BACKUP_CODES }, newBackupCode)
      await deps.accounts.replaceBackupCodes(user.id, codes.map(hashBackupCode), deps.clock().toISOString())
      return { backup_codes: codes }
    },

    async disable(user: AccountUserRow) {
      const hadDevice = (await deps.accounts.getTotpDevice(user.id)) !== undefined
      await deps.accounts.deleteSecondFactors(user.id)
      if (hadDevice) deps.service.deliver(messages.twoFactorDisabled(user.email))
      return { success: true }
    },
  }
}
export type TwoFactorService = ReturnType<typeof createTwoFactorService>
