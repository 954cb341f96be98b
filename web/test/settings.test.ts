// Settings in Chromium against a real Burrow: the project (name, time zone, test-account filters, display name
// properties, the API key copied), personal API keys (a key made with only `insight:read` in the page is refused a
// write by the API; rolled and deleted keys stop working), members and invites, and the account (profile,
// password, 2FA set up from the QR's otpauth URI with a TOTP code, backup codes, 2FA turned off). Each screen
// passes axe-core and is photographed.
import * as OTPAuth from 'otpauth'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMember } from '../../test/helpers/app.js'
import { hasChromium, login, screenshot, seriousViolations, startWeb, type WebHarness } from './harness.js'

let h: WebHarness
let project: number

const until = <T>(fn: () => T | Promise<T>, options: { timeout?: number } = {}) =>
  expect.poll(fn, { timeout: 15_000, ...options })

async function call(
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  payload?: object,
  headers: Record<string, string> = h.t.auth,
) {
  const res = await h.t.burrow.app.inject({ method, url, headers, payload })
  return { status: res.statusCode, body: res.body ? res.json() : null }
}

async function pick(page: Page, label: string, option: string) {
  await page.getByRole('combobox', { name: label, exact: true }).click()
  await page.getByRole('option', { name: option, exact: true }).click()
}

beforeAll(async () => {
  if (!hasChromium) return
  h = await startWeb()
  project = h.t.creds.project_id
}, 240_000)
afterAll(async () => {
  await h?.close()
})

describe.skipIf(!hasChromium)('settings', { timeout: 300_000 }, () => {
  it('project settings: name, time zone, test-account filters, display names, and the API key copied', async () => {
    const page = await h.page()
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'])
    await page.goto(`/project/${project}/settings/project`)
    await page.getByRole('heading', { name: 'Project settings' }).waitFor()
    expect(await page.getByTestId('project-api-key').textContent()).toBe(h.t.creds.project_api_key)
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'settings-project')

    await page.getByRole('button', { name: 'Copy', exact: true }).click()
    await page.getByRole('button', { name: 'Copied' }).waitFor()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(h.t.creds.project_api_key)

    // The form with the keyboard: the name, then the time zone typed into its search.
    await page.getByLabel('Project name').focus()
    await page.keyboard.press('ControlOrMeta+a')
    await page.keyboard.type('Storefront')
    await page.keyboard.press('Tab')
    await page.keyboard.type('Europe/Par')
    await page.getByRole('option', { name: 'Europe/Paris', exact: true }).click()
    await pick(page, 'Week starts on', 'Monday')
    await page.getByRole('button', { name: 'Add filter' }).click()
    await pick(page, 'Test account filter 1: kind', 'Person property')
    await page.getByRole('combobox', { name: 'Test account filter 1: property', exact: true }).fill('email')
    await page.getByRole('combobox', { name: 'Test account filter 1: property', exact: true }).press('Escape')
    await pick(page, 'Test account filter 1: operator', 'contains')
    await page.getByRole('textbox', { name: 'Test account filter 1: value', exact: true }).fill('@storefront.test')
    await page.getByLabel('Person display name').first().fill('username')
    await page.getByLabel('Person display name').first().press('Enter')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByText('Project settings saved').waitFor()

    const saved = await call('GET', `/api/projects/${project}/`)
    expect(saved.body).toMatchObject({
      name: 'Storefront',
      timezone: 'Europe/Paris',
      week_start_day: 1,
      test_account_filters: [{ key: 'email', operator: 'icontains', value: '@storefront.test', type: 'person' }],
      person_display_name_properties: ['username'],
    })
    // The project switcher shows the new name too.
    await page.reload()
    await until(() => page.getByLabel('Project name').inputValue()).toBe('Storefront')
    await until(() =>
      page.getByRole('textbox', { name: 'Test account filter 1: value', exact: true }).inputValue(),
    ).toBe('@storefront.test')

    // A refusal is shown in the server's words: an empty name.
    await page.getByLabel('Project name').fill('')
    await page.getByLabel('Project name').evaluate((el) => el.removeAttribute('required'))
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByTestId('project-error').waitFor()
    expect((await call('GET', `/api/projects/${project}/`)).body.name).toBe('Storefront')
    expect(h.errors).toEqual([])
  })

  it('test_personal_api_key_scopes: a key created with only insight:read reads insights and is refused a write', async () => {
    const page = await h.page()
    await page.goto(`/project/${project}/settings/personal-api-keys`)
    await page.getByRole('table', { name: 'Personal API keys' }).waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'settings-personal-api-keys')
    const before = await page.getByTestId('key-row').count()

    await page.getByRole('button', { name: 'Create personal API key' }).click()
    await page.waitForURL(/create=1/)
    const dialog = page.getByRole('dialog', { name: 'Create personal API key' })
    // No scope: the API's refusal is shown.
    await dialog.getByLabel('Label').fill('Insight reader')
    await dialog.getByRole('button', { name: 'Create key' }).click()
    await until(() => dialog.getByTestId('key-error').textContent()).toBe('This list may not be empty.')
    // Every scope object the API takes is offered, the stored LLM prompts' among them.
    expect(await dialog.getByRole('checkbox', { name: 'llm_prompt:read', exact: true }).count()).toBe(1)
    expect(await dialog.getByText('LLM prompt', { exact: true }).count()).toBe(1)
    // Only insight:read, and only this project (keyboard: Space toggles the checkbox).
    await dialog.getByRole('checkbox', { name: 'insight:read', exact: true }).focus()
    await page.keyboard.press('Space')
    const projectName = (await call('GET', `/api/projects/${project}/`)).body.name
    await dialog.getByLabel('Projects').first().click({ force: true })
    await page.getByRole('option', { name: projectName, exact: true }).click()
    await page.keyboard.press('Escape')
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'settings-personal-api-key-create')
    await dialog.getByRole('button', { name: 'Create key' }).click()

    const shown = page.getByRole('dialog', { name: 'Your new personal API key' })
    const value = (await shown.getByTestId('new-key-value').textContent())?.trim() ?? ''
    expect(value).toMatch(/^phx_/)
    await screenshot(page, 'settings-personal-api-key-shown')
    await shown.getByRole('button', { name: 'Done' }).click()
    await until(() => page.getByTestId('key-row').count()).toBe(before + 1)
    const row = page.getByTestId('key-row').filter({ hasText: 'Insight reader' })
    expect(await row.textContent()).toContain('insight:read')
    expect(await row.textContent()).toContain(`Projects: ${project}`)

    const auth = { authorization: `Bearer ${value}` }
    expect((await call('GET', `/api/projects/${project}/insights/`, undefined, auth)).status).toBe(200)
    const write = await call('POST', `/api/projects/${project}/insights/`, { name: 'x' }, auth)
    expect(write).toEqual({
      status: 403,
      body: {
        type: 'authentication_error',
        code: 'permission_denied',
        detail: "API key missing required scope 'insight:write'",
        attr: null,
      },
    })
    expect((await call('GET', `/api/projects/${project}/feature_flags/`, undefined, auth)).status).toBe(403)

    // Rolling: a new value is shown once; the old one stops working.
    await row.getByRole('button', { name: 'Roll Insight reader' }).click()
    await page.getByRole('dialog', { name: 'Roll “Insight reader”' }).getByRole('button', { name: 'Roll key' }).click()
    const rolled = (await shown.getByTestId('new-key-value').textContent())?.trim() ?? ''
    expect(rolled).toMatch(/^phx_/)
    expect(rolled).not.toBe(value)
    await shown.getByRole('button', { name: 'Done' }).click()
    expect((await call('GET', `/api/projects/${project}/insights/`, undefined, auth)).status).toBe(401)
    const rolledAuth = { authorization: `Bearer ${rolled}` }
    expect((await call('GET', `/api/projects/${project}/insights/`, undefined, rolledAuth)).status).toBe(200)

    // Deleting: gone from the list, and refused by the API.
    await row.getByRole('button', { name: 'Delete Insight reader' }).click()
    await page
      .getByRole('dialog', { name: 'Delete “Insight reader”' })
      .getByRole('button', { name: 'Delete key' })
      .click()
    await until(() => page.getByTestId('key-row').count()).toBe(before)
    expect((await call('GET', `/api/projects/${project}/insights/`, undefined, rolledAuth)).status).toBe(401)
    expect(h.errors).toEqual([])
  })

  it('members and invites: invite by email with a level, revoke it, change a member’s level, remove a member', async () => {
    const member = await createMember(h.t, 1)
    const page = await h.page()
    await page.goto(`/project/${project}/settings/members`)
    await page.getByRole('table', { name: 'Members' }).waitFor()
    await until(() => page.getByTestId('member-row').count()).toBe(2)
    await page.getByTestId('no-invites').waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'settings-members')

    // The invite form with the keyboard: email, first name, level, Enter.
    await page.getByLabel('Email address').focus()
    await page.keyboard.type('newcomer@storefront.test')
    await page.keyboard.press('Tab')
    await page.keyboard.type('Nia')
    await pick(page, 'Level', 'Admin')
    await page.getByLabel('First name').press('Enter')
    await until(() => page.getByTestId('invite-row').allTextContents()).toEqual([
      expect.stringMatching(/^newcomer@storefront\.testAdmin/),
    ])
    const invites = await call('GET', '/api/organizations/@current/invites/')
    expect(invites.body.results.map((i: { target_email: string; level: number }) => [i.target_email, i.level])).toEqual(
      [['newcomer@storefront.test', 8]],
    )
    // A member's own address: the API's refusal is shown.
    await page.getByLabel('Email address').fill(h.t.creds.email)
    await page.getByRole('button', { name: 'Send invite' }).click()
    await until(() => page.getByTestId('invite-error').textContent()).toBe(
      'A user with this email address already belongs to the organization.',
    )

    await page.getByRole('button', { name: 'Revoke invite for newcomer@storefront.test' }).click()
    await page.getByRole('dialog', { name: 'Revoke invite' }).getByRole('button', { name: 'Revoke' }).click()
    await page.getByTestId('no-invites').waitFor()
    expect((await call('GET', '/api/organizations/@current/invites/')).body.results).toEqual([])

    await pick(page, `Level of ${member.user.email}`, 'Admin')
    await until(async () => {
      const members = (await call('GET', '/api/organizations/@current/members/')).body.results
      return members.find((m: { user: { email: string } }) => m.user.email === member.user.email)?.level
    }).toBe(8)

    await page.getByRole('button', { name: `Remove ${member.user.email}` }).click()
    await page.getByRole('dialog', { name: 'Remove member' }).getByRole('button', { name: 'Remove' }).click()
    await until(() => page.getByTestId('member-row').count()).toBe(1)
    const after = (await call('GET', '/api/organizations/@current/members/')).body.results
    expect(after.map((m: { user: { email: string } }) => m.user.email)).toEqual([h.t.creds.email])
    expect(h.errors).toEqual([])
  })

  it('account: profile, password change, and 2FA set up from the QR code, backup codes, and turned off', async () => {
    const member = await createMember(h.t, 1)
    const page = await h.page({ loggedIn: false })
    await login(page, member.user.email, 'correct horse battery')
    // The user menu leads here.
    await page.getByTestId('account-menu').click()
    await page.getByRole('menuitem', { name: 'Account settings' }).click()
    await page.waitForURL(/\/settings\/account$/)
    await page.getByRole('heading', { name: 'Account settings' }).waitFor()
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'settings-account')

    await page.getByLabel('First name').fill('Morgan')
    await page.getByLabel('Last name').fill('Lee')
    await page.getByLabel('Last name').press('Enter')
    await until(async () => (await call('GET', '/api/users/@me/', undefined, member.auth)).body.first_name).toBe(
      'Morgan',
    )
    expect((await call('GET', '/api/users/@me/', undefined, member.auth)).body.last_name).toBe('Lee')

    // Password: the wrong current one is refused in the server's words; the right one works.
    await page.getByLabel('Current password').fill('not my password')
    await page.getByLabel('New password').fill('a much longer passphrase 4821')
    await page.getByRole('button', { name: 'Change password' }).click()
    await until(() => page.getByTestId('password-error').textContent()).toBe('Your current password is incorrect.')
    await page.getByLabel('Current password').fill('correct horse battery')
    await page.getByLabel('New password').press('Enter')
    await page.getByText('Password changed').waitFor()

    // 2FA: the secret comes from the otpauth URI the page received and drew as a QR code.
    const setupResponse = page.waitForResponse((r) => r.url().includes('/two_factor_start_setup/'))
    await page.getByRole('button', { name: 'Set up 2FA' }).click()
    const setup = await (await setupResponse).json()
    const totp = OTPAuth.URI.parse(setup.uri) as OTPAuth.TOTP
    expect(totp.secret.base32).toBe(setup.secret)
    await page.getByTestId('twofa-qr').waitFor()
    expect(await page.getByTestId('twofa-qr').getAttribute('src')).toMatch(/^data:image\/png;base64,/)
    expect(await page.getByTestId('twofa-secret').textContent()).toBe(setup.secret)
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'settings-account-2fa-setup')
    await page.getByLabel('Authentication code').fill('000000')
    await page.getByRole('button', { name: 'Enable 2FA' }).click()
    await until(() => page.getByTestId('twofa-error').textContent()).toBe('Token is not valid')
    await page.getByLabel('Authentication code').fill(totp.generate())
    await page.getByLabel('Authentication code').press('Enter')
    await page.getByTestId('twofa-enabled').waitFor()
    const codes = page.getByTestId('backup-codes')
    await codes.waitFor()
    const first = ((await codes.textContent()) ?? '').split('\n')
    expect(first).toHaveLength(5)
    await until(() => page.getByTestId('twofa-enabled').textContent()).toMatch(/5 backup codes left/)
    expect((await call('GET', '/api/users/@me/two_factor_status/', undefined, member.auth)).body).toMatchObject({
      is_enabled: true,
      backup_codes_remaining: 5,
    })
    expect(await seriousViolations(page)).toEqual([])
    await screenshot(page, 'settings-account-2fa-on')

    await page.getByRole('button', { name: 'Generate new backup codes' }).click()
    await until(async () => ((await codes.textContent()) ?? '').split('\n')).not.toEqual(first)
    expect(((await codes.textContent()) ?? '').split('\n')).toHaveLength(5)

    await page.getByRole('button', { name: 'Disable 2FA' }).click()
    await page
      .getByRole('dialog', { name: 'Turn off two-factor authentication' })
      .getByRole('button', {
        name: 'Disable 2FA',
      })
      .click()
    await page.getByRole('button', { name: 'Set up 2FA' }).waitFor()
    expect((await call('GET', '/api/users/@me/two_factor_status/', undefined, member.auth)).body.is_enabled).toBe(false)

    // The new password logs in.
    const again = await h.page({ loggedIn: false })
    await login(again, member.user.email, 'a much longer passphrase 4821')
    expect(h.errors).toEqual([])
  })
})
