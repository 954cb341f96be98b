// The shell and the logged-out screens in Chromium: `/` leads to the login, the login (with the second factor)
// leads into the project, the navigation and the project switcher work, logout ends the session; each screen
// passes axe-core and is photographed.
import * as OTPAuth from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hasChromium, screenshot, seriousViolations, startWeb, type WebHarness } from './harness.js'

let h: WebHarness
beforeAll(async () => {
  if (hasChromium) h = await startWeb()
}, 90_000)
afterAll(async () => {
  await h?.close()
})

describe.skipIf(!hasChromium)('the web app shell', () => {
  it('sends a logged-out visitor from / to the login, and back to the asked-for page after it', async () => {
    const page = await h.page({ loggedIn: false })
    await page.goto('/')
    await page.waitForURL(/\/login$/)
    await page.getByRole('heading', { name: 'Log in' }).waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'login')

    // A deep link survives the login.
    await page.goto(`/project/${h.t.creds.project_id}/activity?after=-7d`)
    await page.waitForURL(/\/login\?next=/)
    await page.getByLabel('Email').fill(h.t.creds.email)
    await page.getByLabel(/^Password/).fill(h.t.creds.password)
    await page.getByRole('button', { name: 'Log in' }).click()
    await page.waitForURL(new RegExp(`/project/${h.t.creds.project_id}/activity\\?after=-7d$`))
    await page.getByRole('heading', { name: 'Activity' }).waitFor()
    expect(h.errors).toEqual([])
  })

  it('shows the server’s own words for a wrong password, and never follows an off-site next', async () => {
    const page = await h.page({ loggedIn: false })
    await page.goto('/login?next=//evil.example.com/')
    await page.getByLabel('Email').fill(h.t.creds.email)
    await page.getByLabel(/^Password/).fill('not the password')
    await page.getByRole('button', { name: 'Log in' }).click()
    const alert = page.getByTestId('login-error')
    await alert.waitFor()
    // PostHog's (and Burrow's) message for bad credentials.
    expect(await alert.textContent()).toMatch(/Invalid email or password/i)
    await page.getByLabel(/^Password/).fill(h.t.creds.password)
    await page.getByRole('button', { name: 'Log in' }).click()
    await page.waitForURL(new RegExp(`^${h.url}/project/\\d+/`))
  })

  it('asks for the second factor when 2FA is on, and logs in with the current TOTP code', async () => {
    // Turn 2FA on for a second user through the API, as the settings screen would.
    const { t } = h
    const email = 'second@factor.test'
    const password = 'a long and unusual passphrase 91'
    const invite = await t.burrow.app.inject({
      method: 'POST',
      url: '/api/organizations/@current/invites/',
      headers: t.auth,
      payload: { target_email: email, first_name: 'Sec', level: 1 },
    })
    expect(invite.statusCode, invite.body).toBe(201)
    const page = await h.page({ loggedIn: false })
    await page.goto(`/signup/${invite.json().id}`)
    await page.getByText(`Signing up as ${email}`).waitFor()
    await page.getByLabel(/^Password/).fill(password)
    await page.getByRole('button', { name: 'Sign up' }).click()
    await page.waitForURL(/\/project\/\d+\//)

    const context = page.context()
    const csrf = (await context.cookies()).find((c) => c.name === 'posthog_csrftoken')!.value
    const setup = await page.request.get('/api/users/@me/two_factor_start_setup/')
    expect(setup.status(), await setup.text()).toBe(200)
    const totp = OTPAuth.URI.parse((await setup.json()).uri) as OTPAuth.TOTP
    const validated = await page.request.post('/api/users/@me/two_factor_validate/', {
      data: { token: totp.generate() },
      headers: { 'x-csrftoken': csrf },
    })
    expect(validated.status(), await validated.text()).toBe(200)
    await context.clearCookies()

    await page.goto('/login')
    await page.getByLabel('Email').fill(email)
    await page.getByLabel(/^Password/).fill(password)
    await page.getByRole('button', { name: 'Log in' }).click()
    await page.getByLabel('Authentication code').waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'login-2fa')
    await page.getByLabel('Authentication code').fill('000000')
    await page.getByRole('button', { name: 'Verify' }).click()
    await page.getByTestId('login-error').waitFor()
    // Wait for the next TOTP step so the code is not one already used by the setup above.
    const step = Math.floor(Date.now() / 30_000)
    while (Math.floor(Date.now() / 30_000) === step) await new Promise((r) => setTimeout(r, 250))
    await page.getByLabel('Authentication code').fill(totp.generate())
    await page.getByRole('button', { name: 'Verify' }).click()
    await page.waitForURL(/\/project\/\d+\//)
  }, 60_000)

  it('navigates between screens, keeps state in the URL, and logs out', async () => {
    const page = await h.page()
    await page.getByRole('link', { name: 'Activity' }).click()
    await page.waitForURL(/\/activity$/)
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'shell')
    await page.getByTestId('account-menu').click()
    await page.getByRole('menuitem', { name: 'Log out' }).click()
    await page.waitForURL(/\/login$/)
    const me = await page.request.get('/api/users/@me/')
    expect(me.status()).toBe(401)
  })

  it('shows a not-found page inside the app for an unknown project screen', async () => {
    const page = await h.page()
    await page.goto(`/project/${h.t.creds.project_id}/no-such-screen`)
    await page.getByRole('heading', { name: 'Page not found' }).waitFor()
    expect(h.errors).toEqual([])
  })
})
