/**
 * The upper bound of an HTTP capture route on this machine: a Fastify server whose `/batch/` only reads the body
 * and parses its JSON, then answers as capture does. Run by `bench/capture.ts` as a process of its own, with the same
 * load as capture; prints `listening` once it accepts connections.
 *
 *   PORT=20001 npx tsx bench/capture-parse-only.ts
 */
import Fastify from 'fastify'

const app = Fastify({ logger: false, bodyLimit: 20 * 1024 * 1024 })
app.removeAllContentTypeParsers()
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body))
app.post('/batch/', async (req) => {
  const parsed = JSON.parse((req.body as Buffer).toString('utf8')) as { batch?: unknown[] }
  if (!Array.isArray(parsed.batch)) throw new Error('no batch')
  return { status: 1 }
})
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) })
process.stdout.write('listening\n')
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)))
