// What browsers may do with Burrow's answers: which origins may read them (CORS) and may send cookies along,
// and the headers that stop content sniffing and framing.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

/**
 * The SDK endpoints (capture, flags), which read no cookie: posthog-js's XHR transport sends credentials
 * (`withCredentials`), and PostHog (capture-rs, Django's cors_response) allows them from any origin there.
 */
const SDK_PATH = /^\/(?:e|i\/v0\/e|batch|capture|track|engage|s|flags|decide)\/?(?:\?|$)/

/**
 * `@fastify/cors` options per request. Every origin may call the API without credentials (SDKs capture and
 * evaluate flags from any site; personal API keys travel in a header, never in cookies); only the site's own
 * origin (SITE_URL) may send credentials, so a login cookie is never usable from another site — except on the
 * SDK endpoints, which read no cookie.
 */
export function corsDelegator(siteUrl: string) {
  const siteOrigin = new URL(siteUrl).origin
  return (req: FastifyRequest, done: (err: Error | null, options: { origin: boolean; credentials: boolean }) => void) =>
    done(null, { origin: true, credentials: req.headers.origin === siteOrigin || SDK_PATH.test(req.url) })
}

/** For HTML pages without a policy of their own: no framing, no plugins, resources from this origin only. */
const HTML_POLICY = "default-src 'self'; base-uri 'self'; object-src 'none'; frame-ancestors 'none'"

/**
 * The API docs UI's own policy (its inline scripts' hashes), adjusted: never framed, and no
 * `upgrade-insecure-requests`, which would break the page on a plain-HTTP deployment.
 */
export function docsPolicy(header: string): string {
  return header
    .replace(/frame-ancestors [^;]*;?/, "frame-ancestors 'none';")
    .replace(/\s*upgrade-insecure-requests;?/, '')
    .replace(/\s+;/g, ';')
    .trim()
}

/** `nosniff` on every answer; frame and content policies on HTML pages. */
export const securityHeaders = fp(
  async (app: FastifyInstance) => {
    app.addHook('onSend', async (_req, reply, payload) => {
      reply.header('x-content-type-options', 'nosniff')
      const type = reply.getHeader('content-type')
      if (typeof type === 'string' && type.startsWith('text/html')) {
        reply.header('x-frame-options', 'DENY')
        reply.header('referrer-policy', 'same-origin')
        if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', HTML_POLICY)
      }
      return payload
    })
  },
  { name: 'burrow-security-headers' },
)
