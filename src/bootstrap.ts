import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { type Kysely, sql } from 'kysely'
import { hashPassword, randomBase62 } from './http/keys.js'
import type { OrganizationStore } from './organizations/store.js'
import type { ProjectService } from './projects/service.js'
import type { MetaDialect } from './storage/meta/db.js'
import type { PersonalApiKeyService } from './users/keys-service.js'
import type { UserStore } from './users/store.js'

export interface Credentials {
  url: string
  project_id: number
  project_api_key: string
  personal_api_key: string
  email: string
  password: string
}

const DEMO_EMAIL = 'demo@burrow.local'

/** A path is Burrow's to lock down when it is new, empty, or already holds one of Burrow's stores. */
function isOurs(dir: string): boolean {
  if (!fs.existsSync(dir)) return true
  const entries = fs.readdirSync(dir)
  return (
    entries.length === 0 ||
    entries.some((e) => e === 'credentials.json' || e === 'wal' || e === 'chdb' || e.startsWith('burrow.sqlite'))
  )
}

/** chmod, except on a path another user owns (a mounted volume): its modes are its owner's choice. */
function restrict(target: string, mode: number): void {
  try {
    fs.chmodSync(target, mode)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') throw err
  }
}

function privateDir(dir: string, tighten: boolean): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  if (tighten) restrict(dir, 0o700)
}

/**
 * The data directory holds every event, key hash and the demo credentials: it is created (or tightened, when
 * it is Burrow's) owner-only, 0700, as are the embedded stores' directories; the SQLite file is created 0600
 * before SQLite opens it, and SQLite gives its -wal and -shm files the same mode. `burrow start` also sets a
 * 077 umask, so every file the engines create later is owner-only too.
 */
export function secureDataDir(config: { dataDir: string; databaseUrl: string; clickhouseUrl: string }): void {
  privateDir(config.dataDir, isOurs(config.dataDir))
  privateDir(path.join(config.dataDir, 'wal'), true)
  if (config.clickhouseUrl.startsWith('chdb:')) privateDir(config.clickhouseUrl.slice('chdb:'.length), true)
  if (config.databaseUrl.startsWith('sqlite:')) {
    const file = config.databaseUrl.slice('sqlite:'.length)
    if (file === ':memory:') return
    if (!fs.existsSync(path.dirname(file))) privateDir(path.dirname(file), true)
    fs.closeSync(fs.openSync(file, 'a', 0o600))
    for (const suffix of ['', '-wal', '-shm', '-journal']) {
      if (fs.existsSync(file + suffix)) restrict(file + suffix, 0o600)
    }
  }
}

/**
 * First start: with an empty data directory, create a demo organization, project, user and personal API key,
 * and write them to `<dataDir>/credentials.json` (mode 0600). Later starts reuse them.
 */
export async function ensureDemoAccount(burrow: {
  config: { dataDir: string; siteUrl: string }
  stores: { users: UserStore; organizations: OrganizationStore }
  services: { projects: ProjectService; keys: PersonalApiKeyService }
  clock: () => Date
}): Promise<{ credentials: Credentials; created: boolean }> {
  const deps = {
    dataDir: burrow.config.dataDir,
    siteUrl: burrow.config.siteUrl,
    users: burrow.stores.users,
    organizations: burrow.stores.organizations,
    projects: burrow.services.projects,
    keys: burrow.services.keys,
    clock: burrow.clock,
  }
  const file = path.join(deps.dataDir, 'credentials.json')
  if (fs.existsSync(file)) {
    const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as Credentials
    if (await deps.users.getByEmail(saved.email)) {
      const credentials = { ...saved, url: deps.siteUrl }
      if (saved.url !== deps.siteUrl) writeCredentials(file, credentials)
      return { credentials, created: false }
    }
  }

  const now = deps.clock().toISOString()
  const password = randomBase62(12)
  const org = await deps.organizations.insert({
    id: crypto.randomUUID(),
    name: 'Demo Organization',
    plan: 'paid',
    flag_request_quota: null,
    created_at: now,
  })
  const user = await deps.users.insert({
    uuid: crypto.randomUUID(),
    email: DEMO_EMAIL,
    password_hash: await hashPassword(password),
    first_name: 'Demo',
    last_name: 'User',
    is_email_verified: 1,
    pending_email: null,
    current_organization_id: org.id,
    current_project_id: null,
    created_at: now,
  })
  await deps.organizations.addMember(org.id, user.id, 15, now)
  const project = await deps.projects.create(
    {
      memberships: [{ organization_id: org.id, level: 15 }],
      scopedTeams: null,
      scopedOrganizations: null,
      currentOrganizationId: org.id,
    },
    { name: 'Demo Project', timezone: 'UTC' },
  )
  await deps.users.update(user.id, { current_project_id: project.id })
  const key = await deps.keys.create({ id: user.id, organizationIds: [org.id] }, { label: 'Demo key', scopes: ['*'] })

  const credentials: Credentials = {
    url: deps.siteUrl,
    project_id: project.id,
    project_api_key: project.api_token,
    personal_api_key: key.value as string,
    email: DEMO_EMAIL,
    password,
  }
  writeCredentials(file, credentials)
  return { credentials, created: true }
}

function writeCredentials(file: string, credentials: Credentials): void {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 })
  fs.chmodSync(file, 0o600)
}

/** Any number for the bootstrap's advisory lock, the same in every process. */
const BOOTSTRAP_LOCK = 7_240_331

/**
 * What `burrow start` does about accounts, safe when several processes start at once on one PostgreSQL database:
 * under an advisory lock, this data directory's saved credentials are reused; else, when the database has no user
 * yet, the demo account is created (by exactly one process); else nothing is created and `credentials` is null
 * (the database's users came from another process or were made by people: they log in, or an operator makes a
 * key with `burrow keys create`).
 */
export async function startupAccount(
  burrow: Parameters<typeof ensureDemoAccount>[0] & { meta: { db: Kysely<any>; dialect: MetaDialect } },
): Promise<{ credentials: Credentials | null; created: boolean }> {
  const decide = async () => {
    const file = path.join(burrow.config.dataDir, 'credentials.json')
    const hasUsers = (await burrow.meta.db.selectFrom('users').select('id').limit(1).execute()).length > 0
    if (!hasUsers || fs.existsSync(file)) {
      const saved = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Credentials) : undefined
      if (!hasUsers || (saved && (await burrow.stores.users.getByEmail(saved.email)))) return ensureDemoAccount(burrow)
    }
    return { credentials: null, created: false }
  }
  if (burrow.meta.dialect !== 'postgres') return decide()
  // A session lock, held on one connection while the work runs on others; released however the work ends.
  return burrow.meta.db.connection().execute(async (connection) => {
    await sql`SELECT pg_advisory_lock(${BOOTSTRAP_LOCK})`.execute(connection)
    try {
      return await decide()
    } finally {
      await sql`SELECT pg_advisory_unlock(${BOOTSTRAP_LOCK})`.execute(connection)
    }
  })
}
