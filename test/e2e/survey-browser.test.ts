import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { type Browser, chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const hasChromium = fs.existsSync(CHROMIUM)
if (!hasChromium && process.env.CI) throw new Error(`Chromium is required in CI (${CHROMIUM} missing)`)

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
  // The customer's site, on another origin than Burrow.
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
          persistence: 'memory',
          loaded: (ph) => { window.__anon = ph.get_distinct_id() },
        })
      </script></head><body><h1>Shop</h1></body></html>`)
  })
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r))
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
  })
}, 60_000)

afterAll(async () => {
  if (!hasChromium) return
  await browser?.close()
  site?.close()
  await t?.close()
})

describe.skipIf(!hasChromium)('posthog-js shows a survey', () => {
  it('displays a running popover survey, takes the answer, and the answer is in stats/', async () => {
    const base = `/api/projects/${t.creds.project_id}/surveys`
    const created = await t.burrow.app.inject({
      method: 'POST',
      url: `${base}/`,
      headers: t.auth,
      payload: {
        name: 'Browser NPS',
        type: 'popover',
        start_date: new Date(Date.now() - 60_000).toISOString(),
        questions: [{ type: 'open', question: 'What brought you here today?' }],
        appearance: { displayThankYouMessage: false },
      },
    })
    expect(created.statusCode, created.body).toBe(201)
    const survey = created.json()

    const page = await browser.newPage()
    const seen: string[] = []
    page.on('request', (req) => {
      if (req.url().startsWith(burrowUrl)) seen.push(new URL(req.url()).pathname)
    })
    await page.goto(siteUrl)
    const textarea = page.locator('textarea')
    await textarea.waitFor({ timeout: 20_000 })
    expect(await page.getByText('What brought you here today?').count()).toBeGreaterThan(0)
    await textarea.fill('Looking for a new analytics tool')
    await page.getByRole('button', { name: /submit/i }).click()
    expect(seen).toContain('/api/surveys/')

    let stats: Record<string, any> = {}
    for (let i = 0; i < 100; i++) {
      const res = await t.burrow.app.inject({ method: 'GET', url: `${base}/${survey.id}/stats/`, headers: t.auth })
      stats = res.json()
      if (stats.stats['survey sent'].total_count > 0) break
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(stats.stats['survey shown'].total_count).toBe(1)
    expect(stats.stats['survey sent'].total_count).toBe(1)
    expect(stats.rates.response_rate).toBe(100)

    // The answer is under the question's id, in one completed submission.
    const questionId = survey.questions[0].id
    const rows = await t.burrow.events.query<[string, string]>(
      `SELECT JSONExtractString(properties, {key:String}), properties FROM events
       WHERE team_id = {team:Int64} AND event = 'survey sent'`,
      { params: { team: t.creds.project_id, key: `$survey_response_${questionId}` } },
    )
    expect(rows.rows.map((r) => r[0])).toEqual(['Looking for a new analytics tool'])
    expect(JSON.parse(rows.rows[0][1])).toMatchObject({ $survey_id: survey.id, $survey_completed: true })
    await page.close()
  }, 60_000)
})
