// The survey screens in Chromium against a real server: a survey written in the editor by keyboard — an open
// question, an NPS rating, a multiple choice with an open-ended "Other" — whose live preview follows every edit and
// the appearance colours; targeted to a URL and launched; then shown by real posthog-js on a customer's page (its own
// origin), answered there, and found in the results: counts and rates, the NPS chart and score, the choice chart,
// the open-text answers with their offline summary; a response archived and unarchived; the survey duplicated into
// another project; the list's search, status filter and archived view; axe-core and a screenshot on every screen.
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type SurveySite, startSurveySite } from '../../test/helpers/survey-site.js'
import { hasChromium, screenshot, seriousViolations, startWeb, type WebHarness } from './harness.js'

let h: WebHarness
let project: number
let site: SurveySite

const inject = (method: 'GET' | 'POST' | 'PATCH', path: string, payload?: unknown) =>
  h.t.burrow.app.inject({
    method,
    url: path.startsWith('/') ? path : `/api/projects/${project}/${path}`,
    headers: h.t.auth,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  })

beforeAll(async () => {
  if (!hasChromium) return
  h = await startWeb()
  project = h.t.creds.project_id
  site = await startSurveySite({ apiKey: h.t.creds.project_api_key, apiHost: h.url })
}, 240_000)
afterAll(async () => {
  await site?.close()
  await h?.close()
})

/** A logged-in page; the machine the tests share is slow, so waits get a minute. */
async function open(): Promise<Page> {
  const page = await h.page()
  page.setDefaultTimeout(60_000)
  return page
}

/** Whether the element has the focus (run in the page). */
const isFocused = (el: unknown) =>
  el === (el as { ownerDocument: { activeElement: unknown } }).ownerDocument.activeElement

/** An input by its whole label, a required one's asterisk allowed. */
const field = (page: Page, label: string) => page.getByRole('textbox', { name: new RegExp(`^${label}( \\*)?$`) })

/** Picks an option of a segmented control by clicking its label, as a person does. */
async function pick(page: Page, name: string) {
  const id = await page.getByRole('radio', { name, exact: true }).getAttribute('id')
  await page.locator(`label[for="${id}"]`).click()
}

/** A button worked by keyboard: focused, then Enter (the corner notifications cannot get in the way). */
async function press(button: ReturnType<Page['getByRole']>) {
  await button.focus()
  await button.press('Enter')
}

async function axeClean(page: Page) {
  expect(await seriousViolations(page)).toEqual([])
}

describe.skipIf(!hasChromium)('surveys', () => {
  let surveyId: string
  let questionIds: string[]

  it('creates a survey by keyboard: every question type, live preview, appearance, targeting', async () => {
    const page = await open()
    await page.goto(`/project/${project}/surveys`)
    await page.getByTestId('empty-state').getByText('No surveys yet').waitFor()
    await axeClean(page)
    await screenshot(page, 'surveys-empty')

    await page.getByRole('link', { name: 'New survey' }).click()
    await page.waitForURL(/\/surveys\/new$/)
    const preview = page.getByTestId('preview-popover')
    await preview.waitFor()

    // Saving without a name is stopped in the editor, with the field marked.
    await page.getByRole('button', { name: 'Create survey' }).click()
    await page.getByText('A survey needs a name.').waitFor()
    await page.getByText('Write the question.').waitFor()

    // The name field has the focus on arrival; the rest is typed and tabbed through.
    const name = field(page, 'Name')
    await name.focus()
    expect(await name.evaluate(isFocused)).toBe(true)
    await page.keyboard.type('Checkout feedback')
    await page.keyboard.press('Tab')
    await page.keyboard.type('Asked on the shop page')
    await field(page, 'Question 1').focus()
    await page.keyboard.type('What brought you here today?')
    await page.getByLabel('Question 1 button text').fill('Send')
    // The preview follows the typing.
    await preview.getByText('What brought you here today?').waitFor()
    expect(await preview.locator('textarea').count()).toBe(1)

    // A rating question: 0–10 numbers (NPS) by default; the preview shows eleven buttons.
    await page.getByRole('button', { name: 'Add question' }).click()
    await page.getByRole('menuitem', { name: 'Rating' }).click()
    await field(page, 'Question 2').fill('How likely are you to recommend us?')
    await preview.getByText('How likely are you to recommend us?').waitFor()
    expect(await preview.getByRole('button', { name: /^\d+$/ }).allTextContents()).toEqual([
      '0',
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '7',
      '8',
      '9',
      '10',
    ])
    // Emoji display with three faces, then back to numbers.
    // A segmented control is a radio group: the arrow keys move through it.
    await page.getByRole('radio', { name: 'Numbers' }).focus()
    await page.keyboard.press('ArrowRight')
    await preview.getByRole('button', { name: 'Neutral' }).waitFor()
    expect(await preview.getByRole('button', { name: /satisfied|Neutral/i }).count()).toBe(3)
    await pick(page, 'Numbers')
    await preview.getByRole('button', { name: '10', exact: true }).waitFor()

    // A multiple choice with an open-ended last choice.
    await page.getByRole('button', { name: 'Add question' }).click()
    await page.getByRole('menuitem', { name: 'Multiple choice select' }).click()
    await field(page, 'Question 3').fill('What did you shop for?')
    await page.getByLabel('Question 3 choice 1').fill('Shoes')
    await page.getByLabel('Question 3 choice 2').fill('Hats')
    await page.getByLabel('Last choice is open-ended (free text)').check()
    await page.getByLabel('Question 3 choice 3 (open-ended)').fill('Something else')
    await preview.getByText('What did you shop for?').waitFor()
    expect(await preview.getByRole('checkbox').count()).toBe(3)
    await preview.getByLabel('Something else - please specify').waitFor()
    await axeClean(page)
    await screenshot(page, 'survey-editor-questions')

    // A link question with a bad link is refused in the editor, then removed.
    await page.getByRole('button', { name: 'Add question' }).click()
    await page.getByRole('menuitem', { name: 'Link / Notification' }).click()
    await field(page, 'Question 4').fill('Read our guide')
    await field(page, 'Question 4 link').fill('ftp://example.com')
    await page.getByRole('button', { name: 'Create survey' }).click()
    await page.getByText('A link starts with https:// or mailto:.').waitFor()
    await page.getByRole('button', { name: 'Remove question 4' }).click()

    // Appearance: the colours show in the preview at once.
    await page.getByRole('tab', { name: 'Appearance' }).click()
    await page.waitForURL(/tab=appearance/)
    await page.getByLabel('Background colour', { exact: true }).fill('#fff7e6')
    await page.getByLabel('Button colour', { exact: true }).fill('#1c3d5a')
    await page.getByLabel('Thank-you header').fill('Thanks a lot!')
    await expect
      .poll(() => preview.evaluate((el) => getComputedStyle(el as Element).backgroundColor))
      .toBe('rgb(255, 247, 230)')
    // The first question's own button text.
    await pick(page, 'Q1')
    await preview.getByRole('button', { name: 'Send' }).waitFor()
    expect(
      await preview
        .getByRole('button', { name: 'Send' })
        .evaluate((el) => getComputedStyle(el as Element).backgroundColor),
    ).toBe('rgb(28, 61, 90)')
    // The preview can be clicked through to the thank-you message.
    await pick(page, 'Thank you')
    await preview.getByText('Thanks a lot!').waitFor()
    await axeClean(page)
    await screenshot(page, 'survey-editor-appearance')

    // Targeting: the shop's pages, everyone there (100%).
    await page.getByRole('tab', { name: 'Targeting' }).click()
    await page.getByLabel('URL', { exact: true }).fill('/shop')
    await page.getByRole('button', { name: 'Add filter' }).waitFor()
    await axeClean(page)
    await screenshot(page, 'survey-editor-targeting')

    await page.getByRole('tab', { name: 'Schedule' }).click()
    await page.getByLabel('Stop after a number of responses').check()
    await page.getByLabel('Responses limit').fill('50')
    await axeClean(page)
    await screenshot(page, 'survey-editor-schedule')

    // Enter in a field saves: the survey is created and its page opens.
    await page.getByLabel('Responses limit').press('Enter')
    await page.waitForURL(/\/surveys\/[0-9a-f-]{36}/)
    surveyId = /\/surveys\/([0-9a-f-]{36})/.exec(page.url())?.[1] as string
    await page.getByTestId('survey-status').getByText('Draft').waitFor()

    const saved = (await inject('GET', `surveys/${surveyId}/`)).json()
    expect(saved).toMatchObject({
      name: 'Checkout feedback',
      description: 'Asked on the shop page',
      type: 'popover',
      responses_limit: 50,
      conditions: { url: '/shop' },
      appearance: { backgroundColor: '#fff7e6', submitButtonColor: '#1c3d5a' },
      targeting_flag: null,
      start_date: null,
    })
    expect(saved.questions.map((q: { type: string }) => q.type)).toEqual(['open', 'rating', 'multiple_choice'])
    expect(saved.questions[1]).toMatchObject({ display: 'number', scale: 10, isNpsQuestion: true })
    expect(saved.questions[2]).toMatchObject({ choices: ['Shoes', 'Hats', 'Something else'], hasOpenChoice: true })
    questionIds = saved.questions.map((q: { id: string }) => q.id)
    await page.close()
  }, 240_000)

  it('targets by person property and rollout, launches; posthog-js shows it and the answers reach the results', async () => {
    const page = await open()
    await page.goto(`/project/${project}/surveys/${surveyId}?tab=targeting`)
    // A rollout below 100% makes a targeting flag; back at 100% with no property removes it.
    const rollout = page.getByLabel('Rollout percentage')
    await rollout.fill('40')
    await page.getByText('Unsaved changes').waitFor()
    await press(page.getByRole('button', { name: 'Save', exact: true }))
    await page.getByText('Survey saved').waitFor()
    let saved = (await inject('GET', `surveys/${surveyId}/`)).json()
    expect(saved.targeting_flag.filters.groups).toEqual([{ properties: [], rollout_percentage: 40, variant: null }])
    await rollout.fill('100')
    await press(page.getByRole('button', { name: 'Save', exact: true }))
    await expect.poll(async () => (await inject('GET', `surveys/${surveyId}/`)).json().targeting_flag).toBeNull()

    await press(page.getByRole('button', { name: 'Launch' }))
    await page.getByTestId('survey-status').getByText('Running').waitFor()
    saved = (await inject('GET', `surveys/${surveyId}/`)).json()
    expect(saved.start_date).not.toBeNull()

    // The customer's page on another origin: real posthog-js fetches the survey and draws it.
    const shop = await h.browser.newPage()
    shop.setDefaultTimeout(60_000)
    await shop.goto(`${site.url}/shop`)
    const textarea = shop.locator('textarea')
    await textarea.waitFor()
    await shop.getByText('What brought you here today?').first().waitFor()
    await textarea.fill('Looking for running shoes')
    await screenshot(shop, 'survey-on-site')
    await shop.locator('button', { hasText: 'Send' }).click()
    await shop.getByText('How likely are you to recommend us?').first().waitFor()
    await shop.locator('button.ratings-number', { hasText: /^9$/ }).click()
    await shop.locator('button', { hasText: 'Submit' }).click()
    await shop.getByText('What did you shop for?').first().waitFor()
    await shop.getByLabel('Shoes').check()
    await shop.getByRole('checkbox', { name: /^Something else/ }).check()
    await shop.getByRole('textbox', { name: 'Something else - please specify' }).fill('Socks')
    await shop.locator('button', { hasText: 'Submit' }).click()
    await shop.getByText('Thanks a lot!').first().waitFor()
    await shop.close()

    // The results, as the app shows them.
    await page.goto(`/project/${project}/surveys/${surveyId}`)
    await page.getByTestId('survey-results').waitFor()
    for (let i = 0; i < 60; i++) {
      if ((await page.getByTestId('stat-responses').textContent()) === '1') break
      await page.waitForTimeout(1000)
      await page.reload()
      await page.getByTestId('survey-results').waitFor()
    }
    expect(await page.getByTestId('stat-responses').textContent()).toBe('1')
    expect(await page.getByTestId('stat-impressions').textContent()).toBe('1')
    expect(await page.getByTestId('stat-response-rate').textContent()).toBe('100%')
    // One promoter out of one: NPS 100, average 9.
    await page.getByTestId('nps').getByText('100').waitFor()
    expect(await page.getByTestId('rating-average').textContent()).toBe('Average: 9')
    expect(await page.getByTestId('question-chart').count()).toBe(2)
    const choiceChart = page.getByTestId('question-chart').nth(1)
    expect(await choiceChart.getAttribute('aria-label')).toBe(
      'What did you shop for?: Shoes: 1, Hats: 0, Something else: 1',
    )
    await page.getByTestId('open-answers').first().getByText('Looking for running shoes').waitFor()
    await page.getByTestId('open-answers').nth(1).getByText('Shoes, Socks').waitFor()
    await page.getByTestId('survey-headline').waitFor()
    // The offline summary of the open answers.
    await page.getByRole('button', { name: 'Summarize answers' }).first().click()
    await page.getByTestId('answers-summary').getByText('1 responses').waitFor()
    expect(await page.getByTestId('answers-summary').textContent()).toContain('What brought you here today?')
    await axeClean(page)
    await screenshot(page, 'survey-results')

    // The answer is stored under the question's id, as posthog-js sent it.
    const responses = (await inject('GET', `surveys/${surveyId}/responses/`)).json()
    expect(responses.results).toHaveLength(1)
    expect(
      responses.results[0].answers.map((a: { question_id: string; answer: unknown }) => [a.question_id, a.answer]),
    ).toEqual([
      [questionIds[0], 'Looking for running shoes'],
      [questionIds[1], 9],
      [questionIds[2], ['Shoes', 'Socks']],
    ])
    await page.close()
  }, 300_000)

  it('archives and unarchives a response; the counts follow', async () => {
    const page = await open()
    await page.goto(`/project/${project}/surveys/${surveyId}`)
    const row = page.getByTestId('response-row')
    await row.waitFor()
    await row.getByRole('button', { name: 'Archive' }).click()
    // Archived responses are left out by default.
    await page.getByText('No responses (archived ones are hidden).').waitFor()
    await expect.poll(() => page.getByTestId('stat-responses').textContent(), { timeout: 60_000 }).toBe('0')
    const archived = (await inject('GET', `surveys/${surveyId}/archived-response-uuids/`)).json()
    expect(archived).toHaveLength(1)

    // Shown again on request (in the URL), marked archived, and unarchived from there.
    await page.getByRole('switch', { name: 'Include archived responses' }).press('Space')
    await page.waitForURL(/archived=show/)
    await row.getByText('Archived').waitFor()
    await expect.poll(() => page.getByTestId('stat-responses').textContent(), { timeout: 60_000 }).toBe('1')
    await row.getByRole('button', { name: 'Unarchive' }).click()
    // `exact`: the name "Archive" would otherwise also match the "Unarchive" button still on screen.
    await row.getByRole('button', { name: 'Archive', exact: true }).waitFor()
    expect((await inject('GET', `surveys/${surveyId}/archived-response-uuids/`)).json()).toEqual([])
    await page.getByRole('switch', { name: 'Include archived responses' }).press('Space')
    await expect.poll(() => page.getByTestId('stat-responses').textContent(), { timeout: 60_000 }).toBe('1')
    await page.close()
  }, 180_000)

  it('duplicates into another project; stops, resumes and archives; the list searches and filters', async () => {
    const other = await inject('POST', '/api/projects/', { name: 'Second shop' })
    expect(other.statusCode, other.body).toBe(201)
    const otherId = other.json().id as number

    const page = await open()
    await page.goto(`/project/${project}/surveys/${surveyId}?tab=questions`)
    await press(page.getByRole('button', { name: 'More' }))
    await page.getByRole('menuitem', { name: 'Duplicate to projects…' }).click()
    const dialog = page.getByRole('dialog', { name: 'Duplicate to projects' })
    await dialog.getByLabel('Projects').click()
    await page.getByRole('option', { name: 'Second shop' }).click()
    await page.keyboard.press('Escape')
    await dialog.getByRole('button', { name: 'Duplicate', exact: true }).click()
    await dialog
      .getByTestId('duplicated')
      .getByText(/Checkout feedback/)
      .waitFor()
    await axeClean(page)
    const copies = (await inject('GET', `/api/projects/${otherId}/surveys/`)).json()
    // A draft copy, named as PostHog names it.
    expect(copies.results).toHaveLength(1)
    expect(copies.results[0].name).toMatch(/^Checkout feedback \(duplicated at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\)$/)
    expect(copies.results[0].start_date).toBeNull()
    await dialog.getByRole('button', { name: 'Close' }).first().click()

    // A draft second survey for the list's filters.
    const draft = await inject('POST', 'surveys/', {
      name: 'Pricing poll',
      type: 'popover',
      questions: [{ type: 'single_choice', question: 'Too expensive?', choices: ['Yes', 'No'] }],
    })
    expect(draft.statusCode, draft.body).toBe(201)

    await press(page.getByRole('button', { name: 'Stop' }))
    await page.getByTestId('survey-status').getByText('Complete').waitFor()
    await press(page.getByRole('button', { name: 'Resume' }))
    await page.getByTestId('survey-status').getByText('Running').waitFor()

    await page.goto(`/project/${project}/surveys`)
    const table = page.getByTestId('surveys-table')
    await table.getByRole('link', { name: 'Pricing poll' }).waitFor()
    await table.getByRole('link', { name: 'Checkout feedback' }).waitFor()
    // The response count per survey.
    const checkoutRow = table.getByRole('row').filter({ hasText: 'Checkout feedback' })
    // The counts arrive beside the list: wait for the row's count, not the row.
    await checkoutRow.getByTestId('response-count').filter({ hasText: /^1$/ }).waitFor()
    await axeClean(page)
    await screenshot(page, 'surveys-list')

    // Status filter and search (Enter sends it), in the URL.
    await page.getByRole('combobox', { name: 'Status' }).click()
    await page.getByRole('option', { name: 'Running' }).click()
    await page.waitForURL(/status=running/)
    await table.getByRole('link', { name: 'Pricing poll' }).waitFor({ state: 'detached' })
    expect(await table.getByRole('link').allTextContents()).toEqual(['Checkout feedback'])
    await page.getByRole('combobox', { name: 'Status' }).click()
    await page.getByRole('option', { name: 'Any status' }).click()
    await page.waitForURL((url) => !url.searchParams.has('status'))
    await page.getByLabel('Search').fill('pricing')
    await page.getByLabel('Search').press('Enter')
    await page.waitForURL(/search=pricing/)
    await table.getByRole('link', { name: 'Checkout feedback' }).waitFor({ state: 'detached' })
    await table.getByRole('link', { name: 'Pricing poll' }).waitFor()
    expect(await table.getByRole('link').allTextContents()).toEqual(['Pricing poll'])
    await page.getByLabel('Search').fill('nothing like this')
    await page.getByLabel('Search').press('Enter')
    await page.getByText('No matching surveys').waitFor()

    // Archived from its page, then only in the archived view.
    await page.goto(`/project/${project}/surveys/${surveyId}?tab=questions`)
    await press(page.getByRole('button', { name: 'More' }))
    await page.getByRole('menuitem', { name: 'Archive' }).click()
    await page.getByText('Archived', { exact: true }).waitFor()
    await page.goto(`/project/${project}/surveys`)
    await table.getByRole('link', { name: 'Pricing poll' }).waitFor()
    expect(await table.getByRole('link').allTextContents()).toEqual(['Pricing poll'])
    await pick(page, 'Archived')
    await page.waitForURL(/archived=true/)
    await table.getByRole('link', { name: 'Checkout feedback' }).waitFor()
    expect(await table.getByRole('link').allTextContents()).toEqual(['Checkout feedback'])
    await page.close()
  }, 240_000)

  it('shows the server refusal, an unknown survey, and no page error or content-policy breach', async () => {
    const page = await open()
    // A name already used: PostHog's message from the server.
    await page.goto(`/project/${project}/surveys/new`)
    await field(page, 'Name').fill('Pricing poll')
    await field(page, 'Question 1').fill('Anything else?')
    await page.getByRole('button', { name: 'Create survey' }).click()
    await page.getByTestId('save-error').getByText('There is already a survey with this name.').waitFor()
    await axeClean(page)

    await page.goto(`/project/${project}/surveys/00000000-0000-0000-0000-000000000000`)
    await page.getByTestId('error-state').waitFor()
    await axeClean(page)
    await page.close()
    expect(h.errors).toEqual([])
  }, 120_000)
})
