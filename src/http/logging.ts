// The request log must never hold a secret: keys may arrive as query parameters (`?personal_api_key=`, as
// PostHog allows) and in headers. URLs are logged with such parameters masked, and the headers that carry
// credentials are censored wherever a log line includes them.
import os from 'node:os'
import type { FastifyRequest } from 'fastify'

const REDACTED = '[redacted]'

/** Query parameters whose value is a credential, whatever it looks like. */
const SECRET_PARAMS = new Set([
  'personal_api_key',
  'api_key',
  'apikey',
  'secret',
  'secret_api_key',
  'password',
  'access_token',
  'refresh_token',
  'session_id',
  'sessionid',
])
/** Values shaped like PostHog's secret keys: personal (phx_), project secret (phs_), OAuth (pha_, phr_). */
const SECRET_VALUE = /^ph[xsar]_/i

function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '))
  } catch {
    return text
  }
}

/** The URL with every credential-like query parameter's value replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const mark = url.indexOf('?')
  if (mark < 0) return url
  const params = url
    .slice(mark + 1)
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=')
      if (eq < 0) return part
      const name = decoded(part.slice(0, eq)).trim().toLowerCase()
      const value = decoded(part.slice(eq + 1)).trim()
      return SECRET_PARAMS.has(name) || SECRET_VALUE.test(value) ? `${part.slice(0, eq)}=${REDACTED}` : part
    })
  return `${url.slice(0, mark)}?${params.join('&')}`
}

const SECRET_HEADERS = ['authorization', 'cookie', 'set-cookie', 'x-api-key', 'proxy-authorization']

/** Fastify logger options: the level, an optional destination, and the redaction above. */
export function loggerOptions(level: string, stream?: { write(line: string): void }, instance?: string) {
  return {
    level,
    // Every line says which process wrote it (INSTANCE_ID, the host name by default).
    base: { pid: process.pid, hostname: instance ?? os.hostname() },
    ...(stream ? { stream } : {}),
    redact: {
      paths: SECRET_HEADERS.flatMap((h) => [`req.headers["${h}"]`, `res.headers["${h}"]`, `headers["${h}"]`]),
      censor: REDACTED,
    },
    serializers: {
      req: (req: FastifyRequest) => ({
        method: req.method,
        url: redactUrl(req.url),
        host: req.host,
        remoteAddress: req.ip,
        remotePort: req.socket?.remotePort,
      }),
    },
  }
}
