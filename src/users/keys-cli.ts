import { parseArgs } from 'node:util'
import { loadConfig } from '../config.js'
import { ApiError } from '../http/errors.js'
import { createOrganizationStore } from '../organizations/store.js'
import { createProjectStore } from '../projects/store.js'
import { openMetaDb } from '../storage/meta/db.js'
import { migrateMeta } from '../storage/meta/migrate.js'
import { createPersonalApiKeyService, type PersonalApiKey } from './keys-service.js'
import { createPersonalApiKeyStore, createUserStore } from './store.js'

export const KEYS_USAGE = `usage:
  burrow keys create --label <label> --scopes <scope,scope,…> [--project <id>]… [--organization <uuid>]… [--email <e-mail>]
  burrow keys list [--email <e-mail>]
  burrow keys roll <key id> [--email <e-mail>]
  burrow keys revoke <key id> [--email <e-mail>]

Scopes are PostHog's, e.g. query:read,feature_flag:write, or '*' for everything. --project and --organization
limit the key to those projects or organizations (repeat them for several). Without --email, the first user
(the demo user of a fresh install). The key's value is printed once, on standard output.
`

/** Which command-line flag a service error's field came from. */
const FLAG_OF: Record<string, string> = {
  label: '--label',
  scopes: '--scopes',
  scoped_teams: '--project',
  scoped_organizations: '--organization',
}

interface Io {
  out: (text: string) => void
  err: (text: string) => void
}

class UsageError extends Error {}

const defaultIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
}

/**
 * `burrow keys …`: personal API keys managed from the machine Burrow runs on, the way to make a key until a
 * logged-in session can (keys themselves may not make keys). Opens only the metadata store, so it works while the
 * server runs. Returns the exit code.
 */
export async function runKeysCommand(argv: string[], env: NodeJS.ProcessEnv = process.env, io = defaultIo) {
  let args: ReturnType<typeof parse>
  try {
    args = parse(argv)
  } catch (err) {
    io.err(`burrow keys: ${err instanceof Error ? err.message : String(err)}\n\n${KEYS_USAGE}`)
    return 2
  }
  let meta: ReturnType<typeof openMetaDb> | undefined
  try {
    const config = loadConfig(env)
    meta = openMetaDb(config.databaseUrl)
    await migrateMeta(meta.db, meta.dialect)
    const users = createUserStore(meta.db)
    const organizations = createOrganizationStore(meta.db)
    const projects = createProjectStore(meta.db)
    const keys = createPersonalApiKeyService({
      keys: createPersonalApiKeyStore(meta.db),
      projectOrganization: async (id) => (await projects.get(id))?.organization_id,
      clock: () => new Date(),
    })

    const user = args.values.email ? await users.getByEmail(args.values.email) : await users.first()
    if (!user) {
      throw new Error(
        args.values.email
          ? `no user with the e-mail ${args.values.email}`
          : 'no user yet: start Burrow once (npm start) to create the demo account',
      )
    }

    const [action, keyId] = args.positionals
    if (action === 'create') {
      const memberships = await organizations.memberships(user.id)
      const key = await keys.create(
        { id: user.id, organizationIds: memberships.map((m) => m.organization_id) },
        {
          label: args.values.label ?? '',
          scopes: args.values.scopes === undefined ? undefined : splitList(args.values.scopes),
          scoped_teams: args.values.project?.map(projectId),
          scoped_organizations: args.values.organization,
        },
      )
      io.out(`${key.value}\n`)
      io.err(`Created personal API key "${key.label}" (id ${key.id}) for ${user.email}: ${describe(key)}.\n`)
      io.err('Its value above is shown only this once; Burrow keeps only its hash.\n')
    } else if (action === 'list') {
      for (const key of await keys.list(user.id)) {
        io.out(
          `${key.id}  ${key.mask_value}  ${key.label}  ${describe(key)}  last used ${key.last_used_at ?? 'never'}\n`,
        )
      }
    } else if (action === 'roll') {
      const key = await keys.roll(user.id, requireId(keyId))
      io.out(`${key.value}\n`)
      io.err(`Rolled personal API key "${key.label}" (id ${key.id}); the old value no longer works.\n`)
    } else {
      await keys.remove(user.id, requireId(keyId))
      io.err(`Revoked personal API key ${keyId}.\n`)
    }
    return 0
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`burrow keys: ${err.message}\n\n${KEYS_USAGE}`)
      return 2
    }
    io.err(`burrow keys: ${messageOf(err)}\n`)
    return 1
  } finally {
    await meta?.close()
  }
}

function parse(argv: string[]) {
  const args = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      label: { type: 'string' },
      scopes: { type: 'string' },
      project: { type: 'string', multiple: true },
      organization: { type: 'string', multiple: true },
    },
  })
  const [action, ...rest] = args.positionals
  const takesId = action === 'roll' || action === 'revoke'
  if (!action || !['create', 'list', 'roll', 'revoke'].includes(action)) {
    throw new UsageError(action ? `unknown action "${action}"` : 'name an action')
  }
  if (rest.length > (takesId ? 1 : 0)) throw new UsageError(`unexpected argument "${rest[takesId ? 1 : 0]}"`)
  return args
}

function requireId(id: string | undefined): string {
  if (!id) throw new UsageError('name the key by its id (see burrow keys list)')
  return id
}

function projectId(text: string): number {
  if (!/^\d{1,15}$/.test(text)) throw new UsageError(`--project takes a project id (a number), got "${text}"`)
  return Number(text)
}

const splitList = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)

function describe(key: PersonalApiKey): string {
  const limits = [
    key.scoped_teams ? `projects ${key.scoped_teams.join(', ')}` : null,
    key.scoped_organizations ? `organizations ${key.scoped_organizations.join(', ')}` : null,
  ].filter(Boolean)
  return `scopes ${key.scopes.join(',') || '(none)'}; ${limits.length > 0 ? limits.join('; ') : 'every project of the user'}`
}

function messageOf(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.code === 'not_found') return 'no such key for this user'
    return err.attr ? `${FLAG_OF[err.attr] ?? err.attr}: ${err.detail}` : err.detail
  }
  return err instanceof Error ? err.message : String(err)
}
