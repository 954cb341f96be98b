// The web app (web/, built by `npm install` into web/dist): its assets under /assets/ (content-hashed, cached for
// good, served pre-compressed) and its page for every address the app owns, so a link into the app loads it.
// The app is a client of the public API like any other; nothing here reads data.
import fs from 'node:fs'
import path from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance } from 'fastify'

/** Where `npm install` builds the app, from src/http or dist/http alike. */
export const DEFAULT_WEB_DIR = path.resolve(import.meta.dirname, '..', '..', 'web', 'dist')

/** Its scripts and styles from this origin only; inline style attributes (component library) but no inline script. */
export const APP_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
  "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; " +
  "frame-ancestors 'none'"

/** The addresses the app's router owns (web/src/routes.tsx). */
const APP_PATHS = ['/', '/login', '/signup', '/signup/*', '/reset', '/reset/*', '/verify_email/*', '/project/*']

/** Whether a built app is in `dir`. */
export function hasWebApp(dir: string): boolean {
  return fs.existsSync(path.join(dir, 'index.html'))
}

export function webAppRoutes(deps: { dir: string }) {
  const index = fs.readFileSync(path.join(deps.dir, 'index.html'))
  return async (app: FastifyInstance) => {
    await app.register(fastifyStatic, {
      root: path.join(deps.dir, 'assets'),
      prefix: '/assets/',
      preCompressed: true,
      immutable: true,
      maxAge: '365d',
      index: false,
      wildcard: true,
      schemaHide: true,
    })
    for (const url of APP_PATHS) {
      app.get(url, { schema: { hide: true } }, async (_req, reply) =>
        reply
          .header('content-security-policy', APP_POLICY)
          .header('cache-control', 'no-cache')
          .type('text/html; charset=utf-8')
          .send(index),
      )
    }
  }
}
