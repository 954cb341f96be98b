// The saved-endpoint screens in Chromium against a real server with captured events: an endpoint created by
// keyboard from a HogQL query with a variable, run with variables (counts worked out by hand), a changed query
// saved as version 2 while version 1 still runs its own query, materialized on a schedule and then read from its
// table, its OpenAPI document and a `curl` command that really runs it; one made from a saved insight; the list
// with its status filter, the link to the SQL editor, deletion, and a missing endpoint's error. axe-core on
// every screen.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasChromium, screenshot, seriousViolations, startWeb, type WebHarness } from './harness.js'

const run = promisify(execFile)

let h: WebHarness
let project: number

const event = (name: string, distinctId: string, timestamp: string, properties: Record<string, unknown> = {}) => ({
  event: name,
  timestamp,
  properties: { distinct_id: distinctId, ...properties },
})

const inject = (method: 'GET' | 'POST' | 'PATCH', path: string, payload?: unknown) => h.api(method, path, payload)

beforeAll(async () => {
  if (!hasChromium) return
  h = await startWeb()
  project = h.t.creds.project_id
  const day = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10)
  // Sign-ups: anna and carl on pro, bob on free; a pageview that no query here counts.
  const res = await h.t.burrow.app.inject({
    method: 'POST',
    url: '/batch/',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({
      api_key: h.t.creds.project_api_key,
      batch: [
        event('signed_up', 'anna', `${day}T09:00:00Z`, { plan: 'pro' }),
        event('signed_up', 'bob', `${day}T10:00:00Z`, { plan: 'free' }),
        event('signed_up', 'carl', `${day}T11:00:00Z`, { plan: 'pro' }),
        event('$pageview', 'anna', `${day}T12:00:00Z`, { plan: 'pro' }),
      ],
    }),
  })
  expect(res.statusCode, res.body).toBe(200)
  // Stored in the event store (not only accepted) before the first query.
  await h.t.burrow.committer.flushPending()
  await h.t.burrow.ingest.flushBackground()
}, 240_000)
afterAll(async () => {
  await h?.close()
})

/** A logged-in page; the machine the tests share is slow, so waits get a minute. */
/** Polls until the screen shows the value: the machine is shared and slow, so it gets a minute. */
const poll = <T>(fn: () => Promise<T> | T) => expect.poll(fn, { timeout: 60_000, interval: 250 })

async function open(): Promise<Page> {
  const page = await h.page()
  page.setDefaultTimeout(60_000)
  return page
}

const isFocused = (el: unknown) =>
  el === (el as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement

/** Types into the HogQL editor as a person does (CodeMirror closes brackets and quotes; typing over them steps past). */
async function typeQuery(page: Page, text: string) {
  await page.getByRole('textbox', { name: 'SQL query' }).click()
  await page.keyboard.press('ControlOrMeta+a')
  await page.keyboard.press('Delete')
  await page.keyboard.type(text, { delay: 5 })
  await page.keyboard.press('Escape')
}

/** Chooses an option of a select by its label, as a person does. */
async function pick(page: Page, label: string, option: string) {
  await page.getByRole('combobox', { name: label, exact: true }).click()
  await page.getByRole('option', { name: option, exact: true }).click()
}

const resultCells = (page: Page) =>
  page
    .getByTestId('run-results')
    .locator('tbody tr')
    .evaluateAll((rows) => rows.map((r) => Array.from(r.querySelectorAll('td'), (td) => td.textContent)))

/** Runs the endpoint from the Run tab with one value for `plan` and answers the table's cells. */
async function runWith(page: Page, plan: string) {
  await page.getByLabel('Variable plan').fill(plan)
  await page.getByRole('button', { name: 'Run', exact: true }).click()
  await page.getByTestId('run-answer').waitFor()
  return resultCells(page)
}

const QUERY_V1 =
  "SELECT count() AS signups FROM events WHERE event = 'signed_up' AND properties.plan = {variables.plan}"
const QUERY_V2 = `${QUERY_V1} AND distinct_id != 'carl'`

describe.skipIf(!hasChromium)('saved endpoints', () => {
  it('creates an endpoint from a HogQL query with a variable, by keyboard', async () => {
    const page = await open()
    await page.goto(`/project/${project}/endpoints`)
    await page.getByTestId('empty-state').getByText('No endpoints yet').waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'endpoints-empty')

    await page.getByRole('link', { name: 'New endpoint' }).click()
    await page.waitForURL(/\/endpoints\/new$/)
    const name = page.getByLabel(/^Name/)
    await name.waitFor()
    expect(await name.evaluate(isFocused)).toBe(true)
    // The name has focus; Tab moves to the description.
    await page.keyboard.type('signups by plan')
    await page.keyboard.press('Tab')
    await page.keyboard.type('Sign-ups of one plan')
    expect(await page.getByLabel('Description').inputValue()).toBe('Sign-ups of one plan')
    await typeQuery(page, QUERY_V1)
    // The editor found the variable and asks for its default.
    await page.getByLabel('Default for plan').fill('pro')
    // A name with a space is refused before anything is sent.
    await name.press('Enter')
    await page.getByText('Start with a letter; use only letters, digits, hyphens and underscores').waitFor()
    expect((await inject('GET', 'endpoints/')).json().count).toBe(0)
    await name.fill('signups_by_plan')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'endpoint-new')
    await name.press('Enter')
    await page.waitForURL(/\/endpoints\/signups_by_plan$/)
    await page.getByRole('heading', { name: 'signups_by_plan' }).waitFor()

    const stored = (await inject('GET', 'endpoints/signups_by_plan/')).json()
    expect(stored).toMatchObject({
      name: 'signups_by_plan',
      description: 'Sign-ups of one plan',
      current_version: 1,
      is_materialized: false,
      query: {
        kind: 'HogQLQuery',
        query: QUERY_V1,
        variables: { 'var-plan': { variableId: 'var-plan', code_name: 'plan', value: 'pro' } },
      },
    })
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'endpoint')
    expect(h.errors).toEqual([])
  }, 240_000)

  it('runs the endpoint with variables and shows the response', async () => {
    const page = await open()
    await page.goto(`/project/${project}/endpoints/signups_by_plan?tab=run`)
    // The variable starts at its default.
    await poll(() => page.getByLabel('Variable plan').inputValue()).toBe('pro')
    // anna and carl signed up on pro; bob on free; nobody on team.
    expect(await runWith(page, 'pro')).toEqual([['2']])
    expect(await page.getByTestId('run-summary').textContent()).toBe('Version 1 · run live · 1 row')
    expect(await page.getByTestId('run-response').textContent()).toContain('"endpoint_version": 1')
    expect(await runWith(page, 'free')).toEqual([['1']])
    expect(await runWith(page, 'team')).toEqual([['0']])
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'endpoint-run')
    expect(h.errors).toEqual([])
  }, 180_000)

  it('saves a changed query as version 2; version 1 keeps running its own query', async () => {
    const page = await open()
    await page.goto(`/project/${project}/endpoints/signups_by_plan`)
    await typeQuery(page, QUERY_V2)
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByText('Saved as version 2').waitFor()
    await poll(() => page.getByTestId('current-version').textContent()).toBe('v2')
    // Only the description changed: no new version.
    await page.getByLabel('Description').fill('Sign-ups of one plan, without carl')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByText('Saved (the query is unchanged: no new version)').waitFor()
    const stored = (await inject('GET', 'endpoints/signups_by_plan/')).json()
    expect(stored).toMatchObject({ current_version: 2, versions_count: 2, query: { query: QUERY_V2 } })

    await page.getByRole('tab', { name: 'Versions (2)' }).click()
    await page.waitForURL(/tab=versions/)
    const versions = page.getByTestId('version')
    await poll(() => versions.count()).toBe(2)
    // Newest first, each with its query (the latest is open).
    expect(await versions.nth(0).textContent()).toContain('Version 2')
    expect(await versions.nth(0).getByTestId('version-query').textContent()).toBe(QUERY_V2)
    await versions
      .nth(1)
      .getByRole('button', { name: /Version 1/ })
      .click()
    await poll(() => versions.nth(1).getByTestId('version-query').textContent()).toBe(QUERY_V1)
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'endpoint-versions')

    // Version 1 counts anna and carl; version 2 leaves carl out.
    await versions.nth(1).getByRole('button', { name: 'Run version 1' }).click()
    await page.waitForURL(/tab=run&version=1|version=1&tab=run/)
    expect(await runWith(page, 'pro')).toEqual([['2']])
    expect(await page.getByTestId('run-summary').textContent()).toContain('Version 1')
    await pick(page, 'Version', 'Latest (v2)')
    expect(await runWith(page, 'pro')).toEqual([['1']])
    expect(await page.getByTestId('run-summary').textContent()).toContain('Version 2')
    expect(h.errors).toEqual([])
  }, 240_000)

  it('materializes the endpoint on a schedule and then reads the table', async () => {
    const page = await open()
    await page.goto(`/project/${project}/endpoints/signups_by_plan?tab=materialization`)
    await page.getByTestId('materialization-status').getByText('Not materialized').waitFor()
    await page.getByLabel('Materialize').check()
    await pick(page, 'Refresh schedule', 'Every hour')
    await page.getByRole('button', { name: 'Save materialization' }).click()
    await page.getByText('Materialization scheduled').waitFor()
    // The sync runs within seconds of being scheduled; the page looks again until it has.
    await page.getByTestId('materialization-status').getByText('Completed').waitFor({ timeout: 120_000 })
    expect(await page.getByTestId('materialization').textContent()).toContain('Every hour')
    // the page's header follows the status
    await poll(() => page.getByTestId('materialization-badge').allTextContents()).toEqual(['Completed', 'Completed'])
    expect(await page.getByTestId('last-materialized').textContent()).not.toBe('—')
    const status = (await inject('GET', 'endpoints/signups_by_plan/materialization_status/')).json()
    expect(status).toMatchObject({ status: 'Completed', can_materialize: true, sync_frequency: '1hour' })
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'endpoint-materialization')

    // Runs now read the table: the same counts, by plan.
    await page.getByRole('tab', { name: 'Run' }).click()
    expect(await runWith(page, 'pro')).toEqual([['1', 'pro']])
    expect(await page.getByTestId('run-summary').textContent()).toBe(
      'Version 2 · read from the materialized table · 1 row',
    )
    expect(await runWith(page, 'free')).toEqual([['1', 'free']])
    expect(h.errors).toEqual([])
  }, 240_000)

  it('shows the OpenAPI document and a curl command that runs the endpoint', async () => {
    const page = await open()
    await page.goto(`/project/${project}/endpoints/signups_by_plan?tab=api`)
    const openapi = page.getByTestId('openapi')
    await openapi.waitFor()
    const doc = JSON.parse((await openapi.textContent()) ?? '')
    const path = `/api/environments/${project}/endpoints/signups_by_plan/run/`
    expect(doc.paths[path].get.parameters.map((p: { name: string }) => p.name)).toContain('variables[plan]')
    const curl = (await page.getByTestId('curl-command').textContent()) ?? ''
    expect(curl).toContain(`${path}'`)
    expect(curl).toContain('"Authorization: Bearer $POSTHOG_PERSONAL_API_KEY"')
    expect(curl).toContain(`-d '{"variables":{"plan":"pro"}}'`)
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'endpoint-api')

    // The command as shown, run by a shell with a personal API key; the test server listens on a port of its own,
    // so the site's address in it is swapped for the server's.
    const siteUrl = /curl -X POST '([^']+)'/.exec(curl)?.[1] ?? ''
    const command = curl.replace(new URL(siteUrl).origin, h.url)
    const { stdout } = await run('bash', ['-c', command], {
      env: { ...process.env, POSTHOG_PERSONAL_API_KEY: h.t.auth.authorization.slice('Bearer '.length) },
    })
    const answer = JSON.parse(stdout)
    expect(answer).toMatchObject({ results: [[1, 'pro']], endpoint_version: 2, endpoint_materialized: true })
    expect(h.errors).toEqual([])
  }, 180_000)

  it('creates an endpoint from a saved insight', async () => {
    const insight = await inject('POST', 'insights/', {
      name: 'Daily sign-ups',
      saved: true,
      query: {
        kind: 'InsightVizNode',
        source: {
          kind: 'TrendsQuery',
          series: [{ kind: 'EventsNode', event: 'signed_up', math: 'total' }],
          dateRange: { date_from: '-7d' },
        },
      },
    })
    expect(insight.statusCode, insight.body).toBe(201)
    const page = await open()
    await page.goto(`/project/${project}/endpoints/new?source=insight`)
    await pick(page, 'Insight', 'Daily sign-ups (Trends)')
    // A name already taken: the server's refusal shows at the name.
    await page.getByLabel(/^Name/).fill('signups_by_plan')
    await page.getByRole('button', { name: 'Create endpoint' }).click()
    await page.getByText('An endpoint with this name already exists for this team.').waitFor()
    await page.getByLabel(/^Name/).fill('daily-signups')
    expect(await seriousViolations(page)).toEqual([])
    await page.getByRole('button', { name: 'Create endpoint' }).click()
    await page.waitForURL(/\/endpoints\/daily-signups$/)
    const stored = (await inject('GET', 'endpoints/daily-signups/')).json()
    expect(stored).toMatchObject({
      derived_from_insight: insight.json().short_id,
      query: { kind: 'TrendsQuery', series: [{ event: 'signed_up' }] },
    })
    await page.getByRole('link', { name: 'Open the insight it came from' }).waitFor()
    // Its run takes the insight's own variables: a date range.
    await page.getByRole('tab', { name: 'Run' }).click()
    await page.getByLabel('Variable date_from').waitFor()
    await page.getByRole('button', { name: 'Run', exact: true }).click()
    await page.getByTestId('run-answer').waitFor()
    const response = JSON.parse((await page.getByTestId('run-response').textContent()) ?? '')
    // Three sign-ups two days ago, none on the other days of the last 7.
    expect(response.results[0].count).toBe(3)
    expect(h.errors).toEqual([])
  }, 180_000)

  it('lists endpoints with their version and materialization, filters by status, links to the SQL editor', async () => {
    const off = await inject('PATCH', 'endpoints/daily-signups/', { is_active: false })
    expect(off.statusCode, off.body).toBe(200)
    const page = await open()
    await page.goto(`/project/${project}/endpoints`)
    const rows = page.getByTestId('endpoints-table').locator('tbody tr')
    await poll(() => rows.count()).toBe(2)
    // Newest first.
    expect(await rows.nth(0).textContent()).toContain('daily-signups')
    expect(await rows.nth(0).textContent()).toContain('Inactive')
    expect(await rows.nth(1).textContent()).toContain('signups_by_plan')
    expect(await rows.nth(1).textContent()).toContain('v2 (2 versions)')
    expect(await rows.nth(1).textContent()).toContain('Completed')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'endpoints')

    await pick(page, 'Status', 'Active')
    await page.waitForURL(/active=true/)
    await poll(() => rows.count()).toBe(1)
    expect(await rows.nth(0).textContent()).toContain('signups_by_plan')

    await rows.nth(0).getByRole('link', { name: 'signups_by_plan' }).click()
    await page.getByRole('link', { name: 'Open in the SQL editor' }).click()
    await page.waitForURL(/\/sql\?q=/)
    expect(new URL(page.url()).searchParams.get('q')).toBe(QUERY_V2)
    expect(h.errors).toEqual([])
  }, 180_000)

  it('deletes an endpoint behind a confirmation; a missing one shows the server’s error', async () => {
    const page = await open()
    await page.goto(`/project/${project}/endpoints/daily-signups`)
    await page.getByRole('button', { name: 'Delete' }).click()
    await page.getByRole('dialog', { name: 'Delete daily-signups?' }).waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await page.getByRole('button', { name: 'Delete endpoint' }).click()
    await page.waitForURL(/\/endpoints$/)
    expect((await inject('GET', 'endpoints/daily-signups/')).statusCode).toBe(404)

    await page.goto(`/project/${project}/endpoints/no-such-endpoint`)
    await page.getByTestId('error-state').waitFor()
    expect(await page.getByTestId('error-state').textContent()).toMatch(/not found/i)
    expect(h.errors).toEqual([])
  }, 120_000)
})
