import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestApp, type TestApp } from '../helpers/app.js'
import { hasChromium, launchChromium } from '../helpers/browser.js'
import { type SurveySite, startSurveySite } from '../helpers/survey-site.js'

let t: TestApp
let burrowUrl: string
let site: SurveySite
let siteUrl: string
let browser: Browser

beforeAll(async () => {
  if (!hasChromium) return
  t = await startTestApp()
  burrowUrl = await t.burrow.app.listen({ port: 0, host: '127.0.0.1' })
  // The customer's site, on another origin than Burrow.
  site = await startSurveySite({ apiKey: t.creds.project_api_key, apiHost: burrowUrl })
  siteUrl = site.url
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  if (!hasChromium) return
  await browser?.close()
  await site?.close()
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
