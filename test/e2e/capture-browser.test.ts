import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { hasChromium, launchChromium } from '../helpers/browser.js'

let t: TestApp
let burrowUrl: string
let site: http.Server
let siteUrl: string
let browser: Browser

const posthogBundle = path.resolve(import.meta.dirname, '../../node_modules/posthog-js/dist/array.full.js')

beforeAll(async () => {
  if (!hasChromium) return
  t = await startTestApp()
  burrowUrl = await t.burrow.app.listen({ port: 0, host: '127.0.0.1' })
  // The page lives on another origin than Burrow, as a customer's site does.
  site = http.createServer((req, res) => {
    if (req.url === '/posthog.js') {
      res.writeHead(200, { 'content-type': 'application/javascript' })
      res.end(fs.readFileSync(posthogBundle))
      return
    }
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end(`<!doctype html><html><head><title>Shop</title>
      <script src="/posthog.js"></script>
      <script>
        posthog.init(${JSON.stringify(t.creds.project_api_key)}, {
          api_host: ${JSON.stringify(burrowUrl)},
          opt_out_useragent_filter: true,
          request_batching: false,
          disable_session_recording: true,
          capture_pageview: true,
          loaded: (ph) => { window.__anon = ph.get_distinct_id() },
        })
      </script></head><body><button id="buy">Buy</button></body></html>`)
  })
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r))
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  if (!hasChromium) return
  await browser?.close()
  site?.close()
  await t?.close()
})

async function eventsFor(distinctIds: string[]) {
  const result = await t.burrow.events.query<[string, string, string]>(
    `SELECT event, distinct_id, toString(person_id) FROM events
     WHERE team_id = {team:Int64} AND distinct_id IN {ids:Array(String)} ORDER BY timestamp`,
    { params: { team: t.creds.project_id, ids: distinctIds } },
  )
  return result.rows
}

describe.skipIf(!hasChromium)('posthog-js in headless Chromium', () => {
  it('captures a $pageview and an identify with its default compression', async () => {
    const page = await browser.newPage()
    const captureRequests: string[] = []
    page.on('request', (req) => {
      if (req.url().startsWith(burrowUrl) && req.method() === 'POST') captureRequests.push(req.url())
    })
    await page.goto(siteUrl)
    await page.waitForFunction(() => (globalThis as unknown as { __anon?: string }).__anon !== undefined)
    const anon = await page.evaluate(() => (globalThis as unknown as { __anon: string }).__anon)
    await page.evaluate(() => {
      const ph = (globalThis as unknown as { posthog: { identify: (id: string, props: object) => void } }).posthog
      ph.identify('browser-user-1', { email: 'browser@example.com' })
    })

    let rows: [string, string, string][] = []
    for (let i = 0; i < 100; i++) {
      rows = await eventsFor([anon, 'browser-user-1'])
      if (rows.some((r) => r[0] === '$pageview') && rows.some((r) => r[0] === '$identify')) break
      await new Promise((r) => setTimeout(r, 100))
    }
    const pageview = rows.find((r) => r[0] === '$pageview')
    const identify = rows.find((r) => r[0] === '$identify')
    expect(pageview?.[1]).toBe(anon)
    expect(identify?.[1]).toBe('browser-user-1')
    expect(captureRequests.some((u) => new URL(u).pathname.startsWith('/e'))).toBe(true)

    // identify merged the anonymous visitor into the identified person.
    const person = await t.burrow.stores.persons.getByDistinctId(t.creds.project_id, 'browser-user-1')
    expect(person).toBeDefined()
    expect(JSON.parse(person!.properties)).toMatchObject({ email: 'browser@example.com' })
    const anonPerson = await t.burrow.stores.persons.getByDistinctId(t.creds.project_id, anon)
    expect(anonPerson?.id).toBe(person!.id)
    await page.close()
  }, 60_000)
})
