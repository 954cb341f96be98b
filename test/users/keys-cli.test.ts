import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NO_PERSONAL_API_KEY_ACCESS } from '../../src/http/scopes.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

// The real `burrow keys` command in its own process, against the data directory of a running app (after its first
// start made the demo account), the way an operator makes a key while Burrow serves.

const run = promisify(execFile)
const root = path.resolve(import.meta.dirname, '../..')

let t: TestApp
let secondProjectId: number

beforeAll(async () => {
  t = await startTestApp()
  const second = await t.burrow.app.inject({
    method: 'POST',
    url: '/api/projects/',
    headers: t.auth,
    payload: { name: 'Second project' },
  })
  secondProjectId = second.json().id
})
afterAll(() => t.close())

async function burrow(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env, DATA_DIR: t.dataDir, DATABASE_URL: t.burrow.config.databaseUrl }
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
      cwd: root,
      env,
    })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

const keyCount = async () => (await t.burrow.meta.db.selectFrom('personal_api_keys').select('id').execute()).length

describe('burrow keys', () => {
  it('creates a key limited to one project, prints it once, and the key works over HTTP', async () => {
    const res = await burrow(
      'keys',
      'create',
      '--email',
      t.creds.email,
      '--label',
      'ci',
      '--scopes',
      'query:read,feature_flag:read',
      '--project',
      String(t.creds.project_id),
    )
    expect(res.code, res.stderr).toBe(0)
    const value = res.stdout.trim()
    expect(value).toMatch(/^phx_[0-9A-Za-z]+$/)
    expect(res.stderr).toContain('shown only this once')
    const headers = { authorization: `Bearer ${value}` }

    const self = await t.burrow.app.inject({ method: 'GET', url: '/api/personal_api_keys/@current/', headers })
    expect(self.statusCode).toBe(200)
    expect(self.json()).toMatchObject({
      label: 'ci',
      value: null,
      scopes: ['query:read', 'feature_flag:read'],
      scoped_teams: [t.creds.project_id],
      scoped_organizations: null,
    })
    const flags = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${t.creds.project_id}/feature_flags/`,
      headers,
    })
    expect(flags.statusCode).toBe(200)
    const query = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/query/`,
      headers,
      payload: { query: { kind: 'HogQLQuery', query: 'SELECT 1' } },
    })
    expect(query.statusCode).toBe(200)
    const other = await t.burrow.app.inject({
      method: 'GET',
      url: `/api/projects/${secondProjectId}/feature_flags/`,
      headers,
    })
    expect(other.statusCode).toBe(403)
    const write = await t.burrow.app.inject({
      method: 'POST',
      url: `/api/projects/${t.creds.project_id}/feature_flags/`,
      headers,
      payload: { key: 'nope' },
    })
    expect(write.statusCode).toBe(403)
    const mint = await t.burrow.app.inject({
      method: 'POST',
      url: '/api/personal_api_keys/',
      headers,
      payload: { label: 'more', scopes: ['*'] },
    })
    expect(mint.json().detail).toBe(NO_PERSONAL_API_KEY_ACCESS)
  })

  it("uses the first user without --email, lists the user's keys and revokes one", async () => {
    const created = await burrow('keys', 'create', '--label', 'everything', '--scopes', '*')
    expect(created.code, created.stderr).toBe(0)
    const value = created.stdout.trim()
    const self = await t.burrow.app.inject({
      method: 'GET',
      url: '/api/personal_api_keys/@current/',
      headers: { authorization: `Bearer ${value}` },
    })
    const demo = await t.burrow.stores.users.getByEmail(t.creds.email)
    expect(self.json()).toMatchObject({ user_id: demo?.id, scopes: ['*'], scoped_teams: null })

    const list = await burrow('keys', 'list')
    expect(list.code, list.stderr).toBe(0)
    expect(list.stdout).toContain(`${self.json().id}  phx_...${value.slice(-4)}  everything`)
    expect(list.stdout).not.toContain(value)

    const revoked = await burrow('keys', 'revoke', self.json().id)
    expect(revoked.code, revoked.stderr).toBe(0)
    const gone = await t.burrow.app.inject({
      method: 'GET',
      url: '/api/projects/',
      headers: { authorization: `Bearer ${value}` },
    })
    expect(gone.statusCode).toBe(401)
  })

  it('refuses empty and unknown scopes, and a project of no organization of the user, making no key', async () => {
    const before = await keyCount()
    const empty = await burrow('keys', 'create', '--label', 'x', '--scopes', '')
    expect(empty.code).toBe(1)
    expect(empty.stderr).toContain('--scopes: This list may not be empty.')
    expect(empty.stdout).toBe('')
    const unknown = await burrow('keys', 'create', '--label', 'x', '--scopes', 'query:read,everything:read')
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('--scopes: Invalid scope: everything:read')
    const foreign = await burrow('keys', 'create', '--label', 'x', '--scopes', '*', '--project', '999999')
    expect(foreign.code).toBe(1)
    expect(foreign.stderr).toContain('--project: You must be a member of all teams')
    expect(await keyCount()).toBe(before)
  })

  it('explains its usage for an unknown action', async () => {
    const res = await burrow('keys', 'mint')
    expect(res.code).toBe(2)
    expect(res.stderr).toContain('unknown action "mint"')
    expect(res.stderr).toContain('burrow keys create --label')
  })
}, 120_000)
