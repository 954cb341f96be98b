import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { hashPassword, randomBase62 } from './http/keys.js'
import type { OrganizationStore } from './organizations/store.js'
import type { ProjectService } from './projects/service.js'
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
