// Request limits shared by every process: fixed-window counters and leased concurrency slots in the metadata
// store (rate-limit-store.ts). Successful capture and /flags requests are never counted; what is counted is
// failed authentication, failed public requests, and query work.
import crypto from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { RateLimitConfig } from '../config.js'
import { clientIp } from '../ingest/geoip.js'
import { closeUnread } from './close-unread.js'
import { ApiError, Throttled } from './errors.js'
import type { RateLimitStore } from './rate-limit-store.js'

export interface WindowRule {
  /** Names the counter: rules with different names count apart. */
  name: string
  /** Hits allowed per window; 0 means no limit. */
  limit: number
  windowMs: number
}

const MINUTE_MS = 60_000
const HOUR_MS = 3_600_000
const LEASE_MS = 60_000
const SWEEP_INTERVAL_MS = 60_000
const MAX_REMEMBERED_BLOCKS = 10_000
/**
 * Refusals (429s) or counted failures a subject (an address, or query credentials) gets at once in a window; each
 * one past this is answered late: TARPIT_MS, doubled every TARPIT_DOUBLING more, up to TARPIT_MAX_MS. A client
 * sending back to back as fast as it is answered (a flood) then sends ten requests a second, and within about
 * seven seconds two; no SDK retries a 429 that often (they wait for Retry-After or back off). The first ones come
 * as a burst at full speed: at 50, a flood of over-deep events (~1 ms each) or unreadable HogQL (~2 ms each) took
 * 50–100 ms of the request thread almost at once, beside other projects' traffic. A refused query is read and
 * parsed before it is refused (~2–5 ms of the request thread for a 200 KB body), so ten a second still held the
 * thread 2–5% of the time in chunks as long as other projects' p99; two a second, under 1%. Only refusals and
 * failures are ever slowed, so a low threshold costs good traffic nothing.
 */
export const TARPIT_AFTER = 20
export const TARPIT_MS = 100
export const TARPIT_DOUBLING = 10
export const TARPIT_MAX_MS = 500

/** How late the `count`-th refusal or failure of a subject in its window is answered (ms; 0: at once). */
export function tarpitDelay(count: number): number {
  if (count <= TARPIT_AFTER) return 0
  return Math.min(TARPIT_MAX_MS, TARPIT_MS * 2 ** Math.floor((count - TARPIT_AFTER - 1) / TARPIT_DOUBLING))
}
/** Answers held back at once (in this process); past this, the next refusal is answered at once. */
const MAX_TARPITTED = 256

/**
 * Counts hits against fixed windows and hands out concurrency slots. A subject that reaches its limit is also
 * remembered here until the window ends, so that refusing it again costs no store round trip. The store
 * failing never refuses a request: limits are protection, not a reason to go down with the database.
 */
export function createRateLimiter(deps: {
  store: RateLimitStore
  clock: () => Date
  onError: (err: unknown, what: string) => void
}) {
  /** `rule:subject` → end of the window in which it reached its limit (ms). */
  const blocked = new Map<string, number>()
  const now = () => deps.clock().getTime()
  const secondsUntil = (end: number, at: number) => Math.max(1, Math.ceil((end - at) / 1000))

  function windowOf(rule: WindowRule, subject: string, at: number) {
    const start = Math.floor(at / rule.windowMs) * rule.windowMs
    return { key: `${rule.name}:${subject}:${start}`, end: start + rule.windowMs }
  }

  function remember(id: string, end: number, at: number) {
    if (blocked.size >= MAX_REMEMBERED_BLOCKS) {
      for (const [k, until] of blocked) if (until <= at) blocked.delete(k)
      if (blocked.size >= MAX_REMEMBERED_BLOCKS) blocked.clear()
    }
    blocked.set(id, end)
  }

  /** Seconds left of a remembered block, or 0. */
  function remembered(id: string, at: number): number {
    const until = blocked.get(id)
    if (until === undefined) return 0
    if (until <= at) {
      blocked.delete(id)
      return 0
    }
    return secondsUntil(until, at)
  }

  const sweeper = setInterval(() => {
    deps.store.sweep(now()).catch((err) => deps.onError(err, 'rate-limit sweep'))
  }, SWEEP_INTERVAL_MS)
  sweeper.unref()
  const leases = new Set<NodeJS.Timeout>()

  return {
    /** Whether this process is refusing any subject at all (if not, nobody needs looking up). */
    isRefusingAny: () => blocked.size > 0,

    /** The limiter's clock, in ms. */
    now,

    /**
     * Seconds the subject must wait as far as this process knows (0: go ahead), from memory only: it counted
     * the hit that reached the limit, or read it from the shared counter.
     */
    waitHere(rule: WindowRule, subject: string): number {
      return rule.limit <= 0 ? 0 : remembered(`${rule.name}:${subject}`, now())
    },

    /**
     * Seconds the subject must wait because it has used up this window (0: go ahead), without counting a hit:
     * from memory, else from the shared counter (what every process counted).
     */
    async wait(rule: WindowRule, subject: string): Promise<number> {
      if (rule.limit <= 0) return 0
      const at = now()
      const id = `${rule.name}:${subject}`
      const known = remembered(id, at)
      if (known > 0) return known
      const { key, end } = windowOf(rule, subject, at)
      try {
        if ((await deps.store.hits(key)) < rule.limit) return 0
      } catch (err) {
        deps.onError(err, 'rate-limit read')
        return 0
      }
      remember(id, end, at)
      return secondsUntil(end, at)
    },

    /**
     * Counts one hit. Returns the seconds to wait when this hit is over the limit (it is refused and, once
     * refused here, not counted again until the window ends), else 0.
     */
    async hit(rule: WindowRule, subject: string): Promise<number> {
      if (rule.limit <= 0) return 0
      const at = now()
      const id = `${rule.name}:${subject}`
      const known = remembered(id, at)
      if (known > 0) return known
      const { key, end } = windowOf(rule, subject, at)
      let hits: number
      try {
        hits = await deps.store.hit(key, end)
      } catch (err) {
        deps.onError(err, 'rate-limit count')
        return 0
      }
      if (hits >= rule.limit) remember(id, end, at)
      return hits > rule.limit ? secondsUntil(end, at) : 0
    },

    /**
     * Takes one of `max` slots of a bucket, returning its release, or undefined when all are in use. The lease
     * is renewed while held, so a slot whose process died frees itself within a minute.
     */
    async acquire(bucket: string, max: number): Promise<(() => Promise<void>) | undefined> {
      const holder = crypto.randomUUID()
      const at = now()
      let slot = -1
      try {
        for (let i = 0; i < max && slot < 0; i++) {
          if (await deps.store.claimSlot(bucket, i, holder, at, at + LEASE_MS)) slot = i
        }
      } catch (err) {
        deps.onError(err, 'rate-limit slot claim')
        return async () => {}
      }
      if (slot < 0) return undefined
      const renewal = setInterval(() => {
        deps.store
          .renewSlot(bucket, slot, holder, now() + LEASE_MS)
          .catch((err) => deps.onError(err, 'rate-limit slot renewal'))
      }, LEASE_MS / 3)
      renewal.unref()
      leases.add(renewal)
      let released: Promise<void> | undefined
      return () => {
        released ??= (async () => {
          clearInterval(renewal)
          leases.delete(renewal)
          try {
            await deps.store.releaseSlot(bucket, slot, holder)
          } catch (err) {
            deps.onError(err, 'rate-limit slot release')
          }
        })()
        return released
      }
    },

    close(): void {
      clearInterval(sweeper)
      for (const renewal of leases) clearInterval(renewal)
      leases.clear()
    },
  }
}
export type RateLimiter = ReturnType<typeof createRateLimiter>

/** POST to the query API (any kind path); status, upgrade and cancel calls are not query work. */
const QUERY_ROUTE = /^\/api\/(projects|environments)\/:projectId\/query\/(:[A-Za-z_]+\/)?$/

/** A route option that may hold one hook or several, as a list. */
function hookList<T>(hooks: T | T[] | undefined): T[] {
  if (hooks === undefined) return []
  return Array.isArray(hooks) ? hooks : [hooks]
}

/**
 * PostHog's answer when a project's queries at once reach the limit (its `ConcurrencyLimitExceeded`, answered as
 * DRF's `Throttled` without a wait, so no Retry-After): the limit, the key of the slots (`api:` for personal API
 * keys, `app:` for the web app's sessions) and the id of the refused task.
 */
function tooManyConcurrent(max: number, projectId: number, isApi: boolean, taskId: string): ApiError {
  const key = `${isApi ? 'api' : 'app'}:query:per-team:${projectId}`
  return new ApiError(
    429,
    'throttled_error',
    'throttled',
    `Exceeded maximum concurrency limit: ${max} for key: ${key} and task: ${taskId}`,
    null,
  )
}

/** The refused query's id for the answer: the client's own when it sent one, else a short random id as PostHog's. */
function taskIdOf(req: FastifyRequest): string {
  const sent = (req.body as { client_query_id?: unknown } | undefined)?.client_query_id
  if (typeof sent === 'string' && /^[A-Za-z0-9_-]{1,128}$/.test(sent)) return sent
  return crypto.randomBytes(6).toString('base64url')
}

/**
 * The limits as Fastify hooks, and the check the error handler makes on every client error:
 * - personal-API-key routes: an IP with `authFailuresPerMinute` failed keys is refused (even with a good key)
 *   for the rest of the minute, on every process (the shared counter is read before authenticating);
 * - public routes (capture, /flags, remote config): an IP with `publicFailuresPerMinute` failed requests is
 *   refused for the rest of the minute by each process that has seen it fail (no store read on this path);
 * - the query API: per personal API key per minute and per hour, and per project at once.
 * A refusal made as the request arrives leaves the body unread (closeUnread), and past TARPIT_AFTER refusals or
 * failures in a window the subject's answers come late (tarpitDelay: 100 ms, growing to 500 ms), so that one
 * client sending back to back sends at most ten a second, then two.
 */
export function createRequestLimits(deps: { limiter: RateLimiter; limits: RateLimitConfig; trustedProxies: number }) {
  const { limiter, limits } = deps
  const authFailures: WindowRule = { name: 'auth-fail', limit: limits.authFailuresPerMinute, windowMs: MINUTE_MS }
  const publicFailures: WindowRule = {
    name: 'public-fail',
    limit: limits.publicFailuresPerMinute,
    windowMs: MINUTE_MS,
  }
  // Refusing an oversized payload costs its decoding up to the cap (an lz64 bomb: tens of milliseconds of the
  // request thread and a 20 MB buffer), so an address gets a sixtieth as many of those as of other failures
  // (10 a minute by default).
  const publicOversize: WindowRule = {
    name: 'public-oversize',
    limit: limits.publicFailuresPerMinute > 0 ? Math.max(1, Math.ceil(limits.publicFailuresPerMinute / 60)) : 0,
    windowMs: MINUTE_MS,
  }
  const queryMinute: WindowRule = { name: 'query-m', limit: limits.queriesPerMinute, windowMs: MINUTE_MS }
  const queryHour: WindowRule = { name: 'query-h', limit: limits.queriesPerHour, windowMs: HOUR_MS }
  const releases = new WeakMap<FastifyRequest, () => Promise<void>>()
  /**
   * Credentials over their query limit → end of their block (ms), by a digest of the Authorization header: a
   * key's next query is refused when the request arrives, before its body (up to 512 KiB of HogQL) is read and
   * parsed and before authentication. Only ever holds credentials that authenticated and reached their limit.
   */
  const blockedCredentials = new Map<string, number>()
  const credentialOf = (req: FastifyRequest) => {
    const header = req.headers.authorization
    return typeof header === 'string' && header !== ''
      ? crypto.createHash('sha256').update(header).digest('base64')
      : undefined
  }
  const isQueryWork = (req: FastifyRequest) =>
    req.method === 'POST' && req.routeOptions.url !== undefined && QUERY_ROUTE.test(req.routeOptions.url)

  const ipOf = (req: FastifyRequest) =>
    clientIp(req.headers, req.socket.remoteAddress, deps.trustedProxies) || 'unknown'

  /**
   * A refusal before the body is read. When the request has a body, the connection closes after the 429 without
   * reading the body (closeUnread): a throttled client sending large bodies back to back (an lz64 flood) costs
   * one answer, not the upload of each body.
   */
  const refuseUnread = (req: FastifyRequest, reply: FastifyReply, wait: number) => {
    const length = req.headers['content-length']
    if (req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')) {
      reply.header('connection', 'close')
      closeUnread(req.raw, reply.raw)
    }
    return new Throttled(wait)
  }
  /** Refusals answered per subject in its window: `subject` → how many and until when (ms). */
  const refusals = new Map<string, { count: number; until: number }>()
  let tarpitted = 0
  /**
   * Counts one refusal of `subject` in a window ending at `until` (ms); returns how late to answer it (ms; 0: at
   * once, as when MAX_TARPITTED answers are already held).
   */
  const tarpitOf = (subject: string, until: number): number => {
    const at = limiter.now()
    let seen = refusals.get(subject)
    if (seen === undefined || seen.until <= at) {
      // A subject still being slowed down when its window ended (within the last minute) starts the next one
      // as slowed down as it was: a flood gets its TARPIT_AFTER answers at full speed once, not again at every
      // new minute.
      const isCarried = seen !== undefined && seen.count > TARPIT_AFTER && at - seen.until < MINUTE_MS
      if (refusals.size >= MAX_REMEMBERED_BLOCKS) {
        for (const [k, v] of refusals) if (v.until + MINUTE_MS <= at) refusals.delete(k)
        if (refusals.size >= MAX_REMEMBERED_BLOCKS) refusals.clear()
      }
      seen = { count: isCarried && seen ? seen.count : 0, until }
      refusals.set(subject, seen)
    }
    seen.count++
    return tarpitted < MAX_TARPITTED ? tarpitDelay(seen.count) : 0
  }
  const later = (delay: number, then: () => void) => {
    tarpitted++
    setTimeout(() => {
      tarpitted--
      then()
    }, delay)
  }
  /**
   * Answers a refusal made as the request arrived: at once, or late (tarpitDelay) once `subject` has been refused
   * TARPIT_AFTER times in this window (`wait` seconds are left of it).
   */
  const answerRefusal = (subject: string, wait: number, error: Error, done: (err?: Error) => void) => {
    const delay = tarpitOf(subject, limiter.now() + wait * 1000)
    if (delay <= 0) return done(error)
    later(delay, () => done(error))
  }
  const isPersonalKeyRoute = (req: FastifyRequest) => typeof req.routeOptions.config?.scope === 'string'
  /** Counts one failure of `subject` in the current minute; past TARPIT_AFTER, resolves tarpitDelay later. */
  const slowDownFailure = async (subject: string) => {
    const windowEnd = (Math.floor(limiter.now() / MINUTE_MS) + 1) * MINUTE_MS
    const delay = tarpitOf(subject, windowEnd)
    if (delay > 0) await new Promise<void>((resolve) => later(delay, resolve))
  }

  async function release(req: FastifyRequest) {
    const done = releases.get(req)
    if (!done) return
    releases.delete(req)
    await done()
  }

  async function releaseOnSend(req: FastifyRequest, _reply: FastifyReply, payload: unknown) {
    await release(req)
    return payload
  }

  /** Runs after authentication: the key and the project are known. */
  async function limitQuery(req: FastifyRequest) {
    const keyId = req.auth?.key?.id
    if (keyId !== undefined) {
      const subject = String(keyId)
      const wait = Math.max(await limiter.hit(queryMinute, subject), await limiter.hit(queryHour, subject))
      if (wait > 0) {
        const credential = credentialOf(req)
        if (credential !== undefined) {
          const at = limiter.now()
          if (blockedCredentials.size >= MAX_REMEMBERED_BLOCKS) {
            for (const [k, until] of blockedCredentials) if (until <= at) blockedCredentials.delete(k)
            if (blockedCredentials.size >= MAX_REMEMBERED_BLOCKS) blockedCredentials.clear()
          }
          blockedCredentials.set(credential, at + wait * 1000)
        }
        throw new Throttled(wait)
      }
    }
    if (limits.queryConcurrency > 0 && req.project) {
      const done = await limiter.acquire(`query:${req.project.id}`, limits.queryConcurrency)
      if (!done) throw tooManyConcurrent(limits.queryConcurrency, req.project.id, !!req.auth?.key, taskIdOf(req))
      releases.set(req, done)
    }
  }

  const plugin = fp(
    async (app: FastifyInstance) => {
      // A callback hook: on public routes (capture, /flags) it answers at once from memory, with no promise.
      app.addHook('onRequest', (req, reply, done) => {
        // Preflights carry no credentials, and unknown paths do no work.
        if (req.method === 'OPTIONS' || req.routeOptions.url === undefined) return done()
        if (!isPersonalKeyRoute(req)) {
          const ip = limiter.isRefusingAny() ? ipOf(req) : undefined
          const wait = ip ? Math.max(limiter.waitHere(publicFailures, ip), limiter.waitHere(publicOversize, ip)) : 0
          if (ip === undefined || wait <= 0) return done()
          return answerRefusal(`ip:${ip}`, wait, refuseUnread(req, reply, wait), done)
        }
        if (blockedCredentials.size > 0 && isQueryWork(req)) {
          const credential = credentialOf(req)
          const until = credential === undefined ? undefined : blockedCredentials.get(credential)
          if (until !== undefined && credential !== undefined) {
            const left = until - limiter.now()
            if (left > 0) {
              const wait = Math.ceil(left / 1000)
              return answerRefusal(`key:${credential}`, wait, refuseUnread(req, reply, wait), done)
            }
            blockedCredentials.delete(credential)
          }
        }
        limiter.wait(authFailures, ipOf(req)).then((wait) => done(wait > 0 ? new Throttled(wait) : undefined), done)
      })

      // Query routes only, as their own hooks, so that no other request pays for them.
      app.addHook('onRoute', (route) => {
        const methods = Array.isArray(route.method) ? route.method : [route.method]
        if (!methods.includes('POST') || !QUERY_ROUTE.test(route.url)) return
        route.preHandler = [...hookList(route.preHandler), limitQuery]
        // The work is done once the answer is being sent; the other two cover answers that never get there.
        route.onSend = [...hookList(route.onSend), releaseOnSend]
        route.onResponse = [...hookList(route.onResponse), release]
        route.onRequestAbort = [...hookList(route.onRequestAbort), release]
      })
    },
    { name: 'burrow-rate-limits' },
  )

  return {
    plugin,
    /**
     * Counts a client error against its route's failure limit; returns the 429 to answer instead when the
     * caller is over it.
     */
    async throttleFailure(req: FastifyRequest, error: ApiError): Promise<ApiError | undefined> {
      if (req.routeOptions.url === undefined) return undefined
      let rule: WindowRule
      if (isPersonalKeyRoute(req)) {
        if (queryMinute.limit > 0 && isQueryWork(req) && (error.statusCode === 400 || error.statusCode === 413)) {
          // A refused query (HogQL nested past the limit, a body over it) has been read and parsed, up to a few
          // milliseconds for a 200 KB body: credentials sending such queries back to back are slowed down like a
          // public flood (their query limit already counts them, but 240 a minute at full speed is a burst).
          await slowDownFailure(`query-fail:${credentialOf(req) ?? ipOf(req)}`)
          return undefined
        }
        if (error.statusCode !== 401 || error.code !== 'authentication_failed') return undefined
        rule = authFailures
      } else {
        // Quota answers (402) are the service working as configured; 429s are already refusals.
        if (error.statusCode < 400 || error.statusCode >= 500 || error.statusCode === 402) return undefined
        if (error.statusCode === 429) return undefined
        rule = publicFailures
      }
      const ip = ipOf(req)
      let wait = await limiter.hit(rule, ip)
      if (rule === publicFailures && error.statusCode === 413)
        wait = Math.max(wait, await limiter.hit(publicOversize, ip))
      // A client failing back to back (a flood of over-deep events, each read and scanned) is slowed down too.
      if (rule.limit > 0) await slowDownFailure(`${rule.name}:${ip}`)
      return wait > 0 ? new Throttled(wait) : undefined
    },
  }
}
export type RequestLimits = ReturnType<typeof createRequestLimits>
