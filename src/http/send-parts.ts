import type { FastifyReply } from 'fastify'

/**
 * Answers 200 with a JSON body given as runs of bytes, written to the connection in one go (corked) without
 * joining them first: a hot endpoint whose body is mostly bytes it already keeps (a reused /flags answer) then
 * allocates nothing per request for it. The headers set on the reply so far (CORS) go with it; the reply is
 * hijacked, so onSend hooks do not see this body (none are registered for these routes).
 */
export function sendJsonParts(reply: FastifyReply, parts: readonly Buffer[]): void {
  let length = 0
  for (const part of parts) length += part.length
  const headers = reply.getHeaders()
  reply.hijack()
  const res = reply.raw
  for (const name in headers) {
    const value = headers[name]
    if (value !== undefined) res.setHeader(name, value)
  }
  res.statusCode = 200
  res.setHeader('content-type', 'application/json; charset=utf-8')
  res.setHeader('content-length', length)
  res.cork()
  for (let i = 0; i < parts.length - 1; i++) res.write(parts[i])
  res.end(parts[parts.length - 1])
}
