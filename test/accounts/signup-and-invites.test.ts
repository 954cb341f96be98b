import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Burrow, buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { freshPostgresUrl } from '../helpers/app.js'
import { type CookieClient, cookieClient } from './client.js'
import { linkIn, type MailServer, startMailServer } from './mail-server.js'

// Mirrors PostHog's test_signup.py, test_organization_invites.py and test_organization_members.py on an instance
// without the demo account: the first sign-up creates the organization; everyone else comes in by invite.

const VALID_TEST_PASSWORD = 'mighty-strong-secure-1337!!'
let burrow: Burrow
let mail: MailServer
let dataDir: string
let dropDb: (() => Promise<void>) | undefined
let owner: CookieClient
let ownerUuid = ''
let orgId = ''

beforeAll(async () => {
  mail = await startMailServer()
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-test-'))
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    SMTP_URL: mail.url,
    SITE_URL: 'http://burrow.test',
  }
  if (process.env.DATABASE_URL?.startsWith('postgres')) {
    const db = await freshPostgresUrl(process.env.DATABASE_URL)
    env.DATABASE_URL = db.url
    dropDb = db.drop
  }
  burrow = await buildApp(loadConfig(env), { logger: false })
  await burrow.app.ready()
})
afterAll(async () => {
  await burrow.close()
  await dropDb?.()
  await mail.close()
  fs.rmSync(dataDir, { recursive: true, force: true })
})

describe('sign-up', () => {
  it('test_cant_sign_up_without_required_attributes, null, blank, short and weak passwords', async () => {
    const base = { first_name: 'Jane', email: 'invalid@posthog.com', password: VALID_TEST_PASSWORD }
    for (const attr of ['first_name', 'email', 'password'] as const) {
      const body: Record<string, unknown> = { ...base }
      delete body[attr]
      const res = await cookieClient(burrow.app).post('/api/signup', body)
      expect(res.statusCode, attr).toBe(400)
      expect(res.json()).toEqual({
        type: 'validation_error',
        code: 'required',
        detail: 'This field is required.',
        attr,
      })
    }
    for (const attr of ['first_name', 'email']) {
      const res = await cookieClient(burrow.app).post('/api/signup/', { ...base, [attr]: null })
      expect(res.json()).toEqual({
        type: 'validation_error',
        code: 'null',
        detail: 'This field may not be null.',
        attr,
      })
    }
    const blank = await cookieClient(burrow.app).post('/api/signup/', { ...base, first_name: '   ' })
    expect(blank.json()).toMatchObject({ code: 'blank', attr: 'first_name' })
    const short = await cookieClient(burrow.app).post('/api/signup/', { ...base, password: '123' })
    expect(short.json()).toEqual({
      type: 'validation_error',
      code: 'password_too_short',
      detail: 'This password is too short. It must contain at least 8 characters.',
      attr: 'password',
    })
    const long = await cookieClient(burrow.app).post('/api/signup/', { ...base, password: 'a'.repeat(73) })
    expect(long.json()).toMatchObject({ code: 'max_length', attr: 'password' })
    const weak = await cookieClient(burrow.app).post('/api/signup/', { ...base, password: 'password' })
    expect(weak.json()).toEqual({
      type: 'validation_error',
      code: 'password_too_weak',
      detail: 'Add another word or two. Uncommon words are better.',
      attr: 'password',
    })
    const users = await burrow.meta.db.selectFrom('users').select('id').execute()
    expect(users).toEqual([])
  })

  it('test_api_sign_up: the first user creates the organization, is staff, and is logged in', async () => {
    owner = cookieClient(burrow.app)
    const res = await owner.post('/api/signup/', {
      first_name: 'John',
      last_name: 'Doe',
      email: 'Hedgehog@PostHog.com',
      password: VALID_TEST_PASSWORD,
      organization_name: 'Hedgehogs United, LLC',
      role_at_organization: 'product',
    })
    expect(res.statusCode).toBe(201)
    const body = res.json()
    ownerUuid = body.uuid
    expect(body).toEqual({
      id: expect.any(Number),
      uuid: expect.any(String),
      distinct_id: body.uuid,
      first_name: 'John',
      last_name: 'Doe',
      email: 'hedgehog@posthog.com',
      redirect_url: '/',
      is_email_verified: false,
      hedgehog_config: null,
      role_at_organization: 'product',
    })
    const me = await owner.get('/api/users/@me/')
    expect(me.statusCode).toBe(200)
    expect(me.json()).toMatchObject({
      email: 'hedgehog@posthog.com',
      is_staff: true,
      organization: { name: 'Hedgehogs United, LLC', membership_level: 15 },
      team: { name: 'Default project' },
    })
    orgId = me.json().organization.id
    await mail.next('hedgehog@posthog.com', /Verify your email/)
  })

  it('test_signup_disallowed_on_email_collision and test_signup_disallowed_on_self_hosted_by_default', async () => {
    const collision = await cookieClient(burrow.app).post('/api/signup/', {
      first_name: 'John',
      email: 'HEDGEHOG@posthog.com',
      password: VALID_TEST_PASSWORD,
    })
    expect(collision.json()).toEqual({
      type: 'validation_error',
      code: 'unique',
      detail: 'There is already an account with this email address.',
      attr: 'email',
    })
    const second = await cookieClient(burrow.app).post('/api/signup/', {
      first_name: 'Jane',
      email: 'hedgehog3@posthog.com',
      password: VALID_TEST_PASSWORD,
    })
    expect(second.statusCode).toBe(403)
    expect(second.json()).toEqual({
      attr: null,
      code: 'permission_denied',
      detail:
        'New organizations cannot be created in this instance. Contact your administrator if you think this is a mistake.',
      type: 'authentication_error',
    })
  })
})

let memberClient: CookieClient
let memberUuid = ''

describe('invites', () => {
  it('test_add_organization_invite_email_required', async () => {
    const res = await owner.post(`/api/organizations/${orgId}/invites/`, {})
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({
      type: 'validation_error',
      code: 'required',
      detail: 'This field is required.',
      attr: 'target_email',
    })
  })

  it('test_add_organization_invite_with_email: mails the link, which signs the invitee up', async () => {
    const res = await owner.post('/api/organizations/@current/invites/', { target_email: 'x@x.com' })
    expect(res.statusCode).toBe(201)
    const invite = res.json()
    expect(invite).toMatchObject({
      target_email: 'x@x.com',
      first_name: '',
      is_expired: false,
      level: 1,
      emailing_attempt_made: true,
      message: null,
      private_project_access: [],
      created_by: { uuid: ownerUuid, email: 'hedgehog@posthog.com', first_name: 'John' },
    })
    const message = await mail.next('x@x.com', /invited you to join Hedgehogs United, LLC/)
    expect(message.replyTo).toBe('hedgehog@posthog.com')
    const link = linkIn(message, 'http://burrow.test')
    expect(link.pathname).toBe(`/signup/${invite.id}`)

    const info = await cookieClient(burrow.app).get(`/api/signup/${invite.id}/`)
    expect(info.json()).toEqual({
      id: invite.id,
      target_email: 'x@x.com',
      first_name: '',
      organization_name: 'Hedgehogs United, LLC',
    })
    memberClient = cookieClient(burrow.app)
    const joined = await memberClient.post(`/api/signup/${invite.id}/`, {
      first_name: 'Xavier',
      password: VALID_TEST_PASSWORD,
    })
    expect(joined.statusCode).toBe(201)
    memberUuid = joined.json().uuid
    expect(joined.json()).toMatchObject({ email: 'x@x.com', first_name: 'Xavier', is_email_verified: true })
    const me = await memberClient.get('/api/users/@me/')
    expect(me.json()).toMatchObject({ is_staff: false, organization: { id: orgId, membership_level: 1 } })
    // An invite is used once.
    const again = await cookieClient(burrow.app).get(`/api/signup/${invite.id}/`)
    expect(again.json()).toMatchObject({ code: 'invalid_input', detail: 'The provided invite ID is not valid.' })
  })

  it('test_create_invites_for_the_same_email_multiple_times_deletes_older_invites', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await owner.post(`/api/organizations/${orgId}/invites/`, {
        target_email: 'y@posthog.com',
        send_email: false,
      })
      expect(res.statusCode).toBe(201)
      expect(res.json().emailing_attempt_made).toBe(false)
    }
    const list = await owner.get(`/api/organizations/${orgId}/invites/`)
    expect(
      list.json().results.filter((i: { target_email: string }) => i.target_email === 'y@posthog.com'),
    ).toHaveLength(1)
    const member = await owner.post(`/api/organizations/${orgId}/invites/`, { target_email: 'x@x.com' })
    expect(member.statusCode).toBe(400)
    expect(member.json().attr).toBe('target_email')
  })

  it('test_delete_organization_invite_only_if_admin', async () => {
    const invite = (await owner.post(`/api/organizations/${orgId}/invites/`, { target_email: 'z@posthog.com' })).json()
    const denied = await memberClient.delete(`/api/organizations/@current/invites/${invite.id}/`)
    expect(denied.statusCode).toBe(403)
    expect(denied.json()).toEqual({
      type: 'authentication_error',
      code: 'permission_denied',
      detail: 'Your organization access level is insufficient.',
      attr: null,
    })
    // A member may not invite above their own level.
    const above = await memberClient.post('/api/organizations/@current/invites/', {
      target_email: 'admin@posthog.com',
      level: 8,
    })
    expect(above.statusCode).toBe(403)
    const ok = await owner.delete(`/api/organizations/@current/invites/${invite.id}/`)
    expect(ok.statusCode).toBe(204)
    expect((await owner.delete(`/api/organizations/@current/invites/${invite.id}/`)).statusCode).toBe(404)
  })

  it('an organization the caller is not in answers 404 for members and invites', async () => {
    const alien = '00000000-0000-4000-8000-000000000000'
    for (const url of [`/api/organizations/${alien}/members/`, `/api/organizations/${alien}/invites/`]) {
      const res = await owner.get(url)
      expect(res.statusCode).toBe(404)
      expect(res.json().detail).toBe('Organization not found.')
    }
  })
})

describe('members', () => {
  it('test_list_organization_members and filter by email', async () => {
    const res = await memberClient.get('/api/organizations/@current/members/')
    expect(res.statusCode).toBe(200)
    const results = res.json().results
    expect(results.map((m: { user: { email: string } }) => m.user.email)).toEqual(['hedgehog@posthog.com', 'x@x.com'])
    expect(results[0]).toMatchObject({ level: 15, is_2fa_enabled: false, has_social_auth: false })
    const filtered = await owner.get('/api/organizations/@current/members/?email=x@x.com')
    expect(filtered.json().results).toHaveLength(1)
  })

  it('test_change_organization_member_level_requires_admin and test_cannot_change_own_organization_member_level', async () => {
    const denied = await memberClient.patch(`/api/organizations/@current/members/${ownerUuid}/`, { level: 1 })
    expect(denied.statusCode).toBe(403)
    const own = await memberClient.patch(`/api/organizations/@current/members/${memberUuid}/`, { level: 8 })
    expect(own.json()).toEqual({
      attr: null,
      code: 'permission_denied',
      detail: "You can't change your own access level.",
      type: 'authentication_error',
    })
  })

  it('test_change_organization_member_level (owner) and membership levels on organization settings', async () => {
    const before = await memberClient.patch(`/api/organizations/${orgId}/`, { name: 'Taken over' })
    expect(before.statusCode).toBe(403)
    expect(before.json().detail).toBe('Your organization access level is insufficient.')

    const res = await owner.patch(`/api/organizations/@current/members/${memberUuid}/`, { level: 8 })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ level: 8, user: { uuid: memberUuid }, is_2fa_enabled: false })
    const after = await memberClient.patch(`/api/organizations/${orgId}/`, { name: 'Renamed by an admin' })
    expect(after.statusCode).toBe(200)
  })

  it('test_add_owner_only_if_owner and admins cannot remove owners', async () => {
    const res = await memberClient.patch(`/api/organizations/@current/members/${ownerUuid}/`, { level: 15 })
    expect(res.statusCode).toBe(403)
    const remove = await memberClient.delete(`/api/organizations/@current/members/${ownerUuid}/`)
    expect(remove.statusCode).toBe(403)
  })

  it('test_leave_organization and test_delete_organization_member', async () => {
    const left = await memberClient.delete(`/api/organizations/@current/members/${memberUuid}/`)
    expect(left.statusCode).toBe(204)
    const list = await owner.get('/api/organizations/@current/members/')
    expect(list.json().results).toHaveLength(1)
    expect((await memberClient.get(`/api/organizations/${orgId}/`)).statusCode).toBe(404)
  })
})
