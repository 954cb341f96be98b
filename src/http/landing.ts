// The page at `/about` (at `/` when the web app is not built): what this server is and where to go from here. One small
// HTML answer with no external assets; its only inline piece (the style) is allowed by hash in its own policy.
import crypto from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { VERSION } from './openapi.js'

const DOCS_UI = '/api/schema/swagger-ui/'
const SCHEMA = '/api/schema/'

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#222}' +
  'code,pre{font:14px ui-monospace,monospace;background:#f4f4f4;border-radius:4px}code{padding:0 .25rem}' +
  'pre{padding:.75rem;overflow-x:auto}td{padding:.2rem .75rem .2rem 0;vertical-align:top}small{color:#666}'

const STYLE_HASH = crypto.createHash('sha256').update(STYLE).digest('base64')

/** Nothing but the hashed style; no scripts, no framing, no forms. */
export const LANDING_POLICY =
  `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src 'self'; base-uri 'none'; ` +
  "form-action 'none'; frame-ancestors 'none'"

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

export function landingPage(siteUrl: string): string {
  const site = escapeHtml(siteUrl.replace(/\/+$/, ''))
  const rows: [string, string][] = [
    ['<code>POST /i/v0/e/</code>, <code>POST /batch/</code>', 'capture events (project API key in the body)'],
    ['<code>POST /flags?v=2</code>, <code>POST /decide</code>', 'evaluate feature flags for a user'],
    ['<code>GET /array/{phc_…}/config</code>', 'remote config for posthog-js'],
    ['<code>GET /api/feature_flag/local_evaluation/</code>', 'flag definitions for server SDKs'],
    ['<code>/api/…</code>', 'management and query API (personal API key or logged-in session)'],
  ]
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Burrow</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Burrow <small>${escapeHtml(VERSION)}</small></h1>
<p>Self-hostable product analytics, compatible with PostHog’s HTTP API and SDKs. Point posthog-js, posthog-node
or any PostHog SDK at <code>${site}</code> with your project API key (<code>phc_…</code>).</p>
<h2>Endpoints</h2>
<table>
${rows.map(([path, what]) => `<tr><td>${path}</td><td>${what}</td></tr>`).join('\n')}
</table>
<pre>curl -X POST ${site}/i/v0/e/ -H 'Content-Type: application/json' \\
  -d '{"api_key": "phc_…", "event": "signed up", "distinct_id": "user-1"}'</pre>
<h2>API documentation</h2>
<ul>
<li><a href="${DOCS_UI}">API reference</a>: every route, its parameters and answers</li>
<li><a href="${SCHEMA}">OpenAPI schema</a> (JSON)</li>
<li><a href="/_health">Health</a> of the metadata and event stores</li>
</ul>
</body>
</html>
`
}

/** The landing page, with its own content policy: at `/`, or at `/about` when the web app takes `/`. */
export function landingRoutes(deps: { siteUrl: string; path: string }) {
  const html = landingPage(deps.siteUrl)
  return async (app: FastifyInstance) => {
    app.get(deps.path, { schema: { hide: true } }, async (_req, reply) =>
      reply.header('content-security-policy', LANDING_POLICY).type('text/html; charset=utf-8').send(html),
    )
  }
}
