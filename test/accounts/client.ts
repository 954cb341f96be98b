import type { FastifyInstance, InjectOptions } from 'fastify'

/**
 * A browser-like client over `app.inject`: keeps the cookies the server sets (honouring Max-Age=0), and sends
 * the CSRF cookie back in X-CSRFToken on writes unless told not to, as PostHog's web app does.
 */
export function cookieClient(app: FastifyInstance, options: { ip?: string } = {}) {
  const jar = new Map<string, string>()

  function remember(setCookie: string | string[] | undefined) {
    for (const line of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      const [pair, ...attributes] = line.split(';').map((p) => p.trim())
      const eq = pair.indexOf('=')
      const name = pair.slice(0, eq)
      const expired = attributes.some((a) => /^max-age=0$/i.test(a))
      if (expired) jar.delete(name)
      else jar.set(name, pair.slice(eq + 1))
    }
  }

  async function request(
    method: InjectOptions['method'],
    url: string,
    payload?: unknown,
    extra: { csrf?: boolean; headers?: Record<string, string> } = {},
  ) {
    const headers: Record<string, string> = { ...extra.headers }
    if (jar.size > 0) headers.cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ')
    const csrf = jar.get('posthog_csrftoken')
    if (extra.csrf !== false && csrf && method !== 'GET') headers['x-csrftoken'] = csrf
    const res = await app.inject({
      method,
      url,
      headers,
      payload: payload as InjectOptions['payload'],
      remoteAddress: options.ip ?? '127.0.0.1',
    })
    remember(res.headers['set-cookie'])
    return res
  }

  return {
    jar,
    get: (url: string, extra?: { headers?: Record<string, string> }) => request('GET', url, undefined, extra),
    post: (url: string, payload?: unknown, extra?: { csrf?: boolean; headers?: Record<string, string> }) =>
      request('POST', url, payload ?? {}, extra),
    patch: (url: string, payload?: unknown, extra?: { csrf?: boolean }) => request('PATCH', url, payload ?? {}, extra),
    delete: (url: string, extra?: { csrf?: boolean }) => request('DELETE', url, undefined, extra),
  }
}
export type CookieClient = ReturnType<typeof cookieClient>
