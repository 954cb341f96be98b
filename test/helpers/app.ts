import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { type Burrow, buildApp } from '../../src/app.js'
import { type Credentials, ensureDemoAccount } from '../../src/bootstrap.js'
import { loadConfig } from '../../src/config.js'
import { hashPassword } from '../../src/http/keys.js'

/** A fresh PostgreSQL database for one test file, when DATABASE_URL names a server. */
export async function freshPostgresUrl(baseUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `burrow_t_${crypto.randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: baseUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(baseUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: baseUrl })
      await c.connect()
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await c.end()
    },
  }
}

export interface TestApp {
  burrow: Burrow
  creds: Credentials
  dataDir: string
  /** Authorization header for the demo user's all-scopes key. */
  auth: { authorization: string }
  close(): Promise<void>
}

/** A real app over real SQLite (or PostgreSQL when DATABASE_URL is set) and real chDB, in a temp data dir. */
export async function startTestApp(
  options: { env?: Record<string, string>; clock?: () => Date; webDir?: string | null } = {},
): Promise<TestApp> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'burrow-test-'))
  let dropDb: (() => Promise<void>) | undefined
  const env: Record<string, string> = { DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...options.env }
  if (process.env.DATABASE_URL?.startsWith('postgres')) {
    const db = await freshPostgresUrl(process.env.DATABASE_URL)
    env.DATABASE_URL = db.url
    dropDb = db.drop
  }
  const config = loadConfig(env)
  const burrow = await buildApp(config, { logger: false, clock: options.clock, webDir: options.webDir })
  const { credentials } = await ensureDemoAccount(burrow)
  await burrow.app.ready()
  return {
    burrow,
    creds: credentials,
    dataDir,
    auth: { authorization: `Bearer ${credentials.personal_api_key}` },
    async close() {
      await burrow.close()
      await dropDb?.()
      fs.rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** Another organization with its own user, project and key: for checking that tenants stay apart. */
export async function createTenant(
  t: TestApp,
  options: { plan?: 'free' | 'paid'; scopes?: string[]; flagQuota?: number | null } = {},
) {
  const { stores, services, clock } = t.burrow
  const now = clock().toISOString()
  const org = await stores.organizations.insert({
    id: crypto.randomUUID(),
    name: `Org ${crypto.randomBytes(3).toString('hex')}`,
    plan: options.plan ?? 'free',
    flag_request_quota: options.flagQuota ?? null,
    created_at: now,
  })
  const user = await stores.users.insert({
    uuid: crypto.randomUUID(),
    email: `user-${crypto.randomBytes(4).toString('hex')}@example.com`,
    password_hash: await hashPassword('correct horse battery'),
    first_name: 'Other',
    last_name: 'User',
    is_email_verified: 1,
    pending_email: null,
    current_organization_id: org.id,
    current_project_id: null,
    created_at: now,
  })
  await stores.organizations.addMember(org.id, user.id, 15, now)
  const caller = {
    memberships: [{ organization_id: org.id, level: 15 }],
    scopedTeams: null,
    scopedOrganizations: null,
    currentOrganizationId: org.id,
  }
  const project = await services.projects.create(caller, { name: 'Other project' })
  const key = await services.keys.create(
    { id: user.id, organizationIds: [org.id] },
    { label: 'k', scopes: options.scopes ?? ['*'] },
  )
  return { org, user, project, key: key.value as string, auth: { authorization: `Bearer ${key.value}` } }
}

/** A key for the demo user with the given scopes and project scoping. */
export async function createKey(t: TestApp, scopes: string[], scopedTeams?: number[]) {
  const user = await t.burrow.stores.users.getByEmail(t.creds.email)
  const orgs = await t.burrow.stores.organizations.memberships(user!.id)
  const key = await t.burrow.services.keys.create(
    { id: user!.id, organizationIds: orgs.map((o) => o.organization_id) },
    { label: `test ${scopes.join(',')}`, scopes, scoped_teams: scopedTeams },
  )
  return { authorization: `Bearer ${key.value}` }
}

/** Another user in the demo organization at the given level (1 member, 8 admin, 15 owner), with a key. */
export async function createMember(t: TestApp, level: number, scopes: string[] = ['*']) {
  const { stores, services, clock } = t.burrow
  const now = clock().toISOString()
  const demo = await stores.users.getByEmail(t.creds.email)
  const orgId = demo!.current_organization_id!
  const user = await stores.users.insert({
    uuid: crypto.randomUUID(),
    email: `member-${crypto.randomBytes(4).toString('hex')}@example.com`,
    password_hash: await hashPassword('correct horse battery'),
    first_name: 'Member',
    last_name: 'User',
    is_email_verified: 1,
    pending_email: null,
    current_organization_id: orgId,
    current_project_id: t.creds.project_id,
    created_at: now,
  })
  await stores.organizations.addMember(orgId, user.id, level, now)
  const key = await services.keys.create({ id: user.id, organizationIds: [orgId] }, { label: 'member', scopes })
  return { user, organizationId: orgId, key: key.value as string, auth: { authorization: `Bearer ${key.value}` } }
}
