import crypto from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { PermissionDenied } from '../http/errors.js'
import type { AccountStore, SessionRow } from './store.js'

/** Django's names, which PostHog's web app and scripts use. */
export const SESSION_COOKIE = 'sessionid'
export const CSRF_COOKIE = 'posthog_csrftoken'
export const CSRF_HEADER = 'x-csrftoken'

const SESSION_AGE_MS = 14 * 24 * 3_600_000
/** How long the step between a correct password and the second factor may take. */
export const PENDING_2FA_MS = 600_000
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE'])
const SWEEP_INTERVAL_MS = 3_600_000

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  if (!header) return out
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    const name = part.slice(0, eq).trim()
    if (!name || name in out) continue
    let value = part.slice(eq + 1).trim()
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1)
    try {
      out[name] = decodeURIComponent(value)
    } catch {
      out[name] = value
    }
  }
  return out
}

const hashOf = (token: string) => crypto.createHash('sha256').update(token).digest('hex')

function sameBytes(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && crypto.timingSafeEqual(x, y)
}

/**
 * Logged-in sessions: an opaque random cookie (`sessionid`, HttpOnly, SameSite=Lax, Secure when SITE_URL is https)
 * whose SHA-256 names a row in the metadata store, so every process sees every session. Cookie-authenticated
 * writes need Django's double-submit CSRF token: the `posthog_csrftoken` cookie echoed in `X-CSRFToken`, and an
 * `Origin`, when sent, of this site.
 */
export function createSessionManager(deps: {
  store: Pick<
    AccountStore,
    'getSession' | 'insertSession' | 'updateSession' | 'deleteSession' | 'sweepSessions' | 'getUser'
  >
  siteUrl: string
  clock: () => Date
  onError: (err: unknown, what: string) => void
}) {
  const secure = deps.siteUrl.startsWith('https:')
  const siteOrigin = new URL(deps.siteUrl).origin

  function cookie(name: string, value: string, maxAgeSeconds: number, httpOnly: boolean): string {
    const parts = [`${name}=${value}`, 'Path=/', `Max-Age=${maxAgeSeconds}`, 'SameSite=Lax']
    if (maxAgeSeconds <= 0) parts.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT')
    if (httpOnly) parts.push('HttpOnly')
    if (secure) parts.push('Secure')
    return parts.join('; ')
  }

  function addCookie(reply: FastifyReply, value: string) {
    const existing = reply.getHeader('set-cookie')
    const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)]
    reply.header('set-cookie', [...list, value])
  }

  const sweeper = setInterval(() => {
    deps.store.sweepSessions(deps.clock().getTime()).catch((err) => deps.onError(err, 'session sweep'))
  }, SWEEP_INTERVAL_MS)
  sweeper.unref()

  const tokenOf = (req: FastifyRequest) => parseCookies(req.headers.cookie)[SESSION_COOKIE]

  return {
    /**
     * Starts a session for the user (a fresh id every time, so a session id known before login is worthless) and
     * a fresh CSRF token. `pending_2fa` sessions only let the second factor be tried.
     */
    async start(reply: FastifyReply, userId: number, state: SessionRow['state']): Promise<string> {
      const token = crypto.randomBytes(32).toString('base64url')
      const now = deps.clock().getTime()
      const age = state === 'active' ? SESSION_AGE_MS : PENDING_2FA_MS
      const id = hashOf(token)
      await deps.store.insertSession({
        id,
        user_id: userId,
        state,
        created_at: now,
        expires_at: now + age,
        otp_setup_secret: null,
        otp_setup_expires_at: null,
      })
      addCookie(reply, cookie(SESSION_COOKIE, token, Math.floor(age / 1000), true))
      addCookie(reply, cookie(CSRF_COOKIE, crypto.randomBytes(24).toString('base64url'), 365 * 24 * 3600, false))
      return id
    },

    /** The request's session row, when its cookie names one that has not expired. */
    async read(req: FastifyRequest): Promise<SessionRow | undefined> {
      const token = tokenOf(req)
      if (!token || token.length > 100) return undefined
      const row = await deps.store.getSession(hashOf(token))
      if (!row || Number(row.expires_at) <= deps.clock().getTime()) return undefined
      return { ...row, created_at: Number(row.created_at), expires_at: Number(row.expires_at) }
    },

    /** Ends the request's session (if any) and clears its cookie. */
    async end(req: FastifyRequest, reply: FastifyReply): Promise<void> {
      const token = tokenOf(req)
      if (token) await deps.store.deleteSession(hashOf(token))
      addCookie(reply, cookie(SESSION_COOKIE, '', 0, true))
    },

    /** Django's CsrfViewMiddleware for cookie-authenticated requests: unsafe methods need the token. */
    checkCsrf(req: FastifyRequest): void {
      if (SAFE_METHODS.has(req.method)) return
      const origin = req.headers.origin
      if (origin && origin !== siteOrigin && origin !== `${req.protocol}://${req.headers.host}`) {
        throw new PermissionDenied(
          `CSRF Failed: Origin checking failed - ${origin} does not match any trusted origins.`,
        )
      }
      const expected = parseCookies(req.headers.cookie)[CSRF_COOKIE]
      if (!expected) throw new PermissionDenied('CSRF Failed: CSRF cookie not set.')
      const given = req.headers[CSRF_HEADER]
      if (typeof given !== 'string' || !given) throw new PermissionDenied('CSRF Failed: CSRF token missing.')
      if (!sameBytes(given, expected)) throw new PermissionDenied('CSRF Failed: CSRF token incorrect.')
    },

    /** A CSRF cookie for a logged-in client that has none (e.g. after its cookie jar lost it). */
    ensureCsrfCookie(req: FastifyRequest, reply: FastifyReply): void {
      if (parseCookies(req.headers.cookie)[CSRF_COOKIE]) return
      addCookie(reply, cookie(CSRF_COOKIE, crypto.randomBytes(24).toString('base64url'), 365 * 24 * 3600, false))
    },

    close: () => clearInterval(sweeper),
  }
}
export type SessionManager = ReturnType<typeof createSessionManager>
