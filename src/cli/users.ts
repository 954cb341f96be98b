/**
 * `burrow users create | list | reset-password | disable-2fa`: accounts from the machine Burrow runs on, for
 * headless set-ups and lock-outs (the only admin lost their authenticator). Works on the metadata store
 * directly, so with embedded stores Burrow must be stopped; with PostgreSQL it may run.
 */
import crypto from 'node:crypto'
import { type Command, Option } from 'commander'
import { createAccountStore } from '../accounts/store.js'
import { loadConfig } from '../config.js'
import { hashPassword, randomBase62 } from '../http/keys.js'
import { MembershipLevel } from '../organizations/levels.js'
import { createOrganizationStore } from '../organizations/store.js'
import type { CliIo } from './program.js'
import { UsageError } from './usage.js'

const LEVELS: Record<string, number> = {
  member: MembershipLevel.MEMBER,
  admin: MembershipLevel.ADMIN,
  owner: MembershipLevel.OWNER,
}
const LEVEL_NAMES: Record<number, string> = Object.fromEntries(Object.entries(LEVELS).map(([k, v]) => [v, k]))
const EMAIL = /^[^\s@]+@[^\s@]+$/

type Meta = Awaited<ReturnType<typeof import('./stores.js').openMeta>>

/** Opens the stores for a users command (refusing while an embedded server holds them), runs it, closes them. */
async function withStores(io: CliIo, command: string, fn: (meta: Meta) => Promise<number>): Promise<number> {
  const config = loadConfig(io.env)
  // The stores' drivers load only when a users command runs.
  const { openMeta, refuseWhileServing } = await import('./stores.js')
  refuseWhileServing(config, command)
  const meta = await openMeta(config)
  try {
    return await fn(meta)
  } finally {
    await meta.close()
  }
}

async function userByEmail(meta: Meta, email: string) {
  const user = await createAccountStore(meta.db).getUserByEmail(email)
  if (!user) throw new Error(`no user with the e-mail ${email}`)
  return user
}

/** A password the operator chose (checked by the same rules as the web app), or a strong new one. */
async function passwordFrom(given: string | undefined): Promise<{ password: string; generated: boolean }> {
  if (given === undefined) return { password: randomBase62(12), generated: true }
  // zxcvbn's dictionaries load only when a password is checked.
  const { validatePassword } = await import('../accounts/passwords.js')
  const { ApiError } = await import('../http/errors.js')
  try {
    validatePassword(given)
  } catch (err) {
    throw new UsageError(`--password: ${err instanceof ApiError ? err.detail : String(err)}`)
  }
  return { password: given, generated: false }
}

export function registerUsersCommand(program: Command, io: CliIo, setOutcome: (code: number) => void) {
  const users = program
    .command('users')
    .description('accounts: create | list | reset-password | disable-2fa (Burrow stopped, for embedded stores)')

  users
    .command('list')
    .description('every user, with organizations, levels and whether 2FA is on')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      setOutcome(
        await withStores(io, 'users list', async (meta) => {
          const rows = await meta.db
            .selectFrom('users')
            .select(['id', 'uuid', 'email', 'first_name', 'last_name', 'created_at'])
            .orderBy('id')
            .execute()
          const accounts = createAccountStore(meta.db)
          const withTotp = await accounts.hasTotp(rows.map((r) => r.id))
          const orgs = createOrganizationStore(meta.db)
          const out = []
          for (const row of rows) {
            const memberships = await orgs.listForUser(row.id)
            const user = await accounts.getUser(row.id)
            out.push({
              id: row.id,
              uuid: row.uuid,
              email: row.email,
              name: `${row.first_name} ${row.last_name}`.trim(),
              two_factor: withTotp.has(row.id),
              last_login: user?.last_login ?? null,
              organizations: memberships.map((m) => ({
                id: m.id,
                name: m.name,
                level: LEVEL_NAMES[m.level] ?? m.level,
              })),
            })
          }
          if (opts.json) io.out(`${JSON.stringify(out)}\n`)
          else {
            for (const u of out) {
              const where = u.organizations.map((o) => `${o.name} (${o.level})`).join(', ') || 'no organization'
              io.out(`${u.id}  ${u.email}  ${u.name || '-'}  2FA ${u.two_factor ? 'on' : 'off'}  ${where}\n`)
            }
          }
          return 0
        }),
      )
    })

  users
    .command('create')
    .description('a new user in an organization; prints the password when it is generated')
    .argument('<email>')
    .option('--password <password>', 'their password (default: a generated one, printed once)')
    .option('--organization <uuid>', "the organization (default: the first one, a fresh install's demo organization)")
    .addOption(new Option('--level <level>', 'membership level').choices(Object.keys(LEVELS)).default('member'))
    .option('--first-name <name>', 'first name', '')
    .option('--last-name <name>', 'last name', '')
    .option('--json', 'print JSON')
    .action(async (email: string, opts: CreateOptions) => {
      if (!EMAIL.test(email)) throw new UsageError(`"${email}" is not an e-mail address`)
      const { password, generated } = await passwordFrom(opts.password)
      setOutcome(
        await withStores(io, 'users create', async (meta) => {
          const accounts = createAccountStore(meta.db)
          if (await accounts.isEmailTaken(email)) throw new Error(`a user with the e-mail ${email} exists already`)
          const org = opts.organization
            ? await meta.db
                .selectFrom('organizations')
                .selectAll()
                .where('id', '=', opts.organization)
                .executeTakeFirst()
            : await meta.db.selectFrom('organizations').selectAll().orderBy('created_at').limit(1).executeTakeFirst()
          if (!org) {
            throw new Error(
              opts.organization
                ? `no organization ${opts.organization}`
                : 'no organization yet: start Burrow once (npm start) to create one',
            )
          }
          const project = await meta.db
            .selectFrom('projects')
            .select('id')
            .where('organization_id', '=', org.id)
            .orderBy('id')
            .limit(1)
            .executeTakeFirst()
          const now = new Date().toISOString()
          const user = await accounts.insertUser({
            uuid: crypto.randomUUID(),
            email: email.toLowerCase(),
            password_hash: await hashPassword(password),
            first_name: opts.firstName,
            last_name: opts.lastName,
            // Made by the operator: the address needs no confirmation mail.
            is_email_verified: 1,
            pending_email: null,
            current_organization_id: org.id,
            current_project_id: project?.id ?? null,
            created_at: now,
            is_staff: 0,
            last_login: null,
            requested_password_reset_at: null,
            preferences: '{}',
          })
          await createOrganizationStore(meta.db).addMember(org.id, user.id, LEVELS[opts.level], now)
          if (opts.json) {
            io.out(
              `${JSON.stringify({ id: user.id, uuid: user.uuid, email: user.email, organization: org.id, level: opts.level, ...(generated ? { password } : {}) })}\n`,
            )
          } else {
            if (generated) io.out(`${password}\n`)
            io.err(
              `Created ${user.email} (id ${user.id}), ${opts.level} of ${org.name}.` +
                `${generated ? ' The password above is shown only this once.' : ''}\n`,
            )
          }
          return 0
        }),
      )
    })

  users
    .command('reset-password')
    .description('set a new password (printed when generated) and end every session of the user')
    .argument('<email>')
    .option('--password <password>', 'the new password (default: a generated one, printed once)')
    .option('--json', 'print JSON')
    .action(async (email: string, opts: { password?: string; json?: boolean }) => {
      const { password, generated } = await passwordFrom(opts.password)
      setOutcome(
        await withStores(io, 'users reset-password', async (meta) => {
          const user = await userByEmail(meta, email)
          const accounts = createAccountStore(meta.db)
          await accounts.updateUser(user.id, {
            password_hash: await hashPassword(password),
            requested_password_reset_at: null,
          })
          await accounts.deleteSessionsOf(user.id, null)
          if (opts.json) io.out(`${JSON.stringify({ email: user.email, ...(generated ? { password } : {}) })}\n`)
          else {
            if (generated) io.out(`${password}\n`)
            io.err(`New password set for ${user.email}; every session of theirs has ended.\n`)
          }
          return 0
        }),
      )
    })

  users
    .command('disable-2fa')
    .description('remove the authenticator and backup codes of a user who lost them')
    .argument('<email>')
    .option('--json', 'print JSON')
    .action(async (email: string, opts: { json?: boolean }) => {
      setOutcome(
        await withStores(io, 'users disable-2fa', async (meta) => {
          const user = await userByEmail(meta, email)
          const accounts = createAccountStore(meta.db)
          const had = (await accounts.getTotpDevice(user.id)) !== undefined
          await accounts.deleteSecondFactors(user.id)
          if (opts.json) io.out(`${JSON.stringify({ email: user.email, had_two_factor: had })}\n`)
          else {
            io.err(
              had
                ? `Two-factor authentication is off for ${user.email}; they log in with their password alone and can set it up again.\n`
                : `${user.email} had no two-factor authentication; nothing changed.\n`,
            )
          }
          return 0
        }),
      )
    })
}

interface CreateOptions {
  password?: string
  organization?: string
  level: string
  firstName: string
  lastName: string
  json?: boolean
}
