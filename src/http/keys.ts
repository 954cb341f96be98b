import crypto from 'node:crypto'
import { promisify } from 'node:util'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** base62 of random bytes, PostHog's alphabet and no padding. */
export function randomBase62(bytes: number): string {
  let n = BigInt(`0x${crypto.randomBytes(bytes).toString('hex')}`)
  let out = ''
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out
    n /= 62n
  }
  return out || '0'
}

export const newProjectApiKey = () => `phc_${randomBase62(32)}`
export const newPersonalApiKey = () => `phx_${randomBase62(35)}`

/** How a personal API key is stored: only its SHA-256, as PostHog does. */
export function hashPersonalApiKey(key: string): string {
  return `sha256$${crypto.createHash('sha256').update(key).digest('hex')}`
}

export const maskKey = (key: string) => `${key.slice(0, 4)}...${key.slice(-4)}`

const scrypt = promisify(crypto.scrypt) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>
const SCRYPT = { N: 16384, r: 8, p: 1 }

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16)
  const hash = await scrypt(password, salt, 32, { ...SCRYPT, maxmem: 64 * 1024 * 1024 })
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${hash.toString('base64')}`
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [algo, n, r, p, salt, hash] = stored.split('$')
  if (algo !== 'scrypt' || !hash) return false
  const expected = Buffer.from(hash, 'base64')
  const actual = await scrypt(password, Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 64 * 1024 * 1024,
  })
  return crypto.timingSafeEqual(actual, expected)
}
