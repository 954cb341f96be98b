// What every web-app test needs: a real Burrow (real SQLite or PostgreSQL, real chDB) listening on a port and
// serving the built app (web/dist, built by `npm install`), Debian's Chromium, a logged-in page, an axe-core
// check, and a screenshot per screen under .test-results/screenshots/ (kept as CI artifacts).

import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import type { Response as LightMyRequestResponse } from 'light-my-request'
import type { Browser, Page } from 'playwright-core'
import { startTestApp, type TestApp } from '../../test/helpers/app.js'
import { hasChromium, launchChromium } from '../../test/helpers/browser.js'

export { hasChromium }

const ROOT = path.resolve(import.meta.dirname, '..', '..')
const SHOTS = path.join(ROOT, '.test-results', 'screenshots')
const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** The build under test: web/dist (built by `npm install`), or WEB_DIST for a build of one's own elsewhere. */
const WEB_DIST = process.env.WEB_DIST ?? path.join(ROOT, 'web', 'dist')
if (!fs.existsSync(path.join(WEB_DIST, 'index.html'))) {
  throw new Error(`${WEB_DIST} is not built: run \`npm run build\` (npm install does it)`)
}

export interface WebHarness {
  t: TestApp
  url: string
  browser: Browser
  /** Content-policy violations and uncaught errors of every page opened so far (tests assert it stays empty). */
  errors: string[]
  /** A new page, logged in as the demo user unless `loggedIn: false`. */
  page(options?: { loggedIn?: boolean }): Promise<Page>
  /** Sends events through `/batch/` with the project key and waits until they are in the event store. */
  capture(batch: unknown[]): Promise<void>
  /** The demo project's API (`/api/projects/{id}/{path}`) as the demo user. */
  api(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, payload?: unknown): Promise<LightMyRequestResponse>
  close(): Promise<void>
}

export async function startWeb(options: { env?: Record<string, string> } = {}): Promise<WebHarness> {
  const t = await startTestApp({ ...options, webDir: WEB_DIST })
  const url = await t.burrow.app.listen({ port: 0, host: '127.0.0.1' })
  const browser = await launchChromium()
  const pages: Page[] = []
  const errors: string[] = []
  return {
    t,
    url,
    browser,
    errors,
    async page({ loggedIn = true } = {}) {
      const context = await browser.newContext({ baseURL: url, viewport: { width: 1280, height: 860 } })
      const page = await context.newPage()
      pages.push(page)
      // A page that breaks its own content policy, or throws, fails the test that opened it.
      page.on('console', (message) => {
        if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) {
          errors.push(`CSP: ${message.text()}`)
        }
      })
      page.on('pageerror', (error) => errors.push(`page error: ${error.message}`))
      if (loggedIn) await login(page, t.creds.email, t.creds.password)
      return page
    },
    async capture(batch) {
      const res = await t.burrow.app.inject({
        method: 'POST',
        url: '/batch/',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ api_key: t.creds.project_api_key, batch }),
      })
      if (res.statusCode !== 200) throw new Error(`/batch/ answered ${res.statusCode}: ${res.body}`)
      // Stored in the event store (not only accepted) before a screen asks.
      await t.burrow.committer.flushPending()
      await t.burrow.ingest.flushBackground()
    },
    async api(method, path, payload) {
      return await t.burrow.app.inject({
        method,
        url: `/api/projects/${t.creds.project_id}/${path}`,
        headers: t.auth,
        ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
      })
    },
    async close() {
      await browser.close()
      await t.close()
    },
  }
}

/** Logs in through the login form, as a person does. */
export async function login(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/login')
  await page.getByLabel('Email').fill(email)
  await page.getByLabel(/^Password/).fill(password)
  await page.getByRole('button', { name: 'Log in' }).click()
  await page.waitForURL(/\/project\/\d+\//)
}

export interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: { target: string[]; html: string }[]
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the debugging protocol: the app's content policy (no inline scripts) stays in force.
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE)
  // A modal or menu still fading in has its final colours only at the end of its transition (endless ones, like
  // the editor's blinking cursor or a spinner, are not waited for).
  await page.evaluate(() =>
    Promise.all(
      document
        .getAnimations()
        .filter((a) => a.effect?.getTiming().iterations !== Number.POSITIVE_INFINITY)
        .map((a) => a.finished.catch(() => undefined)),
    ),
  )
  const violations = (await page.evaluate(async () => {
    const page = globalThis as unknown as {
      axe: { run: (c: unknown, o: unknown) => Promise<{ violations: unknown }> }
      document: unknown
    }
    return (await page.axe.run(page.document, { resultTypes: ['violations'] })).violations
  })) as AxeViolation[]
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ ...v, nodes: v.nodes.map((n) => ({ target: n.target, html: n.html.slice(0, 200) })) }))
}

/** A full-page screenshot of the screen, named after it. */
export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SHOTS, { recursive: true })
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true })
}
