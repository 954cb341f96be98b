import crypto from 'node:crypto'

/**
 * Signed, expiring tokens bound to a user's state (Django's PasswordResetTokenGenerator scheme): the token is the
 * time it was made and an HMAC of that time, its purpose and the state. Changing any part of the state (the
 * password, the e-mail, the last login, the verification flag) invalidates every token made before, which makes
 * them single-use.
 */
export function createTokenSigner(deps: { secret: () => Promise<string>; clock: () => Date }) {
  async function mac(purpose: string, state: string, seconds: number) {
    const key = await deps.secret()
    return crypto.createHmac('sha256', key).update(`${purpose}\0${state}\0${seconds}`).digest('base64url').slice(0, 32)
  }

  return {
    async make(purpose: string, state: string): Promise<string> {
      const seconds = Math.floor(deps.clock().getTime() / 1000)
      return `${seconds.toString(36)}-${await mac(purpose, state, seconds)}`
    },

    async check(purpose: string, state: string, token: unknown, maxAgeSeconds: number): Promise<boolean> {
      if (typeof token !== 'string') return false
      const match = /^([0-9a-z]{1,13})-([A-Za-z0-9_-]{32})$/.exec(token)
      if (!match) return false
      const seconds = Number.parseInt(match[1], 36)
      const age = Math.floor(deps.clock().getTime() / 1000) - seconds
      if (!Number.isSafeInteger(seconds) || age < 0 || age > maxAgeSeconds) return false
      const expected = Buffer.from(await mac(purpose, state, seconds))
      const given = Buffer.from(match[2])
      return expected.length === given.length && crypto.timingSafeEqual(expected, given)
    },
  }
}
export type TokenSigner = ReturnType<typeof createTokenSigner>
