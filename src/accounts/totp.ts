import crypto from 'node:crypto'
import { Secret, TOTP } from 'otpauth'
import QRCode from 'qrcode'

/** django-two-factor's defaults: 6 digits, 30-second steps from t0 = 0, SHA-1. */
const PERIOD_SECONDS = 30
const DIGITS = 6
const ISSUER = 'Burrow'

export const newTotpSecretHex = () => crypto.randomBytes(20).toString('hex')

export const base32OfHex = (hex: string) => Secret.fromHex(hex).base32

function totpOf(secretHex: string, email = '') {
  return new TOTP({
    issuer: ISSUER,
    label: email,
    algorithm: 'SHA1',
    digits: DIGITS,
    period: PERIOD_SECONDS,
    secret: Secret.fromHex(secretHex),
  })
}

/** The `otpauth://` URI authenticator apps read, and the same as a QR code in SVG. */
export async function provisioning(secretHex: string, email: string) {
  const uri = totpOf(secretHex, email).toString()
  const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
  return { uri, svg }
}

/**
 * The 30-second step a code belongs to, or null: `steps` lists the offsets from now that are accepted (login:
 * -1, 0, +1; finishing setup: -1, 0).
 */
export function matchingStep(secretHex: string, token: string, at: Date, steps: readonly number[]): number | null {
  if (!/^\d{6}$/.test(token)) return null
  const totp = totpOf(secretHex)
  const now = at.getTime()
  const current = Math.floor(now / 1000 / PERIOD_SECONDS)
  for (const offset of steps) {
    const timestamp = now + offset * PERIOD_SECONDS * 1000
    const expected = Buffer.from(totp.generate({ timestamp }))
    const given = Buffer.from(token)
    if (crypto.timingSafeEqual(expected, given)) return current + offset
  }
  return null
}

/** A backup code: base32 of 5 random bytes, lower-cased (8 characters from [a-z2-7]), as django-otp makes them. */
export function newBackupCode(): string {
  return new Secret({ buffer: Uint8Array.from(crypto.randomBytes(5)).buffer }).base32.toLowerCase()
}

/** How a backup code is stored: its SHA-256 (the code has 40 random bits and is tried under a throttle). */
export const hashBackupCode = (code: string) =>
  crypto.createHash('sha256').update(code.trim().toLowerCase()).digest('hex')
