// A customer's web site for browser tests: a page on its own origin (not Burrow's) that loads the real posthog-js
// bundle from node_modules and initializes it against a Burrow, as a site owner would. Surveys posthog-js finds
// for the project are drawn on this page by posthog-js itself.
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'

const POSTHOG_BUNDLE = path.resolve(import.meta.dirname, '../../node_modules/posthog-js/dist/array.full.js')

export interface SurveySite {
  /** The site's origin, e.g. `http://127.0.0.1:41234`; every path answers the same page. */
  url: string
  close(): Promise<void>
}

/** Starts the site; `window.__anon` holds posthog-js's distinct id once it has loaded. */
export async function startSurveySite(options: { apiKey: string; apiHost: string }): Promise<SurveySite> {
  const bundle = fs.readFileSync(POSTHOG_BUNDLE)
  const site = http.createServer((req, res) => {
    if (req.url === '/posthog.js') {
      res.writeHead(200, { 'content-type': 'application/javascript' })
      res.end(bundle)
      return
    }
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end(`<!doctype html><html lang="en"><head><title>Shop</title>
      <script src="/posthog.js"></script>
      <script>
        posthog.init(${JSON.stringify(options.apiKey)}, {
          api_host: ${JSON.stringify(options.apiHost)},
          opt_out_useragent_filter: true,
          request_batching: false,
          disable_session_recording: true,
          persistence: 'memory',
          loaded: (ph) => { window.__anon = ph.get_distinct_id() },
        })
      </script></head><body><h1>Shop</h1></body></html>`)
  })
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(site.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => site.close(() => resolve())),
  }
}
